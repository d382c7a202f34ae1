/// @file server/state/registry.h
/// The worlds by name. Each world has a readers-writer lock: queries take
/// it shared, mutations (including contacts, which updates the pair cache)
/// exclusive. A world is reference-counted so DELETE never frees it under
/// a running query.
#ifndef CQD_REGISTRY_H
#define CQD_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cq/world.h"
#include "cqp/durability.h"

/// A world entry as handlers see it between acquire and release.
typedef struct cqd_world {
    char name[CQ_WORLD_ID_MAX + 1];
    cq_world *world;        ///< guarded by lock
    pthread_rwlock_t lock;
    int refs;               ///< guarded by the registry's lock
    bool deleted;           ///< removed from the registry; freed with the last reference
    uint64_t seq;           ///< journal seq of the last mutation applied (guarded by lock; 0 without a data dir)
    cqp_durability durability; ///< set before the entry is listed, never changed: read it without a lock
    /// Shapes and broadphase pairs as the last change left them, stored as
    /// each writer releases the lock: a list or a scrape reads them without
    /// the lock, so a minute-long query on one world delays neither.
    _Atomic int shapes_seen, pairs_seen;
    bool writing;           ///< held exclusive (guarded by lock)
} cqd_world;

typedef struct cqd_registry cqd_registry;

/// A new empty registry, or NULL when out of memory.
cqd_registry *cqd_registry_create(void);
/// Caps the worlds held at max (0: no cap, the default): creating one more
/// returns CQD_REGISTRY_FULL. The daemon sets it once recovery is done, so
/// lowering the cap never drops worlds already acknowledged.
void cqd_registry_limit(cqd_registry *r, int max);
/// Sets every world's pair cap (cq_world_settings.max_pairs) to max, and
/// that of every world a later put creates or configures (a put's own
/// max_pairs is ignored; 0, the default, is no cap). Run once recovery is
/// done, which applies journaled changes uncapped: a world above the cap
/// keeps its pairs and may then only change without adding. 0, or -1 when
/// out of memory (nothing changed).
int cqd_registry_cap_pairs(cqd_registry *r, long max);
/// Caps the shape slots all worlds' storage may hold at max (0: no cap, the
/// default; --max-shapes-total). Each world is charged its storage
/// (cq_world_stats.capacity) from before it is allocated until the world is
/// freed; a put, batch or import that would make storage past the cap fails
/// with CQ_EBUDGET, nothing changed. Set once recovery is done, like
/// cqd_registry_limit: what recovery brings back is charged in full, and a
/// lower cap only refuses later growth.
void cqd_registry_limit_slots(cqd_registry *r, long max);
/// The shape slots charged now (every world's storage, including worlds
/// deleted but still referenced by a running query).
long cqd_registry_slots(cqd_registry *r);
/// Frees the registry and every world. No request may run.
void cqd_registry_destroy(cqd_registry *r);

/// Looks up name and locks the world shared (write false) or exclusive;
/// NULL when there is no such world. Pair with cqd_world_release.
cqd_world *cqd_world_acquire(cqd_registry *r, const char *name, bool write);
/// Unlocks and drops the reference taken by cqd_world_acquire.
void cqd_world_release(cqd_registry *r, cqd_world *w);

/// X(name, code, message) for the registry's own failures. Its calls
/// return these, the core's negative cq_status codes, or a success.
#define CQD_REGISTRY_STATUS_TABLE(X)                                                         \
    X(REFUSED, -1000, "the hook refused the change")                                         \
    X(FULL, -1001, "as many worlds as the cap allows exist already")                         \
    X(CONFLICT, -1002, "the world exists with another durability (chosen once, at creation)")

/// The registry's own failure codes, below every cq_status code: REFUSED
/// when a hook refused the change, FULL when a put would create a world
/// past the cap, CONFLICT when a put names a durability other than the
/// existing world's. Nothing changes with any of them.
typedef enum cqd_registry_status {
#define CQD_REGISTRY_STATUS_ENUM_(name, code, msg) CQD_REGISTRY_##name = code,
    CQD_REGISTRY_STATUS_TABLE(CQD_REGISTRY_STATUS_ENUM_)
#undef CQD_REGISTRY_STATUS_ENUM_
} cqd_registry_status;

