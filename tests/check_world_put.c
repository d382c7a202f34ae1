/* One shape at a time into a large world, as a server's PUT and DELETE
 * change it, through the structures that keep such a change from costing
 * a pass over the world: the broadphase's pair list (appended to and
 * holed, sorted lazily: sap_pairs.c), its query grid (members' boxes as
 * floats rounded outwards: sap_grid.c) and the pair cap's grid (a box of
 * a level the grid lacks joins a coarser one: world_grid.c). Each is
 * checked against brute force of the test's own: the pairs
 * (world_oracle.c), the closest hit of rays cast at every shape, the id
 * listing against the model's ids sorted by strcmp, the pair cap's
 * refusals against counted overlaps, and the pair grid's bound (every
 * overlapping pair shares a cell, the grid equals one made afresh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/collision.h"
#include "cq/status.h"
#include "cq/world.h"
#include "world_internal.h"
#include "world_oracle.h"

Suite *world_put_suite(void);

enum { POOL = 4200, START = 3000 };

typedef struct model {
    char id[POOL][20];
    bool alive[POOL];
} model;


/* A random rotation, so boxes' AABBs come in many sizes. */
static cq_xform random_pose(tu_rng *rng, double side)
{
    cq_xform t = {cq_v3(tu_uniform(rng, 0, side), tu_uniform(rng, 0, side), tu_uniform(rng, 0, side)),
                  tu_rotation(rng)};
    return t;
}

/* Mostly unit-sized boxes, one in twenty tiny (a level of its own in the
 * pair grid) and one in fifty large. */
static cq_world_op put_op(model *m, tu_rng *rng, int k, double side)
{
    double u = tu_uniform(rng, 0, 1), s = u < 0.05 ? 0.003 : u < 0.07 ? 2.5 : 0.5;
    cq_shape box = wo_box(s * tu_uniform(rng, 0.3, 1), s * tu_uniform(rng, 0.3, 1), s * tu_uniform(rng, 0.3, 1));
    m->alive[k] = true;
    return wo_upsert(m->id[k], box, random_pose(rng, side), cq_v3(0, 0, 0), 1, 1);
}

static void check_list(const cq_world *w, const model *m)
{
    wo_check_listing(w, m->id[0], sizeof m->id[0], m->alive, POOL);
}

/* Closest hits of random rays against a cast at every shape. */
static void check_rays(cq_world *w, tu_rng *rng, double side)
{
    wo_item *items;
    int n = wo_items(w, &items);
    for (int r = 0; r < 8; r++) {
        cq_vec3 d = cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1));
        cq_world_ray ray = {{cq_v3(tu_uniform(rng, 0, side), tu_uniform(rng, 0, side), tu_uniform(rng, 0, side)),
                             cq_scale(d, 1 / cq_len(d)), side},
                            ~0u};
        int best = -1;
        double dist = INFINITY;
        for (int k = 0; k < n; k++) {
            cq_ray_hit h;
            ck_assert_int_eq(cq_raycast(&items[k].body.shape, &items[k].body.pose, &ray.ray, &h), CQ_OK);
            if (h.hit && h.distance < dist) /* items in id order: a tie keeps the smaller id */
                best = k, dist = h.distance;
        }
        cq_world_ray_hit got;
        ck_assert_int_eq(cq_world_raycast(w, &ray, 1, &got, NULL), CQ_OK);
        ck_assert(got.hit.hit == (best >= 0));
        if (best >= 0) {
            ck_assert_int_eq(wo_find(items, n, got.id), best);
            ck_assert_double_eq_tol(got.hit.distance, dist, 1e-12);
        }
    }
    free(items);
}

/* The pair grid's bound: whole (equal to one made afresh) and counting
 * every brute-force pair in a common cell. */
