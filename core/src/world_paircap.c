/* The per-world cap on broadphase pairs (settings.max_pairs): before a
 * batch or a new skin is applied, the pairs the broadphase would hold
 * afterwards are counted by a sweep over the final boxes, stopping as soon
 * as the count passes the cap. Counting first keeps the refusal cheap: the
 * incremental broadphase would store every pair (coincident shapes make
 * n^2 / 2 of them) before anything could notice, and a refused batch must
 * leave the world untouched and be refused before it is journaled.
 *
 * A change is refused only when it would leave more pairs than the cap
 * and more than the world holds now: a world above its cap (the cap was
 * lowered, or the daemon restarted with a lower one and recovered what it
 * had acknowledged) is never frozen, it may change in any way that does
 * not add pairs. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "cq/alloc.h"
#include "world_batch.h"

/* What the sweep reads of one final item. */
typedef struct cap_item {
    cq_aabb box; /* broadphase box: fattened by skin / 2 */
    uint32_t layer, mask;
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

static cap_item item_of(const cq_shape *shape, const cq_xform *pose, uint32_t layer, uint32_t mask, double skin,
                        bool fresh)
{
    cq_shape s = *shape;
    if (fresh)
        cq_shape_validate(&s); /* the commit normalises a new plane's normal; stored ones are */
    return (cap_item){cq_aabb_fatten(cq_shape_aabb(&s, pose), 0.5 * skin), layer, mask,
                      world_static_type(s.type)};
}

/* The final item of a slot the batch left or changed (rec) or did not touch (NULL). */
static cap_item slot_item(const cq_world *w, int slot, const batch_rec *rec, const cq_world_op *ops, double skin)
{
    const cq_world_body *body = &w->e[slot].body;
    if (!rec || (rec->upsert < 0 && rec->pose < 0))
        return (cap_item){cq_aabb_fatten(w->e[slot].box, 0.5 * skin), body->layer, body->mask,
                          world_static_type(body->shape.type)};
    const cq_world_op *up = rec->upsert >= 0 ? &ops[rec->upsert] : NULL;
    return item_of(up ? &up->shape : &body->shape, rec->pose >= 0 ? &ops[rec->pose].pose : &body->pose,
                   up ? up->layer : body->layer, up ? up->mask : body->mask, skin, up != NULL);
}

/* Whether the broadphase pairs of it[0..n) (order: by min x) exceed cap:
 * the rule of the broadphase (boxes touch, not both static, filters meet
 * both ways), counted until the count passes cap. */
static bool sweep_exceeds(const cap_item *it, const world_key *order, int n, long cap)
{
    long pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && it[order[j].index].box.min.x <= it[order[i].index].box.max.x; j++) {
            const cap_item *a = &it[order[i].index], *b = &it[order[j].index];
            if (cq_aabb_overlap_flat(&a->box, &b->box) && !(a->is_static && b->is_static) &&
                (a->layer & b->mask) && (b->layer & a->mask) && ++pairs > cap)
                return true;
        }
    return false;
}

int world_check_pair_cap(const cq_world *w, const batch *b, const cq_world_op *ops, double skin, long cap)
{
    long now = cq_sap_pair_count(w->sap);
    if (cap > 0 && now > cap)
        cap = now; /* above the cap already: refuse only growth */
    int n = w->count;
    for (int r = 0; b && r < b->n; r++)
        n += (b->rec[r].slot < 0 && b->rec[r].present) - (b->rec[r].slot >= 0 && !b->rec[r].present);
    if (cap <= 0 || (long long)n * (n - 1) / 2 <= cap)
        return CQ_OK; /* no cap, or too few shapes to cross it */
    size_t size = (size_t)n * (sizeof(cap_item) + 2 * sizeof(world_key));
    cap_item *it = cq_alloc(size);
    if (!it)
        return CQ_ENO_MEMORY;
    world_key *order = (world_key *)(it + n), *tmp = order + n;
    int k = 0;
    for (int slot = 0; slot < w->cap; slot++) { /* in slot order: the entries are read in sequence */
        if (!w->names[slot].alive)
            continue;
        int mark = b ? w->names[slot].mark : -1;
        const batch_rec *rec = mark >= 0 ? &b->rec[mark] : NULL;
        if (!rec || rec->present)
            it[k++] = slot_item(w, slot, rec, ops, skin);
    }
    for (int r = 0; b && r < b->n; r++) {
        const batch_rec *rec = &b->rec[r];
        if (rec->slot < 0 && rec->present) {
            const cq_world_op *up = &ops[rec->upsert];
            it[k++] = item_of(&up->shape, &ops[rec->pose >= 0 ? rec->pose : rec->upsert].pose, up->layer, up->mask, skin, true);
        }
    }
    for (int i = 0; i < k; i++)
        order[i] = (world_key){order_bits(it[i].box.min.x), i};
    radix_sort(order, tmp, k); /* an even count of passes: back in order */
    bool over = sweep_exceeds(it, order, k, cap);
    cq_free(it, size);
    return over ? CQ_ELIMIT : CQ_OK;
}
