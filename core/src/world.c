/* The world's lifecycle and registry: slot storage (one block, grown only
 * inside mutations), the id hash, read accessors, the broadphase pairs
 * listing, and the upkeep every mutation ends with (broadphase update, pair
 * cache cleanup, BVH refit or rebuild). Batches are in world_batch.c. */
#include <math.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/gjk.h"
#include "cq/mesh.h"
#include "cq/sweep.h"
#include "world_internal.h"

/* A refit tree is rebuilt once its SAH cost passes this multiple of the cost
 * right after its build. */
#define BVH_DEGRADED 1.5

cq_world_settings cq__world_settings_resolve(const cq_world_settings *s)
{
    cq_world_settings r = s ? *s : (cq_world_settings){0};
    if (r.capacity <= 0)
        r.capacity = CQ_WORLD_DEFAULT_CAPACITY;
    /* The defaults are filled in, not left as 0: settings read back say
     * what is in force. */
    if (r.gjk_max_iterations <= 0)
        r.gjk_max_iterations = CQ_GJK_DEFAULT_MAX_ITERATIONS;
    if (r.epa_max_iterations <= 0)
        r.epa_max_iterations = CQ_EPA_DEFAULT_MAX_ITERATIONS;
    if (r.sweep_max_iterations <= 0)
        r.sweep_max_iterations = CQ_SWEEP_DEFAULT_MAX_ITERATIONS;
    return r;
}

static int check_settings(const cq_world_settings *s)
{
    if (!isfinite(s->skin))
        return CQ_ENOT_FINITE;
    if (s->skin < 0)
        return CQ_ENEGATIVE;
    return s->capacity > CQ_WORLD_MAX_SHAPES ? CQ_ERANGE : CQ_OK;
}

/* The common case in one pass with one branch: a NaN or an infinity
 * anywhere makes the sum NaN or infinite, and a sum within the tolerance
 * puts every term within it. A pose that fails is examined again, rule by
 * rule, for the one it breaks (or passes there: the sum is the stricter). */
static bool pose_plainly_valid(const cq_xform *x)
{
    const cq_vec3 *c = x->r.c;
    double dev = fabs(cq_dot(c[0], c[0]) - 1) + fabs(cq_dot(c[1], c[1]) - 1) + fabs(cq_dot(c[2], c[2]) - 1) +
                 fabs(cq_dot(c[0], c[1])) + fabs(cq_dot(c[0], c[2])) + fabs(cq_dot(c[1], c[2])) +
                 (x->p.x - x->p.x) + (x->p.y - x->p.y) + (x->p.z - x->p.z);
    return dev <= 1e-9 && cq_det(&x->r) > 0;
}

int cq__world_check_pose(const cq_xform *x)
{
    if (pose_plainly_valid(x))
        return CQ_OK;
    if (!cq_v3_finite(x->p) || !cq_v3_finite(x->r.c[0]) || !cq_v3_finite(x->r.c[1]) || !cq_v3_finite(x->r.c[2]))
        return CQ_ENOT_FINITE;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            if (fabs(cq_dot(x->r.c[i], x->r.c[j]) - (i == j)) > 1e-9)
                return i == j ? CQ_ENOT_UNIT : CQ_ENOT_ORTHOGONAL;
    return cq_det(&x->r) > 0 ? CQ_OK : CQ_EMIRROR;
}

/* ---- slot storage ---- */

static uint32_t table_size(int cap)
{
    uint32_t t = 16;
    while (t < 2u * (uint32_t)cap) /* load <= 1/2 */
        t <<= 1;
    return t;
}

