/* Shapes of a world: put, get, delete one; all-or-nothing batches. */
#include <stdio.h>

#include "cqp/encode.h"
#include "durable.h"
#include "h_common.h"
#include "handlers.h"

/* The problem of a rejected batch. An op to blame is the request's fault
 * (400 at its pointer: the decoder checks values, the world checks ids
 * against its content); otherwise the batch as a whole did not fit. */
static int apply_fail(cqd_call *c, const cqp_batch *b, bool single, int rc, int bad_op)
{
    if (bad_op >= 0 && bad_op < b->count) {
        char ptr[64] = "";
        if (!single)
            cqp_batch_pointer(b, false, bad_op, ptr, sizeof ptr);
        const char *id = b->ops[bad_op].id ? b->ops[bad_op].id : "";
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, ptr, "%s (id '%s')", cq_strerror(rc), id);
    }
    if (rc == CQ_ERANGE)
        return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, NULL, "a world holds at most %d shapes",
                        CQ_WORLD_MAX_SHAPES);
    return cqd_h_server_fail(c, rc, "applying the batch");
}

/* Room for the batch, made before it is journaled: a journaled change
 * must not then fail for memory, or recovery would apply what the client
 * was told failed. Each upsert of an id the world lacks may add a shape.
 * The upserts are the batch's first b->upserts ops (decode.h): a tick's
 * 10,000 moves are not walked (2.4 MB of ops) to find none. 0, or -1
 * with a 503 problem. */
static int reserve(cqd_call *c, cq_world *world, const cqp_batch *b)
{
    int shapes = cq_world_count(world);
    for (int i = 0; i < b->upserts; i++) {
        cq_world_handle h;
        const cq_world_op *op = &b->ops[i];
        if (op->kind == CQ_WORLD_UPSERT && op->id && cq_world_find(world, op->id, &h) != CQ_OK &&
            shapes < CQ_WORLD_MAX_SHAPES)
            shapes++;
    }
    int rc = cq_world_reserve(world, shapes, b->count);
    return rc == CQ_OK ? 0 : cqd_h_server_fail(c, rc, "making room for the shapes");
}

/* The stored shape under id as GET gives it; 0, or -1 with a 404. */
static int write_stored(cqd_call *c, const cq_world *world, const char *id)
{
    cq_world_handle h;
    cq_world_body body;
    if (cq_world_find(world, id, &h) != CQ_OK || cq_world_get(world, h, &body) != CQ_OK)
        return cqd_h_no_shape(c, id, NULL);
    cqp_write_body(&c->out, cq_world_id(world, h), &body);
    return 0;
}

int cqd_h_shape_put(cqd_call *c)
{
    cqp_batch b;
    if (cqp_decode_shape_put(&c->dec, c->body, c->id, &b) != 0)
        return -1;
    int status = -1;
    uint64_t seq = 0;
    cqd_world *w = cqd_h_acquire(c, true);
    if (w && reserve(c, w->world, &b) == 0 && cqd_journal_call(c, w, &seq) == 0) {
        cq_world_handle h;
        bool existed = cq_world_find(w->world, c->id, &h) == CQ_OK;
        int bad_op;
        int rc = cq_world_apply(w->world, b.ops, b.count, &bad_op);
        if (rc == CQ_OK) {
            cqp_batch_disown(&b);
            if (write_stored(c, w->world, c->id) == 0)
                status = existed ? 200 : 201;
        } else {
            apply_fail(c, &b, true, rc, bad_op);
        }
    }
    if (w)
        cqd_h_release(c, w);
    if (status > 0 && cqd_journal_commit(c, seq) < 0)
        status = -1;
    cqp_batch_release(&b);
    return status;
}

int cqd_h_shape_get(cqd_call *c)
{
    cqd_world *w = cqd_h_acquire(c, false);
    if (!w)
        return -1;
    int rc = write_stored(c, w->world, c->id);
    cqd_h_release(c, w);
    return rc == 0 ? 200 : -1;
}

int cqd_h_shape_delete(cqd_call *c)
{
    cqd_world *w = cqd_h_acquire(c, true);
    if (!w)
        return -1;
    cq_world_handle h;
    uint64_t seq = 0;
    /* an absent shape is not journaled: nothing would change */
    int rc = cq_world_find(w->world, c->id, &h);
    if (rc == CQ_OK && cqd_journal_call(c, w, &seq) < 0) {
        cqd_h_release(c, w);
        return -1;
    }
    if (rc == CQ_OK) {
        cq_world_op op = {.kind = CQ_WORLD_REMOVE, .id = c->id};
        int bad_op;
        rc = cq_world_apply(w->world, &op, 1, &bad_op);
    }
    cqd_h_release(c, w);
    if (rc == CQ_ENOT_FOUND)
        return cqd_h_no_shape(c, c->id, NULL);
    if (rc != CQ_OK)
        return cqd_h_server_fail(c, rc, "removing the shape");
    return cqd_journal_commit(c, seq) < 0 ? -1 : 204;
}

int cqd_h_batch(cqd_call *c)
{
    cqp_batch b;
    if (cqp_decode_batch(&c->dec, c->body, &b) != 0)
        return -1;
    int status = -1;
    uint64_t seq = 0;
    cqd_world *w = cqd_h_acquire(c, true);
    if (w && reserve(c, w->world, &b) == 0 && cqd_journal_call(c, w, &seq) == 0) {
        int bad_op;
        int rc = cq_world_apply(w->world, b.ops, b.count, &bad_op);
        if (rc == CQ_OK) {
            cqp_batch_disown(&b);
            cqp_obj_begin(&c->out);
            cqp_key(&c->out, "upserted");
            cqp_int(&c->out, b.upserts);
            cqp_key(&c->out, "moved");
            cqp_int(&c->out, b.moves);
            cqp_key(&c->out, "removed");
            cqp_int(&c->out, b.removes);
            cqp_key(&c->out, "shapes");
            cqp_int(&c->out, cq_world_count(w->world));
            cqp_obj_end(&c->out);
            status = 200;
        } else {
            apply_fail(c, &b, false, rc, bad_op);
        }
    }
    if (w)
        cqd_h_release(c, w);
    if (status > 0 && cqd_journal_commit(c, seq) < 0)
        status = -1;
    cqp_batch_release(&b);
    return status;
}
