/// @file server/net/media.c
/// Content-Type and Accept parsing (media.h), by the grammar of RFC 9110:
/// a media range is token "/" token, then parameters ( OWS ";" OWS
/// [ name "=" ( token / quoted-string ) ] ), and Accept is a comma list of
/// them whose "q" parameter is a qvalue ("0" [ "." 0*3DIGIT ] or
/// "1" [ "." 0*3"0" ]). Weights are kept in thousandths, so they compare
/// exactly.
#include "media.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/// A media type the server produces, and the format it names.
typedef struct media_type {
    const char *name;
    cqp_format format;
    bool body; ///< also names a request body's format (problem types are answers only)
} media_type;

static const media_type media_types[] = {
    {"application/json", CQP_JSON, true},
    {"application/msgpack", CQP_MSGPACK, true},
    // Names MessagePack went by before application/msgpack was registered
    // (2024); clients still send them.
    {"application/x-msgpack", CQP_MSGPACK, true},
    {"application/vnd.msgpack", CQP_MSGPACK, true},
    {"application/problem+json", CQP_JSON, false},
    {"application/problem+msgpack", CQP_MSGPACK, false},
};

enum { MEDIA_TYPES = sizeof media_types / sizeof media_types[0] };

/// A weight in thousandths: q=1.
#define Q_ONE 1000

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/// An RFC 9110 tchar.
static bool tchar(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static const char *skip_token(const char *p)
{
    while (tchar(*p))
        p++;
    return p;
}

/// Past the quoted-string whose opening quote is at p, or NULL when it is
/// not closed.
static const char *skip_quoted(const char *p)
{
    for (p++; *p; p++) {
        if (*p == '\\' && p[1])
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/// The media type named by s[0..n) (case-insensitive), or NULL.
static const media_type *find_type(const char *s, size_t n)
{
    for (int i = 0; i < MEDIA_TYPES; i++)
        if (strlen(media_types[i].name) == n && strncasecmp(media_types[i].name, s, n) == 0)
            return &media_types[i];
    return NULL;
}

cqp_format cqd_media_body_format(const char *content_type)
{
    if (!content_type)
        return CQP_JSON;
    const char *p = skip_ows(content_type);
    size_t n = strcspn(p, ";");
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    const media_type *t = find_type(p, n);
    return t && t->body ? t->format : CQP_JSON;
}

/// One member of an Accept list.
typedef struct media_range {
    const char *type; ///< "type/subtype", len bytes
    size_t len;
    int q;            ///< its weight in thousandths
    bool ok;          ///< false: empty or malformed, to be ignored
} media_range;

/// A qvalue of n characters in thousandths, or -1 when it is not one.
static int qvalue(const char *s, size_t n)
{
    if (n == 0 || n > 5 || (s[0] != '0' && s[0] != '1') || (n > 1 && s[1] != '.'))
        return -1;
    int q = (s[0] - '0') * Q_ONE;
    for (size_t i = 2, scale = 100; i < n; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        q += (s[i] - '0') * (int)scale;
    }
    return q <= Q_ONE ? q : -1;
}

/// Reads one parameter at p (past its ';' and whitespace) into r: only the
/// first q is the weight (later parameters are extensions). Returns where
/// it ends, with r->ok cleared when it is malformed.
static const char *read_param(const char *p, media_range *r, bool *weighed)
{
    const char *name = p, *eq = skip_token(p);
    if (eq == name) // "type/subtype;" : an empty parameter is allowed
        return p;
    const char *v = eq + 1, *end = *eq != '=' ? NULL : *v == '"' ? skip_quoted(v) : skip_token(v);
    if (!end || end == v) {
        r->ok = false;
        return end ? end : p;
    }
    if (eq - name == 1 && (*name == 'q' || *name == 'Q') && !*weighed) {
        *weighed = true;
        r->q = *v == '"' ? -1 : qvalue(v, (size_t)(end - v));
        r->ok = r->q >= 0;
    }
    return end;
}

/// Reads the media range at p and its parameters into r; returns where it
/// stops (r->ok false when it is empty or malformed).
static const char *read_range(const char *p, media_range *r)
{
    p = skip_ows(p);
    const char *slash = skip_token(p), *end = *slash == '/' ? skip_token(slash + 1) : slash;
    *r = (media_range){.type = p, .len = (size_t)(end - p), .q = Q_ONE, .ok = slash > p && end > slash + 1};
    bool weighed = false;
    for (p = skip_ows(end); r->ok && *p == ';'; p = skip_ows(p))
        p = read_param(skip_ows(p + 1), r, &weighed);
    return p;
}

/// Past the rest of a list member: up to its ',' (outside quotes) or the end.
static const char *skip_member(const char *p)
{
    while (*p && *p != ',') {
        const char *q = *p == '"' ? skip_quoted(p) : p + 1;
        p = q ? q : p + strlen(p);
    }
    return p;
}

/// Reads the list member at p into r; returns the start of the next one.
static const char *next_range(const char *p, media_range *r)
{
    p = read_range(p, r);
    if (*p != ',' && *p != '\0') {
        r->ok = false;
        p = skip_member(p);
    }
    return *p == ',' ? p + 1 : p;
}

/// How specifically r names type: 3 as itself, 2 as "major/*", 1 as "*/*",
/// 0 not at all.
static int specificity(const media_range *r, const char *type)
{
    size_t major = (size_t)(strchr(type, '/') - type);
    if (r->len == strlen(type) && strncasecmp(r->type, type, r->len) == 0)
        return 3;
    if (r->len == major + 2 && strncasecmp(r->type, type, major + 1) == 0 && r->type[major + 1] == '*')
        return 2;
    return r->len == 3 && memcmp(r->type, "*/*", 3) == 0 ? 1 : 0;
}

/// The weight a format has so far: that of the most specific range naming
/// one of its types.
typedef struct format_weight {
    int specificity; ///< 0: no range has named it yet (weight 0)
    int q;
} format_weight;

/// Lets r weigh each format it names more (or as) specifically than any
/// range before; of two equally specific ranges the higher weight counts.
static void weigh(const media_range *r, format_weight w[2])
{
    for (int i = 0; i < MEDIA_TYPES; i++) {
        int s = specificity(r, media_types[i].name);
        format_weight *f = &w[media_types[i].format];
        if (s > f->specificity || (s && s == f->specificity && r->q > f->q))
            *f = (format_weight){s, r->q};
    }
}

cqp_format cqd_media_accept(const char *accept)
{
    if (!accept)
        return CQP_JSON;
    format_weight w[2] = {{0, 0}, {0, 0}};
    for (const char *p = accept; *p;) {
        media_range r;
        p = next_range(p, &r);
        if (r.ok)
            weigh(&r, w);
    }
    return w[CQP_MSGPACK].q > w[CQP_JSON].q ? CQP_MSGPACK : CQP_JSON;
}