static size_t slots_layout(world_slots *s, char *base, int cap)
{
    size_t at = 0, n = (size_t)cap;
    s->e = world_carve(base, &at, n, sizeof *s->e);
    s->names = world_carve(base, &at, n, sizeof *s->names);
    s->free_slots = world_carve(base, &at, n, sizeof *s->free_slots);
    s->order = world_carve(base, &at, n, sizeof *s->order);
    s->order_new = world_carve(base, &at, n, sizeof *s->order_new);
    s->order_tmp = world_carve(base, &at, n, sizeof *s->order_tmp);
    s->order_keys = world_carve(base, &at, n, sizeof *s->order_keys);
    s->rank = world_carve(base, &at, n, sizeof *s->rank);
    s->bvh_slot = world_carve(base, &at, n, sizeof *s->bvh_slot);
    s->bvh_box = world_carve(base, &at, n, sizeof *s->bvh_box);
    s->table = world_carve(base, &at, table_size(cap), sizeof *s->table);
    return at;
}

int cq__world_slots_alloc(world_slots *s, int cap)
{
    memset(s, 0, sizeof *s);
    s->size = slots_layout(s, NULL, cap) + 64;
    s->block = cq_alloc(s->size);
    if (!s->block)
        return CQ_ENO_MEMORY;
    slots_layout(s, (char *)(((uintptr_t)s->block + 63) & ~(uintptr_t)63), cap);
    s->cap = cap;
    s->table_mask = table_size(cap) - 1;
    memset(s->e, 0, (size_t)cap * sizeof *s->e);
    memset(s->names, 0, (size_t)cap * sizeof *s->names);
    for (int k = 0; k < cap; k++)
        s->names[k].mark = -1;
    memset(s->table, 0xff, ((size_t)s->table_mask + 1) * sizeof *s->table);
    return CQ_OK;
}

void cq__world_slots_free(world_slots *s)
{
    cq_free(s->block, s->size);
    s->block = NULL;
}

static void slots_take(cq_world *w, const world_slots *s)
{
    w->slot_block = s->block;
    w->slot_block_size = s->size;
    w->cap = s->cap;
    w->e = s->e;
    w->names = s->names;
    w->free_slots = s->free_slots;
    w->order = s->order;
    w->order_new = s->order_new;
    w->order_tmp = s->order_tmp;
    w->order_keys = s->order_keys;
    w->rank = s->rank;
    w->bvh_slot = s->bvh_slot;
    w->bvh_box = s->bvh_box;
    w->table = s->table;
    w->table_mask = s->table_mask;
}

int cq__world_table_find(const cq_world *w, const char *id, size_t len)
{
    return cq__world_table_find_hashed(w, id, len, world_id_hash(id, len));
}

/* a[0..len) == b[0..len), a word at a time: ids are short, and the call
 * to memcmp cost more than the comparison (a tick's batch looks up every
 * shape's id). */
static bool id_equal(const char *a, const char *b, size_t len)
{
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        if (x != y)
            return false;
    }
    for (; k < len; k++)
        if (a[k] != b[k])
            return false;
    return true;
}

int cq__world_table_find_hashed(const cq_world *w, const char *id, size_t len, uint32_t hash)
{
    for (uint32_t h = hash & w->table_mask;; h = (h + 1) & w->table_mask) {
        world_cell c = w->table[h];
        if (c.slot < 0)
            return -1;
        const world_name *n = &w->names[c.slot];
        if (c.hash == hash && n->id_len == len && id_equal(n->id, id, len))
            return c.slot;
    }
}

void cq__world_table_put(cq_world *w, int slot, uint32_t hash)
{
    uint32_t h = hash & w->table_mask;
    while (w->table[h].slot >= 0)
        h = (h + 1) & w->table_mask;
    w->table[h] = (world_cell){slot, hash};
}

/* Linear probing delete by backward shift: entries after the hole that
 * would no longer be reachable move into it. */
void cq__world_table_drop(cq_world *w, int slot)
{
    uint32_t m = w->table_mask, h = world_id_hash(w->names[slot].id, w->names[slot].id_len) & m;
    while (w->table[h].slot != slot)
        h = (h + 1) & m;
    for (uint32_t j = (h + 1) & m; w->table[j].slot >= 0; j = (j + 1) & m) {
        uint32_t home = w->table[j].hash & m;
        if (((j - home) & m) >= ((j - h) & m)) { /* home at or before the hole: move */
            w->table[h] = w->table[j];
            h = j;
        }
    }
    w->table[h] = (world_cell){-1, 0};
}

