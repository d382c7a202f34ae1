/* Internal: the sweep-and-prune broadphase a world owns (seed 003, GEA II
 * 14.3.6.3). Items are the caller's ids 0..capacity-1 (the world's slot
 * indices) with a box, a layer/mask filter and a static flag. A frame with
 * little motion costs close to O(n), one insert or remove no O(n) pass
 * (sap.c says how). The overlapping pairs (touching counts, infinite boxes
 * included) that pass the filter are kept as a set with a stable slot per
 * pair, and are read back sorted by (a, b) (after cq__sap_update or
 * cq__sap_pairs_sort) or in any order (cq__sap_pair_span and _entry).
 * docs/CORE.md (Broadphase) says how each path is chosen.
 *
 * Mutations (insert, remove, move, set_filter) only record; cq__sap_update
 * applies them and brings the pair set up to date, judging every pair by
 * the final boxes, so a pair that overlaps before and after an update keeps
 * its slot whatever moved. Reads reflect the last update and never write,
 * so concurrent readers are safe. Boxes are taken as given: the caller
 * fattens them by its skin. Memory comes from cq_alloc: item storage is
 * sized by the capacity and grows only in cq__sap_reserve/cq__sap_insert;
 * pair storage is preallocated (2 * capacity pairs) and grows only when
 * update must add a pair and no slot is free. Each growth is counted in
 * cq_sap_stats.grows. Nothing else allocates. */
#ifndef CQ_SAP_H
#define CQ_SAP_H

#include <stdbool.h>
#include <stdint.h>

#include "aabb.h"

typedef struct cq_sap cq_sap;

/* A live pair of the last update, or a pair that update removed. */
typedef struct cq_sap_pair {
    int a, b;   /* item ids, a < b */
    int slot;   /* stable for the pair's life: index into the caller's per-pair cache */
    bool added; /* the pair appeared in the last update (reset its cache entry) */
} cq_sap_pair;

/* Counters for metrics and for tests of the incremental behaviour. */
typedef struct cq_sap_stats {
    uint64_t grows;           /* storage grown past what was preallocated (items or pairs) */
    uint64_t swaps;           /* endpoint swaps in the dynamic arrays (the incremental re-sort) */
    uint64_t crossings;       /* dynamic endpoints stepping over a static endpoint (no swap) */
    uint64_t static_rebuilds; /* updates that rebuilt the static arrays (a static changed) */
    uint64_t sweeps;          /* updates that found fresh items' pairs with a full sweep */
    uint64_t queries;         /* fresh items whose pairs were found by a query of the arrays */
    uint64_t bulk_moves;      /* updates that merged the moved endpoints in sorted (a mass move) */
    uint64_t grid_builds;     /* times the query grid of new items was made (sap_grid.c) */
    uint64_t grid_queries;    /* fresh items whose pairs were found through the grid */
} cq_sap_stats;

/* Creates a broadphase for ids 0..capacity-1 (capacity > 0) with pair room
 * for 2 * capacity pairs. CQ_ERANGE for a bad capacity, CQ_ENO_MEMORY. */
int cq__sap_create(int capacity, cq_sap **out);

/* Frees the broadphase; NULL is ignored. */
void cq__sap_destroy(cq_sap *sap);

/* Grows the item storage to ids below capacity now (counted in grows), so
 * that later inserts below it cannot fail; no-op if it already holds them.
 * CQ_ERANGE past the id limit (2^24), CQ_ENO_MEMORY with nothing changed. */
int cq__sap_reserve(cq_sap *sap, int capacity);

/* Adds item id (>= 0; past the capacity the storage grows, counted) with its
 * box and filter. Statics never move in the sort; static-static pairs are
 * never reported. Pairs appear at the next update. CQ_ERANGE when id is
 * negative, too large or already present, or box has min > max;
 * CQ_ENOT_FINITE for a NaN; CQ_ENO_MEMORY with nothing changed. */
