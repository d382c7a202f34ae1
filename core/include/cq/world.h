/// @file cq/world.h
/// A world: shapes registered under client ids, changed by all-or-nothing
/// batches, with a sweep-and-prune broadphase over skin-fattened boxes, a
/// pair cache for the narrow phase, CCD, and a BVH for ray casts, sweeps and
/// overlap queries.
///
/// Threads: the functions taking a `const cq_world *` are read-only and may
/// run concurrently on one world; cq_world_apply, cq_world_configure and
/// cq_world_contacts (which updates the pair cache) are mutations and need
/// exclusive access. Queries never allocate and never change the world.
/// The broadphase is brought up to date at the end of each mutation; the
/// ray tree (a BVH, used by ray casts, sweeps, overlap queries and CCD)
/// only by cq_world_refresh and by cq_world_contacts with dt, since a
/// frame of moves needs the one and not the other. A query on a world whose tree is behind still answers exactly,
/// by scanning every shape: call cq_world_refresh (a mutation) after a
/// batch, before the queries.
///
/// Memory: storage is preallocated from the settings' capacity and grows only
/// inside a mutation, each growth counted in cq_world_stats.grows. A convex
/// shape's hull (cq_hull_build) or a mesh shape's mesh (cq_mesh_build)
/// passed in an upsert belongs to the world once the batch succeeds (freed
/// with cq_hull_free / cq_mesh_free when replaced, removed, or with the
/// world, including one a later upsert of the same batch superseded); when
/// the batch is rejected the caller keeps it. Either may be given for one id
/// only.
#ifndef CQ_WORLD_H
#define CQ_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cq/api.h"
#include "cq/collision.h"
#include "cq/deadline.h"
#include "cq/raycast.h"
#include "cq/shape.h"
#include "cq/sweep.h"

/// Longest client id (ids are 1..CQ_WORLD_ID_MAX characters of [A-Za-z0-9._:-]).
#define CQ_WORLD_ID_MAX 64
/// The id characters as problem details name them (cq_world_id_char).
#define CQ_WORLD_ID_CHARS "[A-Za-z0-9._:-]"

/// Whether byte c may stand in an id (a world name, a shape id, a request
/// id): [A-Za-z0-9._:-]. The one statement of the rule, inline as two
/// 64-bit sets (one test a byte) for the decoders' loops over ids.
static inline bool cq_world_id_char(char c)
{
    static const uint64_t set[2] = {
        0x07ff600000000000u, // '-' 45, '.' 46, '0'-'9' 48-57, ':' 58
        0x07fffffe87fffffeu, // 'A'-'Z' 65-90, '_' 95, 'a'-'z' 97-122
    };
    unsigned char u = (unsigned char)c;
    return u < 128 && (set[u >> 6] >> (u & 63) & 1);
}

/// Whether each of the eight bytes of w is an id character (cq_world_id_char),
/// in any byte order: the ranges tested a byte at a time in the word's lanes,
/// with no carry from one lane to the next (each lane's sum is below 256).
static inline bool cq_world_id_word(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t x = w & ~high, f = x | 0x20 * ones; // f: 'A'-'Z' folded onto 'a'-'z', nothing else onto them
    // lane bit 7: x >= lo is x + (128 - lo); x > hi is x + (127 - hi); x != c is (x ^ c) + 127
    uint64_t dash_colon = (x + (128 - '-') * ones) & ~(x + (127 - ':') * ones) & ((x ^ '/' * ones) + 127 * ones);
    uint64_t letter = (f + (128 - 'a') * ones) & ~(f + (127 - 'z') * ones);
    uint64_t under = ~((x ^ '_' * ones) + 127 * ones);
    return ((dash_colon | letter | under) & ~w & high) == high;
}

