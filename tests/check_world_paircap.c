/* The per-world pair cap (cq_world_settings.max_pairs). Oracles: the
 * brute-force broadphase (wo_brute_pairs) over the shapes a twin world
 * without a cap holds after the same batch, and a snapshot of the capped
 * world's registry and pair count taken before a refused batch. */
#include <stdio.h>
#include <stdlib.h>

#include "world_oracle.h"

Suite *world_paircap_suite(void);

#define IDS 64

static char ids[IDS][8];

static cq_world *make_world(double skin, long cap)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = 16, .max_pairs = cap}, &w),
                     CQ_OK);
    return w;
}

/* The brute-force pair count of w's shapes at skin. */
static int brute_count(const cq_world *w, double skin)
{
    wo_item *items;
    int n = wo_items(w, &items);
    int(*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs);
    free(pairs);
    free(items);
    return np;
}

/* A random op on a random id: shapes crowd into a small cube, so batches
 * make from no pairs to nearly all; filters sometimes keep pairs apart. */
static cq_world_op random_op(tu_rng *rng)
{
    const char *id = ids[(int)tu_uniform(rng, 0, IDS - 1e-9)];
    double u = tu_uniform(rng, 0, 1), side = 6;
    cq_xform at = wo_at(tu_uniform(rng, 0, side), tu_uniform(rng, 0, side), tu_uniform(rng, 0, side));
    if (u < 0.1)
        return wo_remove(id);
    if (u < 0.3)
        return wo_move(id, at, cq_v3(0, 0, 0));
    cq_shape s = tu_uniform(rng, 0, 1) < 0.5 ? wo_sphere(tu_uniform(rng, 0.2, 1.5))
                                              : wo_box(tu_uniform(rng, 0.1, 1), tu_uniform(rng, 0.1, 1), 0.5);
    uint32_t layer = tu_uniform(rng, 0, 1) < 0.8 ? 1 : 2, mask = tu_uniform(rng, 0, 1) < 0.8 ? ~0u : 2;
    return wo_upsert(id, s, at, cq_v3(0, 0, 0), layer, mask);
}

/* Random batches against a capped world and an uncapped twin: the capped
 * one refuses exactly when the twin's brute-force count passes the cap,
 * and is then unchanged; otherwise both hold the same shapes and pairs. */
START_TEST(test_cap_matches_brute_force)
{
    tu_rng rng = {0x9a17ca9 + (uint64_t)_i};
    double skin = 0.1;
    cq_world *twin = make_world(skin, 0), *w;
    int refused = 0, accepted = 0;
    for (int round = 0; round < 60; round++) {
        cq_world_op ops[12];
        int n = 1 + (int)tu_uniform(&rng, 0, 11.99);
        for (int k = 0; k < n; k++)
            ops[k] = random_op(&rng);
        int bad;
        cq_world *probe = make_world(skin, 0); /* the twin's state plus this batch */
        wo_item *before;
        int nb = wo_items(twin, &before);
        for (int k = 0; k < nb; k++)
            wo_apply(probe, &(cq_world_op){.kind = CQ_WORLD_UPSERT, .id = before[k].id,
                                           .shape = before[k].body.shape, .pose = before[k].body.pose,
                                           .layer = before[k].body.layer, .mask = before[k].body.mask}, 1);
        bool valid = cq_world_apply(probe, ops, n, &bad) == CQ_OK;
        int want = valid ? brute_count(probe, skin) : 0;
        cq_world_destroy(probe);
        /* w copies the twin under a cap between its count and 20 above:
         * shapes go in one by one, so the count only climbs to it */
        long cap = brute_count(twin, skin) + (long)tu_uniform(&rng, 0, 20);
        cap = cap > 0 ? cap : 1; /* 0 means no cap */
        w = make_world(skin, cap);
        for (int k = 0; k < nb; k++)
            wo_apply(w, &(cq_world_op){.kind = CQ_WORLD_UPSERT, .id = before[k].id, .shape = before[k].body.shape,
                                       .pose = before[k].body.pose, .layer = before[k].body.layer,
                                       .mask = before[k].body.mask}, 1);
        free(before);
        nb = wo_items(w, &before); /* w's own handles, for the comparison */
        int pairs_before = cq_world_get_stats(w).broadphase_pairs;
        int rc = cq_world_prepare(w, ops, n, &bad);
        if (!valid) {
            ck_assert_int_ne(rc, CQ_OK);
        } else if (want > cap) {
            ck_assert_msg(rc == CQ_ELIMIT, "round %d: %d pairs over cap %ld, rc %d", round, want, cap, rc);
            ck_assert_int_eq(bad, -1);
            wo_item *after;
            int na = wo_items(w, &after);
            ck_assert(wo_items_equal(before, nb, after, na));
            ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, pairs_before);
            ck_assert_int_eq(brute_count(w, skin), pairs_before);
            free(after);
            refused++;
        } else {
            ck_assert_msg(rc == CQ_OK, "round %d: %d pairs within cap %ld, rc %d", round, want, cap, rc);
            cq_world_commit(w, ops, n);
            ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, want);
            wo_apply(twin, ops, n);
            accepted++;
        }
        free(before);
        cq_world_destroy(w);
    }
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(accepted, 0);
    cq_world_destroy(twin);
}
END_TEST

