/* Box-box contacts through cq_collide: depth, normal and manifold against
 * analytic answers and an eight-corner projection oracle. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "box.h"
#include "cq/fallback.h"
#include "geom.h"
#include "narrow.h"
#include "sat_box.h"
#include "testutil.h"

static cq_shape box(double x, double y, double z) { return (cq_shape){.type = CQ_BOX, .box = {{x, y, z}}}; }

static cq_contact collide(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb,
                          const cq_pair_cache *cache)
{
    cq_pair_query q = {.a = a, .xa = xa, .b = b, .xb = xb, .cache = cache};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    return c;
}

static cq_xform at(cq_vec3 p, cq_mat3 r) { return (cq_xform){p, r}; }

/* A point on the surface of box o (inside it, and on at least one face). */
static void assert_on_surface(const cq_obb *o, cq_vec3 p, double tol)
{
    cq_vec3 l = cq_mul_mtv(&o->axes, cq_sub(p, o->center));
    double outside = -INFINITY;
    for (int k = 0; k < 3; k++)
        outside = fmax(outside, fabs(cq_comp(l, k)) - cq_comp(o->half, k));
    ck_assert_msg(fabs(outside) <= tol, "point %g off the surface", outside);
}

START_TEST(overlapping_unit_boxes)
{
    cq_shape a = box(1, 1, 1), b = box(1, 1, 1);
    cq_contact c = collide(&a, at(cq_v3(0, 0, 0), cq_mat3_identity()), &b, at(cq_v3(0.3, 1.5, 0.2), cq_mat3_identity()), NULL);
    ck_assert(c.overlap && c.has_normal);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-12);
    ck_assert_double_eq_tol(c.depth, 0.5, 1e-12);
    ck_assert_int_eq(c.point_count, 4);
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_box_box");
    for (int k = 0; k < 4; k++) { /* on B's bottom face, inside A's top face */
        ck_assert_double_eq_tol(c.points[k].position.y, 0.5, 1e-12);
        ck_assert_double_eq_tol(c.points[k].depth, 0.5, 1e-12);
        ck_assert(fabs(c.points[k].position.x) <= 1 + 1e-12 && fabs(c.points[k].position.z) <= 1 + 1e-12);
        ck_assert(c.points[k].position.x >= -0.7 - 1e-12 && c.points[k].position.z >= -0.8 - 1e-12);
    }
}
END_TEST

START_TEST(box_inside_box_gives_minimum_translation)
{
    cq_shape a = box(3, 3, 3), b = box(0.5, 0.5, 0.5);
    cq_contact c = collide(&a, at(cq_v3(0, 0, 0), cq_mat3_identity()), &b, at(cq_v3(1, 0.2, -0.1), cq_mat3_identity()), NULL);
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-12);
    ck_assert_double_eq_tol(c.depth, 2.5, 1e-12);
    /* Rotated too: the depth is the oracle's minimum translation. */
    cq_mat3 r = tu_axis_angle(cq_v3(0, 0, 1), 0.4);
    cq_obb oa = {cq_v3(0, 0, 0), a.box.half, cq_mat3_identity()}, ob = {cq_v3(0.5, -1, 0.3), b.box.half, r};
    c = collide(&a, at(oa.center, oa.axes), &b, at(ob.center, ob.axes), NULL);
    ck_assert_double_eq_tol(c.depth, tu_obb_min_penetration(&oa, &ob), 1e-12);
}
END_TEST

START_TEST(random_contacts_against_oracle)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    int n = tu_read_pairs(a, b, N);
    ck_assert_int_eq(n, N);
    int overlapping = 0, points = 0;
    for (int i = 0; i < n; i++) {
        cq_shape sa = box(a[i].half.x, a[i].half.y, a[i].half.z), sb = box(b[i].half.x, b[i].half.y, b[i].half.z);
        cq_contact c = collide(&sa, at(a[i].center, a[i].axes), &sb, at(b[i].center, b[i].axes), NULL);
        ck_assert(c.overlap == cq_obb_sat(&a[i], &b[i], false).overlap);
        if (!c.overlap)
            continue;
        overlapping++;
        double pen = tu_obb_min_penetration(&a[i], &b[i]);
        /* Face preference keeps a face axis while 0.95 x its depth <= the minimum. */
        ck_assert_msg(c.depth >= pen - 1e-9 && c.depth <= pen / 0.95 + 1e-6, "pair %d: depth %.17g, oracle %.17g",
                      i, c.depth, pen);
        /* Moving B by depth along the normal separates the boxes on that axis. */
        double alo, ahi, blo, bhi;
        tu_obb_interval(&a[i], c.normal, &alo, &ahi);
        tu_obb_interval(&b[i], c.normal, &blo, &bhi);
        ck_assert_double_eq_tol(ahi - blo, c.depth, 1e-9);
        ck_assert_int_ge(c.point_count, 1);
        for (int k = 0; k < c.point_count; k++) {
            assert_on_surface(&b[i], c.points[k].position, 1e-9);
            ck_assert(c.points[k].depth <= c.depth + 1e-9 && c.points[k].depth >= -1e-9);
            points++;
        }
        cq_contact s = collide(&sb, at(b[i].center, b[i].axes), &sa, at(a[i].center, a[i].axes), NULL);
        ck_assert(s.overlap);
        ck_assert_double_eq_tol(s.depth, c.depth, 1e-12);
        tu_assert_vec_eq_tol(s.normal, cq_neg(c.normal), 1e-12);
        for (int k = 0; k < s.point_count; k++)
            assert_on_surface(&a[i], s.points[k].position, 1e-9);
    }
    printf("box_box: %d overlapping pairs, %d manifold points\n", overlapping, points);
}
END_TEST

static cq_vec3 sizes(tu_rng *rng) { return cq_v3(tu_uniform(rng, 0.1, 1.5), tu_uniform(rng, 0.1, 1.5), tu_uniform(rng, 0.1, 1.5)); }

/* Box o's edge along axis k farthest along dir, found by the test's own
 * scan of the four (their middles' projections): its ends and its id
 * (4 k + the sign bits of the other two axes, lower axis first). */
