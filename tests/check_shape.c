/* Validation of shapes and poses (API.md section 1): every invalid input is
 * rejected with its status and the field it is in. */
#include <string.h>

#include "testutil.h"

static void assert_fault(cq_fault f, int status, const char *field, int index, int sub)
{
    ck_assert_int_eq(f.status, status);
    if (field)
        ck_assert_str_eq(f.field, field);
    ck_assert_int_eq(f.index, index);
    ck_assert_int_eq(f.sub, sub);
}

START_TEST(sizes_must_be_finite_and_non_negative)
{
    cq_shape s = {.type = CQ_SPHERE, .sphere = {-0.1}};
    assert_fault(cq_shape_validate(&s), CQ_ENEGATIVE, "radius", -1, -1);
    s.sphere.radius = 0;
    assert_fault(cq_shape_validate(&s), CQ_OK, NULL, -1, -1);
    s = (cq_shape){.type = CQ_CAPSULE, .capsule = {1, -1}};
    assert_fault(cq_shape_validate(&s), CQ_ENEGATIVE, "half_height", -1, -1);
    s = (cq_shape){.type = CQ_BOX, .box = {{1, NAN, 1}}};
    assert_fault(cq_shape_validate(&s), CQ_ENOT_FINITE, "half_extents", 1, -1);
    s.box.half = cq_v3(1, 1, -2);
    assert_fault(cq_shape_validate(&s), CQ_ENEGATIVE, "half_extents", 2, -1);
    s.box.half = cq_v3(0, 0, 0); /* a point box is legal */
    assert_fault(cq_shape_validate(&s), CQ_OK, NULL, -1, -1);
    s = (cq_shape){.type = CQ_TRIANGLE, .triangle = {{{0, 0, 0}, {1, 0, 0}, {0, INFINITY, 0}}}};
    assert_fault(cq_shape_validate(&s), CQ_ENOT_FINITE, "vertices", 2, 1);
    s.type = (cq_shape_type)99;
    ck_assert_int_eq(cq_shape_validate(&s).status, CQ_ERANGE);
}
END_TEST

START_TEST(plane_normal_must_be_unit)
{
    cq_shape s = {.type = CQ_PLANE, .plane = {{0, 1.00005, 0}, 2}};
    assert_fault(cq_shape_validate(&s), CQ_OK, NULL, -1, -1);
    ck_assert_double_eq_tol(cq_len(s.plane.normal), 1, 1e-15);
    s.plane.normal = cq_v3(0, 1.0002, 0);
    assert_fault(cq_shape_validate(&s), CQ_ENOT_UNIT, "normal", -1, -1);
    s.plane.normal = cq_v3(0, 0, 0);
    assert_fault(cq_shape_validate(&s), CQ_ENOT_UNIT, "normal", -1, -1);
    s.plane.normal = cq_v3(0, 1, 0);
    s.plane.offset = NAN;
    assert_fault(cq_shape_validate(&s), CQ_ENOT_FINITE, "offset", -1, -1);
}
END_TEST

START_TEST(quaternions_are_normalised_within_tolerance)
{
    cq_xform x;
    double l = 1.0009; /* within 1e-3: accepted and normalised */
    cq_quat q = {0, sin(0.5) * l, 0, cos(0.5) * l};
    assert_fault(cq_pose_from_quat(cq_v3(1, 2, 3), q, &x), CQ_OK, NULL, -1, -1);
    ck_assert_double_eq_tol(cq_det(&x.r), 1, 1e-12);
    tu_assert_vec_eq_tol(x.r.c[0], cq_v3(cos(1.0), 0, -sin(1.0)), 1e-12);
    q.w *= 1.002 / l, q.y *= 1.002 / l;
    assert_fault(cq_pose_from_quat(cq_v3(1, 2, 3), q, &x), CQ_ENOT_UNIT, "rotation", -1, -1);
    assert_fault(cq_pose_from_quat(cq_v3(1, 2, 3), (cq_quat){0, 0, 0, 0}, &x), CQ_ENOT_UNIT, "rotation", -1, -1);
    assert_fault(cq_pose_from_quat(cq_v3(1, 2, 3), (cq_quat){0, NAN, 0, 1}, &x), CQ_ENOT_FINITE, "rotation", 1, -1);
    assert_fault(cq_pose_from_quat(cq_v3(1, INFINITY, 3), (cq_quat){0, 0, 0, 1}, &x), CQ_ENOT_FINITE, "position", 1, -1);
}
END_TEST

START_TEST(axes_must_be_a_rotation)
{
    cq_xform x;
    cq_vec3 ax[3] = {cq_v3(1, 0, 0), cq_v3(0, 1, 0), cq_v3(0, 0, 1)};
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_OK, NULL, -1, -1);
    ax[1] = cq_v3(0, 1.0002, 0);
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_ENOT_UNIT, "axes", 1, -1);
    ax[1] = cq_v3(0.0002, 1, 0);
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_ENOT_ORTHOGONAL, NULL, 1, -1);
    ax[1] = cq_v3(0, 1, 0);
    ax[2] = cq_v3(0, 0, -1); /* a mirror */
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_EMIRROR, "axes", -1, -1);
    ax[2] = cq_v3(0, NAN, 1);
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_ENOT_FINITE, "axes", 2, 1);
    /* Nearly orthonormal axes become an exact rotation close to them. */
    ax[0] = cq_v3(1, 4e-5, 0), ax[1] = cq_v3(-3e-5, 1, 2e-5), ax[2] = cq_v3(0, -1e-5, 1);
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_OK, NULL, -1, -1);
    for (int a = 0; a < 3; a++) {
        tu_assert_vec_eq_tol(x.r.c[a], ax[a], 1e-4);
        for (int b = 0; b < 3; b++)
            ck_assert_double_eq_tol(cq_dot(x.r.c[a], x.r.c[b]), a == b, 1e-15);
    }
    ax[2] = cq_v3(0, NAN, 1);
    assert_fault(cq_pose_from_axes(cq_v3(0, 0, 0), ax, &x), CQ_ENOT_FINITE, "axes", 2, 1);
}
END_TEST

START_TEST(every_status_has_a_message)
{
    const int codes[] = {CQ_ENOT_FINITE, CQ_ENEGATIVE, CQ_ENOT_UNIT, CQ_ENOT_ORTHOGONAL,
                         CQ_EMIRROR, CQ_ERANGE, CQ_EUNSUPPORTED, CQ_ENO_MEMORY, CQ_ENOT_FOUND,
                         CQ_ECANCELED, CQ_ELIMIT, CQ_EBUDGET};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        ck_assert_str_ne(cq_strerror(codes[i]), "unknown status");
        ck_assert_str_ne(cq_err_name(codes[i]), "UNKNOWN");
    }
    ck_assert_str_eq(cq_err_name(CQ_EMIRROR), "MIRROR");
    ck_assert_str_eq(cq_strerror(12345), "unknown status");
}
END_TEST

Suite *shape_suite(void)
{
    Suite *s = suite_create("shape");
    TCase *tc = tcase_create("validate");
    tcase_add_test(tc, sizes_must_be_finite_and_non_negative);
    tcase_add_test(tc, plane_normal_must_be_unit);
    tcase_add_test(tc, quaternions_are_normalised_within_tolerance);
    tcase_add_test(tc, axes_must_be_a_rotation);
    tcase_add_test(tc, every_status_has_a_message);
    suite_add_tcase(s, tc);
    return s;
}
