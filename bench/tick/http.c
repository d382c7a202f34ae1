/* Reading HTTP/1.1 responses: the status line, the headers the client
 * needs, then a Content-Length or chunked body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conn.h"

/* Whether the n bytes at s hold the word w (memmem is not POSIX). */
static bool holds(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    for (size_t i = 0; i + k <= n; i++)
        if (strncasecmp(s + i, w, k) == 0)
            return true;
    return false;
}

/* The head's length up to and with its blank line, once it has arrived. */
static bool read_head(tk_conn *c, size_t *len)
{
    size_t scanned = 0;
    for (;;) {
        const char *base = c->in.p + c->start, *end = c->in.p + c->in.len;
        for (const char *at = base + (scanned > 3 ? scanned - 3 : 0); end - at >= 4; at++)
            if (memcmp(at, "\r\n\r\n", 4) == 0) {
                *len = (size_t)(at + 4 - base);
                return true;
            }
        scanned = c->in.len - c->start;
        if (scanned > 64 * 1024) {
            fprintf(stderr, "cq-tick: a response head over 64 KiB\n");
            return false;
        }
        if (!tk_fill(c))
            return false;
    }
}

/* The value of header name in head (its first line is the status line),
 * or NULL; *n is its length. */
static const char *header(const char *head, size_t len, const char *name, size_t *n)
{
    size_t k = strlen(name);
    for (const char *line = memchr(head, '\n', len); line && line + 1 < head + len;) {
        line++;
        const char *eol = memchr(line, '\r', (size_t)(head + len - line));
        if (!eol)
            break;
        if ((size_t)(eol - line) > k && line[k] == ':' && strncasecmp(line, name, k) == 0) {
            const char *v = line + k + 1;
            while (v < eol && *v == ' ')
                v++;
            *n = (size_t)(eol - v);
            return v;
        }
        line = eol + 1;
    }
    return NULL;
}

/* A chunked body: hex size lines, each chunk, a zero chunk and the
 * (empty) trailer. */
static bool read_chunked(tk_conn *c, tk_buf *body)
{
    for (;;) {
        size_t line = 0;
        char *eol;
        while (!(eol = memchr(c->in.p + c->start, '\n', c->in.len - c->start)))
            if (!tk_fill(c))
                return false;
        line = (size_t)(eol + 1 - (c->in.p + c->start));
        size_t size = strtoul(c->in.p + c->start, NULL, 16);
        c->start += line;
        if (!tk_need(c, size + 2))
            return false;
        tk_buf_add(body, c->in.p + c->start, size);
        c->start += size + 2;
        if (size == 0)
            return true; /* the daemon sends no trailers: the CRLF above ended the body */
    }
}

bool tk_http_read(tk_conn *c, tk_reply *r)
{
    size_t len, n;
    if (!read_head(c, &len))
        return false;
    const char *head = c->in.p + c->start;
    if (len < 12 || strncmp(head, "HTTP/1.", 7) != 0) {
        fprintf(stderr, "cq-tick: not an HTTP response: %.40s\n", head);
        return false;
    }
    r->status = atoi(head + 9);
    const char *type = header(head, len, "Content-Type", &n);
    r->format = type && holds(type, n, "msgpack") ? TK_MSGPACK : TK_JSON;
    const char *te = header(head, len, "Transfer-Encoding", &n);
    bool chunked = te && holds(te, n, "chunked");
    const char *cl = header(head, len, "Content-Length", &n);
    size_t size = cl ? strtoul(cl, NULL, 10) : 0;
    c->start += len;
    r->body.len = 0;
    if (chunked)
        return read_chunked(c, &r->body);
    if (!tk_need(c, size))
        return false;
    tk_buf_add(&r->body, c->in.p + c->start, size);
    c->start += size;
    return true;
}
