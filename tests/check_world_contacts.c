/* Batch contacts through the world. Oracles: brute-force cq_collide over
 * every pair of shapes with a pair cache emulated here (a pair's previous
 * normal is kept while its fattened boxes keep overlapping), worlds built in
 * other orders (byte-identical output), and the analytic contact of a box
 * sliding on a box floor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aabb.h"
#include "cq/fallback.h"
#include "cq/hull.h"
#include "world_oracle.h"

Suite *world_contacts_suite(void);

#define MAXP 4096

typedef struct result {
    cq_world_contact pairs[MAXP];
    cq_world_contacts_out out;
} result;

static result *run_contacts(cq_world *w, const cq_world_contacts_query *q)
{
    result *r = calloc(1, sizeof *r);
    ck_assert(r != NULL);
    r->out = (cq_world_contacts_out){.pairs = r->pairs, .pair_capacity = MAXP};
    int rc = cq_world_contacts(w, q, &r->out);
    if (rc != CQ_OK)
        ck_abort_msg("contacts: %s", cq_err_name(rc));
    return r;
}

static cq_world *make_world(double skin, int capacity)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = capacity}, &w), CQ_OK);
    return w;
}

static bool vec_eq(cq_vec3 a, cq_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* Exact equality of every meaningful field. */
static void assert_contact_eq(const cq_contact *g, const cq_contact *e)
{
    ck_assert(g->overlap == e->overlap && g->has_normal == e->has_normal && g->has_distance == e->has_distance);
    ck_assert(g->distance == e->distance && g->depth == e->depth && vec_eq(g->normal, e->normal));
    ck_assert(vec_eq(g->witness_a, e->witness_a) && vec_eq(g->witness_b, e->witness_b));
    ck_assert_int_eq(g->point_count, e->point_count);
    for (int k = 0; k < g->point_count; k++) {
        ck_assert(vec_eq(g->points[k].position, e->points[k].position) && g->points[k].depth == e->points[k].depth);
        ck_assert(memcmp(&g->points[k].feature, &e->points[k].feature, sizeof(cq_feature)) == 0);
    }
    ck_assert(g->algorithm == e->algorithm && g->fallback_reason == e->fallback_reason &&
              g->fallback_action == e->fallback_action && g->sat_axis == e->sat_axis && g->sat_gap == e->sat_gap);
}

/* ---- against brute force, frame after frame ---- */

#define POOL 48

typedef struct oracle_cache {
    bool paired[POOL][POOL]; /* a broadphase pair last frame */
    cq_pair_cache prev[POOL][POOL];
} oracle_cache;

static int pool_index(const char *id) { return atoi(id + 1); }

/* Expected touching pairs of this frame, with the cache carried over. */
static int expect_frame(const wo_item *items, int n, double skin, oracle_cache *oc, cq_contact *want, int (*ids)[2])
{
    int (*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs), found = 0;
    bool now[POOL][POOL] = {{false}};
    for (int k = 0; k < np; k++) {
        const wo_item *a = &items[pairs[k][0]], *b = &items[pairs[k][1]];
        int ia = pool_index(a->id), ib = pool_index(b->id);
        cq_pair_cache *prev = &oc->prev[ia][ib];
        if (!oc->paired[ia][ib])
            *prev = (cq_pair_cache){0};
        cq_pair_query q = {.a = &a->body.shape, .xa = a->body.pose, .b = &b->body.shape, .xb = b->body.pose,
                           .skin = skin, .cache = prev->has_normal ? prev : NULL, .skip_distance = true};
        cq_contact c;
        memset(&c, 0, sizeof c);
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        if (c.has_normal)
            *prev = cq_pair_cache_of(&c);
        now[ia][ib] = true;
        if (c.overlap) {
            want[found] = c;
            ids[found][0] = pairs[k][0];
            ids[found][1] = pairs[k][1];
            found++;
        }
    }
    memcpy(oc->paired, now, sizeof now);
    for (int i = 0; i < n; i++) /* every pair the broadphase leaves out is apart by more than skin */
        for (int j = i + 1; j < n; j++) {
            int ia = pool_index(items[i].id), ib = pool_index(items[j].id);
            const cq_world_body *a = &items[i].body, *b = &items[j].body;
            if (now[ia][ib] || (a->shape.type == CQ_PLANE && b->shape.type == CQ_PLANE))
                continue;
            cq_pair_query q = {.a = &a->shape, .xa = a->pose, .b = &b->shape, .xb = b->pose, .skin = skin};
            cq_contact c;
            ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
            ck_assert(!c.overlap);
        }
    free(pairs);
    return found;
}

