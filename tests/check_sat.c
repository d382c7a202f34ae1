/* Box-box SAT (seed 000): the fixed case, 10,000 random pairs against an
 * eight-corner projection oracle, swap symmetry, degenerate axes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sat_box.h"
#include "testutil.h"

/* The seed's fixed case, its six-digit axes made exact rotations by the
 * pose validator as the wire would. */
static cq_obb fixed_box(cq_vec3 centre, cq_vec3 half, cq_vec3 x, cq_vec3 y, cq_vec3 z)
{
    cq_vec3 axes[3] = {x, y, z};
    cq_xform pose;
    ck_assert_int_eq(cq_pose_from_axes(centre, axes, &pose).status, CQ_OK);
    return (cq_obb){pose.p, half, pose.r};
}

static cq_obb fixed_a(void)
{
    return fixed_box(cq_v3(0, 0, 0), cq_v3(0.833764, 1.887452, 1.823530), cq_v3(-0.443449, 0.528599, -0.723834),
                     cq_v3(0.293785, 0.848689, 0.439793), cq_v3(0.846784, -0.017626, -0.531645));
}

static cq_obb fixed_b(void)
{
    return fixed_box(cq_v3(-2.171778, -2.012874, 2.111567), cq_v3(1.061493, 1.044604, 1.472044),
                     cq_v3(-0.319965, -0.256745, 0.911978), cq_v3(0.917602, 0.155652, 0.365758),
                     cq_v3(-0.235857, 0.953863, 0.185786));
}

/* Oracle: the axis built in world space, both boxes' eight corners
 * projected onto it, the gap between the two intervals. *degenerate is set
 * for a cross axis shorter than the seed's threshold. */
static double oracle_gap(const cq_obb *a, const cq_obb *b, int axis, bool *degenerate)
{
    cq_vec3 l;
    if (axis < 3)
        l = a->axes.c[axis];
    else if (axis < 6)
        l = b->axes.c[axis - 3];
    else
        l = cq_cross(a->axes.c[(axis - 6) / 3], b->axes.c[(axis - 6) % 3]);
    *degenerate = cq_len2(l) < CQ_SAT_DEGENERATE;
    if (*degenerate)
        return -INFINITY;
    l = cq_scale(l, 1 / cq_len(l));
    cq_vec3 ca[8], cb[8];
    tu_obb_corners(a, ca);
    tu_obb_corners(b, cb);
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (int k = 0; k < 8; k++) {
        double pa = cq_dot(ca[k], l), pb = cq_dot(cb[k], l);
        amin = fmin(amin, pa), amax = fmax(amax, pa), bmin = fmin(bmin, pb), bmax = fmax(bmax, pb);
    }
    return fmax(bmin - amax, amin - bmax);
}

static double oracle_largest(const cq_obb *a, const cq_obb *b, int count, int *axis)
{
    double best = -INFINITY;
    *axis = -1;
    for (int k = 0; k < count; k++) {
        bool deg;
        double g = oracle_gap(a, b, k, &deg);
        if (!deg && g > best)
            best = g, *axis = k;
    }
    return best;
}

START_TEST(fixed_case_full_sat_separates_on_a1xb2)
{
    cq_obb a = fixed_a(), b = fixed_b();
    cq_sat_result r = cq_obb_sat(&a, &b, false);
    ck_assert(!r.overlap);
    ck_assert_str_eq(cq_sat_axis_name(r.axis), "A1xB2");
    ck_assert_double_eq_tol(r.gap, 0.146715, 2e-5);
    ck_assert(!cq_obb_overlap(&a, &b));
    bool deg;
    ck_assert_double_eq_tol(oracle_gap(&a, &b, r.axis, &deg), r.gap, 1e-9);
}
END_TEST