/// Whether s[0..len) is an id: 1..CQ_WORLD_ID_MAX id characters (a NUL
/// byte is none). Eight bytes a word (cq_world_id_word): a short id in one
/// word from loads that overlap, none past s + len.
static inline bool cq_world_id_valid(const char *s, size_t len)
{
    if (len == 0 || len > CQ_WORLD_ID_MAX)
        return false;
    const unsigned char *u = (const unsigned char *)s;
    if (len < 4) { // s[0], s[len / 2] and s[len - 1] are every byte; the rest of the word an id's 'a'
        uint64_t w = 0x6161616161000000u | u[0] | (uint64_t)u[len / 2] << 8 | (uint64_t)u[len - 1] << 16;
        return cq_world_id_word(w);
    }
    if (len < 8) {
        uint32_t a, b;
        memcpy(&a, u, 4);
        memcpy(&b, u + len - 4, 4);
        return cq_world_id_word(a | (uint64_t)b << 32);
    }
    bool ok = true;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, u + i, 8);
        ok &= cq_world_id_word(w);
    }
    uint64_t last;
    memcpy(&last, u + len - 8, 8);
    return ok && cq_world_id_word(last);
}
/// Shapes preallocated when the settings give no capacity.
#define CQ_WORLD_DEFAULT_CAPACITY 1024
/// Most shapes a world holds.
#define CQ_WORLD_MAX_SHAPES (1 << 24)

/// Per-world settings. Zero-initialised fields take the defaults.
typedef struct cq_world_settings {
    /// Contact band, world units, finite and >= 0: pairs separated by at most
    /// skin are contacts, and broadphase boxes are fattened by skin / 2 on
    /// every side (so their pairs are the shapes whose boxes are within skin).
    double skin;
    int capacity;             ///< shapes preallocated; <= 0 means CQ_WORLD_DEFAULT_CAPACITY
    int gjk_max_iterations;   ///< narrow-phase cap; <= 0 means the cq_collide default
    int epa_max_iterations;   ///< narrow-phase cap; <= 0 means the cq_collide default
    int sweep_max_iterations; ///< CCD and sweep queries; <= 0 means the cq_sweep default
    /// Most broadphase pairs the world may hold; <= 0 means no cap. Pairs
    /// are counted as the broadphase pays for them: boxes (fattened by
    /// skin / 2) that touch, not both static, whatever the filters. A batch
    /// or a wider skin that would leave more, and more than the world holds
    /// now, is refused with CQ_ELIMIT before anything changes. While the
    /// cap is within reach the world keeps a grid that bounds its pairs
    /// (docs/CORE.md, The pair cap): a batch costs a test per move, and
    /// the pairs are counted (stopping at the cap) only past the bound.
    /// Lowering it never refuses: a world above it keeps its pairs and may
    /// only change without adding.
    long max_pairs;
} cq_world_settings;

/// A shape's registration: slot index and generation. A handle goes stale
/// when its shape is removed (an id removed and inserted again gets a new
/// handle); replacing a shape under its id keeps the handle.
typedef struct cq_world_handle {
    uint32_t index;
    uint32_t generation; ///< never 0 for a live shape, so a zeroed handle is never valid
} cq_world_handle;

/// The handle as one integer (generation << 32 | index), e.g. for fallback tags.
static inline uint64_t cq_world_handle_pack(cq_world_handle h) { return (uint64_t)h.generation << 32 | h.index; }

/// What the world stores per shape.
typedef struct cq_world_body {
    cq_shape shape;    ///< a convex shape's hull or a mesh shape's mesh is owned by the world
    cq_xform pose;
    cq_vec3 velocity;  ///< world units per second; planes are static and never move by it
    uint32_t layer;    ///< bit set
    uint32_t mask;     ///< layers it collides with: a pair needs each one's layer to meet the other's mask
} cq_world_body;

/// Batch operation kinds.
typedef enum cq_world_op_kind {
    CQ_WORLD_UPSERT, ///< insert or replace the shape under id
    CQ_WORLD_MOVE,   ///< set pose and velocity of an existing shape
    CQ_WORLD_REMOVE, ///< remove an existing shape
} cq_world_op_kind;

/// One batch operation.
typedef struct cq_world_op {
    cq_world_op_kind kind;
    /// The client id (borrowed for the call). Move and remove may leave it
    /// NULL and name the shape by handle instead; upsert needs it.
    const char *id;
    cq_world_handle handle; ///< used when id is NULL
    cq_shape shape;         ///< upsert
    cq_xform pose;          ///< upsert, move: a rotation (orthonormal, right-handed) and a finite position
    cq_vec3 velocity;       ///< upsert, move (unless keep_velocity)
    bool keep_velocity;     ///< move: keep the stored velocity
    uint32_t layer, mask;   ///< upsert
} cq_world_op;

