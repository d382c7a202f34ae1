/// @file server/state/thread.c
/// Per-thread state, created on a thread's first request and registered
/// with the server so a scrape can sum it.
#include "thread.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

/// The calling thread's state and the server it belongs to. A thread may
/// outlive a server (tests start several in one process), so the entry is
/// valid only for the same server object with the same boot id.
static _Thread_local struct {
    const cqd_server *srv;
    uint64_t boot_id;
    cqd_thread *self;
} tls;

cqd_thread *cqd_thread_self(cqd_server *srv)
{
    if (tls.self && tls.srv == srv && tls.boot_id == srv->boot_id)
        return tls.self;
    cqd_thread *t = cqd_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (pthread_mutex_init(&t->label_lock, NULL) != 0) {
        cqd_free(t);
        return NULL;
    }
    cq_fallback_log_init(&t->fallbacks, t->slots, CQD_FALLBACK_RING, &srv->fallback_clock);
    pthread_mutex_lock(&srv->threads_lock);
    t->next = srv->threads;
    srv->threads = t;
    pthread_mutex_unlock(&srv->threads_lock);
    tls.srv = srv;
    tls.boot_id = srv->boot_id;
    tls.self = t;
    return t;
}

/// Copies s (NULL as "") into dst of size n, cut to fit.
static void copy_label(char *dst, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len >= n)
        len = n - 1;
    memcpy(dst, s ? s : "", len);
    dst[len] = '\0';
}

void cqd_thread_label_fallbacks(cqd_thread *t, uint64_t mark, const char *world, const char *request_id)
{
    uint64_t pushed = cqd_thread_mark(t);
    if (pushed <= mark)
        return;
    uint64_t n = pushed - mark;
    cq_fallback_record recs[CQD_FALLBACK_RING];
    // Only this thread pushes to its ring, so the newest n records are exactly the new ones.
    int got = cq_fallback_log_read(&t->fallbacks, recs, n > CQD_FALLBACK_RING ? CQD_FALLBACK_RING : (int)n);
    double now = cqd_now();
    pthread_mutex_lock(&t->label_lock);
    // recs[i] is push number pushed - 1 - i: its label goes in the ring slot
    // that record occupies, so labels of live records never collide (seqs
    // come from the shared clock and have gaps, so seq % ring would).
    for (int i = got - 1; i >= 0; i--) {
        cqd_fallback_label *l = &t->labels[(pushed - 1 - (uint64_t)i) % CQD_FALLBACK_RING];
        atomic_store_explicit(&l->seq, 0, memory_order_relaxed);
        l->time = now;
        copy_label(l->world, sizeof l->world, world);
        copy_label(l->request_id, sizeof l->request_id, request_id);
        atomic_store_explicit(&l->seq, recs[i].seq, memory_order_release);
    }
    pthread_mutex_unlock(&t->label_lock);
}
