/* The sweep-and-prune's lifecycle, its mutations (which only record what
 * changed) and cq__sap_update, which applies them in an order that keeps
 * every step's assumptions: dead endpoints gone before anything walks the
 * arrays, statics placed before dynamics step over them, new dynamics
 * placed after the moves (so moves don't pass them), fresh items' pairs
 * recomputed last against the final boxes.
 *
 * Dynamic items' endpoints are kept sorted on the three axes and re-sorted
 * incrementally by insertion sort, so a frame with little motion costs
 * close to O(n); a batch of moves whose insertion sort would cost more
 * than merging (teleports) is merged in sorted instead, O(n + m log m).
 * Statics live in their own sorted arrays that only change when a static
 * is inserted, removed or moved, and dynamics keep a cursor into them
 * instead of swapping past them. A new item's pairs come from a query of
 * the sorted arrays, O(log n + k), or in a large world of a hashed grid
 * (sap_grid.c), O(k); new dynamics wait in a staging list and removed
 * ones' endpoints stay until they are many, so one insert or remove costs
 * no O(n) pass (amortised O(sqrt n), O(1) while the grid is on). */
#include <math.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/status.h"
#include "sap_internal.h"

/* Per-item arrays hold cap + 1 ids: id cap is the sentinel that owns dead
 * endpoints (sap_dead_tag). */
static size_t items_layout(sap_items *it, char *base, int cap)
{
    size_t at = 0, n = (size_t)cap + 1;
    it->item = sap_carve(base, &at, n, sizeof *it->item);
    it->next = sap_carve(base, &at, n, sizeof *it->next);
    it->pos = sap_carve(base, &at, n, sizeof *it->pos);
    it->cur = sap_carve(base, &at, n, sizeof *it->cur);
    it->adj = sap_carve(base, &at, n, sizeof *it->adj);
    it->moved = sap_carve(base, &at, n, sizeof *it->moved);
    it->moved_at = sap_carve(base, &at, n, sizeof *it->moved_at);
    it->fresh = sap_carve(base, &at, n, sizeof *it->fresh);
    it->fresh_at = sap_carve(base, &at, n, sizeof *it->fresh_at);
    it->active = sap_carve(base, &at, n, sizeof *it->active);
    it->active_at = sap_carve(base, &at, n, sizeof *it->active_at);
    it->staged = sap_carve(base, &at, n, sizeof *it->staged);
    it->staged_at = sap_carve(base, &at, n, sizeof *it->staged_at);
    for (int axis = 0; axis < 3; axis++) {
        it->dyn[axis] = sap_carve(base, &at, 2 * (size_t)cap, sizeof *it->dyn[axis]);
        it->sta[axis] = sap_carve(base, &at, 2 * (size_t)cap, sizeof *it->sta[axis]);
    }
    it->tmp = sap_carve(base, &at, 2 * (size_t)cap, sizeof *it->tmp);
    it->grid_node = sap_carve(base, &at, n, sizeof *it->grid_node);
    it->grid_mask = 15;
    while (it->grid_mask + 1 < 2 * n) /* load <= 1/2: cells never outnumber items */
        it->grid_mask = it->grid_mask * 2 + 1;
    it->grid_cell = sap_carve(base, &at, (size_t)it->grid_mask + 1, sizeof *it->grid_cell);
    return at;
}

/* Allocates item storage for cap ids into *it, every id free. */
static int items_alloc(sap_items *it, int cap, void **block, size_t *size)
{
    *size = items_layout(it, NULL, cap);
    *block = cq_alloc(*size);
    if (!*block)
        return CQ_ENO_MEMORY;
    items_layout(it, *block, cap);
    /* Every item zeroed, boxes too: a crossing of a dead endpoint reads
     * the sentinel's box before its flags turn the answer down. */
    memset(it->item, 0, ((size_t)cap + 1) * sizeof *it->item);
    it->adj[cap] = -1; /* the sentinel has no pairs */
    return CQ_OK;
}

/* The query grid lives in the item storage and starts off (sap_grid.c). */
static void grid_take(cq_sap *s)
{
    s->grid.node = s->it.grid_node;
    s->grid.cell = s->it.grid_cell;
    s->grid.mask = s->it.grid_mask;
    cq__sap_grid_drop(s);
}