/* A wider skin that would pass the cap is refused and changes nothing;
 * at or under the cap it is applied. */
START_TEST(test_skin_over_cap)
{
    cq_world *w = make_world(0, 0);
    for (int k = 0; k < 6; k++) { /* unit spheres 2.5 apart on x: no pairs at skin 0 */
        cq_world_op op = wo_upsert(ids[k], wo_sphere(1), wo_at(2.5 * k, 0, 0), cq_v3(0, 0, 0), 1, ~0u);
        wo_apply(w, &op, 1);
    }
    cq_world_settings s = {.skin = 0, .capacity = 16, .max_pairs = 5};
    ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
    s.skin = 100; /* every sphere meets every other: 15 pairs */
    ck_assert_int_eq(brute_count(w, 100), 15);
    ck_assert_int_eq(cq_world_check_pair_cap(w, &s), CQ_ELIMIT);
    ck_assert_int_eq(cq_world_configure(w, &s), CQ_ELIMIT);
    ck_assert_double_eq(cq_world_get_settings(w).skin, 0);
    ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, 0);
    s.skin = 0.6; /* neighbours only: 5 pairs, at the cap */
    ck_assert_int_eq(brute_count(w, 0.6), 5);
    ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
    ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, 5);
    cq_world_destroy(w);
}
END_TEST

/* A cap lowered below what the world holds is accepted: the world keeps
 * its pairs, may change without adding any, and may not add one. */
START_TEST(test_lowered_cap)
{
    cq_world *w = make_world(0, 0);
    for (int k = 0; k < 5; k++) { /* coincident unit spheres: 10 pairs */
        cq_world_op op = wo_upsert(ids[k], wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, ~0u);
        wo_apply(w, &op, 1);
    }
    ck_assert_int_eq(brute_count(w, 0), 10);
    cq_world_settings s = {.skin = 0, .capacity = 16, .max_pairs = 4};
    ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
    ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, 10);
    int bad;
    cq_world_op away = wo_move(ids[0], wo_at(1.5, 0, 0), cq_v3(0, 0, 0)); /* still meets all: 10 */
    ck_assert_int_eq(cq_world_apply(w, &away, 1, &bad), CQ_OK);
    away = wo_move(ids[0], wo_at(50, 0, 0), cq_v3(0, 0, 0)); /* meets none: 6 */
    ck_assert_int_eq(cq_world_apply(w, &away, 1, &bad), CQ_OK);
    ck_assert_int_eq(brute_count(w, 0), 6);
    cq_world_op back = wo_move(ids[0], wo_at(0, 0, 0), cq_v3(0, 0, 0)); /* 10 again: more than it holds */
    ck_assert_int_eq(cq_world_apply(w, &back, 1, &bad), CQ_ELIMIT);
    cq_world_op fresh = wo_upsert(ids[5], wo_sphere(1), wo_at(50, 0, 0), cq_v3(0, 0, 0), 1, ~0u); /* 7 */
    ck_assert_int_eq(cq_world_apply(w, &fresh, 1, &bad), CQ_ELIMIT);
    ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, 6);
    ck_assert_int_eq(brute_count(w, 0), 6);
    cq_world_destroy(w);
}
END_TEST

Suite *world_paircap_suite(void)
{
    for (int k = 0; k < IDS; k++)
        snprintf(ids[k], sizeof ids[k], "s%02d", k);
    Suite *s = suite_create("world_paircap");
    TCase *tc = tcase_create("cap");
    tcase_add_loop_test(tc, test_cap_matches_brute_force, 0, 4);
    tcase_add_test(tc, test_skin_over_cap);
    tcase_add_test(tc, test_lowered_cap);
    suite_add_tcase(s, tc);
    return s;
}
