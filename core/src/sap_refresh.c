/* Pairs of fresh items (new, filter changed, moved static). Their stored
 * pairs are checked against the current boxes and filters, then the
 * missing ones are found: with few fresh items by testing each against all
 * items, with many by one sweep along x over the dynamic and static arrays
 * together, which costs O(n + overlaps on x) however many are fresh. */
#include "sap_internal.h"

static void scan(cq_sap *s, int i)
{
    for (int j = 0; j < s->hi; j++)
        sap_pair_begin(s, i, j);
}

/* The sweep's open intervals: dynamics from the front of it.active,
 * statics from the back, so statics are never tested against each other. */
typedef struct open_set {
    int32_t *item, *at;
    int nd, ns, cap;
} open_set;

static void open_push(open_set *o, int i, bool is_static)
{
    int k = is_static ? o->cap - ++o->ns : o->nd++;
    o->item[k] = i;
    o->at[i] = k;
}

static void open_drop(open_set *o, int i, bool is_static)
{
    int last = is_static ? o->item[o->cap - o->ns--] : o->item[--o->nd];
    o->item[o->at[i]] = last;
    o->at[last] = o->at[i];
}

/* Two intervals open at once overlap on x; only pairs with a fresh item
 * can be missing. */
static void meet(cq_sap *s, int i, int j)
{
    if ((s->it.item[i].flags | s->it.item[j].flags) & SAP_FRESH)
        sap_pair_begin(s, i, j);
}

static void sweep(cq_sap *s)
{
    const sap_ep *d = s->it.dyn[0], *t = s->it.sta[0];
    open_set o = {s->it.active, s->it.active_at, 0, 0, s->cap};
    int a = 0, b = 0;
    while (a < s->ndyn || b < s->nsta) {
        sap_ep x = (b == s->nsta || (a < s->ndyn && !sap_less(t[b], d[a]))) ? d[a++] : t[b++];
        int i = sap_owner(x.tag);
        bool is_static = s->it.item[i].flags & SAP_STATIC;
        if (x.tag & 1u) {
            open_drop(&o, i, is_static);
            continue;
        }
        for (int k = 0; k < o.nd; k++)
            meet(s, i, o.item[k]);
        for (int k = o.cap - o.ns; !is_static && k < o.cap; k++) /* statics never meet statics */
            meet(s, i, o.item[k]);
        open_push(&o, i, is_static);
    }
    s->stats.sweeps++;
}

void sap_refresh(cq_sap *s)
{
    if (s->fresh_n == 0)
        return;
    for (int k = 0; k < s->fresh_n; k++)
        sap_pair_prune(s, s->it.fresh[k]);
    if (s->fresh_n > SAP_SWEEP_MIN)
        sweep(s);
    else
        for (int k = 0; k < s->fresh_n; k++)
            scan(s, s->it.fresh[k]);
    for (int k = 0; k < s->fresh_n; k++)
        s->it.item[s->it.fresh[k]].flags &= (uint8_t)~SAP_FRESH;
    s->fresh_n = 0;
}