static int farthest_edge(const cq_obb *o, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q)
{
    int lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2, best = -1;
    double best_d = -INFINITY;
    for (int bits = 0; bits < 4; bits++) {
        cq_vec3 m = cq_mad(cq_mad(o->center, o->axes.c[lo], (bits & 1 ? -1 : 1) * cq_comp(o->half, lo)),
                           o->axes.c[hi], (bits & 2 ? -1 : 1) * cq_comp(o->half, hi));
        double d = cq_dot(m, dir);
        if (d > best_d)
            best_d = d, best = bits, *p = cq_mad(m, o->axes.c[k], cq_comp(o->half, k)),
            *q = cq_mad(m, o->axes.c[k], -cq_comp(o->half, k));
    }
    return 4 * k + best;
}

/* An edge axis's one point is the point of B's edge closest to A's edge
 * (the two edges farthest toward each other along the normal), by the
 * general segment routine, with both edges' ids: over the benchmark's
 * pairs and random ones, both ways round. */
START_TEST(edge_points_are_the_edges_closest_points)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    int n = tu_read_pairs(a, b, N), edges = 0;
    tu_rng rng = {5};
    for (int i = 0; i < 2 * n + 20000; i++) {
        cq_obb oa = i < n ? a[i] : i < 2 * n ? b[i - n] : (cq_obb){cq_v3(0, 0, 0), sizes(&rng), tu_rotation(&rng)};
        cq_obb ob = i < n ? b[i] : i < 2 * n ? a[i - n]
                                             : (cq_obb){tu_pose(&rng, 1.5).p, sizes(&rng), tu_rotation(&rng)};
        cq_shape sa = box(oa.half.x, oa.half.y, oa.half.z), sb = box(ob.half.x, ob.half.y, ob.half.z);
        cq_contact c = collide(&sa, at(oa.center, oa.axes), &sb, at(ob.center, ob.axes), NULL);
        if (c.normal_axis < 6 || c.point_count == 0)
            continue;
        ck_assert_int_eq(c.point_count, 1);
        int ai = (c.normal_axis - 6) / 3, bj = (c.normal_axis - 6) % 3;
        cq_vec3 pa, qa, pb, qb, ca, cb;
        int ea = farthest_edge(&oa, ai, c.normal, &pa, &qa), eb = farthest_edge(&ob, bj, cq_neg(c.normal), &pb, &qb);
        double s, t;
        cq__closest_segments(pa, qa, pb, qb, &s, &t, &ca, &cb);
        tu_assert_vec_eq_tol(c.points[0].position, cb, 1e-9);
        ck_assert_int_eq(c.points[0].feature.kind_a, CQ_FEAT_EDGE);
        ck_assert_int_eq(c.points[0].feature.kind_b, CQ_FEAT_EDGE);
        ck_assert_int_eq(c.points[0].feature.index_a, ea);
        ck_assert_int_eq(c.points[0].feature.index_b, eb);
        ck_assert_double_eq_tol(c.points[0].depth, c.depth, 1e-12);
        edges++;
    }
    printf("box_box: %d edge-axis points\n", edges);
    ck_assert_int_gt(edges, 3000);
}
END_TEST

/* The largest gaps as the contact reads them (cq_gaps_best_face and
 * _edge, by vector maxima where built) are the tournament's (cq_best_face,
 * cq_best_edge): the first of the largest, on random gaps drawn from a few
 * values so that ties are common, skipped axes (-INFINITY) among them,
 * all skipped, and the gaps of real pairs. */
START_TEST(largest_gaps_are_the_tournaments)
{
    static const double values[] = {-INFINITY, -2, -0.5, 0, 0.25, 1e-300, 3};
    tu_rng rng = {17};
    for (int i = 0; i < 200000; i++) {
        cq_box_gaps g;
        for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
            g.gap[k] = i % 3 ? values[(int)tu_uniform(&rng, 0, 6.999)] : tu_uniform(&rng, -1, 1);
        g.gap[CQ_SAT_AXIS_COUNT] = -INFINITY;
        if (i % 1000 == 0)
            for (int k = 6; k < CQ_SAT_AXIS_COUNT; k++)
                g.gap[k] = -INFINITY;
        cq_best f = cq_gaps_best_face(&g), e = cq_gaps_best_edge(&g);
        cq_best wf = cq_best_face(g.gap), we = cq_best_edge(g.gap);
        ck_assert_int_eq(f.axis, wf.axis);
        ck_assert_int_eq(e.axis, we.axis);
        ck_assert(f.gap == wf.gap && e.gap == we.gap);
    }
    for (int i = 0; i < 2000; i++) {
        cq_obb a = {cq_v3(0, 0, 0), sizes(&rng), i % 2 ? cq_mat3_identity() : tu_rotation(&rng)};
        cq_obb b = {i % 4 < 2 ? cq_v3(0.1 * (i % 7), 0, 0.5) : tu_pose(&rng, 1.5).p, i % 3 ? a.half : sizes(&rng),
                    i % 2 ? cq_mat3_identity() : tu_rotation(&rng)};
        cq_box_gaps g;
        if (!cq__box_gaps_compute(&a, &b, INFINITY, &g))
            continue;
        ck_assert_int_eq(cq_gaps_best_face(&g).axis, cq_best_face(g.gap).axis);
        ck_assert_int_eq(cq_gaps_best_edge(&g).axis, cq_best_edge(g.gap).axis);
    }
}
END_TEST

START_TEST(zero_extent_boxes_give_finite_contacts)
{
    tu_rng rng = {31};
    for (int i = 0; i < 2000; i++) {
        cq_shape flat = box(tu_uniform(&rng, 0, 1), 0, tu_uniform(&rng, 0, 1)), point = box(0, 0, 0);
        cq_xform xa = tu_pose(&rng, 0), xb = tu_pose(&rng, 1);
        cq_contact c = collide(&flat, xa, i % 2 ? &point : &flat, xb, NULL);
        if (c.overlap)
            ck_assert(c.has_normal);
    }
    /* A flat square lying on a box: a four-point face contact. */
    cq_shape floor = box(2, 0.5, 2), sheet = box(0.5, 0, 0.5);
    cq_contact c = collide(&floor, at(cq_v3(0, 0, 0), cq_mat3_identity()), &sheet,
                           at(cq_v3(0.2, 0.49, 0), tu_axis_angle(cq_v3(0, 1, 0), 0.5)), NULL);
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-12);
    ck_assert_double_eq_tol(c.depth, 0.01, 1e-12);
    ck_assert_int_eq(c.point_count, 4);
}
END_TEST

