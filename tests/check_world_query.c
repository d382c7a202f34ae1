/* World queries and CCD. Oracles: brute force over every shape of the world
 * (cq_raycast, cq_sweep, cq_collide per shape, ties to the smaller id), the
 * analytic time of impact of a sphere fired at a thin wall, and the
 * single-threaded answers for concurrent readers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "world_oracle.h"

Suite *world_query_suite(void);

static cq_world *make_world(double skin, int capacity)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = capacity}, &w), CQ_OK);
    return w;
}

static cq_vec3 rand_unit(tu_rng *rng)
{
    cq_vec3 d = cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1));
    return cq_scale(d, 1 / cq_len(d));
}

/* A random world of n shapes (all types, two planes) on layers 1, 2, 4. */
static cq_world *random_world(tu_rng *rng, int n, double extent, char (*ids)[8])
{
    cq_world *w = make_world(0.02, n);
    cq_world_op *ops = malloc(sizeof *ops * (size_t)n);
    for (int k = 0; k < n; k++) {
        snprintf(ids[k], 8, "q%03d", (k * 13) % n);
        bool plane = k < 2;
        cq_shape s = wo_random_shape(rng, plane ? CQ_PLANE : wo_random_type(rng, true), 0.7);
        cq_xform pose = plane ? wo_at(0, -extent, 0) : tu_pose(rng, extent);
        ops[k] = wo_upsert(ids[k], s, pose, cq_v3(0, 0, 0), 1u << (k % 3), 0xffffffffu);
    }
    wo_apply(w, ops, n);
    free(ops);
    return w;
}

/* ---- rays ---- */

static cq_world_ray random_ray(tu_rng *rng, double extent)
{
    cq_world_ray r = {{cq_v3(tu_uniform(rng, -extent, extent), tu_uniform(rng, -extent, extent),
                             tu_uniform(rng, -extent, extent)),
                       rand_unit(rng), tu_uniform(rng, 0, 3 * extent)},
                      (uint32_t)tu_uniform(rng, 1, 8)};
    return r;
}

/* Every hit of the ray, sorted by distance then id; returns the count. */
static int brute_hits(const wo_item *items, int n, const cq_world_ray *r, cq_world_ray_hit *out)
{
    int found = 0;
    for (int k = 0; k < n; k++) {
        cq_ray_hit h;
        if (!(items[k].body.layer & r->mask))
            continue;
        ck_assert_int_eq(cq_raycast(&items[k].body.shape, &items[k].body.pose, &r->ray, &h), CQ_OK);
        if (!h.hit)
            continue;
        int at = found++;
        while (at > 0 && out[at - 1].hit.distance > h.distance) { /* items are in id order: stable */
            out[at] = out[at - 1];
            at--;
        }
        out[at] = (cq_world_ray_hit){items[k].h, h};
    }
    return found;
}

static void check_rays(cq_world *w, tu_rng *rng, int nrays, double extent)
{
    wo_item *items;
    int n = wo_items(w, &items);
    cq_world_ray *rays = malloc(sizeof *rays * (size_t)nrays);
    cq_world_ray_hit *closest = malloc(sizeof *closest * (size_t)nrays);
    int *first = malloc(sizeof *first * (size_t)(nrays + 1));
    for (int i = 0; i < nrays; i++)
        rays[i] = random_ray(rng, extent);
    int bad = -2;
    ck_assert_int_eq(cq_world_raycast(w, rays, nrays, closest, &bad), CQ_OK);
    ck_assert_int_eq(bad, -1);
    int total = 0;
    ck_assert_int_eq(cq_world_raycast_all(w, rays, nrays, NULL, 0, first, &bad), nrays ? CQ_ERANGE : CQ_OK);
    total = first[nrays];
    cq_world_ray_hit *all = malloc(sizeof *all * (size_t)(total + 1)), want[512];
    ck_assert_int_eq(cq_world_raycast_all(w, rays, nrays, all, total, first, &bad), CQ_OK);
    int hits = 0;
    for (int i = 0; i < nrays; i++) {
        int nw = brute_hits(items, n, &rays[i], want);
        ck_assert_int_eq(first[i + 1] - first[i], nw);
        for (int k = 0; k < nw; k++) {
            const cq_world_ray_hit *g = &all[first[i] + k];
            ck_assert_int_eq(wo_find(items, n, g->id), wo_find(items, n, want[k].id));
            ck_assert_double_eq_tol(g->hit.distance, want[k].hit.distance, 1e-12);
            tu_assert_vec_eq_tol(g->hit.normal, want[k].hit.normal, 1e-9);
        }
        ck_assert(closest[i].hit.hit == (nw > 0));
        if (nw > 0) {
            ck_assert_int_eq(wo_find(items, n, closest[i].id), wo_find(items, n, want[0].id));
            ck_assert_double_eq_tol(closest[i].hit.distance, want[0].hit.distance, 1e-12);
            hits++;
        }
    }
    ck_assert_int_gt(hits, nrays / 10);
    free(all);
    free(first);
    free(closest);
    free(rays);
    free(items);
}

