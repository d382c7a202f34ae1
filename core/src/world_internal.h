/* Internal to world*.c: the world's storage and the helpers its files share.
 * world.c holds the registry, its storage and the upkeep ending every
 * mutation, world_batch.c the batches' checks (cq_world_prepare),
 * world_commit.c their commit, world_contacts.c the narrow phase
 * over the broadphase pairs and CCD, world_query.c the read-only queries.
 * See cq/world.h for the contract. */
#ifndef CQ_WORLD_INTERNAL_H
#define CQ_WORLD_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "aabb.h"
#include "bvh.h"
#include "cq/deadline.h"
#include "cq/world.h"
#include "sap.h"
#include "world_grid.h"

/* A slot's hot part: what a batch's lookup of an id or a handle reads, in
 * an array of its own, apart from the bodies. 96 bytes at a 32-byte
 * boundary of a 64-byte aligned array: an id of up to 22 characters is
 * read in one cache line, and the batch's mark beside it costs no other.
 * A 350-byte entry holding it all made every lookup touch a line of the
 * entry the pose write did not. */
typedef struct world_name {
    _Alignas(32) uint32_t generation; /* of the current or last registration */
    int32_t mark;        /* batch: record per slot, or -1; contacts: filter marks */
    bool alive;
    uint8_t id_len;
    char id[CQ_WORLD_ID_MAX + 1];
} world_name;

/* One registered shape's body and derived data (slot). */
typedef struct world_entry {
    cq_world_body body;
    cq_aabb box;         /* exact world box of the shape at its pose */
    double min_half;     /* smallest half-width (CCD threshold); 0 for planes */
} world_entry;

/* An id hash cell: the slot, or -1 when empty, and the id's world_id_hash,
 * so that a probe compares ids (reading the slot's name) only on a likely
 * hit, and deleting rehashes nothing. */
typedef struct world_cell {
    int32_t slot;
    uint32_t hash;
} world_cell;

/* How many CCD pairs a world remembers as having fallen back (see
 * world_ccd_memory). */
#define WORLD_CCD_MEMORY 64

/* The CCD pairs (swept shape, other; packed handles) whose sweep fell back
 * in the last answered contacts query that ran CCD, and those of the
 * current one (made the last when it is answered, with the pair cache).
 * While a pair's failure recurs it is counted, not logged again (seed 002:
 * no log line every frame), as the narrow phase does with its pair cache.
 * A fixed capacity, as the memos ask of a step: a pair past it is logged
 * again, nothing grows mid-query. */
typedef struct world_ccd_pair {
    uint64_t a, b;
} world_ccd_pair;

typedef struct world_ccd_memory {
    world_ccd_pair pair[2][WORLD_CCD_MEMORY];
    int count[2];
    int last; /* which half holds the last query's pairs */
} world_ccd_memory;

/* A pair cache entry, indexed by the broadphase's pair slot. */
typedef struct world_pair_cache {
    cq_pair_cache prev; /* previous normal (lower id to higher) and box-box axis */
    bool fell_back;     /* the last query of the pair needed a fallback */
} world_pair_cache;

/* A broadphase pair as the contact pass works on it. */
typedef struct world_work {
    int32_t lo, hi;   /* slots, id(lo) < id(hi) */
    int32_t slot;     /* broadphase pair slot */
    world_pair_cache next; /* the cache entry this pass leaves */
} world_work;

/* A sort record: a touching pair's key (its ids' ranks) and its output index. */
typedef struct world_key {
    uint64_t key;
    int32_t index;
} world_key;

/* A batch cq_world_prepare checked and made room for, awaiting
 * cq_world_commit or cq_world_abandon: its records stay in the batch
 * scratch (world_batch.c), these say how many and of which call. */
typedef struct world_pending {
    bool on;
    const cq_world_op *ops; /* the caller's, to catch a commit of other ops */
    int count;
    int records, cands, finals;
    bool boxed; /* the records' boxes were computed (batch.box) */
    int gchanged; /* records whose pair grid record changes (batch.gchg) */
    bool gridded; /* the changes are in the grid already (batch.gridded) */
} world_pending;

struct cq_world {
    cq_world_settings settings;
    int cap;   /* slots with storage */
    int count; /* live shapes */