/* Whether the contact's points are pairwise distinct. */
static void assert_distinct_points(const cq_contact *c)
{
    for (int i = 0; i < c->point_count; i++)
        for (int k = 0; k < i; k++)
            ck_assert_msg(cq_len(cq_sub(c->points[i].position, c->points[k].position)) > 1e-9,
                          "points %d and %d coincide", k, i);
}

/* A zero-size (or 1e-20) box's face is four corners on one point or two:
 * clipped as a quad it gave each point two or four times, which a solver
 * weighs twice. Two point boxes touch at one point; a segment box lying
 * across a box's top (along x, 0.01 deep) at its two ends. */
START_TEST(zero_size_boxes_give_each_point_once)
{
    const double tiny[2] = {0, 1e-20};
    for (int t = 0; t < 2; t++) {
        double e = tiny[t];
        cq_shape p = box(e, e, e), q = box(e, e, e);
        cq_contact c = collide(&p, at(cq_v3(0.1, 0.2, 0.3), cq_mat3_identity()), &q,
                               at(cq_v3(0.1, 0.2, 0.3), cq_mat3_identity()), NULL);
        ck_assert(c.overlap);
        ck_assert_int_eq(c.point_count, 1);
        tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0.1, 0.2, 0.3), 1e-15);
        cq_shape floor = box(2, 0.5, 2), rod = box(0.5, e, e);
        for (int order = 0; order < 2; order++) {
            cq_xform xf = at(cq_v3(0, 0, 0), cq_mat3_identity()), xr = at(cq_v3(0.2, 0.49, 0.1), cq_mat3_identity());
            c = order ? collide(&rod, xr, &floor, xf, NULL) : collide(&floor, xf, &rod, xr, NULL);
            ck_assert(c.overlap);
            ck_assert_double_eq_tol(c.depth, 0.01, 1e-12);
            ck_assert_int_eq(c.point_count, 2);
            assert_distinct_points(&c);
            for (int k = 0; k < 2; k++)
                ck_assert_double_eq_tol(fabs(c.points[k].position.x - 0.2), 0.5, 1e-12);
        }
    }
}
END_TEST

/* A side of subnormal length (fuzz_geometry found it): a point box 7.25
 * from a box whose face there is 1.625 by 2^-1060 touches within a skin
 * of 7.5 at the point's foot on that face, at depth -7.25, in either
 * order; the face's normal had a z with no finite reciprocal, and the
 * heights came out NaN. */
START_TEST(subnormal_side_keeps_points_finite)
{
    cq_shape point = box(0, 0, 0), sliver = box(0.25, 0.8125, 0x1p-1060);
    cq_xform xp = at(cq_v3(-7.5, 0, 0), cq_mat3_identity()), xs = at(cq_v3(0, 0, 0), cq_mat3_identity());
    for (int order = 0; order < 2; order++) {
        cq_pair_query q = {.a = order ? &sliver : &point, .xa = order ? xs : xp, .b = order ? &point : &sliver,
                           .xb = order ? xp : xs, .skin = 7.5};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        tu_assert_contact_sane(c);
        ck_assert(c.overlap);
        ck_assert_int_ge(c.point_count, 1);
        for (int k = 0; k < c.point_count; k++) {
            ck_assert_double_eq_tol(c.points[k].depth, -7.25, 1e-12);
            ck_assert(fabs(c.points[k].position.x + 0.25) <= 1e-12 || fabs(c.points[k].position.x + 7.5) <= 1e-12);
            ck_assert_double_eq_tol(c.points[k].position.y, 0, 1e-12);
            ck_assert_double_eq_tol(c.points[k].position.z, 0, 1e-12);
        }
    }
}
END_TEST

/* A box slides across a floor box and over its edge; with the cache fed
 * back each frame the normal stays the floor's face normal throughout. */
START_TEST(sliding_box_keeps_face_normal)
{
    cq_shape floor = box(2, 0.5, 2), crate = box(0.5, 0.5, 0.5);
    cq_xform xf = at(cq_v3(0, 0, 0), cq_mat3_identity());
    cq_mat3 tilt = tu_axis_angle(cq_v3(0, 1, 0), 0.6);
    cq_mat3 lean = tu_axis_angle(cq_v3(1, 0, 0), 0.02);
    cq_mat3 r = cq_mul_mm(&lean, &tilt);
    cq_pair_cache cache = {0};
    int frames = 0, flips_without_cache = 0;
    for (int f = 0; f < 100; f++) {
        cq_xform xc = at(cq_v3(-1.5 + 0.038 * f, 0.5 + 0.5 - 0.02, 0.3), r);
        cq_contact c = collide(&floor, xf, &crate, xc, &cache);
        ck_assert(c.overlap);
        ck_assert_msg(c.normal.y > 0.9999, "frame %d: normal (%g %g %g)", f, c.normal.x, c.normal.y, c.normal.z);
        cache = cq_pair_cache_of(&c);
        cq_contact bare = collide(&floor, xf, &crate, xc, NULL);
        flips_without_cache += bare.normal.y < 0.9999;
        frames++;
    }
    ck_assert_int_eq(frames, 100);
    ck_assert_int_gt(flips_without_cache, 0); /* the scenario does test the hysteresis */
    printf("sliding: %d of 100 frames flip to another axis without the cache\n", flips_without_cache);
}
END_TEST

/* The band of CQ_FACE_HYSTERESIS, measured: a crate (half 0.5) slides
 * over a floor's edge at depth 0.01 +- 20 % while its tilt jitters by up to
 * 0.004 rad each frame, as a solver's resting contact does. Near the edge
 * the floor's face and an edge axis (then the crate's face) trade places
 * frame to frame: without the cache the normal's axis changes scores of
 * times. With it the axis changes once or twice, while no kept axis is more
 * than 1.5 x as deep as the best (the oracle: corner intervals on every
 * axis). A band of 1.25 changes axis 13 to 26 times on this path (seeds
 * 1..8), so 1.5 is about the narrowest that holds a jittering slide. */
