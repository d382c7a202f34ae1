/* libcqc's value types (cqc.h declares the calls). Every struct is the
 * caller's: the library reads inputs during a call and fills results; a
 * pointer inside an input is borrowed, one inside a result the library set
 * is released by the result's cqc_*_release. */
#ifndef CQC_TYPES_H
#define CQC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CQC_API __attribute__((visibility("default")))
#else
#define CQC_API
#endif

/// World names and shape ids: 1-64 characters of [A-Za-z0-9._:-].
#define CQC_ID_MAX 64

/// A connection (opaque; cqc_connect / cqc_close).
typedef struct cqc_conn cqc_conn;
/// A shard ring (opaque; cqc_ring_new / cqc_ring_free).
typedef struct cqc_ring cqc_ring;

/// The two encodings of the stream (docs/API.md section 11).
typedef enum cqc_encoding { CQC_MSGPACK, CQC_JSON } cqc_encoding;

/// How to reach the daemon. Strings are copied by cqc_connect.
typedef struct cqc_options {
    const char *host;          ///< numeric or resolvable name; default "127.0.0.1"
    uint16_t port;             ///< the stream port; default 7879
    const char *token;         ///< bearer token, or NULL
    cqc_encoding encoding;     ///< default CQC_MSGPACK (JSON for debugging)
    int connect_timeout_ms;    ///< default 2000
    int io_timeout_ms;         ///< per send of a pipeline, per reply; default 5000
    size_t max_reply;          ///< largest reply frame accepted; default 64 MiB
    bool reconnect;            ///< reconnect at the next send after a drop; default true
} cqc_options;

/// An error reply's problem (docs/API.md section 8); strings cut to fit.
typedef struct cqc_problem {
    int status;          ///< HTTP status, 0 when the error was not the daemon's
    char type[96];       ///< "urn:collisiond:problem:<slug>"
    char title[64];
    char detail[256];
    char pointer[128];   ///< the field at fault, "" when none
} cqc_problem;

/// A connection's counters: the calling thread's CPU time inside the
/// library encoding requests and decoding replies (what a tick costs the
/// client's CPU; waits for the network are not in it), and traffic.
typedef struct cqc_stats {
    uint64_t encode_ns, decode_ns;
    uint64_t bytes_out, bytes_in;
    uint64_t requests, replies, reconnects;
} cqc_stats;

/// World settings: a field at its "unset" value is left out (the daemon's
/// default applies); cqc_world_settings_init sets them all unset.
/// What a world keeps across a daemon restart (docs/API.md, "Durability"),
/// chosen when it is created.
typedef enum cqc_durability {
    CQC_DURABILITY_UNSET = 0, ///< the daemon's default ("full"), or the world's own
    CQC_DURABILITY_FULL,      ///< every change journaled
    CQC_DURABILITY_SHAPES,    ///< all but move-only batches journaled
    CQC_DURABILITY_NONE,      ///< ephemeral: never journaled nor snapshotted
} cqc_durability;

typedef struct cqc_world_settings {
    double skin;                  ///< unset: < 0
    uint64_t capacity;            ///< unset: 0
    uint32_t gjk_max_iterations;  ///< unset: 0 (the daemon's default too)
    uint32_t epa_max_iterations;
    uint32_t sweep_max_iterations;
    cqc_durability durability;    ///< unset: CQC_DURABILITY_UNSET
} cqc_world_settings;

/// A world's summary (GET gives stats too, has_stats).
typedef struct cqc_world_info {
    char name[CQC_ID_MAX + 1];
    cqc_world_settings settings;
    uint64_t shapes, broadphase_pairs;
    bool created;                 ///< the PUT created it (201)
    bool has_stats;
    uint64_t capacity, grows, sap_grows, bvh_builds, bvh_refits;
} cqc_world_info;

/// Bytes the library allocated (an export document); cqc_blob_release.
typedef struct cqc_blob {
    char *data;
    size_t len;
} cqc_blob;

/// The shape types (docs/API.md section 2.2).
typedef enum cqc_shape_type {
    CQC_SPHERE, CQC_CAPSULE, CQC_BOX, CQC_CONVEX, CQC_TRIANGLE, CQC_PLANE, CQC_MESH
} cqc_shape_type;

/// A shape in its local frame. Arrays are borrowed (inputs) or the
/// library's (a cqc_stored's).
typedef struct cqc_shape {
    cqc_shape_type type;
    double radius;           ///< sphere, capsule, convex (0: none)
    double half_height;      ///< capsule
    double half_extents[3];  ///< box
    double vertices[9];      ///< triangle
    double normal[3];        ///< plane
    double offset;           ///< plane
    const double *points;    ///< convex: 3 per point; mesh: its vertices
    size_t point_count;
    const uint32_t *triangles;  ///< mesh: 3 indices per triangle
    size_t triangle_count;
} cqc_shape;

/// A pose: position and unit quaternion [x, y, z, w] (glTF order).
typedef struct cqc_pose {
    double position[3];
    double rotation[4];
} cqc_pose;

/// A shape to store (PUT or a batch upsert). layer/mask 0 means all bits.
typedef struct cqc_body {
    const char *id;
    cqc_shape shape;
    cqc_pose pose;
    double velocity[3];
    uint32_t layer, mask;
} cqc_body;

