/* The sweep-and-prune's query grid (sap_grid.c): a new item's pairs found
 * through the cells its box meets. The grid only speeds the search up, so
 * every case here is a large set (the grid is made past 2,048 dynamics)
 * under single inserts, removes, small steps, teleports and filter changes,
 * checked after every update against the brute-force oracle of
 * tests/sap_model.c (sm_update_and_check: pairs, slots, added flags, the
 * removed list). Sizes span many levels (half extents 0.001 to 4, log-
 * uniform, and a few zero-size ones), positions are on a 1/8 grid so that
 * touching bounds come up, and some items are too large or too far out for
 * a cell. The counters show the grid was made and answered. */
#include <math.h>
#include <stdlib.h>

#include "cq/status.h"
#include "sap.h"
#include "sap_model.h"
#include "testutil.h"

Suite *sap_grid_suite(void);

static double snap(double v) { return round(v * 8) / 8; }

/* Sizes of one scale (as a game's crates), else of many. */
static bool one_scale;

static double half_extent(tu_rng *rng)
{
    double u = tu_uniform(rng, 0, 1);
    if (one_scale)
        return tu_uniform(rng, 0.2, 0.6);
    return u < 0.02 ? 0 : 0.001 * pow(4000, tu_uniform(rng, 0, 1));
}

static cq_aabb box_at(cq_vec3 c, double h)
{
    return (cq_aabb){cq_v3(snap(c.x - h), snap(c.y - h), snap(c.z - h)), cq_v3(snap(c.x + h), snap(c.y + h), snap(c.z + h))};
}

static cq_aabb random_box(tu_rng *rng, double side)
{
    cq_vec3 c = cq_v3(tu_uniform(rng, 0, side), tu_uniform(rng, 0, side), tu_uniform(rng, 0, side));
    return box_at(c, half_extent(rng));
}

/* A box no cell holds: beyond 2^30 cells of its level, or infinite. */
static cq_aabb far_box(tu_rng *rng, int k)
{
    cq_aabb b = random_box(rng, 20);
    if (k % 3 == 0)
        b.max.x = INFINITY;
    else if (k % 3 == 1)
        b = (cq_aabb){cq_v3(1e12, 0, 0), cq_v3(1e12 + 1e-9, 1e-9, 1e-9)};
    else
        b = (cq_aabb){cq_v3(-1e300, 0, 0), cq_v3(1e300, 1, 1)};
    return b;
}

typedef struct grid_world {
    sm_model m;
    cq_sap *sap;
    sm_history h;
    tu_rng rng;
    double side;
    int next; /* the next free id */
} grid_world;

static void put_random(grid_world *w, int id)
{
    uint32_t layer = 1u << (id % 3), mask = id % 7 == 0 ? ~layer : ~0u;
    sm_put(w->sap, &w->m, id, random_box(&w->rng, w->side), layer, mask, id % 10 == 0);
}

/* n items in a broadphase for room ids, a model for cap. */
static grid_world make(int n, int room, int cap, uint64_t seed)
{
    grid_world w = {.m = sm_model_make(cap), .rng = {seed}, .side = 2.5 * cbrt(n), .next = n};
    ck_assert_int_eq(cq__sap_create(room, &w.sap), CQ_OK);
    for (int id = 0; id < n; id++)
        put_random(&w, id);
    sm_update_and_check(w.sap, &w.m, &w.h);
    return w;
}

static void done(grid_world *w)
{
    cq__sap_destroy(w->sap);
    sm_history_free(&w->h);
    sm_model_free(&w->m);
}

/* A live item, or -1 (after a few tries). */
static int pick_alive(grid_world *w, bool dynamic)
{
    for (int t = 0; t < 50; t++) {
        int id = (int)tu_uniform(&w->rng, 0, w->next);
        if (w->m.alive[id] && !(dynamic && w->m.is_static[id]))
            return id;
    }
    return -1;
}

