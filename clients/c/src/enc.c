/* The request writer: msgpuck's encoders into reserved room in the
 * pipeline's buffer. Reals are float64, as the daemon writes them. */
#include <math.h>

#include "cqc_int.h"

/* The largest header or number msgpuck writes. */
#define ITEM_MAX 9

char *cqc__w_room(cqc_w *w, size_t n)
{
    if (w->oom)
        return NULL;
    char *at = cqc__reserve(w->b, n);
    if (!at)
        w->oom = true;
    return at;
}

#define W_ITEM(w, expr)                                   \
    do {                                                  \
        char *at = cqc__w_room((w), ITEM_MAX);            \
        if (at)                                           \
            (w)->b->len += (size_t)((expr) - at);         \
    } while (0)

void cqc__w_map(cqc_w *w, uint32_t n) { W_ITEM(w, mp_encode_map(at, n)); }
void cqc__w_arr(cqc_w *w, uint32_t n) { W_ITEM(w, mp_encode_array(at, n)); }
void cqc__w_dbl(cqc_w *w, double v) { W_ITEM(w, mp_encode_double(at, v)); }
void cqc__w_uint(cqc_w *w, uint64_t v) { W_ITEM(w, mp_encode_uint(at, v)); }
void cqc__w_bool(cqc_w *w, bool v) { W_ITEM(w, mp_encode_bool(at, v)); }

void cqc__w_strn(cqc_w *w, const char *s, size_t n)
{
    char *at = n <= UINT32_MAX ? cqc__w_room(w, n + 5) : NULL;
    if (at)
        w->b->len += (size_t)(mp_encode_str(at, s, (uint32_t)n) - at);
    else
        w->oom = true;
}

void cqc__w_str(cqc_w *w, const char *s)
{
    cqc__w_strn(w, s, strlen(s));
}

void cqc__w_vec(cqc_w *w, const double *v, uint32_t n)
{
    char *at = cqc__w_room(w, ITEM_MAX * (n + 1));
    if (!at)
        return;
    char *p = mp_encode_array(at, n);
    for (uint32_t i = 0; i < n; i++)
        p = mp_encode_double(p, v[i]);
    w->b->len += (size_t)(p - at);
}

void cqc__w_raw(cqc_w *w, const void *p, size_t n)
{
    char *at = cqc__w_room(w, n);
    if (at) {
        memcpy(at, p, n);
        w->b->len += n;
    }
}

static const char *const type_names[] = {"sphere", "capsule", "box", "convex", "triangle", "plane", "mesh"};

/* The members each type writes besides "type". */
static const uint8_t type_members[] = {1, 2, 1, 2, 1, 2, 2};

bool cqc__shape_ok(const cqc_shape *s)
{
    if ((unsigned)s->type > CQC_MESH)
        return false;
    if (s->type == CQC_CONVEX && (!s->points || s->point_count == 0 || s->point_count > UINT32_MAX))
        return false;
    if (s->type == CQC_MESH && (!s->points || !s->triangles || s->point_count > UINT32_MAX ||
                                s->triangle_count > UINT32_MAX))
        return false;
    return true;
}

