/* Batch contact generation: the broadphase pairs, bucketed by shape types
 * (seed 002: sphere-sphere together, box-box together, the rest after),
 * each queried through cq_collide with its cached normal; the touching
 * ones sorted by ids. Then CCD for the fast shapes: a swept box through the
 * BVH, and cq_sweep on the relative motion of each candidate. The pair
 * cache and the CCD fallback memory are committed only when the caller's
 * arrays held everything. */
#include <math.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/fallback.h"
#include "world_internal.h"

/* ---- storage ---- */

/* Work arrays for n pairs: the pairs, their bucket order and sort keys. */
static size_t work_size(int n) { return (size_t)n * (sizeof(world_work) + sizeof(world_key) + sizeof(int32_t)); }

static int work_reserve(cq_world *w, int n)
{
    if (n <= w->work_cap)
        return CQ_OK;
    int cap = 2 * w->work_cap > n ? 2 * w->work_cap : n;
    void *block = cq_alloc(work_size(cap));
    if (!block)
        return CQ_ENO_MEMORY;
    if (w->work_cap > 0) {
        cq_free(w->work, work_size(w->work_cap));
        w->stats.grows++;
    }
    w->work = block;
    w->keys = (world_key *)(w->work + cap);
    w->bucket_order = (int32_t *)(w->keys + cap);
    w->work_cap = cap;
    return CQ_OK;
}

/* The pair cache covers every broadphase pair slot; new entries are empty. */
static int cache_reserve(cq_world *w)
{
    int need = cq__sap_pair_capacity(w->sap);
    if (need <= w->cache_cap)
        return CQ_OK;
    world_pair_cache *c = cq_alloc((size_t)need * sizeof *c);
    if (!c)
        return CQ_ENO_MEMORY;
    if (w->cache_cap > 0)
        memcpy(c, w->cache, (size_t)w->cache_cap * sizeof *c);
    memset(c + w->cache_cap, 0, (size_t)(need - w->cache_cap) * sizeof *c);
    if (w->cache_cap > 0) {
        cq_free(w->cache, (size_t)w->cache_cap * sizeof *c);
        w->stats.grows++;
    }
    w->cache = c;
    w->cache_cap = need;
    return CQ_OK;
}

int cq__world_contacts_reserve(cq_world *w)
{
    int rc = cache_reserve(w);
    return rc == CQ_OK ? work_reserve(w, cq__sap_pair_capacity(w->sap)) : rc;
}

void cq__world_contacts_release(cq_world *w)
{
    cq_free(w->cache, (size_t)w->cache_cap * sizeof *w->cache);
    if (w->work_cap > 0)
        cq_free(w->work, work_size(w->work_cap));
    w->cache = NULL;
    w->work = NULL;
    w->cache_cap = w->work_cap = 0;
}

/* ---- the narrow phase over the pairs ---- */

/* Buckets: sphere-sphere, box-box, then the other type pairs each together. */
#define BUCKETS (2 + CQ_SHAPE_TYPE_COUNT * CQ_SHAPE_TYPE_COUNT)

static int bucket_of(cq_shape_type a, cq_shape_type b)
{
    if (a > b) {
        cq_shape_type t = a;
        a = b;
        b = t;
    }
    if (a == b && (a == CQ_SPHERE || a == CQ_BOX))
        return a == CQ_SPHERE ? 0 : 1;
    return 2 + (int)a * CQ_SHAPE_TYPE_COUNT + (int)b;
}

/* Gathers the pairs passing the filter (lower id first) in bucket order. */
static int gather(cq_world *w, bool filtered)
{
    int n = 0, counts[BUCKETS + 1] = {0};
    for (int k = 0; k < cq__sap_pair_count(w->sap); k++) {
        cq_sap_pair p = cq__sap_pair_at(w->sap, k);
        if (filtered && w->names[p.a].mark < 0 && w->names[p.b].mark < 0)
            continue;
        bool swap = w->rank[p.a] > w->rank[p.b];
        int lo = swap ? p.b : p.a, hi = swap ? p.a : p.b;
        w->work[n] = (world_work){lo, hi, p.slot, w->cache[p.slot]};
        w->keys[n].index = bucket_of(w->e[lo].body.shape.type, w->e[hi].body.shape.type);
        counts[w->keys[n].index + 1]++;
        n++;
    }
    for (int b = 0; b < BUCKETS; b++)
        counts[b + 1] += counts[b];
    for (int k = 0; k < n; k++)
        w->bucket_order[counts[w->keys[k].index]++] = k;
    return n;
}

/* A contact copied field by field into a zeroed record, so that equal
 * results are equal bytes (no stale padding or unused points). */
