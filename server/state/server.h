/// @file server/state/server.h
/// The daemon's state, owned by main and passed to every part explicitly
/// (no mutable globals): config, logger, the worlds, the per-thread
/// counters, and the readiness state the probes and the drain read.
#ifndef CQD_SERVER_H
#define CQD_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "net/admit.h"
#include "ops/config.h"
#include "ops/failpoint.h"
#include "ops/log.h"
#include "ops/metrics.h"

struct cqd_recorder;
struct cqd_registry;
struct cqd_thread;

/// Life cycle, as /readyz reports it.
typedef enum cqd_state {
    CQD_STARTING, ///< recovering: not ready
    CQD_READY,
    CQD_DRAINING, ///< shutting down: not ready, in-flight requests finish
} cqd_state;

typedef struct cqd_server {
    cqd_config cfg;
    cqd_logger log;
    cqd_access access;              ///< which requests get an access line (log.h)
    struct cqd_registry *worlds;
    _Atomic int state;              ///< cqd_state
    _Atomic uint64_t fallback_clock; ///< the sequence shared by every thread's fallback ring
    _Atomic uint64_t request_seq;   ///< numbers generated request ids
    uint64_t boot_id;               ///< random per process, prefix of generated request ids
    double started;                 ///< Unix time of start-up (build info, uptime)
    pthread_mutex_t threads_lock;   ///< guards the thread list (registration and scrape)
    struct cqd_thread *threads;     ///< every thread that ever handled a request
    struct cqd_recorder *recorder;  ///< --record FILE, or NULL (record.h)
    struct cqd_store *store;        ///< the journal and snapshots (store.h), or NULL without a data directory
    cqd_admit admit;                ///< requests in flight and the body bytes they hold (admit.h)
    cqd_failpoint fp;               ///< COLLISIOND_FAILPOINT, a test hook (failpoint.h); zero: none
    _Atomic int stream_connections; ///< open stream connections, for /metrics (the stream's own count, mirrored)
    /// Reply bytes of stream connections made and not yet written (or
    /// dropped), held to --max-stream-reply-total: the loop adds the
    /// replies it makes, workers theirs as each is made, and a reply's
    /// bytes leave when it is freed. Read by /metrics.
    _Atomic size_t stream_reply_bytes;
    /// Answer bytes of HTTP requests handed to libmicrohttpd and not yet
    /// freed by it (sent, or the connection gone), held to
    /// --max-http-reply-total (http_work.c). Read by /metrics.
    _Atomic size_t http_reply_bytes;
    cqd_journal_metrics journal;    ///< the journal's writes, syncs and bytes, for /metrics (store_journal.c adds)
} cqd_server;

/// Sets up srv from cfg (copied): logger, empty registry, no threads,
/// state STARTING. Returns 0, or -1 when out of memory.
int cqd_server_init(cqd_server *srv, const cqd_config *cfg);
/// Frees everything srv owns (worlds, threads' state). No request may run.
void cqd_server_destroy(cqd_server *srv);

/// Unix time in seconds, and a monotonic clock in nanoseconds.
double cqd_now(void);
uint64_t cqd_mono_ns(void);

#endif