/* One quantity, one value: the contact's sat gap, the explanation's row
 * for that axis, cq_obb_sat's gap and the Euclidean distance (the closest
 * points lie on two edges, along A1xB2) are one double, whichever box the
 * caller names first; the value is the seed's (0.14671521, corners
 * 0.1467154 in single precision) and the corner oracle's. */
START_TEST(fixed_case_reports_one_gap)
{
    cq_obb o[2] = {fixed_a(), fixed_b()};
    double seen = NAN;
    for (int first = 0; first < 2; first++) {
        const cq_obb *a = &o[first], *b = &o[1 - first];
        cq_shape sa = {.type = CQ_BOX, .box = {a->half}}, sb = {.type = CQ_BOX, .box = {b->half}};
        cq_pair_query q = {.a = &sa, .xa = {a->center, a->axes}, .b = &sb, .xb = {b->center, b->axes}};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        ck_assert_str_eq(cq_sat_axis_name(c.sat_axis), first ? "A2xB1" : "A1xB2");
        cq_sat_axis rows[CQ_SAT_AXIS_COUNT];
        cq_obb_sat_explain(a, b, rows);
        cq_sat_result r = cq_obb_sat(a, b, false);
        ck_assert(!c.overlap && c.has_distance && r.axis == c.sat_axis);
        ck_assert(memcmp(&rows[c.sat_axis].gap, &c.sat_gap, sizeof(double)) == 0);
        ck_assert(memcmp(&r.gap, &c.sat_gap, sizeof(double)) == 0);
        ck_assert(memcmp(&c.distance, &c.sat_gap, sizeof(double)) == 0);
        ck_assert(first == 0 || memcmp(&seen, &c.sat_gap, sizeof(double)) == 0);
        seen = c.sat_gap;
        bool deg;
        ck_assert_double_eq_tol(c.sat_gap, oracle_gap(a, b, c.sat_axis, &deg), 1e-12);
        ck_assert_double_eq_tol(c.sat_gap, 0.14671521, 1e-6);
    }
}
END_TEST

START_TEST(fixed_case_face_axes_alone_report_overlap)
{
    cq_obb a = fixed_a(), b = fixed_b();
    cq_sat_result r = cq_obb_sat(&a, &b, true);
    ck_assert(r.overlap);
    ck_assert_double_eq_tol(r.gap, -0.0076245, 1e-7);
    int axis;
    ck_assert_double_eq_tol(oracle_largest(&a, &b, 6, &axis), r.gap, 1e-9);
    ck_assert_int_eq(axis, r.axis);
}
END_TEST

START_TEST(explain_lists_every_axis)
{
    cq_obb a = fixed_a(), b = fixed_b();
    cq_sat_axis rows[CQ_SAT_AXIS_COUNT];
    cq_obb_sat_explain(&a, &b, rows);
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++) {
        bool deg;
        double g = oracle_gap(&a, &b, k, &deg);
        ck_assert(rows[k].skipped == deg);
        ck_assert_double_eq_tol(rows[k].gap, g, 1e-9);
    }
}
END_TEST

START_TEST(random_pairs_agree_with_corner_oracle)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    int n = tu_read_pairs(a, b, N);
    ck_assert_msg(n == N, "need $CQ_PAIRS_FILE from build/cq-gen pairs 10000 11423 (got %d)", n);
    int outside_band = 0, face_only_wrong = 0, oracle_face_only_wrong = 0, swaps = 0, overlaps = 0;
    for (int i = 0; i < n; i++) {
        int axis;
        double truth = oracle_largest(&a[i], &b[i], CQ_SAT_AXIS_COUNT, &axis);
        bool truth_overlap = !(truth > CQ_SAT_TOLERANCE);
        cq_sat_result r = cq_obb_sat(&a[i], &b[i], false);
        bool fast = cq_obb_overlap(&a[i], &b[i]);
        bool in_band = fabs(truth - CQ_SAT_TOLERANCE) <= 1e-6;
        if (!in_band && (r.overlap != truth_overlap || fast != truth_overlap))
            outside_band++;
        ck_assert_double_eq_tol(r.gap, truth, 1e-9);
        overlaps += r.overlap;
        cq_sat_result s = cq_obb_sat(&b[i], &a[i], false);
        swaps += s.overlap != r.overlap || cq_obb_overlap(&b[i], &a[i]) != fast;
        cq_sat_result f = cq_obb_sat(&a[i], &b[i], true);
        face_only_wrong += f.overlap && !r.overlap;
        int fa;
        oracle_face_only_wrong += !(oracle_largest(&a[i], &b[i], 6, &fa) > CQ_SAT_TOLERANCE) && !truth_overlap;
    }
    printf("sat: %d pairs, %d overlap, face-only false positives %d\n", n, overlaps, face_only_wrong);
    ck_assert_int_eq(outside_band, 0);
    ck_assert_int_eq(swaps, 0);
    ck_assert_int_eq(face_only_wrong, oracle_face_only_wrong);
    ck_assert_int_gt(face_only_wrong, 0);
}
END_TEST