START_TEST(sliding_box_jitter_sizes_the_band)
{
    cq_shape floor = box(2, 0.5, 2), crate = box(0.5, 0.5, 0.5);
    cq_obb of = {cq_v3(0, 0, 0), floor.box.half, cq_mat3_identity()};
    tu_rng rng = {1};
    cq_pair_cache cache = {0};
    int changes = 0, bare_changes = 0, prev = -1, bare_prev = -1;
    double worst = 1;
    for (int f = 0; f < 370; f++) { /* to 2.48: the crate's last 0.02 over the edge */
        cq_mat3 yaw = tu_axis_angle(cq_v3(0, 0, 1), tu_uniform(&rng, -0.004, 0.004));
        cq_mat3 roll = tu_axis_angle(cq_v3(1, 0, 0), tu_uniform(&rng, -0.004, 0.004));
        cq_obb oc = {cq_v3(1 + 0.004 * f, 1 - tu_uniform(&rng, 0.008, 0.012), 0.3), crate.box.half,
                     cq_mul_mm(&yaw, &roll)};
        cq_contact c = collide(&floor, at(of.center, of.axes), &crate, at(oc.center, oc.axes), &cache);
        cq_contact bare = collide(&floor, at(of.center, of.axes), &crate, at(oc.center, oc.axes), NULL);
        ck_assert(c.overlap && c.normal_axis >= 0 && bare.normal_axis >= 0);
        ck_assert_double_eq_tol(c.depth, tu_obb_axis_penetration(&of, &oc, c.normal_axis), 1e-12);
        double least = tu_obb_min_penetration(&of, &oc);
        worst = fmax(worst, c.depth / least);
        ck_assert_msg(c.depth <= 1.5 * bare.depth + 1e-6, "frame %d: kept %g, best %g", f, c.depth, bare.depth);
        changes += prev >= 0 && c.normal_axis != prev;
        bare_changes += bare_prev >= 0 && bare.normal_axis != bare_prev;
        prev = c.normal_axis, bare_prev = bare.normal_axis;
        cache = cq_pair_cache_of(&c);
    }
    printf("jittering slide: axis changes %d with the cache, %d without; deepest kept / least %.3f\n", changes,
           bare_changes, worst);
    ck_assert_int_le(changes, 2);
    ck_assert_int_ge(bare_changes, 50);
    ck_assert(worst > 1.25); /* the band is used beyond 1.25 */
}
END_TEST

/* Every field a caller reads, bit for bit (points past point_count are not
 * part of the answer). */
static void assert_same_contact(const cq_contact *g, const cq_contact *e)
{
    ck_assert(g->overlap == e->overlap && g->has_normal == e->has_normal && g->has_distance == e->has_distance);
    ck_assert(memcmp(&g->normal, &e->normal, sizeof g->normal) == 0);
    ck_assert(memcmp(&g->depth, &e->depth, sizeof g->depth) == 0 && g->normal_axis == e->normal_axis);
    ck_assert(g->sat_axis == e->sat_axis && memcmp(&g->sat_gap, &e->sat_gap, sizeof g->sat_gap) == 0);
    ck_assert_int_eq(g->point_count, e->point_count);
    for (int k = 0; k < g->point_count; k++)
        ck_assert(memcmp(&g->points[k].position, &e->points[k].position, sizeof(cq_vec3)) == 0 &&
                  memcmp(&g->points[k].depth, &e->points[k].depth, sizeof(double)) == 0 &&
                  memcmp(&g->points[k].feature, &e->points[k].feature, sizeof(cq_feature)) == 0);
}

/* The issue's pair: a thin box B turned 5 degrees about z beside a unit
 * box. Its best axis is B0; A0 lies 5 degrees from B0's normal, inside the
 * old 8-degree "same axis" cone, and is within the hysteresis band. */
static void issue_pair(cq_obb *a, cq_obb *b, double degrees)
{
    *a = (cq_obb){cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity()};
    *b = (cq_obb){cq_v3(1.1, 0.9, 0), cq_v3(0.25, 1, 1),
                  tu_axis_angle(cq_v3(0, 0, 1), degrees * 3.14159265358979323846 / 180)};
}

/* Oracle: the contact lies along axis k with the corners' penetration on it. */
static void assert_on_axis(const cq_contact *c, const cq_obb *a, const cq_obb *b, int k)
{
    ck_assert_int_eq(c->normal_axis, k);
    ck_assert_double_eq_tol(fabs(cq_dot(c->normal, tu_obb_axis(a, b, k))), 1, 1e-12);
    ck_assert_double_eq_tol(c->depth, tu_obb_axis_penetration(a, b, k), 1e-12);
}

/* A repeated query fed its own answer gives that answer again, bit for bit:
 * the cache names the axis used, not a direction some other face is near. */
START_TEST(hysteresis_keeps_the_axis_it_used)
{
    cq_obb a, b;
    issue_pair(&a, &b, 5);
    cq_shape sa = box(1, 1, 1), sb = box(0.25, 1, 1);
    cq_xform xa = at(a.center, a.axes), xb = at(b.center, b.axes);
    cq_contact first = collide(&sa, xa, &sb, xb, NULL);
    assert_on_axis(&first, &a, &b, 3);
    ck_assert_double_eq_tol(first.depth, 0.1590961044655912, 1e-12); /* c + s + 0.25 - (1.1 c + 0.9 s) */
    for (int k = 0; k < 3; k++) {
        cq_pair_cache cache = cq_pair_cache_of(&first);
        cq_contact again = collide(&sa, xa, &sb, xb, &cache);
        assert_same_contact(&again, &first);
    }
    /* A previous answer that did use A0 keeps it: 0.2362 is within 1.5 x 0.1591. */
    cq_pair_cache was_a0 = {.has_normal = true, .normal = {1, 0, 0}, .has_axis = true, .axis = 0};
    cq_contact kept = collide(&sa, xa, &sb, xb, &was_a0);
    assert_on_axis(&kept, &a, &b, 0);
    ck_assert_double_eq_tol(kept.depth, 0.2362044172705945, 1e-12); /* 1 + 0.25 c + s - 1.1 */
    /* A normal alone (no axis: another path answered last) keeps nothing,
     * however close to A0 it lies. */
    cq_pair_cache normal_only = {.has_normal = true, .normal = {1, 0, 0}};
    cq_contact best = collide(&sa, xa, &sb, xb, &normal_only);
    assert_on_axis(&best, &a, &b, 3);
    /* Named with the boxes swapped (cq_collide runs them A first either
     * way), B's x axis is the caller's A0 and A's x axis its B0. */
    cq_pair_cache b_x = {.has_normal = true, .normal = cq_neg(first.normal), .has_axis = true, .axis = 0};
    cq_contact swapped = collide(&sb, xb, &sa, xa, &b_x);
    assert_on_axis(&swapped, &b, &a, 0);
    cq_pair_cache a_x = {.has_normal = true, .normal = {-1, 0, 0}, .has_axis = true, .axis = 3};
    swapped = collide(&sb, xb, &sa, xa, &a_x);
    assert_on_axis(&swapped, &b, &a, 3);
    /* Turned 6 degrees, A0 is 1.57 x as deep as B0: past the band, so the
     * best axis answers even after an A0 answer (1.485 < 1.5 < 1.572 pins
     * the factor from both sides). */
    issue_pair(&a, &b, 6);
    xb = at(b.center, b.axes);
    ck_assert_double_gt(tu_obb_axis_penetration(&a, &b, 0), 1.57 * tu_obb_axis_penetration(&a, &b, 3));
    cq_contact past = collide(&sa, xa, &sb, xb, &was_a0);
    assert_on_axis(&past, &a, &b, 3);
}
END_TEST

