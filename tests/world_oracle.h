/* Shared by the world suites (check_world*.c): op builders, random shapes,
 * a snapshot of a world's registry read through its public accessors, and
 * the brute-force oracles (every pair, every shape), in world_oracle.c. */
#ifndef CQ_WORLD_ORACLE_H
#define CQ_WORLD_ORACLE_H

#include "cq/world.h"
#include "testutil.h"

static inline cq_shape wo_sphere(double r) { return (cq_shape){.type = CQ_SPHERE, .sphere = {r}}; }
static inline cq_shape wo_box(double x, double y, double z) { return (cq_shape){.type = CQ_BOX, .box = {cq_v3(x, y, z)}}; }
static inline cq_shape wo_capsule(double r, double hh) { return (cq_shape){.type = CQ_CAPSULE, .capsule = {r, hh}}; }
static inline cq_shape wo_plane(cq_vec3 n, double d) { return (cq_shape){.type = CQ_PLANE, .plane = {n, d}}; }

static inline cq_xform wo_at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

static inline cq_world_op wo_upsert(const char *id, cq_shape s, cq_xform pose, cq_vec3 v, uint32_t layer,
                                    uint32_t mask)
{
    return (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = id, .shape = s, .pose = pose, .velocity = v,
                         .layer = layer, .mask = mask};
}

static inline cq_world_op wo_move(const char *id, cq_xform pose, cq_vec3 v)
{
    return (cq_world_op){.kind = CQ_WORLD_MOVE, .id = id, .pose = pose, .velocity = v};
}

static inline cq_world_op wo_remove(const char *id) { return (cq_world_op){.kind = CQ_WORLD_REMOVE, .id = id}; }

/* Applies a batch that must succeed. */
void wo_apply(cq_world *w, const cq_world_op *ops, int n);

/* A random shape of type t about size big (convex: a new hull of random
 * points, owned by whoever the shape goes to; planes: a random tilt). */
cq_shape wo_random_shape(tu_rng *rng, cq_shape_type t, double size);

/* A random non-plane shape type, convex included when with_convex. */
cq_shape_type wo_random_type(tu_rng *rng, bool with_convex);

/* One live shape as the public accessors report it. */
typedef struct wo_item {
    cq_world_handle h;
    char id[CQ_WORLD_ID_MAX + 1];
    cq_world_body body;
} wo_item;

/* Every live shape sorted by id (malloc'd, *out); returns the count. */
int wo_items(const cq_world *w, wo_item **out);

/* The world's id listing against a model's: pool ids of stride bytes each
 * (NUL-terminated), alive[k] for those that should be listed, sorted. */
void wo_check_listing(const cq_world *w, const char *ids, size_t stride, const bool *alive, int pool);

/* Whether two snapshots are the same registry (ids, handles, bodies). */
bool wo_items_equal(const wo_item *a, int na, const wo_item *b, int nb);

/* Brute force broadphase: every pair i < j of items (sorted by id, so i's
 * id is the lower) whose boxes, each fattened by skin / 2, overlap, whose
 * filters meet both ways and which are not both planes. Writes pairs
 * (malloc'd, *out) and returns the count. */
int wo_brute_pairs(const wo_item *items, int n, double skin, int (**out)[2]);

/* The brute-force pair count of w's shapes at skin; with filters false,
 * every overlap the broadphase tests whatever the filters (what the pair
 * cap counts). */
int wo_brute_count(const cq_world *w, double skin, bool filters);

/* The handle of a live id (the test fails otherwise). */
cq_world_handle wo_handle(const cq_world *w, const char *id);

/* The index of handle h in items, -1. */
int wo_find(const wo_item *items, int n, cq_world_handle h);

/* Fails the test unless cq_world_pairs gives exactly the brute-force
 * pairs of w's shapes at skin, in order, and CQ_ERANGE for one fewer. */
void wo_check_pairs(const cq_world *w, double skin);

/* A failing allocator: calls from the fail_from-th on fail (0: none). */
typedef struct wo_alloc_probe {
    long calls, fail_from;
} wo_alloc_probe;
void *wo_probe_alloc(size_t size, void *ctx);
void wo_probe_free(void *ptr, size_t size, void *ctx);

#endif
