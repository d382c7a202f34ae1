/* Random small meshes and the mesh surface oracle (mesh_gen.h). */
#include "mesh_gen.h"

/* The largest mesh a family makes. */
#define TM_MAX_V 24
#define TM_MAX_T 24

typedef struct tm_build {
    cq_vec3 v[TM_MAX_V];
    int t[TM_MAX_T][3];
    int nv, nt;
} tm_build;

static void tm_quad(tm_build *b, int a, int c, int d, int e)
{
    b->t[b->nt][0] = a, b->t[b->nt][1] = c, b->t[b->nt][2] = d, b->nt++;
    b->t[b->nt][0] = a, b->t[b->nt][1] = d, b->t[b->nt][2] = e, b->nt++;
}

/* An n by n grid of cells in XZ centred on the origin, front side up,
 * each cell split along a random diagonal. */
static void tm_grid(tu_rng *rng, tm_build *b, double scale, double bump)
{
    int n = 1 + (int)tu_uniform(rng, 0, 3);
    double cell = 2 * scale / n;
    for (int i = 0; i <= n; i++)
        for (int j = 0; j <= n; j++)
            b->v[b->nv++] = cq_v3((i - n / 2.0) * cell, bump * scale * tu_uniform(rng, -1, 1), (j - n / 2.0) * cell);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = i * (n + 1) + j, c = a + 1, d = a + n + 2, e = a + n + 1;
            if (tu_uniform(rng, 0, 1) < 0.5)
                tm_quad(b, a, c, d, e);
            else
                tm_quad(b, c, d, e, a);
        }
}

/* Two quads sharing the edge along z through the origin, rising at random
 * slopes: a valley seen from above, a ridge when wound downwards. */
static void tm_valley(tu_rng *rng, tm_build *b, double scale)
{
    double sl = tu_uniform(rng, -1.5, 1.5), sr = tu_uniform(rng, -1.5, 1.5), w = scale, h = scale;
    cq_vec3 v[6] = {{-w, sl * w, -h}, {-w, sl * w, h}, {0, 0, -h}, {0, 0, h}, {w, sr * w, -h}, {w, sr * w, h}};
    for (int i = 0; i < 6; i++)
        b->v[b->nv++] = v[i];
    bool down = tu_uniform(rng, 0, 1) < 0.3;
    if (down) {
        tm_quad(b, 0, 2, 3, 1);
        tm_quad(b, 2, 4, 5, 3);
    } else {
        tm_quad(b, 0, 1, 3, 2);
        tm_quad(b, 2, 3, 5, 4);
    }
}

/* A box of random half extents, its 12 triangles wound outward. */
static void tm_box(tu_rng *rng, tm_build *b, double scale)
{
    cq_vec3 h = cq_v3(scale * tu_uniform(rng, 0.1, 1), scale * tu_uniform(rng, 0.1, 1), scale * tu_uniform(rng, 0.1, 1));
    for (int i = 0; i < 8; i++)
        b->v[b->nv++] = cq_v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
    static const int faces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; f++)
        tm_quad(b, faces[f][0], faces[f][1], faces[f][2], faces[f][3]);
}

static void tm_soup(tu_rng *rng, tm_build *b, double scale)
{
    int n = 2 + (int)tu_uniform(rng, 0, 5);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < 3; i++) {
            b->t[b->nt][i] = b->nv;
            b->v[b->nv++] = cq_v3(scale * tu_uniform(rng, -1, 1), scale * tu_uniform(rng, -1, 1),
                                  scale * tu_uniform(rng, -1, 1));
        }
        b->nt++;
    }
}

cq_mesh *tm_random(tu_rng *rng, tm_family family, double scale)
{
    tm_build b = {.nv = 0};
    switch (family) {
    case TM_FLAT_GRID:
        tm_grid(rng, &b, scale, 0);
        break;
    case TM_BUMPY_GRID:
        tm_grid(rng, &b, scale, 0.4);
        break;
    case TM_VALLEY:
        tm_valley(rng, &b, scale);
        break;
    case TM_CLOSED_BOX:
        tm_box(rng, &b, scale);
        break;
    default:
        tm_soup(rng, &b, scale);
        break;
    }
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(b.v, b.nv, (const int(*)[3])b.t, b.nt, &m), CQ_OK);
    return m;
}

static void tm_corners(const cq_mesh *m, const cq_xform *x, int k, cq_vec3 t[3])
{
    for (int i = 0; i < 3; i++)
        t[i] = cq_xform_point(x, m->vertices[m->triangles[k][i]]);
}

double tm_distance(const cq_mesh *m, const cq_xform *x, cq_vec3 p)
{
    double best = INFINITY;
    for (int k = 0; k < m->triangle_count; k++) {
        cq_vec3 t[3];
        tm_corners(m, x, k, t);
        double area2 = cq_len2(cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])));
        if (area2 > 0) /* a zero-area triangle is no surface (cq/mesh.h) */
            best = fmin(best, tu_dist_point_triangle(p, t));
    }
    return best;
}

double tm_extent(const cq_mesh *m)
{
    double e = 0;
    for (int i = 0; i < m->vertex_count; i++)
        e = fmax(e, cq_len(m->vertices[i]));
    return e;
}

int tm_samples(const cq_mesh *m, const cq_xform *x, cq_vec3 *out, int max)
{
    int n = 0;
    for (int i = 0; i < m->vertex_count && n < max; i++)
        out[n++] = cq_xform_point(x, m->vertices[i]);
    for (int k = 0; k < m->triangle_count && n < max; k++) {
        cq_vec3 t[3];
        tm_corners(m, x, k, t);
        out[n++] = cq_scale(cq_add(t[0], cq_add(t[1], t[2])), 1 / 3.0);
    }
    return n;
}
