/* Internal: closest-point primitives shared by the closed forms and the
 * triangle tests. All are total: degenerate inputs (zero-length segments,
 * zero-area triangles, parallel segments) give a valid answer, never NaN. */
#ifndef CQ_GEOM_H
#define CQ_GEOM_H

#include "cq/math.h"

/* The point of segment [a, b] closest to p; *t receives its parameter in [0, 1]. */
cq_vec3 cq_closest_on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b, double *t);

/* Closest points between segments [p1, q1] and [p2, q2]: c1 on the first
 * (parameter *s), c2 on the second (parameter *t). Parallel segments get a
 * deterministic pair from the middle of their overlap. Returns |c1 - c2|^2. */
double cq_closest_segments(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2,
                           double *s, double *t, cq_vec3 *c1, cq_vec3 *c2);

/* Where on a triangle the closest point lies. */
typedef enum cq_tri_region {
    CQ_TRI_FACE,   /* interior: index 0 */
    CQ_TRI_EDGE,   /* edge index i runs from v[i] to v[(i+1)%3] */
    CQ_TRI_VERTEX, /* vertex index i */
} cq_tri_region;

/* The point of triangle (a, b, c) closest to p, and the feature it lies on. */
cq_vec3 cq_closest_on_triangle(cq_vec3 p, cq_vec3 a, cq_vec3 b, cq_vec3 c,
                               cq_tri_region *region, int *index);

#endif
