/* Internal: a bounding-volume hierarchy over caller-indexed AABBs, shared by
 * the world (moving shapes, refit every tick) and the static mesh shape.
 *
 * The build is deterministic (the same boxes give the same tree, byte for
 * byte), every leaf has depth < CQ_BVH_MAX_DEPTH, and the build takes one
 * scratch block (about 190 bytes per item) that it frees before
 * returning. Items whose box has an infinite coordinate (planes) answer
 * exactly like the others: a query reports an item iff its box passes
 * the test.
 *
 * Queries never allocate, never recurse and visit in a fixed order: the
 * infinite list, then the tree depth first (left child first for boxes,
 * nearer child first for rays and sweeps). They only read the tree, so
 * any number may run at once on one tree. */
#ifndef CQ_BVH_H
#define CQ_BVH_H

#include <stddef.h>

#include "aabb.h"

/* The deepest leaf is at depth CQ_BVH_MAX_DEPTH - 1 (the root is depth 0). */
#define CQ_BVH_MAX_DEPTH 64
/* The most items a leaf holds. */
#define CQ_BVH_LEAF_MAX 4
/* The most items a tree holds (node indices stay far inside int). */
#define CQ_BVH_MAX_ITEMS (1 << 28)

/* One node: a leaf (count > 0) owns slots [first, first + count); an inner
 * node (count == 0) has children first and first + 1, both after it in the
 * array (so a backwards pass refits bottom-up). */
typedef struct cq_bvh_node {
    cq_aabb box; /* exactly the union of the boxes below */
    int first;
    int count;
} cq_bvh_node;

/* The two children first and first + 1 of an inner node, packed into one
 * 64-byte line for the ray and sweep walks: both boxes coordinate by
 * coordinate (index 0 the left child) as floats rounded outward, so one
 * visit tests both at once and only ever lets more through than the exact
 * double boxes (the leaf slots are still tested exactly), and their first
 * and count, so the walk reads no node but the root. Pair k holds nodes
 * 2k + 1 and 2k + 2 (the build appends children in pairs after the root)
 * and the build and every refit keep it up to date. */
typedef struct cq_bvh_pair {
    float min[3][2], max[3][2];
    int first[2], count[2];
} cq_bvh_pair;

/* A tree over items 0..count-1. Slots [0, finite_count) are the tree's leaf
 * slots; slots [finite_count, count) are the infinite items. Nodes, pairs,
 * slot boxes and slot items share one cq_alloc block. A zeroed struct is an
 * empty tree. */
typedef struct cq_bvh {
    cq_bvh_node *nodes; /* node 0 is the root (none when finite_count == 0) */
    cq_bvh_pair *pairs; /* (node_count - 1) / 2 of them, 64-byte aligned */
    cq_aabb *boxes;     /* per slot: a copy of the item's box */
    int *items;         /* per slot: the caller's item index */
    int node_count;
    int count;
    int finite_count;
    void *block; /* the one allocation, and its size for cq_free */
    size_t block_size;
} cq_bvh;

/* Builds a tree over boxes[0..count-1] into *bvh, overwriting it without
 * freeing (cq__bvh_free a built tree first). count may be 0. Returns CQ_OK,
 * CQ_ERANGE (count < 0 or > CQ_BVH_MAX_ITEMS), CQ_ENOT_FINITE (a NaN
 * coordinate) or CQ_ENO_MEMORY; on failure *bvh is an empty tree and
 * nothing stays allocated. */
int cq__bvh_build(cq_bvh *bvh, const cq_aabb *boxes, int count);

/* Takes the items' new boxes (boxes[0..count-1], same items as the build)
 * and refits every node bottom-up: O(n), no allocation, and every node box
 * is again exactly the union of its children. The topology is kept, so
 * queries stay exact while their speed degrades with the motion (see
 * cq__bvh_cost); an item that was infinite at build stays in the list, and
 * one that becomes infinite just makes its ancestors' boxes infinite. */
void cq__bvh_refit(cq_bvh *bvh, const cq_aabb *boxes);

/* Releases the tree and leaves *bvh empty; an empty tree is fine. */
void cq__bvh_free(cq_bvh *bvh);

/* The SAH cost of the tree, the expected box tests of a ray that hits the
 * root: the sum over nodes of area / root area, times 1 for an inner node
 * and times its item count for a leaf (infinite items not counted). 0 for
 * an empty tree, INFINITY once a refit made the root infinite. Compare it
 * after refits with its value right after the build to decide when to
 * rebuild. */
double cq__bvh_cost(const cq_bvh *bvh);

/* Called for each item a box query finds; return false to stop the query. */
typedef bool (*cq_bvh_visit)(void *ctx, int item);

/* Visits every item whose box overlaps *box (touching counts). */
void cq__bvh_query_aabb(const cq_bvh *bvh, const cq_aabb *box, cq_bvh_visit visit, void *ctx);

/* Called for each item a ray or sweep reaches within the current tmax.
 * Returns the new tmax (a larger value is ignored, so closest-hit visitors
 * return their hit distance and prune everything behind it); a negative
 * return stops the query. */
typedef double (*cq_bvh_ray_visit)(void *ctx, int item, double tmax);

/* Visits every item whose box the segment origin + t dir, t in [0, tmax],
 * touches (tmax may be INFINITY; dir need not be unit, t is in its units).
 * Zero direction components are exact (the ray is inside the slab or
 * misses); components below 1/DBL_MAX in magnitude count as zero. */
void cq__bvh_query_ray(const cq_bvh *bvh, cq_vec3 origin, cq_vec3 dir, double tmax, cq_bvh_ray_visit visit,
                       void *ctx);

/* Visits every item whose box the (finite) box swept along t d, t in
 * [0, tmax], touches: the slab test of the ray t d against each box grown
 * by the moving box (lo = min - box->max, hi = max - box->min). Zero
 * components of d behave as in cq__bvh_query_ray. */
void cq__bvh_query_sweep(const cq_bvh *bvh, const cq_aabb *box, cq_vec3 d, double tmax, cq_bvh_ray_visit visit,
                         void *ctx);

#endif