/// A message for what a registry call returned (static, never NULL): the
/// table's for the registry's own codes, cq_strerror's for any other.
const char *cqd_registry_strerror(int status);

/// Called under the lock that orders a world's mutations (the world's
/// write lock, or the registry's while a new world is inserted), just
/// before the change is made, so the journal records changes in the order
/// they are applied. before returns 0 to go on; anything else refuses the
/// change (nothing changes).
typedef struct cqd_registry_hook {
    int (*before)(void *arg, cqd_world *w);
    void *arg;
} cqd_registry_hook;
/// What a put asks for (every pointer borrowed for the call).
typedef struct cqd_world_put {
    const cq_world_settings *settings;
    bool import;               ///< replace the content with ops (all upserts)
    const cq_world_op *ops;
    int count;
    cqp_durability durability; ///< of a world the put creates
    bool durability_given;     ///< else an existing world keeps its own, and a new one is full
    /// Out, may be NULL: set once an import's world is built, from then on
    /// (success or failure) the hulls and meshes of ops are the registry's
    /// to keep or free, so the caller must disown them (cqp_batch_disown).
    bool *ops_taken;
} cqd_world_put;
/// A world as a put left it, read under the same lock as the change (so no
/// other mutation or a DELETE slips in between).
typedef struct cqd_world_state {
    cq_world_settings settings; ///< in force, defaults filled in
    cq_world_stats stats;
    cqp_durability durability;
} cqd_world_state;
/// Creates the world name (201; durability put->durability when given,
/// else full) or, when it exists, applies put->settings (200). With
/// put->import, the world's content is replaced by the ops atomically: on
/// any failure nothing changes, and *bad_op names the op to blame (or -1).
/// The hook (NULL: none) runs after everything is checked and made room
/// for, so that the change cannot fail once it let it through. On success
/// *state (when not NULL) is the world as the put left it. Returns 201,
/// 200, a negative cq_status, or CQD_REGISTRY_FULL past the cap,
/// CQD_REGISTRY_CONFLICT for a durability other than the existing world's
/// (before the hook), CQD_REGISTRY_REFUSED when the hook refused.
int cqd_registry_put(cqd_registry *r, const char *name, const cqd_world_put *put, int *bad_op,
                     cqd_world_state *state, const cqd_registry_hook *hook);
/// Removes a world. CQ_OK or CQ_ENOT_FOUND.
int cqd_registry_delete(cqd_registry *r, const char *name);

/// cqd_registry_delete with a hook (NULL: none); CQD_REGISTRY_REFUSED when
/// the hook refused.
int cqd_registry_delete_hooked(cqd_registry *r, const char *name, const cqd_registry_hook *hook);

/// References to every world, sorted by name, into a new array (cqd_free it)
/// of *count entries, none locked; drop each with cqd_world_unref. Returns
/// 0, or -1 when out of memory (nothing taken).
int cqd_registry_refs(cqd_registry *r, cqd_world ***out, int *count);
/// Drops a reference taken by cqd_registry_refs (the last one of a deleted
/// world frees it).
void cqd_world_unref(cqd_registry *r, cqd_world *w);

/// A world's name and shape count, for listings.
typedef struct cqd_world_info {
    char name[CQ_WORLD_ID_MAX + 1];
    int shapes;
    int broadphase_pairs;
    cqp_durability durability;
} cqd_world_info;
/// Every world sorted by name into *out, a new array (cqd_free it, also
/// when *count is 0), of *count entries. Returns 0, or -1 when out of
/// memory (*out NULL, *count 0): an empty listing is not a failed one.
/// Takes no world's lock: the counts are those of each world's last
/// completed change.
int cqd_registry_list(cqd_registry *r, cqd_world_info **out, int *count);

#endif
