/// @file cq/hull.h
/// Convex hulls of 1..256 points, built once when a shape is created and
/// read-only afterwards. Degenerate inputs stay usable: a hull may be a
/// point (dim 0), a segment (dim 1), a flat polygon (dim 2) or a solid (dim 3).
#ifndef CQ_HULL_H
#define CQ_HULL_H

#include <stdint.h>

#include "cq/api.h"
#include "cq/math.h"
#include "cq/status.h"

/// Most input points a hull accepts.
#define CQ_HULL_MAX_POINTS 256

/// A face: outward plane and its vertex loop (counter-clockwise seen from outside).
typedef struct cq_hull_face {
    cq_vec3 normal;  ///< outward unit normal
    double offset;   ///< plane: dot(normal, x) = offset
    uint16_t first;  ///< first index into face_vertices
    uint16_t count;  ///< number of vertices in the loop (>= 3)
} cq_hull_face;

/// An edge between two hull vertices and the two faces that share it (a
/// flat polygon's rim edges list its two sides, f0 = 0 and f1 = 1; both
/// 0xFFFF for a segment). v0 -> v1 runs counter-clockwise around f0 seen
/// from outside.
typedef struct cq_hull_edge {
    uint16_t v0, v1;
    uint16_t f0, f1;
} cq_hull_edge;

/// A convex hull in its local frame. One allocation; free with cq_hull_free.
typedef struct cq_hull {
    int dim;           ///< 0 point, 1 segment, 2 polygon, 3 solid
    int vertex_count;  ///< extreme points only (duplicates and interior points dropped)
    int face_count;    ///< 0 for dim < 2; a polygon has its two sides as faces
    int edge_count;
    int face_vertex_count;
    double radius;     ///< rounding radius (>= 0)
    cq_vec3 *vertices;
    cq_hull_face *faces;
    uint16_t *face_vertices;
    cq_hull_edge *edges;
    cq_vec3 centroid;  ///< of the vertices; inside the hull
    cq_vec3 aabb_min, aabb_max; ///< of the vertices, without radius
    /// Internal, read-only: what the hull-hull SAT reads beyond the arrays
    /// above (its edge masks), laid out once here (core/src/sat_hull.c);
    /// NULL for a hull the SAT never takes.
    const void *sat_data;
} cq_hull;

/// Builds the hull of points[0..count) with a rounding radius. count must be
/// 1..CQ_HULL_MAX_POINTS and every coordinate finite (CQ_ERANGE,
/// CQ_ENOT_FINITE, CQ_ENEGATIVE for the radius), CQ_ENO_MEMORY if the
/// allocator fails. On success *out is a new hull owned by the caller; on
/// failure *out is NULL. Tolerance tau = 1e-6 * 2^e + 64 * DBL_EPSILON *
/// max|coordinate|, 2^e the power of two just above the half-extent about
/// the bounding-box centre: points within tau / 2 of a point, line or plane
/// count as on it, every input point lies within tau behind every face
/// plane and every face vertex within tau of its plane. The vertices are
/// input points in input order, and the hull is a function of them alone:
/// building from a hull's vertices and radius gives the same hull, every
/// field and array bit for bit.
CQ_API int cq_hull_build(const cq_vec3 *points, int count, double radius, cq_hull **out);

/// Frees a hull from cq_hull_build; NULL is ignored.
CQ_API void cq_hull_free(cq_hull *hull);

/// The vertex of the hull farthest along dir (local frame), without the
/// radius; ties go to the lowest index.
CQ_API int cq_hull_support(const cq_hull *hull, cq_vec3 dir);

#endif
