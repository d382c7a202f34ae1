/* World mutations from JSON (API.md section 2): a shape PUT, a batch,
 * world settings and imports, all decoded into cq_world_op arrays that
 * cq_world_apply takes as they are. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"

static const char *const upsert_fields[] = {"id", "shape", "pose", "velocity", "layer", "mask", NULL};
static const char *const put_fields[] = {"shape", "pose", "velocity", "layer", "mask", NULL};
static const char *const move_fields[] = {"id", "pose", "velocity", NULL};
static const char *const batch_fields[] = {"upsert", "move", "remove", NULL};
static const char *const settings_fields[] = {
    "skin", "capacity", "gjk_max_iterations", "epa_max_iterations", "sweep_max_iterations", NULL};
static const char *const import_fields[] = {"settings", "shapes", NULL};

void cqp_batch_release(cqp_batch *b)
{
    for (int i = 0; i < b->count; i++)
        cqp_shape_release(&b->shapes[i]);
    free(b->ops);
    free(b->shapes);
    free(b->ids);
    memset(b, 0, sizeof *b);
}

void cqp_batch_disown(cqp_batch *b)
{
    for (int i = 0; i < b->count; i++)
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

/* Zeroed arrays for n ops; the count is n from the start, since a zeroed
 * shape releases as a no-op. */
static int batch_alloc(cqp_decoder *d, cqp_batch *b, size_t n)
{
    if (n == 0)
        return 0;
    b->ops = calloc(n, sizeof *b->ops);
    b->shapes = calloc(n, sizeof *b->shapes);
    b->ids = calloc(n, sizeof *b->ids);
    if (!b->ops || !b->shapes || !b->ids) {
        cqp_batch_release(b);
        return cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    }
    b->count = (int)n;
    return 0;
}

/* Planes and meshes are static in a world: they never move by a velocity. */
static int check_static(cqp_decoder *d, const cqp_shape *shape, cq_vec3 velocity)
{
    cq_shape_type t = shape->shape.type;
    if ((t != CQ_PLANE && t != CQ_MESH) || (velocity.x == 0 && velocity.y == 0 && velocity.z == 0))
        return 0;
    int mark = cqpd_push_key(d, "velocity");
    cqpd_fail(d, CQP_P_BAD_VALUE, "must be zero: a %s is static", cq_shape_type_name(t));
    cqpd_pop(d, mark);
    return -1;
}

int cqpd_upsert(cqp_decoder *d, const json_t *v, bool with_id, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                cqp_shape *shape)
{
    memset(op, 0, sizeof *op);
    op->kind = CQ_WORLD_UPSERT;
    op->layer = UINT32_MAX;
    op->mask = UINT32_MAX;
    if (with_id ? cqpd_object(d, v, upsert_fields, "a shape upsert") : cqpd_object(d, v, put_fields, "a shape"))
        return -1;
    if (with_id) {
        const json_t *x;
        int mark;
        if (cqpd_enter(d, v, "id", true, &x, &mark) < 0)
            return -1;
        int rc = cqp_decode_id(d, x, id);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
    }
    if (cqpd_field_shape(d, v, "shape", shape) < 0)
        return -1;
    if (cqpd_field_pose(d, v, "pose", false, &op->pose) < 0 ||
        cqpd_field_vec3(d, v, "velocity", false, &op->velocity) < 0 || check_static(d, shape, op->velocity) ||
        cqpd_field_uint32(d, v, "layer", &op->layer) < 0 || cqpd_field_uint32(d, v, "mask", &op->mask) < 0) {
        cqp_shape_release(shape);
        return -1;
    }
    op->shape = shape->shape;
    return 0;
}

int cqp_decode_shape_put(cqp_decoder *d, const json_t *body, const char *id, cqp_batch *out)
{
    memset(out, 0, sizeof *out);
    if (!id || !cqp_valid_id(id))
        return cqp_fail(d->problem, CQP_P_BAD_VALUE, NULL, "the shape id must be 1 to %d characters of [A-Za-z0-9._:-]",
                        CQ_WORLD_ID_MAX);
    if (batch_alloc(d, out, 1) || cqpd_upsert(d, body, false, out->ids[0], &out->ops[0], &out->shapes[0])) {
        cqp_batch_release(out);
        return -1;
    }
    memcpy(out->ids[0], id, strlen(id) + 1);
    out->ops[0].id = out->ids[0];
    out->upserts = 1;
    return 0;
}

static int decode_move(cqp_decoder *d, const json_t *v, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op)
{
    const json_t *x;
    int mark;
    memset(op, 0, sizeof *op);
    op->kind = CQ_WORLD_MOVE;
    if (cqpd_object(d, v, move_fields, "a move") || cqpd_enter(d, v, "id", true, &x, &mark) < 0)
        return -1;
    int rc = cqp_decode_id(d, x, id);
    cqpd_pop(d, mark);
    if (rc || cqpd_field_pose(d, v, "pose", true, &op->pose) < 0)
        return -1;
    int in = cqpd_field_vec3(d, v, "velocity", false, &op->velocity);
    op->keep_velocity = in == 0;
    return in < 0 ? -1 : 0;
}

