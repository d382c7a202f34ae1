/* World boxes of posed shapes against their extreme points: the proxy's
 * support along each world axis (plus the radius) must be exactly the box's
 * face, so the box both contains the shape and is tight. */
#include "aabb.h"
#include "cq/proxy.h"
#include "testutil.h"

/* Oracle: the shape's extent along unit world axis e, by the proxy support. */
static double extent(const cq_shape *s, const cq_xform *x, cq_vec3 e)
{
    cq_vec3 storage[CQ_PROXY_STORAGE];
    cq_proxy p;
    ck_assert_int_eq(cq_shape_proxy(s, storage, &p), CQ_OK);
    cq_vec3 local = cq_mul_mtv(&x->r, e);
    return cq_dot(cq_xform_point(x, p.points[cq_proxy_support(&p, local)]), e) + p.radius;
}

START_TEST(boxes_are_exact_extents)
{
    tu_rng rng = {41};
    const cq_vec3 pts[5] = {{0.3, -0.2, 0.1}, {-0.5, 0.4, 0.2}, {0.1, 0.6, -0.4}, {0.2, 0.1, 0.7}, {-0.3, -0.5, -0.2}};
    cq_hull *h;
    ck_assert_int_eq(cq_hull_build(pts, 5, 0.05, &h), CQ_OK);
    cq_shape shapes[] = {{.type = CQ_SPHERE, .sphere = {0.7}}, {.type = CQ_CAPSULE, .capsule = {0.2, 0.9}},
                         {.type = CQ_BOX, .box = {{0.4, 0.1, 0.8}}},
                         {.type = CQ_TRIANGLE, .triangle = {{{0, 0, 0}, {1, 0.2, 0}, {0.3, 1, 0.5}}}},
                         {.type = CQ_CONVEX, .convex = {h}}};
    for (int i = 0; i < 2000; i++) {
        const cq_shape *s = &shapes[i % 5];
        cq_xform x = tu_pose(&rng, 100);
        cq_aabb a = cq__shape_aabb(s, &x);
        for (int k = 0; k < 3; k++) {
            cq_vec3 e = cq_v3(k == 0, k == 1, k == 2);
            ck_assert_double_eq_tol(cq_comp(a.max, k), extent(s, &x, e), 1e-12);
            ck_assert_double_eq_tol(cq_comp(a.min, k), -extent(s, &x, cq_neg(e)), 1e-12);
        }
    }
    cq_hull_free(h);
}
END_TEST

START_TEST(planes_are_infinite_but_on_their_bounded_side)
{
    cq_shape ground = {.type = CQ_PLANE, .plane = {{0, 1, 0}, 0.5}};
    cq_xform up = {cq_v3(3, 2, 1), cq_mat3_identity()};
    cq_aabb a = cq__shape_aabb(&ground, &up);
    ck_assert(isinf(a.min.x) && isinf(a.min.y) && isinf(a.min.z) && isinf(a.max.x) && isinf(a.max.z));
    ck_assert_double_eq(a.max.y, 2.5);
    cq_xform flip = {cq_v3(0, 0, 0), tu_axis_angle(cq_v3(1, 0, 0), CQ_PI)}; /* normal -y: y >= -0.5 */
    a = cq__shape_aabb(&ground, &flip);
    ck_assert(isinf(a.max.y) && a.min.y > -0.5 - 1e-12 && a.min.y < -0.5 + 1e-12);
    cq_xform tilt = {cq_v3(0, 0, 0), tu_axis_angle(cq_v3(0, 0, 1), 0.3)};
    a = cq__shape_aabb(&ground, &tilt);
    ck_assert(isinf(a.max.y) && isinf(a.min.y) && isinf(a.max.x) && isinf(a.min.x));
}
END_TEST

Suite *aabb_suite(void)
{
    Suite *s = suite_create("aabb");
    TCase *tc = tcase_create("aabb");
    tcase_add_test(tc, boxes_are_exact_extents);
    tcase_add_test(tc, planes_are_infinite_but_on_their_bounded_side);
    suite_add_tcase(s, tc);
    return s;
}
