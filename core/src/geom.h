/* Internal: closest-point primitives shared by the closed forms and the
 * triangle tests. All are total: degenerate inputs (zero-length segments,
 * zero-area triangles, parallel segments) give a valid answer, never NaN. */
#ifndef CQ_GEOM_H
#define CQ_GEOM_H

#include <stdbool.h>

#include "cq/math.h"

/* The point of segment [a, b] closest to p; *t receives its parameter in [0, 1]. */
cq_vec3 cq_closest_on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b, double *t);

/* Closest points between segments [p1, q1] and [p2, q2]: c1 on the first
 * (parameter *s), c2 on the second (parameter *t). Parallel segments get a
 * deterministic pair from the middle of their overlap. Returns |c1 - c2|^2. */
double cq_closest_segments(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2,
                           double *s, double *t, cq_vec3 *c1, cq_vec3 *c2);

/* A segment within this sine of parallel to an edge (or another segment)
 * touches it along a line (about 5.7 degrees), and a manifold gets the two
 * ends of their overlap: one point would let a capsule lying along an edge
 * rock about it. Each end has its own depth (cq_line_end), so a slight
 * angle shows as one end shallower. */
#define CQ_LINE_SIN 0.1
/* Overlaps shorter than this fraction of the shorter of the two make no line. */
#define CQ_LINE_OVERLAP_MIN 1e-6

/* Where segment [s0, s1] lies along edge [e0, e1]: t[0] and t[1] receive
 * the segment's ends projected on the edge's line, as fractions of the
 * edge, and [*lo, *hi] their overlap with the edge, [0, 1]. False when the
 * two are not parallel within CQ_LINE_SIN, either has no length, or the
 * overlap is shorter than CQ_LINE_OVERLAP_MIN of the shorter. */
bool cq_line_overlap(cq_vec3 s0, cq_vec3 s1, cq_vec3 e0, cq_vec3 e1, double t[2], double *lo, double *hi);

/* One end of a line contact: core points pa of A and pb of B, rounded by
 * ra and rb, n the unit normal from A to B. Two balls (pa, ra) and (pb, rb)
 * whose centres are apart by `along` along n and by |l| across it meet on
 * a line parallel to n only when |l| <= R = ra + rb (within rounding), and
 * are then apart along it by along - sqrt(R^2 - |l|^2) at least, on the
 * line a fraction rb / R of the way from pb to pa: *sep (negative:
 * overlapping) and *at, B's surface point there. Measured along n alone,
 * an end that drifted across n would claim the full depth while apart.
 * False when no such line exists. */
bool cq_line_end(cq_vec3 pa, cq_vec3 pb, cq_vec3 n, double ra, double rb, cq_vec3 *at, double *sep);

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
