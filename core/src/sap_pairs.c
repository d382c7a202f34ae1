/* The sweep-and-prune's pair set: slots with a free list (so a live pair's
 * slot never changes), a hash on (a, b), each item's list of its pairs (so
 * removing an item costs its pairs, not a scan), and the lists an update
 * reports: the live pairs and the removed ones (sorted by (a, b)).
 *
 * The live pairs' list is sorted lazily, so that an update costs the pairs
 * it changed and not a pass over every pair (in a world of resting piles
 * that pass was O(world) a PUT): a new pair is appended, a dropped one
 * leaves a hole where it was, found through the hint its slot keeps or by
 * a binary search of the sorted part. The list is sorted (the appended
 * sorted and merged in, the holes dropped) when its changes pass a quarter
 * of it, when it is full, and when a reader needs the order. */
#include <string.h>

#include "cq/alloc.h"
#include "cq/status.h"
#include "merge_sort.h"
#include "sap_internal.h"

static uint64_t pair_key(int a, int b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

/* MurmurHash3's finalizer, so the low bits the mask keeps depend on every
 * bit of both ids (a bare multiply would let a's high bits drop out). */
static uint32_t hash_of(uint64_t key, uint32_t hmask)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdu;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53u;
    key ^= key >> 33;
    return (uint32_t)key & hmask;
}

/* List entries for pcap slots: room for a quarter of them more as holes
 * and appended pairs, so that a full list is sorted at most once in
 * pcap / 4 changes. */
static int list_cap(int pcap) { return pcap + pcap / 4 + 64; }

static size_t pairs_layout(sap_pairs *pr, char *base, int pcap, uint32_t hsize)
{
    size_t at = 0, n = (size_t)pcap, l = (size_t)list_cap(pcap);
    pr->pair = sap_carve(base, &at, n, sizeof *pr->pair);
    pr->hash = sap_carve(base, &at, hsize, sizeof *pr->hash);
    pr->list = sap_carve(base, &at, l, sizeof *pr->list);
    pr->added = sap_carve(base, &at, n, sizeof *pr->added);
    pr->removed = sap_carve(base, &at, n, sizeof *pr->removed);
    pr->spare = sap_carve(base, &at, l, sizeof *pr->spare);
    return at;
}

/* Allocates storage for pcap slots into *pr; the caller fills it. */
static int pairs_alloc(sap_pairs *pr, int pcap, uint32_t *hmask, void **block, size_t *size)
{
    uint32_t hsize = 16;
    while (hsize < 2u * (uint32_t)pcap) /* load <= 1/2 keeps probes short */
        hsize <<= 1;
    *size = pairs_layout(pr, NULL, pcap, hsize);
    *block = cq_alloc(*size);
    if (!*block)
        return CQ_ENO_MEMORY;
    pairs_layout(pr, *block, pcap, hsize);
    memset(pr->hash, 0xff, hsize * sizeof *pr->hash);
    *hmask = hsize - 1;
    return CQ_OK;
}

/* Chains slots from..pcap-1 as the free list. */
static void chain_free(cq_sap *s, int from)
{
    for (int k = from; k < s->pcap; k++) {
        s->pr.pair[k].a = -1;
        s->pr.pair[k].link[0][1] = k + 1 < s->pcap ? k + 1 : -1;
    }
    s->free_head = from < s->pcap ? from : -1;
}

static void hash_put(cq_sap *s, uint64_t key, int slot)
{
    uint32_t h = hash_of(key, s->hmask);
    while (s->pr.hash[h] >= 0)
        h = (h + 1) & s->hmask;
    s->pr.hash[h] = slot;
}

int cq__sap_pairs_init(cq_sap *s, int pcap)
{
    int rc = pairs_alloc(&s->pr, pcap, &s->hmask, &s->pairs_block, &s->pairs_size);
    if (rc != CQ_OK)
        return rc;
    s->pcap = pcap;
    s->lcap = list_cap(pcap);
    chain_free(s, 0);
    return CQ_OK;
}

/* Doubles the pair storage, keeping every slot and list. Growth happens
 * only when a pair must be added and no slot is free. */
