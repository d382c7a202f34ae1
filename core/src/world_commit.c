/* The commit of a prepared batch (world_batch.c checked it and made room):
 * nothing here can fail or allocate, bar the broadphase's pair storage
 * (cq__world_finish). Each step costs what the batch touches, not the world:
 * records are visited with their entries prefetched, and the id order
 * takes a new id as a new slot (order_new) and a removed one as a hole, settled
 * (merged, renumbered) once they are many or a mutation needs the ranks. */
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

/* Merges the sorted live slots of order (holes skipped) and of p into t;
 * returns how many. The names the comparisons read are fetched ahead: a
 * settle reads every member's, far apart. */
static int merge_order(const cq_world *w, const int32_t *p, int np, int32_t *t)
{
    int i = 0, j = 0, n = 0;
    while (i < w->order_n || j < np) {
        if (i < w->order_n && w->order[i] < 0) {
            i++;
            continue;
        }
        if (i + 16 < w->order_n && w->order[i + 16] >= 0)
            world_prefetch(&w->names[w->order[i + 16]]);
        bool old = j == np || (i < w->order_n && id_less(&w->order[i], &p[j], w));
        t[n++] = old ? w->order[i++] : p[j++];
    }
    return n;
}

/* An id's first eight bytes, big-endian, zero-padded: keys compare as
 * the ids' prefixes do (no id holds a zero byte). */
static uint64_t id_prefix(const world_name *n)
{
    uint64_t k = 0;
    for (int b = 0; b < 8; b++)
        k = k << 8 | (b < n->id_len ? (unsigned char)n->id[b] : 0u);
    return k;
}

/* Sorts the n new slots by id: by their prefixes first, in an array of
 * their own (a sort by strcmp reads two names far apart per comparison:
 * most of a settle after many single inserts), then each run of equal
 * prefixes by strcmp. */
static void sort_new(cq_world *w, int n)
{
    world_key *k = w->order_keys;
    for (int i = 0; i < n; i++)
        k[i] = (world_key){id_prefix(&w->names[w->order_new[i]]), w->order_new[i]};
    cq__world_sort_keys(k, n);
    for (int i = 0; i < n; i++)
        w->order_new[i] = k[i].index;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && k[j].key == k[i].key;)
            j++;
        if (j - i > 1)
            cq__world_heapsort(&w->order_new[i], (size_t)(j - i), sizeof *w->order_new, id_less, w);
    }
}

void cq__world_settle(cq_world *w)
{
    int np = 0;
    for (int k = 0; k < w->order_new_n; k++)
        if (w->order_new[k] >= 0)
            w->order_new[np++] = w->order_new[k];
    sort_new(w, np);
    int n = merge_order(w, w->order_new, np, w->order_tmp);
    int32_t *t = w->order;
    w->order = w->order_tmp;
    w->order_tmp = t;
    w->order_n = n;
    w->order_new_n = 0;
    w->holes = 0;
    for (int k = 0; k < n; k++)
        w->rank[w->order[k]] = k;
}

/* Takes a removed slot out of the id order: its entry becomes a hole. */
static void order_drop(cq_world *w, int slot)
{
    int32_t r = w->rank[slot];
    if (r >= 0)
        w->order[r] = -1;
    else
        w->order_new[-r - 1] = -1;
    w->holes++;
}

/* Adds a new slot to the id order's new ones (settling first when
 * they fill their array, which holes can make happen). */
static void order_add(cq_world *w, int slot)
{
    if (w->order_new_n == w->cap)
        cq__world_settle(w);
    w->rank[slot] = -(w->order_new_n + 1);
    w->order_new[w->order_new_n++] = slot;
}

/* Settles the order once the changes since the last settle pass a quarter
 * of it: each costs O(1) and the settle O(n + p log p), amortised. */
static void order_upkeep(cq_world *w)
{
    int changes = w->order_new_n + w->holes;
    if (changes > 64 && changes > w->order_n / 4)
        cq__world_settle(w);
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
        w->names[slot].alive = false;
        w->free_slots[w->free_n++] = slot;
        order_drop(w, slot);
    }
    w->count -= k;
    return true;
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
        order_add(w, slot);
        nfresh++;
    }
    w->count += nfresh;
    return nfresh > 0;
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
    order_upkeep(w);
    members |= came;
    cq__batch_free_owned(b, nc, nf);
    w->sap_dirty |= members || moved;
    cq__world_finish(w, moved, members);
}
