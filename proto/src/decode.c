/* The decoder core: parsing, ids, the JSON-pointer path and failures with
 * a dotted field name in the detail (API.md sections 1 and 3); the typed
 * value and field helpers are decode_field.c's. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "decode_internal.h"

void cqp_decoder_init(cqp_decoder *d, const cqp_limits *limits, cqp_problem *problem)
{
    d->limits = limits;
    d->problem = problem;
    d->path[0] = '\0';
    d->path_len = 0;
}

/* Bytes in the UTF-8 sequence led by c (0 for a byte that cannot lead one). */
static int utf8_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 0;
}

/* Replaces every byte that is not part of a well-formed UTF-8 sequence by
 * '?': jansson's messages quote input text and may cut it mid-character,
 * and a problem body must stay valid UTF-8. */
static void utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        int n = utf8_len(*p);
        int ok = n > 0;
        for (int k = 1; ok && k < n; k++)
            ok = (p[k] & 0xC0) == 0x80;
        if (!ok) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

/* Cuts s to at most max bytes without splitting a UTF-8 sequence. */
static void utf8_cut(char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = '\0';
}

json_t *cqp_parse(const char *text, size_t len, cqp_problem *p)
{
    json_error_t e = {0};
    /* Any value parses, so a non-object body gets the decoder's "must be an
     * object" rather than a parse error; jansson itself rejects numbers
     * that overflow a double or an int64. */
    json_t *v = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
    // jansson leaves the message empty when an allocation failed.
    if (!v && (json_error_code(&e) == json_error_out_of_memory || e.text[0] == '\0')) {
        cqp_fail(p, CQP_P_BUSY, NULL, "out of memory decoding the body");
    } else if (!v) {
        utf8_scrub(e.text);
        cqp_fail(p, CQP_P_BAD_JSON, NULL, "%s at line %d column %d", e.text, e.line, e.column);
    }
    return v;
}

bool cqp_valid_id(const char *s) { return cq_world_id_valid(s, strnlen(s, CQ_WORLD_ID_MAX + 1)); }

/* Writes key byte c at buf[n] escaped as a JSON pointer wants it ('~' as
 * "~0", '/' as "~1", a NUL, which a C string cannot hold, as U+FFFD);
 * returns the bytes written, or 0 when they would pass cap. */
static size_t put_key_byte(char *buf, size_t cap, size_t n, char c)
{
    if (c == '~' || c == '/') {
        if (n + 2 > cap)
            return 0;
        buf[n] = '~';
        buf[n + 1] = c == '~' ? '0' : '1';
        return 2;
    }
    if (c == '\0') {
        if (n + 3 > cap)
            return 0;
        memcpy(buf + n, "\xEF\xBF\xBD", 3);
        return 3;
    }
    if (n + 1 > cap)
        return 0;
    buf[n] = c;
    return 1;
}

/* Appends "/key" escaped to buf[0..n), at most cap bytes; returns the new length. */
static size_t append_key(char *buf, size_t cap, size_t n, const char *key, size_t len)
{
    size_t mark = n;
    if (n < cap)
        buf[n++] = '/';
    size_t i = 0, w;
    while (i < len && (w = put_key_byte(buf, cap, n, key[i])) > 0) {
        n += w;
        i++;
    }
    if (i < len) {
        /* Only a client's unknown key can be this long: never end the
         * pointer inside a UTF-8 sequence. */
        size_t lead = n;
        while (lead > mark + 1 && ((unsigned char)buf[lead - 1] & 0xC0) == 0x80)
            lead--;
        if (lead > mark + 1 && (size_t)utf8_len((unsigned char)buf[lead - 1]) > n - (lead - 1))
            n = lead - 1;
    }
    buf[n] = '\0';
    return n;
}

size_t cqp_pointer_append(char *buf, size_t size, const char *key)
{
    if (size == 0)
        return 0;
    return append_key(buf, size - 1, strnlen(buf, size - 1), key, strlen(key));
}

int cqp__push_keyn(cqp_decoder *d, const char *key, size_t len)
{
    int mark = d->path_len;
    d->path_len = (int)append_key(d->path, sizeof d->path - 1, (size_t)mark, key, len);
    return mark;
}

int cqp__push_key(cqp_decoder *d, const char *key) { return cqp__push_keyn(d, key, strlen(key)); }

int cqp__push_index(cqp_decoder *d, size_t index)
{
    /* Digits by hand: this runs for every number of a large body. */
    char digits[24];
    int k = 0;
    do {
        digits[k++] = (char)('0' + index % 10);
        index /= 10;
    } while (index);
    int mark = d->path_len;
    if ((size_t)(mark + 1 + k) >= sizeof d->path)
        return mark;
    char *out = d->path + mark;
    *out++ = '/';
    while (k)
        *out++ = digits[--k];
    *out = '\0';
    d->path_len = (int)(out - d->path);
    return mark;
}

void cqp__pop(cqp_decoder *d, int mark)
{
    d->path_len = mark;
    d->path[mark] = '\0';
}

/* The path as a reader writes it: "/a/shape/half_extents/1" is
 * "a.shape.half_extents[1]"; the root is "body". */
