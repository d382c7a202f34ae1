/* cqp_buf: a growable, always NUL-terminated byte buffer. It grows
 * geometrically so a response of any size costs amortised linear time, and
 * an allocation failure is sticky (oom) so callers check once at the end. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf_internal.h"

/* Smallest allocation: most bodies fit without a second realloc. */
#define CQP_BUF_MIN 256

/* Past its limit a buffer is over: what was written is dropped (counted
 * in wanted) and the storage is reused as a window the appends go on
 * writing into, so the writers run unchanged and the count is exact. True
 * when the append of n bytes is to go into that window; then false is
 * returned only if it cannot (n as long as the window: oom). */
static bool past_limit(cqp_buf *buf, size_t n)
{
    if (!buf->over && (!buf->limit || (buf->len <= buf->limit && n <= buf->limit - buf->len)))
        return false;
    buf->over = true;
    buf->wanted = buf->len > SIZE_MAX - buf->wanted ? SIZE_MAX : buf->wanted + buf->len;
    buf->len = 0;
    if (!buf->data || n >= buf->cap) {
        buf->wanted = n > SIZE_MAX - buf->wanted ? SIZE_MAX : buf->wanted + n;
        buf->oom = true;
    }
    return true;
}

size_t cqp_buf_size(const cqp_buf *buf)
{
    if (!buf->over)
        return buf->len;
    return buf->len > SIZE_MAX - buf->wanted ? SIZE_MAX : buf->wanted + buf->len;
}

bool cqp__buf_grow(cqp_buf *buf, size_t n)
{
    if (buf->oom) {
        if (buf->over)
            buf->wanted = n > SIZE_MAX - buf->wanted ? SIZE_MAX : buf->wanted + n;
        return false;
    }
    if (n < buf->cap - buf->len && buf->data)
        return true;
    if (past_limit(buf, n))
        return !buf->oom;
    if (n > SIZE_MAX / 2 - buf->len - 1) {
        buf->oom = true;
        return false;
    }
    size_t need = buf->len + n + 1;
    size_t cap = buf->cap < CQP_BUF_MIN ? CQP_BUF_MIN : buf->cap;
    while (cap < need)
        cap *= 2;
    // Never more than the limit needs, so the room check inlined at each
    // append (cqpb_room) cannot let an append past it.
    if (buf->limit && cap > buf->limit + 1)
        cap = buf->limit + 1;
    char *data = realloc(buf->data, cap);
    if (!data) {
        buf->oom = true;
        return false;
    }
    buf->data = data;
    buf->cap = cap;
    return true;
}

bool cqp_buf_reserve(cqp_buf *buf, size_t n)
{
    if (buf->oom || past_limit(buf, n) || n > SIZE_MAX / 2 - buf->len - 1)
        return false; // over: the appends to come go into the window
    size_t need = buf->len + n + 1;
    if (buf->data && need <= buf->cap)
        return true;
    char *data = realloc(buf->data, need);
    if (!data)
        return false;
    if (!buf->data)
        data[0] = '\0';
    buf->data = data;
    buf->cap = need;
    return true;
}

void cqp_buf_reset(cqp_buf *buf)
{
    buf->len = 0;
    buf->oom = buf->over = false;
    buf->wanted = 0;
    if (buf->data)
        buf->data[0] = '\0';
}

void cqp_buf_free(cqp_buf *buf)
{
    free(buf->data);
    *buf = (cqp_buf){0};
}

void cqp_buf_append(cqp_buf *buf, const void *bytes, size_t n)
{
    /* Not cqpb_put: bytes may be NULL when n is 0 (memcpy forbids it). */
    if (!cqpb_room(buf, n))
        return;
    if (n)
        memcpy(buf->data + buf->len, bytes, n);
    buf->len += n;
    buf->data[buf->len] = '\0';
}

void cqp_buf_puts(cqp_buf *buf, const char *s)
{
    cqp_buf_append(buf, s, strlen(s));
}

void cqp_buf_printf(cqp_buf *buf, const char *fmt, ...)
{
    if (!cqpb_room(buf, 0))
        return;
    va_list ap;
    va_start(ap, fmt);
    size_t room = buf->cap - buf->len;
    int n = vsnprintf(buf->data + buf->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        /* An encoding error: nothing sensible was written. */
        buf->data[buf->len] = '\0';
        buf->oom = true;
        return;
    }
    if ((size_t)n >= room) {
        /* Too long for the spare room: grow to fit and format again. */
        buf->data[buf->len] = '\0';
        if (!cqpb_room(buf, (size_t)n))
            return;
        va_start(ap, fmt);
        vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    buf->len += (size_t)n;
}
