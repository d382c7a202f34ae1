/// @file server/net/stream_watch.c
/// When a stream connection that makes no progress is closed. A client may
/// hold a connection open between game ticks, so an idle one gets a
/// generous limit; a half-sent line or replies the client does not take
/// get --timeout, as a slow HTTP client does. The server's own work (a
/// request queued or running) never counts against the client.
#include "stream_internal.h"

cqd_wait cqd_watch_due(const cqd_watch *w, int timeout_s, uint64_t *due, uint64_t *look)
{
    uint64_t limit = (uint64_t)(timeout_s > 0 ? timeout_s : 1) * 1000;
    // Replies first: a client that stopped reading holds them in memory
    // whatever else it does (it may still send, or have ended its input).
    if (w->unwritten) {
        *due = w->write_at + limit;
        *look = w->now + limit / 4 < *due ? w->now + limit / 4 : *due;
        return CQD_WAIT_WRITE;
    }
    if (w->busy || !w->reading)
        return CQD_WAIT_NONE;
    if (w->partial) {
        *due = *look = w->active_at + limit;
        return CQD_WAIT_LINE;
    }
    *due = *look = w->active_at + CQD_STREAM_IDLE_FACTOR * limit;
    return CQD_WAIT_IDLE;
}