static void w_points(cqc_w *w, const double *p, size_t n)
{
    cqc__w_arr(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        cqc__w_vec(w, p + 3 * i, 3);
}

static void w_triangles(cqc_w *w, const uint32_t *t, size_t n)
{
    cqc__w_arr(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        cqc__w_arr(w, 3);
        for (int k = 0; k < 3; k++)
            cqc__w_uint(w, t[3 * i + (size_t)k]);
    }
}

void cqc__w_shape(cqc_w *w, const cqc_shape *s)
{
    bool rounded = s->type == CQC_CONVEX && s->radius != 0;
    cqc__w_map(w, 1u + type_members[s->type] - (s->type == CQC_CONVEX && !rounded));
    cqc__w_str(w, "type");
    cqc__w_str(w, type_names[s->type]);
    switch (s->type) {
    case CQC_CAPSULE:
        cqc__w_str(w, "half_height");
        cqc__w_dbl(w, s->half_height);
        /* fall through */
    case CQC_SPHERE:
        cqc__w_str(w, "radius");
        cqc__w_dbl(w, s->radius);
        break;
    case CQC_BOX:
        cqc__w_str(w, "half_extents");
        cqc__w_vec(w, s->half_extents, 3);
        break;
    case CQC_CONVEX:
        cqc__w_str(w, "points");
        w_points(w, s->points, s->point_count);
        if (rounded) {
            cqc__w_str(w, "radius");
            cqc__w_dbl(w, s->radius);
        }
        break;
    case CQC_TRIANGLE:
        cqc__w_str(w, "vertices");
        w_points(w, s->vertices, 3);
        break;
    case CQC_PLANE:
        cqc__w_str(w, "normal");
        cqc__w_vec(w, s->normal, 3);
        cqc__w_str(w, "offset");
        cqc__w_dbl(w, s->offset);
        break;
    case CQC_MESH:
        cqc__w_str(w, "vertices");
        w_points(w, s->points, s->point_count);
        cqc__w_str(w, "triangles");
        w_triangles(w, s->triangles, s->triangle_count);
        break;
    }
}

void cqc__w_pose(cqc_w *w, const cqc_pose *p)
{
    cqc__w_map(w, 2);
    cqc__w_str(w, "position");
    cqc__w_vec(w, p->position, 3);
    cqc__w_str(w, "rotation");
    cqc__w_vec(w, p->rotation, 4);
}

void cqc__w_body(cqc_w *w, const cqc_body *b, bool with_id)
{
    bool vel = b->shape.type != CQC_PLANE; /* a plane may not have one */
    cqc__w_map(w, 4u + with_id + vel);
    if (with_id) {
        cqc__w_str(w, "id");
        cqc__w_str(w, b->id);
    }
    cqc__w_str(w, "shape");
    cqc__w_shape(w, &b->shape);
    cqc__w_str(w, "pose");
    cqc__w_pose(w, &b->pose);
    if (vel) {
        cqc__w_str(w, "velocity");
        cqc__w_vec(w, b->velocity, 3);
    }
    cqc__w_str(w, "layer");
    cqc__w_uint(w, b->layer ? b->layer : UINT32_MAX);
    cqc__w_str(w, "mask");
    cqc__w_uint(w, b->mask ? b->mask : UINT32_MAX);
}

static const double identity[4] = {0, 0, 0, 1};

/* One move, into room reserved for it: the keys are constant bytes. */
static char *move(char *p, const char *id, size_t n, const double *pos, const double *rot, const double *vel)
{
    p = mp_encode_map(p, vel ? 3 : 2);
    p = mp_encode_str(p, "id", 2);
    p = mp_encode_str(p, id, (uint32_t)n);
    p = mp_encode_str(p, "pose", 4);
    p = mp_encode_map(p, 2);
    p = mp_encode_str(p, "position", 8);
    p = mp_encode_array(p, 3);
    for (int k = 0; k < 3; k++)
        p = mp_encode_double(p, pos[k]);
    p = mp_encode_str(p, "rotation", 8);
    p = mp_encode_array(p, 4);
    for (int k = 0; k < 4; k++)
        p = mp_encode_double(p, rot[k]);
    if (vel) {
        p = mp_encode_str(p, "velocity", 8);
        p = mp_encode_array(p, 3);
        for (int k = 0; k < 3; k++)
            p = mp_encode_double(p, vel[k]);
    }
    return p;
}

/* The bytes of a move besides its id: keys, headers and 10 float64s. */
#define MOVE_MAX 192

void cqc__w_moves(cqc_w *w, const cqc_batch *b)
{
    cqc__w_str(w, "move");
    cqc__w_arr(w, (uint32_t)b->move_count);
    for (size_t i = 0; i < b->move_count && !w->oom; i++) {
        size_t n = strlen(b->move_ids[i]);
        char *at = cqc__w_room(w, n + MOVE_MAX);
        if (!at)
            return;
        const double *rot = b->move_rotations ? b->move_rotations + 4 * i : identity;
        const double *vel = b->move_velocities ? b->move_velocities + 3 * i : NULL;
        w->b->len += (size_t)(move(at, b->move_ids[i], n, b->move_positions + 3 * i, rot, vel) - at);
    }
}
