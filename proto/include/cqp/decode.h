/// @file cqp/decode.h
/// Request values to core values, validated at the edge (API.md section 1).
/// Every decoder reads a cqp_value (cqp/value.h), so a JSON tree and a
/// MessagePack body go through the same checks, limits and defaults: wrong
/// types, unknown, duplicate and missing fields and invalid values are all
/// reported as a cqp_problem whose pointer names the bad field, e.g.
/// "/a/shape/half_extents/1". An absent view is an absent body. Every
/// decoder returns 0, or -1 with the problem filled and nothing left
/// allocated. The arrays a decoded request holds come from cqp_calloc
/// (cqp/alloc.h), so they count against the request's memory.
#ifndef CQP_DECODE_H
#define CQP_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cq/mesh.h"
#include "cq/shape.h"
#include "cq/world.h"
#include "cqp/api.h"
#include "cqp/durability.h"
#include "cqp/problem.h"
#include "cqp/value.h"

/// Per-request limits; a well-formed request beyond one is a 422
/// (CQP_P_OVER_LIMIT). Zero means "no limit" only for tests.
typedef struct cqp_limits {
    int pairs;          ///< items of POST /v1/pairs
    int rays;           ///< rays of one raycast request
    int hull_points;    ///< points of one convex shape (never above CQ_HULL_MAX_POINTS)
    int mesh_triangles; ///< triangles (and vertices) of one mesh
    int batch_items;    ///< upsert + move + remove items of one batch or import; ids of one contacts filter
    int world_capacity; ///< a world's "capacity" setting (shapes preallocated)
    int hits;           ///< hits of one raycast with "all" (checked by the handler, once they are counted)
} cqp_limits;

/// Largest iteration cap a world's settings may give GJK, EPA or sweeps:
/// a cap bounds a query's time, so a client may not lift it without end.
#define CQP_MAX_ITERATION_CAP 1000

/// Decoding state: the limits, where a problem goes, and the JSON pointer
/// of the value being decoded (maintained by the decoders).
typedef struct cqp_decoder {
    const cqp_limits *limits; ///< borrowed
    cqp_problem *problem;     ///< borrowed, filled on failure
    char path[256];
    int path_len;
} cqp_decoder;

/// Starts a decoder at the document root.
CQP_API void cqp_decoder_init(cqp_decoder *d, const cqp_limits *limits, cqp_problem *problem);

/// Parses text as one JSON value, rejecting duplicate keys. Returns a new
/// reference, or NULL with a BAD_JSON problem whose detail gives jansson's
/// message with line and column (an overflowing number is reported so too),
/// or a BUSY problem when an allocation failed.
CQP_API json_t *cqp_parse(const char *text, size_t len, cqp_problem *p);

/// A shape decoded from a request. A convex shape owns its hull and a mesh
/// shape its mesh until cqp_shape_release or until ownership is handed
/// over (cqp_shape_disown, e.g. once a world took them).
typedef struct cqp_shape {
    cq_shape shape; ///< validated; shape.convex.hull / shape.mesh.mesh point at the owned objects
    cq_hull *hull;  ///< owned, or NULL
    cq_mesh *mesh;  ///< owned, or NULL
} cqp_shape;

/// Frees what s still owns and zeroes it.
CQP_API void cqp_shape_release(cqp_shape *s);
/// Forgets the hull and mesh without freeing them (their new owner frees them).
CQP_API void cqp_shape_disown(cqp_shape *s);

/// Appends "/" and key to the JSON pointer in buf (NUL-terminated, size
/// bytes), escaped as RFC 6901 wants ('~' as "~0", '/' as "~1"); a key too
/// long for buf is cut without splitting an escape or a UTF-8 sequence.
/// Returns the pointer's new length.
CQP_API size_t cqp_pointer_append(char *buf, size_t size, const char *key);

/// True when NUL-terminated s is a valid world name or shape id
/// (cq_world_id_valid).
CQP_API bool cqp_valid_id(const char *s);

/// A shape object {"type":..., fields of the type}. Plane shapes are
/// accepted here; the caller rejects them where they do not belong.
CQP_API int cqp_decode_shape(cqp_decoder *d, cqp_value v, cqp_shape *out);
/// A pose {"position", "rotation" | "axes"}; v absent or null is the identity.
CQP_API int cqp_decode_pose(cqp_decoder *d, cqp_value v, cq_xform *out);
/// [x, y, z] of finite numbers.
CQP_API int cqp_decode_vec3(cqp_decoder *d, cqp_value v, cq_vec3 *out);
/// A shape id: a valid id string (its bytes, so one holding a NUL is
/// invalid), or an integer 0..INT64_MAX (its decimal string).
CQP_API int cqp_decode_id(cqp_decoder *d, cqp_value v, char out[CQ_WORLD_ID_MAX + 1]);

/// A posed shape {"shape", "pose"} (the two sides of a pair).
typedef struct cqp_posed {
    cqp_shape shape;
    cq_xform pose;
} cqp_posed;

/// POST /v1/pair: {"a", "b", "skin"?, "explain"?}.
typedef struct cqp_pair_req {
    cqp_posed a, b;
    double skin;
    bool explain;
} cqp_pair_req;
CQP_API int cqp_decode_pair(cqp_decoder *d, cqp_value body, cqp_pair_req *out);
CQP_API void cqp_pair_req_release(cqp_pair_req *r);

