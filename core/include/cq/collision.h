/// @file cq/collision.h
/// The narrow phase: one contact struct for every path, the pair query that
/// dispatches on shape types, and the box-box SAT with its explanation.
/// Pure geometry: no I/O, no globals, no allocation.
#ifndef CQ_COLLISION_H
#define CQ_COLLISION_H

#include <stdbool.h>
#include <stdint.h>

#include "cq/api.h"
#include "cq/algorithm.h"
#include "cq/counters.h"
#include "cq/math.h"
#include "cq/shape.h"

/// At most this many manifold points per pair.
#define CQ_MAX_POINTS 4
/// How exactly manifold points lie, in world units: on B's surface, moved
/// by their depth along the normal on A's, and no deeper than the contact,
/// each within this. size: the larger of the two shapes' extents (the
/// farthest any point of a shape lies from its pose's origin); far: the
/// larger distance of the two poses from the world origin (docs/CORE.md,
/// "The contact").
#define CQ_POINT_TOL(size, far) (1e-8 * (size) + 1e-12 * (far))
/// Box-box SAT: a positive gap up to this many world units still counts as touching.
#define CQ_SAT_TOLERANCE 1e-6
/// Box-box SAT: cross axes whose squared length is below this are skipped.
#define CQ_SAT_DEGENERATE 1e-12

/// Feature kinds of a manifold point's feature id.
typedef enum cq_feature_kind {
    CQ_FEAT_NONE,
    CQ_FEAT_VERTEX, ///< "v"
    CQ_FEAT_EDGE,   ///< "e"
    CQ_FEAT_FACE,   ///< "f"
} cq_feature_kind;

/// Which features of A and B made a manifold point (wire form "f2.e1").
/// Box numbering: faces 2*axis + (negative side); vertices bit k set when the
/// local coordinate k is negative; edges 4*axis + the sign bits of the other
/// two coordinates (lower axis first). Triangles: vertex i, edge i from v[i]
/// to v[(i+1)%3], face 0. Round shapes use face 0.
typedef struct cq_feature {
    uint8_t kind_a, kind_b;
    uint16_t index_a, index_b;
} cq_feature;

/// Writes the wire form of f ("f2.e1") into buf (at least 12 bytes); returns buf.
CQ_API char *cq_feature_format(cq_feature f, char *buf, int size);

/// One manifold point.
typedef struct cq_contact_point {
    cq_vec3 position; ///< world space, on B's surface
    double depth;     ///< penetration along the normal (negative within skin)
    cq_feature feature;
} cq_contact_point;


/// Box-box SAT axes: 0..2 = A0..A2, 3..5 = B0..B2, 6 + 3i + j = AixBj.
#define CQ_SAT_AXIS_COUNT 15
/// The axis name ("A1xB2"); static string. -1 gives "none".
CQ_API const char *cq_sat_axis_name(int axis);

/// The result of one pair query. Every path fills the same struct.
typedef struct cq_contact {
    bool overlap;      ///< touching, penetrating, or separated by at most skin
    bool has_normal;   ///< false only with a fallback whose action is "dropped"
    bool has_distance; ///< distance and witness points are known
    double distance;   ///< Euclidean distance when separated, else 0
    double depth;      ///< penetration depth when overlapping, else 0
    cq_vec3 normal;    ///< unit, from A to B (move B along +normal to separate)
    cq_vec3 witness_a, witness_b; ///< closest points when separated
    int point_count;              ///< 0..CQ_MAX_POINTS
    cq_contact_point points[CQ_MAX_POINTS];
    cq_algorithm algorithm;
    cq_fallback_reason fallback_reason;
    cq_fallback_action fallback_action;
    int sat_axis;   ///< box-box: winning axis (0..14) or -1
    double sat_gap; ///< box-box: largest projected gap over the axes, world units (see skip_distance)
    /// box-box: the SAT axis (0..14) the normal lies along when the normal
    /// came from the SAT (not from GJK's closest points), else -1. Not always
    /// sat_axis: faces are preferred, and hysteresis keeps the previous axis.
    int normal_axis;
} cq_contact;

/// What a world remembers about a pair from the previous frame. Zero-init
/// (or NULL) means nothing is known.
typedef struct cq_pair_cache {
    bool has_normal;
    cq_vec3 normal; ///< previous normal, A to B
    /// box-box: the previous answer's normal_axis (axis valid only when set),
    /// the axis its face-axis hysteresis keeps. Identity, not direction: a
    /// face that merely lies near the previous normal is not that axis.
    bool has_axis;
    int axis;
} cq_pair_cache;

/// The cache entry a contact leaves for the pair's next query (a contact
/// without a normal leaves nothing: keep the previous entry then).
static inline cq_pair_cache cq_pair_cache_of(const cq_contact *c)
{
    return (cq_pair_cache){c->has_normal, c->normal, c->normal_axis >= 0, c->normal_axis};
}

struct cq_fallback_log;

