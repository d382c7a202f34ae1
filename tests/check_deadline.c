/* The caller's deadline (cq/deadline.h) in the long world queries. A hook
 * that says "expired" at its K-th call stops each query with CQ_ECANCELED;
 * afterwards the world answers as a twin that never saw the canceled
 * queries does (contacts: byte for byte, frame after frame, so the pair
 * cache was not touched), and as brute force does (every shape tested
 * with cq_collide, cq_raycast, cq_sweep); a hook that never expires
 * changes no answer and is asked once per CQ_DEADLINE_STRIDE units. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/mesh.h"
#include "cq/sweep.h"
#include "world_oracle.h"

Suite *deadline_suite(void);

/* Expires at the expire_at-th call (0: never); counts the calls. */
typedef struct probe {
    int calls, expire_at;
} probe;

static bool probe_expired(void *ctx)
{
    probe *p = ctx;
    p->calls++;
    return p->expire_at > 0 && p->calls >= p->expire_at;
}

static cq_deadline deadline_of(probe *p) { return (cq_deadline){probe_expired, p}; }

#define PILE 300

static char pile_ids[PILE][8];

/* A pile of axis-aligned cubes, and spheres, boxes and capsules, in a
 * small cube (thousands of pairs), every other one fast enough for CCD at
 * dt 1. Cube pairs are where the pair cache shows: of two face axes whose
 * depths are within the hysteresis factor, the previous one is kept. */
static void pile_ops(tu_rng *rng, cq_world_op *ops)
{
    for (int k = 0; k < PILE; k++) {
        snprintf(pile_ids[k], sizeof pile_ids[k], "s%03d", k);
        double h = tu_uniform(rng, 0.2, 0.6);
        cq_shape s = k % 3 ? wo_box(h, h, h) : wo_random_shape(rng, wo_random_type(rng, false), 0.6);
        cq_xform at = k % 3 ? wo_at(tu_uniform(rng, -1.5, 1.5), tu_uniform(rng, -1.5, 1.5), tu_uniform(rng, -1.5, 1.5))
                            : tu_pose(rng, 1.5);
        cq_vec3 v = k % 2 ? cq_v3(tu_uniform(rng, -3, 3), tu_uniform(rng, -3, 3), tu_uniform(rng, -3, 3))
                          : cq_v3(0, 0, 0);
        ops[k] = wo_upsert(pile_ids[k], s, at, v, 1, ~0u);
    }
}

/* Moves every shape in both worlds: a little (rng), or swapping x and y
 * (swap), which mirrors the cube pairs, so their best face axes swap too. */
static void move_all(cq_world *a, cq_world *b, tu_rng *rng, bool swap)
{
    cq_world_op ops[PILE];
    for (int k = 0; k < PILE; k++) {
        cq_world_body body;
        ck_assert_int_eq(cq_world_get(a, wo_handle(a, pile_ids[k]), &body), CQ_OK);
        cq_vec3 p = body.pose.p;
        body.pose.p = swap ? cq_v3(p.y, p.x, p.z)
                           : cq_add(p, cq_v3(tu_uniform(rng, -.05, .05), tu_uniform(rng, -.05, .05), 0));
        ops[k] = wo_move(pile_ids[k], body.pose, body.velocity);
    }
    wo_apply(a, ops, PILE);
    wo_apply(b, ops, PILE);
}

typedef struct answer {
    int rc, pairs, toi;
    cq_world_contact pair[PILE * PILE / 2];
    cq_world_toi first[PILE];
} answer;

static void contacts(cq_world *w, double dt, const cq_deadline *d, answer *a)
{
    cq_world_contacts_query q = {.dt = dt, .deadline = d};
    cq_world_contacts_out out = {.pairs = a->pair, .pair_capacity = PILE * PILE / 2, .toi = a->first,
                                 .toi_capacity = PILE};
    memset(a, 0, sizeof *a);
    a->rc = cq_world_contacts(w, &q, &out);
    a->pairs = out.pair_count;
    a->toi = out.toi_count;
}

static void assert_same(const answer *x, const answer *y)
{
    ck_assert_int_eq(x->rc, y->rc);
    ck_assert_int_eq(x->pairs, y->pairs);
    ck_assert_int_eq(x->toi, y->toi);
    ck_assert(memcmp(x->pair, y->pair, (size_t)x->pairs * sizeof x->pair[0]) == 0);
    ck_assert(memcmp(x->first, y->first, (size_t)x->toi * sizeof x->first[0]) == 0);
}

