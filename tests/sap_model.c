/* The sweep-and-prune test model and its brute-force oracle (sap_model.h). */
#include <stdlib.h>
#include <string.h>

#include "cq/status.h"
#include "sap_model.h"
#include "testutil.h"


sm_model sm_model_make(int cap)
{
    sm_model m = {cap,
               calloc((size_t)cap, sizeof(cq_aabb)),
               calloc((size_t)cap, sizeof(uint32_t)),
               calloc((size_t)cap, sizeof(uint32_t)),
               calloc((size_t)cap, sizeof(bool)),
               calloc((size_t)cap, sizeof(bool)),
               calloc((size_t)cap, sizeof(bool))};
    ck_assert(m.box && m.layer && m.mask && m.is_static && m.alive && m.reborn);
    return m;
}

void sm_model_free(sm_model *m)
{
    free(m->box);
    free(m->layer);
    free(m->mask);
    free(m->is_static);
    free(m->alive);
    free(m->reborn);
}

void sm_put(cq_sap *sap, sm_model *m, int id, cq_aabb box, uint32_t layer, uint32_t mask, bool is_static)
{
    ck_assert_int_eq(cq__sap_insert(sap, id, &box, layer, mask, is_static), CQ_OK);
    m->box[id] = box;
    m->layer[id] = layer;
    m->mask[id] = mask;
    m->is_static[id] = is_static;
    m->alive[id] = true;
}

void sm_drop(cq_sap *sap, sm_model *m, int id)
{
    ck_assert_int_eq(cq__sap_remove(sap, id), CQ_OK);
    m->alive[id] = false;
    m->reborn[id] = true;
}

void sm_shift(cq_sap *sap, sm_model *m, int id, cq_aabb box)
{
    if (cq__sap_move(sap, id, &box) != CQ_OK)
        ck_abort_msg("move %d failed", id);
    m->box[id] = box;
}

void sm_refilter(cq_sap *sap, sm_model *m, int id, uint32_t layer, uint32_t mask)
{
    ck_assert_int_eq(cq__sap_set_filter(sap, id, layer, mask), CQ_OK);
    m->layer[id] = layer;
    m->mask[id] = mask;
}

/* ---- the oracle ---- */

uint64_t sm_key(int a, int b) { return (uint64_t)a << 32 | (uint64_t)b; }

static bool spans_meet(double lo1, double hi1, double lo2, double hi2) { return lo1 <= hi2 && lo2 <= hi1; }

static bool oracle_pair(const sm_model *m, int i, int j)
{
    const cq_aabb *a = &m->box[i], *b = &m->box[j];
    return m->alive[i] && m->alive[j] && !(m->is_static[i] && m->is_static[j]) && (m->layer[i] & m->mask[j]) &&
           (m->layer[j] & m->mask[i]) && spans_meet(a->min.x, a->max.x, b->min.x, b->max.x) &&
           spans_meet(a->min.y, a->max.y, b->min.y, b->max.y) && spans_meet(a->min.z, a->max.z, b->min.z, b->max.z);
}


void sm_keys_push(sm_keys *v, uint64_t k, int slot)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->k = realloc(v->k, (size_t)v->cap * sizeof *v->k);
        v->slot = realloc(v->slot, (size_t)v->cap * sizeof *v->slot);
        ck_assert(v->k && v->slot);
    }
    v->k[v->n] = k;
    v->slot[v->n++] = slot;
}

void sm_keys_free(sm_keys *v)
{
    free(v->k);
    free(v->slot);
    *v = (sm_keys){0};
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every pair, i < j: O(n^2). */
void sm_oracle_all(const sm_model *m, sm_keys *out)
{
    out->n = 0;
    for (int i = 0; i < m->cap; i++)
        for (int j = i + 1; j < m->cap; j++)
            if (oracle_pair(m, i, j))
                sm_keys_push(out, sm_key(i, j), -1);
}

typedef struct by_x {
    double x;
    int id;
} by_x;

static int cmp_by_x(const void *a, const void *b)
{
    double x = ((const by_x *)a)->x, y = ((const by_x *)b)->x;
    return x < y ? -1 : x > y;
}

/* The same pairs, faster for big worlds: only pairs whose x spans meet are
 * tested, found from the items sorted by min x. oracle_agrees checks it
 * against oracle_all. */
void sm_oracle(const sm_model *m, sm_keys *out)
{
    by_x *o = malloc((size_t)m->cap * sizeof *o);
    ck_assert(o != NULL);
    int n = 0;
    for (int i = 0; i < m->cap; i++)
        if (m->alive[i])
            o[n++] = (by_x){m->box[i].min.x, i};
    qsort(o, (size_t)n, sizeof *o, cmp_by_x);
    out->n = 0;
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n && o[q].x <= m->box[o[p].id].max.x; q++) {
            int i = o[p].id < o[q].id ? o[p].id : o[q].id, j = o[p].id ^ o[q].id ^ i;
            if (oracle_pair(m, i, j))
                sm_keys_push(out, sm_key(i, j), -1);
        }
    free(o);
    if (out->n) /* none: no array to sort */
        qsort(out->k, (size_t)out->n, sizeof *out->k, cmp_u64);
}

int sm_find_key(const sm_keys *v, uint64_t k)
{
    const uint64_t *hit = v->n ? bsearch(&k, v->k, (size_t)v->n, sizeof *v->k, cmp_u64) : NULL;
    return hit ? (int)(hit - v->k) : -1;
}

