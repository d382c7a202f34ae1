/// @file cq/algorithm.h
/// The narrow-phase paths, named as the wire reports them in "algorithm".
#ifndef CQ_ALGORITHM_H
#define CQ_ALGORITHM_H

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
    X(TRIANGLE_PLANE, "triangle_plane")

/// Which path answered a pair query.
typedef enum cq_algorithm {
#define CQ_ALG_ENUM_(name, wire) CQ_ALG_##name,
    CQ_ALGORITHM_TABLE(CQ_ALG_ENUM_)
#undef CQ_ALG_ENUM_
    CQ_ALG_COUNT
} cq_algorithm;

/// The wire name ("sat_box_box", ...); static string, "unknown" if out of range.
const char *cq_algorithm_name(cq_algorithm alg);

#endif