START_TEST(parallel_boxes_skip_degenerate_cross_axes)
{
    cq_obb a = {cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity()};
    cq_obb b = {cq_v3(1.5, 0.25, 0), cq_v3(1, 1, 1), cq_mat3_identity()};
    cq_sat_result r = cq_obb_sat(&a, &b, false);
    ck_assert_int_eq(r.skipped, 3); /* A_i x B_i vanish; A_i x B_j (i != j) are the third axis */
    ck_assert(r.overlap && isfinite(r.gap));
    ck_assert_double_eq_tol(r.gap, -0.5, 1e-12);
    cq_sat_axis rows[CQ_SAT_AXIS_COUNT];
    cq_obb_sat_explain(&a, &b, rows);
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
        ck_assert(isfinite(rows[k].gap));
    b.center.x = 2.25;
    r = cq_obb_sat(&a, &b, false);
    ck_assert(!r.overlap);
    ck_assert_double_eq_tol(r.gap, 0.25, 1e-12);
}
END_TEST

START_TEST(touching_within_tolerance_is_overlap)
{
    cq_obb a = {cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity()};
    cq_obb b = {cq_v3(2 + 0.5e-6, 0, 0), cq_v3(1, 1, 1), tu_axis_angle(cq_v3(1, 0, 0), 0.3)};
    ck_assert(cq_obb_sat(&a, &b, false).overlap && cq_obb_overlap(&a, &b));
    b.center.x = 2 + 2e-6;
    ck_assert(!cq_obb_sat(&a, &b, false).overlap && !cq_obb_overlap(&a, &b));
}
END_TEST

START_TEST(zero_extent_boxes)
{
    tu_rng rng = {77};
    for (int i = 0; i < 2000; i++) {
        cq_obb a = {cq_v3(0, 0, 0), cq_v3(tu_uniform(&rng, 0, 1), 0, tu_uniform(&rng, 0, 1)), tu_rotation(&rng)};
        cq_obb b = {tu_pose(&rng, 1.5).p, cq_v3(0, 0, 0), tu_rotation(&rng)};
        if (i % 2)
            b.half = cq_v3(tu_uniform(&rng, 0, 1), 0, 0);
        int axis;
        double truth = oracle_largest(&a, &b, CQ_SAT_AXIS_COUNT, &axis);
        cq_sat_result r = cq_obb_sat(&a, &b, false);
        ck_assert(isfinite(r.gap));
        ck_assert_double_eq_tol(r.gap, truth, 1e-9);
    }
}
END_TEST

/* The vector variants (AVX2 where the CPU has it) against the scalar
 * reference: the same gaps to rounding, the same verdicts. */