/* Moves the world into grown storage s (allocated for s->cap > w->cap). */
void cq__world_slots_adopt(cq_world *w, world_slots *s)
{
    memcpy(s->e, w->e, (size_t)w->cap * sizeof *w->e);
    memcpy(s->names, w->names, (size_t)w->cap * sizeof *w->names);
    memcpy(s->order, w->order, (size_t)w->order_n * sizeof *w->order);
    memcpy(s->order_new, w->order_new, (size_t)w->order_new_n * sizeof *w->order_new);
    memcpy(s->rank, w->rank, (size_t)w->cap * sizeof *w->rank);
    memcpy(s->bvh_slot, w->bvh_slot, (size_t)w->bvh_count * sizeof *w->bvh_slot);
    memcpy(s->bvh_box, w->bvh_box, (size_t)w->bvh_count * sizeof *w->bvh_box);
    int n = 0; /* new slots at the bottom of the stack, the old free ones above */
    for (int k = s->cap - 1; k >= w->cap; k--)
        s->free_slots[n++] = k;
    memcpy(s->free_slots + n, w->free_slots, (size_t)w->free_n * sizeof *w->free_slots);
    int free_n = n + w->free_n;
    cq_free(w->slot_block, w->slot_block_size);
    slots_take(w, s);
    w->free_n = free_n;
    for (int k = 0; k < world_member_span(w); k++) {
        int slot = world_member(w, k);
        if (slot >= 0)
            cq__world_table_put(w, slot, world_id_hash(w->names[slot].id, w->names[slot].id_len));
    }
    w->stats.grows++;
    s->block = NULL;
}

/* ---- lifecycle ---- */

int cq_world_create(const cq_world_settings *settings, cq_world **out)
{
    *out = NULL;
    cq_world_settings s = cq__world_settings_resolve(settings);
    int rc = check_settings(&s);
    if (rc != CQ_OK)
        return rc;
    cq_world *w = cq_alloc(sizeof *w);
    if (!w)
        return CQ_ENO_MEMORY;
    memset(w, 0, sizeof *w);
    w->settings = s;
    world_slots slots;
    if (cq__world_slots_alloc(&slots, s.capacity) != CQ_OK || cq__sap_create(s.capacity, &w->sap) != CQ_OK ||
        cq__world_batch_reserve(w, s.capacity) != CQ_OK || cq__world_contacts_reserve(w) != CQ_OK) {
        cq__world_slots_free(&slots);
        cq__sap_destroy(w->sap);
        cq__world_batch_release(w);
        cq__world_contacts_release(w);
        cq_free(w, sizeof *w);
        return CQ_ENO_MEMORY;
    }
    slots_take(w, &slots);
    for (int k = 0; k < w->cap; k++)
        w->free_slots[k] = w->cap - 1 - k;
    w->free_n = w->cap;
    w->bvh_valid = true;
    *out = w;
    return CQ_OK;
}

void cq__world_owned_free(cq_shape_type t, const void *block)
{
    if (t == CQ_CONVEX)
        cq_hull_free((cq_hull *)block);
    else if (t == CQ_MESH)
        cq_mesh_free((cq_mesh *)block);
}

void cq_world_destroy(cq_world *w)
{
    if (!w)
        return;
    for (int slot = 0; slot < w->cap; slot++)
        if (w->names[slot].alive)
            cq__world_owned_free(w->e[slot].body.shape.type, world_owned(&w->e[slot].body.shape));
    cq__sap_destroy(w->sap);
    cq__world_pair_grid_drop(w);
    cq__bvh_free(&w->bvh);
    cq__world_batch_release(w);
    cq__world_contacts_release(w);
    cq_free(w->slot_block, w->slot_block_size);
    cq_free(w, sizeof *w);
}

cq_world_settings cq_world_get_settings(const cq_world *w) { return w->settings; }

