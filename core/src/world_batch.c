/* Batches: every op is checked first, in order, against a record per
 * touched id (what the earlier ops of the batch made of it), then storage
 * is grown if needed (the last thing that can fail), and only then is the
 * registry changed, which cannot fail. A record is either a registration
 * the world had (its slot) or a new one (found by id in a batch-local hash,
 * which is searched first, so an id removed and upserted again in one batch
 * is a new registration with a new handle). cq_world_prepare does all
 * that can fail and leaves the records in the batch scratch, so that
 * cq_world_commit, later, is the change alone. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "cq/alloc.h"
#include "world_internal.h"

/* What the batch made of one registration. */
typedef struct batch_rec {
    const char *id;  /* new registrations: the op's id (borrowed) */
    int32_t id_len;
    int32_t slot;    /* the world slot it had, -1 for a new registration */
    int32_t upsert;  /* op of the last upsert, -1: the stored shape */
    int32_t pose;    /* op that last set the pose, -1: stored */
    int32_t vel;     /* op that last set the velocity, -1: stored */
    bool present;
} batch_rec;

/* A hull or mesh a shape refers to (see world_owned). */
typedef struct owned_ref {
    const void *block;
    cq_shape_type type; /* picks the free function */
    int32_t op;         /* the upsert that gave it, -1: stored */
} owned_ref;

/* The scratch of one batch, carved from w->batch_block. */
typedef struct batch {
    batch_rec *rec;
    int n;            /* records */
    int32_t *ntable;  /* new registrations by id: record or -1 */
    uint32_t nmask;
    owned_ref *finals; /* hulls and meshes the batch leaves in use */
    owned_ref *cands;  /* hulls and meshes the batch may leave unused */
    int32_t *fresh;   /* slots of new registrations */
} batch;

static uint32_t pow2_above(int n)
{
    uint32_t t = 16;
    while (t < 2u * (uint32_t)n)
        t <<= 1;
    return t;
}

static size_t batch_layout(batch *b, char *base, int ops)
{
    size_t at = 0, n = (size_t)ops;
    b->rec = world_carve(base, &at, n, sizeof *b->rec);
    b->ntable = world_carve(base, &at, pow2_above(ops), sizeof *b->ntable);
    b->finals = world_carve(base, &at, n, sizeof *b->finals);
    b->cands = world_carve(base, &at, 2 * n, sizeof *b->cands);
    b->fresh = world_carve(base, &at, n, sizeof *b->fresh);
    return at;
}

int world_batch_reserve(cq_world *w, int ops)
{
    if (ops <= w->batch_cap)
        return CQ_OK;
    int cap = w->batch_cap > 0 && 2 * w->batch_cap > ops ? 2 * w->batch_cap : ops;
    batch b;
    size_t size = batch_layout(&b, NULL, cap);
    void *block = cq_alloc(size);
    if (!block)
        return CQ_ENO_MEMORY;
    if (w->batch_cap > 0)
        w->stats.grows++;
    world_batch_release(w);
    w->batch_block = block;
    w->batch_block_size = size;
    w->batch_cap = cap;
    return CQ_OK;
}

int cq_world_reserve(cq_world *w, int shapes, int ops)
{
    world_no_pending(w); /* a new batch block would lose the pending records */
    if (shapes < 0 || ops < 0)
        return CQ_ERANGE;
    int rc = world_batch_reserve(w, ops);
    if (rc == CQ_OK && shapes > w->cap)
        rc = world_grow(w, shapes);
    return rc;
}

void world_batch_release(cq_world *w)
{
    cq_free(w->batch_block, w->batch_block_size);
    w->batch_block = NULL;
    w->batch_cap = 0;
}

/* ---- checks ---- */