static void forget(oracle_cache *oc, int k)
{
    for (int j = 0; j < POOL; j++)
        oc->paired[k][j] = oc->paired[j][k] = false;
}

START_TEST(test_contacts_vs_brute)
{
    tu_rng rng = {4242};
    double skin = 0.05;
    cq_world *w = make_world(skin, 16);
    static oracle_cache oc;
    memset(&oc, 0, sizeof oc);
    char ids[POOL][8];
    cq_vec3 pos[POOL], vel[POOL];
    cq_world_op ops[POOL];
    for (int k = 0; k < POOL; k++) {
        snprintf(ids[k], sizeof ids[k], "c%02d", k);
        bool plane = k < 2;
        cq_shape_type t = plane ? CQ_PLANE : wo_random_type(&rng, true);
        pos[k] = plane ? cq_v3(0, -3, 0) : cq_v3(tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3));
        vel[k] = plane ? cq_v3(0, 0, 0) : cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        ops[k] = wo_upsert(ids[k], wo_random_shape(&rng, t, 0.8), (cq_xform){pos[k], plane ? cq_mat3_identity() : tu_rotation(&rng)},
                           vel[k], 1, 1);
    }
    wo_apply(w, ops, POOL);
    cq_contact *want = malloc(sizeof *want * MAXP);
    int (*want_ids)[2] = malloc(sizeof *want_ids * MAXP);
    int total = 0;
    for (int frame = 0; frame < 60; frame++) {
        int n = 0;
        for (int k = 2; k < POOL; k++) {
            double u = tu_uniform(&rng, 0, 1);
            pos[k] = cq_mad(pos[k], vel[k], 0.1);
            for (int i = 0; i < 3; i++)
                if (fabs(cq_comp(pos[k], i)) > 3)
                    vel[k] = cq_v3(i == 0 ? -vel[k].x : vel[k].x, i == 1 ? -vel[k].y : vel[k].y, i == 2 ? -vel[k].z : vel[k].z);
            cq_xform pose = {pos[k], tu_rotation(&rng)};
            if (u < 0.02) { /* remove and register again: its pairs are new */
                ops[n++] = wo_remove(ids[k]);
                ops[n++] = wo_upsert(ids[k], wo_random_shape(&rng, wo_random_type(&rng, true), 0.8), pose, vel[k], 1, 1);
                forget(&oc, k);
            } else if (u < 0.05) { /* a new shape under the registration: the cache stays */
                ops[n++] = wo_upsert(ids[k], wo_random_shape(&rng, wo_random_type(&rng, true), 0.8), pose, vel[k], 1, 1);
            } else if (u < 0.9) {
                ops[n++] = wo_move(ids[k], pose, vel[k]);
            }
        }
        wo_apply(w, ops, n);
        wo_item *items;
        int ni = wo_items(w, &items);
        int nw = expect_frame(items, ni, skin, &oc, want, want_ids);
        result *r = run_contacts(w, NULL);
        ck_assert_int_eq(r->out.pair_count, nw);
        ck_assert_int_eq(r->out.toi_count, 0);
        for (int k = 0; k < nw; k++) {
            ck_assert_int_eq(wo_find(items, ni, r->pairs[k].a), want_ids[k][0]);
            ck_assert_int_eq(wo_find(items, ni, r->pairs[k].b), want_ids[k][1]);
            assert_contact_eq(&r->pairs[k].contact, &want[k]);
        }
        total += nw;
        free(r);
        free(items);
    }
    ck_assert_int_gt(total, 100);
    free(want);
    free(want_ids);
    cq_world_destroy(w);
}
END_TEST