cq_aabb cq__world_sap_box(const cq_world *w, int slot) { return cq_aabb_fatten(w->e[slot].box, 0.5 * w->settings.skin); }

int cq_world_check_pair_cap(const cq_world *w, const cq_world_settings *settings)
{
    cq_world_settings s = cq__world_settings_resolve(settings);
    /* Only a wider skin adds pairs: a lower cap alone never refuses (the
     * world keeps what it holds and may not grow past it). */
    if (s.skin <= w->settings.skin)
        return CQ_OK;
    return cq__world_check_skin_pairs(w, s.skin, s.max_pairs);
}

int cq_world_configure(cq_world *w, const cq_world_settings *settings)
{
    cq__world_no_pending(w);
    cq_world_settings s = cq__world_settings_resolve(settings);
    int rc = check_settings(&s);
    if (rc != CQ_OK)
        return rc;
    rc = cq_world_check_pair_cap(w, &s);
    if (rc != CQ_OK)
        return rc;
    /* Compared with the setting, not the storage: cq_world_reserve may have
     * grown the storage for this very call. */
    if (s.capacity > w->settings.capacity) {
        rc = s.capacity > w->cap ? cq__world_grow(w, s.capacity) : CQ_OK;
        if (rc != CQ_OK)
            return rc;
    } else {
        s.capacity = w->settings.capacity;
    }
    bool refatten = s.skin != w->settings.skin;
    w->settings = s;
    for (int k = 0; refatten && k < world_member_span(w); k++) {
        int slot = world_member(w, k);
        if (slot < 0)
            continue;
        cq_aabb box = cq__world_sap_box(w, slot);
        cq__sap_move(w->sap, slot, &box);
        w->sap_dirty = true;
    }
    cq__world_finish(w, false, false);
    cq__world_pair_grid_sync(w); /* a new skin moves every record, a new cap may want none */
    return CQ_OK;
}

void cq_world_set_budget(cq_world *w, const cq_world_budget *budget)
{
    w->budget = budget ? *budget : (cq_world_budget){0};
}

/* The slots the storage grows to for need: doubled (fewer growths), else
 * exactly need when the budget cannot spare the doubling; 0 when it cannot
 * spare that either. The growth is taken from the budget. */
static int grow_target(cq_world *w, int need)
{
    int cap = w->cap;
    while (cap < need)
        cap = cap <= CQ_WORLD_MAX_SHAPES / 2 ? 2 * cap : CQ_WORLD_MAX_SHAPES;
    if (!w->budget.take || w->budget.take(w->budget.ctx, cap - w->cap))
        return cap;
    if (cap > need && w->budget.take(w->budget.ctx, need - w->cap))
        return need;
    return 0;
}

int cq__world_grow(cq_world *w, int need)
{
    if (need > CQ_WORLD_MAX_SHAPES)
        return CQ_ERANGE;
    int cap = grow_target(w, need);
    if (cap == 0)
        return CQ_EBUDGET;
    world_slots s;
    /* The broadphase grows to the same ids now, so inserting later cannot
     * fail (nothing changes if that fails). */
    if (cq__world_slots_alloc(&s, cap) != CQ_OK || cq__sap_reserve(w->sap, cap) != CQ_OK) {
        cq__world_slots_free(&s);
        if (w->budget.give)
            w->budget.give(w->budget.ctx, cap - w->cap);
        return CQ_ENO_MEMORY;
    }
    cq__world_slots_adopt(w, &s);
    return CQ_OK;
}

/* ---- upkeep at the end of every mutation ---- */

int cq__world_sync_broadphase(cq_world *w)
{
    if (!w->sap_dirty && !w->sap_stale)
        return CQ_OK;
    int rc = cq__sap_update_lazy(w->sap); /* contacts sort the pairs when they need them */
    w->sap_dirty = false;
    w->sap_stale = rc != CQ_OK;
    /* Slots of ended pairs start empty when a new pair takes them. */
    for (int k = 0; k < cq__sap_removed_count(w->sap); k++) {
        int slot = cq__sap_removed_at(w->sap, k).slot;
        if (slot < w->cache_cap)
            w->cache[slot] = (world_pair_cache){0};
    }
    return rc;
}

