/* Internal to the sweep-and-prune (sap*.c): the structure and the helpers
 * its files share. See sap.h for the contract. */
#ifndef CQ_SAP_INTERNAL_H
#define CQ_SAP_INTERNAL_H

#include <stddef.h>

#include "sap.h"

/* Ids stay below this so tags (id * 2 + 1) and pair keys fit. */
#define SAP_MAX_ITEMS (1 << 24)
/* Pair slots stay below this so the hash table size fits an int32 index. */
#define SAP_MAX_PAIRS (1 << 28)
/* Fresh items' pairs are found by one sweep over everything instead of a
 * query each when more than one in SAP_SWEEP_SHARE of the items is fresh
 * (or the queries' stretches add up to more than a sweep would visit:
 * sap_refresh.c). */
#define SAP_SWEEP_SHARE 16
/* Moved items whose rank displacement is measured to judge a batch. */
#define SAP_BULK_SAMPLES 48
/* A batch of moves whose estimated swaps and crossings exceed this many
 * times the work of merging is merged in sorted rather than
 * insertion-sorted (measured: sap_bulk.c). */
#ifndef SAP_BULK_RATIO /* overridable to measure either path alone */
#define SAP_BULK_RATIO 1.0
#endif
/* What one test of the refresh's sweep (a fresh start against an open
 * interval's y and z) costs in units of merging work (measured: sap_bulk.c). */
#define SAP_SWEEP_TEST_COST 0.4
/* Tag bit marking a moved endpoint while the bulk path pulls them out. */
#define SAP_TAG_MOVED 0x80000000u

/* Crossings held back per batch (see sap_sort.c's crossing()). */
#define SAP_HELD_MAX 512

/* Crossings of one kind held back: the two items of each. */
typedef struct sap_held {
    int n;
    int32_t pair[SAP_HELD_MAX][2];
} sap_held;

/* One endpoint on one axis: its value and tag = id * 2 + (1 for a max). */
typedef struct sap_ep {
    double v;
    uint32_t tag;
} sap_ep;

/* New dynamics wait in a staging list, their pairs found by a query each
 * and by testing them against one another, until more than
 * max(SAP_STAGE_MIN, sqrt(dynamic endpoints)) wait: merging them into the
 * arrays costs O(n), so a single insert costs O(n / sqrt n) amortised.
 * While the query grid holds them (its queries find them), more may wait
 * (SAP_STAGE_SHARE) and the merge costs O(1) an insert. */
#define SAP_STAGE_MIN 16
/* While the query grid holds the staged items (sap_grid.c), up to one
 * dynamic in SAP_STAGE_SHARE waits. */
#define SAP_STAGE_SHARE 16
/* Dead endpoints (removed items') stay in the dynamic arrays until they are
 * more than 1 / SAP_DEAD_SHARE of them: compacting costs O(n). */
#define SAP_DEAD_SHARE 4

/* Item flags. */
enum {
    SAP_ALIVE = 1,  /* the id is in use */
    SAP_STATIC = 2, /* endpoints in the static arrays */
    SAP_PLACED = 4, /* endpoints are in the arrays (cleared until update places a new item) */
    SAP_MOVED = 8,  /* a placed dynamic with a pending box (in the moved list) */
    SAP_FRESH = 16, /* its pairs must be recomputed (new, filter changed, static moved) */
    SAP_STAGED = 32, /* a dynamic in the staging list, not in the arrays */
};

/* A pair slot. While free, a = -1 and link[0][1] chains the free list. */
typedef struct sap_pair {
    int32_t a, b;       /* a < b */
    int32_t link[2][2]; /* [0] in a's list, [1] in b's list; [.][0] prev, [.][1] next */
    int32_t at;         /* where it was appended to the pair list: a hint, stale once the list is sorted */
} sap_pair;

/* A pair named by its sort key (a << 32 | b) and its slot; in the pair
 * list, slot -1 is a hole (a pair dropped since the list was sorted). */
typedef struct sap_ref {
    uint64_t key;
    int32_t slot;
    int32_t added; /* in the list: the pair was made by the last update */
} sap_ref;

/* What a crossing reads about an item, in one 64-byte line. */
typedef struct sap_item {
    cq_aabb box;          /* the box the arrays reflect (or will, once placed) */
    uint32_t layer, mask; /* the filter */
    uint8_t flags;        /* SAP_* */
} sap_item;
_Static_assert(sizeof(sap_item) == 64, "an item fills one cache line");

