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
#include "world_batch.h"

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
    b->box = world_carve(base, &at, n, sizeof *b->box);
    b->grec = world_carve(base, &at, n, sizeof *b->grec);
    b->gchg = world_carve(base, &at, n, sizeof *b->gchg);
    b->boxed = false;
    b->ngchg = 0;
    b->gridded = false;
    b->probing = false;
    b->unprobed = 0;
    return at;
}

int cq__world_batch_reserve(cq_world *w, int ops)
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
    cq__world_batch_release(w);
    w->batch_block = block;
    w->batch_block_size = size;
    w->batch_cap = cap;
    return CQ_OK;
}

int cq_world_reserve(cq_world *w, int shapes, int ops)
{
    cq__world_no_pending(w); /* a new batch block would lose the pending records */
    if (shapes < 0 || ops < 0)
        return CQ_ERANGE;
    int rc = cq__world_batch_reserve(w, ops);
    if (rc == CQ_OK && shapes > w->cap)
        rc = cq__world_grow(w, shapes);
    return rc;
}

void cq__world_batch_release(cq_world *w)
{
    cq_free(w->batch_block, w->batch_block_size);
    w->batch_block = NULL;
    w->batch_cap = 0;
}

/* ---- checks ---- */

static int check_id(const char *id, size_t *len)
{
    size_t n = 0;
    while (n <= CQ_WORLD_ID_MAX && id[n])
        n++;
    *len = n;
    return cq_world_id_valid(id, n) ? CQ_OK : CQ_ERANGE;
}

