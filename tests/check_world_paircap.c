/* The per-world pair cap (cq_world_settings.max_pairs). Oracles: the
 * brute-force broadphase (wo_brute_pairs) over the shapes a twin world
 * without a cap holds after the same batch, a snapshot of the capped
 * world's registry and pair count taken before a refused batch, and for
 * the grid that bounds the pairs, the brute-force count (the bound is
 * never below it) and the grid made afresh from its records (the kept
 * one must equal it, slot by slot). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int brute_count(const cq_world *w, double skin) { return wo_brute_count(w, skin, true); }

static int brute_overlaps(const cq_world *w, double skin) { return wo_brute_count(w, skin, false); }

/* The brute-force pairs (or with filters false, overlaps) of w's shapes
 * after ops[0..n), in a copy without a cap; -1 when the batch is invalid. */
static int pairs_after(const cq_world *w, const cq_world_op *ops, int n, double skin, bool filters)
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
    int pairs = cq_world_apply(probe, ops, n, &bad) == CQ_OK ? wo_brute_count(probe, skin, filters) : -1;
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
 * one refuses exactly when the twin's brute-force overlap count passes
 * the cap, and is then unchanged; otherwise both hold the same shapes and
 * pairs. */
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
        int want = pairs_after(twin, ops, n, skin, true), over = pairs_after(twin, ops, n, skin, false);
        bool valid = want >= 0;
        wo_item *before;
        int nb = wo_items(twin, &before);
        /* w copies the twin under a cap between its count and 20 above:
         * shapes go in one by one, so the count only climbs to it */
        long cap = brute_overlaps(twin, skin) + (long)tu_uniform(&rng, 0, 20);
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
        } else if (over > cap) {
            ck_assert_msg(rc == CQ_ELIMIT, "round %d: %d overlaps over cap %ld, rc %d", round, over, cap, rc);
            ck_assert_int_eq(bad, -1);
            wo_item *after;
            int na = wo_items(w, &after);
            ck_assert(wo_items_equal(before, nb, after, na));
            ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, pairs_before);
            ck_assert_int_eq(brute_count(w, skin), pairs_before);
            free(after);
            refused++;
        } else {
            ck_assert_msg(rc == CQ_OK, "round %d: %d overlaps within cap %ld, rc %d", round, over, cap, rc);
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

/* Coincident spheres whose filters refuse each other make no pairs, but
 * the broadphase tests each of their n(n - 1) / 2 overlaps: the cap counts
 * them. A world already past the cap that way (built without one) may
 * change, but not gain an overlap. */
START_TEST(test_filtered_overlaps_count)
{
    cq_world *w = make_world(0, 100);
    int bad, k;
    for (k = 0; k < 14; k++) { /* 91 overlaps, no pair */
        cq_world_op op = wo_upsert(ids[k], wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 0);
        ck_assert_int_eq(cq_world_apply(w, &op, 1, &bad), CQ_OK);
    }
    cq_world_op one_more = wo_upsert(ids[k], wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 0); /* 105 */
    ck_assert_int_eq(brute_overlaps(w, 0), 91);
    ck_assert_int_eq(cq_world_apply(w, &one_more, 1, &bad), CQ_ELIMIT);
    ck_assert_int_eq(cq_world_get_stats(w).shapes, 14);
    cq_world_destroy(w);

    w = make_world(0, 0);
    for (k = 0; k < 20; k++) { /* 190 overlaps, no pair */
        cq_world_op op = wo_upsert(ids[k], wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 0);
        wo_apply(w, &op, 1);
    }
    cq_world_settings s = {.skin = 0, .capacity = 16, .max_pairs = 100};
    ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
    cq_world_op step = wo_move(ids[0], wo_at(0.5, 0, 0), cq_v3(0, 0, 0)); /* still 190 */
    ck_assert_int_eq(cq_world_apply(w, &step, 1, &bad), CQ_OK);
    cq_world_op away = wo_move(ids[0], wo_at(50, 0, 0), cq_v3(0, 0, 0)); /* 171 */
    ck_assert_int_eq(cq_world_apply(w, &away, 1, &bad), CQ_OK);
    ck_assert_int_eq(brute_overlaps(w, 0), 171);
    cq_world_op back = wo_move(ids[0], wo_at(0, 0, 0), cq_v3(0, 0, 0)); /* 190: more than it has */
    ck_assert_int_eq(cq_world_apply(w, &back, 1, &bad), CQ_ELIMIT);
    ck_assert_int_eq(brute_overlaps(w, 0), 171);
    ck_assert_int_eq(cq_world_get_stats(w).broadphase_pairs, 0);
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
        int before = cq_world_get_stats(w).broadphase_pairs, want = pairs_after(w, ops, n, skin, false);
        cq_world_settings s = cq_world_get_settings(w);
        s.max_pairs = cap = before + 1 + (long)tu_uniform(&rng, 0, 3);
        ck_assert_int_eq(cq_world_configure(w, &s), CQ_OK);
        long long bound0, bound;
        bool had = cq__world_pair_grid_audit(w, &bound0);
        int rc = cq_world_prepare(w, ops, n, &bad);
        if (rc == CQ_OK && round % 5 == 0) { /* abandoned: the check's changes to the grid taken out */
            cq_world_abandon(w);
            ck_assert_msg(cq__world_pair_grid_audit(w, &bound) == had && (!had || bound == bound0),
                          "round %d: the grid changed with an abandoned batch", round);
            continue;
        }
        if (rc == CQ_OK)
            cq_world_commit(w, ops, n);
        if (want >= 0) /* refused exactly when the overlaps would pass the cap */
            ck_assert_int_eq(rc, want > cap ? CQ_ELIMIT : CQ_OK);
        refused += rc == CQ_ELIMIT;
        if (rc != CQ_OK) { /* an invalid batch, or over the cap: the grid as it was */
            ck_assert_msg(cq__world_pair_grid_audit(w, &bound) == had && (!had || bound == bound0),
                          "round %d: the grid changed with a refused batch", round);
            continue;
        }
        for (int k = 0; k < n; k++)
            if (ops[k].kind != CQ_WORLD_REMOVE)
                at[atoi(ops[k].id + 1)] = ops[k].pose;
        long long shapes = cq_world_get_stats(w).shapes;
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

/* A grid made afresh from rec[0..n) into g (a table of slots slots). */
static void grid_fresh(world_grid *g, const grid_rec *rec, int n, size_t slots, uint64_t present)
{
    *g = (world_grid){0};
    ck_assert(cq__world_grid_table_alloc(g, (long)slots, present));
    for (int k = 0; k < n; k++) {
        cq__world_grid_count(g, &rec[k], +1);
        cq__world_grid_enter(g, &rec[k], +1);
    }
}

/* Whether two grids hold the same counts, sum and table. */
static bool grid_equal(const world_grid *a, const world_grid *b)
{
    return a->slots == b->slots && a->sum == b->sum && a->cells == b->cells && a->items == b->items &&
           a->dynamics == b->dynamics && a->wide_d == b->wide_d && a->wide_s == b->wide_s &&
           memcmp(a->level_count, b->level_count, sizeof a->level_count) == 0 &&
           memcmp(a->table, b->table, a->slots * sizeof *a->table) == 0;
}

/* A record's change (grid_change, which enters only the memberships the
 * old and the new record do not share) leaves the grid as a fresh grid of
 * the new records would be, slot by slot, whenever the levels stay. Small
 * steps (the common case of a tick) and jumps to other levels and kinds
 * are mixed. */
START_TEST(test_grid_change)
{
    tu_rng rng = {0x6a1d + (uint64_t)_i};
    enum { N = 200 };
    grid_rec rec[N];
    cq_aabb box[N];
    world_grid g = {0};
    for (int k = 0; k < N; k++) {
        box[k] = grid_box(&rng);
        rec[k] = cq__world_grid_rec_of(&box[k], tu_uniform(&rng, 0, 1) < 0.1, 0);
        cq__world_grid_count(&g, &rec[k], +1);
    }
    uint64_t present = cq__world_grid_levels(&g);
    grid_fresh(&g, rec, N, 4096, present);
    int checked = 0, steps = 0;
    for (int round = 0; round < 400; round++) {
        int k = (int)tu_uniform(&rng, 0, N - 1e-9);
        grid_rec old = rec[k], new;
        double u = tu_uniform(&rng, 0, 1), d = tu_uniform(&rng, -0.3, 0.3);
        if (u < 0.7) { /* a step: the same level, often the next cell */
            box[k].min.x += d, box[k].max.x += d, box[k].min.z -= d, box[k].max.z -= d;
            new = cq__world_grid_rec_of(&box[k], old.is_static, present);
            steps += new.level == old.level && !cq__world_grid_rec_same(&old, &new);
        } else if (u < 0.95) {
            box[k] = grid_box(&rng);
            new = cq__world_grid_rec_of(&box[k], u < 0.8 ? !old.is_static : old.is_static, present);
        } else {
            new = (grid_rec){.level = GRID_NONE};
        }
        grid_queue q = {.g = &g};
        cq__world_grid_change(&q, &old, &new);
        cq__world_grid_flush(&q);
        rec[k] = new;
        if (cq__world_grid_levels(&g) & ~present)
            break; /* a level came: a world would rebuild */
        world_grid fresh;
        grid_fresh(&fresh, rec, N, 4096, present);
        ck_assert_msg(!g.overflow && grid_equal(&g, &fresh), "round %d: the changed grid differs from a fresh one",
                      round);
        cq__world_grid_free(&fresh);
        checked++;
    }
    ck_assert_int_gt(checked, 50);
    ck_assert_int_gt(steps, 10);
    cq__world_grid_free(&g);
}
END_TEST

/* Undoing changes in reverse order gives back the grid before them. */
START_TEST(test_grid_change_undo)
{
    tu_rng rng = {0x7b2e + (uint64_t)_i};
    enum { N = 100, M = 30 };
    grid_rec rec[N], from[M], to[M];
    world_grid g = {0}, before;
    for (int k = 0; k < N; k++) {
        cq_aabb box = grid_box(&rng);
        rec[k] = cq__world_grid_rec_of(&box, false, 0);
        cq__world_grid_count(&g, &rec[k], +1);
    }
    uint64_t present = cq__world_grid_levels(&g);
    grid_fresh(&g, rec, N, 2048, present);
    grid_fresh(&before, rec, N, 2048, present);
    grid_queue q = {.g = &g}; /* one queue for all: as a batch enters them */
    for (int j = 0; j < M; j++) { /* the same record may change twice */
        int at = (int)tu_uniform(&rng, 0, N - 1e-9);
        cq_aabb box = grid_box(&rng);
        from[j] = rec[at];
        to[j] = rec[at] = cq__world_grid_rec_of(&box, false, present);
        cq__world_grid_change(&q, &from[j], &to[j]);
    }
    cq__world_grid_flush(&q);
    for (int j = M - 1; j >= 0; j--)
        cq__world_grid_change(&q, &to[j], &from[j]);
    cq__world_grid_flush(&q);
    ck_assert(!g.overflow && grid_equal(&g, &before));
    cq__world_grid_free(&g);
    cq__world_grid_free(&before);
}
END_TEST

/* One coordinate for test_grid_covers: a cell bound b itself, a step of
 * an ulp either side of it, or a point well inside or outside. */
static double near_bound(tu_rng *rng, double b, double c)
{
    double u = tu_uniform(rng, 0, 6);
    return u < 1 ? b : u < 2 ? nextafter(b, INFINITY) : u < 3 ? nextafter(b, -INFINITY) : b + tu_uniform(rng, -2, 2) * c;
}

/* x / c for a power of two c, its sign kept when it underflows to zero
 * (x the least subnormal below zero, in a cell ending at 0). */
static double quotient(double x, double c)
{
    double q = x / c;
    return q == 0 && x != 0 ? copysign(0.5, x) : q;
}

/* cq__world_grid_rec_covers (two axes in vector lanes where it can)
 * against the rule written with divisions: the cells of side c from lo to
 * lo + span hold [min, max] on an axis when floor(min / c) >= lo and
 * floor(max / c) <= lo + span (c a power of two: exact quotients), and a
 * NaN is held by none. Records of every level, boxes on the cells' edges. */
START_TEST(test_grid_covers)
{
    tu_rng rng = {0xc0e75};
    int in = 0, out = 0;
    for (int t = 0; t < 200000; t++) {
        grid_rec r = {.level = (int8_t)tu_uniform(&rng, 0, 63.99), .span = (uint8_t)tu_uniform(&rng, 0, 7.99)};
        double c = ldexp(1, r.level + GRID_LO);
        for (int k = 0; k < 3; k++)
            r.lo[k] = (int32_t)(tu_uniform(&rng, 0, 1) < 0.5 ? tu_uniform(&rng, -5, 5) : tu_uniform(&rng, -1e9, 1e9));
        double mn[3], mx[3];
        bool want = true;
        for (int k = 0; k < 3; k++) {
            int64_t hi = (int64_t)r.lo[k] + (r.span >> k & 1);
            mn[k] = near_bound(&rng, r.lo[k] * c, c);
            mx[k] = near_bound(&rng, (double)(hi + 1) * c, c);
            if (tu_uniform(&rng, 0, 200) < 1)
                *(tu_uniform(&rng, 0, 1) < 0.5 ? &mn[k] : &mx[k]) = NAN;
            want &= floor(quotient(mn[k], c)) >= r.lo[k] && floor(quotient(mx[k], c)) <= hi;
        }
        cq_aabb box = {{mn[0], mn[1], mn[2]}, {mx[0], mx[1], mx[2]}};
        ck_assert_msg(cq__world_grid_rec_covers(&r, &box) == want, "trial %d: level %d span %d", t, r.level, r.span);
        *(want ? &in : &out) += 1;
    }
    grid_rec wide = {.level = GRID_WIDE}, none = {.level = GRID_NONE};
    cq_aabb zero = {{0, 0, 0}, {0, 0, 0}};
    ck_assert(!cq__world_grid_rec_covers(&wide, &zero) && !cq__world_grid_rec_covers(&none, &zero));
    ck_assert_int_gt(in, 2000);
    ck_assert_int_gt(out, 2000);
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
    tcase_add_test(tc, test_filtered_overlaps_count);
    tcase_add_loop_test(tc, test_grid_tracks_world, 0, 3);
    tcase_add_loop_test(tc, test_grid_change, 0, 3);
    tcase_add_loop_test(tc, test_grid_change_undo, 0, 3);
    tcase_add_test(tc, test_grid_covers);
    suite_add_tcase(s, tc);
    return s;
}