/// Counters of a world's storage and derived structures.
typedef struct cq_world_stats {
    int shapes;              ///< live shapes
    int capacity;            ///< shapes storage holds without growing
    int broadphase_pairs;    ///< pairs of the last broadphase update
    uint64_t grows;          ///< storage grown past its preallocation (world, pair cache, scratch)
    uint64_t sap_grows;      ///< the broadphase's own growths
    uint64_t bvh_builds;     ///< BVH (re)builds
    uint64_t bvh_refits;     ///< BVH refits
    bool broadphase_stale;   ///< the last broadphase update ran out of memory (pairs incomplete until a mutation succeeds)
    bool bvh_stale;          ///< the ray tree is behind the shapes (changed since the last cq_world_refresh, or its build ran out of memory): queries scan every shape
} cq_world_stats;

/// A world (opaque): create with cq_world_create, free with cq_world_destroy.
typedef struct cq_world cq_world;

/// Creates an empty world. CQ_ENOT_FINITE / CQ_ENEGATIVE for a bad skin,
/// CQ_ERANGE for a capacity above CQ_WORLD_MAX_SHAPES, CQ_ENO_MEMORY; *out
/// is NULL on failure.
CQ_API int cq_world_create(const cq_world_settings *settings, cq_world **out);

/// Frees the world and every hull and mesh it owns; NULL is ignored.
CQ_API void cq_world_destroy(cq_world *world);

/// A budget beyond the world that its slot storage is charged to (a
/// server's one budget for all its worlds). take(ctx, n) asks for n more
/// slots before the storage grows by them: false refuses, and the growth
/// fails with CQ_EBUDGET, nothing changed; give(ctx, n) returns slots taken
/// for storage that could not be allocated after all. Both may be called
/// from any thread that mutates a world.
typedef struct cq_world_budget {
    bool (*take)(void *ctx, long slots);
    void (*give)(void *ctx, long slots);
    void *ctx;
} cq_world_budget;

/// Charges every later growth of the world's storage to *budget (copied;
/// NULL: none, the default). A refused doubling is retried at the exact
/// size needed. The slots the world holds already (cq_world_stats.capacity)
/// and their return when it is destroyed are the caller's to account.
CQ_API void cq_world_set_budget(cq_world *world, const cq_world_budget *budget);

/// The settings in force (defaults filled in).
CQ_API cq_world_settings cq_world_get_settings(const cq_world *world);

/// CQ_ELIMIT when cq_world_configure(world, settings) would refuse for
/// the pair cap (a wider skin), else CQ_OK (or
/// CQ_ENO_MEMORY): lets a caller check before it journals the change.
CQ_API int cq_world_check_pair_cap(const cq_world *world, const cq_world_settings *settings);

/// Mutation: changes the settings. A new skin refattens every broadphase
/// box; a larger capacity grows the storage now (a smaller one is ignored).
/// Errors as for cq_world_create, and CQ_EBUDGET when the world's budget
/// refuses the growth (cq_world_set_budget); nothing changes on failure.
CQ_API int cq_world_configure(cq_world *world, const cq_world_settings *settings);

/// Mutation: applies ops[0..count) all or nothing. Every op is checked first,
/// in order, against the state the earlier ops of the batch leave (an op may
/// refer to an id created or removed earlier in the batch). On any failure
/// nothing changes, the caller keeps its hulls and meshes, and *bad_op is the index of
/// the first failing op (-1 when no op is to blame: CQ_ENO_MEMORY, CQ_ERANGE
/// for a bad count or past CQ_WORLD_MAX_SHAPES, CQ_EBUDGET when the storage
/// would grow past the world's budget). Failures: CQ_ENOT_FOUND
/// (move or remove of an absent id, or a stale handle), CQ_ERANGE (bad id or
/// kind, an upsert without id, a hull or mesh given for two ids: blamed on
/// the later upsert), a shape's cq_shape_validate status, CQ_ENOT_FINITE (pose or
/// velocity), CQ_ENOT_UNIT / CQ_ENOT_ORTHOGONAL / CQ_EMIRROR (rotation
/// columns not orthonormal within 1e-9, or a mirror), CQ_ENO_MEMORY. A hull
/// or mesh that the world already owns under another, untouched id is not
/// detected: never pass one twice.
/// After the registry changed, the broadphase is updated (the ray tree
/// waits for cq_world_refresh); if that runs out of memory the batch still
/// succeeds, the stats say the broadphase is stale, and the next mutation
/// retries.
CQ_API int cq_world_apply(cq_world *world, const cq_world_op *ops, int count, int *bad_op);