    /* Slot storage: one block, carved. */
    void *slot_block;
    size_t slot_block_size;
    world_entry *e;
    world_name *names;
    int32_t *free_slots; /* stack of free slots */
    int free_n;
    /* The id order, settled lazily so that one change costs O(1): order
     * holds the members as of the last settle, sorted by id, with -1 for
     * each removed since (a hole); order_new the slots inserted since, in
     * no order (with holes too). rank[slot] is a member's index in order,
     * or -(its index in order_new) - 1. cq__world_settle merges and renumbers:
     * once changes pass a quarter of the order, and when a mutation needs
     * every rank (contacts, a tree build). */
    int32_t *order;      /* order_n entries */
    int32_t *order_new;  /* order_new_n entries */
    int32_t *order_tmp;  /* scratch for merging the order */
    world_key *order_keys; /* scratch for sorting the new slots by their ids' first bytes */
    int32_t *rank;
    int order_n, order_new_n, holes; /* holes: -1 entries in order and order_new */
    int32_t *bvh_slot;   /* BVH item -> slot */
    cq_aabb *bvh_box;    /* BVH item boxes, for refits */
    world_cell *table;   /* id hash, open addressing, table_mask + 1 cells */
    uint32_t table_mask;

    /* Batch scratch: one block sized for batch_cap ops. */
    void *batch_block;
    size_t batch_block_size;
    int batch_cap;
    world_pending pending;

    cq_sap *sap;
    bool sap_dirty; /* mutations recorded since the last cq__sap_update */
    bool sap_stale; /* the last cq__sap_update ran out of memory */

    cq_bvh bvh;
    int bvh_count;       /* items the tree was built over */
    bool bvh_valid;      /* the tree matches the shapes; false: queries scan every shape */
    bool bvh_rebuild;    /* shapes came or went since the tree was built (or the build failed) */
    double bvh_base_cost; /* cq__bvh_cost right after the build */

    world_pair_cache *cache; /* per broadphase pair slot */
    int cache_cap;
    world_work *work;      /* contact pass scratch: the pairs, */
    world_key *keys;       /* their sort keys, */
    int32_t *bucket_order; /* and their order by shape-type bucket */
    int work_cap;
    world_ccd_memory ccd_fell_back;

    /* The pair cap's bound (world_paircap.c), kept while the cap could be
     * crossed: the grid, each slot's record in it, the skin they were
     * made with; grid_on when it matches the shapes. */
    world_grid grid;
    grid_keep *grid_rec;
    int grid_rec_cap;
    double grid_skin;
    bool grid_on;

    cq_world_stats stats;
    cq_world_budget budget; /* take NULL: growth is not charged */
};

/* Slot storage before it is adopted by a world (world.c). */
typedef struct world_slots {
    void *block;
    size_t size;
    int cap;
    world_entry *e;
    world_name *names;
    int32_t *free_slots, *order, *order_new, *order_tmp, *rank, *bvh_slot;
    world_key *order_keys;
    cq_aabb *bvh_box;
    world_cell *table;
    uint32_t table_mask;
} world_slots;

/* A strict order for cq__world_heapsort. */
typedef bool (*world_less)(const void *x, const void *y, const void *ctx);

/* Takes n elements of size bytes from offset *at of base (64-byte aligned,
 * a cache line), so one allocation holds many arrays; with base NULL it
 * only measures. */
static inline void *world_carve(char *base, size_t *at, size_t n, size_t size)
{
    size_t start = (*at + 63) & ~(size_t)63;
    *at = start + n * size;
    return base ? base + start : NULL;
}

/* FNV-1a over an id, then a multiplicative mix so the low bits index well. */
static inline uint32_t world_id_hash(const char *id, size_t len)
{
    uint64_t h = 1469598103934665603u;
    for (size_t k = 0; k < len; k++)
        h = (h ^ (unsigned char)id[k]) * 1099511628211u;
    return (uint32_t)((h * 0x9E3779B97F4A7C15u) >> 32);
}

/* Fills in the defaults of a settings struct. */
cq_world_settings cq__world_settings_resolve(const cq_world_settings *s);

/* A finite position and a rotation: orthonormal columns within 1e-9 (the
 * pose builders make them exact; this catches hand-made matrices) and no
 * mirror. CQ_ENOT_FINITE, CQ_ENOT_UNIT, CQ_ENOT_ORTHOGONAL, CQ_EMIRROR. */
int cq__world_check_pose(const cq_xform *x);

/* Whether each shape's layer meets the other's mask. */
static inline bool world_filters_meet(const world_entry *a, const world_entry *b)
{
    return (a->body.layer & b->body.mask) && (b->body.layer & a->body.mask);
}

/* Whether a handle names a live shape. */
static inline bool world_live(const cq_world *w, cq_world_handle h)
{
    return h.index < (uint32_t)w->cap && w->names[h.index].alive && w->names[h.index].generation == h.generation;
}

