/* The sweep-and-prune's endpoint arrays. Dynamic endpoints are re-sorted
 * by insertion sort: an endpoint that moves swaps with its neighbours, and
 * a min passing another item's max (or a max passing a min) is where an
 * overlap on that axis starts or ends, so the pair set changes only there.
 * Statics sit in arrays of their own that never move; each dynamic endpoint
 * keeps a cursor (how many static endpoints sort before it) and steps it
 * over the static endpoints it passes, with the same events, so a moving
 * dynamic costs the same whether there are ten statics or a million.
 * Infinite extents are +-INFINITY and only ever compared, never subtracted. */
#include <math.h>
#include <string.h>

#include "merge_sort.h"
#include "sap_internal.h"

CQ_MERGE_SORT_DEFINE(ep, sap_ep, sap_less)

void cq__sap_ep_sort(sap_ep *a, int n, sap_ep *tmp) { ep_sort(a, n, tmp); }

/* Sorts e[m..n) and merges it into the sorted e[0..m). */
static void merge_tail(sap_ep *e, int m, int n, sap_ep *tmp)
{
    ep_sort(e + m, n - m, tmp);
    ep_merge(e, m, e + m, n - m, tmp);
    memcpy(e, tmp, (size_t)n * sizeof *e);
}

/* Drops dead endpoints (of sentinel cap) from e[0..n); returns the new count. */
static int drop_dead(sap_ep *e, int n, int cap)
{
    int w = 0;
    for (int r = 0; r < n; r++)
        if (!sap_is_dead(cap, e[r].tag))
            e[w++] = e[r];
    return w;
}

/* Records every endpoint's index after the array was rearranged. */
static void index_axis(const sap_ep *e, int n, int32_t (*pos)[6], int axis)
{
    for (int k = 0; k < n; k++)
        pos[sap_owner(e[k].tag)][axis * 2 + (int)(e[k].tag & 1u)] = k;
}

/* Appends the min and max of every unplaced fresh item of the given kind. */
static int append_fresh(cq_sap *s, sap_ep *e, int n, int axis, uint8_t kind)
{
    for (int k = 0; k < s->fresh_n; k++) {
        int id = s->it.fresh[k];
        if ((s->it.item[id].flags & (SAP_STATIC | SAP_PLACED)) != kind)
            continue;
        e[n++] = (sap_ep){sap_bound(&s->it.item[id].box, axis, 0), (uint32_t)id * 2u};
        e[n++] = (sap_ep){sap_bound(&s->it.item[id].box, axis, 1), (uint32_t)id * 2u + 1u};
    }
    return n;
}

static void mark_placed(cq_sap *s, uint8_t kind)
{
    for (int k = 0; k < s->fresh_n; k++) {
        int id = s->it.fresh[k];
        if ((s->it.item[id].flags & (SAP_STATIC | SAP_PLACED)) == kind)
            s->it.item[id].flags |= SAP_PLACED;
    }
}