START_TEST(test_raycast_vs_brute)
{
    tu_rng rng = {31337};
    char ids[200][8];
    cq_world *w = random_world(&rng, 200, 6, ids);
    check_rays(w, &rng, 400, 6);
    /* Frames of motion: the tree is refit (and rebuilt once degraded) by a
     * refresh, never per ray; frames without one are answered by a scan,
     * exactly as well. */
    cq_world_op ops[200];
    for (int frame = 0; frame < 20; frame++) {
        for (int k = 2; k < 200; k++)
            ops[k - 2] = wo_move(ids[k], tu_pose(&rng, frame < 10 ? 6 : 12), cq_v3(0, 0, 0));
        wo_apply(w, ops, 198);
        ck_assert(cq_world_get_stats(w).bvh_stale);
        if (frame % 3 != 2)
            ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
        check_rays(w, &rng, 60, 6);
    }
    cq_world_stats st = cq_world_get_stats(w);
    ck_assert_int_gt((int)st.bvh_refits, 0);
    ck_assert_int_gt((int)st.bvh_builds, 1);
    cq_world_ray bad_rays[2] = {random_ray(&rng, 1), random_ray(&rng, 1)};
    bad_rays[1].ray.direction = cq_v3(1, 1, 0);
    cq_world_ray_hit out[2];
    int bad = 0;
    ck_assert_int_eq(cq_world_raycast(w, bad_rays, 2, out, &bad), CQ_ENOT_UNIT);
    ck_assert_int_eq(bad, 1);
    cq_world_destroy(w);
}
END_TEST

/* ---- sweeps and overlaps ---- */

static cq_shape query_shape(tu_rng *rng, cq_shape_type t, cq_hull **own)
{
    cq_shape s = wo_random_shape(rng, t, 0.6);
    *own = t == CQ_CONVEX ? (cq_hull *)s.convex.hull : NULL;
    return s;
}

START_TEST(test_sweep_vs_brute)
{
    tu_rng rng = {2718};
    char ids[150][8];
    cq_world *w = random_world(&rng, 150, 5, ids);
    wo_item *items;
    int n = wo_items(w, &items), hits = 0;
    for (int i = 0; i < 300; i++) {
        cq_hull *own;
        cq_shape s = query_shape(&rng, wo_random_type(&rng, true), &own);
        cq_world_shape_query q = {.shape = &s, .pose = tu_pose(&rng, 6),
                                  .translation = cq_scale(rand_unit(&rng), tu_uniform(&rng, 0, 8)),
                                  .mask = (uint32_t)tu_uniform(&rng, 1, 8)};
        cq_world_sweep_hit got;
        ck_assert_int_eq(cq_world_sweep(w, &q, &got), CQ_OK);
        int best = -1;
        cq_sweep_hit bh = {.time = 1};
        for (int k = 0; k < n; k++) {
            cq_sweep_hit h;
            if (!(items[k].body.layer & q.mask))
                continue;
            ck_assert_int_eq(cq_sweep(&s, &q.pose, q.translation, &items[k].body.shape, &items[k].body.pose, NULL, &h),
                             CQ_OK);
            if (h.hit && (best < 0 || h.time < bh.time)) {
                best = k;
                bh = h;
            }
        }
        ck_assert(got.hit.hit == (best >= 0));
        if (best >= 0) {
            ck_assert_int_eq(wo_find(items, n, got.id), best);
            ck_assert_double_eq_tol(got.hit.time, bh.time, 1e-12);
            ck_assert(got.hit.initially_overlapping == bh.initially_overlapping);
            hits++;
        }
        cq_hull_free(own);
    }
    ck_assert_int_gt(hits, 50);
    cq_shape pl = wo_plane(cq_v3(0, 1, 0), 0);
    cq_world_sweep_hit got;
    ck_assert_int_eq(cq_world_sweep(w, &(cq_world_shape_query){.shape = &pl, .pose = wo_at(0, 0, 0), .mask = 1}, &got),
                     CQ_EUNSUPPORTED);
    free(items);
    cq_world_destroy(w);
}
END_TEST