/* A cache's axis is meaningful only with has_axis (collision.h), and a
 * caller's cache is input: run B first, an unset axis of 123456789 was
 * mirrored through the 15-entry axis table (a read far past it), and an
 * axis set out of range was too. Both are now no axis: the answer is the
 * one without the cache's axis, bit for bit, in both orders. */
START_TEST(out_of_range_cache_axis_is_no_axis)
{
    ck_assert_int_eq(cq__sat_axis_swap(123456789), -1);
    ck_assert_int_eq(cq__sat_axis_swap(CQ_SAT_AXIS_COUNT), -1);
    ck_assert_int_eq(cq__sat_axis_swap(-7), -1);
    ck_assert_int_eq(cq__sat_axis_swap(0), 3);
    ck_assert_int_eq(cq__sat_axis_swap(14), 14);
    cq_shape s = box(1, 1, 1);
    cq_xform xa = at(cq_v3(1.5, 0, 0), cq_mat3_identity()), xb = cq_xform_identity();
    for (int order = 0; order < 2; order++) {
        const cq_xform *x1 = order ? &xb : &xa, *x2 = order ? &xa : &xb;
        cq_vec3 n = cq_v3(order ? 1 : -1, 0, 0);
        cq_pair_cache plain = {.has_normal = true, .normal = n};
        cq_pair_cache unset = {.has_normal = true, .normal = n, .has_axis = false, .axis = 123456789};
        cq_pair_cache wild = {.has_normal = true, .normal = n, .has_axis = true, .axis = 123456789};
        cq_contact want = collide(&s, *x1, &s, *x2, &plain);
        cq_contact got = collide(&s, *x1, &s, *x2, &unset);
        assert_same_contact(&got, &want);
        got = collide(&s, *x1, &s, *x2, &wild);
        assert_same_contact(&got, &want);
    }
}
END_TEST

/* Oracle: distance between two separated boxes as the least of every
 * corner's distance to the other box (clamped in its frame) and every pair
 * of edges' closest points. */
static double point_box_distance(const cq_obb *o, cq_vec3 p)
{
    cq_vec3 l = cq_mul_mtv(&o->axes, cq_sub(p, o->center));
    cq_vec3 d = cq_v3(fmax(fabs(l.x) - o->half.x, 0), fmax(fabs(l.y) - o->half.y, 0), fmax(fabs(l.z) - o->half.z, 0));
    return cq_len(d);
}

static double oracle_distance(const cq_obb *a, const cq_obb *b)
{
    cq_vec3 ca[8], cb[8];
    tu_obb_corners(a, ca);
    tu_obb_corners(b, cb);
    double best = INFINITY;
    for (int k = 0; k < 8; k++)
        best = fmin(best, fmin(point_box_distance(b, ca[k]), point_box_distance(a, cb[k])));
    for (int i = 0; i < 8; i++) /* edges join corners that differ in one bit */
        for (int bi = 0; bi < 3; bi++)
            for (int j = 0; j < 8; j++)
                for (int bj = 0; bj < 3; bj++) {
                    if ((i >> bi & 1) || (j >> bj & 1))
                        continue;
                    double s, t;
                    cq_vec3 p, q;
                    best = fmin(best, sqrt(cq__closest_segments(ca[i], ca[i | 1 << bi], cb[j], cb[j | 1 << bj],
                                                                &s, &t, &p, &q)));
                }
    return best;
}

START_TEST(separated_boxes_report_euclidean_distance)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    int separated = 0;
    for (int i = 0; i < N; i++) {
        cq_shape sa = box(a[i].half.x, a[i].half.y, a[i].half.z), sb = box(b[i].half.x, b[i].half.y, b[i].half.z);
        cq_contact c = collide(&sa, at(a[i].center, a[i].axes), &sb, at(b[i].center, b[i].axes), NULL);
        if (c.overlap)
            continue;
        separated++;
        ck_assert(c.has_distance && c.has_normal);
        double d = oracle_distance(&a[i], &b[i]);
        ck_assert_double_eq_tol(c.distance, d, 1e-9 * (1 + d));
        ck_assert(c.distance >= c.sat_gap - 1e-12); /* the SAT gap is only a lower bound */
        tu_assert_vec_eq_tol(cq_sub(c.witness_b, c.witness_a), cq_scale(c.normal, c.distance), 1e-9);
        ck_assert_double_eq_tol(point_box_distance(&a[i], c.witness_a), 0, 1e-9);
        ck_assert_double_eq_tol(point_box_distance(&b[i], c.witness_b), 0, 1e-9);
    }
    ck_assert_int_gt(separated, 4000);
}
END_TEST

/* Separated axis-aligned boxes whose faces overlap across the gap: the
 * closest points lie on one axis, so the normal is that axis exactly (GJK's
 * distance left noise such as [1, 0, -2.8e-16]) and the distance the gap,
 * at the origin and 1000 or 1e5 away, in both orders. */