static int check_op(const cq_world_op *op)
{
    int rc;
    switch (op->kind) {
    case CQ_WORLD_UPSERT: {
        cq_shape s = op->shape;
        if ((rc = cq_shape_validate(&s).status) != CQ_OK || (rc = cq__world_check_pose(&op->pose)) != CQ_OK)
            return rc;
        return cq_v3_finite(op->velocity) ? CQ_OK : CQ_ENOT_FINITE;
    }
    case CQ_WORLD_MOVE:
        if ((rc = cq__world_check_pose(&op->pose)) != CQ_OK)
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

static int rec_add(batch *b, const char *id, size_t len, uint32_t hash, int slot)
{
    b->rec[b->n] = (batch_rec){id, (int32_t)len, hash, slot, -1, -1, -1, slot >= 0};
    return b->n++;
}

/* Files new registration r in the batch-local hash, made empty by the first. */
static void new_put(batch *b, int r, uint32_t hash)
{
    if (b->news++ == 0)
        memset(b->ntable, 0xff, ((size_t)b->nmask + 1) * sizeof *b->ntable);
    uint32_t h = hash & b->nmask;
    while (b->ntable[h] >= 0)
        h = (h + 1) & b->nmask;
    b->ntable[h] = r;
}

/* The record op acts on, or CQ_ENOT_FOUND when there is none to move or
 * remove; *r >= 0 on success. hash is world_id_hash of its id (if any). */
static int resolve(cq_world *w, batch *b, const cq_world_op *op, uint32_t hash, int *r)
{
    int slot;
    size_t len = 0;
    if (op->id) {
        int rc = check_id(op->id, &len);
        if (rc != CQ_OK)
            return rc;
        /* New registrations first; a batch of moves has none to search. */
        int found = b->news > 0 ? new_find(b, op->id, len, hash) : -1;
        if (found >= 0) {
            *r = found;
            return b->rec[found].present || op->kind == CQ_WORLD_UPSERT ? CQ_OK : CQ_ENOT_FOUND;
        }
        slot = cq__world_table_find_hashed(w, op->id, len, hash);
    } else {
        if (op->kind == CQ_WORLD_UPSERT)
            return CQ_ERANGE;
        slot = world_live(w, op->handle) ? (int)op->handle.index : -1;
    }
    if (slot >= 0) {
        world_name *n = &w->names[slot];
        if (n->mark < 0)
            n->mark = rec_add(b, NULL, 0, 0, slot);
        *r = n->mark;
        if (b->rec[*r].present)
            return CQ_OK;
        if (op->kind != CQ_WORLD_UPSERT || !op->id)
            return CQ_ENOT_FOUND;
    } else if (op->kind != CQ_WORLD_UPSERT) {
        return CQ_ENOT_FOUND;
    }
    *r = rec_add(b, op->id, len, hash, -1); /* a new registration */
    new_put(b, *r, hash);
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
    cq__world_heapsort(b->finals, (size_t)nf, sizeof *b->finals, owned_less, NULL);
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

void cq__batch_free_owned(batch *b, int nc, int nf)
{
    cq__world_heapsort(b->cands, (size_t)nc, sizeof *b->cands, owned_less, NULL);
    for (int k = 0; k < nc; k++)
        if ((k == 0 || b->cands[k].block != b->cands[k - 1].block) && !in_finals(b, nf, b->cands[k].block))
            cq__world_owned_free(b->cands[k].type, b->cands[k].block);
}

static void unmark(cq_world *w, const batch *b)
{
    for (int r = 0; r < b->n; r++) {
        int ahead = r + WORLD_AHEAD < b->n ? b->rec[r + WORLD_AHEAD].slot : -1;
        if (ahead >= 0 && ahead < w->cap)
            world_prefetch(&w->names[ahead]);
        if (b->rec[r].slot >= 0 && b->rec[r].slot < w->cap)
            w->names[b->rec[r].slot].mark = -1;
    }
}

/* Far ahead: op's id hashed, and its home cell prefetched. */
static uint32_t look_ahead(const cq_world *w, const cq_world_op *op)
{
    if (!op->id)
        return 0;
    uint32_t hash = world_id_hash(op->id, strnlen(op->id, CQ_WORLD_ID_MAX + 1));
    world_prefetch(&w->table[hash & w->table_mask]);
    return hash;
}

/* Nearer: the cell has arrived; the slot whose name to prefetch, or -1. */
static int look_closer(const cq_world *w, const cq_world_op *op, uint32_t hash)
{
    int slot = op->id ? w->table[hash & w->table_mask].slot : (int)op->handle.index;
    return slot < w->cap ? slot : -1;
}

/* Checks every op in order against the records; CQ_OK or the failure, with
 * *bad_op set. Each op's cell is fetched 2 WORLD_AHEAD ops early and the
 * name it points to WORLD_AHEAD ops early (the hash found early is the
 * one resolve needs: an id check_id refuses is not hashed again). */
static int check_all(cq_world *w, batch *b, const cq_world_op *ops, int count, int *bad_op)
{
    enum { RING = 2 * WORLD_AHEAD };
    uint32_t hash[RING] = {0}; /* op k's at k % RING */
    for (int i = -RING; i < count; i++) {
        uint32_t here = i >= 0 ? hash[i % RING] : 0;
        if (i + RING < count)
            hash[(i + RING) % RING] = look_ahead(w, &ops[i + RING]);
        int near = i + WORLD_AHEAD;
        int slot = near >= 0 && near < count ? look_closer(w, &ops[near], hash[near % RING]) : -1;
        if (slot >= 0)
            world_prefetch(&w->names[slot]);
        if (slot >= 0 && b->probing)
            world_prefetch(&w->grid_rec[slot]);
        if (i < 0)
            continue;
        int r, rc = check_op(&ops[i]);
        if (rc == CQ_OK)
            rc = resolve(w, b, &ops[i], here, &r);
        if (rc != CQ_OK) {
            *bad_op = i;
            return rc;
        }
        /* a move opening its record: no op before it set this one's pose */
        bool opened = ops[i].kind == CQ_WORLD_MOVE && b->rec[r].slot >= 0 && b->rec[r].pose < 0 && b->rec[r].upsert < 0;
        apply_to_rec(&b->rec[r], &ops[i], i);
        if (b->probing && opened)
            cq__world_pair_grid_probe(w, b, r, &ops[i]);
        else
            b->unprobed++;
    }
    return CQ_OK;
}

/* Lays the batch scratch out for count ops, holding records records. */
static void batch_open(cq_world *w, batch *b, int count, int records)
{
    batch_layout(b, w->batch_block, w->batch_cap);
    b->n = records;
    b->news = 0; /* only check_all consults it */
    b->nmask = pow2_above(count) - 1;
}

/* The pending batch's scratch, laid out again as prepare left it. */
static void batch_reopen(cq_world *w, batch *b)
{
    world_pending p = w->pending;
    batch_open(w, b, p.count, p.records);
    b->boxed = p.boxed;
    b->ngchg = p.gchanged;
    b->gridded = p.gridded;
}

void cq_world_abandon(cq_world *w)
{
    if (!w->pending.on)
        return;
    batch b;
    batch_reopen(w, &b);
    cq__world_pair_grid_undo(w, &b); /* the check entered the batch in the grid */
    w->pending.on = false;
}

void cq__world_no_pending(cq_world *w)
{
    assert(!w->pending.on && "a prepared batch must be committed or abandoned first");
    cq_world_abandon(w);
}

int cq_world_prepare(cq_world *w, const cq_world_op *ops, int count, int *bad_op)
{
    cq__world_no_pending(w);
    *bad_op = -1;
    if (count < 0 || (count > 0 && !ops))
        return CQ_ERANGE;
    int rc = cq__world_batch_reserve(w, count);
    if (rc != CQ_OK)
        return rc;
    batch b;
    batch_open(w, &b, count, 0);
    b.probing = cq__world_pair_grid_probe_start(w);
    int nf = 0, nc = 0;
    rc = check_all(w, &b, ops, count, bad_op);
    if (rc == CQ_OK && (nc = gather_owned(w, &b, ops, count, &nf)) < 0) {
        *bad_op = -1 - nc;
        rc = CQ_ERANGE;
    }
    int after = w->count;
    for (int r = 0; r < b.n; r++)
        after += (b.rec[r].slot < 0 && b.rec[r].present) - (b.rec[r].slot >= 0 && !b.rec[r].present);
    if (rc == CQ_OK)
        rc = cq__world_check_pair_cap(w, &b, ops, w->settings.skin, w->settings.max_pairs);
    if (rc == CQ_OK && after > w->cap)
        rc = cq__world_grow(w, after);
    /* The records hold their slots: the commit needs no marks, which are
     * left clear for whatever runs next. */
    unmark(w, &b);
    if (rc == CQ_OK)
        w->pending = (world_pending){true, ops, count, b.n, nc, nf, b.boxed, b.ngchg, b.gridded};
    else
        cq__world_pair_grid_undo(w, &b); /* the growth failed after the check */
    return rc;
}

void cq_world_commit(cq_world *w, const cq_world_op *ops, int count)
{
    world_pending p = w->pending;
    bool same = p.on && p.ops == ops && p.count == count;
    assert(same && "cq_world_commit needs the ops of a pending cq_world_prepare");
    if (!same) {
        cq_world_abandon(w); /* without assertions: the world unchanged */
        return;
    }
    batch b;
    batch_reopen(w, &b);
    w->pending.on = false;
    cq__batch_commit(w, &b, ops, p.cands, p.finals);
}

int cq_world_apply(cq_world *w, const cq_world_op *ops, int count, int *bad_op)
{
    int rc = cq_world_prepare(w, ops, count, bad_op);
    if (rc == CQ_OK)
        cq_world_commit(w, ops, count);
    return rc;
}