START_TEST(test_overlap_vs_brute)
{
    tu_rng rng = {1618};
    char ids[150][8];
    cq_world *w = random_world(&rng, 150, 5, ids);
    wo_item *items;
    int n = wo_items(w, &items), nonempty = 0;
    cq_world_handle got[200];
    for (int i = 0; i < 300; i++) {
        cq_hull *own;
        cq_shape_type t = i % 25 == 0 ? CQ_PLANE : wo_random_type(&rng, true);
        cq_shape s = query_shape(&rng, t, &own);
        cq_world_shape_query q = {.shape = &s, .pose = t == CQ_PLANE ? wo_at(0, 0, 0) : tu_pose(&rng, 6),
                                  .mask = (uint32_t)tu_uniform(&rng, 1, 8)};
        int ng = -1, nw = 0;
        ck_assert_int_eq(cq_world_overlap(w, &q, got, 200, &ng), CQ_OK);
        for (int k = 0; k < n; k++) {
            cq_contact c;
            cq_pair_query pq = {.a = &s, .xa = q.pose, .b = &items[k].body.shape, .xb = items[k].body.pose};
            if (!(items[k].body.layer & q.mask) || cq_collide(&pq, &c) != CQ_OK || !c.overlap)
                continue;
            ck_assert(nw < ng);
            ck_assert_int_eq(wo_find(items, n, got[nw]), k);
            nw++;
        }
        ck_assert_int_eq(ng, nw);
        nonempty += nw > 0;
        if (nw > 1) {
            int need = -1;
            ck_assert_int_eq(cq_world_overlap(w, &q, got, 1, &need), CQ_ERANGE);
            ck_assert_int_eq(need, nw);
        }
        cq_hull_free(own);
    }
    ck_assert_int_gt(nonempty, 50);
    free(items);
    cq_world_destroy(w);
}
END_TEST

/* A BVH build that runs out of memory leaves the queries exact (every shape
 * is scanned) until a refresh can rebuild it. */
START_TEST(test_stale_bvh)
{
    tu_rng rng = {99};
    wo_alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){wo_probe_alloc, wo_probe_free, &probe});
    cq_world *w = make_world(0, 256);
    char ids[100][8];
    cq_world_op ops[100];
    for (int k = 0; k < 100; k++) {
        snprintf(ids[k], sizeof ids[k], "z%02d", k);
        ops[k] = wo_upsert(ids[k], wo_sphere(1), wo_at(2.5 * (k % 5) - 5, 2.5 * (k / 5 % 5) - 5, 2.5 * (k / 25) - 4),
                           cq_v3(0, 0, 0), 1, 7);
    }
    wo_apply(w, ops, 100);
    probe = (wo_alloc_probe){0, 1};
    ck_assert_int_eq(cq_world_refresh(w), CQ_ENO_MEMORY);
    probe = (wo_alloc_probe){0, 0};
    ck_assert(cq_world_get_stats(w).bvh_stale);
    check_rays(w, &rng, 200, 6);
    ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
    ck_assert(!cq_world_get_stats(w).bvh_stale);
    check_rays(w, &rng, 200, 6);
    cq_world_destroy(w);
    cq_set_allocator(NULL);
}
END_TEST

