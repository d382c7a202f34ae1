/// @file server/state/fallbacks.h
/// The fallback log as GET /metrics/fallbacks serves it: every thread's
/// ring read and merged by the shared sequence, newest first, each record
/// with the label the server attached (time, world, request id).
#ifndef CQD_FALLBACKS_H
#define CQD_FALLBACKS_H

#include <stdbool.h>

#include "thread.h"

/// One record of the merged log.
typedef struct cqd_fallback_entry {
    cq_fallback_record rec;
    bool labelled; ///< false when the label was not written yet or already reused
    double time;   ///< Unix time (when labelled)
    char world[CQ_WORLD_ID_MAX + 1]; ///< "" for the stateless endpoints (when labelled)
    char request_id[sizeof(((cqd_fallback_label *)0)->request_id)];
} cqd_fallback_entry;

/// Fills out[0..max) with the newest records of every ring in the list
/// starting at threads (linked by next), newest (highest seq) first, and
/// returns how many. The caller holds whatever keeps the list alive
/// (srv->threads_lock); each thread's label_lock is taken while its labels
/// are copied. No allocation.
int cqd_fallbacks_collect(cqd_thread *threads, cqd_fallback_entry *out, int max);

#endif