/* Oracle: the touching pairs by brute force (every box pair, cq_collide
 * with the world's skin and no cache: a world's first frame has none). */
static void assert_brute_touching(const cq_world *w, const answer *a, double skin)
{
    wo_item *items;
    int n = wo_items(w, &items);
    int(*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs), touching = 0;
    for (int k = 0; k < np; k++) {
        const wo_item *p = &items[pairs[k][0]], *q = &items[pairs[k][1]];
        cq_pair_query pq = {.a = &p->body.shape, .xa = p->body.pose, .b = &q->body.shape, .xb = q->body.pose,
                            .skin = skin, .skip_distance = true};
        cq_contact c;
        if (cq_collide(&pq, &c) != CQ_OK || !c.overlap)
            continue;
        ck_assert_int_lt(touching, a->pairs);
        ck_assert(a->pair[touching].a.index == p->h.index && a->pair[touching].b.index == q->h.index);
        touching++;
    }
    ck_assert_int_eq(touching, a->pairs);
    free(pairs);
    free(items);
}

static cq_world *pile_world(const cq_world_op *ops, double skin)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin}, &w), CQ_OK);
    wo_apply(w, ops, PILE);
    return w;
}

/* Frames of contacts on a world and its twin, both moved alike; between
 * two frames both are mirrored (x and y swapped) and back, and the world
 * alone runs queries on the mirror canceled after K checks (K covering
 * the narrow phase and CCD): each is CQ_ECANCELED, and the world's next
 * answer is its twin's, byte for byte. Had a canceled query left the
 * mirror's face axes in the pair cache, hysteresis would keep them. */
START_TEST(test_contacts_canceled_leave_the_cache)
{
    tu_rng rng = {0xdead11e + (uint64_t)_i};
    cq_world_op ops[PILE];
    pile_ops(&rng, ops);
    double skin = 0.05;
    cq_world *w = pile_world(ops, skin), *twin = pile_world(ops, skin);
    static answer got, want;
    contacts(twin, 0, NULL, &want);
    assert_brute_touching(twin, &want, skin);
    probe count = {0};
    cq_deadline never = deadline_of(&count);
    contacts(w, 0, &never, &got); /* a hook that never expires changes nothing */
    assert_same(&got, &want);
    ck_assert_int_gt(count.calls, 0);
    for (int frame = 0; frame < 4; frame++) {
        double dt = frame % 2 ? 1 : 0;
        tu_rng moves = {0x5eed + (uint64_t)frame};
        move_all(w, twin, &moves, false);
        probe all = {0};
        cq_deadline d = deadline_of(&all);
        contacts(twin, dt, NULL, &want);
        contacts(w, dt, &d, &got); /* counts the checks a whole query makes, and answers */
        assert_same(&got, &want);
        ck_assert_int_ge(all.calls, 2);
        move_all(w, twin, &moves, true);
        for (int k = 1; k <= all.calls; k += 1 + all.calls / 7) {
            probe p = {.expire_at = k};
            d = deadline_of(&p);
            contacts(w, dt, &d, &got);
            ck_assert_int_eq(got.rc, CQ_ECANCELED);
            ck_assert_int_eq(p.calls, k); /* never asked again once it said stop */
        }
        move_all(w, twin, &moves, true);
        contacts(twin, dt, NULL, &want);
        contacts(w, dt, NULL, &got);
        assert_same(&got, &want);
    }
    cq_world_destroy(w);
    cq_world_destroy(twin);
}
END_TEST

#define ROW 800

/* ROW unit boxes along x, 3 apart, every fifth on another layer. */
static cq_world *row_world(void)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.capacity = ROW}, &w), CQ_OK);
    static char ids[ROW][8];
    cq_world_op ops[ROW];
    for (int k = 0; k < ROW; k++) {
        snprintf(ids[k], sizeof ids[k], "b%03d", k);
        ops[k] = wo_upsert(ids[k], wo_box(0.5, 0.5, 0.5), wo_at(3.0 * k, 0, 0), cq_v3(0, 0, 0), k % 5 ? 1 : 2, ~0u);
    }
    wo_apply(w, ops, ROW);
    ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
    return w;
}

/* Rays along the row from before its start (each hits every box of its
 * layer), and rays across it (each hits one box or none). */
