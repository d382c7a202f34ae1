/* Read-only world queries: batched ray casts (closest or every hit), a
 * shape sweep, and exact overlap, each walking the BVH over the shapes'
 * current boxes (kept up to date by every mutation, never rebuilt here) and
 * testing the candidates exactly. Ties go to the smaller id, so answers do
 * not depend on the tree's shape or the insertion order. No allocation: the
 * walks use fixed stacks and the outputs are the caller's. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

/* ---- candidate walks ---- */

typedef struct walk {
    const cq_world *w;
    world_cast_visit cast;
    world_box_visit box;
    void *ctx;
} walk;

static double cast_item(void *vctx, int item, double tmax)
{
    const walk *k = vctx;
    return k->cast(k->ctx, k->w->bvh_slot[item], tmax);
}

static bool box_item(void *vctx, int item)
{
    const walk *k = vctx;
    return k->box(k->ctx, k->w->bvh_slot[item]);
}

/* Without a tree every shape is a candidate (in no particular order: ties
 * go to the smaller id whatever the order of the visits). */
static void cast_all(const cq_world *w, double tmax, world_cast_visit visit, void *ctx)
{
    for (int k = 0; k < world_member_span(w) && tmax >= 0; k++) {
        int slot = world_member(w, k);
        double t = slot >= 0 ? visit(ctx, slot, tmax) : tmax;
        tmax = t < tmax ? t : tmax;
    }
}

void cq__world_each_ray(const cq_world *w, cq_vec3 origin, cq_vec3 dir, double tmax, world_cast_visit visit, void *ctx)
{
    walk k = {w, visit, NULL, ctx};
    if (w->bvh_valid)
        cq__bvh_query_ray(&w->bvh, origin, dir, tmax, cast_item, &k);
    else
        cast_all(w, tmax, visit, ctx);
}

void cq__world_each_sweep(const cq_world *w, const cq_aabb *box, cq_vec3 d, double tmax, world_cast_visit visit,
                          void *ctx)
{
    walk k = {w, visit, NULL, ctx};
    if (w->bvh_valid && cq_v3_finite(box->min) && cq_v3_finite(box->max))
        cq__bvh_query_sweep(&w->bvh, box, d, tmax, cast_item, &k);
    else
        cast_all(w, tmax, visit, ctx);
}

void cq__world_each_box(const cq_world *w, const cq_aabb *box, world_box_visit visit, void *ctx)
{
    walk k = {w, NULL, visit, ctx};
    if (w->bvh_valid) {
        cq__bvh_query_aabb(&w->bvh, box, box_item, &k);
        return;
    }
    for (int i = 0; i < world_member_span(w); i++) {
        int slot = world_member(w, i);
        if (slot >= 0 && cq_aabb_overlap(box, &w->e[slot].box) && !visit(ctx, slot))
            return;
    }
}

/* ---- rays ---- */

/* cq_raycast's checks, made before any cast so a bad ray rejects the batch. */
static int check_ray(const cq_ray *r)
{
    if (!cq_v3_finite(r->origin) || !cq_v3_finite(r->direction) || !isfinite(r->max_distance))
        return CQ_ENOT_FINITE;
    if (fabs(cq_len(r->direction) - 1) > CQ_RAY_UNIT_TOL)
        return CQ_ENOT_UNIT;
    return r->max_distance < 0 ? CQ_ENEGATIVE : CQ_OK;
}

static int check_rays(const cq_world_ray *rays, int count, int *bad_ray)
{
    if (bad_ray)
        *bad_ray = -1;
    if (count < 0 || (count > 0 && !rays))
        return CQ_ERANGE;
    for (int i = 0; i < count; i++) {
        int rc = check_ray(&rays[i].ray);
        if (rc != CQ_OK) {
            if (bad_ray)
                *bad_ray = i;
            return rc;
        }
    }
    return CQ_OK;
}

typedef struct ray_ctx {
    const cq_world *w;
    cq_ray ray; /* direction normalised */
    uint32_t mask;
    /* closest: */
    cq_world_ray_hit best;
    int best_slot; /* -1: none yet */
    /* all: */
    cq_world_ray_hit *hits;
    int capacity, found;
    world_ticker *tick; /* the batch's deadline: a candidate cast is a unit */
} ray_ctx;

static bool cast_one(const ray_ctx *c, int slot, double tmax, cq_ray_hit *hit)
{
    const world_entry *e = &c->w->e[slot];
    if (!(e->body.layer & c->mask))
        return false;
    cq_ray ray = c->ray;
    ray.max_distance = tmax < ray.max_distance ? tmax : ray.max_distance;
    return cq_raycast(&e->body.shape, &e->body.pose, &ray, hit) == CQ_OK && hit->hit;
}

