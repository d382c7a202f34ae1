/* Reply bodies of the queries: contact results, contacts, hits, ids. */
#include "cqc_int.h"

static bool point_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_point *p = out;
    if (CQC_KEY(k, kn, "position"))
        return cqc__rd_vec(r, p->position, 3);
    if (CQC_KEY(k, kn, "depth"))
        return cqc__rd_num(r, &p->depth);
    if (CQC_KEY(k, kn, "feature"))
        return cqc__rd_strcut(r, p->feature, sizeof p->feature);
    return cqc__rd_skip(r);
}

static bool points(cqc_rd *r, cqc_contact *c)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n) || n > 4)
        return cqc__fail(r);
    c->point_count = (int)n;
    for (uint32_t i = 0; i < n; i++)
        if (!cqc__rd_each(r, point_member, &c->points[i]))
            return false;
    return true;
}

static bool witness_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contact *c = out;
    if (CQC_KEY(k, kn, "a"))
        return cqc__rd_vec(r, c->witness_a, 3);
    if (CQC_KEY(k, kn, "b"))
        return cqc__rd_vec(r, c->witness_b, 3);
    return cqc__rd_skip(r);
}

static bool fallback_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contact *c = out;
    if (CQC_KEY(k, kn, "reason"))
        return cqc__rd_strcut(r, c->fallback_reason, sizeof c->fallback_reason);
    if (CQC_KEY(k, kn, "action"))
        return cqc__rd_strcut(r, c->fallback_action, sizeof c->fallback_action);
    return cqc__rd_skip(r);
}

static bool contact_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contact *c = out;
    if (CQC_KEY(k, kn, "overlap"))
        return cqc__rd_bool(r, &c->overlap);
    if (CQC_KEY(k, kn, "distance"))
        return cqc__rd_num(r, &c->distance);
    if (CQC_KEY(k, kn, "depth"))
        return cqc__rd_num(r, &c->depth);
    if (CQC_KEY(k, kn, "normal"))
        return (c->has_normal = true) && cqc__rd_vec(r, c->normal, 3);
    if (CQC_KEY(k, kn, "points"))
        return points(r, c);
    if (CQC_KEY(k, kn, "witness"))
        return (c->has_witness = true) && cqc__rd_each(r, witness_member, c);
    if (CQC_KEY(k, kn, "algorithm"))
        return cqc__rd_strcut(r, c->algorithm, sizeof c->algorithm);
    if (CQC_KEY(k, kn, "fallback"))
        return cqc__rd_nil(r) || cqc__rd_each(r, fallback_member, c);
    return cqc__rd_skip(r);
}

bool cqc__dec_contact(cqc_rd *r, cqc_contact *out)
{
    *out = (cqc_contact){0};
    return cqc__rd_each(r, contact_member, out);
}

static bool pair_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contact_pair *p = out;
    if (CQC_KEY(k, kn, "a"))
        return cqc__rd_strcpy(r, p->a, sizeof p->a);
    if (CQC_KEY(k, kn, "b"))
        return cqc__rd_strcpy(r, p->b, sizeof p->b);
    return contact_member(r, k, kn, &p->contact);
}

static bool toi_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_toi *t = out;
    if (CQC_KEY(k, kn, "id"))
        return cqc__rd_strcpy(r, t->id, sizeof t->id);
    if (CQC_KEY(k, kn, "other"))
        return cqc__rd_strcpy(r, t->other, sizeof t->other);
    if (CQC_KEY(k, kn, "time"))
        return cqc__rd_num(r, &t->time);
    if (CQC_KEY(k, kn, "point"))
        return cqc__rd_vec(r, t->point, 3);
    if (CQC_KEY(k, kn, "normal"))
        return cqc__rd_vec(r, t->normal, 3);
    return cqc__rd_skip(r);
}

/* Room for n items in a result array: the caller's (filled up to its cap,
 * the rest skipped) or the library's, grown as items are decoded (an item
 * may take one byte on the wire and hundreds in memory, so a count is no
 * measure of what to allocate up front). */
typedef struct slots {
    void **items;
    size_t *cap;
    bool *owned;
    size_t size, n, fill;
} slots;

static bool open_slots(cqc_rd *r, slots *s)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n))
        return false;
    s->n = n;
    if (*s->items == NULL || *s->owned)
        *s->owned = true;
    s->fill = *s->owned || n < *s->cap ? n : *s->cap;
    return true;
}

/* Item i (below s->fill), the library's array grown to hold it; NULL when
 * that runs out of memory (the reply is then refused). */
static void *slot_at(cqc_rd *r, slots *s, size_t i)
{
    if (*s->owned && !cqc__grow(s->items, s->cap, i + 1, s->size)) {
        r->oom = true;
        cqc__fail(r);
        return NULL;
    }
    return (char *)*s->items + i * s->size;
}