static inline cq_world_handle world_handle(const cq_world *w, int slot)
{
    return (cq_world_handle){(uint32_t)slot, w->names[slot].generation};
}

/* Whether live slot a's id sorts before live slot b's: by rank when both
 * are in the settled order, else by the ids themselves. */
static inline bool world_before(const cq_world *w, int a, int b)
{
    int32_t ra = w->rank[a], rb = w->rank[b];
    if ((ra | rb) >= 0)
        return ra < rb;
    return strcmp(w->names[a].id, w->names[b].id) < 0;
}

/* The members, k in [0, world_member_span): a live slot, or -1 for a
 * hole; the settled order first, then the new slots. */
static inline int world_member_span(const cq_world *w) { return w->order_n + w->order_new_n; }
static inline int world_member(const cq_world *w, int k)
{
    return k < w->order_n ? w->order[k] : w->order_new[k - w->order_n];
}

/* world_commit.c: merges the new slots into the id order, drops the
 * holes and numbers every rank: afterwards order[0..count) is every live
 * slot sorted by id and rank[slot] its index. */
void cq__world_settle(cq_world *w);

/* Settles the id order if it is not (a mutation's helper, before it reads
 * ranks or order[0..count)). */
void cq__world_renumber(cq_world *w);

/* The heap block a shape refers to and a world owns once a batch stores the
 * shape (a convex shape's hull, a mesh shape's mesh), or NULL. */
static inline const void *world_owned(const cq_shape *s)
{
    if (s->type == CQ_CONVEX)
        return s->convex.hull;
    return s->type == CQ_MESH ? (const void *)s->mesh.mesh : NULL;
}

/* world.c: frees a block world_owned gave for a shape of type t. */
void cq__world_owned_free(cq_shape_type t, const void *block);

/* Planes and meshes are static: never swept, never moved by velocity. */
static inline bool world_static_type(cq_shape_type t) { return t == CQ_PLANE || t == CQ_MESH; }

/* Sorts n records by key (heapsort: in place, no allocation). */
void cq__world_sort_keys(world_key *k, int n);

/* Sorts n elements of size bytes by less (heapsort: in place, no allocation). */
void cq__world_heapsort(void *base, size_t n, size_t size, world_less less, const void *ctx);

/* world.c: slot storage for cap slots (every slot dead, marks -1, table
 * empty); CQ_ENO_MEMORY. The block is over-allocated by a line so the
 * arrays start at cache line boundaries. */
int cq__world_slots_alloc(world_slots *s, int cap);
void cq__world_slots_free(world_slots *s);
/* Moves the world into larger storage s (counted as a growth); s is emptied. */
void cq__world_slots_adopt(cq_world *w, world_slots *s);
/* Grows slot storage (and the broadphase's) to at least need slots, charged
 * to the world's budget. CQ_ERANGE past CQ_WORLD_MAX_SHAPES, CQ_EBUDGET,
 * CQ_ENO_MEMORY; nothing changes on failure. */
int cq__world_grow(cq_world *w, int need);

/* The id hash: slot of id, or -1; insert and delete a live slot's id. */
int cq__world_table_find(const cq_world *w, const char *id, size_t len);
/* cq__world_table_find with id's world_id_hash already computed. */
int cq__world_table_find_hashed(const cq_world *w, const char *id, size_t len, uint32_t hash);
void cq__world_table_put(cq_world *w, int slot, uint32_t hash);
void cq__world_table_drop(cq_world *w, int slot);

/* A slot's broadphase box: its box fattened by skin / 2. */
cq_aabb cq__world_sap_box(const cq_world *w, int slot);

/* world_paircap.c: CQ_ELIMIT when a new skin (or cap) would leave the
 * world more broadphase pairs than the cap allows; CQ_ENO_MEMORY. */
int cq__world_check_skin_pairs(const cq_world *w, double skin, long cap);
/* world_paircap.c: frees the pair grid; sync makes it match the world
 * again (after a new skin or cap), or drops it when the cap is out of
 * reach. Neither can fail: without memory the grid is off and the checks
 * count instead. */
void cq__world_pair_grid_drop(cq_world *w);
void cq__world_pair_grid_sync(cq_world *w);
/* world_paircap.c, for tests: whether the pair grid is on and whole: its
 * table holds exactly its records' memberships, its sum is the table's,
 * its counts are its records', and each live slot's record covers the
 * slot's broadphase box. *bound gets its bound. */
