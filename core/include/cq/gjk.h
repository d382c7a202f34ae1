/// @file cq/gjk.h
/// The general convex path: GJK distance and EPA penetration depth between
/// two shape-agnostic proxies (point sets inflated by a radius). Both work
/// on the cores (the point sets' hulls, without radii); cq_gjk_apply_radii
/// and cq_epa_apply_radii turn a core answer into one for the rounded shapes.
/// Both have iteration caps and explicit failure codes, never return NaN and
/// never allocate: EPA's polytope lives in a fixed-capacity struct on the stack.
#ifndef CQ_GJK_H
#define CQ_GJK_H

#include <stdbool.h>
#include <stdint.h>

#include "cq/api.h"
#include "cq/math.h"

/// A convex shape as GJK sees it: the convex hull of points (in the shape's
/// local frame) inflated by radius. A sphere is 1 point + radius, a capsule
/// its 2 segment ends + radius, a box its 8 corners, a triangle its 3
/// vertices, a hull its vertices + rounding radius. count must be 1..65535.
typedef struct cq_proxy {
    const cq_vec3 *points;
    int count;
    double radius; ///< >= 0
} cq_proxy;

/// The index of the proxy point farthest along dir (local frame); ties go to
/// the lowest index, so the answer is deterministic.
CQ_API int cq_proxy_support(const cq_proxy *p, cq_vec3 dir);

/// A simplex of the Minkowski difference A - B, as pairs of proxy point
/// indices (point index_a[k] of A minus point index_b[k] of B). GJK returns
/// its terminal simplex in this form (EPA starts from it) and can be warm
/// started from the previous frame's. Zero-initialised means empty.
typedef struct cq_simplex_cache {
    int count; ///< 0..4
    uint16_t index_a[4];
    uint16_t index_b[4];
} cq_simplex_cache;

/// GJK iteration cap when the options give none.
#define CQ_GJK_DEFAULT_MAX_ITERATIONS 32
/// Core distances at or below this many world units count as touching.
#define CQ_GJK_DEFAULT_TOLERANCE 1e-9

/// How a GJK query ended. Each outcome has its own code. "tolerance" is the
/// options' touching band, raised to the coordinates' rounding noise.
typedef enum cq_gjk_status {
    /// Core distance > tolerance: distance, normal and witnesses are the
    /// closest points.
    CQ_GJK_SEPARATED,
    /// Core distance <= tolerance and no overlap deeper than tolerance: the
    /// cores touch. No normal: EPA gives one (DEGENERATE when the contact
    /// is flat, e.g. coplanar faces of flat shapes).
    CQ_GJK_TOUCHING,
    /// The cores overlap by more than tolerance (certified by a polytope of
    /// A - B around the origin): EPA gives depth and normal.
    CQ_GJK_PENETRATING,
    /// The cap was reached before one of the above was certain.
    CQ_GJK_ITERATION_LIMIT,
} cq_gjk_status;

/// The wire-style name of a status ("separated", "touching", ...).
CQ_API const char *cq_gjk_status_name(cq_gjk_status s);

/// GJK options. Zero-initialised fields take the defaults; NULL options are
/// all defaults.
typedef struct cq_gjk_options {
    int max_iterations; ///< support evaluations allowed; <= 0 means CQ_GJK_DEFAULT_MAX_ITERATIONS
    double tolerance;   ///< touching band in world units; <= 0 means CQ_GJK_DEFAULT_TOLERANCE
    /// Warm start, may be NULL: a simplex from an earlier query of the same
    /// two proxies (indices out of range are ignored). On return it holds
    /// the terminal simplex (the same as the result's).
    cq_simplex_cache *cache;
} cq_gjk_options;

/// The answer of cq_gjk_distance, in world space.
typedef struct cq_gjk_result {
    cq_gjk_status status;
    /// Core distance: the closest-point distance when SEPARATED, <= tolerance
    /// when TOUCHING, 0 when PENETRATING; at ITERATION_LIMIT the best upper
    /// bound found (the true distance is not larger).
    double distance;
    cq_vec3 point_a;    ///< witness on A's core: the closest point (PENETRATING: a point of both cores, within tolerance)
    cq_vec3 point_b;    ///< witness on B's core; point_b - point_a = distance * normal when has_normal
    bool has_normal;    ///< SEPARATED, or ITERATION_LIMIT with a best distance above tolerance
    cq_vec3 normal;     ///< unit, from A to B, valid when has_normal; zero otherwise
    int iterations;     ///< support points spent on distance and the touching/penetrating decision (<= the cap; the few probes completing a tetrahedron are not counted)
    cq_simplex_cache simplex; ///< terminal simplex: EPA's starting point, or a warm start
} cq_gjk_result;

