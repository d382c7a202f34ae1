/* The hot half of cqp_buf for proto's own writers (writer.c): an append is
 * a bounds check and a memcpy inlined at the call, the growth stays out of
 * line in buf.c. cqp_buf_append and the rest of write.h are built on the
 * same two functions. */
#ifndef CQP_BUF_INTERNAL_H
#define CQP_BUF_INTERNAL_H

#include <string.h>

#include "cqp/write.h"

/* The slow half of cqpb_room: grows buf (geometrically) for n more bytes
 * plus the NUL; false, with oom set, when it cannot (or was already oom). */
bool cqp__buf_grow(cqp_buf *buf, size_t n);

/* Makes room for n more bytes plus the NUL; false when buf is (now) oom.
 * An oom buffer is never given room, so the appends after it are dropped. */
static inline bool cqpb_room(cqp_buf *buf, size_t n)
{
    if (buf->data && !buf->oom && n < buf->cap - buf->len)
        return true;
    return cqp__buf_grow(buf, n);
}

/* Appends n bytes and keeps the NUL after them. */
static inline void cqpb_put(cqp_buf *buf, const void *bytes, size_t n)
{
    if (!cqpb_room(buf, n))
        return;
    memcpy(buf->data + buf->len, bytes, n);
    buf->len += n;
    buf->data[buf->len] = '\0';
}

/* Appends one byte. */
static inline void cqpb_putc(cqp_buf *buf, char c)
{
    if (!cqpb_room(buf, 1))
        return;
    buf->data[buf->len++] = c;
    buf->data[buf->len] = '\0';
}

#endif
