/* The convex-path suites' shared helpers (convex_util.h). */
#include "convex_util.h"

#include <check.h>
#include <math.h>

#include "testutil.h"

cq_hull *cx_hull_of(const cq_vec3 *pts, int n, double radius)
{
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(pts, n, radius, &h), CQ_OK);
    return h;
}

cq_hull *cx_box_hull(cq_vec3 half)
{
    cq_vec3 c[8];
    cq_obb o = {cq_v3(0, 0, 0), half, cq_mat3_identity()};
    tu_obb_corners(&o, c);
    return cx_hull_of(c, 8, 0);
}

cq_shape cx_convex(const cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }

cq_contact cx_run(const cq_pair_query *q)
{
    cq_contact c;
    ck_assert_int_eq(cq_collide(q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    return c;
}

cq_contact cx_pair(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb)
{
    cq_pair_query q = {.a = a, .xa = xa, .b = b, .xb = xb};
    return cx_run(&q);
}

cq_xform cx_moved(const cq_xform *to, cq_vec3 p, cq_mat3 r)
{
    return (cq_xform){cq_xform_point(to, p), cq_mul_mm(&to->r, &r)};
}

double cx_capsule_sdf(cq_vec3 p, const cq_xform *x, double r, double h)
{
    return tu_dist_point_segment(p, cq_xform_point(x, cq_v3(0, h, 0)), cq_xform_point(x, cq_v3(0, -h, 0))) - r;
}

double cx_box_sdf(cq_vec3 p, const cq_xform *x, cq_vec3 half)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    cq_vec3 q = cq_v3(fabs(l.x) - half.x, fabs(l.y) - half.y, fabs(l.z) - half.z);
    cq_vec3 o = cq_v3(fmax(q.x, 0), fmax(q.y, 0), fmax(q.z, 0));
    return cq_len(o) + fmin(fmax(q.x, fmax(q.y, q.z)), 0);
}