static void put_contact(cq_world_contact *dst, cq_world_handle a, cq_world_handle b, const cq_contact *c)
{
    memset(dst, 0, sizeof *dst);
    dst->a = a;
    dst->b = b;
    cq_contact *d = &dst->contact;
    d->overlap = c->overlap;
    d->has_normal = c->has_normal;
    d->has_distance = c->has_distance;
    d->distance = c->distance;
    d->depth = c->depth;
    d->normal = c->normal;
    d->witness_a = c->witness_a;
    d->witness_b = c->witness_b;
    d->point_count = c->point_count;
    for (int k = 0; k < c->point_count; k++) {
        d->points[k].position = c->points[k].position;
        d->points[k].depth = c->points[k].depth;
        d->points[k].feature = c->points[k].feature;
    }
    d->algorithm = c->algorithm;
    d->fallback_reason = c->fallback_reason;
    d->fallback_action = c->fallback_action;
    d->sat_axis = c->sat_axis;
    d->sat_gap = c->sat_gap;
    d->normal_axis = c->normal_axis;
}

/* Runs one pair: 1 touching, 0 not, -1 when cq_collide has no algorithm for it. The pair's cache entry for the
 * next frame goes to wk->next. A pair that fell back last time too is not
 * logged again (it is still counted), so one stuck pair cannot flood the log. */
static int run_pair(const cq_world *w, world_work *wk, const cq_world_contacts_query *q, cq_contact *c)
{
    const world_entry *a = &w->e[wk->lo], *b = &w->e[wk->hi];
    cq_pair_query pq = {
        .a = &a->body.shape,
        .xa = a->body.pose,
        .b = &b->body.shape,
        .xb = b->body.pose,
        .skin = w->settings.skin,
        .cache = wk->next.prev.has_normal ? &wk->next.prev : NULL,
        .counters = q->counters,
        .log = wk->next.fell_back ? NULL : q->log,
        .tag_a = cq_world_handle_pack(world_handle(w, wk->lo)),
        .tag_b = cq_world_handle_pack(world_handle(w, wk->hi)),
        .gjk_max_iterations = w->settings.gjk_max_iterations,
        .epa_max_iterations = w->settings.epa_max_iterations,
        .skip_distance = true,
    };
    if (cq_collide(&pq, c) != CQ_OK)
        return -1;
    if (c->has_normal)
        wk->next.prev = cq_pair_cache_of(c);
    wk->next.fell_back = c->fallback_reason != CQ_FB_NONE;
    return c->overlap;
}

/* Puts out[0..n) in (id(a), id(b)) order: sorts keys, then follows the
 * permutation's cycles in place. */
static void sort_output(cq_world *w, cq_world_contact *out, int n)
{
    cq__world_sort_keys(w->keys, n);
    for (int k = 0; k < n; k++) {
        if (w->keys[k].index == k)
            continue;
        cq_world_contact tmp;
        memcpy(&tmp, &out[k], sizeof tmp);
        for (int j = k;;) {
            int src = w->keys[j].index;
            w->keys[j].index = j;
            if (src == k) {
                memcpy(&out[j], &tmp, sizeof tmp);
                break;
            }
            memcpy(&out[j], &out[src], sizeof tmp);
            j = src;
        }
    }
}

static int narrow_phase(cq_world *w, int n, const cq_world_contacts_query *q, world_ticker *t,
                        cq_world_contacts_out *out)
{
    int touching = 0;
    for (int k = 0; k < n; k++) {
        world_work *wk = &w->work[w->bucket_order[k]];
        if (world_tick_pair(t, &w->e[wk->lo], &w->e[wk->hi]))
            break;
        cq_contact c;
        int touch = run_pair(w, wk, q, &c);
        out->tested += touch >= 0;
        if (touch <= 0)
            continue;
        if (touching < out->pair_capacity) {
            put_contact(&out->pairs[touching], world_handle(w, wk->lo), world_handle(w, wk->hi), &c);
            w->keys[touching] = (world_key){(uint64_t)w->rank[wk->lo] << 32 | (uint32_t)w->rank[wk->hi],
                                            touching};
        }
        touching++;
    }
    return touching;
}

/* ---- CCD ---- */

typedef struct ccd_ctx {
    const cq_world *w;
    world_ccd_memory *memory; /* w's, written as sweeps fall back */
    cq_fallback_log *log;     /* the query's, given to a sweep unless its pair fell back last time */
    int slot;          /* the swept shape */
    cq_vec3 motion;    /* its velocity times dt */
    double dt;
    bool filtered;
    cq_sweep_options opt;
    cq_aabb grown;     /* its box, grown by the sweep margin */
    cq_world_toi best;
    int best_rank;
    world_ticker *tick; /* the query's deadline: a sweep is a unit */
} ccd_ctx;

