/// @file server/store/store_recover.c
/// Start-up, second half: the records the scan kept go through the same
/// handlers as when they were first sent (decoding and applying are
/// deterministic, so the worlds come back bit for bit), but not through
/// the request pipeline: no auth, no metrics, no access log, and the
/// journal hook only tags each world with the record's sequence number
/// instead of appending it again. Each body is opened in the format its
/// record's kind names (cqp/journal.h: JSON, or MessagePack kept as the
/// client sent it); snapshots are JSON. This version checks a change
/// before journaling it and so never writes a record that then fails, but
/// an earlier one journaled first and checked after: its journal may hold
/// records refused when first sent. Such a record fails the same way now
/// and is skipped: the failure comes after the handler decoded it and
/// found its world (cqd_journal_reached, or the journal itself), and is a
/// client error (4xx), which depends on the record and the worlds alone.
/// Any other failure (out of memory, a fault) stops the start instead of
/// dropping a change that may have been acknowledged.
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/router.h"
#include "cqp/journal.h"
#include "net/json_arena.h"
#include "state/registry.h"
#include "state/thread.h"

/// The outcome of applying one record.
typedef enum run_result {
    RUN_APPLIED,
    RUN_REJECTED, ///< the handler refused it with a client error (as it did when first sent)
    RUN_FAILED,   ///< the handler failed with a server error: not a verdict on the record
    RUN_SKIPPED,  ///< its world in the snapshot already holds it, or is gone (world_gone)
    RUN_UNKNOWN,  ///< not a mutation this server knows
} run_result;

static bool is_mutation(cqd_handler h)
{
    return h == cqd_h_world_put || h == cqd_h_world_delete || h == cqd_h_shape_put || h == cqd_h_shape_delete ||
           h == cqd_h_batch;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cqd_snap_world *)a)->name, ((const cqd_snap_world *)b)->name);
}

/// The sequence number the snapshot holds for world, 0 when not in it.
static uint64_t snapshot_seq(const cqd_store *st, const char *world)
{
    if (st->snap_world_count == 0)
        return 0;
    cqd_snap_world key;
    snprintf(key.name, sizeof key.name, "%s", world);
    const cqd_snap_world *hit =
        bsearch(&key, st->snap_worlds, (size_t)st->snap_world_count, sizeof key, by_name);
    return hit ? hit->seq : 0;
}

/// Whether a record failed because its world was deleted while the snapshot
/// was being written. A snapshot holds the worlds that existed when its
/// journal began, each as of its turn; one deleted before its turn is not
/// in it, and its records after the snapshot's start, the deletion among
/// them, no longer find it. Nothing else leaves a world a record reached
/// missing from the snapshot and the journal both (a lost record is a gap
/// the scan stops at), and its deletion supersedes them.
static bool world_gone(cqd_store *st, const char *world, const cqp_problem *p)
{
    if (p->kind != CQP_P_NOT_FOUND || !world[0] || st->rec.snapshot < 0 || snapshot_seq(st, world) != 0)
        return false;
    cqd_world *w = cqd_world_acquire(st->srv->worlds, world, false);
    if (w)
        cqd_world_release(st->srv->worlds, w);
    return !w;
}

/// Opens m's body, of format f (the record's kind says which), into *b and
/// points c->body at it; an empty body stays absent, and so does any body
/// of a route that takes none: the pipeline never opened it when the
/// request came, so whatever bytes an earlier version journaled with it
/// (a DELETE's garbage) were no part of the change. 0, or -1 with
/// c->problem filled (BUSY when memory ran out).
static int open_record_body(cqd_call *c, cqp_body *b, cqp_format f, const cqp_mutation *m)
{
    if (m->body_len == 0 || !cqd_route_takes_body(c->route))
        return 0;
    if (cqp_body_open(b, f, m->body, m->body_len, &c->problem) != 0) {
        if (c->self->json.failed)
            cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory decoding the record");
        return -1;
    }
    if (cqp_value_type(b->root) != CQP_V_OBJECT)
        return cqp_fail(&c->problem, CQP_P_BAD_TYPE, "", "the request body must be %s",
                        f == CQP_MSGPACK ? "a MessagePack map" : "a JSON object");
    c->body = b->root;
    return 0;
}