static void row_rays(cq_world_ray *rays, int n)
{
    for (int i = 0; i < n; i++) {
        cq_ray along = {cq_v3(-2, 0.01 * (i % 40), 0), cq_v3(1, 0, 0), 4.0 * ROW};
        cq_ray across = {cq_v3(1.5 * i, -5, 0), cq_v3(0, 1, 0), 10};
        rays[i] = (cq_world_ray){i % 3 ? across : along, i % 4 ? 1u : 3u};
    }
}

/* Oracle: ray i's hits by brute force (every shape cast): the count, and
 * the closest (ties to the smaller id: items are sorted by id). */
static int brute_ray(const wo_item *items, int n, const cq_world_ray *r, cq_world_ray_hit *closest)
{
    int hits = 0;
    memset(closest, 0, sizeof *closest);
    for (int k = 0; k < n; k++) {
        cq_ray_hit h;
        if (!(items[k].body.layer & r->mask) || cq_raycast(&items[k].body.shape, &items[k].body.pose, &r->ray, &h) != CQ_OK ||
            !h.hit)
            continue;
        hits++;
        if (!closest->hit.hit || h.distance < closest->hit.distance)
            *closest = (cq_world_ray_hit){items[k].h, h};
    }
    return hits;
}

#define RAYS 1200
#define HITS (RAYS / 3 * ROW + RAYS)

START_TEST(test_raycasts_canceled)
{
    cq_world *w = row_world();
    wo_item *items;
    int n = wo_items(w, &items);
    static cq_world_ray rays[RAYS];
    static cq_world_ray_hit out[RAYS];
    cq_world_ray_hit *hits = malloc(HITS * sizeof *hits);
    static int first[RAYS + 1];
    row_rays(rays, RAYS);
    for (int k = 1; k <= 3; k++) {
        probe p = {.expire_at = k};
        cq_world_ray_options opt = {.deadline = &(cq_deadline){probe_expired, &p}};
        ck_assert_int_eq(cq_world_raycast_opt(w, rays, RAYS, &opt, out, NULL), CQ_ECANCELED);
        p = (probe){.expire_at = k};
        ck_assert_int_eq(cq_world_raycast_all_opt(w, rays, RAYS, &opt, hits, HITS, first, NULL), CQ_ECANCELED);
        ck_assert_int_eq(p.calls, k);
    }
    probe never = {0};
    cq_world_ray_options opt = {.deadline = &(cq_deadline){probe_expired, &never}};
    ck_assert_int_eq(cq_world_raycast_opt(w, rays, RAYS, &opt, out, NULL), CQ_OK);
    ck_assert_int_eq(cq_world_raycast_all_opt(w, rays, RAYS, &opt, hits, HITS, first, NULL), CQ_OK);
    ck_assert_int_gt(never.calls, 3);
    for (int i = 0; i < RAYS; i++) {
        cq_world_ray_hit want;
        int count = brute_ray(items, n, &rays[i], &want);
        ck_assert_int_eq(first[i + 1] - first[i], count);
        ck_assert_int_eq(out[i].hit.hit, want.hit.hit);
        ck_assert(out[i].id.index == want.id.index && out[i].id.generation == want.id.generation);
        ck_assert_double_eq_tol(out[i].hit.distance, want.hit.distance, 1e-12);
    }
    free(hits);
    free(items);
    cq_world_destroy(w);
}
END_TEST

/* A sphere over the whole row, moving up: it starts overlapping every box
 * of its mask (ROW candidates), so its first hit is the lowest id at time
 * 0, and its overlap query lists them all. */
