/// @file server/stream_line.c
/// Splitting the stream's bytes into request lines, with the length cap
/// enforced before the line is buffered.
#include <string.h>

#include "stream_internal.h"

#define KEEP_CAPACITY (64 * 1024)

// Emits one finished line unless it is empty once a trailing '\r' is gone.
static int emit_line(const char *line, size_t len, int (*emit)(void *ctx, const char *line, size_t len),
                     void *ctx)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    return len == 0 ? 0 : emit(ctx, line, len);
}

// Charges n more bytes of the unfinished line to the budget.
static bool hold(cqd_lines *l, size_t n)
{
    if (l->admit && !cqd_admit_reserve(l->admit, n))
        return false;
    l->held += n;
    return true;
}

// Gives back what the unfinished line was charged.
static void unhold(cqd_lines *l)
{
    if (l->admit && l->held > 0)
        cqd_admit_release(l->admit, l->held);
    l->held = 0;
}

// Empties the unfinished line, keeping a small buffer for the next line
// rather than one sized for a huge line.
static void clear_partial(cqd_lines *l)
{
    unhold(l);
    if (l->partial.cap > KEEP_CAPACITY)
        cqp_buf_free(&l->partial);
    else
        cqp_buf_reset(&l->partial);
}

// The unfinished line cannot be charged more: shed it (emit with NULL, in
// its place in the order) and drop its bytes up to its end.
static int shed(cqd_lines *l, int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    clear_partial(l);
    l->skipping = true;
    return emit(ctx, NULL, 0);
}

cqd_lines_result cqd_lines_feed(cqd_lines *l, const char *data, size_t n,
                                int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t seg = nl ? (size_t)(nl - data) : n;
        int rc = 0;
        if (l->skipping) {
            l->skipping = !nl;
        } else if (seg > l->max || l->partial.len > l->max - seg) {
            return CQD_LINES_TOO_LONG;
        } else if (nl && l->partial.len == 0) {
            // The common case: the whole line is in this read, no copy.
            rc = emit_line(data, seg, emit, ctx);
        } else if (!hold(l, seg)) {
            rc = shed(l, emit, ctx);
            l->skipping = !nl;
        } else {
            cqp_buf_append(&l->partial, data, seg);
            if (l->partial.oom)
                return CQD_LINES_FAILED;
            if (nl) {
                unhold(l); // the line is the caller's now
                rc = emit_line(l->partial.data, l->partial.len, emit, ctx);
                clear_partial(l);
            }
        }
        if (rc != 0)
            return CQD_LINES_FAILED;
        if (!nl)
            return CQD_LINES_OK;
        data += seg + 1;
        n -= seg + 1;
    }
    return CQD_LINES_OK;
}

int cqd_lines_finish(cqd_lines *l, int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    unhold(l);
    int rc = l->partial.len > 0 && !l->skipping ? emit_line(l->partial.data, l->partial.len, emit, ctx) : 0;
    cqp_buf_free(&l->partial);
    l->skipping = false;
    return rc;
}

void cqd_lines_free(cqd_lines *l)
{
    unhold(l);
    cqp_buf_free(&l->partial);
}
