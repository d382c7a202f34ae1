/* World queries: broadphase pairs, batch contacts (with CCD), ray casts,
 * shape sweeps and overlap tests. Output arrays are sized from what the
 * world reports before the query (one retry when that guess was short),
 * never past the items the answer limit has room for (room.h): a world
 * that would fill more is refused before its answer is built. Every
 * response is written in one pass: linear in the answer. */
#include <stdio.h>
#include <stdlib.h>

#include "cqp/encode.h"
#include "fault.h"
#include "h_common.h"
#include "handlers.h"
#include "room.h"
#include "state/alloc.h"
#include "state/server.h"
#include "state/thread.h"

/* The world locked shared, with what the query reads brought up to date
 * first under the write lock: the broadphase, if an earlier shortage of
 * memory left it stale (an empty batch runs only the upkeep, which retries
 * the update), or the ray tree, which the core refreshes only on demand
 * (the first cast after a batch pays for it). Either may still be behind
 * when memory ran out or another change slipped in: the answers are exact
 * all the same. NULL with a 404 problem. */
static cqd_world *acquire_current(cqd_call *c, bool casts)
{
    cqd_world *w = cqd_h_acquire(c, false);
    if (!w)
        return NULL;
    cq_world_stats st = cq_world_get_stats(w->world);
    if (casts ? !st.bvh_stale : !st.broadphase_stale)
        return w;
    cqd_h_release(c, w);
    if (!(w = cqd_h_acquire(c, true)))
        return NULL;
    int bad_op;
    if (casts)
        cq_world_refresh(w->world);
    else
        cq_world_apply(w->world, NULL, 0, &bad_op);
    cqd_h_release(c, w);
    return cqd_h_acquire(c, false);
}

int cqd_h_broadphase(cqd_call *c)
{
    cqd_world *w = acquire_current(c, false);
    if (!w)
        return -1;
    int n = cq_world_get_stats(w->world).broadphase_pairs, room = cqd_room_items(c, CQD_ITEM_PAIR);
    cq_world_pair *p = NULL;
    int rc = CQ_ERANGE;
    for (int attempt = 0; attempt < 2 && rc == CQ_ERANGE && n < room; attempt++) {
        cqd_free(p);
        p = cqd_h_array((size_t)n, sizeof *p);
        rc = p ? cq_world_pairs(w->world, p, n, &n) : CQ_ENO_MEMORY;
    }
    if (rc != CQ_OK) {
        cqd_h_release(c, w);
        cqd_free(p);
        return n >= room ? cqd_room_refuse(c, CQD_ITEM_PAIR, n) : cqd_h_server_fail(c, rc, "broadphase pairs");
    }
    cqp_write_broadphase(&c->out, w->world, p, n);
    cqd_h_release(c, w);
    cqd_free(p);
    return 200;
}

static int contacts_fail(cqd_call *c, const cqp_contacts_req *req, int rc, int bad_id)
{
    if (rc == CQ_ENOT_FOUND && bad_id >= 0 && bad_id < req->id_count) {
        char ptr[32];
        snprintf(ptr, sizeof ptr, "/ids/%d", bad_id);
        return cqd_h_no_shape(c, req->id_ptrs[bad_id], ptr);
    }
    cqd_refusal r = {.site = CQD_SITE_CONTACTS, .status = rc, .what = "contacts"};
    return cqd_h_refused(c, &r);
}

/* Whether the counts a short query reported prove its answer too long. */
static bool contacts_past_room(const cq_world_contacts_out *out, int pair_room, int toi_room)
{
    return out->pair_count >= pair_room || out->toi_count >= toi_room;
}

static int contacts_too_long(cqd_call *c, const cq_world_contacts_out *out, int pair_room)
{
    if (out->pair_count >= pair_room)
        return cqd_room_refuse(c, CQD_ITEM_CONTACT, out->pair_count);
    return cqd_room_refuse(c, CQD_ITEM_TOI, out->toi_count);
}

