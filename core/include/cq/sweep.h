/// @file cq/sweep.h
/// Shape sweep (linear cast), the CCD primitive: the first time t in [0, 1]
/// at which shape A, translated by t * translation, touches a static shape
/// B. Convex pairs run conservative advancement on GJK distances; a plane
/// as B has a closed form. Pure: no allocation, no globals, bounded loops.
#ifndef CQ_SWEEP_H
#define CQ_SWEEP_H

#include <stdbool.h>

#include "cq/api.h"
#include "cq/counters.h"
#include "cq/math.h"
#include "cq/shape.h"

struct cq_fallback_log;

/// Distance evaluations allowed when the options give none.
#define CQ_SWEEP_DEFAULT_MAX_ITERATIONS 32
/// Separation at impact, in world units, when the options give none.
#define CQ_SWEEP_DEFAULT_TOLERANCE 1e-6

/// Sweep options. Zero-initialised fields take the defaults; NULL options
/// are all defaults.
typedef struct cq_sweep_options {
    /// GJK distance evaluations allowed (each is one advancement step);
    /// <= 0 means CQ_SWEEP_DEFAULT_MAX_ITERATIONS.
    int max_iterations;
    /// Absolute target separation at impact, world units; <= 0 means
    /// CQ_SWEEP_DEFAULT_TOLERANCE. It is raised to 1e-11 times the
    /// magnitude of the coordinates involved, so it stays above rounding.
    double tolerance;
    /// This thread's counters, may be NULL: every GJK distance evaluation
    /// and EPA run counts as in cq_collide, and an EPA failure at t = 0 as
    /// a fallback (its reason, the action "dropped", a zero normal).
    cq_counters *counters;
    /// This thread's fallback log (cq/fallback.h), may be NULL: an EPA
    /// failure at t = 0 is recorded with the two shape types (a mesh's
    /// triangle as "triangle") and the tags below.
    struct cq_fallback_log *log;
    uint64_t tag_a, tag_b; ///< opaque ids copied into fallback records
} cq_sweep_options;

/// The answer of a sweep. On a miss only iterations (and fell_back) are
/// set: hit, initially_overlapping, iteration_limit and has_normal are
/// false, time is 1 (A travels the whole translation), point and normal
/// are zero.
typedef struct cq_sweep_hit {
    bool hit;
    /// The shapes overlap or touch (separation <= 0) at t = 0: time is 0,
    /// the normal is the penetration direction (EPA on the cores when they
    /// overlap, else the closest-point direction of the cores) and point
    /// the deepest point of B.
    bool initially_overlapping;
    /// The cap ended the advancement before contact or a miss was certain:
    /// reported as a hit at the last time reached (the shapes do not touch
    /// before it, so a caller that stops A there never tunnels), with the
    /// point and normal of the last distance evaluation. It may be a miss.
    bool iteration_limit;
    /// False only for an initial overlap whose direction is undefined (EPA
    /// failed, e.g. coplanar flat shapes): normal is then zero and point a
    /// point common to both shapes' cores. Never a made-up normal.
    bool has_normal;
    /// In [0, 1]. Never after the first contact: at this time the shapes
    /// are separated by at most the tolerance (0 for a plane, whose time
    /// is exact) and never overlap earlier.
    double time;
    cq_vec3 point;  ///< world, on B's surface at impact
    cq_vec3 normal; ///< unit, from A to B at impact (move B along +normal to separate)
    int iterations; ///< distance evaluations used (<= max_iterations)
    /// EPA failed on an initial overlap, a fallback (counted and logged
    /// when cq_sweep_options carries counters and a log; set either way);
    /// against a mesh, on any triangle swept, whether or not the hit
    /// reported is that triangle's.
    bool fell_back;
} cq_sweep_hit;

/// Sweeps shape a from pose xa along translation (world) against shape b,
/// static at xb; only translation, no rotation. Shapes apart by at most the
/// tolerance at t = 0 are touching: a hit at time 0 (not an overlap) when
/// the translation closes their gap along the normal by more than the
/// tolerance, otherwise a miss (A slides along B or leaves it, never
/// getting deeper than the tolerance). Writes *out and returns
/// CQ_OK; CQ_EUNSUPPORTED (out untouched) when a is a plane (planes are
/// static) or a shape cannot be made a proxy (unknown type, convex without
/// hull); CQ_ENOT_FINITE when translation is not finite.
CQ_API int cq_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 translation, const cq_shape *b,
                    const cq_xform *xb, const cq_sweep_options *opt, cq_sweep_hit *out);

#endif