/* Gives dead endpoints to the sentinel of the new capacity. */
static void retag_dead(sap_ep *e, int n, int from, int to)
{
    for (int k = 0; k < n; k++)
        if (sap_is_dead(from, e[k].tag))
            e[k].tag = sap_dead_tag(to, e[k].tag);
}

/* Moves the item storage to a block for cap ids (> s->cap). */
static int items_grow(cq_sap *s, int cap)
{
    sap_items n;
    void *block;
    size_t size;
    if (items_alloc(&n, cap, &block, &size) != CQ_OK)
        return CQ_ENO_MEMORY;
    const sap_items *o = &s->it;
#define SAP_COPY_(field, count) memcpy(n.field, o->field, (size_t)(count) * sizeof *n.field)
    SAP_COPY_(item, s->cap);
    SAP_COPY_(next, s->cap);
    SAP_COPY_(pos, s->cap);
    SAP_COPY_(cur, s->cap);
    SAP_COPY_(adj, s->cap);
    SAP_COPY_(moved, s->moved_n);
    SAP_COPY_(moved_at, s->cap);
    SAP_COPY_(fresh, s->fresh_n);
    SAP_COPY_(fresh_at, s->cap);
    SAP_COPY_(staged, s->staged_n);
    SAP_COPY_(staged_at, s->cap);
    for (int axis = 0; axis < 3; axis++) {
        SAP_COPY_(dyn[axis], s->ndyn);
        SAP_COPY_(sta[axis], s->nsta);
        retag_dead(n.dyn[axis], s->ndyn, s->cap, cap);
        retag_dead(n.sta[axis], s->nsta, s->cap, cap);
    }
#undef SAP_COPY_
    cq_free(s->items_block, s->items_size);
    s->it = n;
    s->items_block = block;
    s->items_size = size;
    s->cap = cap;
    grid_take(s);
    s->stats.grows++;
    return CQ_OK;
}

int cq__sap_create(int capacity, cq_sap **out)
{
    *out = NULL;
    if (capacity <= 0 || capacity > SAP_MAX_ITEMS)
        return CQ_ERANGE;
    cq_sap *s = cq_alloc(sizeof *s);
    if (!s)
        return CQ_ENO_MEMORY;
    memset(s, 0, sizeof *s);
    if (items_alloc(&s->it, capacity, &s->items_block, &s->items_size) != CQ_OK ||
        cq__sap_pairs_init(s, capacity < 32 ? 64 : 2 * capacity) != CQ_OK) {
        cq_free(s->items_block, s->items_size);
        cq_free(s, sizeof *s);
        return CQ_ENO_MEMORY;
    }
    s->cap = capacity;
    grid_take(s);
    s->epoch = 1;
    s->bulk_ratio = SAP_BULK_RATIO;
    *out = s;
    return CQ_OK;
}

void cq__sap_destroy(cq_sap *sap)
{
    if (!sap)
        return;
    cq_free(sap->items_block, sap->items_size);
    cq_free(sap->pairs_block, sap->pairs_size);
    cq_free(sap, sizeof *sap);
}

int cq__sap_reserve(cq_sap *sap, int capacity)
{
    if (capacity > SAP_MAX_ITEMS)
        return CQ_ERANGE;
    return capacity <= sap->cap ? CQ_OK : items_grow(sap, capacity);
}

/* The first mutation after an update starts a new epoch: the last
 * update's reports are done with. */
static void begin(cq_sap *s)
{
    if (!s->closed)
        return;
    s->closed = false;
    s->epoch++;
    cq__sap_pairs_unmark(s);
    s->added_n = 0;
    s->removed_n = 0;
}

static int check_box(const cq_aabb *b)
{
    /* Each coordinate is in one comparison, and a NaN fails it: one test
     * for the common case, every move of every frame. */
    if ((b->min.x <= b->max.x) & (b->min.y <= b->max.y) & (b->min.z <= b->max.z))
        return CQ_OK;
    const double v[6] = {b->min.x, b->min.y, b->min.z, b->max.x, b->max.y, b->max.z};
    for (int k = 0; k < 6; k++)
        if (isnan(v[k]))
            return CQ_ENOT_FINITE;
    return CQ_ERANGE;
}

