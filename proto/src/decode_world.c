/* World mutations from a request value (API.md section 2): a shape PUT, a
 * batch, world settings and imports, all decoded into cq_world_op arrays
 * that cq_world_apply takes as they are. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cqp/alloc.h"
#include "decode_internal.h"
#include "value_internal.h"

CQPD_FIELD_LIST(upsert_fields, "id", "shape", "pose", "velocity", "layer", "mask");
CQPD_FIELD_LIST(put_fields, "shape", "pose", "velocity", "layer", "mask");
CQPD_FIELD_LIST(move_fields, "id", "pose", "velocity");
CQPD_FIELD_LIST(batch_fields, "upsert", "move", "remove");
CQPD_FIELD_LIST(settings_fields, "skin", "capacity", "gjk_max_iterations", "epa_max_iterations",
                "sweep_max_iterations", "durability");
CQPD_FIELD_LIST(import_fields, "settings", "shapes");

/* Only upserts (the first b->upserts ops, counted before any is decoded)
 * hold shapes. */
void cqp_batch_release(cqp_batch *b)
{
    for (int i = 0; i < b->upserts; i++)
        cqp_shape_release(&b->shapes[i]);
    cqp_free(b->ops);
    cqp_free(b->shapes);
    cqp_free(b->ids);
    memset(b, 0, sizeof *b);
}

void cqp_batch_disown(cqp_batch *b)
{
    for (int i = 0; i < b->upserts; i++)
        cqp_shape_disown(&b->shapes[i]);
}

void cqp_batch_pointer(const cqp_batch *b, bool import, int i, char *out, int size)
{
    if (size <= 0)
        return;
    if (i < 0 || i >= b->count)
        out[0] = '\0';
    else if (i < b->upserts)
        snprintf(out, (size_t)size, "/%s/%d", import ? "shapes" : "upsert", i);
    else if (i < b->upserts + b->moves)
        snprintf(out, (size_t)size, "/move/%d", i - b->upserts);
    else
        snprintf(out, (size_t)size, "/remove/%d", i - b->upserts - b->moves);
}

/* The arrays for n ops of which the first upserts are upserts (a
 * request's memory). Only the upserts' shapes exist, zeroed, so a batch
 * released before they are all decoded frees none that was not; the ops
 * and the ids are each written whole as they are decoded, and are not
 * zeroed first: for a tick's 10,000 moves the zeroing cost more than
 * filling them (2.4 MB of ops, 650 KB of 65-byte id slots). */
static int batch_alloc(cqp_decoder *d, cqp_batch *b, size_t n, size_t upserts)
{
    if (n == 0)
        return 0;
    b->ops = n <= SIZE_MAX / sizeof *b->ops ? cqp_malloc(n * sizeof *b->ops) : NULL;
    b->shapes = upserts > 0 ? cqp_calloc(upserts, sizeof *b->shapes) : NULL;
    b->ids = n <= SIZE_MAX / sizeof *b->ids ? cqp_malloc(n * sizeof *b->ids) : NULL;
    if (!b->ops || (upserts > 0 && !b->shapes) || !b->ids) {
        cqp_batch_release(b);
        return cqp__no_memory(d);
    }
    b->count = (int)n;
    b->upserts = (int)upserts;
    return 0;
}

/* Planes and meshes are static in a world: they never move by a velocity. */
static int check_static(cqp_decoder *d, const cqp_shape *shape, cq_vec3 velocity)
{
    cq_shape_type t = shape->shape.type;
    if ((t != CQ_PLANE && t != CQ_MESH) || (velocity.x == 0 && velocity.y == 0 && velocity.z == 0))
        return 0;
    int mark = cqp__push_key(d, "velocity");
    cqp__fail(d, CQP_P_BAD_VALUE, "must be zero: a %s is static", cq_shape_type_name(t));
    cqp__pop(d, mark);
    return -1;
}