/* body[key] as an optional array; *n its size (0 when absent). */
static int batch_list(cqp_decoder *d, const json_t *body, const char *key, const json_t **a, size_t *n)
{
    int mark;
    *n = 0;
    int in = cqpd_enter(d, body, key, false, a, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_array(d, *a, n);
    cqpd_pop(d, mark);
    return rc;
}

/* Item i of the list under key, decoded as kind 0 upsert, 1 move, 2 remove
 * into op k of the batch. */
static int batch_item(cqp_decoder *d, const json_t *a, const char *key, size_t i, int kind, cqp_batch *b, int k)
{
    int mark = cqpd_push_key(d, key);
    cqpd_push_index(d, i);
    const json_t *v = json_array_get(a, i);
    int rc;
    if (kind == 0) {
        rc = cqpd_upsert(d, v, true, b->ids[k], &b->ops[k], &b->shapes[k]);
    } else if (kind == 1) {
        rc = decode_move(d, v, b->ids[k], &b->ops[k]);
    } else {
        b->ops[k].kind = CQ_WORLD_REMOVE;
        rc = cqp_decode_id(d, v, b->ids[k]);
    }
    b->ops[k].id = b->ids[k];
    cqpd_pop(d, mark);
    return rc;
}

int cqp_decode_batch(cqp_decoder *d, const json_t *body, cqp_batch *out)
{
    static const char *const keys[3] = {"upsert", "move", "remove"};
    const json_t *lists[3] = {NULL, NULL, NULL};
    size_t n[3];
    memset(out, 0, sizeof *out);
    if (cqpd_object(d, body, batch_fields, "a batch"))
        return -1;
    for (int k = 0; k < 3; k++)
        if (batch_list(d, body, keys[k], &lists[k], &n[k]))
            return -1;
    size_t total = n[0] + n[1] + n[2];
    size_t max = cqpd_limit(d->limits ? d->limits->batch_items : 0, INT_MAX);
    if (total > max)
        return cqpd_fail(d, CQP_P_OVER_LIMIT, "has %zu items (upsert, move and remove); the limit is %zu", total, max);
    if (batch_alloc(d, out, total)) {
        cqp_batch_release(out);
        return -1;
    }
    int op = 0;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n[k]; i++, op++)
            if (batch_item(d, lists[k], keys[k], i, k, out, op)) {
                cqp_batch_release(out);
                return -1;
            }
    out->upserts = (int)n[0];
    out->moves = (int)n[1];
    out->removes = (int)n[2];
    return 0;
}

static int decode_settings(cqp_decoder *d, const json_t *v, cq_world_settings *s)
{
    static const char *const caps[3] = {"gjk_max_iterations", "epa_max_iterations", "sweep_max_iterations"};
    int *cap_fields[3] = {&s->gjk_max_iterations, &s->epa_max_iterations, &s->sweep_max_iterations};
    json_int_t x = 0;
    if (cqpd_object(d, v, settings_fields, "world settings") || cqpd_field_nonneg(d, v, "skin", false, &s->skin) < 0)
        return -1;
    int in = cqpd_field_integer(d, v, "capacity", 0, CQ_WORLD_MAX_SHAPES, &x);
    if (in < 0)
        return -1;
    /* Capacity is storage allocated up front: a client may not ask for more
     * than the configured share (worlds still grow past it as shapes come). */
    size_t most = cqpd_limit(d->limits ? d->limits->world_capacity : 0, CQ_WORLD_MAX_SHAPES);
    if (in > 0 && (size_t)x > most) {
        int mark = cqpd_push_key(d, "capacity");
        cqpd_fail(d, CQP_P_OVER_LIMIT, "must be at most %zu (the server's --max-world-capacity)", most);
        cqpd_pop(d, mark);
        return -1;
    }
    if (in > 0)
        s->capacity = (int)x;
    for (int k = 0; k < 3; k++) {
        in = cqpd_field_integer(d, v, caps[k], 0, CQP_MAX_ITERATION_CAP, &x);
        if (in < 0)
            return -1;
        if (in > 0)
            *cap_fields[k] = (int)x;
    }
    return 0;
}

/* The export format: {"settings"?, "shapes"?}; "shapes" makes it an import. */
static int decode_import(cqp_decoder *d, const json_t *body, cqp_world_req *out)
{
    const json_t *v;
    int mark;
    size_t n;
    if (cqpd_object(d, body, import_fields, "a world import"))
        return -1;
    int in = cqpd_enter(d, body, "settings", false, &v, &mark);
    if (in > 0) {
        int rc = decode_settings(d, v, &out->settings);
        cqpd_pop(d, mark);
        in = rc ? -1 : 1;
    }
    if (in < 0)
        return -1;
    in = cqpd_enter(d, body, "shapes", false, &v, &mark);
    if (in == 0)
        return 0;
    out->import = true;
    size_t max = cqpd_limit(d->limits ? d->limits->batch_items : 0, INT_MAX);
    int rc = cqpd_array_limited(d, v, false, max, "shapes", &n) || batch_alloc(d, &out->batch, n) ? -1 : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int inner = cqpd_push_index(d, i);
        rc = cqpd_upsert(d, json_array_get(v, i), true, out->batch.ids[i], &out->batch.ops[i], &out->batch.shapes[i]);
        out->batch.ops[i].id = out->batch.ids[i];
        cqpd_pop(d, inner);
    }
    cqpd_pop(d, mark);
    out->batch.upserts = rc ? 0 : (int)n;
    return rc;
}

void cqp_world_req_release(cqp_world_req *r)
{
    cqp_batch_release(&r->batch);
    memset(r, 0, sizeof *r);
}

int cqp_decode_world(cqp_decoder *d, const json_t *body, cqp_world_req *out)
{
    memset(out, 0, sizeof *out);
    if (!body)
        return 0;
    if (!json_is_object(body))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an object");
    bool export_form = json_object_get(body, "settings") || json_object_get(body, "shapes");
    int rc = export_form ? decode_import(d, body, out) : decode_settings(d, body, &out->settings);
    if (rc)
        cqp_world_req_release(out);
    return rc;
}
