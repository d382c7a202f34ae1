/// @file server/state/thread.h
/// Per-thread state of every thread that runs handlers (HTTP pool threads,
/// stream workers): the core's counters, the fallback ring and the request
/// metrics. Each thread is the only writer of its own; a scrape sums them.
#ifndef CQD_THREAD_H
#define CQD_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "cq/counters.h"
#include "cq/fallback.h"
#include "cq/world.h"
#include "net/json_arena.h"
#include "ops/metrics.h"
#include "server.h"

/// Fallback records kept per thread.
#define CQD_FALLBACK_RING 256

/// What the server adds to a core fallback record: when, in which world
/// (or "" for the stateless endpoints), for which request.
typedef struct cqd_fallback_label {
    _Atomic uint64_t seq; ///< the record's seq, 0 while unset
    double time;
    char world[CQ_WORLD_ID_MAX + 1];
    char request_id[65];
} cqd_fallback_label;

typedef struct cqd_thread {
    cq_counters counters;
    cq_fallback_log fallbacks;
    cq_fallback_slot slots[CQD_FALLBACK_RING];
    pthread_mutex_t label_lock;    ///< guards labels (taken only when fallbacks happened, and by a scrape)
    cqd_fallback_label labels[CQD_FALLBACK_RING]; ///< in the ring's slots: push index % CQD_FALLBACK_RING
    cqd_req_metrics requests;
    _Atomic uint64_t timed_out;    ///< requests this thread stopped at --request-timeout (relaxed: one writer)
    cqd_json_arena json;           ///< jansson's allocations during this thread's requests
    char *spare;                   ///< CQD_SPARE_ANSWER bytes for a problem when memory ran out, or NULL
    struct cqd_thread *next;
} cqd_thread;

/// The room a thread sets aside so that an answer that finds no memory can
/// still say so (a problem's JSON or MessagePack fits in it).
#define CQD_SPARE_ANSWER 4096

/// The calling thread's state, registered with srv on first use (kept
/// until cqd_server_destroy). NULL only when out of memory.
cqd_thread *cqd_thread_self(cqd_server *srv);

/// The count of records t's ring has pushed so far: take it before a core
/// call, then label what the call pushed with cqd_thread_label_fallbacks.
static inline uint64_t cqd_thread_mark(const cqd_thread *t)
{
    return atomic_load_explicit(&t->fallbacks.pushed, memory_order_relaxed);
}
/// Labels the records t pushed since mark with world ("" or NULL when
/// stateless) and the request id.
void cqd_thread_label_fallbacks(cqd_thread *t, uint64_t mark, const char *world, const char *request_id);

#endif
