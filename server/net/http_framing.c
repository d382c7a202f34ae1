/// @file server/net/http_framing.c
/// What libmicrohttpd 0.9.75 lets through (checked against its parser):
/// it frames a body by the first Content-Length and ignores the others,
/// prefers Transfer-Encoding to Content-Length, keeps "Transfer-Encoding "
/// (a space before the colon) as another header, so the chunks become the
/// next request, and reads a Transfer-Encoding other than exactly
/// "chunked" as a body that ends when the client closes. Each of these is
/// seen here, in the header iteration of the access handler's first call.
#include "http_framing.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/// What the iteration over the headers counts.
typedef struct head_scan {
    int content_length, transfer_encoding, authorization;
    bool te_not_chunked;
    char *why; ///< the first fault found, or "" (then the counts decide)
    size_t size;
} head_scan;

/// RFC 9110's tchar: the bytes a header name (a token) is made of.
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/// Copies at most 40 bytes of s into dst[48], bytes outside printable ASCII as '?'.
static void quote(char dst[48], const char *s)
{
    size_t n = 0;
    for (; s[n] && n < 40; n++)
        dst[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
    dst[n] = '\0';
}

static bool bad_name(const char *key)
{
    if (!*key)
        return true;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        if (!is_tchar(*p))
            return true;
    return false;
}

/// A value may hold visible bytes, spaces and tabs (and obs-text), no other control byte.
static bool bad_value(const char *value)
{
    for (const unsigned char *p = (const unsigned char *)value; p && *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return true;
    return false;
}

/// "chunked", ASCII case ignored, and nothing else: libmicrohttpd reads
/// any other value, "chunked " with a trailing blank included, as a body
/// that ends only when the client closes.
static bool is_chunked(const char *value) { return value && strcasecmp(value, "chunked") == 0; }

static void count(head_scan *s, const char *key, const char *value)
{
    if (strcasecmp(key, "Content-Length") == 0) {
        s->content_length++;
    } else if (strcasecmp(key, "Transfer-Encoding") == 0) {
        s->transfer_encoding++;
        s->te_not_chunked |= !is_chunked(value);
    } else if (strcasecmp(key, "Authorization") == 0) {
        s->authorization++;
    }
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    head_scan *s = cls;
    char name[48];
    quote(name, key ? key : "");
    if (!key || bad_name(key)) {
        snprintf(s->why, s->size, "the header name \"%s\" is not a token (RFC 9110 section 5.1)", name);
        return MHD_NO;
    }
    if (bad_value(value)) {
        snprintf(s->why, s->size, "the value of header %s holds a control character", name);
        return MHD_NO;
    }
    count(s, key, value);
    return MHD_YES;
}

/// The fault the counts show, if any (RFC 9112 section 6.3's order).
static bool framing_fault(const head_scan *s)
{
    if (s->content_length && s->transfer_encoding)
        snprintf(s->why, s->size, "Content-Length and Transfer-Encoding together (RFC 9112 section 6.3)");
    else if (s->content_length > 1)
        snprintf(s->why, s->size, "Content-Length is given %d times (RFC 9112 section 6.3)", s->content_length);
    else if (s->transfer_encoding > 1 || s->te_not_chunked)
        snprintf(s->why, s->size, "the only Transfer-Encoding accepted is one \"chunked\"");
    else if (s->authorization > 1)
        snprintf(s->why, s->size, "header Authorization is given %d times", s->authorization);
    else
        return false;
    return true;
}

bool cqd_http_head_fault(struct MHD_Connection *conn, char *why, size_t size)
{
    head_scan s = {.why = why, .size = size};
    why[0] = '\0';
    MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &s);
    return why[0] != '\0' || framing_fault(&s);
}
