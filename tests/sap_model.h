/* The sweep-and-prune test model: what the broadphase should hold (boxes,
 * filters, static flags, liveness), an independent brute-force oracle of
 * its pairs, and the per-update check of the pair list, added flags, slots
 * and removed list against the oracle and the previous frame. */
#ifndef SAP_MODEL_H
#define SAP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "sap.h"

typedef struct sm_model {
    int cap; /* ids 0..cap-1 */
    cq_aabb *box;
    uint32_t *layer, *mask;
    bool *is_static, *alive, *reborn; /* reborn: removed since the last check */
} sm_model;

typedef struct sm_keys {
    uint64_t *k;
    int *slot;
    int n, cap;
} sm_keys;

typedef struct sm_history {
    sm_keys prev; /* the last checked list, with slots */
    sm_keys now, removed;
    unsigned char *slot_used;
    cq_sap_pair *got; /* the list's live entries, gathered */
    int got_cap;
    unsigned updates; /* checked so far: every third sorts the list (cq__sap_pairs_sort) */
} sm_history;

/* A model of ids 0..cap-1, all absent. */
sm_model sm_model_make(int cap);
void sm_model_free(sm_model *m);
/* Mutate the broadphase and the model alike. */
void sm_put(cq_sap *sap, sm_model *m, int id, cq_aabb box, uint32_t layer, uint32_t mask, bool is_static);
void sm_drop(cq_sap *sap, sm_model *m, int id);
void sm_shift(cq_sap *sap, sm_model *m, int id, cq_aabb box);
void sm_refilter(cq_sap *sap, sm_model *m, int id, uint32_t layer, uint32_t mask);
/* A pair (a, b), a < b, as one sortable key. */
uint64_t sm_key(int a, int b);
void sm_keys_push(sm_keys *v, uint64_t k, int slot);
void sm_keys_free(sm_keys *v);
/* Every expected pair, sorted: O(n^2), and pruned by x spans. */
void sm_oracle_all(const sm_model *m, sm_keys *out);
void sm_oracle(const sm_model *m, sm_keys *out);
/* The index of k in a sorted key list, or -1. */
int sm_find_key(const sm_keys *v, uint64_t k);
void sm_history_free(sm_history *h);
/* Updates the broadphase (cq__sap_update_lazy) and checks it against the
 * oracle and the last frame: the list's live entries as a set, and every
 * third update, after cq__sap_pairs_sort, the sorted list too, so that
 * holes and appended pairs pile up over the updates in between. */
void sm_update_and_check(cq_sap *sap, sm_model *m, sm_history *h);

#endif
