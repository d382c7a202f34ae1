/// @file server/replay/http_client_wire.c
/// The replay client's bytes on the wire (http_client.h): response heads,
/// chunked bodies, the URL, and the request it sends. Pure functions.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_client.h"

/* ---- parsing ----------------------------------------------------------- */

/// The end of the line starting at i (the index of its "\r\n"), or len.
static size_t line_end(const char *buf, size_t i, size_t len)
{
    for (; i + 1 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n')
            return i;
    return len;
}

/// True when the comma-separated list s[0..n) holds token (any case).
static bool has_token(const char *s, size_t n, const char *token)
{
    size_t tn = strlen(token);
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
            i++;
        size_t start = i;
        while (i < n && s[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
            end--;
        if (end - start == tn && strncasecmp(s + start, token, tn) == 0)
            return true;
    }
    return false;
}

/// A header line: sets the fields of h it concerns. Returns 0, or -1.
static int header(const char *s, size_t n, cqd_hc_head *h, bool *keep_alive)
{
    const char *colon = memchr(s, ':', n);
    if (!colon || colon == s)
        return -1;
    size_t name_len = (size_t)(colon - s);
    const char *v = colon + 1;
    size_t vn = n - name_len - 1;
    while (vn && (*v == ' ' || *v == '\t'))
        v++, vn--;
    while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
        vn--;
    if (name_len == 14 && strncasecmp(s, "Content-Length", 14) == 0) {
        long long cl = 0;
        if (vn == 0 || vn > 15)
            return -1;
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                return -1;
            cl = cl * 10 + (v[i] - '0');
        }
        if (h->content_length >= 0 && h->content_length != cl)
            return -1;
        h->content_length = cl;
    } else if (name_len == 17 && strncasecmp(s, "Transfer-Encoding", 17) == 0) {
        h->chunked |= has_token(v, vn, "chunked");
    } else if (name_len == 10 && strncasecmp(s, "Connection", 10) == 0) {
        h->close |= has_token(v, vn, "close");
        *keep_alive |= has_token(v, vn, "keep-alive");
    }
    return 0;
}

int cqd_hc_parse_head(const char *buf, size_t len, cqd_hc_head *h)
{
    *h = (cqd_hc_head){.content_length = -1};
    size_t scan = len < CQD_HC_HEAD_MAX ? len : CQD_HC_HEAD_MAX;
    size_t eol = line_end(buf, 0, scan);
    if (eol == scan)
        return len >= CQD_HC_HEAD_MAX ? -1 : 0;
    // "HTTP/1.x SSS[ reason]"
    if (eol < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
        (eol > 12 && buf[12] != ' '))
        return -1;
    for (int i = 9; i < 12; i++) {
        if (buf[i] < '0' || buf[i] > '9')
            return -1;
        h->status = h->status * 10 + (buf[i] - '0');
    }
    if (h->status < 100)
        return -1;
    bool http10 = buf[7] == '0', keep_alive = false;
    size_t i = eol + 2;
    for (;;) {
        eol = line_end(buf, i, scan);
        if (eol == scan)
            return len >= CQD_HC_HEAD_MAX ? -1 : 0;
        if (eol == i)
            break;
        if (header(buf + i, eol - i, h, &keep_alive) < 0)
            return -1;
        i = eol + 2;
    }
    h->size = eol + 2;
    if (http10 && !keep_alive)
        h->close = true;
    return 1;
}

int cqd_hc_dechunk(const char *buf, size_t len, cqp_buf *out, size_t *used)
{
    cqp_buf_reset(out);
    size_t i = 0;
    for (;;) {
        size_t eol = line_end(buf, i, len);
        if (eol == len)
            return 0;
        unsigned long long size = 0;
        size_t k = i;
        for (; k < eol; k++) {
            char c = buf[k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0)
                break;
            if (size >> 60)
                return -1;
            size = size << 4 | (unsigned)d;
        }
        if (k == i || (k < eol && buf[k] != ';' && buf[k] != ' ' && buf[k] != '\t'))
            return -1; // no digits, or junk before a chunk extension
        i = eol + 2;
        if (size == 0)
            break;
        if (size > len || len - i < size + 2)
            return 0;
        if (buf[i + size] != '\r' || buf[i + size + 1] != '\n')
            return -1;
        cqp_buf_append(out, buf + i, (size_t)size);
        i += size + 2;
    }
    for (;;) { // trailer fields until the blank line
        size_t eol = line_end(buf, i, len);
        if (eol == len)
            return 0;
        bool blank = eol == i;
        i = eol + 2;
        if (blank)
            break;
    }
    *used = i;
    return out->oom ? -1 : 1;
}

int cqd_hc_parse_url(const char *url, char *host, size_t host_size, char *port, size_t port_size)
{
    if (strncmp(url, "http://", 7) != 0)
        return -1;
    const char *h = url + 7, *rest;
    size_t hn;
    if (*h == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return -1;
        h++;
        hn = (size_t)(close - h);
        rest = close + 1;
    } else {
        hn = strcspn(h, ":/");
        rest = h + hn;
    }
    if (hn == 0 || hn >= host_size)
        return -1;
    const char *p = "80";
    size_t pn = 2;
    if (*rest == ':') {
        p = rest + 1;
        pn = strspn(p, "0123456789");
        if (pn == 0 || pn > 5 || atoi(p) > 65535)
            return -1;
        rest = p + pn;
    }
    if (pn >= port_size || (rest[0] && strcmp(rest, "/") != 0))
        return -1;
    memcpy(host, h, hn);
    host[hn] = '\0';
    memcpy(port, p, pn);
    port[pn] = '\0';
    return 0;
}

/// Appends s, %-encoding the bytes keep() refuses.
static void put_encoded(cqp_buf *out, const char *s, bool (*keep)(unsigned char))
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (keep(*p)) {
            cqp_buf_append(out, p, 1);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            cqp_buf_append(out, esc, 3);
        }
    }
}