/* ---- determinism across insertion orders ---- */

#define DET_N 160

/* Shape k of the scene, rebuilt identically on every call (hulls too). */
static cq_world_op scene_op(int k, char *id, cq_xform *pose)
{
    tu_rng rng = {9000 + (uint64_t)k};
    snprintf(id, 8, "d%03d", (k * 37) % DET_N);
    cq_shape_type t = k == 0 ? CQ_PLANE : wo_random_type(&rng, true);
    *pose = (cq_xform){cq_v3(tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4)),
                       k == 0 ? cq_mat3_identity() : tu_rotation(&rng)};
    cq_shape s = wo_random_shape(&rng, t, 1);
    return wo_upsert(id, s, *pose, cq_v3(0, 0, 0), 1, 1);
}

static result *build_and_run(int order_seed, int capacity)
{
    cq_world *w = make_world(0.02, capacity);
    static char ids[DET_N][8];
    static cq_xform poses[DET_N];
    int order[DET_N];
    for (int k = 0; k < DET_N; k++)
        order[k] = k;
    tu_rng rng = {(uint64_t)order_seed};
    for (int k = DET_N - 1; order_seed && k > 0; k--) {
        int j = (int)tu_uniform(&rng, 0, k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    /* In several batches; some shapes arrive elsewhere and move into place,
     * some ids are decoys removed again. */
    for (int start = 0; start < DET_N; start += 23) {
        cq_world_op ops[2 * 23 + 2];
        int n = 0;
        for (int k = start; k < start + 23 && k < DET_N; k++) {
            ops[n] = scene_op(order[k], ids[order[k]], &poses[order[k]]);
            if (order_seed && k % 3 == 0 && order[k] != 0) {
                ops[n].pose.p = cq_v3(50, 50, 50);
                n++;
                ops[n++] = wo_move(ids[order[k]], poses[order[k]], cq_v3(0, 0, 0));
            } else {
                n++;
            }
        }
        if (order_seed) {
            ops[n++] = wo_upsert("decoy", wo_sphere(3), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1);
            ops[n++] = wo_remove("decoy");
        }
        wo_apply(w, ops, n);
    }
    result *r = run_contacts(w, NULL);
    /* A second frame: everyone moves the same way. */
    cq_world_op moves[DET_N];
    int nm = 0;
    for (int k = 0; k < DET_N; k++) {
        if (order[k] == 0) /* the plane stays */
            continue;
        cq_xform p = poses[order[k]];
        p.p = cq_add(p.p, cq_v3(0.01 * (order[k] % 5), 0.02, 0));
        moves[nm++] = wo_move(ids[order[k]], p, cq_v3(0, 0, 0));
    }
    wo_apply(w, moves, nm);
    free(r);
    r = run_contacts(w, NULL);
    for (int k = 0; k < r->out.pair_count; k++) { /* handles differ by order: compare by id below */
        cq_world_handle h[2] = {r->pairs[k].a, r->pairs[k].b};
        for (int i = 0; i < 2; i++) {
            const char *id = cq_world_id(w, h[i]);
            ck_assert(id != NULL);
            int num = atoi(id + 1);
            h[i] = (cq_world_handle){(uint32_t)num, 0};
        }
        r->pairs[k].a = h[0];
        r->pairs[k].b = h[1];
    }
    cq_world_destroy(w);
    return r;
}

START_TEST(test_determinism)
{
    result *ref = build_and_run(0, 1024);
    ck_assert_int_gt(ref->out.pair_count, 20);
    for (int seed = 1; seed <= 4; seed++) {
        result *r = build_and_run(seed, seed == 1 ? 4 : 300);
        ck_assert_int_eq(r->out.pair_count, ref->out.pair_count);
        ck_assert(memcmp(r->pairs, ref->pairs, sizeof r->pairs[0] * (size_t)ref->out.pair_count) == 0);
        free(r);
    }
    free(ref);
}
END_TEST

/* ---- the pair cache keeps a sliding box's face normal ---- */

START_TEST(test_sliding_box)
{
    cq_world *w = make_world(0, 4);
    cq_world_op setup[] = {
        wo_upsert("floor", wo_box(5, 0.5, 5), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("slider", wo_box(0.5, 0.5, 0.5), wo_at(0, 0.9, 0), cq_v3(0, 0, 0), 1, 1),
    };
    wo_apply(w, setup, 2);
    double x = 0;
    for (int frame = 0; frame < 100; frame++) {
        x = 5.42 * frame / 99.0; /* ends with 0.08 of x overlap: less than the 0.1 of depth */
        cq_world_op mv = wo_move("slider", wo_at(x, 0.9, 0), cq_v3(0, 0, 0));
        wo_apply(w, &mv, 1);
        result *r = run_contacts(w, NULL);
        ck_assert_int_eq(r->out.pair_count, 1);
        const cq_contact *c = &r->pairs[0].contact;
        ck_assert_str_eq(cq_world_id(w, r->pairs[0].a), "floor");
        tu_assert_vec_eq_tol(c->normal, cq_v3(0, 1, 0), 1e-12);
        ck_assert_double_eq_tol(c->depth, 0.1, 1e-9);
        ck_assert_int_eq(c->point_count, 4);
        for (int k = 0; k < 4; k++) { /* on the slider's bottom face, over the floor */
            ck_assert_double_eq_tol(c->points[k].position.y, 0.4, 1e-9);
            ck_assert_double_eq_tol(c->points[k].depth, 0.1, 1e-9);
            ck_assert(c->points[k].position.x >= x - 0.5 - 1e-9 && c->points[k].position.x <= fmin(x + 0.5, 5) + 1e-9);
        }
        free(r);
    }
    /* Control: without the cache the last frame's normal is the floor's side. */
    cq_shape floor_box = wo_box(5, 0.5, 5), slider = wo_box(0.5, 0.5, 0.5);
    cq_pair_query q = {.a = &floor_box, .xa = wo_at(0, 0, 0), .b = &slider, .xb = wo_at(x, 0.9, 0)};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    ck_assert_double_eq_tol(c.normal.x, 1, 1e-12);
    cq_world_destroy(w);
}
END_TEST

/* ---- repeated queries and face-axis hysteresis over 2,000 boxes ---- */

#define CROWD 2000
#define CROWD_PAIRS 16384

typedef struct crowd_answer {
    cq_world_contact *pairs;
    int n;
} crowd_answer;

static crowd_answer crowd_contacts(cq_world *w)
{
    crowd_answer r = {calloc(CROWD_PAIRS, sizeof(cq_world_contact)), 0};
    ck_assert(r.pairs != NULL);
    cq_world_contacts_out out = {.pairs = r.pairs, .pair_capacity = CROWD_PAIRS};
    ck_assert_int_eq(cq_world_contacts(w, NULL, &out), CQ_OK);
    r.n = out.pair_count;
    return r;
}

/* Two answers are the same bytes (put_contact zeroes every record first). */
static void assert_same_answer(const crowd_answer *x, const crowd_answer *y)
{
    ck_assert_int_eq(x->n, y->n);
    int differ = 0;
    for (int k = 0; k < x->n; k++)
        differ += memcmp(&x->pairs[k], &y->pairs[k], sizeof x->pairs[k]) != 0;
    ck_assert_msg(differ == 0, "%d of %d pairs changed between identical queries", differ, x->n);
}

static cq_obb crowd_obb(const cq_world *w, cq_world_handle h)
{
    cq_world_body b;
    ck_assert_int_eq(cq_world_get(w, h, &b), CQ_OK);
    return cq_obb_from_box(&b.shape, &b.pose);
}

/* The previous answer's axis of pair (a, b) (answers are sorted by ids,
 * and handles are slot numbers in id order here), or -1. */
static int crowd_prev_axis(const crowd_answer *prev, cq_world_handle a, cq_world_handle b)
{
    int lo = 0, hi = prev->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const cq_world_contact *p = &prev->pairs[mid];
        bool less = p->a.index < a.index || (p->a.index == a.index && p->b.index < b.index);
        if (less)
            lo = mid + 1;
        else
            hi = mid;
    }
    const cq_world_contact *p = &prev->pairs[lo];
    return lo < prev->n && p->a.index == a.index && p->b.index == b.index ? p->contact.normal_axis : -1;
}

/* A small move: every box shifts by up to 0.01 and turns by up to 0.01 rad. */
static void crowd_nudge(cq_world *w, tu_rng *rng, const char (*ids)[8])
{
    static cq_world_op ops[CROWD];
    for (int i = 0; i < CROWD; i++) {
        cq_world_handle h;
        ck_assert_int_eq(cq_world_find(w, ids[i], &h), CQ_OK);
        cq_world_body b;
        ck_assert_int_eq(cq_world_get(w, h, &b), CQ_OK);
        cq_vec3 axis = cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1));
        cq_mat3 turn = tu_axis_angle(cq_scale(axis, 1 / cq_len(axis)), tu_uniform(rng, -0.01, 0.01));
        cq_xform x = {cq_add(b.pose.p, cq_v3(tu_uniform(rng, -0.01, 0.01), tu_uniform(rng, -0.01, 0.01),
                                             tu_uniform(rng, -0.01, 0.01))),
                      cq_mul_mm(&turn, &b.pose.r)};
        ops[i] = wo_move(ids[i], x, cq_v3(0, 0, 0));
    }
    wo_apply(w, ops, CROWD);
}

