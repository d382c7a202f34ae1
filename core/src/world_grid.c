/* The pair bound's grid (world_grid.h says what it bounds).
 *
 * A box of extent e (its widest side) is native to level l, the least
 * with 2^l >= e, and so meets at most two cells of side 2^l per axis.
 * Two overlapping boxes share a cell at the level of the larger one,
 * where the larger is counted as native and the smaller, entered at every
 * coarser level that has natives, as projected. Per cell, the pairs among
 * natives and between natives and projections (static with static left
 * out) are summed: each overlapping pair is counted in at least one cell,
 * and cells whose hashes share a slot only add to the sum. Boxes wider
 * than the coarsest level, or too far out for exact cell indices (planes,
 * huge meshes), are counted as meeting every other. */
#include "world_grid.h"

#include <math.h>
#include <string.h>

#include "cq/alloc.h"

static double pow2(int e) { return cq__grid_pow2(e); }

/* floor(v) as an integer, for |v| < 2^62. */
static int64_t floor_index(double v)
{
    int64_t i = (int64_t)v;
    return i - (v < (double)i);
}

/* floor(x / 2^s) for s >= 0, without shifting a negative value. */
static int64_t shift_floor(int64_t x, int s) { return x >= 0 ? x >> s : ~(~x >> s); }

/* The level of extent e (0 < e < 2^31): the least l with 2^l >= e, at
 * least GRID_LO. Read off the exponent: 2^(l-1) <= e < 2^l. */
static int extent_level(double e)
{
    if (!(e > pow2(GRID_LO)))
        return GRID_LO;
    uint64_t bits;
    memcpy(&bits, &e, sizeof bits);
    return (int)(bits >> 52) - 1022;
}

grid_rec cq__world_grid_rec_of(const cq_aabb *box, bool is_static, uint64_t present)
{
    grid_rec r = {.level = GRID_WIDE, .is_static = is_static};
    const double mn[3] = {box->min.x, box->min.y, box->min.z}, mx[3] = {box->max.x, box->max.y, box->max.z};
    /* without branches: the signs of the coordinates are anyone's guess */
    double e = 0, far = 0;
    bool nan = false;
    for (int k = 0; k < 3; k++) {
        double d = mx[k] - mn[k];
        nan |= d != d;
        e = d > e ? d : e;
        far = -mn[k] > far ? -mn[k] : far;
        far = mx[k] > far ? mx[k] : far;
    }
    if (nan || !(e < pow2(GRID_LO + GRID_LEVELS - 1)))
        return r; /* also infinite boxes */
    int l = extent_level(e);
    uint64_t up = present & (~0ull << (l - GRID_LO)); /* the extent < 2^l: two cells per axis at most at l or above */
    l = up ? __builtin_ctzll(up) + GRID_LO : l;
    if (!(far < pow2(l + 30)))
        return r; /* past the cell indices' range */
    double inv = pow2(-l); /* exact products: the cells are exact */
    for (int k = 0; k < 3; k++) {
        r.lo[k] = (int32_t)floor_index(mn[k] * inv);
        r.span |= (uint8_t)((floor_index(mx[k] * inv) > r.lo[k]) << k); /* the extent < 2^l: one more at most */
    }
    r.level = (int8_t)(l - GRID_LO);
    return r;
}

bool cq__world_grid_rec_same(const grid_rec *a, const grid_rec *b)
{
    bool cells = a->span == b->span && a->lo[0] == b->lo[0] && a->lo[1] == b->lo[1] && a->lo[2] == b->lo[2];
    return a->level == b->level && a->is_static == b->is_static && (a->level < 0 || cells);
}

void cq__world_grid_count(world_grid *g, const grid_rec *r, int sign)
{
    if (r->level == GRID_NONE)
        return;
    g->items += sign;
    g->dynamics += r->is_static ? 0 : sign;
    if (r->level == GRID_WIDE)
        *(r->is_static ? &g->wide_s : &g->wide_d) += sign;
    else if ((g->level_count[r->level] += sign) > 0)
        g->natives |= 1ull << r->level;
    else
        g->natives &= ~(1ull << r->level);
}

uint64_t cq__world_grid_levels(const world_grid *g) { return g->natives; }

/* The levels present at or above r's own; none for a wide box or none. */
static uint64_t rec_levels(const grid_rec *r, uint64_t present)
{
    return r->level < 0 ? 0 : present & (~0ull << r->level);
}

