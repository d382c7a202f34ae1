/* Internal to the hull builder: the grid frame, and the draft that hull.c's
 * point / segment / polygon builders and hull_build.c's quickhull fill in
 * bounded stack scratch before cq_hull_build makes the hull's one
 * allocation. */
#ifndef CQ_HULL_BUILD_H
#define CQ_HULL_BUILD_H

#include <math.h>
#include <stdbool.h>

#include "cq/hull.h"

/* The builders see the points centred, scaled into (-1, 1) and snapped to
 * multiples of 2^-CQ_HULL_GRID_BITS, in units of that step: integers of at
 * most 2^24 in magnitude. Differences of such points are exact, and so are
 * their cross products (below 2^51), which makes every plane normal exact
 * before it is normalised and lets cq_hull_side decide orientation exactly. */
#define CQ_HULL_GRID_BITS 24

/* The hull's tolerance tau, relative to the (-1, 1) frame: far below any
 * collision skin, far above the grid step. */
#define CQ_HULL_REL_TOL 1e-6
/* Decisions (on a point, line or plane; a point outside or not) use this
 * fraction of tau. The planes are fitted to the vertices alone, so that a
 * rebuild from them is exact; the other half of tau is what keeps every
 * point dropped against the triangulation behind those planes. */
#define CQ_HULL_DECIDE 0.5
/* Plus this many ulps of the largest absolute coordinate: what centring the
 * points and moving the planes back costs in rounding. */
#define CQ_HULL_ROUND_ULPS 64

/* Euler bounds for a polyhedron of CQ_HULL_MAX_POINTS vertices. */
#define CQ_HULL_MAX_FACES (2 * CQ_HULL_MAX_POINTS - 4)
#define CQ_HULL_MAX_EDGES (3 * CQ_HULL_MAX_POINTS - 6)

/* A hull before layout. Vertex indices are input-point indices; planes are
 * in grid units. */
typedef struct cq_hull_draft {
    int dim;
    int face_count, loop_count, edge_count;
    bool used[CQ_HULL_MAX_POINTS]; /* the input points that are hull vertices */
    cq_hull_face faces[CQ_HULL_MAX_FACES];
    uint16_t loop[2 * CQ_HULL_MAX_EDGES];
    cq_hull_edge edges[CQ_HULL_MAX_EDGES];
    /* dim 3: the exactly convex triangulation's vertex graph, neighbours of
     * point i in adj[adj_first[i] .. adj_first[i + 1]). On it a climb finds
     * the maximum of any linear function over its vertices. */
    uint16_t adj_first[CQ_HULL_MAX_POINTS + 1];
    uint16_t adj[6 * CQ_HULL_MAX_POINTS];
} cq_hull_draft;

/* The exact sign (-1, 0, 1) of dot(p - a, n) for grid points a, p and an
 * exact cross product n of grid differences (|n| < 2^52, |p - a| <= 2^25).
 * n splits exactly into hi, a multiple of 2^26 (adding and subtracting
 * 3 * 2^77 rounds to one), and lo, below 2^25: then both partial dot
 * products are exact (integers below 2^53, times 2^26 for hi), and their
 * one rounded sum keeps the sign. Needs IEEE double evaluation
 * (FLT_EVAL_METHOD 0), which every 64-bit target has. */
static inline int cq_hull_side(cq_vec3 n, cq_vec3 a, cq_vec3 p)
{
    const double round26 = 3.0 * 151115727451828646838272.0; /* 3 * 2^77 */
    cq_vec3 d = cq_sub(p, a);
    cq_vec3 hi = cq_v3((n.x + round26) - round26, (n.y + round26) - round26, (n.z + round26) - round26);
    double s = cq_dot(d, hi) + cq_dot(d, cq_sub(n, hi));
    return (s > 0) - (s < 0);
}

/* The solid hull of the grid points s[0..n) grown from the tetrahedron
 * init[0..3] (init[3] strictly off the plane of the others), with coplanar
 * triangles merged into convex polygon faces; tol in grid units. */
void cq__hull_build_solid(const cq_vec3 *s, int n, const int init[4], double tol, cq_hull_draft *out);

#endif