int cq__sap_insert(cq_sap *sap, int id, const cq_aabb *box, uint32_t layer, uint32_t mask, bool is_static);

/* Removes item id and, at once, its pairs (listed as removed by the next
 * update). The id may be inserted again. CQ_ERANGE when id is not present. */
int cq__sap_remove(cq_sap *sap, int id);

/* Records item id's new box; the next update re-sorts it. Moving a static
 * rebuilds the static arrays at the next update (meant to be rare).
 * CQ_ERANGE / CQ_ENOT_FINITE as for insert. */
int cq__sap_move(cq_sap *sap, int id, const cq_aabb *box);

/* Changes item id's filter: a pair exists when a's layer meets b's mask and
 * b's layer meets a's mask. Applied at the next update. CQ_ERANGE when id is
 * not present. */
int cq__sap_set_filter(cq_sap *sap, int id, uint32_t layer, uint32_t mask);

/* Applies the recorded mutations: re-sorts the moved items' endpoints,
 * places new items, and updates the pair set, the sorted pair list and the
 * list of removed pairs. Moves take the insertion sort unless a sample of
 * them shows it would cost more than merging all moved endpoints in sorted
 * (counted in bulk_moves); either way the pairs, slots, added flags and
 * removed list come out the same. Allocates only when the pair storage is full
 * (counted); if that allocation fails, returns CQ_ENO_MEMORY with the sort
 * complete but the pair set possibly missing pairs, and the next update that
 * can allocate restores it. CQ_OK otherwise. */
int cq__sap_update(cq_sap *sap);

/* cq__sap_update without its last step, the sort of the live pairs: they
 * are left in the list in no particular order, holes among them (read
 * with cq__sap_pair_span and cq__sap_pair_entry), so an update costs the
 * pairs it changed, not a pass over every pair. cq__sap_pairs_sort sorts
 * them when a reader needs the order. Same returns as cq__sap_update. */
int cq__sap_update_lazy(cq_sap *sap);

/* Sorts the live pairs into (a, b) order, the list's holes dropped:
 * O(n + m log m) for m pairs made since the list was last sorted, nothing
 * when it is sorted. A mutation, like an update; it allocates nothing and
 * changes no slot, flag or removed list. */
void cq__sap_pairs_sort(cq_sap *sap);

/* Live pairs after the last update. */
int cq__sap_pair_count(const cq_sap *sap);

/* The i-th live pair (0 <= i < count) in (a, b) order, while the list is
 * sorted: after cq__sap_update or cq__sap_pairs_sort, until the next
 * mutation. */
cq_sap_pair cq__sap_pair_at(const cq_sap *sap, int i);

/* Entries of the pair list: the live pairs (every one once) and holes,
 * count of them when the list is sorted. */
int cq__sap_pair_span(const cq_sap *sap);

/* Entry k (0 <= k < span) into *out; false for a hole. */
bool cq__sap_pair_entry(const cq_sap *sap, int k, cq_sap_pair *out);

/* Pairs the last update (and the removes before it) ended, sorted by (a, b).
 * A removed pair's slot may already hold an added pair, and a pair listed
 * here may be live again as an added pair (its id removed and inserted
 * again): drop cache entries for removed pairs first, then reset the added. */
int cq__sap_removed_count(const cq_sap *sap);

/* The i-th removed pair (0 <= i < removed count); added is false. */
cq_sap_pair cq__sap_removed_at(const cq_sap *sap, int i);

/* The slot of the live pair {a, b} in either order, or -1 (a remove takes
 * effect here at once). */
int cq__sap_find(const cq_sap *sap, int a, int b);

/* Pair slots are below this bound; it changes only when an update grows. */
int cq__sap_pair_capacity(const cq_sap *sap);

/* The counters. */
cq_sap_stats cq__sap_get_stats(const cq_sap *sap);

#endif
