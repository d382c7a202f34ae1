/// @file cq/raycast.h
/// Ray casts against one posed shape of any type: closed forms for spheres,
/// capsules, boxes (slabs), triangles (Moller-Trumbore), planes and sharp
/// hulls (face-plane clipping, Cyrus-Beck); a Newton-accelerated
/// conservative advancement on GJK distances for rounded hulls.
///
/// Conventions shared by every shape:
/// - Solids are closed sets. A ray whose origin is inside or exactly on the
///   surface (up to rounding; for rounded hulls within CQ_RAY_GJK_TOLERANCE)
///   hits at distance 0 with point = origin and normal = -direction,
///   whichever way it points: the surface normal there is either undefined
///   (deep inside) or not the one the ray crosses.
/// - Otherwise the hit is the first entry into the shape: distance along the
///   ray, the world point, and the unit outward surface normal there
///   (dot(normal, direction) <= 0). A hit at exactly max_distance counts.
/// - Tangent rays count as hits when the arithmetic says they touch; rays
///   that graze a surface within rounding may go either way.
/// - Triangles and flat hulls are double-sided sheets, not solids: the
///   normal faces the ray's origin side, rays in their plane (edge-on,
///   |dot(unit normal, direction)| <= CQ_RAY_EDGE_ON) miss, and a zero-area
///   triangle is never hit.
/// - Zero-size shapes: a zero-radius sphere or capsule (a point, a segment)
///   is hit only by a ray starting exactly on it (the closed-set rule); a
///   box with zero extents follows the slab result (a flat box is a
///   rectangle hit on its face, and edge-on rays inside its plane reach its
///   rim); a hull that is a point or a segment without radius is never hit.
/// - No answer is ever NaN: rays parallel to a box slab or a hull face are
///   decided by which side the origin lies on, never by 0 * inf.
#ifndef CQ_RAYCAST_H
#define CQ_RAYCAST_H

#include <stdbool.h>

#include "cq/api.h"
#include "cq/math.h"
#include "cq/shape.h"

/// How far |direction| may be from 1; the direction is then normalised.
#define CQ_RAY_UNIT_TOL 1e-6

/// A sheet (triangle, flat hull) is missed by rays whose direction makes a
/// dot product of at most this with its unit normal (edge-on rays).
#define CQ_RAY_EDGE_ON 1e-12

/// Rounded hulls: the march stops when the ray point is within this
/// fraction of the hull's scale (radius + largest |vertex coordinate|) of
/// the rounded surface, so the reported distance is short of the exact one
/// by at most that much (divided by the cosine of the incidence angle).
#define CQ_RAY_GJK_TOLERANCE 1e-9

/// Rounded hulls: GJK distance evaluations allowed per ray (and each
/// evaluation's own cap on support points). Each step is a
/// Newton step on the convex distance along the ray, which never passes
/// the surface and converges quadratically (linearly with ratio 1/2 for an
/// exactly tangent ray); a ray not converged by then is a miss.
#define CQ_RAY_GJK_MAX_ITERATIONS 64

/// A ray in world space.
typedef struct cq_ray {
    cq_vec3 origin;      ///< start point (finite)
    cq_vec3 direction;   ///< unit within CQ_RAY_UNIT_TOL
    double max_distance; ///< finite, >= 0: hits farther along the ray are ignored
} cq_ray;

/// The answer of a ray cast, in world space.
typedef struct cq_ray_hit {
    bool hit;        ///< false: the other fields are zero
    double distance; ///< along the (normalised) direction, in [0, max_distance]
    cq_vec3 point;   ///< origin + distance * direction
    cq_vec3 normal;  ///< unit outward normal of the surface at point; -direction when the ray starts inside
} cq_ray_hit;

/// Casts a ray (world space) at a shape posed by pose. The shape and pose are
/// trusted to have passed cq_shape_validate and cq_pose_from_*; the ray is
/// checked here. Returns CQ_OK (hit or miss in *out), or leaves *out a miss
/// and returns CQ_ENOT_FINITE (a non-finite origin, direction or
/// max_distance), CQ_ENOT_UNIT (|direction| off 1 by more than
/// CQ_RAY_UNIT_TOL), CQ_ENEGATIVE (max_distance < 0) or CQ_ERANGE (an
/// unknown shape type or a convex shape without a hull). Never allocates.
CQ_API int cq_raycast(const cq_shape *shape, const cq_xform *pose, const cq_ray *ray, cq_ray_hit *out);

#endif