START_TEST(separated_axis_normals_are_exact)
{
    static const double away[] = {0, 1000, 1e5};
    const double ha[3] = {1, 0.5, 0.7};
    cq_shape sa = box(ha[0], ha[1], ha[2]);
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 300; i++) {
            double u = fmod(i * 0.6180339887, 1), v = fmod(i * 0.4142135, 1), t = fmod(i * 0.7320508, 1);
            double hb[3] = {0.2 + u, 0.2 + v, 0.2 + t}, c[3] = {(u - 0.5) * 0.8, (v - 0.5) * 0.4, (t - 0.5) * 0.6};
            int axis = i % 3;
            double sign = (i / 3) % 2 ? 1 : -1, gap = 0.05 + 0.9 * t;
            c[axis] = sign * (ha[axis] + hb[axis] + gap);
            cq_shape sb = box(hb[0], hb[1], hb[2]);
            cq_vec3 o = cq_v3(away[w], -0.3 * away[w], 0.7 * away[w]);
            cq_xform xa = at(o, cq_mat3_identity()), xb = at(cq_add(o, cq_v3(c[0], c[1], c[2])), cq_mat3_identity());
            for (int order = 0; order < 2; order++) {
                cq_contact ct = order ? collide(&sb, xb, &sa, xa, NULL) : collide(&sa, xa, &sb, xb, NULL);
                ck_assert(!ct.overlap && ct.has_normal);
                double n[3] = {ct.normal.x, ct.normal.y, ct.normal.z};
                for (int k = 0; k < 3; k++)
                    ck_assert_msg(k == axis ? n[k] == (order ? -sign : sign) : n[k] == 0,
                                  "%g away, case %d order %d: normal [%.17g %.17g %.17g]", away[w], i, order, n[0],
                                  n[1], n[2]);
                ck_assert_double_eq_tol(ct.distance, gap, 1e-12 * (1 + away[w]));
            }
        }
}
END_TEST

/* One quantity, one value, over the seed's 10,000 pairs in both orders: the
 * explanation's row and cq_obb_sat's gap are the contact's sat_gap bit for
 * bit; a separated pair whose Euclidean distance (the brute-force oracle)
 * equals its SAT gap reports that one double as both, and one whose
 * closest points lie off every axis (a corner or an edge's end) reports a
 * larger distance. Swapping the boxes changes neither double. */
START_TEST(one_quantity_one_value)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    int same = 0, apart = 0;
    for (int i = 0; i < N; i++) {
        cq_contact c[2];
        for (int s = 0; s < 2; s++) {
            const cq_obb *x = s ? &b[i] : &a[i], *y = s ? &a[i] : &b[i];
            cq_shape sx = box(x->half.x, x->half.y, x->half.z), sy = box(y->half.x, y->half.y, y->half.z);
            c[s] = collide(&sx, at(x->center, x->axes), &sy, at(y->center, y->axes), NULL);
            cq_sat_axis rows[CQ_SAT_AXIS_COUNT];
            cq_obb_sat_explain(x, y, rows);
            cq_sat_result r = cq_obb_sat(x, y, false);
            ck_assert_msg(memcmp(&rows[c[s].sat_axis].gap, &c[s].sat_gap, sizeof(double)) == 0, "pair %d", i);
            ck_assert_msg(memcmp(&r.gap, &c[s].sat_gap, sizeof(double)) == 0, "pair %d", i);
        }
        ck_assert(memcmp(&c[0].sat_gap, &c[1].sat_gap, sizeof(double)) == 0);
        ck_assert(memcmp(&c[0].distance, &c[1].distance, sizeof(double)) == 0);
        if (c[0].overlap)
            continue;
        double d = oracle_distance(&a[i], &b[i]), excess = d - c[0].sat_gap;
        if (excess <= 1e-12 * (1 + d)) {
            ck_assert_msg(memcmp(&c[0].distance, &c[0].sat_gap, sizeof(double)) == 0, "pair %d", i);
            same++;
        } else if (excess > 1e-8 * (1 + d)) {
            ck_assert_msg(c[0].distance > c[0].sat_gap + 1e-9, "pair %d", i);
            apart++;
        }
    }
    printf("one value: %d separated pairs report the gap as their distance, %d a larger distance\n", same, apart);
    ck_assert_int_gt(same, 1000);
    ck_assert_int_gt(apart, 1000);
}
END_TEST

/* Batch contact generation (skip_distance): a pair apart by more than the
 * skin may stop at the first face axis that shows it. Against the oracles:
 * a miss is a pair whose Euclidean distance exceeds the skin, and the axis
 * it names separates the corner projections by the gap it reports; a hit
 * is a pair within the skin. Pairs at the tolerance's edge are left out. */
START_TEST(skip_distance_stops_at_a_separating_axis)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    const double skins[] = {0, 0.05, 0.3};
    int face_stops = 0, cross_stops = 0;
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < N; i++) {
            cq_shape sa = box(a[i].half.x, a[i].half.y, a[i].half.z), sb = box(b[i].half.x, b[i].half.y, b[i].half.z);
            cq_pair_query q = {.a = &sa, .xa = at(a[i].center, a[i].axes), .b = &sb,
                               .xb = at(b[i].center, b[i].axes), .skin = skins[s], .skip_distance = true};
            cq_contact c;
            ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
            tu_assert_contact_sane(c);
            double pen = tu_obb_min_penetration(&a[i], &b[i]);
            double d = pen > 0 ? 0 : oracle_distance(&a[i], &b[i]);
            if (fabs(d - skins[s]) < 1e-6)
                continue;
            ck_assert_msg(c.overlap == (d <= skins[s]), "pair %d skin %g: overlap %d, distance %.17g", i, skins[s],
                          c.overlap, d);
            if (c.overlap)
                continue;
            int k = c.sat_axis;
            ck_assert(k >= 0 && k < CQ_SAT_AXIS_COUNT);
            cq_vec3 l = k < 3 ? a[i].axes.c[k] : k < 6 ? b[i].axes.c[k - 3]
                                                       : cq_cross(a[i].axes.c[(k - 6) / 3], b[i].axes.c[(k - 6) % 3]);
            l = cq_scale(l, 1 / cq_len(l));
            double alo, ahi, blo, bhi;
            tu_obb_interval(&a[i], l, &alo, &ahi);
            tu_obb_interval(&b[i], l, &blo, &bhi);
            double gap = fmax(blo - ahi, alo - bhi);
            ck_assert_msg(fabs(gap - c.sat_gap) <= 1e-9 * (1 + fabs(gap)), "pair %d: gap %.17g, oracle %.17g", i,
                          c.sat_gap, gap);
            ck_assert_int_eq(c.point_count, 0);
            if (c.has_distance) { /* the gap is within the skin, the distance is not: GJK said so */
                ck_assert(c.sat_gap <= skins[s]);
                ck_assert_double_eq_tol(c.distance, d, 1e-9 * (1 + d));
                continue;
            }
            ck_assert(c.sat_gap > skins[s]);
            face_stops += k < 6, cross_stops += k >= 6;
        }
    printf("skip_distance: %d misses stopped at a face axis, %d needed the cross axes\n", face_stops, cross_stops);
    ck_assert_int_gt(face_stops, 10000);
    ck_assert_int_gt(cross_stops, 100);
}
END_TEST

