/* Requests as they go on the wire: HTTP/1.1 with a Content-Length body, and
 * the stream transport's envelopes (docs/API.md section 11). */
#include <string.h>

#include <msgpuck.h>

#include "tick.h"

void tk_http_request(tk_buf *b, const char *method, const char *path, tk_format f, const void *body, size_t len)
{
    tk_buf_fmt(b,
               "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nAccept: %s\r\n"
               "Content-Length: %zu\r\n\r\n",
               method, path, tk_media_type(f), tk_media_type(f), len);
    tk_buf_add(b, body, len);
}

/* The JSON envelope: the body goes in as it is, so it must be one line
 * (the encoders write no newline). */
static void json_envelope(tk_buf *b, uint32_t id, const char *method, const char *path, const void *body,
                          size_t len)
{
    tk_buf_fmt(b, "{\"id\":%u,\"method\":\"%s\",\"path\":\"%s\",\"body\":", id, method, path);
    tk_buf_add(b, body, len);
    tk_buf_str(b, "}\n");
}

static void mp_str(tk_buf *b, const char *s)
{
    size_t n = strlen(s);
    char *at = tk_buf_reserve(b, n + 8);
    b->len += (size_t)(mp_encode_str(at, s, (uint32_t)n) - at);
}

/* 0xCE, the envelope's length as 4 big-endian bytes, then the map (the
 * body embedded as the MessagePack value it already is). */
static void mp_envelope(tk_buf *b, uint32_t id, const char *method, const char *path, const void *body, size_t len)
{
    size_t head = b->len;
    tk_buf_reserve(b, 5);
    b->len += 5;
    char *at = tk_buf_reserve(b, 16);
    at = mp_encode_map(at, 4);
    at = mp_encode_str(at, "id", 2);
    at = mp_encode_uint(at, id);
    b->len = (size_t)(at - b->p);
    mp_str(b, "method");
    mp_str(b, method);
    mp_str(b, "path");
    mp_str(b, path);
    mp_str(b, "body");
    tk_buf_add(b, body, len);
    uint32_t n = (uint32_t)(b->len - head - 5);
    unsigned char *h = (unsigned char *)b->p + head;
    h[0] = 0xCE;
    h[1] = (unsigned char)(n >> 24);
    h[2] = (unsigned char)(n >> 16);
    h[3] = (unsigned char)(n >> 8);
    h[4] = (unsigned char)n;
}

void tk_stream_request(tk_buf *b, tk_format f, uint32_t id, const char *method, const char *path, const void *body,
                       size_t len)
{
    if (f == TK_MSGPACK)
        mp_envelope(b, id, method, path, body, len);
    else
        json_envelope(b, id, method, path, body, len);
}
