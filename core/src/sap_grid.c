/* The query grid: a hashed grid of levels over the dynamic items' boxes,
 * so that a new item's pairs are found by looking in the few cells its box
 * meets instead of along a sorted axis. A query along an axis scans every
 * item whose extent on that axis meets the box, a slab holding O(n^(2/3))
 * items in a world of constant density (700 at 60,000 boxes, 30 µs an
 * insert); the grid visits a handful of cells and their few members.
 *
 * An item of extent e (its widest axis) belongs to level l, the least with
 * 2^l >= e, and lies in one cell of side 2^(l+1) there: the one holding its
 * box's min corner. A member of level l whose min lies in cell c can only
 * meet a box B if c lies between floor((B.min - ext_l) / 2^(l+1)) and
 * floor(B.max / 2^(l+1)) on each axis, ext_l being the widest member of the
 * level: a box of its level's size meets about two cells per axis. Items
 * too large, too far out, or not finite sit in one list every query reads.
 *
 * The grid is an accelerator only: it is made on the first query that can
 * use it, kept up to date by every insert, remove and move while it is on,
 * and dropped when the item storage grows or when it has kept up with many
 * moves and answered nothing (a world that only moves pays nothing for it); a query it cannot answer
 * cheaply (a box spanning many cells, many huge items) returns false and
 * the caller scans the sorted arrays instead, so answers never depend on it.
 * Its storage is carved with the items' (sap.c): nothing here allocates.
 *
 * A query's cost is its cache misses, the table and the items being out
 * of the cache in a large world: it reads the buckets of every cell first
 * (a column's cells sit in neighbouring buckets, one line), then the
 * members' nodes, each holding its box in floats rounded outwards, and
 * only for a member whose box may meet the query's the item itself. */
#include <math.h>
#include <string.h>

#include "sap_internal.h"

/* Cells a query may visit before the sorted arrays are the cheaper way. */
#define GRID_MAX_CELLS 64
/* Moves of every dynamic the grid keeps up with, unused, before it is dropped. */
#define GRID_IDLE_FRAMES 8
/* Cell coordinates stay within +-2^30 (room for the -1 and +1 of a query). */
#define GRID_COORD_MAX 1073741824.0

static int level_index(int l) { return l - SAP_GRID_LMIN; }

/* The level of an extent, or SAP_GRID_LMAX + 1 when it is too large (or
 * not finite). */
static int level_of(double e)
{
    if (!(e <= ldexp(1.0, SAP_GRID_LMAX)))
        return SAP_GRID_LMAX + 1;
    if (e <= ldexp(1.0, SAP_GRID_LMIN))
        return SAP_GRID_LMIN;
    int k;
    double m = frexp(e, &k); /* e = m 2^k, m in [0.5, 1) */
    return m == 0.5 ? k - 1 : k;
}

static double widest(const cq_aabb *b)
{
    return fmax(b->max.x - b->min.x, fmax(b->max.y - b->min.y, b->max.z - b->min.z));
}

/* 2^-(l+1), exactly (a normal double for every level): v times it is
 * v / 2^(l+1) rounded as ldexp rounds it, and costs no call. */