/* The rectangle-specialised clip against the generic clipper on every
 * pair of faces of random boxes: the same points, in the same order, with
 * the same features (the reference half first, or A's first when the
 * reference is B). (They differ only where a corner lies within rounding
 * of a side line, which random boxes never put one: check_box_clip's flush
 * stacks hold the passes there.) */
START_TEST(rect_clip_matches_generic_clipper)
{
    tu_rng rng = {123};
    int compared = 0;
    for (int i = 0; i < 400; i++) {
        cq_obb r = {cq_v3(0, 0, 0), cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        cq_obb c = {tu_pose(&rng, 1).p, cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        for (int rf = 0; rf < 6; rf++)
            for (int cf = 0; cf < 6; cf++)
                for (int b = 0; b < 2; b++) {
                    cq_face inc;
                    cq__box_face(&c, cf, &inc);
                    cq_contact_point fast[CQ_CLIP_MAX], slow[CQ_CLIP_MAX];
                    int n = cq__box_clip_box(&r, rf, &c, cf, 0.3, b, fast);
                    int m = cq__box_clip(&r, rf, &inc, 0.3, b, slow);
                    ck_assert_int_eq(n, m);
                    for (int k = 0; k < n; k++) {
                        cq_feature f = b ? cq_feature_swap(slow[k].feature) : slow[k].feature;
                        tu_assert_vec_eq_tol(fast[k].position, slow[k].position, 1e-9);
                        ck_assert_double_eq_tol(fast[k].depth, slow[k].depth, 1e-9);
                        ck_assert(memcmp(&fast[k].feature, &f, sizeof f) == 0);
                        compared++;
                    }
                }
    }
    ck_assert_int_gt(compared, 10000);
}
END_TEST

/* Boxes stacked with a face on a face whose sides are flush or nearly so
 * (sizes that are not binary fractions, yaws of 1e-16 and 1e-9 rad, a
 * diamond whose edges pass through the square's corners): the overlap of
 * the faces is a rectangle, so the manifold has its four corners, each at
 * the stack's depth of 0.05. A clip whose keep-or-drop tests are not all
 * made on the same signed distances loses corners here (a direct
 * rectangle-parallelogram clip tried in the ninth session kept 3 or 0). */
START_TEST(flush_stacks_keep_four_points)
{
    static const struct {
        cq_vec3 ha, hb, pb;
        cq_quat qb;
    } c[] = {
        {{0.1, 0.1, 0.5}, {0.1, 0.30000000000000004, 0.5}, {0.1, -0.2, 0.95}, {0, 0, 0, 1}},
        {{0.25, 0.5, 0.5}, {0.75, 0.5, 0.5}, {0, 0, 0.95}, {0, 0, -5e-17, 1}},
        {{1, 1, 1}, {1.4142135623730949, 1.4142135623730949, 0.5}, {0, 0, 1.45},
         {0, 0, 0.38268343236508962, 0.92387953251128674}},
        {{0.25, 0.25, 0.5}, {0.25, 0.25, 0.5}, {0, 0.25, 0.95}, {0, 0, -5e-10, 1}},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        cq_shape a = box(c[i].ha.x, c[i].ha.y, c[i].ha.z), b = box(c[i].hb.x, c[i].hb.y, c[i].hb.z);
        cq_pair_query q = {.a = &a, .xa = at(cq_v3(0, 0, 0), cq_mat3_identity()), .b = &b, .skin = 0.01};
        ck_assert_int_eq(cq_pose_from_quat(c[i].pb, c[i].qb, &q.xb).status, CQ_OK);
        cq_contact ct;
        ck_assert_int_eq(cq_collide(&q, &ct), CQ_OK);
        ck_assert(ct.overlap);
        ck_assert_double_eq_tol(ct.depth, 0.05, 1e-9);
        ck_assert_msg(ct.point_count == 4, "case %zu: %d points", i, ct.point_count);
        for (int k = 0; k < ct.point_count; k++)
            ck_assert_double_eq_tol(ct.points[k].depth, 0.05, 1e-9);
    }
}
END_TEST

/* Diagonal neighbours: the SAT gap (0.1) is within the skin, the Euclidean
 * distance (0.1 * sqrt 2) is not, and only the distance decides. */
START_TEST(skin_is_measured_in_euclidean_distance)
{
    cq_shape a = box(1, 1, 1), b = box(1, 1, 1);
    cq_pair_query q = {.a = &a, .xa = at(cq_v3(0, 0, 0), cq_mat3_identity()), .b = &b,
                       .xb = at(cq_v3(2.1, 2.1, 0), cq_mat3_identity()), .skin = 0.12};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    ck_assert_double_eq_tol(c.sat_gap, 0.1, 1e-12);
    ck_assert(!c.overlap && c.has_distance);
    ck_assert_double_eq_tol(c.distance, 0.1 * sqrt(2), 1e-12);
    q.skin = 0.15;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    ck_assert(c.overlap && c.has_distance && c.depth == 0);
    ck_assert_double_eq_tol(c.distance, 0.1 * sqrt(2), 1e-12);
    ck_assert_int_ge(c.point_count, 1);
}
END_TEST

/* Oracle for the feature numbering: a vertex id from the signs of the
 * corner's local coordinates, an edge id from its midpoint (zero along the
 * edge's own axis). */
START_TEST(face_features_follow_the_numbering)
{
    cq_obb o = {cq_v3(1, 2, 3), cq_v3(0.5, 0.7, 0.9), tu_axis_angle(cq_v3(0, 0.6, 0.8), 0.7)};
    for (int id = 0; id < 6; id++) {
        cq_face f;
        cq__box_face(&o, id, &f);
        ck_assert_int_eq(f.count, 4);
        ck_assert_int_eq(f.fid, id);
        cq_vec3 nl = cq_mul_mtv(&o.axes, f.normal);
        ck_assert_double_eq_tol(cq_comp(nl, id / 2), (id & 1) ? -1 : 1, 1e-12);
        for (int m = 0; m < 4; m++) {
            cq_vec3 l = cq_mul_mtv(&o.axes, cq_sub(f.v[m], o.center));
            int vid = (l.x < 0) | (l.y < 0) << 1 | (l.z < 0) << 2;
            ck_assert_int_eq(f.vid[m], vid);
            cq_vec3 mid = cq_mul_mtv(&o.axes, cq_sub(cq_lerp(f.v[m], f.v[(m + 1) % 4], 0.5), o.center));
            int axis = fabs(mid.x) < 1e-9 ? 0 : fabs(mid.y) < 1e-9 ? 1 : 2;
            int lo = axis == 0 ? 1 : 0, hi = axis == 2 ? 1 : 2;
            ck_assert_int_eq(f.eid[m], 4 * axis + ((cq_comp(mid, lo) < 0) | (cq_comp(mid, hi) < 0) << 1));
        }
    }
}
END_TEST

/* A GJK cap too small for a pair the SAT leaves within the skin: the
 * general convex path answers it with a counted, logged fallback. Without a
 * previous normal the contact is dropped; with one, the verdict is the
 * boxes' separation along it, by hand from their corners' projections. */
START_TEST(gjk_cap_falls_back_and_is_logged)
{
    cq_shape a = box(1, 0.5, 0.75), b = box(0.6, 0.4, 0.6);
    tu_rng rng = {2026};
    cq_xform xa = at(cq_v3(0, 0, 0), cq_mat3_identity()), xb = at(cq_v3(1.7, 0.95, 0.2), tu_rotation(&rng));
    cq_fallback_slot slots[4];
    cq_fallback_log log;
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 4, NULL), CQ_OK);
    cq_counters ctr = {0};
    cq_pair_query q = {.a = &a, .xa = xa, .b = &b, .xb = xb, .skin = 0.5, .gjk_max_iterations = 1,
                       .counters = &ctr, .log = &log, .tag_a = 7, .tag_b = 9};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    ck_assert_msg(c.sat_gap > 0 && c.sat_gap <= q.skin, "the SAT must leave this pair to GJK (gap %g)", c.sat_gap);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_GJK_ITERATION_LIMIT);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
    ck_assert(!c.has_normal && c.point_count == 0);

    cq_vec3 n;
    ck_assert(cq_normalize(cq_v3(1, 0.6, 0.1), 1e-12, &n));
    cq_pair_cache cache = {.has_normal = true, .normal = n};
    q.cache = &cache;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
    tu_assert_vec_eq_tol(c.normal, n, 1e-12);
    /* Separation along n: B's lowest corner minus A's highest. */
    double top = -INFINITY, low = INFINITY;
    for (int k = 0; k < 8; k++) {
        cq_vec3 ca = cq_v3(k & 1 ? 1 : -1, k & 2 ? 0.5 : -0.5, k & 4 ? 0.75 : -0.75);
        cq_vec3 cb = cq_v3(k & 1 ? 0.6 : -0.6, k & 2 ? 0.4 : -0.4, k & 4 ? 0.6 : -0.6);
        top = fmax(top, cq_dot(cq_xform_point(&xa, ca), n));
        low = fmin(low, cq_dot(cq_xform_point(&xb, cb), n));
    }
    double sep = low - top;
    ck_assert(c.overlap == (sep <= q.skin));
    if (sep < 0)
        ck_assert_double_eq_tol(c.depth, -sep, 1e-12);

    cq_fallback_record rec[4];
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 2);
    ck_assert_int_eq(rec[0].action, CQ_FBA_PREVIOUS_NORMAL);
    ck_assert_int_eq(rec[1].action, CQ_FBA_DROPPED);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(rec[k].reason, CQ_FB_GJK_ITERATION_LIMIT);
        ck_assert(rec[k].shape_a == CQ_BOX && rec[k].shape_b == CQ_BOX && rec[k].tag_a == 7 && rec[k].tag_b == 9);
    }
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT], 2);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_PREVIOUS_NORMAL], 1);
}
END_TEST