static int pairs_grow(cq_sap *s)
{
    if (s->pcap >= SAP_MAX_PAIRS / 2)
        return CQ_ENO_MEMORY;
    int pcap = s->pcap * 2;
    sap_pairs pr;
    uint32_t hmask;
    void *block;
    size_t size;
    if (pairs_alloc(&pr, pcap, &hmask, &block, &size) != CQ_OK)
        return CQ_ENO_MEMORY;
    memcpy(pr.pair, s->pr.pair, (size_t)s->pcap * sizeof *pr.pair);
    memcpy(pr.list, s->pr.list, (size_t)s->list_n * sizeof *pr.list);
    memcpy(pr.added, s->pr.added, (size_t)s->added_n * sizeof *pr.added);
    memcpy(pr.removed, s->pr.removed, (size_t)s->removed_n * sizeof *pr.removed);
    cq_free(s->pairs_block, s->pairs_size);
    int old = s->pcap;
    s->pr = pr;
    s->hmask = hmask;
    s->pairs_block = block;
    s->pairs_size = size;
    s->pcap = pcap;
    s->lcap = list_cap(pcap);
    for (int k = 0; k < old; k++)
        if (pr.pair[k].a >= 0)
            hash_put(s, pair_key(pr.pair[k].a, pr.pair[k].b), k);
    chain_free(s, old);
    s->stats.grows++;
    return CQ_OK;
}

int cq__sap_pair_find(const cq_sap *s, int a, int b)
{
    for (uint32_t h = hash_of(pair_key(a, b), s->hmask);; h = (h + 1) & s->hmask) {
        int slot = s->pr.hash[h];
        if (slot < 0 || (s->pr.pair[slot].a == a && s->pr.pair[slot].b == b))
            return slot;
    }
}

/* Linear-probing delete by backward shift: no tombstones, so lookups of
 * absent pairs stay short however many pairs come and go. */
static void hash_del(cq_sap *s, int slot)
{
    const sap_pair *pair = s->pr.pair;
    int32_t *hash = s->pr.hash;
    uint32_t m = s->hmask, hole = hash_of(pair_key(pair[slot].a, pair[slot].b), m);
    while (hash[hole] != slot)
        hole = (hole + 1) & m;
    for (uint32_t j = (hole + 1) & m; hash[j] >= 0; j = (j + 1) & m) {
        const sap_pair *q = &pair[hash[j]];
        uint32_t home = hash_of(pair_key(q->a, q->b), m);
        if (((j - home) & m) >= ((j - hole) & m)) { /* the hole lies on q's probe path */
            hash[hole] = hash[j];
            hole = j;
        }
    }
    hash[hole] = -1;
}

static int side_of(const sap_pair *p, int item) { return p->a == item ? 0 : 1; }

static void link_item(cq_sap *s, int slot, int item)
{
    sap_pair *pair = s->pr.pair;
    int side = side_of(&pair[slot], item), head = s->it.adj[item];
    pair[slot].link[side][0] = -1;
    pair[slot].link[side][1] = head;
    if (head >= 0)
        pair[head].link[side_of(&pair[head], item)][0] = slot;
    s->it.adj[item] = slot;
}

static void unlink_item(cq_sap *s, int slot, int item)
{
    sap_pair *pair = s->pr.pair;
    int side = side_of(&pair[slot], item);
    int prev = pair[slot].link[side][0], next = pair[slot].link[side][1];
    if (prev >= 0)
        pair[prev].link[side_of(&pair[prev], item)][1] = next;
    else
        s->it.adj[item] = next;
    if (next >= 0)
        pair[next].link[side_of(&pair[next], item)][0] = prev;
}

static void pair_add(cq_sap *s, int a, int b)
{
    if (s->free_head < 0 && pairs_grow(s) != CQ_OK) {
        s->incomplete = true;
        return;
    }
    if (s->list_n == s->lcap) /* holes and appended pairs fill it: at most once in pcap / 4 changes */
        cq__sap_pairs_sort(s);
    int slot = s->free_head;
    sap_pair *p = &s->pr.pair[slot];
    s->free_head = p->link[0][1];
    p->a = a;
    p->b = b;
    p->at = s->list_n;
    s->pr.list[s->list_n++] = (sap_ref){pair_key(a, b), slot, 1};
    s->live_n++;
    s->pr.added[s->added_n++] = slot;
    link_item(s, slot, a);
    link_item(s, slot, b);
    hash_put(s, pair_key(a, b), slot);
}