/// Mutation: the first half of cq_world_apply, for a caller that must
/// record a change before making it (a server journals it). Checks
/// ops[0..count) exactly as cq_world_apply does and makes room for them
/// (storage and scratch), so that committing them cannot fail; the shapes
/// are unchanged, and const queries answer as before. Errors and *bad_op
/// as for cq_world_apply. On CQ_OK the batch is pending: the next mutation
/// of the world must be cq_world_commit or cq_world_abandon with the same
/// ops, unchanged (ids, hulls and meshes still the caller's until then).
/// Any other mutation while a batch is pending (apply, prepare, configure,
/// contacts, reserve, refresh), or a commit with nothing pending or with
/// other ops (pointer or count), is a programming error: it fails an
/// assertion; built without assertions, the pending batch is abandoned
/// (such a commit changes nothing; the other mutation proceeds).
CQ_API int cq_world_prepare(cq_world *world, const cq_world_op *ops, int count, int *bad_op);

/// Mutation: applies the pending batch; ops and count are those given to
/// cq_world_prepare, unchanged. Cannot fail: the outcome is cq_world_apply's
/// success (the broadphase may still end stale for memory, as there).
CQ_API void cq_world_commit(cq_world *world, const cq_world_op *ops, int count);

/// Mutation: drops the pending batch, if any; nothing changes and the
/// caller keeps its hulls and meshes.
CQ_API void cq_world_abandon(cq_world *world);

/// Storage only: makes room for shapes shapes and for batches of ops ops,
/// so that cq_world_configure up to that capacity and cq_world_apply of a
/// batch that size leaving at most that many shapes cannot run out of
/// memory (a server journals a change between the two). Settings and
/// content are unchanged. CQ_OK, CQ_ENO_MEMORY, CQ_EBUDGET (the world's
/// budget refused the growth), or CQ_ERANGE (negative, or past
/// CQ_WORLD_MAX_SHAPES).
CQ_API int cq_world_reserve(cq_world *world, int shapes, int ops);

/// Brings the ray tree up to date with the shapes: refits it after moves,
/// rebuilds it after shapes came or went (or when refits have degraded
/// it). Does nothing when it is current. CQ_OK, or CQ_ENO_MEMORY when a
/// rebuild could not allocate (the queries then scan every shape, and the
/// next call tries again).
CQ_API int cq_world_refresh(cq_world *world);

/// Live shapes.
CQ_API int cq_world_count(const cq_world *world);

/// The handle of the shape registered under id. CQ_ENOT_FOUND.
CQ_API int cq_world_find(const cq_world *world, const char *id, cq_world_handle *out);

/// A shape's stored body (its hull or mesh stays the world's). CQ_ENOT_FOUND for a
/// stale handle.
CQ_API int cq_world_get(const cq_world *world, cq_world_handle handle, cq_world_body *out);

/// The client id of a handle (valid until the shape is removed), or NULL
/// for a stale handle.
CQ_API const char *cq_world_id(const cq_world *world, cq_world_handle handle);

/// Every live shape's handle, sorted by id. CQ_ERANGE with *count the
/// number needed when capacity is too small.
CQ_API int cq_world_list(const cq_world *world, cq_world_handle *out, int capacity, int *count);

/// A broadphase pair: the two shapes' handles, id(a) < id(b).
typedef struct cq_world_pair {
    cq_world_handle a, b;
} cq_world_pair;