int cqd_h_contacts(cqd_call *c)
{
    cqp_contacts_req req;
    if (cqp_decode_contacts(&c->dec, c->body, &req) != 0)
        return -1;
    /* exclusive: the pass updates the pair cache */
    cqd_world *w = cqd_h_acquire(c, true);
    if (!w) {
        cqp_contacts_req_release(&req);
        return -1;
    }
    cq_world_stats st = cq_world_get_stats(w->world);
    cq_world_contacts_query q = {
        .ids = req.id_ptrs,
        .id_count = req.id_count,
        .dt = req.dt,
        .counters = &c->self->counters,
        .log = &c->self->fallbacks,
        .deadline = cqd_h_deadline(c),
    };
    /* Touching pairs are broadphase pairs, and each swept shape has at
     * most one first impact: the retry is for a broadphase that was stale.
     * A refused query commits nothing, so the retry runs the same tests on
     * the same world and meets the same fallbacks: they were counted and
     * logged once already. */
    cq_world_contacts_out out = {0};
    int pair_room = cqd_room_items(c, CQD_ITEM_CONTACT), toi_room = cqd_room_items(c, CQD_ITEM_TOI);
    int pair_cap = st.broadphase_pairs < pair_room ? st.broadphase_pairs : pair_room;
    int toi_cap = req.dt <= 0 ? 0 : st.shapes < toi_room ? st.shapes : toi_room;
    uint64_t mark = cqd_thread_mark(c->self);
    int rc = CQ_ERANGE;
    for (int attempt = 0; attempt < 2 && rc == CQ_ERANGE && !contacts_past_room(&out, pair_room, toi_room);
         attempt++) {
        cqd_free(out.pairs);
        cqd_free(out.toi);
        out.pairs = cqd_h_out_array((size_t)pair_cap, sizeof *out.pairs);
        out.toi = cqd_h_out_array((size_t)toi_cap, sizeof *out.toi);
        out.pair_capacity = pair_cap;
        out.toi_capacity = toi_cap;
        rc = out.pairs && out.toi ? cq_world_contacts(w->world, &q, &out) : CQ_ENO_MEMORY;
        q.counters = NULL;
        q.log = NULL;
        pair_cap = out.pair_count;
        toi_cap = out.toi_count;
    }
    cqd_thread_label_fallbacks(c->self, mark, c->world, c->resp->request_id);
    if (rc == CQ_OK)
        cqp_write_contacts(&c->out, w->world, &out);
    else if (contacts_past_room(&out, pair_room, toi_room))
        contacts_too_long(c, &out, pair_room);
    else
        contacts_fail(c, &req, rc, out.bad_id);
    cqd_h_release(c, w);
    cqd_free(out.pairs);
    cqd_free(out.toi);
    cqp_contacts_req_release(&req);
    return rc == CQ_OK ? 200 : -1;
}

static int ray_fail(cqd_call *c, int rc, int bad_ray)
{
    if (bad_ray < 0)
        return cqd_h_server_fail(c, rc, "ray cast");
    char ptr[32];
    snprintf(ptr, sizeof ptr, "/rays/%d", bad_ray);
    return cqp_fail(&c->problem, CQP_P_BAD_VALUE, ptr, "%s", cq_strerror(rc));
}

/* {"hits": [hit | null, ...]}: the closest hit of each ray. */
static int raycast_closest(cqd_call *c, const cq_world *world, const cqp_raycast_req *req)
{
    cq_world_ray_hit *hits = cqd_h_array((size_t)req->count, sizeof *hits);
    if (!hits)
        return cqd_fail_oom(c);
    int bad_ray = -1;
    cq_world_ray_options opt = {.deadline = cqd_h_deadline(c)};
    int rc = cq_world_raycast_opt(world, req->rays, req->count, &opt, hits, &bad_ray);
    if (rc == CQ_OK)
        cqp_write_ray_hits(&c->out, world, hits, req->count);
    cqd_free(hits);
    return rc == CQ_OK ? 0 : ray_fail(c, rc, bad_ray);
}

/* {"hits": [[hit, ...], ...]}: every hit of each ray, nearest first. */
static int raycast_all(cqd_call *c, const cq_world *world, const cqp_raycast_req *req)
{
    int *first = cqd_h_array((size_t)req->count + 1, sizeof *first);
    if (!first)
        return cqd_fail_oom(c);
    /* a guess of two hits a ray; one retry with the exact total */
    int room = cqd_room_items(c, CQD_ITEM_HIT);
    int cap = req->count < (room - 16) / 2 ? 2 * req->count + 16 : room;
    cq_world_ray_hit *hits = NULL;
    int bad_ray = -1, rc = CQ_ERANGE;
    int most = c->srv->cfg.limits.hits;
    cq_world_ray_options opt = {.deadline = cqd_h_deadline(c)};
    for (int attempt = 0; attempt < 2 && rc == CQ_ERANGE && cap <= room; attempt++) {
        cqd_free(hits);
        hits = cqd_h_array((size_t)cap, sizeof *hits);
        rc = hits ? cq_world_raycast_all_opt(world, req->rays, req->count, &opt, hits, cap, first, &bad_ray)
                  : CQ_ENO_MEMORY;
        cap = first[req->count];
        if (rc == CQ_ERANGE && most > 0 && cap > most) {
            cqd_free(hits);
            cqd_free(first);
            return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, "/rays",
                            "the rays hit more than %d shapes in all (the server's --max-hits); ask for the "
                            "closest hits or send fewer rays", most);
        }
    }
    if (rc == CQ_OK)
        cqp_write_ray_hits_all(&c->out, world, hits, first, req->count);
    cqd_free(hits);
    cqd_free(first);
    if (rc == CQ_ERANGE && cap > room)
        return cqd_room_refuse(c, CQD_ITEM_HIT, cap);
    return rc == CQ_OK ? 0 : ray_fail(c, rc, bad_ray);
}