/* ---- checking one update against the oracle and the previous frame ---- */


void sm_history_free(sm_history *h)
{
    sm_keys_free(&h->prev);
    sm_keys_free(&h->now);
    sm_keys_free(&h->removed);
    free(h->slot_used);
    free(h->got);
}

static bool involves_reborn(const sm_model *m, uint64_t k) { return m->reborn[k >> 32] || m->reborn[(uint32_t)k]; }

static int pair_cmp(const void *x, const void *y)
{
    uint64_t a = sm_key(((const cq_sap_pair *)x)->a, ((const cq_sap_pair *)x)->b);
    uint64_t b = sm_key(((const cq_sap_pair *)y)->a, ((const cq_sap_pair *)y)->b);
    return (a > b) - (a < b);
}

/* The list's live entries into h->got, sorted here by (a, b); each live
 * pair must be there once (the oracle comparison finds a repeat). */
static int gather_live(const cq_sap *sap, sm_history *h)
{
    int span = cq__sap_pair_span(sap), n = 0;
    if (span > h->got_cap) {
        h->got_cap = span;
        h->got = realloc(h->got, (size_t)span * sizeof *h->got);
        ck_assert(h->got);
    }
    cq_sap_pair p;
    for (int k = 0; k < span; k++)
        if (cq__sap_pair_entry(sap, k, &p))
            h->got[n++] = p;
    if (n > 0) // h->got is NULL while no pair was ever held: qsort takes no NULL
        qsort(h->got, (size_t)n, sizeof *h->got, pair_cmp);
    return n;
}

/* Sorts the list and checks it holds exactly the pairs just checked, in order. */
static void check_sorted(cq_sap *sap, const sm_history *h)
{
    cq__sap_pairs_sort(sap);
    ck_assert_int_eq(cq__sap_pair_span(sap), h->now.n);
    for (int k = 0; k < h->now.n; k++) {
        cq_sap_pair p = cq__sap_pair_at(sap, k);
        if (sm_key(p.a, p.b) != h->now.k[k] || p.slot != h->now.slot[k] || p.added != h->got[k].added)
            ck_abort_msg("sorted pair %d: (%d,%d) slot %d", k, p.a, p.b, p.slot);
    }
}

/* Updates and checks: the list equals the oracle; added flags mark
 * the pairs that are new or whose item was removed and inserted again; the
 * removed list is the previous pairs that ended that way, with their old
 * slots; continuing pairs keep their slots; live slots are distinct. */
void sm_update_and_check(cq_sap *sap, sm_model *m, sm_history *h)
{
    ck_assert_int_eq(cq__sap_update_lazy(sap), CQ_OK);
    sm_oracle(m, &h->now);
    int n = cq__sap_pair_count(sap);
    ck_assert_int_eq(n, h->now.n);
    ck_assert_int_eq(gather_live(sap, h), n);
    int pcap = cq__sap_pair_capacity(sap);
    h->slot_used = realloc(h->slot_used, (size_t)pcap);
    ck_assert(h->slot_used);
    memset(h->slot_used, 0, (size_t)pcap);
    /* Check marks a point at every passing ck_assert: the loops test quietly. */
    for (int k = 0; k < n; k++) {
        cq_sap_pair p = h->got[k];
        uint64_t key = sm_key(p.a, p.b);
        if (key != h->now.k[k])
            ck_abort_msg("pair %d: got (%d,%d), sm_oracle (%d,%d)", k, p.a, p.b, (int)(h->now.k[k] >> 32),
                         (int)(uint32_t)h->now.k[k]);
        if (p.slot < 0 || p.slot >= pcap || h->slot_used[p.slot] || cq__sap_find(sap, p.b, p.a) != p.slot)
            ck_abort_msg("pair (%d,%d): slot %d reused or not found", p.a, p.b, p.slot);
        h->slot_used[p.slot] = 1;
        int before = sm_find_key(&h->prev, key);
        bool fresh = before < 0 || involves_reborn(m, key);
        if (p.added != fresh || (!fresh && p.slot != h->prev.slot[before]))
            ck_abort_msg("pair (%d,%d): added %d, slot %d, before %d", p.a, p.b, p.added, p.slot,
                         before < 0 ? -1 : h->prev.slot[before]);
        h->now.slot[k] = p.slot;
    }
    if (h->updates++ % 3 == 0)
        check_sorted(sap, h);
    h->removed.n = 0;
    for (int k = 0; k < h->prev.n; k++)
        if (sm_find_key(&h->now, h->prev.k[k]) < 0 || involves_reborn(m, h->prev.k[k]))
            sm_keys_push(&h->removed, h->prev.k[k], h->prev.slot[k]);
    ck_assert_int_eq(cq__sap_removed_count(sap), h->removed.n);
    for (int k = 0; k < h->removed.n; k++) {
        cq_sap_pair p = cq__sap_removed_at(sap, k);
        if (sm_key(p.a, p.b) != h->removed.k[k] || p.added || p.slot != h->removed.slot[k])
            ck_abort_msg("removed %d: (%d,%d) slot %d", k, p.a, p.b, p.slot);
    }
    sm_keys t = h->prev;
    h->prev = h->now;
    h->now = t;
    memset(m->reborn, 0, (size_t)m->cap);
}