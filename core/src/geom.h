/* Internal: closest-point primitives shared by the closed forms and the
 * triangle tests. All are total: degenerate inputs (zero-length segments,
 * zero-area triangles, parallel segments) give a valid answer, never NaN. */
#ifndef CQ_GEOM_H
#define CQ_GEOM_H

#include <stdbool.h>

#include "cq/math.h"

/* The point of segment [a, b] closest to p; *t receives its parameter in [0, 1]. */
cq_vec3 cq__closest_on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b, double *t);

/* Closest points between segments [p1, q1] and [p2, q2]: c1 on the first
 * (parameter *s), c2 on the second (parameter *t). Parallel segments get a
 * deterministic pair from the middle of their overlap. Returns |c1 - c2|^2. */
double cq__closest_segments(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2,
                            double *s, double *t, cq_vec3 *c1, cq_vec3 *c2);

/* A segment within this sine of parallel to an edge (or another segment)
 * touches it along a line (about 5.7 degrees), and a manifold gets the two
 * ends of their overlap: one point would let a capsule lying along an edge
 * rock about it. Each end has its own depth (cq_line_end), so a slight
 * angle shows as one end shallower. */
#define CQ_LINE_SIN 0.1
/* Overlaps shorter than this fraction of the shorter of the two make no line. */
#define CQ_LINE_OVERLAP_MIN 1e-6

/* The two ends of a line contact between segment [s0, s1] (A's core when
 * seg_is_a, else B's) and edge [e0, e1] (the other shape's core), rounded
 * by ra and rb, n the unit normal from A to B: the ends of the segment's
 * overlap along the edge, where they are parallel within CQ_LINE_SIN and
 * the overlap is longer than CQ_LINE_OVERLAP_MIN of the shorter of the
 * two. Each end is measured where the two rounded shapes meet on a line
 * parallel to n (geom.c says why not along n alone). Writes B's surface
 * point there into at[i] and the depth (minus the ends' separation along
 * that line) into depth[i], low end first, and into t the segment's ends
 * projected on the edge's line as fractions of the edge (t[0] for s0).
 * False, with at and depth unspecified, when there is no line or an end
 * has no such line or is apart by more than skin. */
bool cq__line_ends(cq_vec3 s0, cq_vec3 s1, cq_vec3 e0, cq_vec3 e1, bool seg_is_a, cq_vec3 n, double ra, double rb,
                   double skin, cq_vec3 at[2], double depth[2], double t[2]);

/* Where on a triangle the closest point lies. */
typedef enum cq_tri_region {
    CQ_TRI_FACE,   /* interior: index 0 */
    CQ_TRI_EDGE,   /* edge index i runs from v[i] to v[(i+1)%3] */
    CQ_TRI_VERTEX, /* vertex index i */
} cq_tri_region;

/* The point of triangle (a, b, c) closest to p, and the feature it lies on. */
cq_vec3 cq__closest_on_triangle(cq_vec3 p, cq_vec3 a, cq_vec3 b, cq_vec3 c,
                                cq_tri_region *region, int *index);

#endif