/* Whether a decoded item names its shapes: the least every reply item
 * holds, so a hostile peer's empty maps are refused at the first. */
typedef bool (*item_named_fn)(const void *item);

static bool pair_named(const void *item)
{
    const cqc_contact_pair *p = item;
    return p->a[0] && p->b[0];
}

static bool toi_named(const void *item)
{
    const cqc_toi *t = item;
    return t->id[0] && t->other[0];
}

static bool read_items(cqc_rd *r, slots *s, cqc_member_fn f, item_named_fn named)
{
    if (!open_slots(r, s))
        return false;
    for (size_t i = 0; i < s->n; i++) {
        if (i >= s->fill) {
            if (!cqc__rd_skip(r))
                return false;
            continue;
        }
        char *item = slot_at(r, s, i);
        if (!item)
            return false;
        memset(item, 0, s->size);
        if (!cqc__rd_each(r, f, item))
            return false;
        if (!named(item))
            return cqc__fail(r);
    }
    return true;
}

static bool stat_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contacts *c = out;
    uint64_t *v = CQC_KEY(k, kn, "broadphase_pairs") ? &c->broadphase_pairs
                  : CQC_KEY(k, kn, "tested")         ? &c->tested
                  : CQC_KEY(k, kn, "touching")       ? &c->touching
                  : CQC_KEY(k, kn, "swept")          ? &c->swept
                                                     : NULL;
    return v ? cqc__rd_uint(r, v) : cqc__rd_skip(r);
}

static bool contacts_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_contacts *c = out;
    if (CQC_KEY(k, kn, "pairs")) {
        slots s = {(void **)&c->pairs, &c->pairs_cap, &c->owned_pairs, sizeof *c->pairs, 0, 0};
        bool ok = read_items(r, &s, pair_member, pair_named);
        c->pair_count = s.n;
        return ok;
    }
    if (CQC_KEY(k, kn, "toi")) {
        slots s = {(void **)&c->toi, &c->toi_cap, &c->owned_toi, sizeof *c->toi, 0, 0};
        bool ok = read_items(r, &s, toi_member, toi_named);
        c->toi_count = s.n;
        return ok;
    }
    if (CQC_KEY(k, kn, "stats"))
        return cqc__rd_each(r, stat_member, c);
    return cqc__rd_skip(r);
}

static bool hit_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_ray_hit *h = out;
    h->hit = true;
    if (CQC_KEY(k, kn, "id"))
        return cqc__rd_strcpy(r, h->id, sizeof h->id);
    if (CQC_KEY(k, kn, "distance"))
        return cqc__rd_num(r, &h->distance);
    if (CQC_KEY(k, kn, "point"))
        return cqc__rd_vec(r, h->point, 3);
    if (CQC_KEY(k, kn, "normal"))
        return cqc__rd_vec(r, h->normal, 3);
    return cqc__rd_skip(r);
}

static bool sweep_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_sweep_hit *h = out;
    h->hit = true;
    if (CQC_KEY(k, kn, "id"))
        return cqc__rd_strcpy(r, h->id, sizeof h->id);
    if (CQC_KEY(k, kn, "time"))
        return cqc__rd_num(r, &h->time);
    if (CQC_KEY(k, kn, "point"))
        return cqc__rd_vec(r, h->point, 3);
    if (CQC_KEY(k, kn, "normal"))
        return (h->has_normal = true) && cqc__rd_vec(r, h->normal, 3);
    return cqc__rd_skip(r);
}

/* The one member a body must have, read by f; others skipped. */
typedef struct only {
    const char *key;
    bool seen;
    bool (*f)(cqc_rd *r, const cqc_call *call);
    const cqc_call *call;
} only;

static bool only_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    only *o = out;
    if (kn != strlen(o->key) || memcmp(k, o->key, kn) != 0)
        return cqc__rd_skip(r);
    o->seen = true;
    return o->f(r, o->call);
}

static bool results(cqc_rd *r, const cqc_call *call)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n) || n != call->n)
        return cqc__fail(r);
    for (uint32_t i = 0; i < n; i++)
        if (!cqc__dec_contact(r, (cqc_contact *)call->out + i))
            return false;
    return true;
}

static bool hits(cqc_rd *r, const cqc_call *call)
{
    uint32_t n;
    if (!cqc__rd_arr(r, &n) || n != call->n)
        return cqc__fail(r);
    for (uint32_t i = 0; i < n; i++) {
        cqc_ray_hit *h = (cqc_ray_hit *)call->out + i;
        *h = (cqc_ray_hit){0};
        if (!cqc__rd_nil(r) && !cqc__rd_each(r, hit_member, h))
            return false;
    }
    return true;
}

