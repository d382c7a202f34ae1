/* The per-world cap on broadphase pairs (settings.max_pairs): before a
 * batch or a new skin is applied, the pairs the broadphase would hold
 * afterwards must be known not to pass the cap. Knowing first keeps the
 * refusal cheap: the incremental broadphase would store every pair
 * (coincident shapes make n^2 / 2 of them) before anything could notice,
 * and a refused batch must leave the world untouched and be refused
 * before it is journaled.
 *
 * Two steps. The world keeps a grid that bounds its pairs from above
 * (world_grid.h), updated by each commit for the boxes that changed cells;
 * a batch whose bound stays within the cap passes at the cost of its own
 * records. Only when the bound passes the cap are the pairs counted: a
 * sort of the final boxes and a sweep, stopping at the cap. The grid is
 * kept only while the world has shapes enough to cross the cap.
 *
 * "Pairs" here are the overlaps the broadphase tests (boxes fattened by
 * skin / 2 that touch, not both static), whatever the filters then say:
 * a crowd whose filters refuse each other costs the broadphase as much.
 *
 * A change is refused only when it would leave more overlaps than the cap
 * and more than the world has now: a world above its cap (the cap was
 * lowered, or the daemon restarted with a lower one and recovered what it
 * had acknowledged) is never frozen, it may change in any way that does
 * not add pairs. */
#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cq/alloc.h"
#include "world_batch.h"

/* What the count reads of one final item. Filters are not read: the
 * broadphase tests every overlap of boxes before it asks the filters, so
 * the cap counts overlaps, and a crowd whose filters all refuse each other
 * costs what any crowd costs. */
typedef struct cap_item {
    cq_aabb box; /* broadphase box: fattened by skin / 2 */
    bool is_static;
} cap_item;

/* A double's bits made to sort as unsigned integers in the double's order. */
static uint64_t order_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

/* Sorts k[0..n) by key, four 16-bit passes through tmp: a batch of moves
 * in a large world is checked every frame, and qsort through a compare
 * function made the check cost more than the update it guards. */
static void radix_sort(world_key *k, world_key *tmp, int n)
{
    enum { DIGITS = 1 << 16 };
    static_assert(sizeof(int32_t) * DIGITS <= 1 << 18, "count table fits the stack");
    int32_t count[DIGITS];
    for (int shift = 0; shift < 64; shift += 16) {
        memset(count, 0, sizeof count);
        for (int i = 0; i < n; i++)
            count[(k[i].key >> shift) & (DIGITS - 1)]++;
        int32_t at = 0;
        for (int d = 0; d < DIGITS; d++) {
            int32_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (int i = 0; i < n; i++)
            tmp[count[(k[i].key >> shift) & (DIGITS - 1)]++] = k[i];
        world_key *t = k;
        k = tmp;
        tmp = t;
    }
}

/* The overlaps the broadphase tests among it[0..n) (order: by min x;
 * boxes touch, not both static), counted until the count passes stop. */
static long sweep_count(const cap_item *it, const world_key *order, int n, long stop)
{
    long pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && it[order[j].index].box.min.x <= it[order[i].index].box.max.x; j++) {
            const cap_item *a = &it[order[i].index], *b = &it[order[j].index];
            if (cq_aabb_overlap_flat(&a->box, &b->box) && !(a->is_static && b->is_static) && ++pairs > stop)
                return pairs;
        }
    return pairs;
}

/* The final box (not fattened) of a record the batch leaves present:
 * the bits the commit would compute. */
static cq_aabb record_box(const cq_world *w, const batch_rec *rec, const cq_world_op *ops)
{
    if (rec->slot >= 0 && rec->upsert < 0 && rec->pose < 0)
        return w->e[rec->slot].box;
    const cq_world_body *body = rec->slot >= 0 ? &w->e[rec->slot].body : NULL;
    cq_shape s = rec->upsert >= 0 ? ops[rec->upsert].shape : body->shape;
    if (rec->upsert >= 0)
        cq_shape_validate(&s); /* as the commit does: a new plane's normal normalised */
    const cq_xform *pose = rec->pose >= 0 ? &ops[rec->pose].pose : body ? &body->pose : &ops[rec->upsert].pose;
    return cq__shape_aabb(&s, pose);
}

