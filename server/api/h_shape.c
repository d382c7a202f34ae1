/* Shapes of a world: put, get, delete one; all-or-nothing batches. */
#include <stdio.h>

#include "cqp/encode.h"
#include "durable.h"
#include "fault.h"
#include "h_common.h"
#include "handlers.h"
#include "state/server.h"

/* The problem of a rejected batch. An op to blame is the request's fault
 * (400 at its pointer: the decoder checks values, the world checks ids
 * against its content); otherwise the batch as a whole did not fit
 * (fault.c). */
static int apply_fail(cqd_call *c, const cqp_batch *b, bool single, int rc, int bad_op)
{
    if (bad_op >= 0 && bad_op < b->count) {
        char ptr[64] = "";
        if (!single)
            cqp_batch_pointer(b, false, bad_op, ptr, sizeof ptr);
        const char *id = b->ops[bad_op].id ? b->ops[bad_op].id : "";
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, ptr, "%s (id '%s')", cq_strerror(rc), id);
    }
    cqd_refusal r = {.site = CQD_SITE_BATCH, .status = rc, .what = "applying the batch"};
    return cqd_h_refused(c, &r);
}

/* Checks ops against the world and makes room for them (cq_world_prepare),
 * journals them unless the world's durability leaves them out, then
 * applies them (cq_world_commit, which cannot fail): only a change that
 * will be applied reaches the journal, and nothing of a refused one. A
 * batch that changes nothing is not journaled. 0 when applied; else -1
 * with *rc the core's refusal (the caller words the problem), or with
 * *rc CQ_OK and the journal's problem filled. */
static int change(cqd_call *c, cqd_world *w, const cq_world_op *ops, int count, bool moves_only, uint64_t *seq,
                  int *rc, int *bad_op)
{
    *seq = 0;
    cqd_journal_reached(c);
    *rc = cq_world_prepare(w->world, ops, count, bad_op);
    if (*rc != CQ_OK)
        return -1;
    int journaled = 0;
    if (count > 0)
        journaled = moves_only ? cqd_journal_moves(c, w, seq) : cqd_journal_call(c, w, seq);
    if (journaled < 0) {
        cq_world_abandon(w->world);
        return -1;
    }
    cq_world_commit(w->world, ops, count);
    return 0;
}

/* change() of a decoded batch: the world owns its hulls and meshes once
 * applied; a refusal's problem is filled. */
static int change_batch(cqd_call *c, cqd_world *w, cqp_batch *b, bool single, uint64_t *seq)
{
    int rc, bad_op;
    if (change(c, w, b->ops, b->count, b->moves == b->count, seq, &rc, &bad_op) < 0)
        return rc == CQ_OK ? -1 : apply_fail(c, b, single, rc, bad_op);
    cqp_batch_disown(b);
    return 0;
}

/* The stored shape under handle h as GET gives it. */
static void write_stored(cqd_call *c, const cq_world *world, cq_world_handle h)
{
    cq_world_body body;
    if (cq_world_get(world, h, &body) == CQ_OK)
        cqp_write_body(&c->out, cq_world_id(world, h), &body);
}

int cqd_h_shape_put(cqd_call *c)
{
    cqp_batch b;
    if (cqp_decode_shape_put(&c->dec, c->body, c->id, &b) != 0)
        return -1;
    int status = -1;
    uint64_t seq = 0;
    cqd_world *w = cqd_h_acquire(c, true);
    if (w) {
        cq_world_handle h;
        /* a replaced shape keeps its handle; a new one is looked up once made */
        bool existed = cq_world_find(w->world, c->id, &h) == CQ_OK;
        if (change_batch(c, w, &b, true, &seq) == 0 && (existed || cq_world_find(w->world, c->id, &h) == CQ_OK)) {
            write_stored(c, w->world, h);
            status = existed ? 200 : 201;
        }
        cqd_h_release(c, w);
    }
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
    cq_world_handle h;
    bool found = cq_world_find(w->world, c->id, &h) == CQ_OK;
    if (found)
        write_stored(c, w->world, h);
    cqd_h_release(c, w);
    return found ? 200 : cqd_h_no_shape(c, c->id, NULL);
}

int cqd_h_shape_delete(cqd_call *c)
{
    cqd_world *w = cqd_h_acquire(c, true);
    if (!w)
        return -1;
    uint64_t seq;
    int rc, bad_op;
    cq_world_op op = {.kind = CQ_WORLD_REMOVE, .id = c->id};
    /* an absent shape is refused before the journal: nothing would change */
    int applied = change(c, w, &op, 1, false, &seq, &rc, &bad_op);
    cqd_h_release(c, w);
    if (applied == 0)
        return cqd_journal_commit(c, seq) < 0 ? -1 : 204;
    if (rc == CQ_ENOT_FOUND)
        return cqd_h_no_shape(c, c->id, NULL);
    return rc == CQ_OK ? -1 : cqd_h_server_fail(c, rc, "removing the shape");
}

int cqd_h_batch(cqd_call *c)
{
    cqp_batch b;
    if (cqp_decode_batch(&c->dec, c->body, &b) != 0)
        return -1;
    int status = -1;
    uint64_t seq = 0;
    cqd_world *w = cqd_h_acquire(c, true);
    if (w && change_batch(c, w, &b, false, &seq) == 0) {
        cqp_write_batch_counts(&c->out, b.upserts, b.moves, b.removes, cq_world_count(w->world));
        status = 200;
    }
    if (w)
        cqd_h_release(c, w);
    if (status > 0 && cqd_journal_commit(c, seq) < 0)
        status = -1;
    cqp_batch_release(&b);
    return status;
}
