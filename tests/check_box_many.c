/* cq__collide_many against n calls of cq_collide: the same contacts field
 * for field and the same counters, on the benchmark's OBB pairs and on
 * random pairs with skins, caches, both orders and other shapes mixed in;
 * and its verdicts against the eight-corner projection oracle. And a box
 * pair named B first against the same pair named A first, mirrored by this
 * file's own rule: cq__box_box answers a pair in the caller's order and
 * settles the pairs apart on a face axis without the canonical query. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "box_many.h"
#include "narrow.h"
#include "cq/counters.h"
#include "testutil.h"

/* Every field a caller reads, points up to the count. */
static void assert_same_contact(const cq_contact *x, const cq_contact *y, int i)
{
    ck_assert_msg(x->overlap == y->overlap && x->has_normal == y->has_normal && x->has_distance == y->has_distance,
                  "pair %d: verdicts differ", i);
    ck_assert_msg(memcmp(&x->normal, &y->normal, sizeof x->normal) == 0, "pair %d: normals differ", i);
    ck_assert(x->depth == y->depth || (isnan(x->depth) && isnan(y->depth)));
    ck_assert(x->distance == y->distance);
    ck_assert(memcmp(&x->witness_a, &y->witness_a, sizeof x->witness_a) == 0);
    ck_assert(memcmp(&x->witness_b, &y->witness_b, sizeof x->witness_b) == 0);
    ck_assert_int_eq(x->algorithm, y->algorithm);
    ck_assert_int_eq(x->fallback_reason, y->fallback_reason);
    ck_assert_int_eq(x->fallback_action, y->fallback_action);
    ck_assert_int_eq(x->sat_axis, y->sat_axis);
    ck_assert(x->sat_gap == y->sat_gap);
    ck_assert_int_eq(x->normal_axis, y->normal_axis);
    ck_assert_int_eq(x->point_count, y->point_count);
    for (int k = 0; k < x->point_count; k++) {
        ck_assert_msg(memcmp(&x->points[k].position, &y->points[k].position, sizeof(cq_vec3)) == 0,
                      "pair %d point %d differs", i, k);
        ck_assert(x->points[k].depth == y->points[k].depth);
        ck_assert(memcmp(&x->points[k].feature, &y->points[k].feature, sizeof(cq_feature)) == 0);
    }
}

enum { N = 10000 };

/* Runs both ways over q[0..n) and compares contacts and counters. */
static void compare_many(cq_pair_query *q, int n)
{
    static cq_contact one[N], many[N];
    static cq_counters c1, c2;
    memset(&c1, 0, sizeof c1), memset(&c2, 0, sizeof c2);
    for (int i = 0; i < n; i++) {
        q[i].counters = &c1;
        ck_assert_int_eq(cq_collide(&q[i], &one[i]), CQ_OK);
    }
    for (int i = 0; i < n; i++)
        q[i].counters = &c2;
    ck_assert_int_eq(cq__collide_many(q, n, many), CQ_OK);
    for (int i = 0; i < n; i++)
        assert_same_contact(&one[i], &many[i], i);
    uint64_t s1[CQ_CTR_COUNT] = {0}, s2[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&c1, s1), cq_counters_snapshot(&c2, s2);
    for (int k = 0; k < CQ_CTR_COUNT; k++)
        ck_assert_msg(s1[k] == s2[k], "counter %d: %llu one call a pair, %llu in the batch", k,
                      (unsigned long long)s1[k], (unsigned long long)s2[k]);
}

static cq_obb fa[N], fb[N];
static cq_shape sa[N], sb[N];
static cq_pair_query pq[N];

static void file_queries(int n, double skin, bool skip_distance)
{
    for (int i = 0; i < n; i++) {
        sa[i] = (cq_shape){.type = CQ_BOX, .box = {fa[i].half}}, sb[i] = (cq_shape){.type = CQ_BOX, .box = {fb[i].half}};
        pq[i] = (cq_pair_query){.a = &sa[i], .xa = {fa[i].center, fa[i].axes}, .b = &sb[i],
                                .xb = {fb[i].center, fb[i].axes}, .skin = skin, .skip_distance = skip_distance};
    }
}