/* Whether the record leaves its slot a static shape. */
static bool record_static(const cq_world *w, const batch_rec *rec, const cq_world_op *ops)
{
    return world_static_type(rec->upsert >= 0 ? ops[rec->upsert].shape.type : w->e[rec->slot].body.shape.type);
}

/* The final item of a record the batch leaves present, fattened by skin / 2. */
static cap_item record_item(const cq_world *w, const batch_rec *rec, const cq_world_op *ops, double skin)
{
    return (cap_item){cq_aabb_fatten(record_box(w, rec, ops), 0.5 * skin), record_static(w, rec, ops)};
}

/* The item of a slot the batch does not touch. */
static cap_item stored_item(const cq_world *w, int slot, double skin)
{
    return (cap_item){cq_aabb_fatten(w->e[slot].box, 0.5 * skin), world_static_type(w->e[slot].body.shape.type)};
}

/* The final items after batch b (NULL: the world as it is) into it[],
 * sized for them; returns their count. */
static int final_items(const cq_world *w, const batch *b, const cq_world_op *ops, double skin, cap_item *it)
{
    int k = 0;
    for (int slot = 0; slot < w->cap; slot++) { /* in slot order: the entries are read in sequence */
        if (!w->names[slot].alive)
            continue;
        int mark = b ? w->names[slot].mark : -1;
        const batch_rec *rec = mark >= 0 ? &b->rec[mark] : NULL;
        if (!rec)
            it[k++] = stored_item(w, slot, skin);
        else if (rec->present)
            it[k++] = record_item(w, rec, ops, skin);
    }
    for (int r = 0; b && r < b->n; r++)
        if (b->rec[r].slot < 0 && b->rec[r].present)
            it[k++] = record_item(w, &b->rec[r], ops, skin);
    return k;
}

/* The exact overlap count of it[0..n), up to one past stop, into *count:
 * CQ_OK or CQ_ENO_MEMORY. */
static int exact_count(const cap_item *it, int n, long stop, long *count)
{
    world_key *order = cq_alloc(2 * (size_t)n * sizeof *order);
    if (!order)
        return CQ_ENO_MEMORY;
    for (int i = 0; i < n; i++)
        order[i] = (world_key){order_bits(it[i].box.min.x), i};
    radix_sort(order, order + n, n); /* an even count of passes: back in order */
    *count = sweep_count(it, order, n, stop);
    cq_free(order, 2 * (size_t)n * sizeof *order);
    return CQ_OK;
}

/* The shapes above which a grid may cross the cap: fewer cannot. */
static bool cap_reachable(long cap, long long shapes) { return cap > 0 && shapes * (shapes - 1) / 2 > cap; }

/* The bound over items it[0..n) from a grid of their own, or a value
 * above stop when none is cheap (too many levels, or out of memory). */
static long long scratch_bound(const cap_item *it, int n, long long stop)
{
    world_grid g = {0};
    for (int i = 0; i < n; i++) {
        grid_rec r = cq__world_grid_rec_of(&it[i].box, it[i].is_static, 0);
        cq__world_grid_count(&g, &r, +1);
    }
    uint64_t present = cq__world_grid_levels(&g);
    long cells = 0, most = GRID_CELLS_MAX * (long)n;
    for (int i = 0; i < n && cells <= most; i++) {
        grid_rec r = cq__world_grid_rec_of(&it[i].box, it[i].is_static, 0);
        cells += cq__world_grid_rec_cells(&r, present);
    }
    if (cells > most || !cq__world_grid_table_alloc(&g, cells, present))
        return stop + 1;
    for (int i = 0; i < n; i++) {
        grid_rec r = cq__world_grid_rec_of(&it[i].box, it[i].is_static, 0);
        cq__world_grid_enter(&g, &r, +1);
    }
    long long bound = g.overflow ? stop + 1 : cq__world_grid_total(&g);
    cq__world_grid_free(&g);
    return bound;
}

