/* The commit of a prepared batch (world_batch.c checked it and made room):
 * nothing here can fail or allocate, bar the broadphase's pair storage
 * (cq__world_finish). Each step costs what the batch touches, not the world:
 * records are visited with their entries prefetched, the id order takes
 * new and removed ids by binary search and a shift (a merge only when
 * many come at once), and the ranks are left to cq__world_renumber. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "world_batch.h"

/* Smallest half-width, the CCD threshold: for a hull the distance from its
 * centroid to the nearest face plane (no more than half its width in any
 * direction), plus the rounding radius. Triangles are flat; planes are static. */
static double min_half_width(const cq_shape *s)
{
    switch (s->type) {
    case CQ_SPHERE:
        return s->sphere.radius;
    case CQ_CAPSULE:
        return s->capsule.radius;
    case CQ_BOX:
        return fmin(s->box.half.x, fmin(s->box.half.y, s->box.half.z));
    case CQ_CONVEX: {
        const cq_hull *h = s->convex.hull;
        double inner = h->dim == 3 ? INFINITY : 0;
        for (int f = 0; h->dim == 3 && f < h->face_count; f++)
            inner = fmin(inner, h->faces[f].offset - cq_dot(h->faces[f].normal, h->centroid));
        return fmax(inner, 0) + h->radius;
    }
    case CQ_TRIANGLE:
    case CQ_MESH:
    case CQ_PLANE:
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return 0;
}

/* Stores the record's shape, pose and velocity; box, when not NULL, is
 * the box the pair cap's check computed for them (the same bits). */
static void set_body(cq_world *w, int slot, const batch_rec *rec, const cq_world_op *ops, const cq_aabb *box)
{
    world_entry *e = &w->e[slot];
    if (rec->upsert >= 0) {
        const cq_world_op *op = &ops[rec->upsert];
        e->body.shape = op->shape;
        cq_shape_validate(&e->body.shape); /* normalises a plane's normal, as the check did */
        e->body.layer = op->layer;
        e->body.mask = op->mask;
        e->min_half = min_half_width(&e->body.shape);
    }
    if (rec->pose >= 0)
        e->body.pose = ops[rec->pose].pose;
    if (rec->vel >= 0)
        e->body.velocity = ops[rec->vel].velocity;
    e->box = box ? *box : cq__shape_aabb(&e->body.shape, &e->body.pose);
}

/* Updates the surviving registrations the batch touched; *members is set
 * when one turned static or dynamic (the BVH then rebuilds). */
static bool commit_updates(cq_world *w, const batch *b, const cq_world_op *ops, bool grid, bool *members)
{
    bool moved = false;
    for (int r = 0; r < b->n; r++) {
        if (r + WORLD_AHEAD < b->n && b->rec[r + WORLD_AHEAD].slot >= 0) {
            /* the lines a move reads and writes: shape, pose, velocity, box */
            const char *p = (const char *)&w->e[b->rec[r + WORLD_AHEAD].slot];
            for (size_t off = 0; off < offsetof(world_entry, min_half); off += 64)
                world_prefetch(p + off);
            world_prefetch(p + offsetof(world_entry, min_half) - 1);
        }
        const batch_rec *rec = &b->rec[r];
        if (rec->slot < 0 || !rec->present || (rec->upsert < 0 && rec->pose < 0 && rec->vel < 0))
            continue;
        cq_world_body *body = &w->e[rec->slot].body;
        bool was_static = world_static_type(body->shape.type);
        set_body(w, rec->slot, rec, ops, b->boxed ? &b->box[r] : NULL);
        if (grid && rec->upsert >= 0)
            cq__world_pair_grid_shape(w, rec->slot);
        bool is_static = world_static_type(body->shape.type);
        cq_aabb box = cq__world_sap_box(w, rec->slot);
        if (was_static != is_static) {
            cq__sap_remove(w->sap, rec->slot);
            cq__sap_insert(w->sap, rec->slot, &box, body->layer, body->mask, is_static);
            *members = true;
        } else {
            cq__sap_move(w->sap, rec->slot, &box);
            if (rec->upsert >= 0)
                cq__sap_set_filter(w->sap, rec->slot, body->layer, body->mask);
        }
        moved = true;
    }
    return moved;
}

static bool id_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    return strcmp(w->names[*(const int32_t *)x].id, w->names[*(const int32_t *)y].id) < 0;
}