static void bvh_build(cq_world *w)
{
    cq__bvh_free(&w->bvh);
    for (int k = 0; k < w->count; k++) {
        w->bvh_slot[k] = w->order[k];
        w->bvh_box[k] = w->e[w->order[k]].box;
    }
    w->bvh_valid = cq__bvh_build(&w->bvh, w->bvh_box, w->count) == CQ_OK;
    w->bvh_count = w->bvh_valid ? w->count : 0;
    w->bvh_base_cost = cq__bvh_cost(&w->bvh);
    w->stats.bvh_builds += w->bvh_valid;
}

void cq__world_finish(cq_world *w, bool moved, bool members_changed)
{
    cq__world_sync_broadphase(w);
    /* The tree waits for cq_world_refresh: frames of moves need the broadphase, not it. */
    w->bvh_rebuild |= members_changed;
    if (moved || members_changed)
        w->bvh_valid = false;
}

int cq_world_refresh(cq_world *w)
{
    cq__world_no_pending(w);
    if (w->bvh_valid)
        return CQ_OK;
    if (w->bvh_rebuild) {
        cq__world_renumber(w); /* members changed: the queries that follow compare ranks */
        bvh_build(w);
        w->bvh_rebuild = !w->bvh_valid;
        return w->bvh_valid ? CQ_OK : CQ_ENO_MEMORY;
    }
    for (int k = 0; k < w->bvh_count; k++)
        w->bvh_box[k] = w->e[w->bvh_slot[k]].box;
    cq__bvh_refit(&w->bvh, w->bvh_box);
    w->stats.bvh_refits++;
    if (cq__bvh_cost(&w->bvh) > BVH_DEGRADED * w->bvh_base_cost) {
        cq_bvh tree = w->bvh; /* keep the refit tree if the rebuild cannot allocate */
        w->bvh = (cq_bvh){0};
        if (cq__bvh_build(&w->bvh, w->bvh_box, w->bvh_count) == CQ_OK) {
            cq__bvh_free(&tree);
            w->bvh_base_cost = cq__bvh_cost(&w->bvh);
            w->stats.bvh_builds++;
        } else {
            w->bvh = tree;
        }
    }
    w->bvh_valid = true;
    return CQ_OK;
}

void cq__world_renumber(cq_world *w)
{
    if (w->order_new_n > 0 || w->holes > 0)
        cq__world_settle(w);
}

/* ---- reads ---- */

int cq_world_count(const cq_world *w) { return w->count; }

int cq_world_find(const cq_world *w, const char *id, cq_world_handle *out)
{
    size_t len = strlen(id);
    int slot = len >= 1 && len <= CQ_WORLD_ID_MAX ? cq__world_table_find(w, id, len) : -1;
    if (slot < 0)
        return CQ_ENOT_FOUND;
    *out = world_handle(w, slot);
    return CQ_OK;
}

int cq_world_get(const cq_world *w, cq_world_handle h, cq_world_body *out)
{
    if (!world_live(w, h))
        return CQ_ENOT_FOUND;
    *out = w->e[h.index].body;
    return CQ_OK;
}

const char *cq_world_id(const cq_world *w, cq_world_handle h) { return world_live(w, h) ? w->names[h.index].id : NULL; }

static bool handle_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    return strcmp(w->names[((const cq_world_handle *)x)->index].id, w->names[((const cq_world_handle *)y)->index].id) < 0;
}

/* The settled order's live slot at or before *i (moved past the holes), or -1. */
static int order_back(const cq_world *w, int *i)
{
    while (*i >= 0 && w->order[*i] < 0)
        --*i;
    return *i >= 0 ? w->order[*i] : -1;
}

/* The new slots (order_new), sorted, go to the front of out; then both runs are
 * merged from the back, which never overtakes the unread new ones. */
