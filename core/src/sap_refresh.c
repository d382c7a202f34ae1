/* Pairs of fresh items (new, filter changed, moved static, or moved in a
 * mass move). Their stored pairs are checked against the current boxes and
 * filters, then the missing ones are found: for a few fresh items by a
 * query each, O(log n + k), for many by one sweep along x over the dynamic
 * and static arrays together, which costs O(n + overlaps on x) however
 * many are fresh.
 *
 * A query of box [lo, hi] on one axis: an item with finite bounds there
 * whose extent is at most ext meets it only if its min lies in
 * [lo - ext, hi], one stretch of the sorted array; an item with a bound at
 * -inf or +inf has that endpoint at the array's front or back, so those
 * few are taken from there. Each array is queried on the axis whose
 * stretch is shortest (a slab infinite in x is found cheaply along y). */
#include <math.h>

#include "sap_internal.h"

/* The first index of e[0..n) whose value is >= v (above: > v). */
static int first_from(const sap_ep *e, int n, double v, bool above)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (above ? e[mid].v <= v : e[mid].v < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One sorted array on one axis, with its infinite ends: values -inf in
 * e[0..head), +inf in e[tail..n). */
typedef struct sorted_axis {
    const sap_ep *e;
    int n, head, tail;
    double ext;
} sorted_axis;

/* The stretch of a query: every min in e[first..last), and the ends. */
typedef struct stretch {
    int first, last, cost;
} stretch;

static sorted_axis axis_of(const sap_ep *e, int n, double ext)
{
    return (sorted_axis){e, n, first_from(e, n, -INFINITY, true), first_from(e, n, INFINITY, false), ext};
}

static stretch stretch_of(const sorted_axis *a, double lo, double hi)
{
    /* lo - ext, lowered past the rounding of the extents and of the
     * subtraction itself: a few more endpoints scanned, none missed. */
    double t = lo - a->ext - (fabs(lo) + a->ext) * 0x1p-40;
    if (!(t > -INFINITY)) /* -inf, or NaN from inf - inf */
        t = -INFINITY;
    stretch st = {first_from(a->e, a->n, t, false), first_from(a->e, a->n, hi, true), 0};
    st.cost = st.last - st.first + a->head + (a->n - a->tail);
    return st;
}

/* The cheapest axis's stretch of a query of item i in axes. */
static stretch plan(const cq_sap *s, int i, const sorted_axis axes[3], int *axis)
{
    const cq_aabb *box = &s->it.item[i].box;
    stretch best = {0, 0, INT32_MAX};
    for (int k = 0; k < 3; k++) {
        stretch st = stretch_of(&axes[k], cq_comp(box->min, k), cq_comp(box->max, k));
        if (st.cost < best.cost)
            best = st, *axis = k;
    }
    return best;
}

/* Stores i's missing pairs with the items of axes; returns the cost. */
static int query(cq_sap *s, int i, const sorted_axis axes[3])
{
    int axis = 0;
    stretch best = plan(s, i, axes, &axis);
    const sorted_axis *a = &axes[axis];
    /* The candidates' boxes are far apart in memory: each is fetched a few
     * candidates ahead, so the misses overlap. */
    enum { AHEAD = 16 };
    for (int k = best.first; k < best.last && k < best.first + AHEAD; k++)
        __builtin_prefetch(&s->it.item[sap_owner(a->e[k].tag)]);
    for (int k = best.first; k < best.last; k++) {
        if (k + AHEAD < best.last)
            __builtin_prefetch(&s->it.item[sap_owner(a->e[k + AHEAD].tag)]);
        if (!(a->e[k].tag & 1u))
            cq__sap_pair_begin(s, i, sap_owner(a->e[k].tag));
    }
    for (int k = 0; k < a->head; k++)
        cq__sap_pair_begin(s, i, sap_owner(a->e[k].tag));
    for (int k = a->tail; k < a->n; k++)
        cq__sap_pair_begin(s, i, sap_owner(a->e[k].tag));
    return best.cost;
}

/* A box's extent on y and z, which the sweep tests (x is its axis). */
typedef struct yz_span {
    double y0, y1, z0, z1;
} yz_span;
_Static_assert(sizeof(yz_span) <= sizeof(cq_aabb) && sizeof(yz_span) <= 2 * sizeof(sap_ep),
               "a span fits the scratch the sweep borrows per item");

/* Open intervals of one freshness: dynamics from the front, statics from
 * the back (statics are never tested against each other), each with a
 * copy of its y and z extent, so that a new interval is tested against
 * them in a row instead of by fetching every open item's box from afar. */
typedef struct open_set {
    int32_t *id;
    yz_span *span;
    int nd, ns, cap;
} open_set;

/* The sweep's open intervals: fresh and not. A pair found missing has a
 * fresh item, so an interval that is not fresh meets only the fresh ones:
 * with 1 % of the items fresh, the sweep makes 1/50 of the tests. */
typedef struct open_sets {
    open_set set[2]; /* [1] fresh */
    int32_t *at;     /* an open item's index in its set */
} open_sets;

static yz_span yz_of(const cq_aabb *b) { return (yz_span){b->min.y, b->max.y, b->min.z, b->max.z}; }

static void open_push(open_sets *o, int i, bool fresh, bool is_static, yz_span sp)
{
    open_set *set = &o->set[fresh];
    int k = is_static ? set->cap - ++set->ns : set->nd++;
    set->id[k] = i;
    set->span[k] = sp;
    o->at[i] = k;
}

static void open_drop(open_sets *o, int i, bool fresh, bool is_static)
{
    open_set *set = &o->set[fresh];
    int last = is_static ? set->cap - set->ns-- : --set->nd, hole = o->at[i];
    set->id[hole] = set->id[last];
    set->span[hole] = set->span[last];
    o->at[set->id[hole]] = hole;
}

/* Tests item i against open intervals [from, to) of set: they overlap on x. */
static void meet_range(cq_sap *s, const open_set *set, int from, int to, int i, yz_span b)
{
    for (int k = from; k < to; k++) {
        const yz_span *c = &set->span[k];
        if ((b.y0 <= c->y1) & (c->y0 <= b.y1) & (b.z0 <= c->z1) & (c->z0 <= b.z1))
            cq__sap_pair_begin(s, i, set->id[k]);
    }
}

/* i meets the open dynamics of both sets if fresh, of the fresh set if
 * not, and the open statics likewise unless it is static itself. */
static void meet_open(cq_sap *s, const open_sets *o, int i, bool fresh, bool is_static, yz_span sp)
{
    for (int f = fresh ? 0 : 1; f < 2; f++) {
        const open_set *set = &o->set[f];
        meet_range(s, set, 0, set->nd, i, sp);
        if (!is_static)
            meet_range(s, set, set->cap - set->ns, set->cap, i, sp);
    }
}

/* The open sets' storage is borrowed, as nothing else uses it during the
 * refresh: moved[] and next[] (the moves are applied), tmp[] (no sort is
 * under way) and active[]. */
static void sweep(cq_sap *s)
{
    const sap_ep *d = s->it.dyn[0], *t = s->it.sta[0];
    open_sets o = {{{s->it.moved, (yz_span *)s->it.tmp, 0, 0, s->cap},
                    {s->it.active, (yz_span *)s->it.next, 0, 0, s->cap}},
                   s->it.active_at};
    int a = 0, b = 0;
    while (a < s->ndyn || b < s->nsta) {
        sap_ep x = (b == s->nsta || (a < s->ndyn && !sap_less(t[b], d[a]))) ? d[a++] : t[b++];
        int i = sap_owner(x.tag);
        if (i == s->cap) /* a dead endpoint */
            continue;
        const sap_item *item = &s->it.item[i];
        bool is_static = item->flags & SAP_STATIC, fresh = item->flags & SAP_FRESH;
        if (x.tag & 1u) {
            open_drop(&o, i, fresh, is_static);
            continue;
        }
        yz_span sp = yz_of(&item->box);
        meet_open(s, &o, i, fresh, is_static, sp);
        open_push(&o, i, fresh, is_static, sp);
    }
    s->stats.sweeps++;
}

/* The fresh items whose query cost is measured to choose. */
#define SAP_PLAN_SAMPLES 16

/* What the queries of a sample of the fresh items would scan, scaled to
 * all of them. */
static double planned_cost(const cq_sap *s, const sorted_axis dyn[3], const sorted_axis sta[3])
{
    int n = s->fresh_n, samples = n < SAP_PLAN_SAMPLES ? n : SAP_PLAN_SAMPLES, axis;
    double sum = 0;
    for (int k = 0; k < samples; k++) {
        int i = s->it.fresh[(int)((int64_t)k * n / samples)];
        sum += plan(s, i, dyn, &axis).cost;
        if (!(s->it.item[i].flags & SAP_STATIC) && s->nsta > 0)
            sum += plan(s, i, sta, &axis).cost;
    }
    return sum / samples * n;
}

/* The dynamic arrays' axes, found once (their ends take binary searches
 * a query through the grid does not need). */
static void dyn_axes(const cq_sap *s, sorted_axis dyn[3])
{
    for (int k = 0; !dyn[0].e && k < 3; k++)
        dyn[2 - k] = axis_of(s->it.dyn[2 - k], s->ndyn, s->ext_dyn[2 - k]);
}

/* Offers fresh item i its partners among the dynamics: through the grid
 * when it may and the grid can (the grid holds the staged items too:
 * *gridded is cleared when an item went along the arrays instead, which
 * do not), else along the arrays. Returns the cost. */
static int query_dynamics(cq_sap *s, int i, sorted_axis dyn[3], bool grid, bool *gridded)
{
    int cost = grid ? cq__sap_grid_query(s, i) : -1;
    if (cost >= 0) {
        s->stats.grid_queries++;
        return cost;
    }
    *gridded = false;
    dyn_axes(s, dyn);
    return query(s, i, dyn) + 24; /* + the binary searches */
}

/* Queries the fresh items one by one unless a sweep is cheaper; returns
 * false if the sweep must do (or finish) the job. A sweep reads every
 * endpoint and an item's box per item; a query's candidate costs about
 * the same as one of those, so past about the endpoints in candidates
 * (scaled from a sample, then counted), the sweep is the cheaper way. */
static bool query_all(cq_sap *s, bool *gridded)
{
    int endpoints = s->ndyn + s->nsta;
    if (s->fresh_n * SAP_SWEEP_SHARE > endpoints / 2)
        return false;
    sorted_axis dyn[3] = {{NULL}}, sta[3];
    for (int k = 0; k < 3; k++)
        sta[k] = axis_of(s->it.sta[k], s->nsta, s->ext_sta[k]);
    double budget = endpoints + 4096;
    bool grid = cq__sap_grid_ready(s);
    if (!grid)
        dyn_axes(s, dyn);
    if (!grid && s->fresh_n > SAP_PLAN_SAMPLES && planned_cost(s, dyn, sta) > budget)
        return false;
    int k = 0;
    for (; k < s->fresh_n && budget > 0; k++) {
        int i = s->it.fresh[k];
        bool is_static = s->it.item[i].flags & SAP_STATIC;
        budget -= query_dynamics(s, i, dyn, grid && !is_static, gridded);
        if (!is_static && s->nsta > 0) /* statics never pair with statics */
            budget -= query(s, i, sta);
        s->stats.queries++;
    }
    return k == s->fresh_n;
}

void cq__sap_refresh(cq_sap *s)
{
    if (s->fresh_n == 0)
        return;
    for (int k = 0; k < s->fresh_n; k++)
        cq__sap_pair_prune(s, s->it.fresh[k]);
    /* Staged items are in no array: fresh ones are tested against them
     * one by one, unless placing them costs less (or a sweep must see
     * them), or the grid, which holds them, answered every fresh item. */
    if ((int64_t)s->fresh_n * s->staged_n > s->ndyn)
        cq__sap_flush_staged(s);
    bool gridded = true;
    if (!query_all(s, &gridded)) {
        cq__sap_flush_staged(s);
        sweep(s); /* the pairs the queries stored are found again, and kept */
    }
    for (int k = 0; !gridded && k < s->fresh_n; k++)
        for (int j = 0; j < s->staged_n; j++)
            cq__sap_pair_begin(s, s->it.fresh[k], s->it.staged[j]);
    for (int k = 0; k < s->fresh_n; k++)
        s->it.item[s->it.fresh[k]].flags &= (uint8_t)~SAP_FRESH;
    s->fresh_n = 0;
}