/* The first position of the id order whose id is not below id. */
static int order_bound(const cq_world *w, const char *id)
{
    int lo = 0, hi = w->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(w->names[w->order[mid]].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A few changes go in by binary search, many by one pass over the order. */
static bool few(const cq_world *w, int k) { return (long)k * 32 <= w->count; }

static bool pos_less(const void *x, const void *y, const void *ctx)
{
    (void)ctx;
    return *(const int32_t *)x < *(const int32_t *)y;
}

/* Drops the removed slots from the id order: their positions found by
 * binary search (the names still hold the ids), then the gaps closed. */
static void order_remove(cq_world *w, batch *b, int k, int before)
{
    if (!few(w, k)) {
        int n = 0;
        for (int i = 0; i < before; i++)
            if (w->names[w->order[i]].alive)
                w->order[n++] = w->order[i];
        return;
    }
    for (int j = 0; j < k; j++)
        b->pos[j] = order_bound(w, w->names[b->fresh[j]].id);
    cq__world_heapsort(b->pos, (size_t)k, sizeof *b->pos, pos_less, NULL);
    for (int j = 0; j < k; j++) {
        int from = b->pos[j] + 1, to = j + 1 < k ? b->pos[j + 1] : before;
        memmove(&w->order[b->pos[j] - j], &w->order[from], (size_t)(to - from) * sizeof *w->order);
    }
}

/* Drops the removed registrations; true if there were any. */
static bool commit_removals(cq_world *w, batch *b)
{
    int k = 0;
    for (int r = 0; r < b->n; r++) {
        int slot = b->rec[r].slot;
        if (slot >= 0 && !b->rec[r].present)
            b->fresh[k++] = slot;
    }
    if (k == 0)
        return false;
    for (int j = 0; j < k; j++) {
        int slot = b->fresh[j];
        cq__world_table_drop(w, slot);
        cq__sap_remove(w->sap, slot);
        w->names[slot].alive = false; /* the id stays, for order_remove's search */
        w->free_slots[w->free_n++] = slot;
    }
    order_remove(w, b, k, w->count);
    w->count -= k;
    return true;
}

/* Merges the k new slots b->fresh (sorted by id) into the id order. */
static void order_insert(cq_world *w, batch *b, int k)
{
    if (!few(w, k)) {
        int i = 0, j = 0, n = 0;
        while (i < w->count || j < k) {
            bool old = j == k || (i < w->count && id_less(&w->order[i], &b->fresh[j], w));
            w->order_tmp[n++] = old ? w->order[i++] : b->fresh[j++];
        }
        int32_t *t = w->order;
        w->order = w->order_tmp;
        w->order_tmp = t;
        return;
    }
    for (int j = 0; j < k; j++)
        b->pos[j] = order_bound(w, w->names[b->fresh[j]].id);
    int end = w->count; /* from the back: each old run moves once */
    for (int j = k - 1; j >= 0; j--) {
        memmove(&w->order[b->pos[j] + j + 1], &w->order[b->pos[j]], (size_t)(end - b->pos[j]) * sizeof *w->order);
        w->order[b->pos[j] + j] = b->fresh[j];
        end = b->pos[j];
    }
}

/* Registers the new ids and puts them in the id order; true if there
 * were any. */
static bool commit_inserts(cq_world *w, batch *b, const cq_world_op *ops, bool grid)
{
    int nfresh = 0;
    for (int r = 0; r < b->n; r++) {
        const batch_rec *rec = &b->rec[r];
        if (rec->slot >= 0 || !rec->present)
            continue;
        int slot = w->free_slots[--w->free_n];
        world_name *n = &w->names[slot];
        n->generation = n->generation + 1 ? n->generation + 1 : 1;
        n->alive = true;
        n->id_len = (uint8_t)rec->id_len;
        memcpy(n->id, rec->id, (size_t)rec->id_len);
        n->id[rec->id_len] = '\0';
        set_body(w, slot, rec, ops, b->boxed ? &b->box[r] : NULL);
        cq__world_table_put(w, slot, rec->hash);
        cq_aabb box = cq__world_sap_box(w, slot);
        world_entry *e = &w->e[slot];
        cq__sap_insert(w->sap, slot, &box, e->body.layer, e->body.mask, world_static_type(e->body.shape.type));
        if (grid) { /* the check entered it: a new record is always a change */
            w->grid_rec[slot].rec = b->grec[r];
            cq__world_pair_grid_shape(w, slot);
        }
        b->fresh[nfresh++] = slot;
    }
    if (nfresh == 0)
        return false;
    cq__world_heapsort(b->fresh, (size_t)nfresh, sizeof *b->fresh, id_less, w);
    order_insert(w, b, nfresh);
    w->count += nfresh;
    return true;
}

void cq__batch_commit(cq_world *w, batch *b, const cq_world_op *ops, int nc, int nf)
{
    bool grid = cq__world_pair_grid_live(w, b);
    if (grid) /* before the inserts, which may take a removed slot */
        cq__world_pair_grid_records(w, b);
    bool gone = commit_removals(w, b), members = gone;
    bool moved = commit_updates(w, b, ops, grid, &members);
    bool came = commit_inserts(w, b, ops, grid);
    cq__world_pair_grid_finish(w, grid);
    w->ranks_stale |= gone || came;
    members |= came;
    cq__batch_free_owned(b, nc, nf);
    w->sap_dirty |= members || moved;
    cq__world_finish(w, moved, members);
}