START_TEST(vector_paths_match_scalar_reference)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    tu_rng rng = {9};
    for (int i = 0; i < N; i++) {
        if (i % 10 == 0) /* parallel axes too: degenerate cross axes */
            b[i].axes = a[i].axes;
        if (i % 10 == 1)
            b[i].half = cq_v3(tu_uniform(&rng, 0, 1), 0, 0);
        double g[CQ_SAT_AXIS_COUNT], s[CQ_SAT_AXIS_COUNT];
        bool gk[CQ_SAT_AXIS_COUNT], sk[CQ_SAT_AXIS_COUNT];
        cq__obb_gaps(&a[i], &b[i], CQ_SAT_AXIS_COUNT, g, gk);
        cq__obb_gaps_scalar(&a[i], &b[i], CQ_SAT_AXIS_COUNT, s, sk);
        for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++) {
            ck_assert(gk[k] == sk[k]);
            if (!sk[k])
                ck_assert_double_eq_tol(g[k], s[k], 1e-12);
        }
        cq_sat_result r = cq_obb_sat(&a[i], &b[i], false);
        if (fabs(r.gap - CQ_SAT_TOLERANCE) > 1e-12)
            ck_assert(cq_obb_overlap(&a[i], &b[i]) == cq__obb_overlap_scalar(&a[i], &b[i]));
    }
}
END_TEST

/* The batch test against the scalar reference, verdict for verdict and
 * exactly (the vector lanes round as the scalar code does): the file's
 * pairs, parallel axes, flat boxes, pairs moved to the edge of the
 * tolerance on a face axis, and every batch length from 0 to 9 (the tail
 * the vector loop leaves). */
START_TEST(batch_matches_scalar_reference)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    static bool got[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    tu_rng rng = {19};
    for (int i = 0; i < N; i++) {
        if (i % 10 == 0)
            b[i].axes = a[i].axes;
        if (i % 10 == 1)
            b[i].half = cq_v3(tu_uniform(&rng, 0, 1), 0, 0);
        if (i % 10 == 2) { /* B's face 0 gap set to the tolerance, give or take an ulp or two */
            cq_sat_result r = cq_obb_sat(&a[i], &b[i], true);
            cq_vec3 n = a[i].axes.c[0];
            double along = cq_dot(cq_sub(b[i].center, a[i].center), n);
            b[i].center = cq_mad(b[i].center, n, (along >= 0 ? 1 : -1) * (CQ_SAT_TOLERANCE - r.gap));
        }
    }
    cq_obb_overlap_many(a, b, N, got);
    int overlaps = 0;
    for (int i = 0; i < N; i++) {
        ck_assert_msg(got[i] == cq__obb_overlap_scalar(&a[i], &b[i]), "pair %d", i);
        overlaps += got[i];
    }
    ck_assert(overlaps > N / 4 && overlaps < N);
    for (int n = 0; n <= 9; n++) {
        bool few[10] = {0};
        cq_obb_overlap_many(a + 100, b + 100, n, few);
        for (int i = 0; i < n; i++)
            ck_assert(few[i] == cq__obb_overlap_scalar(&a[100 + i], &b[100 + i]));
        for (int i = n; i < 10; i++)
            ck_assert(!few[i]); /* nothing written past n */
    }
}
END_TEST

Suite *sat_suite(void)
{
    Suite *s = suite_create("sat");
    TCase *tc = tcase_create("obb");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fixed_case_full_sat_separates_on_a1xb2);
    tcase_add_test(tc, fixed_case_face_axes_alone_report_overlap);
    tcase_add_test(tc, explain_lists_every_axis);
    tcase_add_test(tc, fixed_case_reports_one_gap);
    tcase_add_test(tc, random_pairs_agree_with_corner_oracle);
    tcase_add_test(tc, parallel_boxes_skip_degenerate_cross_axes);
    tcase_add_test(tc, touching_within_tolerance_is_overlap);
    tcase_add_test(tc, zero_extent_boxes);
    tcase_add_test(tc, vector_paths_match_scalar_reference);
    tcase_add_test(tc, batch_matches_scalar_reference);
    suite_add_tcase(s, tc);
    return s;
}