/// One pair query: two posed shapes and the options. Zero-initialised
/// options are the defaults. (A field added here is copied field by field
/// in cq_collide's swap too: core/src/collide.c.)
typedef struct cq_pair_query {
    const cq_shape *a;
    cq_xform xa;
    const cq_shape *b;
    cq_xform xb;
    double skin;                 ///< gaps up to skin count as contact (>= 0)
    const cq_pair_cache *cache;  ///< previous frame, may be NULL
    cq_counters *counters;       ///< this thread's counters, may be NULL
    struct cq_fallback_log *log; ///< this thread's GJK/EPA failure log (cq/fallback.h), may be NULL
    uint64_t tag_a, tag_b;       ///< opaque ids copied into fallback records
    int gjk_max_iterations;      ///< <= 0: CQ_GJK_DEFAULT_MAX_ITERATIONS (cq/gjk.h)
    int epa_max_iterations;      ///< <= 0: CQ_EPA_DEFAULT_MAX_ITERATIONS
    /// Batch contact generation wants touching pairs only: a box-box pair
    /// apart by more than the skin then skips its Euclidean distance (the
    /// GJK run), and its SAT stops at the first face axis that shows the
    /// gap, so sat_axis / sat_gap name a separating axis, not always the
    /// largest gap. Only misses end sooner: a SAT gap past the skin bounds
    /// the distance from below.
    bool skip_distance;
    /// The caller wants the verdict, distance, depth and normal, not the
    /// manifold: point_count is 0, and the pairs that build their points by
    /// clipping (box-box, triangle-box, triangle-triangle, the GJK/EPA path)
    /// skip that work; every other field is as without it. For queries that
    /// only ask which shapes overlap, or want depth and normal alone.
    bool skip_manifold;
} cq_pair_query;

/// Tests one pair. Writes the contact into *out and returns CQ_OK, or returns
/// CQ_EUNSUPPORTED (out untouched) when no algorithm handles the two types.
/// Swapped inputs give the mirrored result (normal negated, points moved to
/// the other surface, features and SAT axis names swapped), computed the
/// same way: a pair is always run in one order (the lower shape type first;
/// for one type, the poses, then the sizes, decide), so even a verdict
/// that rounding decides is the same both ways round.
CQ_API int cq_collide(const cq_pair_query *q, cq_contact *out);

/// True when cq_collide handles this pair of types.
CQ_API bool cq_collide_supported(cq_shape_type a, cq_shape_type b);

/// An oriented box in world space, as the seed documents give it.
typedef struct cq_obb {
    cq_vec3 center;
    cq_vec3 half;  ///< half extents, >= 0
    cq_mat3 axes;  ///< columns: the local axes in world space, orthonormal (a rotation)
} cq_obb;

/// The verdict of the SAT over the candidate axes.
typedef struct cq_sat_result {
    bool overlap; ///< gap <= CQ_SAT_TOLERANCE
    int axis;     ///< axis of the largest gap (-1 if every axis was skipped)
    double gap;   ///< that gap in world units
    int skipped;  ///< degenerate cross axes skipped
} cq_sat_result;

/// Box-box SAT: the largest projected gap over all 15 axes (or the 6 face
/// axes only when face_only is set, which is not a complete test). Face
/// axes are tried first and a separating face axis returns early.
CQ_API cq_sat_result cq_obb_sat(const cq_obb *a, const cq_obb *b, bool face_only);

/// The boolean box-box test for hot loops: face axes first, returns at the
/// first separating axis, no square root. Agrees with cq_obb_sat's overlap.
CQ_API bool cq_obb_overlap(const cq_obb *a, const cq_obb *b);

/// cq_obb_overlap over n pairs: out[i] = cq_obb_overlap(&a[i], &b[i]), the
/// same verdicts bit for bit. Where the CPU has AVX2, four pairs share each
/// vector operation (lanes over pairs, every axis computed, no branch), so
/// a batch costs a fraction of n single calls. Writes n bytes of out.
CQ_API void cq_obb_overlap_many(const cq_obb *a, const cq_obb *b, int n, bool *out);

/// One row of the explanation table.
typedef struct cq_sat_axis {
    double gap;   ///< world units; meaningless when skipped
    bool skipped; ///< degenerate cross axis
} cq_sat_axis;

/// Every one of the 15 axes with its gap, in axis order. Computed in
/// cq_collide's order of the two boxes, so each gap is bit for bit the
/// sat_gap (and a separated pair's distance, when they are one) that
/// cq_collide reports on that axis; cq_obb_sat does the same.
CQ_API void cq_obb_sat_explain(const cq_obb *a, const cq_obb *b, cq_sat_axis out[CQ_SAT_AXIS_COUNT]);

/// Triangle-box overlap by Akenine-Moller's 13 separating axes (box faces,
/// triangle normal, 9 edge crosses); touching counts as overlap.
CQ_API bool cq_triangle_box_overlap(const cq_vec3 tri[3], const cq_obb *box);

/// Triangle-triangle overlap by Guigue-Devillers orientation predicates,
/// coplanar triangles included; touching counts as overlap.
CQ_API bool cq_triangle_triangle_overlap(const cq_vec3 a[3], const cq_vec3 b[3]);

/// The OBB of a box shape at a pose.
static inline cq_obb cq_obb_from_box(const cq_shape *box, const cq_xform *x)
{
    return (cq_obb){x->p, box->box.half, x->r};
}

#endif
