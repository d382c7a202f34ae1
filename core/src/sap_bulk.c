/* Mass moves. The insertion sort costs one swap per inverted pair of
 * endpoints: a frame of small steps makes few, but a batch that teleports
 * many items makes O(n) swaps per item (every box of 10,000 moved to a
 * random place: ~10^8 swaps, a second). Such a batch is judged first, from
 * the rank displacement of a sample of the moved items (where a binary
 * search puts each new bound in the arrays as they are), against the work
 * of merging, 3 (ndyn + nsta) + 6 m log2(2m) for m moved items (a pass
 * over every endpoint, and the sort and pair search of the moved) plus
 * the refresh's tests (each moved item against the intervals open on x
 * around it, counted from the same sample, SAP_SWEEP_TEST_COST each); past
 * SAP_BULK_RATIO times that, the moved endpoints are pulled out, sorted
 * and merged back (O(n + m log m)) and the moved items' pairs recomputed
 * like a new item's (cq__sap_refresh: a query each, or one sweep). Both paths
 * end with the same pair set: a pair that holds before and after keeps its
 * slot and is not added, an ended one is removed.
 *
 * Measured with 10,000 and 100,000 boxes (half extents 0.3-0.6 in a cube
 * of side 2.5 n^(1/3)): a unit of merging work costs ~7 ns, a swap ~6 ns
 * in a teleport and 16-25 ns in a small step (it judges more pairs), so
 * the paths cost the same at a ratio of 0.3 (small steps) to 1.1
 * (teleports); a ratio of 1 sends a teleport of as few as 10 boxes of
 * 10,000 to the merge. The refresh's tests grow as n^(2/3) per moved item
 * (about 87 open intervals at 10,000 boxes, 478 at 100,000), like the
 * swaps: a test costs 2.7 ns, 0.4 units. Without them, small steps of
 * every box of 100,000 estimated 1.47 and took the merge, 2,300 ns a move
 * against 800 incremental; with them they estimate 0.54 (0.32 at 10,000),
 * and a teleport of 1 % of 10,000 still 50 or more. */
#include <math.h>

#include "sap_internal.h"

static int gap(int x, int y) { return x > y ? x - y : y - x; }

/* How far id's six endpoints (and cursors) would travel to its new box;
 * adds to *window the endpoints (dynamic and static) its new box spans on
 * x, twice the open intervals a sweep would test it against. */
static double displacement(const cq_sap *s, int id, double *window)
{
    const sap_items *it = &s->it;
    const cq_aabb *box = &it->next[id];
    int d = 0, span = 0;
    for (int k = 0; k < 6; k++) {
        int axis = k >> 1, sign = k & 1 ? 1 : -1;
        sap_ep x = {sap_bound(box, axis, k & 1), (uint32_t)id * 2u + (uint32_t)(k & 1)};
        int at = cq__sap_lower_bound(it->dyn[axis], s->ndyn, x);
        d += gap(at, it->pos[id][k]);
        span += axis == 0 ? sign * at : 0;
        if (s->nsta > 0) {
            at = cq__sap_lower_bound(it->sta[axis], s->nsta, x);
            d += gap(at, it->cur[id][k]);
            span += axis == 0 ? sign * at : 0;
        }
    }
    *window += span;
    return d;
}

bool cq__sap_moves_are_mass(const cq_sap *s)
{
    if (s->bulk_ratio == 0)
        return true;
    int m = s->moved_n, samples = m < SAP_BULK_SAMPLES ? m : SAP_BULK_SAMPLES;
    double sum = 0, window = 0;
    for (int k = 0; k < samples; k++) /* spread over the list, which is in the callers' order */
        sum += displacement(s, s->it.moved[(int)((int64_t)k * m / samples)], &window);
    /* Merging costs a pass over every endpoint and a sort of the moved,
     * then finding the moved items' pairs again: each meets the intervals
     * open on x around it (window / 2), and each unmoved start the moved
     * ones open there, m^2 / n of those tests again. */
    double items = 0.5 * (s->ndyn - s->dead + s->nsta), share = items > 0 ? m / items : 1;
    double merge = 3.0 * (s->ndyn + s->nsta) + 6.0 * m * log2(2.0 * m) +
                   SAP_SWEEP_TEST_COST * 0.5 * window / samples * m * (2.0 - (share < 1 ? share : 1));
    return sum / samples * m > s->bulk_ratio * merge;
}