static int check_id(const char *id, size_t *len)
{
    size_t n = 0;
    for (; n <= CQ_WORLD_ID_MAX && id[n]; n++) {
        char c = id[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == ':' || c == '-';
        if (!ok)
            return CQ_ERANGE;
    }
    *len = n;
    return n >= 1 && n <= CQ_WORLD_ID_MAX ? CQ_OK : CQ_ERANGE;
}

static int check_op(const cq_world_op *op)
{
    int rc;
    switch (op->kind) {
    case CQ_WORLD_UPSERT: {
        cq_shape s = op->shape;
        if ((rc = cq_shape_validate(&s).status) != CQ_OK || (rc = world_check_pose(&op->pose)) != CQ_OK)
            return rc;
        return cq_v3_finite(op->velocity) ? CQ_OK : CQ_ENOT_FINITE;
    }
    case CQ_WORLD_MOVE:
        if ((rc = world_check_pose(&op->pose)) != CQ_OK)
            return rc;
        return op->keep_velocity || cq_v3_finite(op->velocity) ? CQ_OK : CQ_ENOT_FINITE;
    case CQ_WORLD_REMOVE:
        return CQ_OK;
    }
    return CQ_ERANGE;
}

/* ---- records ---- */

/* The new registration's record under id (of world_id_hash hash), or
 * where it would go (-1 - cell). */
static int new_find(const batch *b, const char *id, size_t len, uint32_t hash)
{
    for (uint32_t h = hash & b->nmask;; h = (h + 1) & b->nmask) {
        int r = b->ntable[h];
        if (r < 0)
            return -1 - (int)h;
        if ((size_t)b->rec[r].id_len == len && memcmp(b->rec[r].id, id, len) == 0)
            return r;
    }
}

static int rec_add(batch *b, const char *id, size_t len, int slot)
{
    b->rec[b->n] = (batch_rec){id, (int32_t)len, slot, -1, -1, -1, slot >= 0};
    return b->n++;
}

/* The record op i acts on, or CQ_ENOT_FOUND when there is none to move or
 * remove; *r >= 0 on success. */
static int resolve(cq_world *w, batch *b, const cq_world_op *op, int *r)
{
    int slot, cell = -1;
    size_t len = 0;
    if (op->id) {
        int rc = check_id(op->id, &len);
        if (rc != CQ_OK)
            return rc;
        /* Hashed once for both tables: a batch of 10,000 moves looks up 10,000 ids. */
        uint32_t hash = world_id_hash(op->id, len);
        int found = new_find(b, op->id, len, hash);
        if (found >= 0) {
            *r = found;
            return b->rec[found].present || op->kind == CQ_WORLD_UPSERT ? CQ_OK : CQ_ENOT_FOUND;
        }
        cell = -1 - found;
        slot = world_table_find_hashed(w, op->id, len, hash);
    } else {
        if (op->kind == CQ_WORLD_UPSERT)
            return CQ_ERANGE;
        slot = world_live(w, op->handle) ? (int)op->handle.index : -1;
    }
    if (slot >= 0) {
        if (w->mark[slot] < 0)
            w->mark[slot] = rec_add(b, NULL, 0, slot);
        *r = w->mark[slot];
        if (b->rec[*r].present)
            return CQ_OK;
        if (op->kind != CQ_WORLD_UPSERT || !op->id)
            return CQ_ENOT_FOUND;
    } else if (op->kind != CQ_WORLD_UPSERT) {
        return CQ_ENOT_FOUND;
    }
    *r = rec_add(b, op->id, len, -1); /* a new registration */
    b->ntable[cell] = *r;
    return CQ_OK;
}

static void apply_to_rec(batch_rec *rec, const cq_world_op *op, int i)
{
    switch (op->kind) {
    case CQ_WORLD_UPSERT:
        rec->present = true;
        rec->upsert = rec->pose = rec->vel = i;
        break;
    case CQ_WORLD_MOVE:
        rec->pose = i;
        if (!op->keep_velocity)
            rec->vel = i;
        break;
    case CQ_WORLD_REMOVE:
        rec->present = false;
        break;
    }
}

/* ---- ownership of hulls and meshes ---- */

static bool owned_less(const void *x, const void *y, const void *ctx)
{
    (void)ctx;
    const owned_ref *p = x, *q = y;
    return (uintptr_t)p->block < (uintptr_t)q->block || (p->block == q->block && p->op < q->op);
}

static void add_ref(owned_ref *refs, int *n, const cq_shape *s, int32_t op)
{
    if (world_owned(s))
        refs[(*n)++] = (owned_ref){world_owned(s), s->type, op};
}

/* Collects the blocks the batch leaves in use (sorted) and those it may
 * leave unused; a block in use by two registrations is an error, blamed on
 * the later upsert. Returns the candidate count, or -1 - op. */
static int gather_owned(const cq_world *w, batch *b, const cq_world_op *ops, int count, int *nfinal)
{
    int nf = 0, nc = 0;
    for (int i = 0; i < count; i++) /* every upsert's block, superseded ones too */
        if (ops[i].kind == CQ_WORLD_UPSERT)
            add_ref(b->cands, &nc, &ops[i].shape, i);
    /* A registration the batch keeps (moved, say) holds a block of its own:
     * only a block an upsert brings can clash with it. Without one, a batch
     * of moves reads no stored shape at all. */
    bool brought = nc > 0;
    for (int r = 0; r < b->n; r++) {
        const batch_rec *rec = &b->rec[r];
        bool kept = rec->present && rec->upsert < 0;
        if (rec->slot >= 0 && !kept)
            add_ref(b->cands, &nc, &w->e[rec->slot].body.shape, -1);
        if (rec->slot >= 0 && kept && brought)
            add_ref(b->finals, &nf, &w->e[rec->slot].body.shape, -1);
        else if (rec->present && rec->upsert >= 0)
            add_ref(b->finals, &nf, &ops[rec->upsert].shape, rec->upsert);
    }
    world_heapsort(b->finals, (size_t)nf, sizeof *b->finals, owned_less, NULL);
    for (int k = 1; k < nf; k++)
        if (b->finals[k].block == b->finals[k - 1].block)
            return -1 - b->finals[k].op;
    *nfinal = nf;
    return nc;
}

static bool in_finals(const batch *b, int nf, const void *block)
{
    int lo = 0, hi = nf;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)b->finals[mid].block < (uintptr_t)block)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nf && b->finals[lo].block == block;
}