/* The final box of a present record, and whether it is static: for a
 * moved box from the kept half extents (the bits cq__shape_aabb gives),
 * without the slot's entry. */
static cq_aabb final_box(const cq_world *w, const batch_rec *rec, const cq_world_op *ops, bool *is_static)
{
    const grid_keep *keep = rec->slot >= 0 ? &w->grid_rec[rec->slot] : NULL;
    if (keep && rec->upsert < 0 && rec->pose >= 0 && keep->half.x >= 0) {
        *is_static = false;
        return cq_aabb_of_obb(&ops[rec->pose].pose, cq_v3(0, 0, 0), keep->half); /* as cq__shape_aabb does */
    }
    *is_static = record_static(w, rec, ops);
    return record_box(w, rec, ops);
}

/* Fetches what final_box will read of the record: the kept data first,
 * the entry later, and only when the kept data cannot stand in for it. */
static void grid_prefetch_ahead(const cq_world *w, const batch *b, int r)
{
    if (r + 2 * WORLD_AHEAD < b->n && b->rec[r + 2 * WORLD_AHEAD].slot >= 0)
        world_prefetch(&w->grid_rec[b->rec[r + 2 * WORLD_AHEAD].slot]);
    const batch_rec *ahead = r + WORLD_AHEAD < b->n ? &b->rec[r + WORLD_AHEAD] : NULL;
    if (ahead && ahead->slot >= 0 && (ahead->upsert >= 0 || w->grid_rec[ahead->slot].half.x < 0))
        for (size_t off = 0; off < offsetof(world_entry, min_half); off += 64)
            world_prefetch((const char *)&w->e[ahead->slot] + off);
}

/* The records whose grid record batch b changes, into b->gchg, their new
 * records into b->grec. Every present record's box goes to b->box on the
 * way (b->boxed), so the commit need not compute it again. */
static void grid_changes(const cq_world *w, batch *b, const cq_world_op *ops)
{
    double half = 0.5 * w->settings.skin;
    b->ngchg = 0;
    for (int r = 0; r < b->n; r++) {
        grid_prefetch_ahead(w, b, r);
        const batch_rec *rec = &b->rec[r];
        grid_rec old = rec->slot >= 0 ? w->grid_rec[rec->slot].rec : (grid_rec){.level = GRID_NONE};
        grid_rec new = {.level = GRID_NONE};
        if (rec->present) {
            bool is_static;
            b->box[r] = final_box(w, rec, ops, &is_static);
            cq_aabb fat = cq_aabb_fatten(b->box[r], half);
            if (rec->slot >= 0 && old.is_static == is_static && cq__world_grid_rec_covers(&old, &fat))
                continue; /* within its cells: the record stays */
            new = cq__world_grid_rec_of(&fat, is_static, w->grid.present);
        }
        if (!cq__world_grid_rec_same(&old, &new)) {
            b->grec[r] = new;
            b->gchg[b->ngchg++] = r;
        }
    }
    b->boxed = true;
}

bool cq__world_pair_grid_probe_start(const cq_world *w)
{
    return cq__world_pair_grid_live(w, NULL) && w->settings.skin == w->grid_skin;
}

void cq__world_pair_grid_probe(const cq_world *w, batch *b, int r, const cq_world_op *op)
{
    const grid_keep *keep = &w->grid_rec[b->rec[r].slot];
    if (keep->half.x < 0) {
        b->unprobed++;
        return;
    }
    b->box[r] = cq_aabb_of_obb(&op->pose, cq_v3(0, 0, 0), keep->half); /* as cq__shape_aabb does */
    cq_aabb fat = cq_aabb_fatten(b->box[r], 0.5 * w->settings.skin);
    if (keep->rec.is_static || !cq__world_grid_rec_covers(&keep->rec, &fat))
        b->gchg[b->ngchg++] = r;
}

/* grid_changes for a batch check_all probed whole: only the records it
 * noted as leaving their cells get new records. */
