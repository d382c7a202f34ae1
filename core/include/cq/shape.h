/// @file cq/shape.h
/// Shapes in their local frame, poses, and the validators that the wire layer
/// calls before anything reaches a query (API.md section 1).
#ifndef CQ_SHAPE_H
#define CQ_SHAPE_H

#include <stddef.h>

#include "cq/api.h"
#include "cq/hull.h"
#include "cq/math.h"
#include "cq/status.h"

struct cq_mesh;

/// Shape types. The order is the dispatch table's canonical order: a pair
/// function always receives the lower type as A.
typedef enum cq_shape_type {
    CQ_SPHERE,
    CQ_CAPSULE,
    CQ_BOX,
    CQ_TRIANGLE,
    CQ_CONVEX,
    CQ_MESH,  ///< static only; never paired with a mesh or a plane
    CQ_PLANE, ///< static only; last, so a plane is always B in a pair function
    CQ_SHAPE_TYPE_COUNT
} cq_shape_type;

/// A shape in its local frame.
typedef struct cq_shape {
    cq_shape_type type;
    union {
        struct {
            double radius;
        } sphere;
        struct {
            double radius;
            double half_height; ///< segment from -half_height to +half_height along local Y
        } capsule;
        struct {
            cq_vec3 half; ///< half extents; zero is legal (flat or degenerate box)
        } box;
        struct {
            cq_vec3 v[3]; ///< double-sided
        } triangle;
        struct {
            cq_vec3 normal; ///< unit
            double offset;  ///< solid half-space: dot(normal, x) <= offset
        } plane;
        struct {
            const cq_hull *hull; ///< borrowed: owned by whoever built it (cq_hull_build); carries the rounding radius
        } convex;
        struct {
            const struct cq_mesh *mesh; ///< borrowed: owned by whoever built it (cq_mesh_build)
        } mesh;
    };
} cq_shape;

/// The lower-case wire name of a shape type ("sphere", ...); static string.
CQ_API const char *cq_shape_type_name(cq_shape_type type);

/// Where validation failed: a status and the offending field, so the wire
/// layer can build a JSON pointer ("/half_extents/1", "/vertices/2/0").
typedef struct cq_fault {
    int status;        ///< CQ_OK or a negative cq_status
    const char *field; ///< static field name ("radius", "half_extents", ...), NULL when ok
    int index;         ///< element of the field, -1 for the whole field
    int sub;           ///< element inside that element, -1 if none
} cq_fault;

/// Tolerances of API.md section 1.
#define CQ_QUAT_UNIT_TOL 1e-3 ///< |q| may differ from 1 by this much; then normalised
#define CQ_AXIS_TOL 1e-4      ///< axes unit and orthogonal within this
#define CQ_NORMAL_TOL 1e-4    ///< plane normal unit within this

/// Checks a shape: finite numbers, sizes >= 0, unit plane normal (within
/// CQ_NORMAL_TOL; the stored normal is then normalised in place unless it
/// is unit within 16 ulps already, so validating again changes no bit), a
/// convex shape has a hull and a mesh shape a mesh (both checked when
/// built).
CQ_API cq_fault cq_shape_validate(cq_shape *shape);

/// Builds a pose from a position and a quaternion (glTF order). A quaternion
/// within CQ_QUAT_UNIT_TOL of unit length is normalised; otherwise rejected.
/// Its matrix is made exact as cq_pose_from_axes does, so the pose's
/// columns given to cq_pose_from_axes give the same pose, bit for bit.
/// Faults name "position" or "rotation".
CQ_API cq_fault cq_pose_from_quat(cq_vec3 position, cq_quat rotation, cq_xform *out);

/// A pose as it arrives: a position and a quaternion (glTF order).
typedef struct cq_quat_pose {
    cq_vec3 position; ///< where the shape's origin is
    cq_quat rotation; ///< its orientation, unit within CQ_QUAT_UNIT_TOL
} cq_quat_pose;

/// Builds n poses, each as cq_pose_from_quat(in[k].position,
/// in[k].rotation, out[k]) does, bit for bit, two at a time in vector
/// lanes (a game tick's moves cost about half as much as one call each).
/// Stops at the first that cq_pose_from_quat refuses and returns its index,
/// or n when all are made; out[k] is written for k below the returned
/// value (and may be for others). The outputs may be anywhere (the poses
/// of ops, say); none may overlap in.
CQ_API size_t cq_poses_from_quats(const cq_quat_pose *in, size_t n, cq_xform *const *out);

/// Builds a pose from a position and the three local unit axes in world
/// space. Axes must be finite, unit and orthogonal within CQ_AXIS_TOL and
/// right-handed (det > 0); they are then replaced by the nearest exact
/// rotation, one whose columns are unit and orthogonal within 16 ulps.
/// Axes that already are are kept bit for bit: a pose's own columns give
/// the same pose. Faults name "position" or "axes" (index = axis).
CQ_API cq_fault cq_pose_from_axes(cq_vec3 position, const cq_vec3 axes[3], cq_xform *out);

#endif
