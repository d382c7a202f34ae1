/// @file server/net/stream_line.c
/// Splitting the stream's bytes into request lines, with the length cap
/// enforced before the line is buffered.
#include <string.h>

#include "stream_internal.h"

#define KEEP_CAPACITY (64 * 1024)

size_t cqd_lines_charge(const cqd_lines *l, size_t len) { return len > l->uncharged ? len - l->uncharged : 0; }

// Gives n bytes of the line's charge back to the budget.
static void give_back(cqd_lines *l, size_t n)
{
    if (l->admit && n > 0)
        cqd_admit_release(l->admit, n);
    l->held -= n;
}

// Emits one finished line unless it is empty once a trailing '\r' is gone,
// handing the callee its charge and giving back the rest.
static int emit_line(cqd_lines *l, const char *line, size_t len,
                     int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    give_back(l, l->held - (len == 0 ? 0 : cqd_lines_charge(l, len)));
    l->held = 0; // the callee's now
    return len == 0 ? 0 : emit(ctx, line, len);
}

// Charges the line for growing from `had` to had + n bytes.
static bool hold(cqd_lines *l, size_t had, size_t n)
{
    size_t more = cqd_lines_charge(l, had + n) - cqd_lines_charge(l, had);
    if (more > 0 && l->admit && !cqd_admit_reserve(l->admit, more))
        return false;
    l->held += more;
    return true;
}

// Empties the unfinished line, keeping a small buffer for the next line
// rather than one sized for a huge line.
static void clear_partial(cqd_lines *l)
{
    if (l->partial.cap > KEEP_CAPACITY)
        cqp_buf_free(&l->partial);
    else
        cqp_buf_reset(&l->partial);
}

// The line (len bytes so far, ended when `ended`) cannot be charged more:
// shed it (emit with NULL, in its place in the order) and drop the rest of
// it as it arrives.
static int shed(cqd_lines *l, size_t len, bool ended, int (*emit)(void *ctx, const char *line, size_t len),
                void *ctx)
{
    give_back(l, l->held);
    clear_partial(l);
    l->skipping = !ended;
    l->skipped = ended ? 0 : len;
    return emit(ctx, NULL, 0);
}

cqd_lines_result cqd_lines_feed(cqd_lines *l, const char *data, size_t n,
                                int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t seg = nl ? (size_t)(nl - data) : n;
        size_t had = l->skipping ? l->skipped : l->partial.len;
        int rc = 0;
        if (seg > l->max || had > l->max - seg) {
            return CQD_LINES_TOO_LONG; // a shed line too: --max-body holds whatever the budget
        } else if (l->skipping) {
            l->skipping = !nl;
            l->skipped = nl ? 0 : had + seg;
        } else if (!hold(l, had, seg)) {
            rc = shed(l, had + seg, nl != NULL, emit, ctx);
        } else if (nl && had == 0) {
            // The common case: the whole line is in this read, no copy.
            rc = emit_line(l, data, seg, emit, ctx);
        } else {
            cqp_buf_append(&l->partial, data, seg);
            if (l->partial.oom)
                return CQD_LINES_FAILED;
            if (nl) {
                rc = emit_line(l, l->partial.data, l->partial.len, emit, ctx);
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

char *cqd_lines_take(cqd_lines *l, const char *line)
{
    if (!line || line != l->partial.data)
        return NULL;
    char *data = l->partial.data;
    l->partial = (cqp_buf){0};
    return data;
}

int cqd_lines_finish(cqd_lines *l, int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    int rc = 0;
    if (l->partial.len > 0 && !l->skipping)
        rc = emit_line(l, l->partial.data, l->partial.len, emit, ctx);
    cqd_lines_free(l);
    return rc;
}

void cqd_lines_free(cqd_lines *l)
{
    give_back(l, l->held);
    cqp_buf_free(&l->partial);
    l->skipping = false;
    l->skipped = 0;
}