/// The broadphase pairs (fattened boxes overlapping, filters meeting, not
/// both static), sorted by (id(a), id(b)). CQ_ERANGE with *count the number
/// needed when capacity is too small; CQ_ENO_MEMORY while the broadphase is
/// stale (see cq_world_apply).
CQ_API int cq_world_pairs(const cq_world *world, cq_world_pair *out, int capacity, int *count);

/// Storage and structure counters.
CQ_API cq_world_stats cq_world_get_stats(const cq_world *world);

/// A touching pair from cq_world_contacts: id(a) < id(b) and the contact
/// of a against b (normal from a to b).
typedef struct cq_world_contact {
    cq_world_handle a, b;
    cq_contact contact; ///< unused manifold points and padding are zero, so equal results compare equal by memcmp
} cq_world_contact;

/// A first impact from CCD: shape id, moving by its velocity times dt,
/// first touches other at time * dt.
typedef struct cq_world_toi {
    cq_world_handle id, other;
    double time;    ///< in [0, 1], the fraction of dt
    cq_vec3 point;  ///< world, on other's surface at the impact
    cq_vec3 normal; ///< unit, from id to other at the impact
} cq_world_toi;

/// Options of cq_world_contacts. Zero-initialised is all pairs, no CCD.
typedef struct cq_world_contacts_query {
    const char *const *ids;       ///< only pairs (and impacts) involving these ids; NULL for all
    int id_count;
    double dt;                    ///< > 0: shapes moving farther than their smallest half-width in dt are swept
    cq_counters *counters;        ///< this thread's counters, may be NULL
    struct cq_fallback_log *log;  ///< this thread's fallback log, may be NULL
    const cq_deadline *deadline;  ///< checked per pair tested and per CCD sweep; NULL for none
} cq_world_contacts_query;

/// Outputs of cq_world_contacts: caller arrays with their capacities, and
/// the counts written (or needed).
typedef struct cq_world_contacts_out {
    cq_world_contact *pairs;
    int pair_capacity;
    int pair_count;  ///< touching pairs
    cq_world_toi *toi;
    int toi_capacity;
    int toi_count;   ///< first impacts, one per swept shape that hits something
    int tested;      ///< broadphase pairs that ran the narrow phase
    int swept;       ///< shapes swept by CCD
    int bad_id;      ///< index in ids of an unknown id, else -1
} cq_world_contacts_out;

/// Mutation: the narrow phase over every broadphase pair (bucketed by shape
/// types: sphere-sphere first, box-box next, the rest after), each pair
/// queried as cq_collide(a, b) with id(a) < id(b), the world's skin and caps,
/// the pair's cached normal, and tags = the packed handles; the touching
/// pairs (contact.overlap) go to out->pairs sorted by (id(a), id(b)). The
/// pair cache keeps each pair's last normal (reset when the pair is new).
/// With dt > 0, every shape with |velocity| dt above its smallest
/// half-width is swept against the others (relative motion over dt), its
/// candidates found in the ray tree (refreshed first, as by
/// cq_world_refresh), and its first impact goes to out->toi, sorted by id; shapes already
/// overlapping at the start are left to the discrete contacts. Returns
/// CQ_OK; CQ_ERANGE with the counts needed when an array is too small (the
/// pair cache is then left as it was); CQ_ENOT_FOUND with out->bad_id for
/// an unknown id in the filter; CQ_ENOT_FINITE / CQ_ENEGATIVE for dt;
/// CQ_ENO_MEMORY when scratch storage or the broadphase cannot grow;
/// CQ_ECANCELED when query->deadline expired (the counts in out are then
/// those of the work done, the arrays partial). On failure the pair cache
/// and the CCD fallback memory are as they were, so the next query answers
/// as if this one had not run (the broadphase and ray tree it brought up
/// to date stay so: they change no answer).
CQ_API int cq_world_contacts(cq_world *world, const cq_world_contacts_query *query, cq_world_contacts_out *out);

/// A ray for cq_world_raycast: it sees shapes whose layer meets mask.
typedef struct cq_world_ray {
    cq_ray ray;    ///< as for cq_raycast: finite, direction unit within CQ_RAY_UNIT_TOL, max_distance >= 0
    uint32_t mask;
} cq_world_ray;