/// Runs the mutation m (sequence number seq, body of format f) through its
/// handler; c.world goes to world, a rejection's problem to *problem.
static run_result run(cqd_store *st, const cqp_mutation *m, cqp_format f, uint64_t seq, bool from_snapshot,
                      char world[CQ_WORLD_ID_MAX + 1], cqp_problem *problem)
{
    char method[16], path[256];
    world[0] = '\0';
    if (m->method_len >= sizeof method || m->path_len >= sizeof path)
        return RUN_UNKNOWN;
    memcpy(method, m->method, m->method_len);
    method[m->method_len] = '\0';
    memcpy(path, m->path, m->path_len);
    path[m->path_len] = '\0';

    cqd_request req = {.transport = "recovery", .method = method, .path = path, .body = m->body,
                       .body_len = m->body_len, .body_format = f};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_call c;
    memset(&c, 0, sizeof c);
    c.srv = st->srv;
    c.self = cqd_thread_self(st->srv);
    c.req = &req;
    c.resp = &resp;
    c.problem.kind = CQP_P_INTERNAL;
    cqp_writer_init(&c.out, &resp.body, false);
    int count;
    const cqd_route *routes = cqd_routes(&count);
    if (cqd_route_match(method, path, &c, &c.route, NULL, 0) != CQD_MATCH_OK)
        return RUN_UNKNOWN;
    cqd_handler handler = routes[c.route].handler;
    if (from_snapshot ? handler != cqd_h_world_put : !is_mutation(handler))
        return RUN_UNKNOWN;
    snprintf(world, CQ_WORLD_ID_MAX + 1, "%s", c.world);
    if (!from_snapshot && seq <= snapshot_seq(st, c.world))
        return RUN_SKIPPED;

    /* In the thread's JSON arena, without a budget: an allocation that
     * fails is then known as such, where jansson may call it bad syntax.
     * Without its thread's state (its allocation failed) no record runs. */
    if (!c.self) {
        cqd_response_free(&resp);
        cqp_fail(problem, CQP_P_BUSY, NULL, "out of memory replaying the record");
        return RUN_FAILED;
    }
    cqd_json_arena *previous = cqd_json_arena_enter(&c.self->json, 0);
    cqp_body body = {0};
    int status = open_record_body(&c, &body, f, m);
    bool reached = false;
    if (status == 0) {
        /* no limits: a record accepted then must not be refused because
         * the limits were lowered since */
        cqp_decoder_init(&c.dec, NULL, &c.problem);
        st->recover_seq = seq;
        st->recover_reached = false;
        status = handler(&c);
        reached = st->recover_reached;
        st->recover_seq = 0;
    }
    c.body = cqp_value_absent();
    cqp_body_close(&body);
    cqd_json_arena_leave(&c.self->json, previous);
    cqd_response_free(&resp);
    *problem = c.problem;
    if (status > 0)
        return RUN_APPLIED;
    /* The record was journaled, so when first sent it was decoded and its
     * handler found its world: a failure before that point now, or any
     * server error, is not the verdict it had then. */
    if (!from_snapshot && !reached && world_gone(st, world, &c.problem))
        return RUN_SKIPPED;
    bool as_first_sent = !from_snapshot && reached && cqp_problem_status(c.problem.kind) < 500;
    return as_first_sent ? RUN_REJECTED : RUN_FAILED;
}

/// Out of memory rebuilding the worlds: the files are sound, so neither
/// --repair nor inspect would be right to go on without the record.
static int lacking_memory(cqd_store *st)
{
    cqd_store_note(st, CQD_LOG_ERROR, "refusing to start: nothing is lost, start again with more memory");
    return -1;
}

/// A record recovery cannot apply, though the files are sound: corruption
/// as start-up sees it (--repair and inspect go on without it); -1 stops.
static int unusable_record(cqd_store *st)
{
    st->rec.corrupt = true;
    if (st->srv->cfg.repair || st->read_only)
        return 0;
    cqd_store_note(st, CQD_LOG_ERROR, "refusing to start (--repair starts without that record)");
    return -1;
}

