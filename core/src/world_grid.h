/* Internal: the grid that bounds a world's broadphase pairs from above
 * (world_grid.c), so that the pair cap (world_paircap.c) can let a batch
 * through without counting its pairs.
 *
 * The bound is a sum of per-cell pair counts in which every overlapping
 * pair is counted at least once (world_grid.c says how). The table stores
 * no keys, only four counters per slot, and the sum is kept as
 * memberships change: a batch costs what its boxes that change cells
 * cost, and a small step rarely changes any. docs/CORE.md (The pair cap)
 * says how tight the bound is and what a miss costs. */
#ifndef CQ_WORLD_GRID_H
#define CQ_WORLD_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aabb.h"

#if defined(__SSE2__) && !defined(CQ_NO_SIMD)
#include <emmintrin.h>
#endif

enum {
    GRID_LO = -32,     /* the finest level: cells of side 2^-32 */
    GRID_LEVELS = 64,  /* levels GRID_LO .. GRID_LO + 63, one bit each */
    GRID_WIDE = -1,    /* grid_rec.level of a box counted as meeting every other */
    GRID_NONE = -2,    /* grid_rec.level of no box (a free slot, a removal) */
    GRID_CELLS_MAX = 16, /* memberships per box, on average, past which no grid is kept */
};

/* Where one broadphase box sits. Two boxes with equal records have the
 * same memberships, so a move that keeps its record changes nothing. */
typedef struct grid_rec {
    int32_t lo[3]; /* the cell of the min corner at the box's own level */
    int8_t level;  /* level index (level GRID_LO + index), GRID_WIDE or GRID_NONE */
    uint8_t span;  /* bit k: the box reaches the next cell on axis k */
    bool is_static;
} grid_rec;

/* What a world keeps per slot for its grid: the record, and for a box
 * shape its half extents, so that the check of a batch of moves finds
 * each moved box's box (the same bits as cq__shape_aabb) without reading
 * the slot's entry, which the commit reads anyway. */
typedef struct grid_keep {
    grid_rec rec;
    cq_vec3 half; /* x < 0: not a box */
} grid_keep;

/* One table slot: natives and projections, dynamic and static. */
typedef struct grid_slot {
    uint16_t n[4]; /* natives dynamic and static, projections dynamic and static: counter_of's order */
} grid_slot;

typedef struct world_grid {
    grid_slot *table; /* slots entries, a power of two; NULL: no table */
    size_t slots;
    long cells;       /* memberships counted in the table */
    long long sum;    /* the table's part of the bound */
    int32_t level_count[GRID_LEVELS];
    uint64_t natives; /* bit l: level_count[l] > 0, kept with the counts (a PUT asks twice) */
    uint64_t present; /* levels the table was filled for */
    long items, dynamics, wide_d, wide_s;
    bool overflow;    /* a counter passed its range: the sum bounds nothing */
} world_grid;

/* The record of a broadphase box, at the least level of present at or
 * above the box's own (its own when present has none): a coarser level's
 * cells hold the box as well, and two records meet at the coarser of
 * their levels whichever that is, so a box of a level the grid lacks
 * joins one it has instead of making the grid again (O(world)). */
grid_rec cq__world_grid_rec_of(const cq_aabb *box, bool is_static, uint64_t present);

/* Whether the cells of r (at its level) hold all of box: then r may stay
 * box's record. The bound needs only that each record's cells cover its
 * box (a pair's common point is then in a cell both are entered in, at
 * the coarser of their two levels), so a box that moves, shrinks or grows
 * within its cells keeps its record and costs the table nothing; it gets
 * its own record when it leaves them. */
static inline bool cq__world_grid_rec_covers(const grid_rec *r, const cq_aabb *box);

/* Whether two records have the same memberships. */
bool cq__world_grid_rec_same(const grid_rec *a, const grid_rec *b);

/* Counts r (sign +1) or takes it out (-1): levels, items, wide boxes. */
void cq__world_grid_count(world_grid *g, const grid_rec *r, int sign);

/* The levels with a native box, from the counts: O(1). */
uint64_t cq__world_grid_levels(const world_grid *g);