START_TEST(many_matches_one_call_on_the_pairs_file)
{
    ck_assert_int_eq(tu_read_pairs(fa, fb, N), N);
    const double skins[] = {0, 0.05};
    int overlaps = 0;
    for (int s = 0; s < 2; s++)
        for (int skip = 0; skip < 2; skip++) {
            file_queries(N, skins[s], skip);
            compare_many(pq, N);
        }
    /* Verdicts by the corners' projections on the 15 axes: the pairs
     * clearly overlapping or clearly apart (skin 0). */
    file_queries(N, 0, true);
    static cq_contact c[N];
    ck_assert_int_eq(cq__collide_many(pq, N, c), CQ_OK);
    for (int i = 0; i < N; i++) {
        double pen = tu_obb_min_penetration(&fa[i], &fb[i]);
        if (fabs(pen) < 1e-9)
            continue;
        ck_assert_msg(c[i].overlap == (pen > 0), "pair %d: overlap %d, penetration %g", i, c[i].overlap, pen);
        overlaps += c[i].overlap;
    }
    ck_assert_int_gt(overlaps, 4000);
}
END_TEST

/* Random boxes in both orders, each with a cache from a previous answer
 * (hysteresis keeps its axis), some skipping the manifold, a sphere pair
 * every seventh: groups of four form around the others. */
START_TEST(many_matches_one_call_with_caches_and_mixed_shapes)
{
    enum { M = 2003 };
    static cq_pair_cache cache[M];
    static cq_contact first[M];
    tu_rng rng = {4242};
    for (int i = 0; i < M; i++) {
        double s = i % 7 == 3 ? 0 : 1;
        sa[i] = i % 7 == 3 ? (cq_shape){.type = CQ_SPHERE, .sphere = {0.7}}
                           : (cq_shape){.type = CQ_BOX, .box = {cq_v3(tu_uniform(&rng, 0.2, 2), tu_uniform(&rng, 0.2, 2),
                                                                     tu_uniform(&rng, 0.2, 2))}};
        sb[i] = (cq_shape){.type = CQ_BOX, .box = {cq_v3(tu_uniform(&rng, 0.2, 2), tu_uniform(&rng, 0.2, 2),
                                                         tu_uniform(&rng, 0.2, 2) * s + (1 - s))}};
        cq_xform xa = tu_pose(&rng, 2), xb = tu_pose(&rng, 2);
        bool flip = i & 1;
        pq[i] = (cq_pair_query){.a = flip ? &sb[i] : &sa[i], .xa = flip ? xb : xa, .b = flip ? &sa[i] : &sb[i],
                                .xb = flip ? xa : xb, .skin = 0.02 * (i % 3), .skip_distance = i % 5 == 0,
                                .skip_manifold = i % 11 == 0, .tag_a = (uint64_t)i, .tag_b = (uint64_t)i + 1};
    }
    compare_many(pq, M);
    int cached = 0;
    for (int i = 0; i < M; i++) {
        ck_assert_int_eq(cq_collide(&pq[i], &first[i]), CQ_OK);
        if (first[i].has_normal) {
            cache[i] = cq_pair_cache_of(&first[i]);
            pq[i].cache = &cache[i];
            cached++;
        }
        /* A small move, so the previous axis is worth keeping. */
        pq[i].xb.p = cq_add(pq[i].xb.p, cq_v3(tu_uniform(&rng, -0.01, 0.01), 0, tu_uniform(&rng, -0.01, 0.01)));
    }
    compare_many(pq, M);
    ck_assert_int_gt(cached, 300);
}
END_TEST

/* The contact of the pair named the other way round, by the contract's
 * rule (collision.h), written out here: normal negated, witnesses
 * swapped, each point moved along the old normal by its depth onto the
 * other surface, features and axes named from the other box. */