/// Loads the worlds of the snapshot f.
static int apply_snapshot(cqd_store *st, const cqd_sfile *f)
{
    st->snap_worlds = calloc(f->records ? f->records : 1, sizeof *st->snap_worlds);
    if (!st->snap_worlds) {
        cqd_store_note(st, CQD_LOG_ERROR, "out of memory loading %s", f->name);
        return -1;
    }
    size_t pos = 0;
    cqp_record r;
    while (pos < f->valid && cqp_record_next(f->data, f->valid, &pos, &r, NULL) == CQP_SCAN_RECORD) {
        cqp_mutation m;
        if (r.kind != CQP_REC_SNAP_WORLD || !cqp_mutation_parse(r.payload, r.len, &m))
            continue;
        char world[CQ_WORLD_ID_MAX + 1];
        cqp_problem problem;
        run_result res = run(st, &m, CQP_JSON, r.seq, true, world, &problem); /* snapshots are JSON */
        if (res == RUN_APPLIED) {
            cqd_snap_world *sw = &st->snap_worlds[st->snap_world_count++];
            snprintf(sw->name, sizeof sw->name, "%s", world);
            sw->seq = r.seq;
            st->rec.snapshot_worlds++;
            continue;
        }
        cqd_store_note(st, CQD_LOG_ERROR, "%s at offset %zu: world '%s' cannot be rebuilt: %s", f->name, r.offset,
                       world, res == RUN_UNKNOWN ? "not a world import" : problem.detail);
        if (res == RUN_FAILED && problem.kind == CQP_P_BUSY)
            return lacking_memory(st);
        if (!st->srv->cfg.repair && !st->read_only) {
            cqd_store_note(st, CQD_LOG_ERROR, "refusing to start (--repair starts without that world)");
            return -1;
        }
        st->rec.corrupt = true;
    }
    qsort(st->snap_worlds, (size_t)st->snap_world_count, sizeof *st->snap_worlds, by_name);
    return 0;
}

/// Applies the records of journal f; -1 when start-up must stop.
static int apply_journal(cqd_store *st, const cqd_sfile *f)
{
    size_t pos = 0;
    cqp_record r;
    while (pos < f->valid && cqp_record_next(f->data, f->valid, &pos, &r, NULL) == CQP_SCAN_RECORD) {
        cqp_mutation m;
        cqp_format body;
        if (!cqp_record_is_mutation(r.kind, &body) || !cqp_mutation_parse(r.payload, r.len, &m))
            continue; /* the scan vouched for every record before f->valid */
        char world[CQ_WORLD_ID_MAX + 1];
        cqp_problem problem;
        st->rec.records++;
        switch (run(st, &m, body, r.seq, false, world, &problem)) {
        case RUN_APPLIED:
            break;
        case RUN_SKIPPED:
            st->rec.skipped++;
            break;
        case RUN_REJECTED:
            st->rec.rejected++;
            cqd_log(&st->srv->log, CQD_LOG_DEBUG, "recovery: record %llu (%.*s %.*s) rejected again: %s",
                    (unsigned long long)r.seq, (int)m.method_len, m.method, (int)m.path_len, m.path, problem.detail);
            break;
        case RUN_FAILED:
            cqd_store_note(st, CQD_LOG_ERROR, "%s at offset %zu: record %llu (%.*s %.*s) cannot be applied: %s",
                           f->name, r.offset, (unsigned long long)r.seq, (int)m.method_len, m.method,
                           (int)m.path_len, m.path, problem.detail);
            if (problem.kind == CQP_P_BUSY)
                return lacking_memory(st);
            if (unusable_record(st) < 0)
                return -1;
            break;
        case RUN_UNKNOWN:
            cqd_store_note(st, CQD_LOG_ERROR, "%s at offset %zu: record %llu is not a mutation this server knows",
                           f->name, r.offset, (unsigned long long)r.seq);
            if (unusable_record(st) < 0)
                return -1;
            break;
        }
    }
    return 0;
}

int cqd_store_apply(cqd_store *st)
{
    if (st->rec.snapshot >= 0 && apply_snapshot(st, &st->files[st->rec.snapshot]) < 0) {
        st->rec.failed = true;
        return -1;
    }
    for (int i = 0; i < st->file_count; i++) {
        if (st->files[i].used && !st->files[i].snapshot && apply_journal(st, &st->files[i]) < 0) {
            st->rec.failed = true;
            return -1;
        }
    }
    st->snap_seq = st->rec.snapshot >= 0 ? st->files[st->rec.snapshot].first : 0;
    if (!st->read_only)
        cqd_store_cleanup(st, st->snap_seq);
    return 0;
}