/* After the move, oracle from the corners: a pair whose previous axis is a
 * face axis at most 1.5 x as deep as the least penetration of any axis is
 * within the band of whichever axis is best, so the answer keeps it; any
 * other answer is the cache-free one (no other face displaces the best). */
static int crowd_check_hysteresis(const cq_world *w, const crowd_answer *prev, const crowd_answer *now, int *kept)
{
    int checked = 0;
    for (int k = 0; k < now->n; k++) {
        const cq_world_contact *p = &now->pairs[k];
        cq_obb a = crowd_obb(w, p->a), b = crowd_obb(w, p->b);
        cq_shape sa = {.type = CQ_BOX, .box = {a.half}}, sb = {.type = CQ_BOX, .box = {b.half}};
        cq_pair_query q = {.a = &sa, .xa = {a.center, a.axes}, .b = &sb, .xb = {b.center, b.axes}, .skip_distance = true};
        cq_contact bare;
        ck_assert_int_eq(cq_collide(&q, &bare), CQ_OK);
        int was = crowd_prev_axis(prev, p->a, p->b), got = p->contact.normal_axis;
        ck_assert_msg(got == bare.normal_axis || got == was, "pair %d: axis %d, previous %d, best %d", k, got, was,
                      bare.normal_axis);
        if (was < 0 || was >= 6)
            continue;
        double depth = tu_obb_axis_penetration(&a, &b, was);
        if (!(depth <= 1.5 * tu_obb_min_penetration(&a, &b) - 1e-9))
            continue;
        checked++;
        *kept += bare.normal_axis != was;
        ck_assert_msg(got == was, "pair %d: previous axis %d within the band, answered %d", k, was, got);
        ck_assert_double_eq_tol(fabs(cq_dot(p->contact.normal, tu_obb_axis(&a, &b, was))), 1, 1e-12);
        ck_assert_double_eq_tol(p->contact.depth, depth, 1e-9);
    }
    return checked;
}