static cq_contact mirrored(cq_contact c)
{
    static const int axis[CQ_SAT_AXIS_COUNT] = {3, 4, 5, 0, 1, 2, 6, 9, 12, 7, 10, 13, 8, 11, 14};
    for (int k = 0; k < c.point_count; k++) {
        cq_contact_point *p = &c.points[k];
        if (c.has_normal)
            p->position = cq_v3(p->position.x + c.normal.x * p->depth, p->position.y + c.normal.y * p->depth,
                                p->position.z + c.normal.z * p->depth);
        p->feature = (cq_feature){p->feature.kind_b, p->feature.kind_a, p->feature.index_b, p->feature.index_a};
    }
    c.normal = cq_v3(-c.normal.x, -c.normal.y, -c.normal.z);
    cq_vec3 w = c.witness_a;
    c.witness_a = c.witness_b, c.witness_b = w;
    c.sat_axis = c.sat_axis >= 0 ? axis[c.sat_axis] : -1;
    c.normal_axis = c.normal_axis >= 0 ? axis[c.normal_axis] : -1;
    return c;
}

/* Pair i of the file as (A, B) and as (B, A): the skin, flags and cache
 * given (cache_ab for the first order; the second gets its mirror). */
static void both_ways(int i, const cq_pair_cache *cache_ab, cq_pair_query *ab, cq_pair_query *ba, cq_pair_cache *cache_ba)
{
    sa[i] = (cq_shape){.type = CQ_BOX, .box = {fa[i].half}}, sb[i] = (cq_shape){.type = CQ_BOX, .box = {fb[i].half}};
    *ab = (cq_pair_query){.a = &sa[i], .xa = {fa[i].center, fa[i].axes}, .b = &sb[i], .xb = {fb[i].center, fb[i].axes},
                          .skin = 0.02 * (i % 3), .skip_distance = i % 2 == 0, .skip_manifold = i % 7 == 0,
                          .cache = cache_ab};
    *ba = *ab;
    ba->a = ab->b, ba->xa = ab->xb, ba->b = ab->a, ba->xb = ab->xa, ba->cache = NULL;
    if (cache_ab) {
        static const int axis[CQ_SAT_AXIS_COUNT] = {3, 4, 5, 0, 1, 2, 6, 9, 12, 7, 10, 13, 8, 11, 14};
        *cache_ba = *cache_ab;
        cache_ba->normal = cq_v3(-cache_ab->normal.x, -cache_ab->normal.y, -cache_ab->normal.z);
        if (cache_ab->has_axis && cache_ab->axis >= 0)
            cache_ba->axis = axis[cache_ab->axis];
        ba->cache = cache_ba;
    }
}

/* Each pair of the file both ways round, with and without the distance,
 * the manifold and a cache from the first answer: whichever order
 * cq_collide runs it in, the two answers are one, mirrored, bit for bit
 * (the order cq_collide runs a pair in answers it; the other is that
 * answer mirrored). Counts the pairs settled on a face axis named B first,
 * so the check covers that path. */
START_TEST(box_pair_both_ways_is_one_answer_mirrored)
{
    static cq_pair_cache cache[N];
    ck_assert_int_eq(tu_read_pairs(fa, fb, N), N);
    int stopped_b_first = 0, cached = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            cq_pair_query ab, ba;
            cq_pair_cache cache_ba;
            both_ways(i, round ? &cache[i] : NULL, &ab, &ba, &cache_ba);
            cq_contact x, y;
            ck_assert_int_eq(cq_collide(&ab, &x), CQ_OK);
            ck_assert_int_eq(cq_collide(&ba, &y), CQ_OK);
            bool ab_first = !cq__b_first(&ab);
            cq_contact expect = ab_first ? mirrored(x) : mirrored(y);
            assert_same_contact(ab_first ? &y : &x, &expect, i);
            stopped_b_first += !ab_first && ab.skip_distance && !x.overlap && x.sat_axis < 6;
            if (round == 0)
                cache[i] = cq_pair_cache_of(&x);
            cached += round == 1 && cache[i].has_axis;
        }
    ck_assert_int_gt(stopped_b_first, 500);
    ck_assert_int_gt(cached, 2000);
}
END_TEST

Suite *box_many_suite(void)
{
    Suite *s = suite_create("box_many");
    TCase *tc = tcase_create("many");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, many_matches_one_call_on_the_pairs_file);
    tcase_add_test(tc, many_matches_one_call_with_caches_and_mixed_shapes);
    tcase_add_test(tc, box_pair_both_ways_is_one_answer_mirrored);
    suite_add_tcase(s, tc);
    return s;
}