/* Frees the candidates not in use, each once. */
static void free_owned(batch *b, int nc, int nf)
{
    world_heapsort(b->cands, (size_t)nc, sizeof *b->cands, owned_less, NULL);
    for (int k = 0; k < nc; k++)
        if ((k == 0 || b->cands[k].block != b->cands[k - 1].block) && !in_finals(b, nf, b->cands[k].block))
            world_owned_free(b->cands[k].type, b->cands[k].block);
}

/* ---- commit: nothing below can fail ---- */

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
    default:
        return 0;
    }
}

static void set_body(cq_world *w, int slot, const batch_rec *rec, const cq_world_op *ops)
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
    e->box = cq_shape_aabb(&e->body.shape, &e->body.pose);
}

/* Drops the removed registrations; true if there were any. */
static bool commit_removals(cq_world *w, const batch *b)
{
    int before = w->count;
    for (int r = 0; r < b->n; r++) {
        int slot = b->rec[r].slot;
        if (slot < 0 || b->rec[r].present)
            continue;
        world_table_drop(w, slot);
        cq_sap_remove(w->sap, slot);
        w->e[slot].alive = false;
        w->free_slots[w->free_n++] = slot;
        w->count--;
    }
    if (w->count == before)
        return false;
    int n = 0;
    for (int k = 0; k < before; k++)
        if (w->e[w->order[k]].alive)
            w->order[n++] = w->order[k];
    return true;
}

/* Updates the surviving registrations the batch touched; *members is set
 * when one turned static or dynamic (the BVH then rebuilds). */
static bool commit_updates(cq_world *w, const batch *b, const cq_world_op *ops, bool *members)
{
    bool moved = false;
    for (int r = 0; r < b->n; r++) {
        const batch_rec *rec = &b->rec[r];
        if (rec->slot < 0 || !rec->present || (rec->upsert < 0 && rec->pose < 0 && rec->vel < 0))
            continue;
        cq_world_body *body = &w->e[rec->slot].body;
        bool was_static = world_static_type(body->shape.type);
        set_body(w, rec->slot, rec, ops);
        bool is_static = world_static_type(body->shape.type);
        cq_aabb box = world_sap_box(w, rec->slot);
        if (was_static != is_static) {
            cq_sap_remove(w->sap, rec->slot);
            cq_sap_insert(w->sap, rec->slot, &box, body->layer, body->mask, is_static);
            *members = true;
        } else {
            cq_sap_move(w->sap, rec->slot, &box);
            if (rec->upsert >= 0)
                cq_sap_set_filter(w->sap, rec->slot, body->layer, body->mask);
        }
        moved = true;
    }
    return moved;
}

static bool id_less(const void *x, const void *y, const void *ctx)
{
    const cq_world *w = ctx;
    return strcmp(w->e[*(const int32_t *)x].id, w->e[*(const int32_t *)y].id) < 0;
}

/* Registers the new ids and merges them into the id order. */
static bool commit_inserts(cq_world *w, batch *b, const cq_world_op *ops)
{
    int nfresh = 0;
    for (int r = 0; r < b->n; r++) {
        const batch_rec *rec = &b->rec[r];
        if (rec->slot >= 0 || !rec->present)
            continue;
        int slot = w->free_slots[--w->free_n];
        world_entry *e = &w->e[slot];
        e->generation = e->generation + 1 ? e->generation + 1 : 1;
        e->alive = true;
        e->id_len = (uint8_t)rec->id_len;
        memcpy(e->id, rec->id, (size_t)rec->id_len);
        e->id[rec->id_len] = '\0';
        set_body(w, slot, rec, ops);
        world_table_put(w, slot);
        cq_aabb box = world_sap_box(w, slot);
        cq_sap_insert(w->sap, slot, &box, e->body.layer, e->body.mask, world_static_type(e->body.shape.type));
        b->fresh[nfresh++] = slot;
    }
    if (nfresh == 0)
        return false;
    world_heapsort(b->fresh, (size_t)nfresh, sizeof *b->fresh, id_less, w);
    int i = 0, j = 0, n = 0;
    while (i < w->count || j < nfresh) {
        bool old = j == nfresh || (i < w->count && strcmp(w->e[w->order[i]].id, w->e[b->fresh[j]].id) < 0);
        w->order_tmp[n++] = old ? w->order[i++] : b->fresh[j++];
    }
    int32_t *t = w->order;
    w->order = w->order_tmp;
    w->order_tmp = t;
    w->count = n;
    return true;
}