static void dotted(const char *path, char *out, size_t size)
{
    size_t n = 0;
    if (!*path) {
        snprintf(out, size, "body");
        return;
    }
    for (const char *s = path; *s == '/' && n + 1 < size;) {
        const char *seg = ++s;
        size_t len = strcspn(seg, "/");
        bool digits = len > 0 && strspn(seg, "0123456789") >= len;
        if (digits) {
            int w = snprintf(out + n, size - n, "[%.*s]", (int)len, seg);
            n = w < 0 || (size_t)w >= size - n ? size - 1 : n + (size_t)w;
        } else {
            if (n > 0 && n + 1 < size)
                out[n++] = '.';
            for (size_t k = 0; k < len && n + 1 < size; k++) {
                char c = seg[k];
                if (c == '~' && k + 1 < len) {
                    c = seg[k + 1] == '1' ? '/' : '~';
                    k++;
                }
                out[n++] = c;
            }
        }
        s = seg + len;
    }
    out[n] = '\0';
}

int cqp__fail(cqp_decoder *d, cqp_problem_kind kind, const char *fmt, ...)
{
    /* Roomier than the problem's detail, so the cut below sees where the
     * text would have been split. */
    char name[2 * sizeof d->path];
    char detail[3 * sizeof d->problem->detail];
    dotted(d->path, name, sizeof name);
    int n = snprintf(detail, sizeof detail, "%s ", name);
    if (n >= 0 && (size_t)n < sizeof detail) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail + n, sizeof detail - (size_t)n, fmt, ap);
        va_end(ap);
    }
    utf8_cut(detail, sizeof d->problem->detail - 1);
    return cqp_fail(d->problem, kind, d->path, "%s", detail);
}


int cqp__missing(cqp_decoder *d, const char *key)
{
    int mark = cqp__push_key(d, key);
    cqp__fail(d, CQP_P_MISSING_FIELD, "is required");
    cqp__pop(d, mark);
    return -1;
}

int cqp__no_memory(cqp_decoder *d) { return cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory"); }

/* An id given as an integer: its decimal string. */
static int id_of_integer(cqp_decoder *d, cqp_value v, char out[CQ_WORLD_ID_MAX + 1])
{
    int64_t x = cqp_value_int(v);
    if (x < 0)
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be >= 0 when given as an integer");
    /* A larger MessagePack uint64 reads as INT64_MAX: naming another shape
     * than the client's would be worse than refusing it. */
    if (cqp_value_int_saturated(v))
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be <= %" PRId64 " when given as an integer", INT64_MAX);
    snprintf(out, CQ_WORLD_ID_MAX + 1, "%" PRId64, x);
    return 0;
}

int cqp_decode_id(cqp_decoder *d, cqp_value v, char out[CQ_WORLD_ID_MAX + 1])
{
    cqp_vtype t = cqp_value_type(v);
    if (t == CQP_V_INT)
        return id_of_integer(d, v, out);
    if (t != CQP_V_STRING)
        return cqp__fail(d, CQP_P_BAD_TYPE, "must be a string or a non-negative integer");
    size_t len;
    const char *s = cqp_value_string(v, &len);
    if (!cq_world_id_valid(s, len))
        return cqp__fail(d, CQP_P_BAD_VALUE, "must be 1 to %d characters of " CQ_WORLD_ID_CHARS, CQ_WORLD_ID_MAX);
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

int cqp__fault(cqp_decoder *d, cq_fault f)
{
    if (f.status == CQ_ENO_MEMORY)
        return cqp__no_memory(d);
    int mark = d->path_len;
    if (f.field)
        cqp__push_key(d, f.field);
    if (f.field && f.index >= 0)
        cqp__push_index(d, (size_t)f.index);
    if (f.field && f.index >= 0 && f.sub >= 0)
        cqp__push_index(d, (size_t)f.sub);
    bool rotation = f.field && strcmp(f.field, "rotation") == 0;
    switch (f.status) {
    case CQ_ENOT_FINITE:
        cqp__fail(d, CQP_P_BAD_VALUE, "must be a finite number");
        break;
    case CQ_ENEGATIVE:
        cqp__fail(d, CQP_P_BAD_VALUE, "must be >= 0");
        break;
    case CQ_ENOT_UNIT:
        if (rotation)
            cqp__fail(d, CQP_P_BAD_VALUE, "must have length 1 (within %g)", CQ_QUAT_UNIT_TOL);
        else
            cqp__fail(d, CQP_P_BAD_VALUE, "must be a unit vector (within %g)", CQ_AXIS_TOL);
        break;
    case CQ_ENOT_ORTHOGONAL:
        cqp__fail(d, CQP_P_BAD_VALUE, "must be orthogonal to the other axes (within %g)", CQ_AXIS_TOL);
        break;
    case CQ_EMIRROR:
        cqp__fail(d, CQP_P_BAD_VALUE, "must be right-handed (a mirror is not a rotation)");
        break;
    default:
        cqp__fail(d, CQP_P_BAD_VALUE, "is invalid: %s", cq_strerror(f.status));
        break;
    }
    cqp__pop(d, mark);
    return -1;
}