/* How many of e[0..n) sort before x. */
int cq__sap_lower_bound(const sap_ep *e, int n, sap_ep x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sap_less(e[mid], x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void cq__sap_set_cursors(cq_sap *s, int id)
{
    for (int k = 0; k < 6; k++) {
        sap_ep x = {sap_bound(&s->it.item[id].box, k >> 1, k & 1), (uint32_t)id * 2u + (uint32_t)(k & 1)};
        s->it.cur[id][k] = cq__sap_lower_bound(s->it.sta[k >> 1], s->nsta, x);
    }
}

void cq__sap_compact_dyn(cq_sap *s, bool force)
{
    if (s->dead == 0 || (!force && s->dead * SAP_DEAD_SHARE <= s->ndyn))
        return;
    int n = 0;
    for (int axis = 0; axis < 3; axis++) {
        n = drop_dead(s->it.dyn[axis], s->ndyn, s->cap);
        index_axis(s->it.dyn[axis], n, s->it.pos, axis);
    }
    s->ndyn = n;
    s->dead = 0;
    cq__sap_measure_dyn_extents(s); /* items left: the bounds may shrink */
}

void cq__sap_rebuild_static(cq_sap *s)
{
    if (!s->sta_dirty)
        return;
    int n = 0;
    for (int axis = 0; axis < 3; axis++) {
        sap_ep *e = s->it.sta[axis];
        int m = drop_dead(e, s->nsta, s->cap);
        n = append_fresh(s, e, m, axis, SAP_STATIC);
        merge_tail(e, m, n, s->it.tmp);
        index_axis(e, n, s->it.pos, axis);
    }
    s->nsta = n;
    mark_placed(s, SAP_STATIC);
    /* Every cursor counts static endpoints, so all of them change. */
    s->ext_sta[0] = s->ext_sta[1] = s->ext_sta[2] = 0;
    for (int id = 0; id < s->hi; id++) {
        uint8_t f = s->it.item[id].flags & (SAP_ALIVE | SAP_PLACED | SAP_STATIC);
        if (f == (SAP_ALIVE | SAP_PLACED))
            cq__sap_set_cursors(s, id);
        else if (f == (SAP_ALIVE | SAP_PLACED | SAP_STATIC))
            cq__sap_cover_extent(s->ext_sta, &s->it.item[id].box);
    }
    s->sta_dirty = false;
    s->stats.static_rebuilds++;
}

/* Whether the query grid holds the staged items and can judge them. */
static bool grid_judges(const cq_sap *s) { return s->grid.on && s->grid.huge_n <= SAP_GRID_MAX_HUGE; }

/* How many dynamics may wait in the staging list: sqrt(n) when each new
 * or moved item is tested against every staged one, n / 16 when the grid
 * finds their pairs (its merge, O(n), then costs O(1) an insert). */
static int stage_cap(const cq_sap *s)
{
    int c = grid_judges(s) ? s->ndyn / (2 * SAP_STAGE_SHARE) : (int)sqrt((double)s->ndyn);
    return c > SAP_STAGE_MIN ? c : SAP_STAGE_MIN;
}

static void stage(cq_sap *s, int id)
{
    s->it.item[id].flags |= SAP_STAGED;
    s->it.staged_at[id] = s->staged_n;
    s->it.staged[s->staged_n++] = id;
}

void cq__sap_flush_staged(cq_sap *s)
{
    if (s->staged_n == 0)
        return;
    if (s->ndyn + 2 * s->staged_n > 2 * s->cap) /* the dead ones take the room */
        cq__sap_compact_dyn(s, true);
    sap_items *it = &s->it;
    int n = s->ndyn;
    for (int axis = 0; axis < 3; axis++) {
        sap_ep *e = it->dyn[axis];
        n = s->ndyn;
        for (int k = 0; k < s->staged_n; k++) {
            int id = it->staged[k];
            e[n++] = (sap_ep){sap_bound(&it->item[id].box, axis, 0), (uint32_t)id * 2u};
            e[n++] = (sap_ep){sap_bound(&it->item[id].box, axis, 1), (uint32_t)id * 2u + 1u};
        }
        merge_tail(e, s->ndyn, n, it->tmp);
        index_axis(e, n, it->pos, axis);
    }
    s->ndyn = n;
    for (int k = 0; k < s->staged_n; k++) {
        int id = it->staged[k];
        it->item[id].flags = (uint8_t)((it->item[id].flags & ~SAP_STAGED) | SAP_PLACED);
        cq__sap_set_cursors(s, id);
    }
    s->staged_n = 0;
}

void cq__sap_place_dyn(cq_sap *s)
{
    int fresh_new = 0;
    for (int k = 0; k < s->fresh_n; k++) {
        int id = s->it.fresh[k];
        if ((s->it.item[id].flags & (SAP_STATIC | SAP_PLACED | SAP_STAGED)) == 0) {
            stage(s, id);
            fresh_new++;
        }
    }
    if ((fresh_new > 0 || !grid_judges(s)) && s->staged_n > stage_cap(s))
        cq__sap_flush_staged(s);
}

void cq__sap_stage_moves(cq_sap *s)
{
    if (s->staged_n == 0 || s->moved_n == 0)
        return;
    /* Judging each moved item against each staged one (judge_staged)
     * costs their product, or a grid query each; placing the staged ones
     * costs O(n). A staging list grown past its cap while the grid held
     * it (the grid was dropped since) is placed. */
    int64_t judge = grid_judges(s) ? (int64_t)s->moved_n * SAP_GRID_QUERY_COST : (int64_t)s->moved_n * s->staged_n;
    if (judge > s->ndyn || s->staged_n > stage_cap(s))
        cq__sap_flush_staged(s);
}

/* Makes moved item a's pairs with every staged one match sap_truth, one
 * by one. */
static void judge_against_staged(cq_sap *s, int a)
{
    for (int j = 0; j < s->staged_n; j++) {
        int b = s->it.staged[j];
        if (sap_truth(s, a, b))
            cq__sap_pair_begin(s, a, b);
        else if (s->it.adj[a] >= 0 && s->it.adj[b] >= 0)
            cq__sap_pair_end(s, a, b);
    }
}

/* Makes every pair of a moved item with a staged one match sap_truth,
 * once the moves are applied (the re-sort does not see staged items):
 * through the grid, which holds the staged items at their boxes and the
 * moved ones at their new ones, the item's pairs that no longer hold
 * pruned (the re-sort has judged every other one already), or one by one. */
static void judge_staged(cq_sap *s)
{
    if (s->staged_n == 0)
        return;
    bool grid = grid_judges(s);
    for (int k = 0; k < s->moved_n; k++) {
        int a = s->it.moved[k];
        if (grid && cq__sap_grid_query(s, a) >= 0)
            cq__sap_pair_prune(s, a);
        else
            judge_against_staged(s, a);
    }
}

/* Judges the held starts: a pair whose boxes now overlap is stored. The
 * boxes are far apart in memory, so each is fetched a few starts ahead. */
static void flush_starts(cq_sap *s)
{
    enum { AHEAD = 16 };
    const sap_item *item = s->it.item;
    int32_t(*pair)[2] = s->starts.pair;
    int n = s->starts.n;
    for (int k = 0; k < n && k < AHEAD; k++)
        __builtin_prefetch(&item[pair[k][0]]), __builtin_prefetch(&item[pair[k][1]]);
    for (int k = 0; k < n; k++) {
        if (k + AHEAD < n)
            __builtin_prefetch(&item[pair[k + AHEAD][0]]), __builtin_prefetch(&item[pair[k + AHEAD][1]]);
        int i = pair[k][0], j = pair[k][1];
        if (sap_truth(s, i, j)) /* here, inline: most starts fail it */
            cq__sap_pair_begin(s, i, j);
    }
    s->starts.n = 0;
}

/* Judges the held ends: a stored pair is dropped (an item without pairs
 * has none to end, which most show at once). */
static void flush_ends(cq_sap *s)
{
    const int32_t *adj = s->it.adj;
    for (int k = 0; k < s->ends.n; k++) {
        int i = s->ends.pair[k][0], j = s->ends.pair[k][1];
        if (adj[i] >= 0 && adj[j] >= 0)
            cq__sap_pair_end(s, i, j);
    }
    s->ends.n = 0;
}

static void flush_held(cq_sap *s)
{
    flush_starts(s);
    flush_ends(s);
}

/* Holds the crossing of i and j in h when passed is 1, not when 0, without
 * a branch on it: which endpoints cross is data the predictor cannot learn.
 * Every box is final and each crossing is judged by where its pair ends
 * up (a start stores the pair if the boxes now overlap, an end drops it,
 * and a pair with both does not overlap), so the order they are judged in
 * does not matter, and they are judged in batches after the sort moved
 * on: the sort never waits on another item's box. n is h's count, kept by
 * the caller in a register (a store to the endpoints could alias h->n);
 * returns the new count, and the caller stores it back when done. */
static inline int hold(cq_sap *s, sap_held *h, int n, int i, int j, uint32_t passed)
{
    h->pair[n][0] = i;
    h->pair[n][1] = j;
    n += (int)passed;
    if (n == SAP_HELD_MAX) {
        h->n = n;
        flush_held(s);
        n = 0;
    }
    return n;
}

/* Positions the re-sort scans before moving any (see resort_axis). */
#define SAP_SCAN_BLOCK 256

/* Insertion sort of one axis from index from on, after the moved items'
 * endpoints took their new values. Every box is already final, so each
 * crossing judges the pair by where it ends up; each inverted pair of
 * endpoints is swapped exactly once, so a pair that overlaps before and
 * after is never dropped and made again (its slot and cache survive).
 * Positions are recorded once at the end, over the stretch that moved:
 * a frame makes several swaps per endpoint, each a write far away.
 *
 * Which endpoints are out of place is found first, a block at a time and
 * without a branch: asked one by one, it is a coin toss for the branch
 * predictor on most frames. An endpoint is out of place when it sorts
 * before the largest one to its left (top, kept as its value and whether
 * it is a max); inserting it only rearranges what lies to its left, so the
 * endpoints to its right, and which of them are out of place, stay as the
 * scan saw them. */
static void resort_axis(cq_sap *s, int axis, int from)
{
    sap_ep *e = s->it.dyn[axis];
    int first = s->ndyn, p = from > 0 ? from : 1;
    double top = p < s->ndyn ? e[p - 1].v : 0;
    unsigned top_max = p < s->ndyn ? e[p - 1].tag & 1u : 0;
    int32_t late[SAP_SCAN_BLOCK];
    while (p < s->ndyn) {
        int end = s->ndyn - p > SAP_SCAN_BLOCK ? p + SAP_SCAN_BLOCK : s->ndyn, nl = 0;
        for (; p < end; p++) {
            double v = e[p].v;
            unsigned is_max = e[p].tag & 1u, lt = v < top, eq = v == top, gt = v > top;
            late[nl] = p;
            nl += (int)(lt | (eq & top_max & ~is_max)); /* sap_less(e[p], top) */
            top_max = (gt & is_max) | (eq & (top_max | is_max)) | (lt & top_max);
            top = gt ? v : top;
        }
        for (int k = 0; k < nl; k++) {
            int at = late[k];
            sap_ep x = e[at];
            /* x passes y leftwards: a min passing a max starts an overlap, a
             * max passing a min ends one; a min passing a min, or a max a
             * max, changes nothing. */
            sap_held *h = x.tag & 1u ? &s->ends : &s->starts;
            int owner = sap_owner(x.tag), q = at, n = h->n;
            do {
                sap_ep y = e[q - 1];
                n = hold(s, h, n, owner, sap_owner(y.tag), (x.tag ^ y.tag) & 1u);
                e[q--] = y;
            } while (q > 0 && sap_less(x, e[q - 1]));
            h->n = n;
            e[q] = x;
            first = q < first ? q : first;
            s->stats.swaps += (uint64_t)(at - q);
        }
    }
    for (int k = first; k < s->ndyn; k++)
        s->it.pos[sap_owner(e[k].tag)][axis * 2 + (int)(e[k].tag & 1u)] = k;
}

/* Steps a dynamic endpoint's cursor in the static array to its new value. */
static void walk(cq_sap *s, int id, int axis, uint32_t is_max)
{
    const sap_ep *e = s->it.sta[axis];
    sap_ep x = {sap_bound(&s->it.item[id].box, axis, (int)is_max), (uint32_t)id * 2u + is_max};
    int c = s->it.cur[id][axis * 2 + (int)is_max], start = c;
    /* Leftwards a min passing a max starts an overlap; rightwards a max
     * passing a min does. */
    sap_held *left = is_max ? &s->ends : &s->starts, *right = is_max ? &s->starts : &s->ends;
    int n = left->n;
    while (c > 0 && !sap_less(e[c - 1], x)) {
        c--;
        n = hold(s, left, n, id, sap_owner(e[c].tag), (x.tag ^ e[c].tag) & 1u);
    }
    left->n = n;
    n = right->n;
    while (c < s->nsta && sap_less(e[c], x)) {
        n = hold(s, right, n, id, sap_owner(e[c].tag), (x.tag ^ e[c].tag) & 1u);
        c++;
    }
    right->n = n;
    s->it.cur[id][axis * 2 + (int)is_max] = c;
    s->stats.crossings += (uint64_t)(c > start ? c - start : start - c);
}

void cq__sap_apply_moves(cq_sap *s)
{
    if (s->moved_n == 0)
        return;
    if (cq__sap_moves_are_mass(s)) {
        cq__sap_bulk_moves(s);
        return;
    }
    sap_items *it = &s->it;
    int from[3] = {s->ndyn, s->ndyn, s->ndyn};
    for (int k = 0; k < s->moved_n; k++) {
        int id = it->moved[k];
        const cq_aabb *box = &it->next[id];
        const int32_t *pos = it->pos[id];
        it->item[id].box = *box;
        it->item[id].flags &= (uint8_t)~SAP_MOVED;
        cq__sap_cover_extent(s->ext_dyn, box);
        /* Spelled out: six stores far apart, with no branch between them. */
        it->dyn[0][pos[0]].v = box->min.x, it->dyn[0][pos[1]].v = box->max.x;
        it->dyn[1][pos[2]].v = box->min.y, it->dyn[1][pos[3]].v = box->max.y;
        it->dyn[2][pos[4]].v = box->min.z, it->dyn[2][pos[5]].v = box->max.z;
        for (int axis = 0; axis < 3; axis++) /* a min lies left of its max */
            from[axis] = pos[axis * 2] < from[axis] ? pos[axis * 2] : from[axis];
    }
    for (int axis = 0; axis < 3; axis++)
        resort_axis(s, axis, from[axis]);
    for (int k = 0; s->nsta > 0 && k < s->moved_n; k++)
        for (int e = 0; e < 6; e++)
            walk(s, it->moved[k], e >> 1, (uint32_t)(e & 1));
    flush_held(s);
    judge_staged(s);
    s->moved_n = 0;
}