int cqp__upsert(cqp_decoder *d, cqp_value v, bool with_id, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                cqp_shape *shape)
{
    cqpd_fields f;
    memset(op, 0, sizeof *op);
    op->kind = CQ_WORLD_UPSERT;
    op->layer = UINT32_MAX;
    op->mask = UINT32_MAX;
    if (with_id ? cqp__object(d, v, upsert_fields, "a shape upsert", &f) : cqp__object(d, v, put_fields, "a shape", &f))
        return -1;
    if ((with_id && cqp__field_id(d, &f, "id", id) < 0) || cqp__field_shape(d, &f, "shape", shape) < 0)
        return -1;
    if (cqp__field_pose(d, &f, "pose", false, &op->pose) < 0 ||
        cqp__field_vec3(d, &f, "velocity", false, &op->velocity) < 0 || check_static(d, shape, op->velocity) ||
        cqp__field_uint32(d, &f, "layer", &op->layer) < 0 || cqp__field_uint32(d, &f, "mask", &op->mask) < 0) {
        cqp_shape_release(shape);
        return -1;
    }
    op->shape = shape->shape;
    return 0;
}

int cqp_decode_shape_put(cqp_decoder *d, cqp_value body, const char *id, cqp_batch *out)
{
    memset(out, 0, sizeof *out);
    if (!id || !cqp_valid_id(id))
        return cqp_fail(d->problem, CQP_P_BAD_VALUE, NULL,
                        "the shape id must be 1 to %d characters of " CQ_WORLD_ID_CHARS, CQ_WORLD_ID_MAX);
    if (batch_alloc(d, out, 1, 1) || cqp__upsert(d, body, false, out->ids[0], &out->ops[0], &out->shapes[0])) {
        cqp_batch_release(out);
        return -1;
    }
    memcpy(out->ids[0], id, strlen(id) + 1);
    out->ops[0].id = out->ids[0];
    return 0;
}

static int decode_move(cqp_decoder *d, cqp_value v, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op)
{
    cqpd_fields f;
    memset(op, 0, sizeof *op);
    op->kind = CQ_WORLD_MOVE;
    if (cqp__object(d, v, move_fields, "a move", &f) || cqp__field_id(d, &f, "id", id) < 0 ||
        cqp__field_pose(d, &f, "pose", true, &op->pose) < 0)
        return -1;
    int in = cqp__field_vec3(d, &f, "velocity", false, &op->velocity);
    op->keep_velocity = in == 0;
    return in < 0 ? -1 : 0;
}

/* f's list key as an optional array; *n its size (0 when absent). */
static int batch_list(cqp_decoder *d, const cqpd_fields *f, const char *key, cqp_value *a, size_t *n)
{
    int mark;
    *n = 0;
    int in = cqp__enter(d, f, key, false, a, &mark);
    if (in <= 0)
        return in;
    int rc = cqp__array(d, *a, n);
    cqp__pop(d, mark);
    return rc;
}

/* Item v of a list, decoded as kind 0 upsert, 1 move, 2 remove into op k
 * of the batch. */
static int batch_item(cqp_decoder *d, cqp_value v, int kind, cqp_batch *b, int k)
{
    int rc;
    if (kind == 0) {
        rc = cqp__upsert(d, v, true, b->ids[k], &b->ops[k], &b->shapes[k]);
    } else if (kind == 1) {
        rc = decode_move(d, v, b->ids[k], &b->ops[k]);
    } else {
        memset(&b->ops[k], 0, sizeof b->ops[k]);
        b->ops[k].kind = CQ_WORLD_REMOVE;
        rc = cqp_decode_id(d, v, b->ids[k]);
    }
    b->ops[k].id = b->ids[k];
    return rc;
}

/* Moves read in one go before their rotations are made: the rotations of
 * a group are then made together by cq_poses_from_quats, in vector lanes
 * (a move's chain of a square root, divisions and products is long, and
 * one move's parse too long for the processor to run the next move's
 * chain beside it). */
#define MOVE_GROUP 8

/* Item i of the MessagePack moves at p through the view, at its pointer. */
static int move_by_view(cqp_decoder *d, const char *p, size_t i, cqp_batch *b, int k)
{
    int mark = cqp__push_index(d, i);
    int rc = batch_item(d, cqp_value_mp(p), 1, b, k);
    cqp__pop(d, mark);
    return rc;
}

/* Up to `most` (at most MOVE_GROUP) of the moves at p, the first of the
 * left that end the list, into the batch
 * from op k on, through cqp__move_mp and then their poses. Returns how
 * many were taken whole, with *at where the first not taken begins. */