static double closest_visit(void *vctx, int slot, double tmax)
{
    ray_ctx *c = vctx;
    cq_ray_hit h;
    if (world_tick(c->tick))
        return -1; /* stops the walk */
    if (!cast_one(c, slot, tmax, &h))
        return tmax;
    if (c->best_slot < 0 || h.distance < c->best.hit.distance ||
        (h.distance == c->best.hit.distance && world_before(c->w, slot, c->best_slot))) {
        c->best = (cq_world_ray_hit){world_handle(c->w, slot), h};
        c->best_slot = slot;
    }
    return c->best.hit.distance;
}

static ray_ctx ray_start(const cq_world *w, const cq_world_ray *r, world_ticker *tick)
{
    ray_ctx c = {.w = w, .ray = r->ray, .mask = r->mask, .best_slot = -1, .tick = tick};
    c.ray.direction = cq_scale(r->ray.direction, 1 / cq_len(r->ray.direction));
    return c;
}

static const cq_deadline *ray_deadline(const cq_world_ray_options *opt) { return opt ? opt->deadline : NULL; }

int cq_world_raycast_opt(const cq_world *w, const cq_world_ray *rays, int count, const cq_world_ray_options *opt,
                         cq_world_ray_hit *out, int *bad_ray)
{
    int rc = check_rays(rays, count, bad_ray);
    if (rc != CQ_OK)
        return rc;
    world_ticker tick = world_ticker_start(ray_deadline(opt));
    for (int i = 0; i < count && !tick.expired; i++) {
        ray_ctx c = ray_start(w, &rays[i], &tick);
        cq__world_each_ray(w, c.ray.origin, c.ray.direction, c.ray.max_distance, closest_visit, &c);
        out[i] = c.best;
    }
    return tick.expired ? CQ_ECANCELED : CQ_OK;
}

int cq_world_raycast(const cq_world *w, const cq_world_ray *rays, int count, cq_world_ray_hit *out, int *bad_ray)
{
    return cq_world_raycast_opt(w, rays, count, NULL, out, bad_ray);
}

static double all_visit(void *vctx, int slot, double tmax)
{
    ray_ctx *c = vctx;
    cq_ray_hit h;
    if (world_tick(c->tick))
        return -1;
    if (cast_one(c, slot, tmax, &h) && c->found++ < c->capacity)
        c->hits[c->found - 1] = (cq_world_ray_hit){world_handle(c->w, slot), h};
    return tmax;
}

static bool hit_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    const cq_world_ray_hit *p = x, *q = y;
    return p->hit.distance < q->hit.distance ||
           (p->hit.distance == q->hit.distance && world_before(w, (int)p->id.index, (int)q->id.index));
}

int cq_world_raycast_all(const cq_world *w, const cq_world_ray *rays, int count, cq_world_ray_hit *hits,
                         int capacity, int *first, int *bad_ray)
{
    return cq_world_raycast_all_opt(w, rays, count, NULL, hits, capacity, first, bad_ray);
}

int cq_world_raycast_all_opt(const cq_world *w, const cq_world_ray *rays, int count, const cq_world_ray_options *opt,
                             cq_world_ray_hit *hits, int capacity, int *first, int *bad_ray)
{
    int rc = check_rays(rays, count, bad_ray);
    if (rc != CQ_OK)
        return rc;
    world_ticker tick = world_ticker_start(ray_deadline(opt));
    /* Many rays through many shapes can pass INT_MAX hits: the count runs
     * in 64 bits and what is reported saturates there. */
    long long total = 0;
    int i = 0;
    for (; i < count && !tick.expired; i++) {
        first[i] = total < INT_MAX ? (int)total : INT_MAX;
        ray_ctx c = ray_start(w, &rays[i], &tick);
        c.capacity = capacity > total ? capacity - (int)total : 0;
        c.hits = c.capacity > 0 ? hits + total : NULL;
        cq__world_each_ray(w, c.ray.origin, c.ray.direction, c.ray.max_distance, all_visit, &c);
        if (c.found <= c.capacity)
            cq__world_heapsort(c.hits, (size_t)c.found, sizeof *c.hits, hit_less, w);
        total += c.found;
    }
    for (; i <= count; i++)
        first[i] = total < INT_MAX ? (int)total : INT_MAX;
    if (tick.expired)
        return CQ_ECANCELED;
    return total > capacity ? CQ_ERANGE : CQ_OK;
}

/* ---- shape queries ---- */

static int check_query(const cq_world_shape_query *q, cq_shape *shape)
{
    if (!q->shape)
        return CQ_ERANGE;
    *shape = *q->shape;
    int rc = cq_shape_validate(shape).status;
    return rc != CQ_OK ? rc : cq__world_check_pose(&q->pose);
}