static double inv_side(int l)
{
    uint64_t bits = (uint64_t)(1023 - (l + 1)) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* floor(v / 2^(l+1)) into *c; false when out of range (or not finite). */
static bool coord(double v, int l, int32_t *c)
{
    double x = floor(v * inv_side(l));
    if (!(x >= -GRID_COORD_MAX && x <= GRID_COORD_MAX))
        return false;
    *c = (int32_t)x;
    return true;
}

/* The cell of a box: its level (at least the floor) and its min corner's
 * cell; false: a huge item. */
static bool key_of(const sap_grid *g, const cq_aabb *b, sap_grid_key *k)
{
    int l = level_of(widest(b));
    k->level = l > g->floor ? l : g->floor;
    return l <= SAP_GRID_LMAX && coord(b->min.x, k->level, &k->x) && coord(b->min.y, k->level, &k->y) &&
           coord(b->min.z, k->level, &k->z);
}

static bool same_key(const sap_grid_key *a, const sap_grid_key *b)
{
    return a->x == b->x && a->y == b->y && a->z == b->z && a->level == b->level;
}

static sap_grid_key node_key(const sap_grid_node *n) { return (sap_grid_key){n->x, n->y, n->z, n->level}; }

static void set_key(sap_grid_node *n, const sap_grid_key *k)
{
    n->x = k->x;
    n->y = k->y;
    n->z = k->z;
    n->level = (int16_t)k->level;
}

/* The float next to f towards -inf (down) or +inf; f finite. */
static float step(float f, bool down)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (f == 0)
        u = down ? 0x80000001u : 1u; /* the least subnormal of the sign */
    else
        u = (f > 0) == down ? u - 1 : u + 1;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The node's float box: each bound rounded outwards, so it holds box
 * (whose bounds are finite: a member of a cell). */
static void set_box(sap_grid_node *n, const cq_aabb *box)
{
    for (int a = 0; a < 3; a++) {
        double lo = cq_comp(box->min, a), hi = cq_comp(box->max, a);
        float fl = (float)lo, fh = (float)hi;
        n->lo[a] = (double)fl > lo ? step(fl, true) : fl;
        n->hi[a] = (double)fh < hi ? step(fh, false) : fh;
    }
}

/* A column's hash plus z: cells next to each other on z sit in buckets
 * next to each other, so the two or three a query visits per column are
 * mostly one cache line (the table of a large world is out of the cache). */
static uint32_t hash_key(const sap_grid_key *k)
{
    uint64_t h = (uint64_t)(uint32_t)k->x * 0x9E3779B97F4A7C15u;
    h ^= (uint64_t)(uint32_t)k->y * 0xC2B2AE3D27D4EB4Fu;
    h ^= (uint64_t)(uint32_t)k->level * 0x27D4EB2F165667C5u;
    return (uint32_t)(h >> 32) + (uint32_t)k->z;
}

/* The bucket of the cells of hash h, or the empty one where it would go. */
static uint32_t find_bucket(const sap_grid *g, uint32_t h)
{
    uint32_t b = h & g->mask;
    while (g->cell[b].head >= 0 && g->cell[b].hash != h)
        b = (b + 1) & g->mask;
    return b;
}

/* Linear probing delete by backward shift: no tombstones. */
static void drop_bucket(sap_grid *g, uint32_t hole)
{
    uint32_t m = g->mask;
    for (uint32_t j = (hole + 1) & m; g->cell[j].head >= 0; j = (j + 1) & m) {
        uint32_t home = g->cell[j].hash & m;
        if (((j - home) & m) >= ((j - hole) & m)) {
            g->cell[hole] = g->cell[j];
            hole = j;
        }
    }
    g->cell[hole].head = -1;
}

/* Puts id at the head of a list whose head is *head. */
static void push(sap_grid *g, int32_t *head, int id)
{
    sap_grid_node *n = &g->node[id];
    n->prev = -1;
    n->next = *head;
    if (*head >= 0)
        g->node[*head].prev = id;
    *head = id;
}

static void link_item(cq_sap *s, int id, const cq_aabb *box)
{
    sap_grid *g = &s->grid;
    sap_grid_node *n = &g->node[id];
    sap_grid_key k;
    if (!key_of(g, box, &k)) {
        n->where = SAP_GRID_HUGE;
        push(g, &g->huge, id);
        g->huge_n++;
        return;
    }
    n->where = SAP_GRID_CELL;
    set_key(n, &k);
    set_box(n, box);
    uint32_t h = hash_key(&k), b = find_bucket(g, h);
    g->cell[b].hash = h;
    push(g, &g->cell[b].head, id);
    int li = level_index(k.level);
    g->count[li]++;
    g->levels |= 1ull << li;
    double e = widest(box);
    g->ext[li] = e > g->ext[li] ? e : g->ext[li];
}

void cq__sap_grid_unlink(cq_sap *s, int id)
{
    sap_grid *g = &s->grid;
    sap_grid_node *n = &g->node[id];
    if (!g->on || n->where == SAP_GRID_NONE)
        return;
    if (n->next >= 0)
        g->node[n->next].prev = n->prev;
    if (n->prev >= 0) {
        g->node[n->prev].next = n->next;
    } else if (n->where == SAP_GRID_HUGE) {
        g->huge = n->next;
    } else {
        sap_grid_key k = node_key(n);
        uint32_t b = find_bucket(g, hash_key(&k));
        g->cell[b].head = n->next;
        if (n->next < 0)
            drop_bucket(g, b);
    }
    if (n->where == SAP_GRID_HUGE) {
        g->huge_n--;
    } else {
        int li = level_index(n->level);
        if (--g->count[li] == 0)
            g->levels &= ~(1ull << li);
    }
    n->where = SAP_GRID_NONE;
}

static bool is_dynamic(const cq_sap *s, int id)
{
    return (s->it.item[id].flags & (SAP_ALIVE | SAP_STATIC)) == SAP_ALIVE;
}

/* The level most live dynamics belong to: smaller ones join it, as a
 * query of a box of that size would visit many cells of a finer level. */
static int common_level(const cq_sap *s)
{
    int32_t n[SAP_GRID_LEVELS] = {0}, best = 0;
    for (int id = 0; id < s->hi; id++) {
        int l = is_dynamic(s, id) ? level_of(widest(&s->it.item[id].box)) : SAP_GRID_LMAX + 1;
        if (l <= SAP_GRID_LMAX)
            n[level_index(l)]++;
    }
    for (int li = 1; li < SAP_GRID_LEVELS; li++)
        best = n[li] > n[best] ? li : best;
    return best + SAP_GRID_LMIN;
}

/* Makes the grid over every live dynamic at its box. */
static void build(cq_sap *s)
{
    sap_grid *g = &s->grid;
    g->floor = common_level(s);
    for (uint32_t b = 0; b <= g->mask; b++)
        g->cell[b].head = -1;
    memset(g->count, 0, sizeof g->count);
    memset(g->ext, 0, sizeof g->ext);
    g->levels = 0;
    g->huge = -1;
    g->huge_n = 0;
    g->idle_moves = 0;
    g->on = true;
    for (int id = 0; id <= s->cap; id++)
        g->node[id].where = SAP_GRID_NONE;
    for (int id = 0; id < s->hi; id++)
        if (is_dynamic(s, id))
            link_item(s, id, &s->it.item[id].box);
    s->stats.grid_builds++;
}

/* Moves id to the cell of box unless it is there already (a small step
 * mostly is: one key computed and compared, the float box rewritten). */
static void relink(cq_sap *s, int id, const cq_aabb *box)
{
    sap_grid_node *n = &s->grid.node[id];
    sap_grid_key k, at = node_key(n);
    if (n->where == SAP_GRID_CELL && key_of(&s->grid, box, &k) && same_key(&k, &at) &&
        widest(box) <= s->grid.ext[level_index(k.level)]) {
        set_box(n, box);
        return;
    }
    cq__sap_grid_unlink(s, id);
    link_item(s, id, box);
}

void cq__sap_grid_sync(cq_sap *s)
{
    if (!s->grid.on)
        return;
    /* A world that moves and takes no new items stops paying for the
     * grid: past GRID_IDLE_FRAMES moves of every dynamic (more than its
     * making costs) it is dropped, and made again by the next query. */
    s->grid.idle_moves += s->moved_n;
    if (s->grid.idle_moves > (int64_t)GRID_IDLE_FRAMES * (s->ndyn / 2 + 1)) {
        cq__sap_grid_drop(s);
        return;
    }
    const sap_items *it = &s->it;
    for (int k = 0; k < s->moved_n; k++)
        relink(s, it->moved[k], &it->next[it->moved[k]]);
    /* New, or staged and moved (their box changes at once), or with a new
     * filter: not one moved and placed, whose box is the pending one,
     * linked above (the old box here would put it back in its old cell). */
    for (int k = 0; k < s->fresh_n; k++)
        if (is_dynamic(s, it->fresh[k]) && !(it->item[it->fresh[k]].flags & SAP_MOVED))
            relink(s, it->fresh[k], &it->item[it->fresh[k]].box);
}

void cq__sap_grid_drop(cq_sap *s) { s->grid.on = false; }

/* One level's cell range of a query of box; false when out of range. */
typedef struct cell_range {
    int32_t lo[3], hi[3];
    int level;
} cell_range;

static bool range_of(const sap_grid *g, int l, const cq_aabb *box, cell_range *r, long *cells)
{
    double e = g->ext[level_index(l)];
    long n = 1;
    r->level = l;
    for (int a = 0; a < 3; a++) {
        double lo = cq_comp(box->min, a);
        /* lo - e, lowered past the rounding of the extents and of the
         * subtraction: a cell more visited now and then, none missed. */
        double t = lo - e - (fabs(lo) + e) * 0x1p-40;
        if (!coord(t, l, &r->lo[a]) || !coord(cq_comp(box->max, a), l, &r->hi[a]))
            return false;
        n *= (long)r->hi[a] - r->lo[a] + 1;
        if (n > GRID_MAX_CELLS)
            return false;
    }
    *cells += n;
    return *cells <= GRID_MAX_CELLS;
}

/* Offers every member of the list at head to i. */
static int offer_list(cq_sap *s, int i, int head)
{
    int n = 0;
    for (int j = head; j >= 0; j = s->grid.node[j].next, n++)
        cq__sap_pair_begin(s, i, j);
    return n;
}

/* Offers i the members of the cell list at head whose float box meets
 * box (touching counts, as in the pair test): the others cannot pair. */
static int offer_cell(cq_sap *s, int i, int head, const cq_aabb *box)
{
    const sap_grid_node *node = s->grid.node;
    int n = 0;
    for (int j = head; j >= 0; j = node[j].next, n++) {
        const sap_grid_node *m = &node[j];
        if ((m->lo[0] <= box->max.x) & (box->min.x <= m->hi[0]) & (m->lo[1] <= box->max.y) &
            (box->min.y <= m->hi[1]) & (m->lo[2] <= box->max.z) & (box->min.z <= m->hi[2]))
            cq__sap_pair_begin(s, i, j);
    }
    return n;
}

static void prefetch_range(const sap_grid *g, const cell_range *r)
{
    sap_grid_key k = {.level = r->level, .z = r->lo[2]};
    for (k.x = r->lo[0]; k.x <= r->hi[0]; k.x++)
        for (k.y = r->lo[1]; k.y <= r->hi[1]; k.y++)
            __builtin_prefetch(&g->cell[hash_key(&k) & g->mask]);
}

/* The first members of the range's occupied cells into heads (their nodes
 * prefetched); returns how many. */
static int range_heads(const sap_grid *g, const cell_range *r, int32_t *heads)
{
    int n = 0;
    sap_grid_key k = {.level = r->level};
    for (k.x = r->lo[0]; k.x <= r->hi[0]; k.x++)
        for (k.y = r->lo[1]; k.y <= r->hi[1]; k.y++)
            for (k.z = r->lo[2]; k.z <= r->hi[2]; k.z++) {
                int head = g->cell[find_bucket(g, hash_key(&k))].head;
                if (head >= 0) {
                    __builtin_prefetch(&g->node[head]);
                    heads[n++] = head;
                }
            }
    return n;
}

bool cq__sap_grid_ready(cq_sap *s)
{
    if (!s->grid.on && s->ndyn >= SAP_GRID_MIN_ENDPOINTS)
        build(s);
    return s->grid.on && s->grid.huge_n <= SAP_GRID_MAX_HUGE;
}

/* The cell ranges of box at every level in use into r; returns how many,
 * or -1 when the query would visit more than GRID_MAX_CELLS cells. */
static int ranges_of(const sap_grid *g, const cq_aabb *box, cell_range *r, long *cells)
{
    int n = 0;
    for (uint64_t left = g->levels; left; left &= left - 1, n++)
        if (!range_of(g, __builtin_ctzll(left) + SAP_GRID_LMIN, box, &r[n], cells))
            return -1;
    return n;
}

int cq__sap_grid_query(cq_sap *s, int i)
{
    const sap_grid *g = &s->grid;
    const cq_aabb *box = &s->it.item[i].box;
    cell_range r[SAP_GRID_LEVELS];
    int32_t heads[GRID_MAX_CELLS];
    long cells = 0;
    int nr = ranges_of(g, box, r, &cells), nh = 0;
    if (nr < 0)
        return -1;
    s->grid.idle_moves = 0;
    for (int k = 0; k < nr; k++) /* the columns' first lines, all at once */
        prefetch_range(g, &r[k]);
    for (int k = 0; k < nr; k++)
        nh += range_heads(g, &r[k], heads + nh);
    int cost = (int)cells + offer_list(s, i, g->huge);
    for (int k = 0; k < nh; k++)
        cost += offer_cell(s, i, heads[k], box);
    return cost;
}