static size_t move_group(const char *p, size_t most, size_t left, cqp_batch *b, int k, const char **at)
{
    cq_quat_pose raw[MOVE_GROUP];
    cq_xform *poses[MOVE_GROUP];
    const char *ends[MOVE_GROUP + 1] = {p};
    size_t m = 0;
    for (; m < most && m < MOVE_GROUP; m++) {
        cq_world_op *op = &b->ops[k + (int)m];
        if (!(ends[m + 1] = cqp__move_mp(ends[m], left - m - 1, b->ids[k + (int)m], op, &raw[m])))
            break;
        poses[m] = &op->pose;
    }
    size_t ok = cq_poses_from_quats(raw, m, poses);
    for (size_t j = 0; j < ok; j++)
        b->ops[k + (int)j].id = b->ids[k + (int)j];
    *at = ends[ok];
    return ok;
}

/* The moves of the MessagePack list a into the batch from op *k on: in
 * groups through cqp__move_mp's one pass, which also finds where the next
 * one begins; one it leaves (another form, or a fault) through the view,
 * as any item, which reports the problem at the item's pointer. */
static int moves_mp(cqp_decoder *d, cqp_value a, cqp_batch *b, int *k)
{
    size_t n = cqp_value_size(a);
    const char *p = cqp__mp_first(a.ref);
    for (size_t i = 0; i < n;) {
        size_t most = n - i < MOVE_GROUP ? n - i : MOVE_GROUP;
        size_t ok = move_group(p, most, n - i, b, *k, &p);
        i += ok;
        *k += (int)ok;
        if (ok == most)
            continue;
        if (move_by_view(d, p, i, b, *k))
            return -1;
        p = cqp__mp_skip(p);
        i++;
        (*k)++;
    }
    return 0;
}

/* The items of list a (under key, of the given kind) into the batch from
 * op *k on, each at its own pointer. */
static int batch_items(cqp_decoder *d, cqp_value a, const char *key, int kind, cqp_batch *b, int *k)
{
    cqp_iter it;
    cqp_value v;
    int mark = cqp__push_key(d, key);
    int rc = 0;
    if (kind == 1 && a.format == CQP_MSGPACK) {
        rc = moves_mp(d, a, b, k);
        cqp__pop(d, mark);
        return rc;
    }
    cqp_value_iter_init(&it, a);
    for (size_t i = 0; rc == 0 && cqp_value_next(&it, &v); i++, (*k)++) {
        int inner = cqp__push_index(d, i);
        rc = batch_item(d, v, kind, b, *k);
        cqp__pop(d, inner);
    }
    cqp__pop(d, mark);
    return rc;
}

int cqp_decode_batch(cqp_decoder *d, cqp_value body, cqp_batch *out)
{
    static const char *const keys[3] = {"upsert", "move", "remove"};
    cqpd_fields f;
    cqp_value lists[3];
    size_t n[3];
    memset(out, 0, sizeof *out);
    if (cqp__object(d, body, batch_fields, "a batch", &f))
        return -1;
    for (int k = 0; k < 3; k++)
        if (batch_list(d, &f, keys[k], &lists[k], &n[k]))
            return -1;
    size_t total = n[0] + n[1] + n[2];
    size_t max = cqp__limit(d->limits ? d->limits->batch_items : 0, INT_MAX);
    if (total > max)
        return cqp__fail(d, CQP_P_OVER_LIMIT, "has %zu items (upsert, move and remove); the limit is %zu", total, max);
    if (batch_alloc(d, out, total, n[0]))
        return -1;
    int op = 0;
    for (int k = 0; k < 3; k++)
        if (n[k] > 0 && batch_items(d, lists[k], keys[k], k, out, &op)) {
            cqp_batch_release(out);
            return -1;
        }
    out->moves = (int)n[1];
    out->removes = (int)n[2];
    return 0;
}

/* The three iteration caps of world settings, each 0..CQP_MAX_ITERATION_CAP. */
static int decode_caps(cqp_decoder *d, const cqpd_fields *f, cq_world_settings *s)
{
    static const char *const caps[3] = {"gjk_max_iterations", "epa_max_iterations", "sweep_max_iterations"};
    int *cap_fields[3] = {&s->gjk_max_iterations, &s->epa_max_iterations, &s->sweep_max_iterations};
    for (int k = 0; k < 3; k++) {
        int64_t x = 0;
        int in = cqp__field_integer(d, f, caps[k], 0, CQP_MAX_ITERATION_CAP, &x);
        if (in < 0)
            return -1;
        if (in > 0)
            *cap_fields[k] = (int)x;
    }
    return 0;
}