typedef struct sweep_ctx {
    const cq_world *w;
    const cq_world_shape_query *q;
    const cq_shape *shape;
    cq_sweep_options opt;
    cq_world_sweep_hit best;
    int best_slot; /* -1: none yet */
    world_ticker tick; /* a candidate swept is a unit */
} sweep_ctx;

static double sweep_visit(void *vctx, int slot, double tmax)
{
    sweep_ctx *c = vctx;
    const world_entry *e = &c->w->e[slot];
    if (world_tick_by(&c->tick, world_units(c->shape->type, e->body.shape.type)))
        return -1;
    cq_sweep_hit h;
    c->opt.tag_b = cq_world_handle_pack(world_handle(c->w, slot));
    if (!(e->body.layer & c->q->mask) ||
        cq_sweep(c->shape, &c->q->pose, c->q->translation, &e->body.shape, &e->body.pose, &c->opt, &h) != CQ_OK ||
        !h.hit)
        return tmax;
    if (c->best_slot < 0 || h.time < c->best.hit.time ||
        (h.time == c->best.hit.time && world_before(c->w, slot, c->best_slot))) {
        c->best = (cq_world_sweep_hit){world_handle(c->w, slot), h};
        c->best_slot = slot;
    }
    return c->best.hit.time;
}

int cq_world_sweep(const cq_world *w, const cq_world_shape_query *q, cq_world_sweep_hit *out)
{
    cq_shape shape;
    int rc = check_query(q, &shape);
    if (rc != CQ_OK)
        return rc;
    if (world_static_type(shape.type))
        return CQ_EUNSUPPORTED;
    if (!cq_v3_finite(q->translation))
        return CQ_ENOT_FINITE;
    sweep_ctx c = {.w = w, .q = q, .shape = &shape, .best_slot = -1, .tick = world_ticker_start(q->deadline)};
    /* The query shape has no handle: its tag is 0. */
    c.opt = (cq_sweep_options){.max_iterations = w->settings.sweep_max_iterations, .counters = q->counters, .log = q->log};
    c.best.hit.time = 1;
    cq_aabb box = cq__shape_aabb(&shape, &q->pose);
    box = cq_aabb_fatten(box, world_sweep_margin(&box));
    cq__world_each_sweep(w, &box, q->translation, 1.0, sweep_visit, &c);
    if (c.tick.expired) {
        *out = (cq_world_sweep_hit){0};
        return CQ_ECANCELED;
    }
    *out = c.best;
    return CQ_OK;
}

typedef struct overlap_ctx {
    const cq_world *w;
    uint32_t mask;
    cq_pair_query pq;
    cq_world_handle *out;
    int capacity, found;
    world_ticker tick; /* a candidate tested is a unit */
} overlap_ctx;

static bool overlap_visit(void *vctx, int slot)
{
    overlap_ctx *c = vctx;
    const world_entry *e = &c->w->e[slot];
    if (world_tick_by(&c->tick, world_units(c->pq.a->type, e->body.shape.type)))
        return false; /* stops the walk */
    if (!(e->body.layer & c->mask))
        return true;
    cq_pair_query pq = c->pq;
    pq.b = &e->body.shape;
    pq.xb = e->body.pose;
    cq_contact con;
    if (cq_collide(&pq, &con) == CQ_OK && con.overlap && c->found++ < c->capacity)
        c->out[c->found - 1] = world_handle(c->w, slot);
    return true;
}

static bool handle_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    return world_before(w, (int)((const cq_world_handle *)x)->index, (int)((const cq_world_handle *)y)->index);
}

int cq_world_overlap(const cq_world *w, const cq_world_shape_query *q, cq_world_handle *out, int capacity,
                     int *count)
{
    *count = 0;
    cq_shape shape;
    int rc = check_query(q, &shape);
    if (rc != CQ_OK)
        return rc;
    overlap_ctx c = {.w = w, .mask = q->mask, .out = out, .capacity = capacity,
                     .tick = world_ticker_start(q->deadline)};
    /* Only the verdicts are reported: no distances, no manifolds. */
    c.pq = (cq_pair_query){.a = &shape, .xa = q->pose, .counters = q->counters, .skip_distance = true,
                           .skip_manifold = true,
                           .gjk_max_iterations = w->settings.gjk_max_iterations,
                           .epa_max_iterations = w->settings.epa_max_iterations};
    cq_aabb box = cq__shape_aabb(&shape, &q->pose);
    cq__world_each_box(w, &box, overlap_visit, &c);
    *count = c.found;
    if (c.tick.expired)
        return CQ_ECANCELED;
    if (c.found > capacity)
        return CQ_ERANGE;
    cq__world_heapsort(out, (size_t)c.found, sizeof *out, handle_less, w);
    return CQ_OK;
}