static void grid_changes_probed(const cq_world *w, batch *b)
{
    double half = 0.5 * w->settings.skin;
    int n = 0;
    for (int k = 0; k < b->ngchg; k++) {
        int r = b->gchg[k];
        grid_rec old = w->grid_rec[b->rec[r].slot].rec;
        cq_aabb fat = cq_aabb_fatten(b->box[r], half);
        grid_rec new = cq__world_grid_rec_of(&fat, false, w->grid.present);
        if (!cq__world_grid_rec_same(&old, &new)) {
            b->grec[r] = new;
            b->gchg[n++] = r;
        }
    }
    b->ngchg = n;
    b->boxed = true;
}

/* A changed record's grid record before the batch. */
static grid_rec grid_before(const cq_world *w, const batch *b, int r)
{
    int slot = b->rec[r].slot;
    return slot >= 0 ? w->grid_rec[slot].rec : (grid_rec){.level = GRID_NONE};
}

/* Whether the levels with natives stay among the grid's after batch b
 * (a level that empties stays, costing only its projections): the counts
 * alone, on a copy. */
static bool grid_levels_stay(const cq_world *w, const batch *b)
{
    world_grid c = w->grid;
    for (int k = 0; k < b->ngchg; k++) {
        grid_rec old = grid_before(w, b, b->gchg[k]);
        cq__world_grid_count(&c, &old, -1);
        cq__world_grid_count(&c, &b->grec[b->gchg[k]], +1);
    }
    return (cq__world_grid_levels(&c) & ~w->grid.present) == 0;
}

/* The world's grid after batch b, if it can tell: the batch's changes are
 * entered in it (b->gridded), *bound set and true. A level that would
 * come or go (every projection moves) leaves the grid as it was, for the
 * commit to make again; a counter that would overflow turns it off. */
static bool kept_bound(cq_world *w, batch *b, const cq_world_op *ops, long long *bound)
{
    if (b->probing && b->unprobed == 0)
        grid_changes_probed(w, b);
    else
        grid_changes(w, b, ops);
    if (!grid_levels_stay(w, b))
        return false;
    grid_queue q = {.g = &w->grid};
    for (int k = 0; k < b->ngchg; k++) {
        int r = b->gchg[k];
        grid_rec old = grid_before(w, b, r);
        cq__world_grid_change(&q, &old, &b->grec[r]);
    }
    cq__world_grid_flush(&q);
    if (w->grid.overflow) {
        w->grid_on = false; /* partly entered: only a rebuild knows */
        return false;
    }
    b->gridded = true;
    *bound = cq__world_grid_total(&w->grid);
    return true;
}

void cq__world_pair_grid_undo(cq_world *w, batch *b)
{
    if (!b->gridded)
        return;
    grid_queue q = {.g = &w->grid};
    for (int k = b->ngchg - 1; k >= 0; k--) {
        int r = b->gchg[k];
        grid_rec old = grid_before(w, b, r);
        cq__world_grid_change(&q, &b->grec[r], &old);
    }
    cq__world_grid_flush(&q);
    w->grid_on &= !w->grid.overflow;
    b->gridded = false;
}

/* The world's overlaps as they are, up to one past stop, into *count. */
static int world_overlaps(const cq_world *w, long stop, long *count)
{
    *count = 0;
    if (w->count < 2)
        return CQ_OK;
    cap_item *it = cq_alloc((size_t)w->count * sizeof *it);
    if (!it)
        return CQ_ENO_MEMORY;
    int k = final_items(w, NULL, NULL, w->settings.skin, it);
    int rc = exact_count(it, k, stop, count);
    cq_free(it, (size_t)w->count * sizeof *it);
    return rc;
}

/* Final items it[0..k) past the cap are refused unless the world has as
 * many overlaps already (a world above a lowered cap may change, not
 * grow). Counting the world stops at the cap unless it is above it. */
static int growth_check(const cq_world *w, const cap_item *it, int k, long cap)
{
    long before, after = 0;
    int rc = world_overlaps(w, cap, &before);
    if (rc == CQ_OK && before > cap)
        rc = world_overlaps(w, LONG_MAX - 1, &before);
    if (rc == CQ_OK && before > cap)
        rc = exact_count(it, k, before, &after);
    if (rc != CQ_OK)
        return rc;
    return before <= cap || after > before ? CQ_ELIMIT : CQ_OK;
}