/* The cells r meets at level index lv >= its own, per axis. */
static void rec_span(const grid_rec *r, int lv, int64_t lo[3], int64_t hi[3])
{
    int s = lv - r->level;
    if (s == 0) { /* its own level, the first a change visits: no shifts */
        for (int k = 0; k < 3; k++) {
            lo[k] = r->lo[k];
            hi[k] = (int64_t)r->lo[k] + (r->span >> k & 1);
        }
        return;
    }
    for (int k = 0; k < 3; k++) {
        lo[k] = shift_floor(r->lo[k], s);
        hi[k] = shift_floor((int64_t)r->lo[k] + (r->span >> k & 1), s);
    }
}

long cq__world_grid_rec_cells(const grid_rec *r, uint64_t present)
{
    long cells = 0;
    for (uint64_t m = rec_levels(r, present); m; m &= m - 1) {
        int64_t lo[3], hi[3];
        rec_span(r, __builtin_ctzll(m), lo, hi);
        cells += (long)((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1));
    }
    return cells;
}

bool cq__world_grid_recs_meet(const grid_rec *a, const grid_rec *b, uint64_t present)
{
    if (a->level == GRID_WIDE || b->level == GRID_WIDE)
        return true;
    int lv = a->level > b->level ? a->level : b->level;
    if (a->level < 0 || b->level < 0 || !(rec_levels(a, present) >> lv & 1) || !(rec_levels(b, present) >> lv & 1))
        return false;
    int64_t alo[3], ahi[3], blo[3], bhi[3];
    rec_span(a, lv, alo, ahi);
    rec_span(b, lv, blo, bhi);
    bool meet = true;
    for (int k = 0; k < 3; k++)
        meet &= alo[k] <= bhi[k] && blo[k] <= ahi[k];
    return meet;
}

/* The table slot of a cell: a column's hash, mixed so that columns
 * scatter, plus z, so that a box's cells on z (two of its eight at its
 * level) share a line: a new box's memberships wait on half the misses. */
static uint64_t column_hash(int lv, int64_t x, int64_t y)
{
    uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15u ^ (uint64_t)y * 0xc2b2ae3d27d4eb4fu ^
                 (uint64_t)lv * 0x27d4eb2f165667c5u;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93u;
    return h ^ h >> 32;
}

/* The slot of cell z of a column: the column's hash plus z. */
static size_t cell_slot(size_t slots, uint64_t column, int64_t z)
{
    return (size_t)(column + (uint64_t)z) & (slots - 1);
}

/* Which of a slot's counters a membership is: natives first, then projections. */
static int counter_of(const grid_rec *r, int lv) { return (lv == r->level ? 0 : 2) + r->is_static; }

/* A slot with counters (nd, ns, pd, ps) contributes the pairs
 * nd (nd - 1) / 2 + nd (ns + pd + ps) + ns pd (static with static left
 * out); one more membership of kind counter adds the pairs it makes with
 * the slot's others, read before it is counted. So a membership's change
 * costs a few adds, not the whole sum twice (each of a tick's changed
 * records changes about five). */
static long long pairs_with(const grid_slot *s, int counter)
{
    switch (counter) {
    case 0:
        return (long long)s->n[0] + s->n[1] + s->n[2] + s->n[3];
    case 1:
        return (long long)s->n[0] + s->n[2];
    case 2:
        return (long long)s->n[0] + s->n[1];
    default:
        return s->n[0];
    }
}

/* Whether two spans are the same cells. */
static bool span_same(const int64_t lo[3], const int64_t hi[3], const int64_t olo[3], const int64_t ohi[3])
{
    return lo[0] == olo[0] && lo[1] == olo[1] && lo[2] == olo[2] && hi[0] == ohi[0] && hi[1] == ohi[1] &&
           hi[2] == ohi[2];
}

static void enter_one(grid_queue *q, size_t slot, int counter);

/* Queues in q every membership of r that other (NULL: none) does not
 * have, with q's sign. A record and its successor of the same
 * level and kind share their counters cell for cell, so a box that steps
 * into the next cell changes the cells it left and entered, and its
 * coarser projections, which rarely move, not at all. */