/* One of the changes a round makes, by its kind. */
static void change(grid_world *w, int kind)
{
    int id = pick_alive(w, true);
    if (kind == 0 && w->next < w->m.cap) {
        put_random(w, w->next++);
    } else if (kind == 1 && id >= 0) {
        sm_drop(w->sap, &w->m, id);
    } else if (kind == 2 && id >= 0) { /* a small step, across a cell now and then */
        cq_vec3 d = cq_v3(tu_uniform(&w->rng, -0.4, 0.4), tu_uniform(&w->rng, -0.4, 0.4), 0.125);
        sm_shift(w->sap, &w->m, id, (cq_aabb){cq_add(w->m.box[id].min, d), cq_add(w->m.box[id].max, d)});
    } else if (kind == 3 && id >= 0) { /* a teleport, a new size too */
        sm_shift(w->sap, &w->m, id, random_box(&w->rng, w->side));
    } else if (kind == 4 && id >= 0) {
        sm_refilter(w->sap, &w->m, id, 1, w->m.mask[id] == ~0u ? 2 : ~0u);
    } else if (kind == 5 && id >= 0) { /* gone and back under the same id */
        sm_drop(w->sap, &w->m, id);
        put_random(w, id);
    }
}

/* rounds of one to three random changes, each round checked. */
static void churn(grid_world *w, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        int n = 1 + (int)tu_uniform(&w->rng, 0, 3);
        for (int k = 0; k < n; k++)
            change(w, (int)tu_uniform(&w->rng, 0, 6));
        sm_update_and_check(w->sap, &w->m, &w->h);
    }
}

START_TEST(test_grid_churn)
{
    grid_world w = make(4000, 4600, 4600, 0x6e1d01);
    uint64_t sweeps = cq__sap_get_stats(w.sap).sweeps;
    churn(&w, 400);
    cq_sap_stats st = cq__sap_get_stats(w.sap);
    ck_assert_uint_eq(st.grid_builds, 1);
    ck_assert_uint_gt(st.grid_queries, 100);
    ck_assert_uint_eq(st.sweeps, sweeps); /* every new item was queried */
    done(&w);
}
END_TEST

/* Items no cell holds (infinite, too far out for their level, too wide
 * for a double's extent) join and leave: few are read by every query,
 * many turn the grid away, and the answers stay exact both ways. */
START_TEST(test_grid_far_items)
{
    grid_world w = make(4000, 4200, 4200, 0x6e1d02);
    for (int k = 0; k < 60; k++) {
        sm_put(w.sap, &w.m, w.next++, far_box(&w.rng, k), 1, ~0u, false);
        sm_update_and_check(w.sap, &w.m, &w.h);
        churn(&w, 2);
    }
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_queries, 10);
    done(&w);
}
END_TEST

/* Every item steps at once (moves in cells, across cells, the bulk path
 * for a teleport of half of them), then single inserts again; and the
 * storage grows under the grid, which is made again. */
START_TEST(test_grid_motion_and_growth)
{
    grid_world w = make(3000, 3000, 9000, 0x6e1d03);
    churn(&w, 20);
    for (int round = 0; round < 6; round++) {
        for (int id = 0; id < w.next; id++) {
            if (!w.m.alive[id] || w.m.is_static[id])
                continue;
            cq_aabb b = w.m.box[id];
            cq_vec3 d = cq_v3(0.3 * sin(id + round), 0.3 * cos(id), 0.05 * round);
            if (round == 3 && id % 2)
                b = random_box(&w.rng, w.side);
            else
                b = (cq_aabb){cq_add(b.min, d), cq_add(b.max, d)};
            sm_shift(w.sap, &w.m, id, b);
        }
        sm_update_and_check(w.sap, &w.m, &w.h);
        churn(&w, 10);
    }
    /* Frames of motion and no new item: the grid is dropped, then made
     * again by the next insert. */
    uint64_t builds = cq__sap_get_stats(w.sap).grid_builds;
    for (int round = 0; round < 12; round++) {
        for (int id = 0; id < w.next; id++)
            if (w.m.alive[id] && !w.m.is_static[id]) {
                cq_vec3 d = cq_v3(0.1, -0.05 * (id % 3), 0.02);
                sm_shift(w.sap, &w.m, id, (cq_aabb){cq_add(w.m.box[id].min, d), cq_add(w.m.box[id].max, d)});
            }
        sm_update_and_check(w.sap, &w.m, &w.h);
    }
    churn(&w, 10);
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_builds, builds);
    builds = cq__sap_get_stats(w.sap).grid_builds;
    while (w.next < 8000) /* past the capacity: the item storage grows */
        put_random(&w, w.next++);
    sm_update_and_check(w.sap, &w.m, &w.h);
    churn(&w, 40);
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grows, 0);
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_builds, builds);
    done(&w);
}
END_TEST

