/* Reading stream replies: JSON lines or MessagePack frames (0xCE, a 4-byte
 * big-endian length, the envelope). */
#include <stdio.h>
#include <string.h>

#include "conn.h"

static bool read_line(tk_conn *c, tk_buf *raw)
{
    size_t scanned = 0;
    char *eol;
    while (!(eol = memchr(c->in.p + c->start + scanned, '\n', c->in.len - c->start - scanned))) {
        scanned = c->in.len - c->start;
        if (!tk_fill(c))
            return false;
    }
    size_t n = (size_t)(eol - (c->in.p + c->start));
    tk_buf_add(raw, c->in.p + c->start, n);
    c->start += n + 1;
    return true;
}

static bool read_frame(tk_conn *c, tk_buf *raw)
{
    if (!tk_need(c, 5))
        return false;
    const unsigned char *h = (const unsigned char *)c->in.p + c->start;
    if (h[0] != 0xCE) { /* a daemon without MessagePack answers with a JSON line */
        fprintf(stderr, "cq-tick: a stream reply that is not a MessagePack frame: %.80s\n", (const char *)h);
        return false;
    }
    size_t n = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
    c->start += 5;
    if (!tk_need(c, n))
        return false;
    tk_buf_add(raw, c->in.p + c->start, n);
    c->start += n;
    return true;
}

bool tk_stream_read(tk_conn *c, tk_format f, tk_buf *raw)
{
    raw->len = 0;
    return f == TK_MSGPACK ? read_frame(c, raw) : read_line(c, raw);
}