static bool same_box(const cq_aabb *a, const cq_aabb *b)
{
    return a->min.x == b->min.x && a->min.y == b->min.y && a->min.z == b->min.z && a->max.x == b->max.x &&
           a->max.y == b->max.y && a->max.z == b->max.z;
}

static bool is_item(const cq_sap *s, int id) { return id >= 0 && id < s->cap && (s->it.item[id].flags & SAP_ALIVE); }

static void list_push(int32_t *list, int32_t *at, int *n, int id)
{
    at[id] = *n;
    list[(*n)++] = id;
}

static void list_drop(int32_t *list, int32_t *at, int *n, int id)
{
    int last = list[--*n];
    list[at[id]] = last;
    at[last] = at[id];
}

void cq__sap_mark_fresh(cq_sap *s, int id)
{
    if (s->it.item[id].flags & SAP_FRESH)
        return;
    s->it.item[id].flags |= SAP_FRESH;
    list_push(s->it.fresh, s->it.fresh_at, &s->fresh_n, id);
}

void cq__sap_cover_extent(double ext[3], const cq_aabb *box)
{
    for (int axis = 0; axis < 3; axis++) {
        double lo = cq_comp(box->min, axis), hi = cq_comp(box->max, axis), e = hi - lo;
        /* Infinite bounds don't count (a query takes them from the arrays'
         * ends); a finite box too wide for a double makes e infinite. */
        if (lo > -INFINITY && hi < INFINITY && !(e <= ext[axis]))
            ext[axis] = e;
    }
}

/* Takes a placed item's endpoints out (dead until a compaction drops
 * them); a static's going makes the update rebuild the static arrays. */
static void unplace(cq_sap *s, int id)
{
    bool is_static = s->it.item[id].flags & SAP_STATIC;
    for (int k = 0; k < 6; k++) {
        sap_ep *e = &(is_static ? s->it.sta : s->it.dyn)[k >> 1][s->it.pos[id][k]];
        e->tag = sap_dead_tag(s->cap, e->tag);
    }
    if (is_static)
        s->sta_dirty = true;
    else
        s->dead += 2;
    s->it.item[id].flags &= (uint8_t)~SAP_PLACED;
}

int cq__sap_insert(cq_sap *sap, int id, const cq_aabb *box, uint32_t layer, uint32_t mask, bool is_static)
{
    int rc = check_box(box);
    if (rc != CQ_OK)
        return rc;
    if (id < 0 || id >= SAP_MAX_ITEMS || is_item(sap, id))
        return CQ_ERANGE;
    if (id >= sap->cap) {
        int cap = sap->cap <= SAP_MAX_ITEMS / 2 ? 2 * sap->cap : SAP_MAX_ITEMS;
        if (cq__sap_reserve(sap, cap > id ? cap : id + 1) != CQ_OK)
            return CQ_ENO_MEMORY;
    }
    begin(sap);
    sap_items *it = &sap->it;
    it->item[id].flags = (uint8_t)(SAP_ALIVE | (is_static ? SAP_STATIC : 0));
    it->item[id].box = *box;
    it->item[id].layer = layer;
    it->item[id].mask = mask;
    it->adj[id] = -1;
    cq__sap_cover_extent(is_static ? sap->ext_sta : sap->ext_dyn, box);
    cq__sap_mark_fresh(sap, id);
    sap->sta_dirty |= is_static;
    if (id >= sap->hi)
        sap->hi = id + 1;
    return CQ_OK;
}

int cq__sap_remove(cq_sap *sap, int id)
{
    if (!is_item(sap, id))
        return CQ_ERANGE;
    begin(sap);
    uint8_t f = sap->it.item[id].flags;
    if (f & SAP_PLACED)
        unplace(sap, id);
    if (f & SAP_MOVED)
        list_drop(sap->it.moved, sap->it.moved_at, &sap->moved_n, id);
    if (f & SAP_FRESH)
        list_drop(sap->it.fresh, sap->it.fresh_at, &sap->fresh_n, id);
    if (f & SAP_STAGED)
        list_drop(sap->it.staged, sap->it.staged_at, &sap->staged_n, id);
    cq__sap_grid_unlink(sap, id);
    sap->it.item[id].flags = 0;
    cq__sap_pair_prune(sap, id); /* no pair holds for a dead item: all go */
    return CQ_OK;
}

