/* Helpers of the convex-path suites (check_convex.c, check_convex_points.c):
 * hulls and shapes to test with, pair queries that must succeed, and the
 * signed distances the line-contact oracles use. */
#ifndef CQ_TESTS_CONVEX_UTIL_H
#define CQ_TESTS_CONVEX_UTIL_H

#include "cq/collision.h"
#include "cq/hull.h"

/* A hull of pts rounded by radius; fails the test if it cannot be built.
 * The caller frees it (cq_hull_free). */
cq_hull *cx_hull_of(const cq_vec3 *pts, int n, double radius);
/* The unrounded box hull of half extents half; the caller frees it. */
cq_hull *cx_box_hull(cq_vec3 half);
/* A convex shape over h, which it borrows. */
cq_shape cx_convex(const cq_hull *h);
/* cq_collide on q, which must answer CQ_OK with a sane contact. */
cq_contact cx_run(const cq_pair_query *q);
cq_contact cx_pair(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb);
/* A local pose (position p, rotation r) carried by the pose to. */
cq_xform cx_moved(const cq_xform *to, cq_vec3 p, cq_mat3 r);
/* Signed distances of p from a posed capsule (axis along local y, radius
 * r, half-height h) and from a posed box of half extents half. */
double cx_capsule_sdf(cq_vec3 p, const cq_xform *x, double r, double h);
double cx_box_sdf(cq_vec3 p, const cq_xform *x, cq_vec3 half);

#endif