bool cq__world_pair_grid_audit(const cq_world *w, long long *bound);
/* For tests: whether the pair grid counts the pair of live slots a and b. */
bool cq__world_pair_grid_counts(const cq_world *w, int a, int b);

/* Ends every mutation: updates the broadphase, and rebuilds the BVH when
 * its members changed (or it is stale), refits it when shapes moved
 * (rebuilding once refits degraded it). Out of memory leaves the stale
 * flags set for the next mutation to retry. */
void cq__world_finish(cq_world *w, bool moved, bool members_changed);

/* world_batch.c: batch scratch for ops operations; release frees it. */
int cq__world_batch_reserve(cq_world *w, int ops);
void cq__world_batch_release(cq_world *w);

/* world_batch.c: called first by every mutation but commit and abandon. A
 * prepared batch still pending is a programming error (asserted); without
 * assertions it is abandoned, so the mutation runs on the world as it is. */
void cq__world_no_pending(cq_world *w);

/* world_contacts.c: preallocates the pair cache and the contact pass
 * scratch for the broadphase's pair capacity; release frees them. */
int cq__world_contacts_reserve(cq_world *w);
void cq__world_contacts_release(cq_world *w);

/* world_query.c: candidate walks over the BVH (or over every shape, in id
 * order, while the BVH is stale). Visitors get slots; a ray or sweep
 * visitor returns the new tmax (negative stops), a box visitor false to stop. */
typedef double (*world_cast_visit)(void *ctx, int slot, double tmax);
typedef bool (*world_box_visit)(void *ctx, int slot);
void cq__world_each_ray(const cq_world *w, cq_vec3 origin, cq_vec3 dir, double tmax, world_cast_visit visit, void *ctx);
void cq__world_each_sweep(const cq_world *w, const cq_aabb *box, cq_vec3 d, double tmax, world_cast_visit visit,
                          void *ctx);
void cq__world_each_box(const cq_world *w, const cq_aabb *box, world_box_visit visit, void *ctx);

/* A sweep candidate's box grows by this much, so a hit within cq_sweep's
 * tolerance of a box is not culled. */
static inline double world_sweep_margin(const cq_aabb *box)
{
    double m = fmax(fmax(fabs(box->min.x), fabs(box->max.x)),
                    fmax(fmax(fabs(box->min.y), fabs(box->max.y)), fmax(fabs(box->min.z), fabs(box->max.z))));
    return 2 * CQ_SWEEP_DEFAULT_TOLERANCE + (isfinite(m) ? 1e-10 * m : 0);
}

/* A query's view of its caller's deadline: one per query (on its stack,
 * so concurrent queries share nothing), asking the hook every
 * CQ_DEADLINE_STRIDE units and remembering a yes. */
typedef struct world_ticker {
    const cq_deadline *deadline; /* NULL: none */
    unsigned units;
    bool expired;
} world_ticker;

static inline world_ticker world_ticker_start(const cq_deadline *d)
{
    return (world_ticker){d && d->expired ? d : NULL, 0, false};
}

/* Counts n units of work about to be done; true once the deadline has
 * passed (asked when the units reach CQ_DEADLINE_STRIDE). */
static inline bool world_tick_by(world_ticker *t, unsigned n)
{
    if (t->expired)
        return true;
    if (!t->deadline || (t->units += n) < CQ_DEADLINE_STRIDE)
        return false;
    t->units = 0;
    t->expired = t->deadline->expired(t->deadline->ctx);
    return t->expired;
}

static inline bool world_tick(world_ticker *t) { return world_tick_by(t, 1); }

/* The units a pair test or a sweep of shapes of types a and b counts: one,
 * but a whole stride with a mesh, whose triangles it walks (a hull on a
 * mesh of 440k triangles takes a good part of a second), so the hook is
 * asked before each such pair. */
static inline unsigned world_units(cq_shape_type a, cq_shape_type b)
{
    return a == CQ_MESH || b == CQ_MESH ? CQ_DEADLINE_STRIDE : 1;
}

/* world_tick_by for a pair test or a sweep of entries a and b: without a
 * deadline, neither shape's type is read (the hot loops run per pair). */
static inline bool world_tick_pair(world_ticker *t, const world_entry *a, const world_entry *b)
{
    return t->deadline && world_tick_by(t, world_units(a->body.shape.type, b->body.shape.type));
}

/* Keeps the broadphase and the pair cache up to date: a pending update is
 * run and the pairs it ended are cleared from the cache. CQ_ENO_MEMORY
 * when the broadphase cannot store its pairs. */
int cq__world_sync_broadphase(cq_world *w);

#endif
