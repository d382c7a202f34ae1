/* The per-world pair cap (cq_world_settings.max_pairs). Oracles: the
 * brute-force broadphase (wo_brute_pairs) over the shapes a twin world
 * without a cap holds after the same batch, a snapshot of the capped
 * world's registry and pair count taken before a refused batch, and for
 * the grid that bounds the pairs, the brute-force count (the bound is
 * never below it) and the grid made afresh from its records (the kept
 * one must equal it, slot by slot). */
#include <stdio.h>
#include <stdlib.h>

#include "world_internal.h"
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

/* The brute-force pairs of w's shapes after ops[0..n), in a copy without
 * a cap; -1 when the batch is invalid. */
static int pairs_after(const cq_world *w, const cq_world_op *ops, int n, double skin)
{
    cq_world *probe = make_world(skin, 0);
    wo_item *items;
    int ni = wo_items(w, &items);
    for (int k = 0; k < ni; k++)
        wo_apply(probe, &(cq_world_op){.kind = CQ_WORLD_UPSERT, .id = items[k].id, .shape = items[k].body.shape,
                                       .pose = items[k].body.pose, .layer = items[k].body.layer,
                                       .mask = items[k].body.mask}, 1);
    free(items);
    int bad;
    int pairs = cq_world_apply(probe, ops, n, &bad) == CQ_OK ? brute_count(probe, skin) : -1;
    cq_world_destroy(probe);
    return pairs;
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
        int want = pairs_after(twin, ops, n, skin);
        bool valid = want >= 0;
        wo_item *before;
        int nb = wo_items(twin, &before);
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

/* Every brute-force pair of w is counted by the grid: the two share a
 * cell, so the bound cannot leave it out. */
static void assert_pairs_counted(const cq_world *w, double skin, int round)
{
    wo_item *items;
    int n = wo_items(w, &items);
    int(*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs);
    for (int k = 0; k < np; k++) {
        int a = (int)items[pairs[k][0]].h.index, b = (int)items[pairs[k][1]].h.index;
        ck_assert_msg(cq__world_pair_grid_counts(w, a, b), "round %d: pair %s-%s not in a common cell", round,
                      items[pairs[k][0]].id, items[pairs[k][1]].id);
    }
    free(pairs);
    free(items);
}

/* A random op for the grid: sizes over five levels, small steps and
 * jumps, planes (wide and static), shape swaps, removals. */
static cq_world_op grid_op(tu_rng *rng, const cq_xform *at)
{
    const char *id = ids[(int)tu_uniform(rng, 0, IDS - 1e-9)];
    double u = tu_uniform(rng, 0, 1);
    if (u < 0.05)
        return wo_remove(id);
    if (u < 0.6) { /* a small step from where the id would be */
        cq_xform step = wo_at(tu_uniform(rng, -0.05, 0.05), tu_uniform(rng, -0.05, 0.05), tu_uniform(rng, 0, 0.05));
        int k = atoi(id + 1);
        step.p = cq_add(at[k].p, step.p);
        return wo_move(id, step, cq_v3(0, 0, 0));
    }
    cq_xform where = wo_at(tu_uniform(rng, -4, 4), tu_uniform(rng, -4, 4), tu_uniform(rng, -4, 4));
    if (u < 0.63)
        return wo_upsert(id, wo_plane(cq_v3(0, 0, 1), tu_uniform(rng, -8, -6)), cq_xform_identity(), cq_v3(0, 0, 0),
                         1, ~0u);
    double size = exp2(tu_uniform(rng, -3, 1)); /* 1/8 to 2: five levels, a grid worth keeping */
    return wo_upsert(id, wo_box(size, 0.5 * size, 0.25 * size), where, cq_v3(0, 0, 0), 1, ~0u);
}

/* Many batches on one world: after each, the kept grid equals one made
 * afresh from its records, each record covers its box, and the bound is
 * at least the brute-force pair count. */
START_TEST(test_grid_tracks_world)
{
    tu_rng rng = {0x5eed9e1d + (uint64_t)_i};
    double skin = 0.1;
    long cap = 1000; /* below 45 * 44 / 2: the grid is kept (each round sets its own) */
    cq_world *w = make_world(skin, cap);
    cq_xform at[IDS];
    for (int k = 0; k < IDS; k++) {
        at[k] = wo_at(tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4), tu_uniform(&rng, -4, 4));
        cq_world_op op = wo_upsert(ids[k], wo_box(0.3, 0.3, 0.3), at[k], cq_v3(0, 0, 0), 1, ~0u);
        wo_apply(w, &op, 1);
    }
    int audited = 0, refused = 0;
    for (int round = 0; round < 300; round++) {
        cq_world_op ops[8];
        int n = 1 + (int)tu_uniform(&rng, 0, 7.99), bad;
        for (int k = 0; k < n; k++)
            ops[k] = grid_op(&rng, at);
        /* a cap a little above the pairs held: some batches pass it */
        int before = cq_world_get_stats(w).broadphase_pairs, want = pairs_after(w, ops, n, skin);
        cq_world_settings s = cq_world_get_settings(w);
        s.max_pairs = cap = before + 1 + (long)tu_uniform(&rng, 0, 3);
        ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
        int rc = cq_world_apply(w, ops, n, &bad);
        if (want >= 0) /* refused exactly when the pairs would pass the cap */
            ck_assert_int_eq(rc, want > cap ? CQ_ELIMIT : CQ_OK);
        refused += rc == CQ_ELIMIT;
        if (rc != CQ_OK)
            continue; /* an invalid batch, or over the cap */
        for (int k = 0; k < n; k++)
            if (ops[k].kind != CQ_WORLD_REMOVE)
                at[atoi(ops[k].id + 1)] = ops[k].pose;
        long long bound, shapes = cq_world_get_stats(w).shapes;
        if (shapes * (shapes - 1) / 2 <= cap) { /* the cap out of reach: no grid */
            ck_assert(!cq__world_pair_grid_audit(w, &bound));
            continue;
        }
        ck_assert_msg(cq__world_pair_grid_audit(w, &bound), "round %d: the kept grid differs from a fresh one", round);
        ck_assert_msg(bound >= brute_count(w, skin), "round %d: bound %lld below %d pairs", round, bound,
                      brute_count(w, skin));
        assert_pairs_counted(w, skin, round);
        audited++;
    }
    ck_assert_int_gt(audited, 100);
    ck_assert_int_gt(refused, 10);
    cq_world_destroy(w);
}
END_TEST