/// RFC 3986 path characters ('%' and '?' excluded: the server decodes the path).
static bool path_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-._~!$&'()*+,;=:@/", c) != NULL;
}

/// What may stand in a request line's query (the server sees the query raw).
static bool query_char(unsigned char c) { return c > 0x20 && c < 0x7f && c != '#'; }

/// True when v (NULL: no header) may be a header value: no control
/// character, so no CR or LF that would end it and start a header of its own.
static bool header_value_ok(const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

bool cqd_hc_is_token(const char *method)
{
    for (const char *p = method; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("!#$%&'*+-.^_`|~", *p)))
            return false;
    return method[0] != '\0';
}

int cqd_hc_format_request(cqp_buf *out, const char *host_header, const cqd_hc_request *rq)
{
    /* The callers check what they pass; this is the last line before the
     * wire, where a CR or LF would let a value write headers of its own. */
    const char *values[] = {host_header, rq->request_id, rq->authorization, rq->content_type, rq->accept};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!header_value_ok(values[i]))
            return -1;
    if (!cqd_hc_is_token(rq->method))
        return -1;
    cqp_buf_puts(out, rq->method);
    cqp_buf_puts(out, " ");
    put_encoded(out, rq->path, path_char);
    if (rq->query) {
        cqp_buf_puts(out, "?");
        put_encoded(out, rq->query, query_char);
    }
    cqp_buf_printf(out, " HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\nConnection: keep-alive\r\n", host_header,
                   rq->body_len);
    if (rq->request_id && rq->request_id[0])
        cqp_buf_printf(out, "X-Request-Id: %s\r\n", rq->request_id);
    if (rq->authorization)
        cqp_buf_printf(out, "Authorization: %s\r\n", rq->authorization);
    if (rq->content_type)
        cqp_buf_printf(out, "Content-Type: %s\r\n", rq->content_type);
    if (rq->accept)
        cqp_buf_printf(out, "Accept: %s\r\n", rq->accept);
    cqp_buf_puts(out, "\r\n");
    cqp_buf_append(out, rq->body, rq->body_len);
    return 0;
}