/* The list entry of live pair slot: where it was appended, unless a sort
 * has moved it since; then in the sorted part, by its key (the sorted part
 * holds each key once, holes keeping theirs, so the search is exact). */
static int list_find(const cq_sap *s, int slot)
{
    const sap_pair *p = &s->pr.pair[slot];
    uint64_t key = pair_key(p->a, p->b);
    const sap_ref *l = s->pr.list;
    if (p->at < s->list_n && l[p->at].slot == slot && l[p->at].key == key)
        return p->at;
    int lo = 0, hi = s->sorted_n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (l[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo; /* a live pair is in the list: l[lo] is its entry */
}

static void pair_drop(cq_sap *s, int slot)
{
    sap_pair *p = &s->pr.pair[slot];
    s->pr.list[list_find(s, slot)].slot = -1;
    s->live_n--;
    s->holes++;
    unlink_item(s, slot, p->a);
    unlink_item(s, slot, p->b);
    hash_del(s, slot);
    /* Pairs are made only by update, and an update never ends a pair it
     * made (every decision in it sees the final boxes and filters), so a
     * dropped pair was live at the epoch's start: the list stays <= pcap. */
    s->pr.removed[s->removed_n++] = (sap_ref){pair_key(p->a, p->b), slot, 0};
    p->a = -1;
    p->link[0][1] = s->free_head;
    s->free_head = slot;
}

void cq__sap_pair_begin(cq_sap *s, int i, int j)
{
    int a = i < j ? i : j, b = i < j ? j : i;
    if (sap_truth(s, a, b) && cq__sap_pair_find(s, a, b) < 0)
        pair_add(s, a, b);
}

void cq__sap_pair_end(cq_sap *s, int i, int j)
{
    int slot = cq__sap_pair_find(s, i < j ? i : j, i < j ? j : i);
    if (slot >= 0)
        pair_drop(s, slot);
}

void cq__sap_pair_prune(cq_sap *s, int i)
{
    for (int slot = s->it.adj[i]; slot >= 0;) {
        const sap_pair *p = &s->pr.pair[slot];
        int next = p->link[side_of(p, i)][1];
        if (!sap_truth(s, p->a, p->b))
            pair_drop(s, slot);
        slot = next;
    }
}

#define REF_LESS(x, y) ((x).key < (y).key)
CQ_MERGE_SORT_DEFINE(ref, sap_ref, REF_LESS)

void cq__sap_pairs_unmark(cq_sap *s)
{
    /* A pair made by the last update is live until its next epoch begins
     * (an update never ends a pair it made), so each has its entry. */
    for (int k = 0; k < s->added_n; k++)
        s->pr.list[list_find(s, s->pr.added[k])].added = 0;
}

/* Moves the entries of list[from..n) that are not holes to its front; returns how many. */
static int drop_holes(sap_ref *list, int from, int n)
{
    int m = from;
    for (int k = from; k < n; k++)
        if (list[k].slot >= 0)
            list[m++] = list[k];
    return m - from;
}

void cq__sap_pairs_sort(cq_sap *s)
{
    if (s->sorted_n == s->list_n && s->holes == 0)
        return;
    sap_pairs *pr = &s->pr;
    sap_ref *tail = pr->list + s->sorted_n;
    int m = drop_holes(pr->list, s->sorted_n, s->list_n);
    ref_sort(tail, m, pr->spare);
    int n = 0, a = 0;
    for (int k = 0; k < s->sorted_n; k++) { /* the sorted part, less its holes, merged with the tail */
        sap_ref x = pr->list[k];
        if (x.slot < 0)
            continue;
        while (a < m && tail[a].key < x.key)
            pr->spare[n++] = tail[a++];
        pr->spare[n++] = x;
    }
    while (a < m)
        pr->spare[n++] = tail[a++];
    sap_ref *t = pr->list;
    pr->list = pr->spare;
    pr->spare = t;
    s->list_n = s->sorted_n = n;
    s->holes = 0;
}

void cq__sap_pairs_finish(cq_sap *s)
{
    ref_sort(s->pr.removed, s->removed_n, s->pr.spare);
    int changes = s->holes + s->list_n - s->sorted_n;
    if (changes > 64 && changes > s->live_n / 4)
        cq__sap_pairs_sort(s);
}