static bool sweep(cqc_rd *r, const cqc_call *call)
{
    cqc_sweep_hit *h = call->out;
    *h = (cqc_sweep_hit){0};
    return cqc__rd_nil(r) || cqc__rd_each(r, sweep_member, h);
}

static bool ids(cqc_rd *r, const cqc_call *call)
{
    cqc_ids *x = call->out;
    slots s = {(void **)&x->items, &x->cap, &x->owned, sizeof *x->items, 0, 0};
    if (!open_slots(r, &s))
        return false;
    x->count = s.n;
    for (size_t i = 0; i < s.n; i++) {
        char *id = i < s.fill ? slot_at(r, &s, i) : NULL;
        if (i < s.fill ? !id || !cqc__rd_strcpy(r, id, sizeof x->items[i]) : !cqc__rd_skip(r))
            return false;
    }
    return true;
}

static bool id_pairs(cqc_rd *r, const cqc_call *call)
{
    cqc_id_pairs *x = call->out;
    slots s = {(void **)&x->items, &x->cap, &x->owned, sizeof *x->items, 0, 0};
    if (!open_slots(r, &s))
        return false;
    x->count = s.n;
    for (size_t i = 0; i < s.n; i++) {
        uint32_t two;
        if (i >= s.fill) {
            if (!cqc__rd_skip(r))
                return false;
            continue;
        }
        if (!slot_at(r, &s, i))
            return false;
        if (!cqc__rd_arr(r, &two) || two != 2 || !cqc__rd_strcpy(r, x->items[i][0], CQC_ID_MAX + 1) ||
            !cqc__rd_strcpy(r, x->items[i][1], CQC_ID_MAX + 1))
            return cqc__fail(r);
    }
    return true;
}

static cqc_status truncated(const cqc_call *call)
{
    if (call->kind == CQC_K_CONTACTS) {
        const cqc_contacts *c = call->out;
        return c->pair_count > c->pairs_cap || c->toi_count > c->toi_cap ? CQC_ETRUNCATED : CQC_OK;
    }
    if (call->kind == CQC_K_IDS) {
        const cqc_ids *x = call->out;
        return x->count > x->cap ? CQC_ETRUNCATED : CQC_OK;
    }
    if (call->kind == CQC_K_ID_PAIRS) {
        const cqc_id_pairs *x = call->out;
        return x->count > x->cap ? CQC_ETRUNCATED : CQC_OK;
    }
    return CQC_OK;
}

cqc_status cqc__dec_query(cqc_rd *r, const cqc_call *call)
{
    bool ok;
    if (call->kind == CQC_K_CONTACT) {
        ok = cqc__dec_contact(r, call->out);
    } else if (call->kind == CQC_K_CONTACTS) {
        cqc_contacts *c = call->out;
        c->pair_count = c->toi_count = 0;
        c->broadphase_pairs = c->tested = c->touching = c->swept = 0;
        ok = cqc__rd_each(r, contacts_member, c);
    } else {
        static const struct {
            uint8_t kind;
            const char *key;
            bool (*f)(cqc_rd *, const cqc_call *);
        } table[] = {{CQC_K_CONTACTS_N, "results", results}, {CQC_K_HITS, "hits", hits},
                     {CQC_K_SWEEP, "hit", sweep},             {CQC_K_IDS, "ids", ids},
                     {CQC_K_ID_PAIRS, "pairs", id_pairs}};
        only o = {NULL, false, NULL, call};
        for (size_t i = 0; i < sizeof table / sizeof *table; i++)
            if (table[i].kind == call->kind)
                o = (only){table[i].key, false, table[i].f, call};
        ok = o.f && cqc__rd_each(r, only_member, &o) && o.seen;
    }
    if (!ok || r->p != r->end)
        return r->oom ? CQC_ENOMEM : CQC_EPROTO;
    return truncated(call);
}

void cqc_contacts_release(cqc_contacts *x)
{
    if (x->owned_pairs) {
        cqc__free(x->pairs);
        x->pairs = NULL;
        x->pairs_cap = 0;
        x->owned_pairs = false;
    }
    if (x->owned_toi) {
        cqc__free(x->toi);
        x->toi = NULL;
        x->toi_cap = 0;
        x->owned_toi = false;
    }
    x->pair_count = x->toi_count = 0;
}

void cqc_ids_release(cqc_ids *x)
{
    if (x->owned) {
        cqc__free(x->items);
        *x = (cqc_ids){0};
    }
    x->count = 0;
}

void cqc_id_pairs_release(cqc_id_pairs *x)
{
    if (x->owned) {
        cqc__free(x->items);
        *x = (cqc_id_pairs){0};
    }
    x->count = 0;
}

void cqc_blob_release(cqc_blob *x)
{
    cqc__free(x->data);
    *x = (cqc_blob){0};
}