/* ---- CCD ---- */

static cq_world_contacts_out ccd_run(cq_world *w, double dt, cq_world_toi *toi, int cap, const char *const *ids,
                                     int nids)
{
    static cq_world_contact pairs[256];
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = 256, .toi = toi, .toi_capacity = cap};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = dt, .ids = ids, .id_count = nids}, &out),
                     CQ_OK);
    return out;
}

START_TEST(test_ccd_thin_wall)
{
    cq_world *w = make_world(0, 8);
    cq_world_op ops[] = {
        wo_upsert("bullet", wo_sphere(0.1), wo_at(-2, 0, 0), cq_v3(300, 0, 0), 1, 1),
        wo_upsert("wall", wo_box(0.05, 2, 2), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
    };
    wo_apply(w, ops, 2);
    cq_world_toi toi[4];
    cq_world_contacts_out out = ccd_run(w, 1.0 / 60, toi, 4, NULL, 0);
    /* 5 units in one step through a 0.1 wall: no discrete contact at either end. */
    ck_assert_int_eq(out.pair_count, 0);
    ck_assert_int_eq(out.swept, 1);
    ck_assert_int_eq(out.toi_count, 1);
    ck_assert_str_eq(cq_world_id(w, toi[0].id), "bullet");
    ck_assert_str_eq(cq_world_id(w, toi[0].other), "wall");
    ck_assert_double_eq_tol(toi[0].time, (2 - 0.15) / 5, 1e-6); /* touches when its centre is at -0.15 */
    tu_assert_vec_eq_tol(toi[0].normal, cq_v3(1, 0, 0), 1e-6);
    tu_assert_vec_eq_tol(toi[0].point, cq_v3(-0.05, 0, 0), 1e-5);
    /* Without dt there is no CCD; a filter without either id sees nothing. */
    out = ccd_run(w, 0, toi, 4, NULL, 0);
    ck_assert_int_eq(out.toi_count + out.swept, 0);
    const char *other[] = {"nobody"};
    cq_world_op extra = wo_upsert("nobody", wo_sphere(1), wo_at(50, 0, 0), cq_v3(0, 0, 0), 1, 1);
    wo_apply(w, &extra, 1);
    out = ccd_run(w, 1.0 / 60, toi, 4, other, 1);
    ck_assert_int_eq(out.toi_count, 0);
    const char *mine[] = {"wall"};
    out = ccd_run(w, 1.0 / 60, toi, 4, mine, 1);
    ck_assert_int_eq(out.toi_count, 1);
    static cq_world_contact pairs[4];
    out = (cq_world_contacts_out){.pairs = pairs, .pair_capacity = 4, .toi = toi, .toi_capacity = 0};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = 1.0 / 60}, &out), CQ_ERANGE);
    ck_assert_int_eq(out.toi_count, 1); /* counted, not written */
    cq_world_destroy(w);
}
END_TEST

/* A target that moves too (slowly): the impact follows the relative motion. */
START_TEST(test_ccd_moving_target)
{
    cq_world *w = make_world(0, 8);
    cq_world_op ops[] = {
        wo_upsert("a", wo_sphere(0.1), wo_at(-2, 0, 0), cq_v3(300, 0, 0), 1, 1),
        wo_upsert("b", wo_sphere(1), wo_at(3, 0, 0), cq_v3(-30, 0, 0), 1, 1), /* 0.5 per step < radius 1 */
    };
    wo_apply(w, ops, 2);
    cq_world_toi toi[4];
    cq_world_contacts_out out = ccd_run(w, 1.0 / 60, toi, 4, NULL, 0);
    ck_assert_int_eq(out.swept, 1);
    ck_assert_int_eq(out.toi_count, 1);
    double t = 3.9 / 5.5; /* gap 5 - 1.1 closed at 5 + 0.5 per step */
    ck_assert_double_eq_tol(toi[0].time, t, 1e-6);
    tu_assert_vec_eq_tol(toi[0].point, cq_v3(2 - 0.5 * t, 0, 0), 1e-5);
    tu_assert_vec_eq_tol(toi[0].normal, cq_v3(1, 0, 0), 1e-6);
    cq_world_destroy(w);
}
END_TEST