int cq__sap_move(cq_sap *sap, int id, const cq_aabb *box)
{
    if (!is_item(sap, id))
        return CQ_ERANGE;
    int rc = check_box(box);
    if (rc != CQ_OK)
        return rc;
    sap_items *it = &sap->it;
    uint8_t f = it->item[id].flags;
    if (same_box((f & SAP_MOVED) ? &it->next[id] : &it->item[id].box, box))
        return CQ_OK;
    begin(sap);
    if ((f & (SAP_STATIC | SAP_PLACED)) == SAP_PLACED) { /* a placed dynamic: re-sorted by update */
        it->next[id] = *box;
        if (!(f & SAP_MOVED)) {
            it->item[id].flags |= SAP_MOVED;
            list_push(it->moved, it->moved_at, &sap->moved_n, id);
        }
        return CQ_OK;
    }
    if (f & SAP_PLACED) /* a static leaves its arrays and is placed again, like a new one */
        unplace(sap, id);
    it->item[id].box = *box;
    cq__sap_cover_extent((f & SAP_STATIC) ? sap->ext_sta : sap->ext_dyn, box);
    cq__sap_mark_fresh(sap, id);
    return CQ_OK;
}

int cq__sap_set_filter(cq_sap *sap, int id, uint32_t layer, uint32_t mask)
{
    if (!is_item(sap, id))
        return CQ_ERANGE;
    if (sap->it.item[id].layer == layer && sap->it.item[id].mask == mask)
        return CQ_OK;
    begin(sap);
    sap->it.item[id].layer = layer;
    sap->it.item[id].mask = mask;
    cq__sap_mark_fresh(sap, id);
    return CQ_OK;
}

int cq__sap_update_lazy(cq_sap *sap)
{
    begin(sap);
    if (sap->incomplete) { /* a pair was lost for want of memory: recompute them all */
        sap->incomplete = false;
        for (int id = 0; id < sap->hi; id++)
            if (sap->it.item[id].flags & SAP_ALIVE)
                cq__sap_mark_fresh(sap, id);
    }
    cq__sap_compact_dyn(sap, false);
    cq__sap_rebuild_static(sap);
    cq__sap_stage_moves(sap);
    cq__sap_grid_sync(sap); /* while the moved list and the pending boxes are there */
    cq__sap_apply_moves(sap);
    cq__sap_place_dyn(sap);
    cq__sap_refresh(sap);
    cq__sap_pairs_finish(sap);
    sap->closed = true;
    return sap->incomplete ? CQ_ENO_MEMORY : CQ_OK;
}

int cq__sap_update(cq_sap *sap)
{
    int rc = cq__sap_update_lazy(sap);
    cq__sap_pairs_sort(sap);
    return rc;
}

static cq_sap_pair as_pair(sap_ref r)
{
    return (cq_sap_pair){(int)(r.key >> 32), (int)(uint32_t)r.key, r.slot, r.added != 0};
}

int cq__sap_pair_count(const cq_sap *sap) { return sap->live_n; }

cq_sap_pair cq__sap_pair_at(const cq_sap *sap, int i) { return as_pair(sap->pr.list[i]); }

int cq__sap_pair_span(const cq_sap *sap) { return sap->list_n; }

bool cq__sap_pair_entry(const cq_sap *sap, int k, cq_sap_pair *out)
{
    *out = as_pair(sap->pr.list[k]);
    return out->slot >= 0;
}

int cq__sap_removed_count(const cq_sap *sap) { return sap->removed_n; }

cq_sap_pair cq__sap_removed_at(const cq_sap *sap, int i) { return as_pair(sap->pr.removed[i]); }

int cq__sap_find(const cq_sap *sap, int a, int b)
{
    if (a == b || a < 0 || b < 0)
        return -1;
    return cq__sap_pair_find(sap, a < b ? a : b, a < b ? b : a);
}

int cq__sap_pair_capacity(const cq_sap *sap) { return sap->pcap; }

cq_sap_stats cq__sap_get_stats(const cq_sap *sap) { return sap->stats; }
