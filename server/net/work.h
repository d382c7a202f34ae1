/// @file server/net/work.h
/// A pool of handler threads, one for each listener (http_work.c,
/// stream_conn.c): the libmicrohttpd threads and the stream's loop only
/// move bytes, so a request that runs for
/// seconds holds a pool thread, never the connections of others. Threads
/// are started on demand, one when a job finds every started thread busy,
/// up to a maximum; a started thread stays until the pool is drained, so
/// its per-thread state (thread.h) is registered once.
#ifndef CQD_WORK_H
#define CQD_WORK_H

#include <stdbool.h>

/// One unit of work. The submitter owns it; run is called once, on a pool
/// thread (or never, when cqd_work_submit returned false).
typedef struct cqd_job {
    void (*run)(struct cqd_job *job);
    struct cqd_job *next; ///< the pool's queue link
} cqd_job;

typedef struct cqd_work cqd_work;

/// A pool of at most max_threads threads, none started yet. NULL when out
/// of memory. Free with cqd_work_free after cqd_work_drain.
cqd_work *cqd_work_new(int max_threads);

/// Queues job to run on a pool thread, starting one when none is idle and
/// fewer than the maximum run. False when the pool drains or no thread
/// could ever run it (none started, and starting one failed): then job is
/// not queued and the caller runs it itself.
bool cqd_work_submit(cqd_work *w, cqd_job *job);

/// Takes no new job, lets the threads run every queued one, then joins
/// them. A second call does nothing; cqd_work_submit keeps answering
/// false after.
void cqd_work_drain(cqd_work *w);

/// Frees a drained pool (NULL is fine).
void cqd_work_free(cqd_work *w);

/// Threads started so far (never more than the maximum).
int cqd_work_threads(cqd_work *w);

#endif
