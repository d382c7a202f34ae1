/// @file cq/algorithm.h
/// The narrow-phase paths ("algorithm" on the wire) and their fallbacks
/// ("fallback": reason and action), each with its wire name.
#ifndef CQ_ALGORITHM_H
#define CQ_ALGORITHM_H

#include "cq/api.h"

/// X(enum suffix, wire name)
#define CQ_ALGORITHM_TABLE(X)                                                  \
    X(SPHERE_SPHERE, "sphere_sphere")                                          \
    X(SPHERE_CAPSULE, "sphere_capsule")                                        \
    X(SPHERE_BOX, "sphere_box")                                                \
    X(SPHERE_TRIANGLE, "sphere_triangle")                                      \
    X(SPHERE_PLANE, "sphere_plane")                                            \
    X(CAPSULE_CAPSULE, "capsule_capsule")                                      \
    X(CAPSULE_PLANE, "capsule_plane")                                          \
    X(SAT_BOX_BOX, "sat_box_box")                                              \
    X(SAT_TRIANGLE_BOX, "sat_triangle_box")                                    \
    X(BOX_PLANE, "box_plane")                                                  \
    X(TRIANGLE_TRIANGLE, "triangle_triangle")                                  \
    X(TRIANGLE_PLANE, "triangle_plane")                                        \
    X(GJK_EPA, "gjk_epa")                                                      \
    X(CONVEX_PLANE, "convex_plane")                                            \
    X(MESH, "mesh")                                                            \
    X(SAT_HULL, "sat_hull")

/// Which path answered a pair query.
typedef enum cq_algorithm {
#define CQ_ALG_ENUM_(name, wire) CQ_ALG_##name,
    CQ_ALGORITHM_TABLE(CQ_ALG_ENUM_)
#undef CQ_ALG_ENUM_
    CQ_ALG_COUNT
} cq_algorithm;

/// The wire name ("sat_box_box", ...); static string, "unknown" if out of range.
CQ_API const char *cq_algorithm_name(cq_algorithm alg);

/// Why a query could not answer the usual way (wire names in comments).
typedef enum cq_fallback_reason {
    CQ_FB_NONE,                ///< "none"
    CQ_FB_COINCIDENT,          ///< "coincident_features": no direction is defined
    CQ_FB_GJK_ITERATION_LIMIT, ///< "gjk_iteration_limit"
    CQ_FB_EPA_ITERATION_LIMIT, ///< "epa_iteration_limit"
    CQ_FB_EPA_CAPACITY,        ///< "epa_capacity"
    CQ_FB_EPA_DEGENERATE,      ///< "epa_degenerate"
    CQ_FB_REASON_COUNT
} cq_fallback_reason;

/// What a query did instead.
typedef enum cq_fallback_action {
    CQ_FBA_NONE,
    CQ_FBA_PREVIOUS_NORMAL, ///< the caller's previous normal was used
    CQ_FBA_DROPPED,         ///< no normal and no points are reported
    CQ_FBA_COUNT
} cq_fallback_action;

/// Wire names of reasons and actions (static strings).
CQ_API const char *cq_fallback_reason_name(cq_fallback_reason r);
CQ_API const char *cq_fallback_action_name(cq_fallback_action a);

#endif
