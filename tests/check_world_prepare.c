/* cq_world_prepare / commit / abandon. Oracles: a snapshot of the registry
 * through the public accessors (cq_world_list, cq_world_get) taken before
 * the prepare, a twin world fed the same batches through cq_world_apply
 * (whose own checks are tested against models in check_world.c), the
 * brute-force broadphase (world_oracle.c), the blame of each bad op known
 * by construction, and a failing allocator counting every allocation. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/hull.h"
#include "world_oracle.h"

Suite *world_prepare_suite(void);

static cq_world *make_world(double skin, int capacity)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = capacity}, &w), CQ_OK);
    return w;
}

static cq_hull *cube_hull(double s)
{
    cq_vec3 p[8];
    for (int k = 0; k < 8; k++)
        p[k] = cq_v3(k & 1 ? s : -s, k & 2 ? s : -s, k & 4 ? s : -s);
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(p, 8, 0, &h), CQ_OK);
    return h;
}

static cq_shape convex_of(cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }

static void check_same(const cq_world *a, const cq_world *b)
{
    wo_item *ia, *ib;
    int na = wo_items(a, &ia), nb = wo_items(b, &ib);
    ck_assert(wo_items_equal(ia, na, ib, nb));
    free(ia);
    free(ib);
}

/* A world of six shapes (one a hull the world owns) and a batch touching
 * all of it: new ids past the capacity, a move, a remove, a replacement by
 * a hull, an id removed and upserted again. */
typedef struct scene {
    cq_world *w;
    cq_hull *mine; /* the batch's hull, the caller's until a commit */
    cq_world_op batch[16];
    int n;
    char ids[8][4];
} scene;