/* "durability", when present, into r (one of the names of cqp/durability.h). */
static int decode_durability(cqp_decoder *d, const cqpd_fields *f, cqp_world_req *r)
{
    cqp_value v;
    int mark;
    int in = cqp__enter(d, f, "durability", false, &v, &mark);
    if (in <= 0)
        return in;
    size_t len = 0;
    const char *s = cqp_value_type(v) == CQP_V_STRING ? cqp_value_string(v, &len) : NULL;
    int rc = 0;
    if (!s)
        rc = cqp__fail(d, CQP_P_BAD_TYPE, "must be a string: one of %s", cqp_durability_names());
    else if (!cqp_durability_named(s, len, &r->durability))
        rc = cqp__fail(d, CQP_P_BAD_VALUE, "must be one of %s", cqp_durability_names());
    r->durability_given = rc == 0;
    cqp__pop(d, mark);
    return rc;
}

static int decode_settings(cqp_decoder *d, cqp_value v, cqp_world_req *r)
{
    cqpd_fields f;
    int64_t x = 0;
    cq_world_settings *s = &r->settings;
    if (cqp__object(d, v, settings_fields, "world settings", &f) ||
        cqp__field_nonneg(d, &f, "skin", false, &s->skin) < 0 || decode_durability(d, &f, r) < 0)
        return -1;
    int in = cqp__field_integer(d, &f, "capacity", 0, CQ_WORLD_MAX_SHAPES, &x);
    if (in < 0)
        return -1;
    /* Capacity is storage allocated up front: a client may not ask for more
     * than the configured share (worlds still grow past it as shapes come). */
    size_t most = cqp__limit(d->limits ? d->limits->world_capacity : 0, CQ_WORLD_MAX_SHAPES);
    if (in > 0 && (size_t)x > most) {
        int mark = cqp__push_key(d, "capacity");
        cqp__fail(d, CQP_P_OVER_LIMIT, "must be at most %zu (the server's --max-world-capacity)", most);
        cqp__pop(d, mark);
        return -1;
    }
    if (in > 0)
        s->capacity = (int)x;
    return decode_caps(d, &f, s);
}

/* The shapes of an import, array v of upserts, into out->batch. */
static int decode_import_shapes(cqp_decoder *d, cqp_value v, cqp_batch *b)
{
    cqp_iter it;
    cqp_value x;
    size_t n;
    size_t max = cqp__limit(d->limits ? d->limits->batch_items : 0, INT_MAX);
    if (cqp__array_limited(d, v, false, max, "shapes", &n) || batch_alloc(d, b, n, n))
        return -1;
    cqp_value_iter_init(&it, v);
    for (size_t i = 0; cqp_value_next(&it, &x); i++) {
        int mark = cqp__push_index(d, i);
        int rc = cqp__upsert(d, x, true, b->ids[i], &b->ops[i], &b->shapes[i]);
        b->ops[i].id = b->ids[i];
        cqp__pop(d, mark);
        if (rc)
            return -1;
    }
    return 0;
}

/* The export format: {"settings"?, "shapes"?}; "shapes" makes it an import. */
static int decode_import(cqp_decoder *d, cqp_value body, cqp_world_req *out)
{
    cqpd_fields f;
    cqp_value v;
    int mark;
    if (cqp__object(d, body, import_fields, "a world import", &f))
        return -1;
    int in = cqp__enter(d, &f, "settings", false, &v, &mark);
    if (in > 0) {
        int rc = decode_settings(d, v, out);
        cqp__pop(d, mark);
        if (rc)
            return -1;
    }
    if (cqp__enter(d, &f, "shapes", false, &v, &mark) == 0)
        return 0;
    out->import = true;
    int rc = decode_import_shapes(d, v, &out->batch);
    cqp__pop(d, mark);
    return rc;
}

void cqp_world_req_release(cqp_world_req *r)
{
    cqp_batch_release(&r->batch);
    memset(r, 0, sizeof *r);
}

int cqp_decode_world(cqp_decoder *d, cqp_value body, cqp_world_req *out)
{
    memset(out, 0, sizeof *out);
    if (!cqp_value_present(body))
        return 0;
    if (cqp_value_type(body) != CQP_V_OBJECT)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be an object");
    /* "shapes" first: an import's members are walked up to it only, and a
     * body without it is a few settings. */
    bool export_form =
        cqp_value_present(cqp_value_get(body, "shapes")) || cqp_value_present(cqp_value_get(body, "settings"));
    int rc = export_form ? decode_import(d, body, out) : decode_settings(d, body, out);
    if (rc)
        cqp_world_req_release(out);
    return rc;
}