static void commit(cq_world *w, batch *b, const cq_world_op *ops, int nc, int nf)
{
    bool members = commit_removals(w, b);
    bool moved = commit_updates(w, b, ops, &members);
    members |= commit_inserts(w, b, ops);
    if (members)
        for (int k = 0; k < w->count; k++)
            w->e[w->order[k]].rank = k;
    free_owned(b, nc, nf);
    w->sap_dirty |= members || moved;
    world_finish(w, moved, members);
}

static void unmark(cq_world *w, const batch *b)
{
    for (int r = 0; r < b->n; r++)
        if (b->rec[r].slot >= 0 && b->rec[r].slot < w->cap)
            w->mark[b->rec[r].slot] = -1;
}

/* Checks every op in order against the records; CQ_OK or the failure, with
 * *bad_op set. */
static int check_all(cq_world *w, batch *b, const cq_world_op *ops, int count, int *bad_op)
{
    for (int i = 0; i < count; i++) {
        int r, rc = check_op(&ops[i]);
        if (rc == CQ_OK)
            rc = resolve(w, b, &ops[i], &r);
        if (rc != CQ_OK) {
            *bad_op = i;
            return rc;
        }
        apply_to_rec(&b->rec[r], &ops[i], i);
    }
    return CQ_OK;
}

/* Lays the batch scratch out for count ops, holding records records. */
static void batch_open(cq_world *w, batch *b, int count, int records)
{
    batch_layout(b, w->batch_block, w->batch_cap);
    b->n = records;
    b->nmask = pow2_above(count) - 1;
}

void world_no_pending(cq_world *w)
{
    assert(!w->pending.on && "a prepared batch must be committed or abandoned first");
    w->pending.on = false;
}

int cq_world_prepare(cq_world *w, const cq_world_op *ops, int count, int *bad_op)
{
    world_no_pending(w);
    *bad_op = -1;
    if (count < 0 || (count > 0 && !ops))
        return CQ_ERANGE;
    int rc = world_batch_reserve(w, count);
    if (rc != CQ_OK)
        return rc;
    batch b;
    batch_open(w, &b, count, 0);
    memset(b.ntable, 0xff, ((size_t)b.nmask + 1) * sizeof *b.ntable);
    int nf = 0, nc = 0;
    rc = check_all(w, &b, ops, count, bad_op);
    if (rc == CQ_OK && (nc = gather_owned(w, &b, ops, count, &nf)) < 0) {
        *bad_op = -1 - nc;
        rc = CQ_ERANGE;
    }
    int after = w->count;
    for (int r = 0; r < b.n; r++)
        after += (b.rec[r].slot < 0 && b.rec[r].present) - (b.rec[r].slot >= 0 && !b.rec[r].present);
    if (rc == CQ_OK && after > w->cap)
        rc = world_grow(w, after);
    /* The records hold their slots: the commit needs no marks, and the
     * contact pass uses them meanwhile. */
    unmark(w, &b);
    if (rc == CQ_OK)
        w->pending = (world_pending){true, ops, count, b.n, nc, nf};
    return rc;
}

void cq_world_commit(cq_world *w, const cq_world_op *ops, int count)
{
    world_pending p = w->pending;
    bool same = p.on && p.ops == ops && p.count == count;
    assert(same && "cq_world_commit needs the ops of a pending cq_world_prepare");
    w->pending.on = false;
    if (!same)
        return; /* without assertions: abandoned, the world unchanged */
    batch b;
    batch_open(w, &b, count, p.records);
    commit(w, &b, ops, p.cands, p.finals);
}

void cq_world_abandon(cq_world *w) { w->pending.on = false; }

int cq_world_apply(cq_world *w, const cq_world_op *ops, int count, int *bad_op)
{
    int rc = cq_world_prepare(w, ops, count, bad_op);
    if (rc == CQ_OK)
        cq_world_commit(w, ops, count);
    return rc;
}