/* The bound, then if need be the count, over the final items: CQ_OK,
 * CQ_ELIMIT or CQ_ENO_MEMORY. */
static int count_check(const cq_world *w, const batch *b, const cq_world_op *ops, double skin, int n, long cap)
{
    cap_item *it = cq_alloc((size_t)n * sizeof *it);
    if (!it)
        return CQ_ENO_MEMORY;
    int k = final_items(w, b, ops, skin, it);
    long after = 0;
    int rc = scratch_bound(it, k, cap) <= cap ? CQ_OK : exact_count(it, k, cap, &after);
    if (rc == CQ_OK && after > cap)
        rc = growth_check(w, it, k, cap);
    cq_free(it, (size_t)n * sizeof *it);
    return rc;
}

/* The cap in force for a world holding now pairs: above the cap already,
 * only growth is refused. */
static long cap_for(const cq_world *w, long cap)
{
    long now = cq__sap_pair_count(w->sap);
    return cap > 0 && now > cap ? now : cap;
}

int cq__world_check_pair_cap(cq_world *w, batch *b, const cq_world_op *ops, double skin, long cap)
{
    cap = cap_for(w, cap);
    int n = w->count;
    for (int r = 0; r < b->n; r++)
        n += (b->rec[r].slot < 0 && b->rec[r].present) - (b->rec[r].slot >= 0 && !b->rec[r].present);
    /* a kept grid takes the batch even when the cap is out of its reach,
     * so that the commit need not make it again */
    long long bound;
    bool known = cq__world_pair_grid_live(w, NULL) && skin == w->grid_skin && kept_bound(w, b, ops, &bound);
    if (!cap_reachable(cap, n) || (known && bound <= cap))
        return CQ_OK;
    int rc = count_check(w, b, ops, skin, n, cap);
    if (rc != CQ_OK)
        cq__world_pair_grid_undo(w, b);
    return rc;
}

int cq__world_check_skin_pairs(const cq_world *w, double skin, long cap)
{
    cap = cap_for(w, cap);
    return cap_reachable(cap, w->count) ? count_check(w, NULL, NULL, skin, w->count, cap) : CQ_OK;
}

/* The grid made afresh from the world's boxes; off when out of memory or
 * too many levels make it costly (the checks then count). */
static void grid_rebuild(cq_world *w)
{
    cq__world_pair_grid_drop(w);
    size_t size = (size_t)w->cap * sizeof *w->grid_rec;
    w->grid_rec = cq_alloc(size);
    if (!w->grid_rec)
        return;
    w->grid_rec_cap = w->cap;
    for (int slot = 0; slot < w->cap; slot++) {
        w->grid_rec[slot].rec = (grid_rec){.level = GRID_NONE};
        if (w->names[slot].alive) {
            cq_aabb box = cq__world_sap_box(w, slot);
            w->grid_rec[slot].rec = cq__world_grid_rec_of(&box, world_static_type(w->e[slot].body.shape.type), 0);
            cq__world_pair_grid_shape(w, slot);
        }
        cq__world_grid_count(&w->grid, &w->grid_rec[slot].rec, +1);
    }
    uint64_t present = cq__world_grid_levels(&w->grid);
    long cells = 0, most = GRID_CELLS_MAX * (long)w->count;
    for (int slot = 0; slot < w->cap && cells <= most; slot++)
        cells += cq__world_grid_rec_cells(&w->grid_rec[slot].rec, present);
    /* twice the cells: the table grows only when the world does */
    if (cells > most || !cq__world_grid_table_alloc(&w->grid, 2 * cells, present)) {
        cq__world_pair_grid_drop(w);
        return;
    }
    for (int slot = 0; slot < w->cap; slot++)
        cq__world_grid_enter(&w->grid, &w->grid_rec[slot].rec, +1);
    w->grid_skin = w->settings.skin;
    w->grid_on = !w->grid.overflow;
}