/// Distance between the cores of two proxies posed by xa and xb (finite
/// coordinates). Total: degenerate proxies (repeated, collinear or coplanar
/// points) give finite answers. The loop cannot oscillate: the distance must strictly decrease
/// at every step (otherwise the previous best is returned), a support point
/// already in the simplex ends it, and it is capped by max_iterations.
/// Within the touching band it decides TOUCHING against PENETRATING by
/// bounding the penetration depth (sharing EPA's machinery, within the same
/// iteration cap).
CQ_API cq_gjk_result cq_gjk_distance(const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                                     const cq_xform *xb, const cq_gjk_options *opt);

/// Turns a core result into one for the rounded shapes: when the result has
/// a normal, subtracts both radii from distance (negative: the rounded
/// shapes overlap by -distance along normal) and moves the witnesses onto
/// the rounded surfaces. Results without a normal are left unchanged (their
/// cores touch or overlap: use EPA and cq_epa_apply_radii).
CQ_API void cq_gjk_apply_radii(cq_gjk_result *r, const cq_proxy *a, const cq_proxy *b);

/// EPA vertex capacity of the fixed polytope.
#define CQ_EPA_MAX_VERTICES 128
/// EPA face capacity (a closed triangulation of V vertices has 2V - 4 faces).
#define CQ_EPA_MAX_FACES 256
/// EPA iteration cap when the options give none.
#define CQ_EPA_DEFAULT_MAX_ITERATIONS 64
/// EPA stops when a support point lies within this fraction of the depth
/// (plus rounding noise) beyond the closest face, or within 4e-12 of the
/// shapes' size when that is larger (the width below which EPA treats a
/// face as flat).
#define CQ_EPA_DEFAULT_TOLERANCE 1e-9

/// How EPA ended: OK or why it failed.
typedef enum cq_epa_status {
    CQ_EPA_OK,
    CQ_EPA_ITERATION_LIMIT, ///< not converged within max_iterations
    CQ_EPA_CAPACITY,        ///< the polytope ran out of vertices or faces
    CQ_EPA_DEGENERATE,      ///< no defined normal: the difference is flat, a segment or a point, or the polytope broke numerically
} cq_epa_status;

/// The name of a status ("ok", "iteration_limit", "capacity", "degenerate").
CQ_API const char *cq_epa_status_name(cq_epa_status s);

/// EPA options. Zero-initialised fields take the defaults; NULL options are
/// all defaults.
typedef struct cq_epa_options {
    int max_iterations; ///< expansions allowed; <= 0 means CQ_EPA_DEFAULT_MAX_ITERATIONS
    double tolerance;   ///< relative convergence; <= 0 means CQ_EPA_DEFAULT_TOLERANCE
} cq_epa_options;

/// The answer of cq_epa_penetration, in world space. depth, normal and the
/// witnesses are set only when status is CQ_EPA_OK (zero otherwise).
typedef struct cq_epa_result {
    cq_epa_status status;
    /// Core penetration depth: moving B by depth along normal makes the
    /// cores touch. Slightly negative (rounding) for cores that just touch;
    /// for separated cores it is negative and only bounds their distance.
    double depth;
    cq_vec3 normal;  ///< unit, from A to B
    cq_vec3 point_a; ///< a point of A's core, and
    cq_vec3 point_b; ///< a point of B's core, realising the depth: point_a - point_b = depth * normal
    int iterations;  ///< expansions used (<= the cap)
} cq_epa_result;

/// Penetration depth and normal of two overlapping cores. start is GJK's
/// terminal simplex (may be NULL or hold fewer than 4 points: EPA then
/// completes a tetrahedron with support points along axes and the simplex's
/// normals). The polytope is a fixed-capacity struct on the stack.
CQ_API cq_epa_result cq_epa_penetration(const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                                        const cq_xform *xb, const cq_simplex_cache *start,
                                        const cq_epa_options *opt);

/// Turns a core result into one for the rounded shapes: adds both radii to
/// depth and moves the witnesses onto the rounded surfaces. Failed results
/// are left unchanged.
CQ_API void cq_epa_apply_radii(cq_epa_result *r, const cq_proxy *a, const cq_proxy *b);

#endif