START_TEST(test_shape_queries_canceled)
{
    cq_world *w = row_world();
    wo_item *items;
    int n = wo_items(w, &items);
    cq_shape big = wo_capsule(1, 1.5 * ROW);
    cq_xform pose = wo_at(1.5 * (ROW - 1), 0, 0);
    pose.r = tu_axis_angle(cq_v3(0, 0, 1), -acos(0.0)); /* the capsule's axis (y) along x */
    for (int k = 1; k <= 2; k++) {
        probe p = {.expire_at = k};
        cq_deadline d = deadline_of(&p);
        cq_world_shape_query q = {.shape = &big, .pose = pose, .translation = cq_v3(0, 3, 0), .mask = 1,
                                  .deadline = &d};
        cq_world_sweep_hit h;
        ck_assert_int_eq(cq_world_sweep(w, &q, &h), CQ_ECANCELED);
        ck_assert_int_eq(p.calls, k);
        p = (probe){.expire_at = k};
        cq_world_handle ids[ROW];
        int count;
        ck_assert_int_eq(cq_world_overlap(w, &q, ids, ROW, &count), CQ_ECANCELED);
        ck_assert_int_eq(p.calls, k);
    }
    probe never = {0};
    cq_deadline d = deadline_of(&never);
    cq_world_shape_query q = {.shape = &big, .pose = pose, .translation = cq_v3(0, 3, 0), .mask = 1,
                              .deadline = &d};
    cq_world_sweep_hit h;
    ck_assert_int_eq(cq_world_sweep(w, &q, &h), CQ_OK);
    cq_world_handle ids[ROW];
    int count, want = 0, lowest = -1;
    ck_assert_int_eq(cq_world_overlap(w, &q, ids, ROW, &count), CQ_OK);
    ck_assert_int_ge(never.calls, 2);
    for (int k = 0; k < n; k++) {
        cq_pair_query pq = {.a = &big, .xa = pose, .b = &items[k].body.shape, .xb = items[k].body.pose,
                            .skip_distance = true};
        cq_contact c;
        if (!(items[k].body.layer & 1) || cq_collide(&pq, &c) != CQ_OK || !c.overlap)
            continue;
        ck_assert_int_lt(want, count);
        ck_assert_uint_eq(ids[want++].index, items[k].h.index);
        lowest = lowest < 0 ? k : lowest;
    }
    ck_assert_int_eq(count, want);
    ck_assert_int_gt(want, 2 * CQ_DEADLINE_STRIDE);
    ck_assert(h.hit.hit);
    ck_assert_uint_eq(h.id.index, items[lowest].h.index);
    ck_assert_double_eq(h.hit.time, 0);
    free(items);
    cq_world_destroy(w);
}
END_TEST

/* A square mesh of side 40 in z = 0 and MESHED spheres of radius 1 sunk
 * 0.25 into it, 3 apart: each pair walks the mesh's triangles, so each
 * asks the hook (a stride of units), and one expiring at its K-th call
 * stops the query there. Oracle: each sphere touches the sheet with depth
 * 0.25 along z, and nothing else. */
#define MESHED 12

START_TEST(test_mesh_pairs_ask_each)
{
    cq_vec3 v[4] = {cq_v3(-20, -20, 0), cq_v3(20, -20, 0), cq_v3(20, 20, 0), cq_v3(-20, 20, 0)};
    int t[2][3] = {{0, 1, 2}, {0, 2, 3}};
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 4, (const int(*)[3])t, 2, &m), CQ_OK);
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){0}, &w), CQ_OK);
    static char ids[MESHED][8];
    cq_world_op ops[MESHED + 1];
    ops[0] = wo_upsert("floor", (cq_shape){.type = CQ_MESH, .mesh = {m}}, wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, ~0u);
    for (int k = 0; k < MESHED; k++) {
        snprintf(ids[k], sizeof ids[k], "s%02d", k);
        ops[k + 1] = wo_upsert(ids[k], wo_sphere(1), wo_at(3.0 * k - 18, 0, 0.75), cq_v3(0, 0, 0), 1, ~0u);
    }
    wo_apply(w, ops, MESHED + 1);
    static answer got;
    for (int k = 1; k <= 3; k++) {
        probe p = {.expire_at = k};
        cq_deadline d = deadline_of(&p);
        contacts(w, 0, &d, &got);
        ck_assert_int_eq(got.rc, CQ_ECANCELED);
        ck_assert_int_eq(p.calls, k);
    }
    probe never = {0};
    cq_deadline d = deadline_of(&never);
    contacts(w, 0, &d, &got);
    ck_assert_int_eq(got.rc, CQ_OK);
    ck_assert_int_eq(never.calls, MESHED);
    ck_assert_int_eq(got.pairs, MESHED);
    for (int k = 0; k < MESHED; k++) {
        const cq_contact *c = &got.pair[k].contact;
        ck_assert_double_eq_tol(c->depth, 0.25, 1e-9);
        ck_assert_double_eq_tol(fabs(c->normal.z), 1, 1e-9);
    }
    cq_world_destroy(w);
}
END_TEST

Suite *deadline_suite(void)
{
    Suite *s = suite_create("deadline");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_contacts_canceled_leave_the_cache, 0, 3);
    tcase_add_test(tc, test_raycasts_canceled);
    tcase_add_test(tc, test_shape_queries_canceled);
    tcase_add_test(tc, test_mesh_pairs_ask_each);
    suite_add_tcase(s, tc);
    return s;
}