/* A random box for the grid's own test: sizes over three levels. */
static cq_aabb grid_box(tu_rng *rng)
{
    cq_vec3 c = cq_v3(tu_uniform(rng, -3, 3), tu_uniform(rng, -3, 3), tu_uniform(rng, -3, 3));
    double h = exp2(tu_uniform(rng, -2, 1));
    return (cq_aabb){cq_v3(c.x - h, c.y - 0.5 * h, c.z - h), cq_v3(c.x + h, c.y + 0.5 * h, c.z + 0.3 * h)};
}

/* The bound a change would give (grid_total_after, which reads the table
 * and sums per-slot deltas) equals the bound once the change is entered
 * record by record (grid_enter), whenever the levels stay. */
START_TEST(test_grid_total_after)
{
    tu_rng rng = {0x6a1d + (uint64_t)_i};
    enum { N = 200 };
    grid_rec rec[N];
    world_grid g = {0};
    for (int k = 0; k < N; k++) {
        cq_aabb box = grid_box(&rng);
        rec[k] = cq__world_grid_rec_of(&box, tu_uniform(&rng, 0, 1) < 0.1);
        cq__world_grid_count(&g, &rec[k], +1);
    }
    ck_assert(cq__world_grid_table_alloc(&g, 4096, cq__world_grid_levels(&g)));
    for (int k = 0; k < N; k++)
        cq__world_grid_enter(&g, &rec[k], +1);
    int checked = 0;
    for (int round = 0; round < 200; round++) {
        int m = 1 + (int)tu_uniform(&rng, 0, 9.99), at[10];
        grid_rec old[10], new[10];
        for (int j = 0; j < m; j++) {
            at[j] = (int)tu_uniform(&rng, 0, N - 1e-9);
            for (int i = 0; i < j; i++)
                at[j] = at[j] == at[i] ? -1 : at[j];
            if (at[j] < 0) { /* each record once */
                j--, m--;
                continue;
            }
            cq_aabb box = grid_box(&rng);
            old[j] = rec[at[j]];
            bool gone = tu_uniform(&rng, 0, 1) < 0.1;
            new[j] = gone ? (grid_rec){.level = GRID_NONE} : cq__world_grid_rec_of(&box, old[j].is_static);
        }
        long long predicted;
        bool known = cq__world_grid_total_after(&g, old, new, m, &predicted);
        for (int j = 0; j < m; j++) {
            cq__world_grid_count(&g, &old[j], -1);
            cq__world_grid_enter(&g, &old[j], -1);
            cq__world_grid_count(&g, &new[j], +1);
            cq__world_grid_enter(&g, &new[j], +1);
            rec[at[j]] = new[j];
        }
        if (cq__world_grid_levels(&g) != g.present)
            break; /* a level came or went: a world would rebuild */
        ck_assert_msg(known, "round %d: the bound after was not found", round);
        ck_assert_msg(predicted == cq__world_grid_total(&g), "round %d: predicted %lld, entered %lld", round, predicted,
                      cq__world_grid_total(&g));
        checked++;
    }
    ck_assert_int_gt(checked, 20);
    cq__world_grid_free(&g);
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
    tcase_add_loop_test(tc, test_grid_tracks_world, 0, 3);
    tcase_add_loop_test(tc, test_grid_total_after, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}