static void scene_make(scene *s)
{
    s->w = make_world(0.1, 6);
    cq_world_op setup[6];
    for (int i = 0; i < 6; i++) {
        snprintf(s->ids[i], sizeof s->ids[i], "s%d", i);
        cq_shape shape = i == 5 ? convex_of(cube_hull(0.5)) : wo_sphere(0.6);
        setup[i] = wo_upsert(s->ids[i], shape, wo_at(i, 0, 0), cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(s->w, setup, 6);
    snprintf(s->ids[6], sizeof s->ids[6], "n0");
    snprintf(s->ids[7], sizeof s->ids[7], "n1");
    s->mine = cube_hull(0.7);
    cq_vec3 z = cq_v3(0, 0, 0);
    int n = 0;
    s->batch[n++] = wo_upsert(s->ids[6], wo_box(1, 1, 1), wo_at(0, 1, 0), z, 1, 1);
    s->batch[n++] = wo_move(s->ids[1], wo_at(1, 1.5, 0), cq_v3(1, 0, 0));
    s->batch[n++] = wo_remove(s->ids[2]);
    s->batch[n++] = wo_upsert(s->ids[5], convex_of(s->mine), wo_at(5, 1, 0), z, 1, 1);
    s->batch[n++] = wo_remove(s->ids[3]);
    s->batch[n++] = wo_upsert(s->ids[3], wo_capsule(0.3, 1), wo_at(3, 0, 0), z, 1, 1);
    s->batch[n++] = wo_upsert(s->ids[7], wo_sphere(2), wo_at(2, 2, 0), z, 1, 1);
    s->n = n;
}

/* Prepare then abandon: the registry, the pairs and the queries are as
 * before, during the pending batch and after; the caller keeps its hull;
 * the same batch then applies. */
START_TEST(test_prepare_abandon)
{
    scene s;
    scene_make(&s);
    wo_item *before, *mid, *after;
    int nb = wo_items(s.w, &before);
    int bad = -5;
    ck_assert_int_eq(cq_world_prepare(s.w, s.batch, s.n, &bad), CQ_OK);
    ck_assert_int_eq(bad, -1);
    ck_assert_int_eq(cq_world_get_stats(s.w).capacity >= 7, true); /* the room is made now */
    int nm = wo_items(s.w, &mid);
    ck_assert(wo_items_equal(before, nb, mid, nm));
    cq_world_handle h;
    ck_assert_int_eq(cq_world_find(s.w, "n0", &h), CQ_ENOT_FOUND);
    wo_check_pairs(s.w, 0.1);
    cq_world_abandon(s.w);
    int na = wo_items(s.w, &after);
    ck_assert(wo_items_equal(before, nb, after, na));
    wo_check_pairs(s.w, 0.1);
    cq_world_abandon(s.w); /* nothing pending: nothing happens */
    cq_hull_free(s.mine);  /* still the caller's (a double free would abort) */
    s.batch[3] = wo_upsert(s.ids[5], wo_sphere(1), wo_at(5, 1, 0), cq_v3(0, 0, 0), 1, 1);
    wo_apply(s.w, s.batch, s.n);
    ck_assert_int_eq(cq_world_count(s.w), 7);
    wo_check_pairs(s.w, 0.1);
    free(before);
    free(mid);
    free(after);
    cq_world_destroy(s.w);
}
END_TEST

/* Random batches of upserts, moves, removes and re-upserts on two twin
 * worlds: prepare + commit leaves the same registry (handles included) as
 * apply, and pairs equal to brute force, every frame. */
START_TEST(test_prepare_commit_equals_apply)
{
    tu_rng rng = {77};
    enum { POOL = 60, FRAMES = 150 };
    cq_world *a = make_world(0.1, 8), *b = make_world(0.1, 8);
    bool alive[POOL] = {false};
    char id[POOL][8];
    for (int k = 0; k < POOL; k++)
        snprintf(id[k], sizeof id[k], "i%02d", (k * 37) % POOL);
    cq_world_op ops[2 * POOL];
    for (int frame = 0; frame < FRAMES; frame++) {
        int n = 0;
        for (int k = 0; k < POOL; k++) {
            double u = tu_uniform(&rng, 0, 1);
            cq_xform at = {cq_v3(tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4)),
                           tu_rotation(&rng)};
            cq_vec3 v = cq_v3(tu_uniform(&rng, -1, 1), 0, 0);
            if (!alive[k] && u < 0.3) {
                ops[n++] = wo_upsert(id[k], wo_random_shape(&rng, wo_random_type(&rng, false), 1), at, v, 1, 1);
                alive[k] = true;
            } else if (alive[k] && u < 0.05) {
                ops[n++] = wo_remove(id[k]);
                if (u < 0.02) /* and again, a new registration */
                    ops[n++] = wo_upsert(id[k], wo_sphere(0.5), at, v, 1, 1);
                alive[k] = u < 0.02;
            } else if (alive[k] && u < 0.7) {
                ops[n++] = wo_move(id[k], at, v);
            }
        }
        int bad = -5;
        wo_apply(a, ops, n);
        ck_assert_int_eq(cq_world_prepare(b, ops, n, &bad), CQ_OK);
        cq_world_commit(b, ops, n);
        check_same(a, b);
        wo_check_pairs(b, 0.1);
    }
    cq_world_destroy(a);
    cq_world_destroy(b);
}
END_TEST

/* A refused prepare blames the op the batch's construction puts the fault
 * in, as apply does, leaves nothing pending, the world unchanged, and the
 * caller's hull its own. */
START_TEST(test_prepare_blame)
{
    scene s;
    scene_make(&s);
    wo_item *before;
    int nb = wo_items(s.w, &before);
    cq_vec3 z = cq_v3(0, 0, 0);
    cq_world_op twice[] = {wo_upsert("x", convex_of(s.mine), wo_at(0, 0, 0), z, 1, 1),
                           wo_move("s0", wo_at(0, 0, 1), z),
                           wo_upsert("y", convex_of(s.mine), wo_at(0, 0, 0), z, 1, 1)};
    cq_world_op gone[] = {wo_move("s0", wo_at(0, 0, 1), z), wo_remove("s1"), wo_move("s1", wo_at(0, 0, 0), z)};
    cq_world_op nan_pose[] = {wo_remove("s0"), wo_upsert("s0", wo_sphere(1), wo_at(0, NAN, 0), z, 1, 1)};
    cq_world_op missing[] = {wo_upsert("zz", wo_sphere(1), wo_at(0, 0, 0), z, 1, 1), wo_remove("nobody")};
    cq_world_op bad_id[] = {wo_move("s4", wo_at(0, 0, 0), z), wo_upsert("a b", wo_sphere(1), wo_at(0, 0, 0), z, 1, 1)};
    struct {
        const cq_world_op *ops;
        int n, rc, bad;
    } cases[] = {
        {twice, 3, CQ_ERANGE, 2}, {gone, 3, CQ_ENOT_FOUND, 2}, {nan_pose, 2, CQ_ENOT_FINITE, 1},
        {missing, 2, CQ_ENOT_FOUND, 1}, {bad_id, 2, CQ_ERANGE, 1}, {gone, -1, CQ_ERANGE, -1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int path = 0; path < 2; path++) {
            int bad = -5;
            int rc = path ? cq_world_apply(s.w, cases[k].ops, cases[k].n, &bad)
                          : cq_world_prepare(s.w, cases[k].ops, cases[k].n, &bad);
            ck_assert_int_eq(rc, cases[k].rc);
            ck_assert_int_eq(bad, cases[k].bad);
            wo_item *after;
            int na = wo_items(s.w, &after);
            ck_assert(wo_items_equal(before, nb, after, na));
            free(after);
        }
        wo_apply(s.w, NULL, 0); /* nothing is pending: a mutation may follow */
    }
    cq_hull_free(s.mine);
    free(before);
    cq_world_destroy(s.w);
}
END_TEST

/* Every allocation of a prepare fails in turn: it then refuses with
 * CQ_ENO_MEMORY, the world unchanged and nothing pending; once it passes,
 * every allocation fails from then on and the commit still gives the
 * twin's registry. Commit allocates nothing but the broadphase's pair
 * storage, and if that fails the stats say the broadphase is stale (the
 * next mutation brings it back). */
START_TEST(test_prepare_oom)
{
    wo_alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){wo_probe_alloc, wo_probe_free, &probe});
    size_t base = cq_alloc_bytes();
    int outcomes[3] = {0, 0, 0};
    for (long k = 1; k <= 30; k++) {
        probe = (wo_alloc_probe){0, 0};
        scene s, twin;
        scene_make(&s);
        scene_make(&twin);
        wo_apply(twin.w, twin.batch, twin.n);
        wo_item *before, *want;
        int nb = wo_items(s.w, &before), nw = wo_items(twin.w, &want);
        for (int i = 0; i < nw; i++) /* the twin's hull is another block */
            if (want[i].body.shape.type == CQ_CONVEX)
                want[i].body.shape.convex.hull = s.mine;
        probe = (wo_alloc_probe){0, k};
        int bad = -5;
        int rc = cq_world_prepare(s.w, s.batch, s.n, &bad);
        long seen = probe.calls;
        probe = (wo_alloc_probe){0, rc == CQ_OK ? 1 : 0};
        wo_item *after;
        if (rc != CQ_OK) {
            outcomes[0]++;
            ck_assert_int_eq(rc, CQ_ENO_MEMORY);
            ck_assert_int_eq(bad, -1);
            int na = wo_items(s.w, &after);
            ck_assert(wo_items_equal(before, nb, after, na));
            cq_hull_free(s.mine);
        } else {
            ck_assert_int_lt(seen, k); /* the injector did not fire */
            cq_world_commit(s.w, s.batch, s.n);
            bool stale = cq_world_get_stats(s.w).broadphase_stale;
            ck_assert_int_eq(stale, probe.calls > 0);
            outcomes[stale ? 2 : 1]++;
            probe = (wo_alloc_probe){0, 0};
            int na = wo_items(s.w, &after);
            ck_assert(wo_items_equal(want, nw, after, na));
        }
        probe = (wo_alloc_probe){0, 0};
        wo_apply(s.w, NULL, 0);
        wo_check_pairs(s.w, 0.1);
        free(before);
        free(want);
        free(after);
        cq_world_destroy(s.w);
        cq_world_destroy(twin.w);
        ck_assert_int_eq(cq_alloc_bytes(), base);
    }
    ck_assert(outcomes[0] > 0 && outcomes[1] + outcomes[2] > 0);
    cq_set_allocator(NULL);
}
END_TEST