/* The query grid (sap_grid.c): levels -24..39, cells of side 2^(l+1). */
#define SAP_GRID_LMIN (-24)
#define SAP_GRID_LMAX 39
#define SAP_GRID_LEVELS (SAP_GRID_LMAX - SAP_GRID_LMIN + 1)
_Static_assert(SAP_GRID_LEVELS <= 64, "the levels in use are bits of a word");
/* Dynamic endpoints below which a fresh item is queried along the arrays:
 * a slab of a small world is short, and the grid is not made for it. */
#define SAP_GRID_MIN_ENDPOINTS 4096
/* Huge items beyond which the grid is not used (each query reads them all). */
#define SAP_GRID_MAX_HUGE 32
/* What a grid query costs, in endpoints of a merge (judging the moves
 * against the staged items through it or merging them in). */
#define SAP_GRID_QUERY_COST 32

/* Where an item is in the grid. */
enum { SAP_GRID_NONE, SAP_GRID_CELL, SAP_GRID_HUGE };

/* A cell: its level and coordinates (floor of the min corner over 2^(l+1)). */
typedef struct sap_grid_key {
    int32_t x, y, z, level;
} sap_grid_key;

/* An item's place in the grid: its box in floats rounded outwards, so
 * that a query rules out a member its box cannot meet without reading the
 * item (a line from afar each); its neighbours in the cell's list (or the
 * huge list); its cell. What a query's walk reads, box and next, is the
 * first 28 of its 48 bytes. */
typedef struct sap_grid_node {
    float lo[3], hi[3];
    int32_t next, prev;
    int32_t x, y, z; /* the cell (sap_grid_key) */
    int16_t level;
    uint8_t where; /* SAP_GRID_* */
} sap_grid_node;

/* A hash bucket: the first member (head -1: empty) of the cells whose
 * key hashes to hash (a cell is named by its hash alone: two cells of one
 * hash share a list, and their members are offered to a query of either,
 * which the pair test sorts out). 8 bytes, so that the table of a large
 * world mostly stays in the cache. */
typedef struct sap_grid_cell {
    uint32_t hash;
    int32_t head;
} sap_grid_cell;

typedef struct sap_grid {
    sap_grid_node *node; /* per item (cap + 1) */
    sap_grid_cell *cell; /* open addressing, mask + 1 buckets (>= 2 (cap + 1)) */
    uint32_t mask;
    bool on;                         /* made, and kept up to date */
    uint64_t levels;                 /* bit l - SAP_GRID_LMIN: level l has members */
    int floor;                       /* the least level: smaller items join it (the most held at the build) */
    int32_t count[SAP_GRID_LEVELS];  /* members per level */
    double ext[SAP_GRID_LEVELS];     /* upper bound on the members' extent per level */
    int64_t idle_moves;              /* moves kept up with since the last query through the grid */
    int32_t huge;                    /* first huge item, -1 */
    int huge_n;
} sap_grid;

/* Per-item storage: one cq_alloc block sized by the item capacity. */
typedef struct sap_items {
    sap_item *item;
    cq_aabb *next;             /* a moved dynamic's pending box (the sweep's scratch in cq__sap_refresh) */
    int32_t (*pos)[6];         /* endpoint indices in dyn or sta, [axis * 2 + is_max] */
    int32_t (*cur)[6];         /* a dynamic's cursors: static endpoints ordered before each endpoint */
    int32_t *adj;              /* the item's first pair slot, -1 */
    int32_t *moved, *moved_at; /* moved items and each one's index there (moved: the sweep's scratch) */
    int32_t *fresh, *fresh_at; /* SAP_FRESH items and each one's index there */
    int32_t *active, *active_at; /* the sweep's open intervals and each one's index there */
    int32_t *staged, *staged_at; /* staged dynamics and each one's index there */
    sap_ep *dyn[3], *sta[3];   /* sorted endpoints per axis, dynamic and static */
    sap_ep *tmp;               /* scratch for sorting and merging endpoints, and for the sweep */
    sap_grid_node *grid_node;  /* the query grid's storage (s->grid), carved here so it never allocates */
    sap_grid_cell *grid_cell;
    uint32_t grid_mask;
} sap_items;

/* Pair storage: one cq_alloc block sized by the pair capacity. */
typedef struct sap_pairs {
    sap_pair *pair;  /* the slots */
    int32_t *hash;   /* open addressing on the key: slot or -1; size hmask + 1 */
    sap_ref *list;   /* the live pairs: list_n entries, the first sorted_n sorted by key, holes among them */
    int32_t *added;  /* slots of the pairs made in this epoch */
    sap_ref *removed; /* pairs dropped in this epoch (all made before it) */
    sap_ref *spare;  /* scratch; swaps with list when the list is sorted */
} sap_pairs;