static void rec_each_but(const grid_rec *r, const grid_rec *other, grid_queue *q)
{
    uint64_t present = q->g->present;
    size_t slots = q->g->slots;
    bool common = other && other->level == r->level && other->is_static == r->is_static;
    for (uint64_t m = rec_levels(r, present); m; m &= m - 1) {
        int lv = __builtin_ctzll(m);
        int64_t lo[3], hi[3], olo[3] = {1, 1, 1}, ohi[3] = {0, 0, 0}; /* empty unless common */
        rec_span(r, lv, lo, hi);
        if (common) {
            rec_span(other, lv, olo, ohi);
            if (span_same(lo, hi, olo, ohi))
                return; /* and so at every coarser level: each span there is this one's, halved */
        }
        int counter = counter_of(r, lv);
        for (int64_t x = lo[0]; x <= hi[0]; x++) {
            bool x_in = olo[0] <= x && x <= ohi[0];
            for (int64_t y = lo[1]; y <= hi[1]; y++) {
                /* the column's cells other has: z within olo..ohi, none when x or y is outside */
                bool xy_in = x_in && olo[1] <= y && y <= ohi[1];
                int64_t skip_lo = xy_in ? olo[2] : 1, skip_hi = xy_in ? ohi[2] : 0;
                uint64_t column = column_hash(lv, x, y);
                for (int64_t z = lo[2]; z <= hi[2]; z++)
                    if (z < skip_lo || z > skip_hi)
                        enter_one(q, cell_slot(slots, column, z), counter);
            }
        }
    }
}

bool cq__world_grid_table_alloc(world_grid *g, long cells, uint64_t present)
{
    size_t slots = 64;
    while (slots < (size_t)cells)
        slots *= 2;
    grid_slot *t = cq_alloc(slots * sizeof *t);
    if (!t)
        return false;
    memset(t, 0, slots * sizeof *t);
    cq_free(g->table, g->slots * sizeof *g->table);
    g->table = t;
    g->slots = slots;
    g->cells = 0;
    g->sum = 0;
    g->present = present;
    g->overflow = false;
    return true;
}

/* A macro, as in world_batch.h: GCC drops a function that only prefetches. */
#if defined(__GNUC__)
#define grid_prefetch(p) __builtin_prefetch(p)
#else
#define grid_prefetch(p) ((void)(p))
#endif

static void enter_apply(world_grid *g, size_t slot, int counter, int sign)
{
    grid_slot *s = &g->table[slot];
    uint16_t *c = &s->n[counter];
    if (sign > 0 ? *c == UINT16_MAX : *c == 0) {
        g->overflow = true; /* the sum no longer bounds: the owner rebuilds */
        return;
    }
    if (sign > 0) {
        g->sum += pairs_with(s, counter);
        ++*c;
    } else {
        --*c;
        g->sum -= pairs_with(s, counter);
    }
    g->cells += sign;
}

static void enter_one(grid_queue *q, size_t slot, int counter)
{
    unsigned at = q->n++ % GRID_AHEAD;
    if (q->n > GRID_AHEAD)
        enter_apply(q->g, q->ring[at].slot, q->ring[at].counter, q->ring[at].sign);
    grid_prefetch(&q->g->table[slot]);
    q->ring[at].slot = (uint32_t)slot;
    q->ring[at].counter = (int8_t)counter;
    q->ring[at].sign = (int8_t)q->sign;
}

void cq__world_grid_flush(grid_queue *q)
{
    unsigned left = q->n < GRID_AHEAD ? q->n : GRID_AHEAD;
    for (unsigned k = q->n - left; k < q->n; k++) {
        unsigned at = k % GRID_AHEAD;
        enter_apply(q->g, q->ring[at].slot, q->ring[at].counter, q->ring[at].sign);
    }
    q->n = 0;
}

void cq__world_grid_enter(world_grid *g, const grid_rec *r, int sign)
{
    grid_queue q = {.g = g, .sign = sign};
    rec_each_but(r, NULL, &q);
    cq__world_grid_flush(&q);
}

void cq__world_grid_change(grid_queue *q, const grid_rec *from, const grid_rec *to)
{
    world_grid *g = q->g;
    cq__world_grid_count(g, from, -1);
    cq__world_grid_count(g, to, +1);
    /* all the removals first: a counter then never passes the largest
     * value it had, so undoing a change that fitted fits too */
    q->sign = -1;
    rec_each_but(from, to, q);
    q->sign = +1;
    rec_each_but(to, from, q);
}

void cq__world_grid_free(world_grid *g)
{
    cq_free(g->table, g->slots * sizeof *g->table);
    memset(g, 0, sizeof *g);
}

/* The wide boxes' share of the bound: each meets every other. */
static long long wide_pairs(const world_grid *g)
{
    return (long long)g->wide_d * (g->items - 1) + (long long)g->wide_s * g->dynamics;
}

long long cq__world_grid_total(const world_grid *g) { return g->sum + wide_pairs(g); }
