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

cqd_lines_result cqd_lines_feed(cqd_lines *l, const char *data, size_t n,
                                int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t seg = nl ? (size_t)(nl - data) : n;
        if (seg > l->max || l->partial.len > l->max - seg)
            return CQD_LINES_TOO_LONG;
        if (!nl) {
            cqp_buf_append(&l->partial, data, seg);
            return l->partial.oom ? CQD_LINES_FAILED : CQD_LINES_OK;
        }
        int rc;
        if (l->partial.len == 0) {
            // The common case: the whole line is in this read, no copy.
            rc = emit_line(data, seg, emit, ctx);
        } else {
            cqp_buf_append(&l->partial, data, seg);
            if (l->partial.oom)
                return CQD_LINES_FAILED;
            rc = emit_line(l->partial.data, l->partial.len, emit, ctx);
            // Keep a small buffer for the next line, not one sized for a huge line.
            if (l->partial.cap > KEEP_CAPACITY)
                cqp_buf_free(&l->partial);
            else
                cqp_buf_reset(&l->partial);
        }
        if (rc != 0)
            return CQD_LINES_FAILED;
        data += seg + 1;
        n -= seg + 1;
    }
    return CQD_LINES_OK;
}

int cqd_lines_finish(cqd_lines *l, int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    int rc = l->partial.len > 0 ? emit_line(l->partial.data, l->partial.len, emit, ctx) : 0;
    cqp_buf_free(&l->partial);
    return rc;
}

void cqd_lines_free(cqd_lines *l) { cqp_buf_free(&l->partial); }