START_TEST(test_repeat_and_hysteresis)
{
    static char ids[CROWD][8];
    cq_world *w = make_world(0, CROWD);
    static cq_world_op ops[CROWD];
    tu_rng rng = {2040};
    for (int i = 0; i < CROWD; i++) {
        snprintf(ids[i], sizeof ids[i], "b%04d", i);
        cq_shape s = wo_box(tu_uniform(&rng, 0.2, 1), tu_uniform(&rng, 0.2, 1), tu_uniform(&rng, 0.2, 1));
        cq_xform x = {cq_v3(tu_uniform(&rng, -12, 12), tu_uniform(&rng, -12, 12), tu_uniform(&rng, -12, 12)),
                      tu_rotation(&rng)};
        ops[i] = wo_upsert(ids[i], s, x, cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(w, ops, CROWD);
    crowd_answer first = crowd_contacts(w), second = crowd_contacts(w);
    ck_assert_int_gt(first.n, 1000);
    assert_same_answer(&first, &second);
    int checked = 0, kept = 0;
    crowd_answer prev = second;
    for (int round = 0; round < 3; round++) {
        crowd_nudge(w, &rng, (const char (*)[8])ids);
        crowd_answer now = crowd_contacts(w), again = crowd_contacts(w);
        assert_same_answer(&now, &again); /* whatever the cache held before */
        checked += crowd_check_hysteresis(w, &prev, &now, &kept);
        free(prev.pairs);
        free(again.pairs);
        prev = now;
    }
    printf("crowd: %d touching pairs, %d previous face axes within the band, %d kept over a better axis\n",
           first.n, checked, kept);
    ck_assert_int_gt(checked, 1000);
    ck_assert_int_gt(kept, 0); /* the band did decide some pairs */
    free(first.pairs);
    free(prev.pairs);
    cq_world_destroy(w);
}
END_TEST

/* ---- filter, small arrays, counters ---- */

START_TEST(test_ids_filter)
{
    tu_rng rng = {77};
    cq_world *w = make_world(0.02, 64);
    char ids[40][8];
    cq_world_op ops[40];
    for (int k = 0; k < 40; k++) {
        snprintf(ids[k], sizeof ids[k], "f%02d", k);
        ops[k] = wo_upsert(ids[k], wo_random_shape(&rng, wo_random_type(&rng, false), 1), tu_pose(&rng, 3), cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(w, ops, 40);
    result *all = run_contacts(w, NULL);
    const char *pick[] = {"f03", "f17", "f29", "f17"};
    result *some = run_contacts(w, &(cq_world_contacts_query){.ids = pick, .id_count = 4});
    int k2 = 0;
    for (int k = 0; k < all->out.pair_count; k++) {
        const char *a = cq_world_id(w, all->pairs[k].a), *b = cq_world_id(w, all->pairs[k].b);
        bool in = false;
        for (int i = 0; i < 4; i++)
            in |= strcmp(a, pick[i]) == 0 || strcmp(b, pick[i]) == 0;
        if (!in)
            continue;
        ck_assert(k2 < some->out.pair_count);
        ck_assert(memcmp(&some->pairs[k2], &all->pairs[k], sizeof all->pairs[k]) == 0);
        k2++;
    }
    ck_assert_int_eq(k2, some->out.pair_count);
    ck_assert_int_gt(k2, 0);
    ck_assert_int_lt(some->out.tested, all->out.tested);

    const char *unknown[] = {"f01", "nope"};
    cq_world_contacts_out out = {.pairs = all->pairs, .pair_capacity = MAXP};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.ids = unknown, .id_count = 2}, &out),
                     CQ_ENOT_FOUND);
    ck_assert_int_eq(out.bad_id, 1);
    /* Too small: the counts needed. */
    int need = all->out.pair_count;
    out = (cq_world_contacts_out){.pairs = all->pairs, .pair_capacity = need - 1};
    ck_assert_int_eq(cq_world_contacts(w, NULL, &out), CQ_ERANGE);
    ck_assert_int_eq(out.pair_count, need);
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = -1}, &out), CQ_ENEGATIVE);
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = NAN}, &out), CQ_ENOT_FINITE);
    free(all);
    free(some);
    cq_world_destroy(w);
}
END_TEST