static void check_pair_grid(const cq_world *w, double skin)
{
    long long bound;
    ck_assert(cq__world_pair_grid_audit(w, &bound));
    wo_item *items;
    int n = wo_items(w, &items);
    int(*pairs)[2];
    int np = wo_brute_pairs(items, n, skin, &pairs);
    ck_assert(bound >= np);
    for (int k = 0; k < np; k++)
        ck_assert(cq__world_pair_grid_counts(w, (int)items[pairs[k][0]].h.index, (int)items[pairs[k][1]].h.index));
    free(pairs);
    free(items);
}

static cq_world *make_world(model *m, tu_rng *rng, double side, double skin, long max_pairs)
{
    for (int k = 0; k < POOL; k++)
        snprintf(m->id[k], sizeof m->id[k], "%s%u", k % 3 ? "crate-" : "c", (unsigned)(tu_uniform(rng, 0, 1e6)) * 8 + k % 8);
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = POOL, .max_pairs = max_pairs}, &w),
                     CQ_OK);
    static cq_world_op ops[START];
    for (int k = 0; k < START; k++)
        ops[k] = put_op(m, rng, k, side);
    wo_apply(w, ops, START);
    return w;
}

/* PUT, DELETE, re-PUT and moves of single shapes, with the cap in reach
 * (n(n-1)/2 > max_pairs) so the pair grid is kept; every answer checked. */
START_TEST(test_single_puts_and_deletes)
{
    static model m;
    memset(&m, 0, sizeof m);
    tu_rng rng = {0x9a71};
    double side = 2.2 * cbrt(START), skin = 0.05;
    cq_world *w = make_world(&m, &rng, side, skin, 1000000);
    for (int round = 0; round < 1200; round++) {
        int k = (int)tu_uniform(&rng, 0, POOL - 1e-9);
        cq_world_op op;
        if (m.alive[k] && round % 4 == 1)
            op = wo_move(m.id[k], random_pose(&rng, side), cq_v3(0, 0, 0));
        else if (m.alive[k] && round % 2)
            op = wo_remove(m.id[k]);
        else
            op = put_op(&m, &rng, k, side);
        if (op.kind == CQ_WORLD_REMOVE)
            m.alive[k] = false;
        wo_apply(w, &op, 1);
        if (round % 25 == 0) {
            wo_check_pairs(w, skin);
            check_pair_grid(w, skin);
            check_list(w, &m);
        }
        if (round % 100 == 0) {
            check_rays(w, &rng, side);
            ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
            check_rays(w, &rng, side);
        }
    }
    wo_check_pairs(w, skin);
    check_pair_grid(w, skin);
    check_list(w, &m);
    cq_world_destroy(w);
}
END_TEST

/* Overlaps the broadphase tests (fattened boxes touching, filters aside). */
static long overlaps(const cq_world *w, double skin) { return wo_brute_count(w, skin, false); }

/* The cap's refusals, one PUT at a time: a clump of boxes put into a
 * world held near its cap is refused exactly when its overlaps would pass
 * the cap and what the world holds, and a refusal changes nothing. */