struct cq_sap {
    int cap;       /* ids below it have storage */
    int hi;        /* ids below it may be alive (bounds the scans) */
    size_t items_size;
    void *items_block;
    sap_items it;
    int ndyn, nsta; /* endpoints per axis in it.dyn / it.sta, dead ones included */
    int dead;       /* dead endpoints per axis in it.dyn */
    int staged_n;
    bool sta_dirty; /* a static was inserted, removed or moved */
    sap_grid grid;  /* the fresh dynamics' queries (sap_grid.c) */
    int moved_n, fresh_n;
    /* Upper bounds on the extent per axis of items with finite bounds
     * there (dynamics, statics): a query for a box's partners scans the
     * endpoints within that distance of it. Items with an infinite bound
     * sit at the arrays' ends and are taken from there. */
    double ext_dyn[3], ext_sta[3];
    double bulk_ratio; /* SAP_BULK_RATIO; a test sets 0 (always merge) or INFINITY (never) */

    int pcap; /* pair slots */
    uint32_t hmask;
    size_t pairs_size;
    void *pairs_block;
    sap_pairs pr;
    int free_head; /* first free slot, -1 */
    /* The pair list costs O(changes) an update, not a pass over every
     * pair: a new pair is appended, a dropped one leaves a hole, and the
     * list is sorted (holes out, the appended merged in) once the changes
     * pass a quarter of it, when it is full, or when a reader asks
     * (cq__sap_pairs_sort). lcap: list_n <= lcap. */
    int live_n, list_n, sorted_n, holes, lcap;
    int added_n, removed_n;

    uint64_t epoch; /* advances at the first mutation after an update */
    bool closed;    /* an update finished and no mutation followed */
    bool incomplete; /* a pair could not be stored: the next update recomputes all */
    sap_held starts, ends; /* crossings held back by the re-sort */
    cq_sap_stats stats;
};

/* Key order of endpoints: by value, a min before a max at equal values so
 * that touching intervals overlap. */
static inline bool sap_less(sap_ep x, sap_ep y)
{
    return x.v < y.v || (x.v == y.v && !(x.tag & 1u) && (y.tag & 1u));
}

static inline int sap_owner(uint32_t tag) { return (int)(tag >> 1); }

/* An endpoint whose item was removed, or whose static moved, belongs to
 * the sentinel id cap, never alive (flags 0, no pairs): whatever walks the
 * arrays may meet it and finds no pair; compaction drops it. It keeps its
 * min/max bit, so the arrays stay sorted. */
static inline uint32_t sap_dead_tag(int cap, uint32_t tag) { return (uint32_t)cap * 2u + (tag & 1u); }
static inline bool sap_is_dead(int cap, uint32_t tag) { return (tag >> 1) == (uint32_t)cap; }

/* The endpoint of box on axis (0..2), the max when is_max. */
static inline double sap_bound(const cq_aabb *box, int axis, int is_max)
{
    return cq_comp(is_max ? box->max : box->min, axis);
}

/* Whether the pair {i, j} belongs in the set: two live items, not both
 * static, filters meeting both ways, boxes overlapping (touching counts).
 * Every test is made and the results and-ed, without a branch: a re-sort
 * judges many crossings, most fail one test or another, and which one
 * fails is data the branch predictor cannot learn. */
static inline bool sap_truth(const cq_sap *s, int i, int j)
{
    const sap_items *it = &s->it;
    const sap_item *a = &it->item[i], *b = &it->item[j];
    unsigned both = a->flags & b->flags;
    return cq_aabb_overlap_flat(&a->box, &b->box) & (i != j) & ((both & SAP_ALIVE) != 0) &
           ((both & SAP_STATIC) == 0) & ((a->layer & b->mask) != 0) & ((b->layer & a->mask) != 0);
}

/* Takes n elements of size bytes from offset *at of base (64-byte aligned),
 * so one allocation holds many arrays; with base NULL it only measures. */
static inline void *sap_carve(char *base, size_t *at, size_t n, size_t size)
{
    size_t start = (*at + 63) & ~(size_t)63;
    *at = start + n * size;
    return base ? base + start : NULL;
}