/* The cells r is entered in at the levels present. */
long cq__world_grid_rec_cells(const grid_rec *r, uint64_t present);

/* An empty table of at least cells slots for the levels present; false
 * when out of memory (g unchanged). */
bool cq__world_grid_table_alloc(world_grid *g, long cells, uint64_t present);

/* Whether a and b are entered in a common cell (or either is wide): so a
 * pair of them is counted in the bound. For tests. */
bool cq__world_grid_recs_meet(const grid_rec *a, const grid_rec *b, uint64_t present);

/* Enters r in the table (sign +1) or takes it out (-1), keeping the sum. */
void cq__world_grid_enter(world_grid *g, const grid_rec *r, int sign);

/* Frees the table; g is empty after. */
void cq__world_grid_free(world_grid *g);

/* The bound: the table's sum and the wide boxes' share. */
long long cq__world_grid_total(const world_grid *g);

/* Memberships waiting to be entered in a grid's table, in order, each
 * applied GRID_AHEAD memberships after its slot was prefetched: the table
 * outgrows the cache and the cells of the records a batch changes scatter
 * over it, so applying each at once waited for a miss per membership. */
enum { GRID_AHEAD = 16 };
typedef struct grid_queue {
    world_grid *g;
    int sign;   /* of the memberships being queued */
    unsigned n; /* queued so far; the last GRID_AHEAD (at most) wait in ring */
    struct {
        uint32_t slot;
        int8_t counter, sign;
    } ring[GRID_AHEAD];
} grid_queue;

/* Makes a box's record from into to in q->g: its counts at once, and
 * through q in the table only the memberships one has and the other
 * lacks. The levels present stay as they are (the caller checks them); a
 * counter that would leave its range sets overflow. Changing to back into
 * from undoes it exactly when no overflow was set. The table is whole once
 * q is flushed. */
void cq__world_grid_change(grid_queue *q, const grid_rec *from, const grid_rec *to);

/* Enters what q still holds; q is empty after. */
void cq__world_grid_flush(grid_queue *q);

/* 2^e for e within the normal range, exactly, without a libm call. */
static inline double cq__grid_pow2(int e)
{
    uint64_t bits = (uint64_t)(1023 + e) << 52;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Inline: a batch of moves asks it of every moved box. The cells' bounds
 * are exact (a power of two times an integer below 2^31), and a NaN
 * coordinate is covered by none. */
static inline bool cq__world_grid_rec_covers(const grid_rec *r, const cq_aabb *box)
{
    if (r->level < 0)
        return false;
    double c = cq__grid_pow2(r->level + GRID_LO);
    bool in = box->min.z >= r->lo[2] * c && box->max.z < (r->lo[2] + (r->span >> 2 & 1) + 1.0) * c;
#if defined(__SSE2__) && !defined(CQ_NO_SIMD)
    /* x and y in the two lanes: half the conversions, products and tests
     * (each move of a tick is asked); lo + span + 1 fits an int32, as
     * |lo| <= 2^30 */
    static const int32_t up[4][4] = {{1, 1, 0, 0}, {2, 1, 0, 0}, {1, 2, 0, 0}, {2, 2, 0, 0}};
    __m128i lo = _mm_loadl_epi64((const __m128i *)r->lo);
    __m128d cc = _mm_set1_pd(c);
    __m128d first = _mm_mul_pd(_mm_cvtepi32_pd(lo), cc);
    __m128d past = _mm_mul_pd(_mm_cvtepi32_pd(_mm_add_epi32(lo, _mm_loadu_si128((const __m128i *)up[r->span & 3]))), cc);
    __m128d ok = _mm_and_pd(_mm_cmpge_pd(_mm_loadu_pd(&box->min.x), first), _mm_cmplt_pd(_mm_loadu_pd(&box->max.x), past));
    return in && _mm_movemask_pd(ok) == 3;
#else
    in &= box->min.x >= r->lo[0] * c && box->max.x < (r->lo[0] + (r->span & 1) + 1.0) * c;
    in &= box->min.y >= r->lo[1] * c && box->max.y < (r->lo[1] + (r->span >> 1 & 1) + 1.0) * c;
    return in;
#endif
}

#endif