void cq__sap_measure_dyn_extents(cq_sap *s)
{
    s->ext_dyn[0] = s->ext_dyn[1] = s->ext_dyn[2] = 0;
    for (int id = 0; id < s->hi; id++)
        if ((s->it.item[id].flags & (SAP_ALIVE | SAP_STATIC)) == SAP_ALIVE)
            cq__sap_cover_extent(s->ext_dyn, &s->it.item[id].box);
}

/* Moves the marked endpoints of e[0..n) to tmp, keeping the others in
 * order at the front and dropping dead ones (of sentinel cap); returns
 * how many were marked, and the kept ones' count in *kept. */
static int pull_moved(sap_ep *e, int n, sap_ep *tmp, int cap, int *kept)
{
    int w = 0, pulled = 0;
    for (int k = 0; k < n; k++) {
        sap_ep x = e[k];
        if (x.tag & SAP_TAG_MOVED) {
            x.tag &= ~SAP_TAG_MOVED;
            tmp[pulled++] = x;
        } else if (!sap_is_dead(cap, x.tag)) {
            e[w++] = x;
        }
    }
    *kept = w;
    return pulled;
}

/* Merges the sorted y[0..ny) into e, whose sorted e[0..nx) is followed by
 * room for ny: from the back, so nothing unread is overwritten. */
static void merge_back(sap_ep *e, int nx, const sap_ep *y, int ny)
{
    int i = nx - 1, j = ny - 1, k = nx + ny - 1;
    while (j >= 0)
        e[k--] = (i >= 0 && sap_less(y[j], e[i])) ? e[i--] : y[j--];
}

/* Returns the endpoints left on the axis (the dead ones are dropped). */
static int merge_axis(cq_sap *s, int axis)
{
    sap_ep *e = s->it.dyn[axis];
    int kept, m = pull_moved(e, s->ndyn, s->it.tmp, s->cap, &kept), n = kept + m;
    cq__sap_ep_sort(s->it.tmp, m, e + kept); /* the room past the kept ones is the scratch */
    merge_back(e, kept, s->it.tmp, m);
    for (int k = 0; k < n; k++)
        s->it.pos[sap_owner(e[k].tag)][axis * 2 + (int)(e[k].tag & 1u)] = k;
    return n;
}

void cq__sap_bulk_moves(cq_sap *s)
{
    sap_items *it = &s->it;
    for (int k = 0; k < s->moved_n; k++) {
        int id = it->moved[k];
        const int32_t *pos = it->pos[id];
        it->item[id].box = it->next[id];
        it->item[id].flags &= (uint8_t)~SAP_MOVED;
        for (int e = 0; e < 6; e++) {
            sap_ep *x = &it->dyn[e >> 1][pos[e]];
            x->v = sap_bound(&it->next[id], e >> 1, e & 1);
            x->tag |= SAP_TAG_MOVED;
        }
        cq__sap_mark_fresh(s, id);
    }
    s->moved_n = 0;
    int n = s->ndyn;
    for (int axis = 0; axis < 3; axis++)
        n = merge_axis(s, axis);
    s->ndyn = n;
    s->dead = 0;
    for (int k = 0; s->nsta > 0 && k < s->fresh_n; k++) {
        int id = it->fresh[k];
        if ((it->item[id].flags & (SAP_STATIC | SAP_PLACED)) == SAP_PLACED) /* a moved dynamic */
            cq__sap_set_cursors(s, id);
    }
    cq__sap_measure_dyn_extents(s);
    s->stats.bulk_moves++;
}
