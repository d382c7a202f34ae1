/* Math helpers against independent formulas (Rodrigues' rotation). */
#include "testutil.h"

/* Rodrigues: v rotated by angle about unit k. */
static cq_vec3 rodrigues(cq_vec3 v, cq_vec3 k, double angle)
{
    double c = cos(angle), s = sin(angle);
    return cq_add(cq_add(cq_scale(v, c), cq_scale(cq_cross(k, v), s)), cq_scale(k, cq_dot(k, v) * (1 - c)));
}

START_TEST(quaternion_matches_rodrigues)
{
    tu_rng rng = {5};
    for (int i = 0; i < 1000; i++) {
        cq_vec3 k = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        if (!cq_normalize(k, 1e-6, &k))
            continue;
        double angle = tu_uniform(&rng, -CQ_PI, CQ_PI);
        cq_mat3 r = tu_axis_angle(k, angle);
        cq_vec3 v = cq_v3(tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5));
        tu_assert_vec_eq_tol(cq_mul_mv(&r, v), rodrigues(v, k, angle), 1e-12);
        ck_assert_double_eq_tol(cq_det(&r), 1, 1e-12);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                ck_assert_double_eq_tol(cq_dot(r.c[a], r.c[b]), a == b, 1e-12);
    }
}
END_TEST

START_TEST(transforms_round_trip)
{
    tu_rng rng = {6};
    for (int i = 0; i < 1000; i++) {
        cq_xform a = tu_pose(&rng, 100), b = tu_pose(&rng, 100);
        cq_vec3 p = cq_v3(tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5));
        tu_assert_vec_eq_tol(cq_xform_inv_point(&a, cq_xform_point(&a, p)), p, 1e-12);
        /* b's point seen from a, then mapped back through a, is b's point. */
        cq_xform rel = cq_xform_relative(&a, &b);
        cq_vec3 via = cq_xform_point(&a, cq_xform_point(&rel, p));
        tu_assert_vec_eq_tol(via, cq_xform_point(&b, p), 1e-10);
        cq_mat3 ab = cq_mul_mm(&a.r, &rel.r);
        for (int k = 0; k < 3; k++)
            tu_assert_vec_eq_tol(ab.c[k], b.r.c[k], 1e-12);
    }
}
END_TEST

START_TEST(normalize_refuses_tiny_vectors)
{
    cq_vec3 out = cq_v3(7, 7, 7);
    ck_assert(!cq_normalize(cq_v3(0, 0, 0), 0, &out));
    ck_assert(!cq_normalize(cq_v3(1e-200, 0, 0), 1e-300, &out));
    ck_assert_double_eq(out.x, 7);
    ck_assert(cq_normalize(cq_v3(3, 0, 4), 1e-300, &out));
    tu_assert_vec_eq_tol(out, cq_v3(0.6, 0, 0.8), 1e-15);
    ck_assert(!cq_v3_finite(cq_v3(0, NAN, 0)) && !cq_finite(INFINITY) && cq_finite(1e308));
}
END_TEST

Suite *math_suite(void)
{
    Suite *s = suite_create("math");
    TCase *tc = tcase_create("math");
    tcase_add_test(tc, quaternion_matches_rodrigues);
    tcase_add_test(tc, transforms_round_trip);
    tcase_add_test(tc, normalize_refuses_tiny_vectors);
    suite_add_tcase(s, tc);
    return s;
}