Suite *box_box_suite(void)
{
    Suite *s = suite_create("box_box");
    TCase *tc = tcase_create("contacts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, overlapping_unit_boxes);
    tcase_add_test(tc, box_inside_box_gives_minimum_translation);
    tcase_add_test(tc, random_contacts_against_oracle);
    tcase_add_test(tc, zero_extent_boxes_give_finite_contacts);
    tcase_add_test(tc, zero_size_boxes_give_each_point_once);
tcase_add_test(tc, subnormal_side_keeps_points_finite);
    tcase_add_test(tc, sliding_box_keeps_face_normal);
    tcase_add_test(tc, hysteresis_keeps_the_axis_it_used);
    tcase_add_test(tc, out_of_range_cache_axis_is_no_axis);
    tcase_add_test(tc, sliding_box_jitter_sizes_the_band);
    tcase_add_test(tc, face_features_follow_the_numbering);
    tcase_add_test(tc, separated_boxes_report_euclidean_distance);
    tcase_add_test(tc, separated_axis_normals_are_exact);
    tcase_add_test(tc, one_quantity_one_value);
    tcase_add_test(tc, skin_is_measured_in_euclidean_distance);
    tcase_add_test(tc, skip_distance_stops_at_a_separating_axis);
    tcase_add_test(tc, rect_clip_matches_generic_clipper);
    tcase_add_test(tc, flush_stacks_keep_four_points);
    tcase_add_test(tc, gjk_cap_falls_back_and_is_logged);
    tcase_add_test(tc, edge_points_are_the_edges_closest_points);
    tcase_add_test(tc, largest_gaps_are_the_tournaments);
    suite_add_tcase(s, tc);
    return s;
}
