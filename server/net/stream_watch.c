/// @file server/net/stream_watch.c
/// When a stream connection that makes no progress is closed, and when a
/// request still arriving comes too slowly (its pace). A client may
/// hold a connection open between game ticks, so an idle one gets a
/// generous limit; a half-sent line or replies the client does not take
/// get --timeout, as a slow HTTP client does. The server's own work (a
/// request queued or running) never counts against the client.
#include "stream_internal.h"

// Starts a pace window at now, with the request's bytes so far.
static void pace_from(cqd_pace *p, uint64_t now, size_t bytes, bool grace)
{
    *p = (cqd_pace){.at = now, .base = bytes, .grace = grace};
}

// Windows, not HTTP's average since the head: bytes sent fast at first buy
// no time later. A line's bytes are held (--max-buffered) before its token
// can be read, so a client that sends most of a 16 MiB line and then a
// byte every few seconds must not keep them for long; a request within
// its free bytes holds no budget and is left to --timeout alone (someone
// typing a line by hand is not cut).
bool cqd_pace_slow(cqd_pace *p, size_t had, size_t n, size_t bytes, uint64_t now, size_t free,
                   size_t rate, int grace_s)
{
    if (bytes == 0 || rate == 0)
        return false;
    if (had == 0 || bytes != had + n) { // it began in this read
        pace_from(p, now, bytes, true);
        return false;
    }
    if (bytes <= free)
        return false;
    uint64_t grace = (uint64_t)grace_s * 1000, elapsed = now - p->at;
    uint64_t window = p->grace || grace > 1000 ? grace : 1000;
    if (elapsed < window)
        return false;
    double due = (double)rate * (double)elapsed / 1e3;
    bool slow = !p->grace && (double)(bytes - p->base) < due;
    pace_from(p, now, bytes, false);
    return slow;
}

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