/* Slow shapes stay discrete, even when they would reach something within dt. */
START_TEST(test_ccd_slow_not_swept)
{
    cq_world *w = make_world(0, 8);
    cq_world_op ops[] = {
        wo_upsert("slow", wo_sphere(0.5), wo_at(-0.9, 0, 0), cq_v3(25, 0, 0), 1, 1), /* 0.417 < 0.5 */
        wo_upsert("wall", wo_box(0.05, 2, 2), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("floor", wo_plane(cq_v3(0, 1, 0), -5), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("box", wo_box(0.3, 1, 1), wo_at(0, 3, 0), cq_v3(0, 17.5, 0), 1, 1), /* 0.29 per step < 0.3 */
    };
    wo_apply(w, ops, 4);
    cq_world_toi toi[4];
    cq_world_contacts_out out = ccd_run(w, 1.0 / 60, toi, 4, NULL, 0);
    ck_assert_int_eq(out.swept, 0);
    ck_assert_int_eq(out.toi_count, 0);
    /* A little faster and the box is swept (it hits nothing). */
    cq_world_op faster = wo_move("box", wo_at(0, 3, 0), cq_v3(0, 19, 0));
    wo_apply(w, &faster, 1);
    out = ccd_run(w, 1.0 / 60, toi, 4, NULL, 0);
    ck_assert_int_eq(out.swept, 1);
    ck_assert_int_eq(out.toi_count, 0);
    cq_world_destroy(w);
}
END_TEST

/* Random fast and slow spheres, boxes and capsules: every swept shape's
 * first impact against brute force over every other shape. */
START_TEST(test_ccd_vs_brute)
{
    tu_rng rng = {8080};
    cq_world *w = make_world(0.01, 64);
    int n = 80;
    char ids[80][8];
    cq_world_op ops[80];
    const double dt = 0.1;
    for (int k = 0; k < n; k++) {
        snprintf(ids[k], sizeof ids[k], "v%02d", k);
        int kind = k % 3;
        cq_shape s = kind == 0 ? wo_sphere(tu_uniform(&rng, 0.1, 0.5))
                   : kind == 1 ? wo_box(tu_uniform(&rng, 0.1, 0.6), tu_uniform(&rng, 0.1, 0.6), tu_uniform(&rng, 0.1, 0.6))
                               : wo_capsule(tu_uniform(&rng, 0.1, 0.4), tu_uniform(&rng, 0, 0.5));
        double speed = k % 4 == 0 ? tu_uniform(&rng, 20, 80) : tu_uniform(&rng, 0, 2);
        ops[k] = wo_upsert(ids[k], s, tu_pose(&rng, 6), cq_scale(rand_unit(&rng), speed), 1, 1);
    }
    wo_apply(w, ops, n);
    cq_world_toi toi[80];
    /* Contacts without dt leave the ray tree behind; CCD brings it up to
     * date first, as it finds its candidates there. */
    ccd_run(w, 0, toi, 80, NULL, 0);
    ck_assert(cq_world_get_stats(w).bvh_stale);
    cq_world_contacts_out out = ccd_run(w, dt, toi, 80, NULL, 0);
    ck_assert(!cq_world_get_stats(w).bvh_stale);
    wo_item *items;
    int ni = wo_items(w, &items), found = 0, swept = 0;
    for (int i = 0; i < ni; i++) {
        const cq_world_body *a = &items[i].body;
        double half = a->shape.type == CQ_SPHERE ? a->shape.sphere.radius
                    : a->shape.type == CQ_CAPSULE ? a->shape.capsule.radius
                    : fmin(a->shape.box.half.x, fmin(a->shape.box.half.y, a->shape.box.half.z));
        if (!(cq_len(a->velocity) * dt > half))
            continue;
        swept++;
        int best = -1;
        cq_sweep_hit bh = {.time = 1};
        for (int j = 0; j < ni; j++) {
            if (j == i)
                continue;
            cq_vec3 rel = cq_scale(cq_sub(a->velocity, items[j].body.velocity), dt);
            cq_sweep_hit h;
            ck_assert_int_eq(cq_sweep(&a->shape, &a->pose, rel, &items[j].body.shape, &items[j].body.pose, NULL, &h),
                             CQ_OK);
            if (h.hit && !h.initially_overlapping && (best < 0 || h.time < bh.time)) {
                best = j;
                bh = h;
            }
        }
        if (best < 0)
            continue;
        ck_assert(found < out.toi_count);
        ck_assert_int_eq(wo_find(items, ni, toi[found].id), i);
        ck_assert_int_eq(wo_find(items, ni, toi[found].other), best);
        ck_assert_double_eq_tol(toi[found].time, bh.time, 1e-12);
        tu_assert_vec_eq_tol(toi[found].point, cq_mad(bh.point, items[best].body.velocity, dt * bh.time), 1e-12);
        found++;
    }
    ck_assert_int_eq(found, out.toi_count);
    ck_assert_int_eq(swept, out.swept);
    ck_assert_int_gt(found, 3);
    free(items);
    cq_world_destroy(w);
}
END_TEST

/* ---- concurrent readers ---- */

typedef struct reader {
    const cq_world *w;
    const cq_world_ray *rays;
    int n;
    cq_world_ray_hit *out;
} reader;

static void *read_rays(void *arg)
{
    reader *r = arg;
    for (int pass = 0; pass < 20; pass++)
        cq_world_raycast(r->w, r->rays, r->n, r->out, NULL);
    return NULL;
}

START_TEST(test_concurrent_queries)
{
    tu_rng rng = {777};
    char ids[300][8];
    cq_world *w = random_world(&rng, 300, 8, ids);
    enum { RAYS = 500, THREADS = 4 };
    static cq_world_ray rays[RAYS];
    static cq_world_ray_hit want[RAYS], got[THREADS][RAYS];
    for (int i = 0; i < RAYS; i++)
        rays[i] = random_ray(&rng, 8);
    ck_assert_int_eq(cq_world_raycast(w, rays, RAYS, want, NULL), CQ_OK);
    pthread_t t[THREADS];
    reader r[THREADS];
    for (int k = 0; k < THREADS; k++) {
        r[k] = (reader){w, rays, RAYS, got[k]};
        ck_assert_int_eq(pthread_create(&t[k], NULL, read_rays, &r[k]), 0);
    }
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        for (int i = 0; i < RAYS; i++) {
            const cq_world_ray_hit *g = &got[k][i], *e = &want[i];
            ck_assert(g->id.index == e->id.index && g->id.generation == e->id.generation && g->hit.hit == e->hit.hit);
            ck_assert(g->hit.distance == e->hit.distance && g->hit.normal.x == e->hit.normal.x &&
                      g->hit.point.y == e->hit.point.y);
        }
    }
    cq_world_destroy(w);
}
END_TEST

Suite *world_query_suite(void)
{
    Suite *s = suite_create("world_query");
    TCase *q = tcase_create("queries");
    tcase_set_timeout(q, 300);
    tcase_add_test(q, test_raycast_vs_brute);
    tcase_add_test(q, test_sweep_vs_brute);
    tcase_add_test(q, test_overlap_vs_brute);
    tcase_add_test(q, test_stale_bvh);
    tcase_add_test(q, test_concurrent_queries);
    suite_add_tcase(s, q);
    TCase *c = tcase_create("ccd");
    tcase_add_test(c, test_ccd_thin_wall);
    tcase_add_test(c, test_ccd_moving_target);
    tcase_add_test(c, test_ccd_slow_not_swept);
    tcase_add_test(c, test_ccd_vs_brute);
    suite_add_tcase(s, c);
    return s;
}