START_TEST(test_cap_refusals)
{
    static model m;
    memset(&m, 0, sizeof m);
    tu_rng rng = {0x9a72};
    double side = 2.2 * cbrt(START), skin = 0.05;
    cq_world *w = make_world(&m, &rng, side, skin, 1000000);
    long now = overlaps(w, skin);
    int refused = 0, passed = 0;
    for (int round = 0; round < 40; round++) {
        long cap = now + 2 + round % 5;
        ck_assert_int_eq(cq_world_configure(w, &(cq_world_settings){.skin = skin, .capacity = POOL, .max_pairs = cap}),
                         CQ_OK);
        int k = START + round;
        cq_world_op op = put_op(&m, &rng, k, side);
        if (round % 2) /* into the clump the earlier ones made, or anywhere */
            op.pose.p = cq_v3(side / 2 + round % 3 * 0.3, side / 2, side / 2);
        int bad, rc = cq_world_apply(w, &op, 1, &bad);
        long after = overlaps(w, skin);
        if (rc == CQ_ELIMIT) {
            m.alive[k] = false;
            ck_assert_int_eq(after, now);
            refused++;
        } else {
            ck_assert_int_eq(rc, CQ_OK);
            ck_assert_int_le(after, cap);
            now = after;
            passed++;
        }
        wo_check_pairs(w, skin);
        if (rc == CQ_ELIMIT) { /* what it would have made: past the cap */
            ck_assert_int_eq(cq_world_configure(w, &(cq_world_settings){.skin = skin, .capacity = POOL}), CQ_OK);
            wo_apply(w, &op, 1);
            ck_assert_int_gt(overlaps(w, skin), cap);
            cq_world_op rm = wo_remove(op.id);
            wo_apply(w, &rm, 1);
        }
        check_list(w, &m);
    }
    ck_assert_int_gt(refused, 5);
    ck_assert_int_gt(passed, 5);
    cq_world_destroy(w);
}
END_TEST

/* Boxes touching at a coordinate no float holds (10.5 + 2^-30) are a
 * pair whichever of the two the grid holds: the member's float box must
 * be rounded outwards. */
START_TEST(test_touching_off_floats)
{
    static model m;
    memset(&m, 0, sizeof m);
    tu_rng rng = {0x9a73};
    double side = 2.2 * cbrt(START), skin = 0;
    cq_world *w = make_world(&m, &rng, side, skin, 0);
    double c = 400 + 0x1p-30, h = 0.5; /* far from the random boxes; every sum exact */
    for (int axis = 0; axis < 3; axis++)
        for (int dir = -1; dir <= 1; dir += 2) {
            cq_vec3 p0 = cq_v3(c, c + 8 * axis + 4 * (dir > 0), c), p1 = p0;
            p0.x += 20 * axis;
            p1 = p0;
            if (axis == 0)
                p1.x += dir * 2 * h;
            else if (axis == 1)
                p1.y += dir * 2 * h;
            else
                p1.z += dir * 2 * h;
            char a[16], b[16];
            snprintf(a, sizeof a, "t%da%d", axis, dir + 1);
            snprintf(b, sizeof b, "t%db%d", axis, dir + 1);
            cq_world_op first = wo_upsert(a, wo_box(h, h, h), wo_at(p0.x, p0.y, p0.z), cq_v3(0, 0, 0), 1, 1);
            wo_apply(w, &first, 1); /* one PUT: into the grid */
            cq_world_op second = wo_upsert(b, wo_box(h, h, h), wo_at(p1.x, p1.y, p1.z), cq_v3(0, 0, 0), 1, 1);
            uint64_t queries = cq__sap_get_stats(w->sap).grid_queries;
            wo_apply(w, &second, 1); /* its query meets the first's float box */
            ck_assert_uint_eq(cq__sap_get_stats(w->sap).grid_queries, queries + 1);
            static cq_world_pair pairs[1 << 16];
            int n;
            ck_assert_int_eq(cq_world_pairs(w, pairs, 1 << 16, &n), CQ_OK);
            bool found = false;
            for (int k = 0; k < n; k++)
                found |= (pairs[k].a.index == wo_handle(w, a).index && pairs[k].b.index == wo_handle(w, b).index) ||
                         (pairs[k].a.index == wo_handle(w, b).index && pairs[k].b.index == wo_handle(w, a).index);
            ck_assert_msg(found, "axis %d dir %d: touching boxes not a pair", axis, dir);
        }
    wo_check_pairs(w, skin);
    cq_world_destroy(w);
}
END_TEST

Suite *world_put_suite(void)
{
    Suite *s = suite_create("world_put");
    TCase *tc = tcase_create("put");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_single_puts_and_deletes);
    tcase_add_test(tc, test_cap_refusals);
    tcase_add_test(tc, test_touching_off_floats);
    suite_add_tcase(s, tc);
    return s;
}