/* sap_pairs.c */
/* Allocates pair storage for pcap slots (s->pcap and s->pr set); CQ_ENO_MEMORY. */
int cq__sap_pairs_init(cq_sap *s, int pcap);
/* The slot of pair {a, b} (a < b), or -1. */
int cq__sap_pair_find(const cq_sap *s, int a, int b);
/* Stores {i, j} if it holds (sap_truth) and is not stored yet; grows the
 * pair storage when full, and sets s->incomplete if that fails. */
void cq__sap_pair_begin(cq_sap *s, int i, int j);
/* Drops {i, j} if it is stored. */
void cq__sap_pair_end(cq_sap *s, int i, int j);
/* Drops every pair of item i that no longer holds (all of them once i is not alive). */
void cq__sap_pair_prune(cq_sap *s, int i);
/* Ends an update's pair changes: sorts the removed list (O(r log r)), and
 * the pair list only when its changes since its last sort pass a quarter
 * of it (amortised O(1) a change). */
void cq__sap_pairs_finish(cq_sap *s);
/* Clears the added marks the last update left in the list (at the first
 * mutation after it: the reports are done with), O(pairs it added). */
void cq__sap_pairs_unmark(cq_sap *s);

/* sap.c */
/* Adds item id to the fresh list (its pairs are recomputed by the update). */
void cq__sap_mark_fresh(cq_sap *s, int id);
/* Raises the extent bounds (ext, per axis) to cover box. */
void cq__sap_cover_extent(double ext[3], const cq_aabb *box);

/* sap_sort.c */
/* How many of e[0..n) sort before x. */
int cq__sap_lower_bound(const sap_ep *e, int n, sap_ep x);
/* Sets dynamic id's cursors into the static arrays from its box. */
void cq__sap_set_cursors(cq_sap *s, int id);
/* Sorts a[0..n) through tmp (n elements of scratch). */
void cq__sap_ep_sort(sap_ep *a, int n, sap_ep *tmp);
/* Drops dead endpoints from the dynamic arrays once they are many (all, force). */
void cq__sap_compact_dyn(cq_sap *s, bool force);
/* Rebuilds the static arrays (dead dropped, unplaced statics placed) and every dynamic's cursors. */
void cq__sap_rebuild_static(cq_sap *s);
/* Stages the new dynamics of the fresh list, or places them all (staged
 * ones too) in the dynamic arrays once the staging list is full. */
void cq__sap_place_dyn(cq_sap *s);
/* Places every staged dynamic in the dynamic arrays, with cursors. */
void cq__sap_flush_staged(cq_sap *s);
/* Judges every pair of a moved item with a staged one (the re-sort does
 * not see staged items); flushes the staging list instead if that is
 * dearer. Before the moves are applied. */
void cq__sap_stage_moves(cq_sap *s);
/* Re-sorts the moved dynamics' endpoints, updating pairs on every crossing;
 * a mass move is handed to cq__sap_bulk_moves instead. */
void cq__sap_apply_moves(cq_sap *s);

/* sap_bulk.c */
/* Whether the recorded moves would cost the insertion sort more than
 * merging them in sorted (an estimate from a sample of them). */
bool cq__sap_moves_are_mass(const cq_sap *s);
/* Applies the moves by pulling the moved endpoints out, sorting them and
 * merging them back; the moved items become fresh, so cq__sap_refresh finds
 * their pairs (a pair that holds before and after keeps its slot). */
void cq__sap_bulk_moves(cq_sap *s);
/* Recomputes the dynamic extent bounds exactly. */
void cq__sap_measure_dyn_extents(cq_sap *s);

/* sap_grid.c */
/* Makes the grid if it is off and the world is large enough for it;
 * whether a fresh dynamic may be queried through it. */
bool cq__sap_grid_ready(cq_sap *s);
/* Offers item i every grid member whose cell its box may meet
 * (cq__sap_pair_begin); returns the cost (cells and members visited), or
 * -1 with nothing offered when the box spans too many cells (the arrays
 * must answer). Needs cq__sap_grid_ready. */
int cq__sap_grid_query(cq_sap *s, int i);
/* Before the moves are applied: puts moved items (at their pending boxes)
 * and new dynamics in their cells, while the grid is on. */
void cq__sap_grid_sync(cq_sap *s);
/* Takes item id out of the grid (a remove). */
void cq__sap_grid_unlink(cq_sap *s, int id);
/* Turns the grid off (the item storage moved); the next query makes it again. */
void cq__sap_grid_drop(cq_sap *s);

/* sap_refresh.c */
/* Makes every pair with at least one fresh item match sap_truth. */
void cq__sap_refresh(cq_sap *s);

#endif