void cq__world_pair_grid_drop(cq_world *w)
{
    cq__world_grid_free(&w->grid);
    cq_free(w->grid_rec, (size_t)w->grid_rec_cap * sizeof *w->grid_rec);
    w->grid_rec = NULL;
    w->grid_rec_cap = 0;
    w->grid_on = false;
}

bool cq__world_pair_grid_live(const cq_world *w, const batch *b)
{
    return w->grid_on && w->grid_rec_cap >= w->cap && (!b || b->gridded);
}

void cq__world_pair_grid_shape(cq_world *w, int slot)
{
    const cq_shape *s = &w->e[slot].body.shape;
    w->grid_rec[slot].half = s->type == CQ_BOX ? s->box.half : cq_v3(-1, -1, -1);
}

void cq__world_pair_grid_records(cq_world *w, const batch *b)
{
    for (int k = 0; k < b->ngchg; k++) {
        int r = b->gchg[k];
        if (b->rec[r].slot >= 0)
            w->grid_rec[b->rec[r].slot].rec = b->grec[r];
    }
}

void cq__world_pair_grid_sync(cq_world *w)
{
    if (!cap_reachable(w->settings.max_pairs, w->count))
        cq__world_pair_grid_drop(w);
    else if (!w->grid_on || w->grid_skin != w->settings.skin || w->grid_rec_cap < w->cap)
        grid_rebuild(w);
}

void cq__world_pair_grid_finish(cq_world *w, bool live)
{
    /* a level came (every projection moves), a counter overflowed or the
     * table filled: made afresh (or dropped, the cap out of reach) */
    w->grid_on &= live && (cq__world_grid_levels(&w->grid) & ~w->grid.present) == 0 && !w->grid.overflow &&
                  w->grid.cells <= (long)w->grid.slots;
    cq__world_pair_grid_sync(w);
}

/* Whether slot's record is right for its box: none for a free slot, and
 * else wide (meeting every other) or with cells that hold the box. */
static bool audit_rec(const cq_world *w, int slot)
{
    const grid_rec *r = &w->grid_rec[slot].rec;
    if (!w->names[slot].alive)
        return r->level == GRID_NONE;
    cq_aabb box = cq__world_sap_box(w, slot);
    const cq_shape *s = &w->e[slot].body.shape;
    cq_vec3 half = w->grid_rec[slot].half;
    bool kept = s->type == CQ_BOX ? half.x == s->box.half.x && half.y == s->box.half.y && half.z == s->box.half.z
                                  : half.x < 0;
    return kept && r->level != GRID_NONE && r->is_static == world_static_type(s->type) &&
           (r->level == GRID_WIDE || cq__world_grid_rec_covers(r, &box));
}

bool cq__world_pair_grid_audit(const cq_world *w, long long *bound)
{
    if (!w->grid_on || w->grid_rec_cap < w->cap)
        return false;
    world_grid fresh = {0};
    bool ok = cq__world_grid_table_alloc(&fresh, (long)w->grid.slots, w->grid.present) && fresh.slots == w->grid.slots;
    for (int slot = 0; ok && slot < w->cap; slot++) {
        ok = audit_rec(w, slot);
        cq__world_grid_count(&fresh, &w->grid_rec[slot].rec, +1);
        cq__world_grid_enter(&fresh, &w->grid_rec[slot].rec, +1);
    }
    ok = ok && !fresh.overflow && fresh.sum == w->grid.sum && fresh.cells == w->grid.cells &&
         fresh.items == w->grid.items && fresh.dynamics == w->grid.dynamics && fresh.wide_d == w->grid.wide_d &&
         fresh.wide_s == w->grid.wide_s && (cq__world_grid_levels(&fresh) & ~w->grid.present) == 0 &&
         memcmp(fresh.table, w->grid.table, fresh.slots * sizeof *fresh.table) == 0;
    *bound = cq__world_grid_total(&w->grid);
    cq__world_grid_free(&fresh);
    return ok;
}

bool cq__world_pair_grid_counts(const cq_world *w, int a, int b)
{
    return w->grid_on && cq__world_grid_recs_meet(&w->grid_rec[a].rec, &w->grid_rec[b].rec, w->grid.present);
}