/* A frame of moves prepared and committed under a failing allocator: the
 * commit makes no allocation at all when no pair is new. */
START_TEST(test_commit_allocates_nothing)
{
    wo_alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){wo_probe_alloc, wo_probe_free, &probe});
    cq_world *w = make_world(0.1, 64);
    cq_world_op ops[64];
    char id[64][4];
    for (int i = 0; i < 64; i++) {
        snprintf(id[i], sizeof id[i], "m%d", i);
        ops[i] = wo_upsert(id[i], wo_sphere(0.4), wo_at(i % 8, i / 8, 0), cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(w, ops, 64);
    for (int i = 0; i < 64; i++)
        ops[i] = wo_move(id[i], wo_at(i % 8 + 0.01, i / 8, 0), cq_v3(0, 0, 0));
    int bad = -5;
    ck_assert_int_eq(cq_world_prepare(w, ops, 64, &bad), CQ_OK);
    probe = (wo_alloc_probe){0, 1};
    cq_world_commit(w, ops, 64);
    ck_assert_int_eq(probe.calls, 0);
    probe = (wo_alloc_probe){0, 0};
    ck_assert(!cq_world_get_stats(w).broadphase_stale);
    cq_world_body body;
    ck_assert_int_eq(cq_world_get(w, wo_handle(w, "m9"), &body), CQ_OK);
    ck_assert(body.pose.p.x == 1.01 && body.pose.p.y == 1);
    wo_check_pairs(w, 0.1);
    cq_world_destroy(w);
    cq_set_allocator(NULL);
}
END_TEST

/* Misuse is a programming error: asserted (SIGABRT) in a build with
 * assertions; without them the pending batch is abandoned (a commit of
 * other ops, or with nothing pending, changes nothing; another mutation
 * runs on the world as it was). */
#ifdef NDEBUG
#define MISUSE_SIGNAL 0
#else
#define MISUSE_SIGNAL SIGABRT
#endif

/* The scene without a hull in its batch (the ops point into *s). */
static void misuse_scene(scene *s)
{
    scene_make(s);
    s->batch[3] = wo_upsert(s->ids[5], wo_sphere(1), wo_at(5, 1, 0), cq_v3(0, 0, 0), 1, 1);
    cq_hull_free(s->mine);
}

START_TEST(test_commit_without_prepare)
{
    scene s;
    misuse_scene(&s);
    wo_item *before, *after;
    int nb = wo_items(s.w, &before);
    cq_world_commit(s.w, s.batch, s.n);
    int na = wo_items(s.w, &after);
    ck_assert(wo_items_equal(before, nb, after, na));
    cq_world_destroy(s.w);
}
END_TEST

START_TEST(test_commit_of_other_ops)
{
    scene s;
    misuse_scene(&s);
    wo_item *before, *after;
    int nb = wo_items(s.w, &before);
    int bad;
    ck_assert_int_eq(cq_world_prepare(s.w, s.batch, s.n, &bad), CQ_OK);
    cq_world_commit(s.w, s.batch, s.n - 1);
    int na = wo_items(s.w, &after);
    ck_assert(wo_items_equal(before, nb, after, na));
    cq_world_destroy(s.w);
}
END_TEST

START_TEST(test_mutation_while_pending)
{
    scene s;
    misuse_scene(&s);
    int bad;
    ck_assert_int_eq(cq_world_prepare(s.w, s.batch, s.n, &bad), CQ_OK);
    cq_world_op move = wo_move("s0", wo_at(9, 9, 9), cq_v3(0, 0, 0));
    wo_apply(s.w, &move, 1);
    cq_world_commit(s.w, s.batch, s.n); /* abandoned by the apply: nothing pending */
    ck_assert_int_eq(cq_world_count(s.w), 6);
    cq_world_destroy(s.w);
}
END_TEST

Suite *world_prepare_suite(void)
{
    Suite *s = suite_create("world_prepare");
    TCase *tc = tcase_create("prepare");
    tcase_add_test(tc, test_prepare_abandon);
    tcase_add_test(tc, test_prepare_commit_equals_apply);
    tcase_add_test(tc, test_prepare_blame);
    tcase_add_test(tc, test_prepare_oom);
    tcase_add_test(tc, test_commit_allocates_nothing);
    suite_add_tcase(s, tc);
    TCase *mis = tcase_create("misuse");
    tcase_add_test_raise_signal(mis, test_commit_without_prepare, MISUSE_SIGNAL);
    tcase_add_test_raise_signal(mis, test_commit_of_other_ops, MISUSE_SIGNAL);
    tcase_add_test_raise_signal(mis, test_mutation_while_pending, MISUSE_SIGNAL);
    suite_add_tcase(s, mis);
    return s;
}