/// POST /v1/pairs: {"pairs": [pair request, ...]} (each item as /v1/pair).
typedef struct cqp_pairs_req {
    cqp_pair_req *items; ///< owned array
    int count;
} cqp_pairs_req;
CQP_API int cqp_decode_pairs(cqp_decoder *d, cqp_value body, cqp_pairs_req *out);
CQP_API void cqp_pairs_req_release(cqp_pairs_req *r);

/// Shape operations bound for cq_world_apply, in the order upserts, moves,
/// removes. ops[i].id points into ids[i]; an upsert's shape is shapes[i]
/// (ops[i].shape is a copy of shapes[i].shape).
typedef struct cqp_batch {
    cq_world_op *ops;   ///< owned, count items
    cqp_shape *shapes;  ///< owned, upserts items (NULL for none)
    char (*ids)[CQ_WORLD_ID_MAX + 1]; ///< owned, count items
    int count;
    int upserts, moves, removes; ///< how count splits (error pointers; only upserts own shapes)
} cqp_batch;
/// Frees the batch; shapes still owned are freed too.
CQP_API void cqp_batch_release(cqp_batch *b);
/// After cq_world_apply succeeded: the world owns the hulls and meshes.
CQP_API void cqp_batch_disown(cqp_batch *b);
/// The JSON pointer of op i of a batch decoded from a batch body
/// ("/upsert/3", "/move/0", "/remove/2") or from an import body
/// ("/shapes/3"); writes into out (at least 32 bytes).
CQP_API void cqp_batch_pointer(const cqp_batch *b, bool import, int i, char *out, int size);

/// PUT /v1/worlds/{world}/shapes/{id}: {"shape", "pose"?, "velocity"?,
/// "layer"?, "mask"?} into a batch of one upsert under id (layer and mask
/// default to all bits). Plane shapes are static: a velocity is rejected.
CQP_API int cqp_decode_shape_put(cqp_decoder *d, cqp_value body, const char *id, cqp_batch *out);
/// POST /v1/worlds/{world}/batch: {"upsert"?: [{"id", "shape", "pose"?,
/// "velocity"?, "layer"?, "mask"?}], "move"?: [{"id", "pose", "velocity"?}],
/// "remove"?: [id]}.
CQP_API int cqp_decode_batch(cqp_decoder *d, cqp_value body, cqp_batch *out);

/// PUT /v1/worlds/{world}: settings {"skin"?, "capacity"? (over
/// limits->world_capacity is a 422), "gjk_max_iterations"?,
/// "epa_max_iterations"?, "sweep_max_iterations"? (0..CQP_MAX_ITERATION_CAP),
/// "durability"? (a name of cqp/durability.h)}, or an import {"settings": {...}, "shapes": [{"id", "shape", "pose"?,
/// "velocity"?, "layer"?, "mask"?}]} (the export format). An empty or
/// absent body is default settings.
typedef struct cqp_world_req {
    cq_world_settings settings;
    cqp_durability durability; ///< as given; CQP_DURABILITY_FULL when not
    bool durability_given;     ///< the body named one (else a new world is full, an existing one keeps its own)
    bool import;      ///< the body had "shapes": replace the world's content with batch
    cqp_batch batch;  ///< upserts of an import
} cqp_world_req;
CQP_API int cqp_decode_world(cqp_decoder *d, cqp_value body, cqp_world_req *out);
CQP_API void cqp_world_req_release(cqp_world_req *r);

/// POST /v1/worlds/{world}/contacts: {"ids"?: [id], "dt"?: seconds >= 0}.
typedef struct cqp_contacts_req {
    char (*ids)[CQ_WORLD_ID_MAX + 1]; ///< owned, or NULL for every pair
    const char **id_ptrs;             ///< owned: ids as the query wants them
    int id_count;
    double dt;
} cqp_contacts_req;
CQP_API int cqp_decode_contacts(cqp_decoder *d, cqp_value body, cqp_contacts_req *out);
CQP_API void cqp_contacts_req_release(cqp_contacts_req *r);

/// POST /v1/worlds/{world}/raycast: {"rays": [{"origin", "direction",
/// "max_distance"?, "mask"?}], "all"?}. A direction of any non-zero length
/// is normalised; max_distance defaults to 1e300 (unbounded).
typedef struct cqp_raycast_req {
    cq_world_ray *rays; ///< owned
    int count;
    bool all;
} cqp_raycast_req;
CQP_API int cqp_decode_raycast(cqp_decoder *d, cqp_value body, cqp_raycast_req *out);
CQP_API void cqp_raycast_req_release(cqp_raycast_req *r);

/// POST /v1/worlds/{world}/sweep {"shape", "pose"?, "translation", "mask"?}
/// (not a plane) and /overlap {"shape", "pose"?, "mask"?}.
typedef struct cqp_shape_req {
    cqp_shape shape;
    cq_xform pose;
    cq_vec3 translation;
    uint32_t mask; ///< default all bits
} cqp_shape_req;
CQP_API int cqp_decode_sweep(cqp_decoder *d, cqp_value body, cqp_shape_req *out);
CQP_API int cqp_decode_overlap(cqp_decoder *d, cqp_value body, cqp_shape_req *out);
CQP_API void cqp_shape_req_release(cqp_shape_req *r);

#endif
