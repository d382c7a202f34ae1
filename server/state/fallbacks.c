/* Merging the per-thread fallback rings, newest first. */
#include "fallbacks.h"

#include <string.h>

/* The label of rec, or NULL. Labels sit in the ring's own slots (by push
 * index), so a live record's label is never overwritten by another's; the
 * record does not carry its push index, hence the scan (a few hundred
 * comparisons per record, on a rare diagnostic endpoint). */
static const cqd_fallback_label *find_label(const cqd_thread *t, uint64_t seq)
{
    for (int k = 0; k < CQD_FALLBACK_RING; k++)
        if (atomic_load_explicit(&t->labels[k].seq, memory_order_relaxed) == seq)
            return &t->labels[k];
    return NULL;
}

static void copy_label(cqd_fallback_entry *e, cqd_thread *t, const cq_fallback_record *rec)
{
    const cqd_fallback_label *lab = find_label(t, rec->seq);
    e->rec = *rec;
    e->labelled = lab != NULL;
    if (e->labelled) {
        e->time = lab->time;
        memcpy(e->world, lab->world, sizeof e->world);
        memcpy(e->request_id, lab->request_id, sizeof e->request_id);
        e->world[sizeof e->world - 1] = '\0';
        e->request_id[sizeof e->request_id - 1] = '\0';
    } else {
        e->time = 0;
        e->world[0] = '\0';
        e->request_id[0] = '\0';
    }
}

int cqd_fallbacks_collect(cqd_thread *threads, cqd_fallback_entry *out, int max)
{
    if (max <= 0)
        return 0;
    int n = 0;
    for (cqd_thread *t = threads; t; t = t->next) {
        cq_fallback_record recs[CQD_FALLBACK_RING];
        int k = cq_fallback_log_read(&t->fallbacks, recs, max < CQD_FALLBACK_RING ? max : CQD_FALLBACK_RING);
        /* Both lists are sorted newest first: merge from the back, in place,
         * dropping whatever lands at max or beyond. Writes stay at or above
         * the next unread out[i], so nothing is overwritten before it moves. */
        pthread_mutex_lock(&t->label_lock);
        int i = n - 1, j = k - 1;
        for (int w = n + k - 1; j >= 0; w--) {
            if (i >= 0 && out[i].rec.seq < recs[j].seq) {
                if (w < max)
                    out[w] = out[i];
                i--;
            } else {
                if (w < max)
                    copy_label(&out[w], t, &recs[j]);
                j--;
            }
        }
        pthread_mutex_unlock(&t->label_lock);
        n = n + k < max ? n + k : max;
    }
    return n;
}