/// A stored shape as the daemon returns it: its pose as axes (rows: the
/// local x, y, z axes in world space). points/triangles are the library's.
typedef struct cqc_stored {
    char id[CQC_ID_MAX + 1];
    cqc_shape shape;
    double position[3];
    double axes[9];
    double velocity[3];
    uint32_t layer, mask;
} cqc_stored;

/// A batch: every list optional (n == 0). moves come from caller arrays:
/// positions 3 doubles per move, rotations 4 (NULL: every move's pose has
/// the identity rotation, as a pose without one), velocities 3 (NULL: each
/// shape keeps its stored velocity). Upsert/remove ids are borrowed too.
typedef struct cqc_batch {
    const cqc_body *upserts;
    size_t upsert_count;
    const char *const *move_ids;
    const double *move_positions;
    const double *move_rotations;
    const double *move_velocities;
    size_t move_count;
    const char *const *remove_ids;
    size_t remove_count;
} cqc_batch;

/// A batch's answer.
typedef struct cqc_batch_result {
    uint64_t upserted, moved, removed, shapes;
} cqc_batch_result;

/// One stateless pair test (POST /v1/pair).
typedef struct cqc_pair {
    cqc_shape a, b;
    cqc_pose pose_a, pose_b;
    double skin;
} cqc_pair;

/// A manifold point on B's surface.
typedef struct cqc_point {
    double position[3];
    double depth;
    char feature[16];
} cqc_point;

/// The contact result of every pair test (docs/API.md section 2.4).
typedef struct cqc_contact {
    bool overlap;
    double distance, depth;
    bool has_normal;
    double normal[3];
    int point_count;
    cqc_point points[4];
    bool has_witness;
    double witness_a[3], witness_b[3];
    char algorithm[24];
    char fallback_reason[32], fallback_action[32];  ///< "" when no fallback
} cqc_contact;

/// Growable id arrays: give items/cap for the caller's storage, or leave
/// them NULL/0 and the library grows its own (released by *_release).
/// count is the answer's full count; over cap: CQC_ETRUNCATED, cap filled.
typedef struct cqc_ids {
    char (*items)[CQC_ID_MAX + 1];
    size_t count, cap;
    bool owned;
} cqc_ids;

typedef struct cqc_id_pairs {
    char (*items)[2][CQC_ID_MAX + 1];
    size_t count, cap;
    bool owned;
} cqc_id_pairs;

/// A contacts query (POST .../contacts): both parts optional.
typedef struct cqc_contacts_query {
    const char *const *ids;   ///< filter; NULL: no filter (ids_count 0 and a non-NULL ids: selects nothing)
    size_t ids_count;
    double dt;                ///< CCD over dt seconds when has_dt
    bool has_dt;
} cqc_contacts_query;

/// One touching pair.
typedef struct cqc_contact_pair {
    char a[CQC_ID_MAX + 1], b[CQC_ID_MAX + 1];
    cqc_contact contact;
} cqc_contact_pair;

/// A shape's first impact over dt.
typedef struct cqc_toi {
    char id[CQC_ID_MAX + 1], other[CQC_ID_MAX + 1];
    double time, point[3], normal[3];
} cqc_toi;

/// A contacts answer: the caller's arrays (pairs/pairs_cap, toi/toi_cap)
/// or, left NULL/0, ones the library grows (cqc_contacts_release). Counts
/// are the answer's; over a caller's cap: CQC_ETRUNCATED, cap filled.
typedef struct cqc_contacts {
    cqc_contact_pair *pairs;
    size_t pair_count, pairs_cap;
    cqc_toi *toi;
    size_t toi_count, toi_cap;
    bool owned_pairs, owned_toi;
    uint64_t broadphase_pairs, tested, touching, swept;
} cqc_contacts;

/// A ray: max_distance <= 0 or infinite is unbounded; mask 0 is all bits.
typedef struct cqc_ray {
    double origin[3], direction[3];
    double max_distance;
    uint32_t mask;
} cqc_ray;

/// A ray's closest hit (hit false: a miss).
typedef struct cqc_ray_hit {
    bool hit;
    char id[CQC_ID_MAX + 1];
    double distance, point[3], normal[3];
} cqc_ray_hit;

/// A shape cast; mask 0 is all bits.
typedef struct cqc_sweep {
    cqc_shape shape;
    cqc_pose pose;
    double translation[3];
    uint32_t mask;
} cqc_sweep;

/// A sweep's first hit (hit false: none).
typedef struct cqc_sweep_hit {
    bool hit;
    char id[CQC_ID_MAX + 1];
    double time, point[3];
    bool has_normal;
    double normal[3];
} cqc_sweep_hit;

/// An overlap query; mask 0 is all bits.
typedef struct cqc_overlap {
    cqc_shape shape;
    cqc_pose pose;
    uint32_t mask;
} cqc_overlap;

/// The identity pose. [any]
CQC_API cqc_pose cqc_pose_identity(void);
/// All settings unset. [any]
CQC_API void cqc_world_settings_init(cqc_world_settings *s);

#endif