int cq_world_list(const cq_world *w, cq_world_handle *out, int capacity, int *count)
{
    *count = w->count;
    if (w->count > capacity)
        return CQ_ERANGE;
    int p = 0;
    for (int k = 0; k < w->order_new_n; k++)
        if (w->order_new[k] >= 0)
            out[p++].index = (uint32_t)w->order_new[k];
    cq__world_heapsort(out, (size_t)p, sizeof *out, handle_less, w);
    int i = w->order_n - 1, j = p - 1;
    for (int k = w->count - 1; k >= 0; k--) {
        int a = order_back(w, &i);
        bool take_order = j < 0 || (a >= 0 && strcmp(w->names[a].id, w->names[out[j].index].id) > 0);
        out[k] = world_handle(w, take_order ? a : (int)out[j].index);
        if (take_order)
            i--;
        else
            j--;
    }
    return CQ_OK;
}

static bool pair_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    const cq_world_pair *p = x, *q = y;
    if (p->a.index != q->a.index)
        return world_before(w, (int)p->a.index, (int)q->a.index);
    return world_before(w, (int)p->b.index, (int)q->b.index);
}

int cq_world_pairs(const cq_world *w, cq_world_pair *out, int capacity, int *count)
{
    *count = 0;
    if (w->sap_stale)
        return CQ_ENO_MEMORY;
    int n = cq__sap_pair_count(w->sap);
    *count = n;
    if (n > capacity)
        return CQ_ERANGE;
    cq_sap_pair p;
    for (int k = 0, i = 0; k < cq__sap_pair_span(w->sap); k++) { /* in any order: sorted below */
        if (!cq__sap_pair_entry(w->sap, k, &p))
            continue;
        bool swap = world_before(w, p.b, p.a);
        out[i++] = (cq_world_pair){world_handle(w, swap ? p.b : p.a), world_handle(w, swap ? p.a : p.b)};
    }
    cq__world_heapsort(out, (size_t)n, sizeof *out, pair_less, w);
    return CQ_OK;
}

cq_world_stats cq_world_get_stats(const cq_world *w)
{
    cq_world_stats s = w->stats;
    s.shapes = w->count;
    s.capacity = w->cap;
    s.broadphase_pairs = cq__sap_pair_count(w->sap);
    s.sap_grows = cq__sap_get_stats(w->sap).grows;
    s.broadphase_stale = w->sap_stale;
    s.bvh_stale = !w->bvh_valid;
    return s;
}

/* ---- sorting without allocation ---- */

static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
    for (size_t k = 0; k < size; k++) {
        unsigned char t = a[k];
        a[k] = b[k];
        b[k] = t;
    }
}

static void sift_down(unsigned char *base, size_t root, size_t n, size_t size, world_less less, const void *ctx)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && less(base + child * size, base + (child + 1) * size, ctx))
            child++;
        if (!less(base + root * size, base + child * size, ctx))
            return;
        swap_bytes(base + root * size, base + child * size, size);
    }
}

void cq__world_heapsort(void *base, size_t n, size_t size, world_less less, const void *ctx)
{
    unsigned char *b = base;
    for (size_t k = n / 2; k-- > 0;)
        sift_down(b, k, n, size, less, ctx);
    for (size_t end = n; end-- > 1;) {
        swap_bytes(b, b + end * size, size);
        sift_down(b, 0, end, size, less, ctx);
    }
}

static void sift_keys(world_key *k, int root, int n)
{
    for (int child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && k[child].key < k[child + 1].key)
            child++;
        if (k[root].key >= k[child].key)
            return;
        world_key t = k[root];
        k[root] = k[child];
        k[child] = t;
    }
}

void cq__world_sort_keys(world_key *k, int n)
{
    for (int i = n / 2; i-- > 0;)
        sift_keys(k, i, n);
    for (int end = n; end-- > 1;) {
        world_key t = k[0];
        k[0] = k[end];
        k[end] = t;
        sift_keys(k, 0, end);
    }
}