/// One ray hit: the shape and where.
typedef struct cq_world_ray_hit {
    cq_world_handle id; ///< zero when hit.hit is false
    cq_ray_hit hit;
} cq_world_ray_hit;

/// Options of the ray casts (cq_world_raycast_opt, cq_world_raycast_all_opt).
/// Zero-initialised, or a NULL pointer, is none.
typedef struct cq_world_ray_options {
    const cq_deadline *deadline; ///< checked per candidate shape cast; NULL for none
} cq_world_ray_options;

/// Closest hit of each ray (ties to the smaller id): out[i] for rays[i].
/// CQ_OK; a ray check status of cq_raycast with *bad_ray its index (nothing
/// cast). bad_ray may be NULL.
CQ_API int cq_world_raycast(const cq_world *world, const cq_world_ray *rays, int count, cq_world_ray_hit *out,
                            int *bad_ray);

/// cq_world_raycast with options (opt may be NULL); CQ_ECANCELED when the
/// deadline expired (out is then partial).
CQ_API int cq_world_raycast_opt(const cq_world *world, const cq_world_ray *rays, int count,
                                const cq_world_ray_options *opt, cq_world_ray_hit *out, int *bad_ray);

/// Every hit of each ray, sorted by distance (then id): ray i's hits are
/// hits[first[i] .. first[i + 1]), first has count + 1 entries. CQ_ERANGE
/// with first[count] the number needed when capacity is too small (INT_MAX
/// when it is more than that); ray checks as for cq_world_raycast.
CQ_API int cq_world_raycast_all(const cq_world *world, const cq_world_ray *rays, int count, cq_world_ray_hit *hits,
                                int capacity, int *first, int *bad_ray);

/// cq_world_raycast_all with options (opt may be NULL); CQ_ECANCELED when
/// the deadline expired (hits and first are then partial: first[count]
/// counts only the rays cast).
CQ_API int cq_world_raycast_all_opt(const cq_world *world, const cq_world_ray *rays, int count,
                                    const cq_world_ray_options *opt, cq_world_ray_hit *hits, int capacity, int *first,
                                    int *bad_ray);

/// A query shape for cq_world_sweep and cq_world_overlap.
typedef struct cq_world_shape_query {
    const cq_shape *shape;   ///< validated (cq_shape_validate); not a plane for a sweep
    cq_xform pose;
    cq_vec3 translation;     ///< sweep only: the motion, world units
    uint32_t mask;           ///< the query sees shapes whose layer meets it
    cq_counters *counters;   ///< this thread's counters, may be NULL
    struct cq_fallback_log *log; ///< sweep: this thread's fallback log (tag_a 0, tag_b the shape's handle), may be NULL
    const cq_deadline *deadline; ///< checked per candidate shape tested; NULL for none
} cq_world_shape_query;

/// The first hit of a sweep.
typedef struct cq_world_sweep_hit {
    cq_world_handle id; ///< zero on a miss
    cq_sweep_hit hit;   ///< as cq_sweep reports it (hit false on a miss)
} cq_world_sweep_hit;

/// Sweeps the query shape along its translation through the world and
/// reports the first shape it touches (earliest time, ties to the smaller
/// id; an initial overlap is a hit at time 0). CQ_OK; CQ_EUNSUPPORTED for a
/// plane; CQ_ENOT_FINITE for a non-finite translation or pose;
/// CQ_ECANCELED when query->deadline expired (*out is then a miss).
CQ_API int cq_world_sweep(const cq_world *world, const cq_world_shape_query *query, cq_world_sweep_hit *out);

/// The shapes the query shape overlaps or touches (exact, cq_collide with
/// no skin), sorted by id; pairs cq_collide does not support (plane with
/// plane) are not reported. CQ_ERANGE with *count the number needed when
/// capacity is too small; CQ_ENOT_FINITE for a non-finite pose;
/// CQ_ECANCELED when query->deadline expired (*count is then the shapes
/// found before it).
CQ_API int cq_world_overlap(const cq_world *world, const cq_world_shape_query *query, cq_world_handle *out,
                            int capacity, int *count);

#endif