/* A staged item (new, not yet in the arrays) that moves changes its box at
 * once, not through the moved list: its cell must follow, or the next new
 * item beside its new place misses the pair. */
START_TEST(test_grid_staged_moves)
{
    one_scale = true; /* a box of many cells of the common level goes along the arrays */
    grid_world w = make(4000, 4100, 4100, 0x6e1d04);
    churn(&w, 5); /* the grid is made */
    for (int k = 0; k < 20; k++) {
        int a = w.next++, b = w.next++;
        cq_aabb far = box_at(cq_v3(-40 - 3 * k, 50, 50), 0.5);
        sm_put(w.sap, &w.m, a, random_box(&w.rng, w.side), 1, ~0u, false);
        sm_update_and_check(w.sap, &w.m, &w.h);
        sm_shift(w.sap, &w.m, a, far); /* still staged */
        sm_update_and_check(w.sap, &w.m, &w.h);
        sm_put(w.sap, &w.m, b, far, 1, ~0u, false);
        sm_update_and_check(w.sap, &w.m, &w.h);
        ck_assert_int_ge(cq__sap_find(w.sap, a, b), 0);
    }
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_queries, 20);
    done(&w);
}
END_TEST

/* A placed item that moves to another cell and takes a new filter in the
 * same update is moved list and fresh list at once: its cell must be the
 * one of its new box, or a new item put beside it there misses the pair. */
START_TEST(test_grid_move_and_refilter)
{
    one_scale = true;
    grid_world w = make(4000, 4100, 4100, 0x6e1d06);
    churn(&w, 5); /* the grid is made */
    for (int k = 0; k < 20; k++) {
        int a = pick_alive(&w, true), b = w.next++;
        ck_assert_int_ge(a, 0);
        cq_aabb far = box_at(cq_v3(-40 - 3 * k, 50, 50), 0.5);
        sm_shift(w.sap, &w.m, a, far);
        sm_refilter(w.sap, &w.m, a, 15, ~0u); /* put_random's layers are one bit */
        sm_update_and_check(w.sap, &w.m, &w.h);
        sm_put(w.sap, &w.m, b, far, 1, ~0u, false);
        sm_update_and_check(w.sap, &w.m, &w.h);
        ck_assert_int_ge(cq__sap_find(w.sap, a, b), 0);
    }
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_queries, 20);
    done(&w);
}
END_TEST

/* Boxes of one scale, as in a game, so the grid answers nearly every new
 * item and judges the few moves of each round against a staging list
 * that grows to one dynamic in sixteen before it is merged in. */
START_TEST(test_grid_one_scale_churn)
{
    one_scale = true;
    grid_world w = make(4000, 6000, 6000, 0x6e1d05);
    churn(&w, 1200);
    ck_assert_uint_gt(cq__sap_get_stats(w.sap).grid_queries, 800);
    done(&w);
}
END_TEST

Suite *sap_grid_suite(void)
{
    Suite *s = suite_create("sap_grid");
    TCase *tc = tcase_create("grid");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_grid_churn);
    tcase_add_test(tc, test_grid_far_items);
    tcase_add_test(tc, test_grid_motion_and_growth);
    tcase_add_test(tc, test_grid_staged_moves);
    tcase_add_test(tc, test_grid_move_and_refilter);
    tcase_add_test(tc, test_grid_one_scale_churn);
    suite_add_tcase(s, tc);
    return s;
}