/* Whether box a moving by t d, t in [0, 1], touches box b (slab test). */
static bool boxes_meet_moving(const cq_aabb *a, cq_vec3 d, const cq_aabb *b)
{
    double enter = 0, exit = 1;
    for (int i = 0; i < 3; i++) {
        double lo = cq_comp(b->min, i) - cq_comp(a->max, i), hi = cq_comp(b->max, i) - cq_comp(a->min, i);
        double di = cq_comp(d, i);
        if (di == 0) {
            if (lo > 0 || hi < 0)
                return false;
            continue;
        }
        double t0 = lo / di, t1 = hi / di;
        enter = fmax(enter, fmin(t0, t1));
        exit = fmin(exit, fmax(t0, t1));
    }
    return enter <= exit;
}

/* Whether pair p is among the n pairs of list. */
static bool ccd_listed(const world_ccd_pair *list, int n, world_ccd_pair p)
{
    for (int k = 0; k < n; k++)
        if (list[k].a == p.a && list[k].b == p.b)
            return true;
    return false;
}

static double ccd_visit(void *vctx, int other, double tmax)
{
    ccd_ctx *c = vctx;
    const cq_world *w = c->w;
    const world_entry *a = &w->e[c->slot], *b = &w->e[other];
    if (world_tick_pair(c->tick, a, b))
        return -1; /* stops the walk */
    if (other == c->slot || !world_filters_meet(a, b) ||
        (c->filtered && w->names[c->slot].mark < 0 && w->names[other].mark < 0))
        return tmax;
    cq_vec3 vb = world_static_type(b->body.shape.type) ? cq_v3(0, 0, 0) : cq_scale(b->body.velocity, c->dt);
    cq_vec3 rel = cq_sub(c->motion, vb);
    if (!boxes_meet_moving(&c->grown, rel, &b->box))
        return tmax;
    cq_sweep_hit h;
    world_ccd_memory *m = c->memory;
    world_ccd_pair pair = {c->opt.tag_a, cq_world_handle_pack(world_handle(w, other))};
    c->opt.tag_b = pair.b;
    c->opt.log = ccd_listed(m->pair[m->last], m->count[m->last], pair) ? NULL : c->log;
    if (cq_sweep(&a->body.shape, &a->body.pose, rel, &b->body.shape, &b->body.pose, &c->opt, &h) != CQ_OK)
        return tmax;
    int next = 1 - m->last;
    if (h.fell_back && m->count[next] < WORLD_CCD_MEMORY)
        m->pair[next][m->count[next]++] = pair;
    if (!h.hit || h.initially_overlapping)
        return tmax;
    if (c->best_rank < 0 || h.time < c->best.time || (h.time == c->best.time && w->rank[other] < c->best_rank)) {
        /* The point is on B's surface where B is at the impact. */
        c->best = (cq_world_toi){world_handle(w, c->slot), world_handle(w, other), h.time,
                                 cq_mad(h.point, vb, h.time), h.normal};
        c->best_rank = w->rank[other];
    }
    return tmax;
}

/* The largest and second largest per-axis speed of the moving shapes (a
 * swept shape's candidates may move by at most the largest other one). */
typedef struct motion_bound {
    double top[3], second[3];
    int who[3];
} motion_bound;

static motion_bound bound_motion(const cq_world *w, double dt)
{
    motion_bound m = {{0, 0, 0}, {0, 0, 0}, {-1, -1, -1}};
    for (int k = 0; k < w->count; k++) {
        const world_entry *e = &w->e[w->order[k]];
        if (world_static_type(e->body.shape.type))
            continue;
        for (int i = 0; i < 3; i++) {
            double v = fabs(cq_comp(e->body.velocity, i)) * dt;
            if (v > m.top[i]) {
                m.second[i] = m.top[i];
                m.top[i] = v;
                m.who[i] = w->order[k];
            } else if (v > m.second[i]) {
                m.second[i] = v;
            }
        }
    }
    return m;
}

/* How far along axis i any shape but slot moves. */
static double others_motion(const motion_bound *m, int slot, int i)
{
    return m->who[i] == slot ? m->second[i] : m->top[i];
}