/* Sphere-sphere pairs answer in closed form (never GJK), and the caller's
 * counters see every test. */
START_TEST(test_buckets_and_counters)
{
    tu_rng rng = {5};
    cq_world *w = make_world(0, 64);
    cq_world_op ops[60];
    char ids[60][8];
    for (int k = 0; k < 60; k++) {
        snprintf(ids[k], sizeof ids[k], "b%02d", k);
        cq_shape s = k % 3 == 0 ? wo_sphere(1) : k % 3 == 1 ? wo_box(0.7, 0.7, 0.7) : wo_capsule(0.5, 0.5);
        ops[k] = wo_upsert(ids[k], s, tu_pose(&rng, 3), cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(w, ops, 60);
    static cq_counters ctr;
    result *r = run_contacts(w, &(cq_world_contacts_query){.counters = &ctr});
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    uint64_t tests = 0;
    for (int a = 0; a < CQ_ALG_COUNT; a++)
        tests += sum[CQ_CTR_TESTS + a];
    ck_assert_int_eq((int)tests, r->out.tested);
    ck_assert_int_eq(r->out.tested, cq_world_get_stats(w).broadphase_pairs);
    int ss = 0;
    for (int k = 0; k < r->out.pair_count; k++) {
        cq_world_body a, b;
        cq_world_get(w, r->pairs[k].a, &a);
        cq_world_get(w, r->pairs[k].b, &b);
        if (a.shape.type == CQ_SPHERE && b.shape.type == CQ_SPHERE) {
            ck_assert_int_eq(r->pairs[k].contact.algorithm, CQ_ALG_SPHERE_SPHERE);
            ss++;
        }
    }
    ck_assert_int_gt(ss, 0);
    ck_assert_int_gt((int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX], 0);
    free(r);
    cq_world_destroy(w);
}
END_TEST

/* Coplanar flat hulls have no penetration normal: EPA fails, the pair is
 * reported without one, and the record carries the packed handles. A pair
 * that keeps failing is logged once (and counted every time). */
START_TEST(test_fallback_log)
{
    cq_vec3 t1[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, t2[3] = {{0.5, 0.5, 0}, {2.5, 0.5, 0}, {0.5, 2.5, 0}};
    cq_hull *h1, *h2;
    ck_assert_int_eq(cq_hull_build(t1, 3, 0, &h1), CQ_OK);
    ck_assert_int_eq(cq_hull_build(t2, 3, 0, &h2), CQ_OK);
    cq_world *w = make_world(0, 4);
    cq_world_op ops[] = {
        wo_upsert("a", (cq_shape){.type = CQ_CONVEX, .convex = {h1}}, wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("b", (cq_shape){.type = CQ_CONVEX, .convex = {h2}}, wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
    };
    wo_apply(w, ops, 2);
    static cq_fallback_slot slots[8];
    static cq_counters ctr;
    cq_fallback_log log;
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 8, NULL), CQ_OK);
    for (int frame = 0; frame < 3; frame++) {
        result *r = run_contacts(w, &(cq_world_contacts_query){.log = &log, .counters = &ctr});
        ck_assert_int_eq(r->out.pair_count, 1);
        const cq_contact *c = &r->pairs[0].contact;
        ck_assert(c->overlap && !c->has_normal && c->point_count == 0);
        ck_assert(c->fallback_action == CQ_FBA_DROPPED && c->fallback_reason != CQ_FB_NONE);
        free(r);
    }
    cq_fallback_record rec[4];
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 1);
    ck_assert(rec[0].tag_a == cq_world_handle_pack(wo_handle(w, "a")));
    ck_assert(rec[0].tag_b == cq_world_handle_pack(wo_handle(w, "b")));
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 3);

    /* Moving, a is swept too: it starts overlapping b, the sweep's EPA
     * fails the same way, and that is counted and logged with a's handle
     * as A (the narrow phase, failing again, only counts). */
    cq_world_op mv = wo_move("a", wo_at(0, 0, 0), cq_v3(1, 0, 0));
    wo_apply(w, &mv, 1);
    uint64_t gjk_before = sum[CQ_CTR_GJK_CALLS];
    result *r = run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr});
    ck_assert_int_eq(r->out.swept, 1);
    ck_assert_int_eq(r->out.toi_count, 0); /* an initial overlap is no time of impact */
    free(r);
    memset(sum, 0, sizeof sum); /* a snapshot adds into it */
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 5);
    ck_assert_uint_gt(sum[CQ_CTR_GJK_CALLS], gjk_before + 1); /* the narrow phase's and the sweep's */
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 2);
    ck_assert(rec[0].tag_a == cq_world_handle_pack(wo_handle(w, "a")));
    ck_assert(rec[0].tag_b == cq_world_handle_pack(wo_handle(w, "b")));
    ck_assert_int_eq(rec[0].action, CQ_FBA_DROPPED);

    /* The sweep keeps failing frame after frame: counted every time (with
     * the narrow phase's), logged only the first time. */
    for (int frame = 0; frame < 3; frame++)
        free(run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}));
    memset(sum, 0, sizeof sum);
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 11);
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 2);

    /* A frame without the failure (a moved clear of b) ends the run: when a
     * comes back, the sweep's failure is logged again. */
    cq_world_op away = wo_move("a", wo_at(10, 0, 0), cq_v3(1, 0, 0));
    wo_apply(w, &away, 1);
    free(run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}));
    wo_apply(w, &mv, 1);
    free(run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}));
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 4); /* the narrow phase's run ended too */
    ck_assert(rec[0].tag_a == cq_world_handle_pack(wo_handle(w, "a")));
    ck_assert_uint_eq(rec[0].seq, 4);

    /* A query refused for its capacity (CQ_ERANGE) remembers nothing: after
     * a clear frame, the refused one logs both failures, its retry logs
     * both again, and only the frame after that is quiet. */
    wo_apply(w, &away, 1);
    free(run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}));
    wo_apply(w, &mv, 1);
    cq_world_contacts_out small = {.pair_capacity = 0};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}, &small),
                     CQ_ERANGE);
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 1), 1);
    ck_assert_uint_eq(rec[0].seq, 6);
    for (int frame = 0; frame < 2; frame++)
        free(run_contacts(w, &(cq_world_contacts_query){.dt = 0.5, .log = &log, .counters = &ctr}));
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 1), 1);
    ck_assert_uint_eq(rec[0].seq, 8);
    cq_world_destroy(w);
}
END_TEST

Suite *world_contacts_suite(void)
{
    Suite *s = suite_create("world_contacts");
    TCase *t = tcase_create("contacts");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_contacts_vs_brute);
    tcase_add_test(t, test_determinism);
    tcase_add_test(t, test_sliding_box);
    tcase_add_test(t, test_repeat_and_hysteresis);
    tcase_add_test(t, test_ids_filter);
    tcase_add_test(t, test_buckets_and_counters);
    tcase_add_test(t, test_fallback_log);
    suite_add_tcase(s, t);
    return s;
}