int cqd_h_raycast(cqd_call *c)
{
    cqp_raycast_req req;
    if (cqp_decode_raycast(&c->dec, c->body, &req) != 0)
        return -1;
    int rc = -1;
    cqd_world *w = acquire_current(c, true);
    if (w) {
        rc = req.all ? raycast_all(c, w->world, &req) : raycast_closest(c, w->world, &req);
        cqd_h_release(c, w);
    }
    cqp_raycast_req_release(&req);
    return rc == 0 ? 200 : -1;
}

/* A shape query the decoder passed but the world refused. */
static int shape_query_fail(cqd_call *c, const cq_shape *shape, int rc)
{
    cqd_refusal r = {.site = CQD_SITE_SHAPE_QUERY, .status = rc, .what = "shape query", .shape = shape->type};
    return cqd_h_refused(c, &r);
}

int cqd_h_sweep(cqd_call *c)
{
    cqp_shape_req req;
    if (cqp_decode_sweep(&c->dec, c->body, &req) != 0)
        return -1;
    int rc = -1;
    cqd_world *w = acquire_current(c, true);
    if (w) {
        cq_world_shape_query q = {
            .shape = &req.shape.shape, .pose = req.pose, .translation = req.translation, .mask = req.mask,
            .counters = &c->self->counters, .log = &c->self->fallbacks, .deadline = cqd_h_deadline(c)};
        cq_world_sweep_hit h;
        uint64_t mark = cqd_thread_mark(c->self);
        rc = cq_world_sweep(w->world, &q, &h);
        cqd_thread_label_fallbacks(c->self, mark, c->world, c->resp->request_id);
        if (rc == CQ_OK)
            cqp_write_sweep(&c->out, w->world, &h);
        else
            shape_query_fail(c, &req.shape.shape, rc);
        cqd_h_release(c, w);
    }
    cqp_shape_req_release(&req);
    return rc == CQ_OK ? 200 : -1;
}

int cqd_h_overlap(cqd_call *c)
{
    cqp_shape_req req;
    if (cqp_decode_overlap(&c->dec, c->body, &req) != 0)
        return -1;
    int rc = -1;
    cqd_world *w = acquire_current(c, true);
    if (w) {
        cq_world_shape_query q = {
            .shape = &req.shape.shape, .pose = req.pose, .mask = req.mask, .counters = &c->self->counters,
            .deadline = cqd_h_deadline(c)};
        /* most overlap queries touch a handful of shapes: start small */
        int n = cq_world_count(w->world), room = cqd_room_items(c, CQD_ITEM_ID);
        int cap = n < 256 ? n : 256;
        cap = cap < room ? cap : room;
        cq_world_handle *ids = NULL;
        rc = CQ_ERANGE;
        for (int attempt = 0; attempt < 2 && rc == CQ_ERANGE && cap <= room; attempt++) {
            cqd_free(ids);
            ids = cqd_h_array((size_t)cap, sizeof *ids);
            rc = ids ? cq_world_overlap(w->world, &q, ids, cap, &n) : CQ_ENO_MEMORY;
            cap = n;
        }
        if (rc == CQ_OK)
            cqp_write_overlap(&c->out, w->world, ids, n);
        else if (rc == CQ_ERANGE)
            cqd_room_refuse(c, CQD_ITEM_ID, n);
        else
            shape_query_fail(c, &req.shape.shape, rc);
        cqd_h_release(c, w);
        cqd_free(ids);
    }
    cqp_shape_req_release(&req);
    return rc == CQ_OK ? 200 : -1;
}