static int ccd(cq_world *w, const cq_world_contacts_query *q, bool filtered, world_ticker *t,
               cq_world_contacts_out *out)
{
    double dt = q->dt;
    motion_bound m = bound_motion(w, dt);
    world_ccd_memory *memory = &w->ccd_fell_back;
    memory->count[1 - memory->last] = 0;
    int found = 0;
    for (int k = 0; k < w->count && !t->expired; k++) {
        int slot = w->order[k];
        const world_entry *e = &w->e[slot];
        cq_vec3 motion = cq_scale(e->body.velocity, dt);
        if (world_static_type(e->body.shape.type) || !(cq_len(motion) > e->min_half))
            continue;
        out->swept++;
        ccd_ctx c = {.w = w, .memory = memory, .log = q->log, .slot = slot, .motion = motion, .dt = dt,
                     .filtered = filtered, .best_rank = -1, .tick = t};
        c.opt = (cq_sweep_options){.max_iterations = w->settings.sweep_max_iterations, .counters = q->counters,
                                   .tag_a = cq_world_handle_pack(world_handle(w, slot))};
        double margin = world_sweep_margin(&e->box);
        c.grown = cq_aabb_fatten(e->box, margin);
        /* Candidates are found at their start: grow the box by the most they can move. */
        cq_vec3 g = cq_v3(others_motion(&m, slot, 0) + margin, others_motion(&m, slot, 1) + margin,
                          others_motion(&m, slot, 2) + margin);
        cq_aabb box = {cq_sub(e->box.min, g), cq_add(e->box.max, g)};
        cq__world_each_sweep(w, &box, motion, 1.0, ccd_visit, &c);
        if (c.best_rank >= 0 && found++ < out->toi_capacity)
            out->toi[found - 1] = c.best;
    }
    return found; /* the pairs that fell back wait in memory's other half for the commit */
}

/* ---- the query ---- */

/* Marks the filter's slots; CQ_ENOT_FOUND with out->bad_id. */
static int mark_filter(cq_world *w, const cq_world_contacts_query *q, cq_world_contacts_out *out)
{
    for (int k = 0; k < q->id_count; k++) {
        cq_world_handle h;
        if (!q->ids[k] || cq_world_find(w, q->ids[k], &h) != CQ_OK) {
            out->bad_id = k;
            for (int j = 0; j < k; j++)
                if (cq_world_find(w, q->ids[j], &h) == CQ_OK)
                    w->names[h.index].mark = -1;
            return CQ_ENOT_FOUND;
        }
        w->names[h.index].mark = 1;
    }
    return CQ_OK;
}

static void unmark_filter(cq_world *w, const cq_world_contacts_query *q)
{
    for (int k = 0; k < q->id_count; k++) {
        cq_world_handle h;
        if (cq_world_find(w, q->ids[k], &h) == CQ_OK)
            w->names[h.index].mark = -1;
    }
}

int cq_world_contacts(cq_world *w, const cq_world_contacts_query *query, cq_world_contacts_out *out)
{
    static const cq_world_contacts_query none = {0};
    const cq_world_contacts_query *q = query ? query : &none;
    cq__world_no_pending(w);
    cq__world_renumber(w); /* the keys below are ranks */
    out->pair_count = out->toi_count = out->tested = out->swept = 0;
    out->bad_id = -1;
    if (!isfinite(q->dt))
        return CQ_ENOT_FINITE;
    if (q->dt < 0)
        return CQ_ENEGATIVE;
    if (q->id_count < 0 || (q->id_count > 0 && !q->ids))
        return CQ_ERANGE;
    int rc = cq__world_sync_broadphase(w);
    /* In the pairs' (a, b) order, so the narrow phase's fallback log comes
     * out the same whatever the list went through (O(changes) a tick). */
    cq__sap_pairs_sort(w->sap);
    if (rc == CQ_OK)
        rc = cache_reserve(w);
    if (rc == CQ_OK)
        rc = work_reserve(w, cq__sap_pair_count(w->sap));
    if (rc == CQ_OK)
        rc = mark_filter(w, q, out);
    if (rc != CQ_OK)
        return rc;
    bool filtered = q->ids != NULL;
    int n = gather(w, filtered);
    world_ticker tick = world_ticker_start(q->deadline);
    out->pair_count = narrow_phase(w, n, q, &tick, out);
    if (q->dt > 0 && !tick.expired) {
        /* CCD finds each swept shape's candidates in the ray tree, which
         * every batch of moves leaves behind: without the refit, each one
         * would scan every shape (O(swept x shapes)). Out of memory for a
         * rebuild, the scan still answers exactly. */
        cq_world_refresh(w);
        out->toi_count = ccd(w, q, filtered, &tick, out);
    }
    unmark_filter(w, q);
    /* Stopped part way: nothing is committed, as for a short array. */
    if (tick.expired)
        return CQ_ECANCELED;
    if (out->pair_count > out->pair_capacity || out->toi_count > out->toi_capacity)
        return CQ_ERANGE;
    sort_output(w, out->pairs, out->pair_count);
    /* Committed together, and only for an answered query: a rejected one
     * leaves the world as it found it, so its retry logs what it logged. */
    for (int k = 0; k < n; k++)
        w->cache[w->work[k].slot] = w->work[k].next;
    if (q->dt > 0)
        w->ccd_fell_back.last = 1 - w->ccd_fell_back.last;
    return CQ_OK;
}
