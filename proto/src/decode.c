/* The decoder core: parsing, the JSON-pointer path, failures with a dotted
 * field name in the detail, and the typed value and field helpers every
 * other decoder builds on (API.md sections 1 and 3). */
#include <math.h>
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

bool cqp_valid_id_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == ':' || c == '-';
}

bool cqp_valid_id(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!cqp_valid_id_char(s[n]) || n >= CQ_WORLD_ID_MAX)
            return false;
    return n > 0;
}

/* Appends "/key" escaped to buf[0..n), at most cap bytes; returns the new length. */
static size_t append_key(char *buf, size_t cap, size_t n, const char *key)
{
    size_t mark = n;
    if (n < cap)
        buf[n++] = '/';
    const char *s = key;
    for (; *s && n < cap; s++) {
        if (*s == '~' || *s == '/') {
            if (n + 2 > cap)
                break;
            buf[n++] = '~';
            buf[n++] = *s == '~' ? '0' : '1';
        } else {
            buf[n++] = *s;
        }
    }
    if (*s) {
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
    return append_key(buf, size - 1, strnlen(buf, size - 1), key);
}

int cqpd_push_key(cqp_decoder *d, const char *key)
{
    int mark = d->path_len;
    d->path_len = (int)append_key(d->path, sizeof d->path - 1, (size_t)mark, key);
    return mark;
}

int cqpd_push_index(cqp_decoder *d, size_t index)
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

void cqpd_pop(cqp_decoder *d, int mark)
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

int cqpd_fail(cqp_decoder *d, cqp_problem_kind kind, const char *fmt, ...)
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

size_t cqpd_limit(int lim, size_t hard)
{
    return lim > 0 && (size_t)lim < hard ? (size_t)lim : hard;
}

int cqpd_object(cqp_decoder *d, const json_t *v, const char *const *fields, const char *what)
{
    if (!v)
        return 0;
    if (!json_is_object(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an object");
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        const char *const *f = fields;
        while (*f && strcmp(*f, key) != 0)
            f++;
        if (!*f) {
            int mark = cqpd_push_key(d, key);
            cqpd_fail(d, CQP_P_UNKNOWN_FIELD, "is not a field of %s", what);
            cqpd_pop(d, mark);
            return -1;
        }
    }
    return 0;
}

int cqpd_enter(cqp_decoder *d, const json_t *obj, const char *key, bool required, const json_t **v,
               int *mark)
{
    const json_t *x = json_object_get(obj, key);
    if (!x) {
        if (!required)
            return 0;
        int m = cqpd_push_key(d, key);
        cqpd_fail(d, CQP_P_MISSING_FIELD, "is required");
        cqpd_pop(d, m);
        return -1;
    }
    *mark = cqpd_push_key(d, key);
    *v = x;
    return 1;
}

/* The largest magnitude a request number may have. Queries square and
 * multiply coordinates (a cross product's squared length is a fourth
 * power, a swept box's a product of velocity, time and size), and every such
 * product must stay a finite double: 1e50 keeps sixth powers finite while
 * leaving room for any real scene (and for float's maximum, 3.4e38, as a
 * "no limit" ray length). */
#define CQPD_NUMBER_MAX 1e50

int cqpd_finite(cqp_decoder *d, const json_t *v, double *out)
{
    if (!json_is_number(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be a number");
    double x = json_number_value(v);
    if (!isfinite(x))
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be a finite number");
    *out = x;
    return 0;
}

int cqpd_number(cqp_decoder *d, const json_t *v, double *out)
{
    double x = 0;
    if (cqpd_finite(d, v, &x))
        return -1;
    if (fabs(x) > CQPD_NUMBER_MAX)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be within -1e50..1e50");
    *out = x;
    return 0;
}

int cqpd_nonneg(cqp_decoder *d, const json_t *v, double *out)
{
    double x = 0;
    if (cqpd_number(d, v, &x))
        return -1;
    if (x < 0)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be >= 0");
    *out = x;
    return 0;
}

int cqpd_integer(cqp_decoder *d, const json_t *v, json_int_t lo, json_int_t hi, json_int_t *out)
{
    if (!json_is_integer(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an integer");
    json_int_t x = json_integer_value(v);
    if (x < lo)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be >= %" JSON_INTEGER_FORMAT, lo);
    if (x > hi)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be <= %" JSON_INTEGER_FORMAT, hi);
    *out = x;
    return 0;
}

int cqpd_uint32(cqp_decoder *d, const json_t *v, uint32_t *out)
{
    json_int_t x = 0;
    if (cqpd_integer(d, v, 0, UINT32_MAX, &x))
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int cqpd_bool(cqp_decoder *d, const json_t *v, bool *out)
{
    if (!json_is_boolean(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be true or false");
    *out = json_is_true(v);
    return 0;
}

int cqpd_array(cqp_decoder *d, const json_t *v, size_t *n)
{
    if (!json_is_array(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an array");
    *n = json_array_size(v);
    return 0;
}

int cqpd_array_limited(cqp_decoder *d, const json_t *v, bool nonempty, size_t max, const char *noun, size_t *n)
{
    if (cqpd_array(d, v, n))
        return -1;
    if (*n > max)
        return cqpd_fail(d, CQP_P_OVER_LIMIT, "has %zu %s; the limit is %zu", *n, noun, max);
    if (nonempty && *n == 0)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must not be empty");
    return 0;
}

static int vec3_of(cqp_decoder *d, const json_t *v, int (*number)(cqp_decoder *, const json_t *, double *),
                   cq_vec3 *out)
{
    if (!json_is_array(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be an array of 3 numbers");
    size_t n = json_array_size(v);
    if (n != 3)
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must have 3 numbers, not %zu", n);
    double c[3];
    for (size_t k = 0; k < 3; k++) {
        int mark = cqpd_push_index(d, k);
        int rc = number(d, json_array_get(v, k), &c[k]);
        cqpd_pop(d, mark);
        if (rc)
            return -1;
    }
    *out = cq_v3(c[0], c[1], c[2]);
    return 0;
}

int cqp_decode_vec3(cqp_decoder *d, const json_t *v, cq_vec3 *out) { return vec3_of(d, v, cqpd_number, out); }

int cqpd_finite_vec3(cqp_decoder *d, const json_t *v, cq_vec3 *out) { return vec3_of(d, v, cqpd_finite, out); }

int cqp_decode_id(cqp_decoder *d, const json_t *v, char out[CQ_WORLD_ID_MAX + 1])
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0)
            return cqpd_fail(d, CQP_P_BAD_VALUE, "must be >= 0 when given as an integer");
        snprintf(out, CQ_WORLD_ID_MAX + 1, "%" JSON_INTEGER_FORMAT, x);
        return 0;
    }
    if (!json_is_string(v))
        return cqpd_fail(d, CQP_P_BAD_TYPE, "must be a string or a non-negative integer");
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len > CQ_WORLD_ID_MAX || strlen(s) != len || !cqp_valid_id(s))
        return cqpd_fail(d, CQP_P_BAD_VALUE, "must be 1 to %d characters of [A-Za-z0-9._:-]", CQ_WORLD_ID_MAX);
    memcpy(out, s, len + 1);
    return 0;
}

int cqpd_fault(cqp_decoder *d, cq_fault f)
{
    if (f.status == CQ_ENO_MEMORY)
        return cqp_fail(d->problem, CQP_P_BUSY, NULL, "out of memory");
    int mark = d->path_len;
    if (f.field)
        cqpd_push_key(d, f.field);
    if (f.field && f.index >= 0)
        cqpd_push_index(d, (size_t)f.index);
    if (f.field && f.index >= 0 && f.sub >= 0)
        cqpd_push_index(d, (size_t)f.sub);
    bool rotation = f.field && strcmp(f.field, "rotation") == 0;
    switch (f.status) {
    case CQ_ENOT_FINITE:
        cqpd_fail(d, CQP_P_BAD_VALUE, "must be a finite number");
        break;
    case CQ_ENEGATIVE:
        cqpd_fail(d, CQP_P_BAD_VALUE, "must be >= 0");
        break;
    case CQ_ENOT_UNIT:
        if (rotation)
            cqpd_fail(d, CQP_P_BAD_VALUE, "must have length 1 (within %g)", CQ_QUAT_UNIT_TOL);
        else
            cqpd_fail(d, CQP_P_BAD_VALUE, "must be a unit vector (within %g)", CQ_AXIS_TOL);
        break;
    case CQ_ENOT_ORTHOGONAL:
        cqpd_fail(d, CQP_P_BAD_VALUE, "must be orthogonal to the other axes (within %g)", CQ_AXIS_TOL);
        break;
    case CQ_EMIRROR:
        cqpd_fail(d, CQP_P_BAD_VALUE, "must be right-handed (a mirror is not a rotation)");
        break;
    default:
        cqpd_fail(d, CQP_P_BAD_VALUE, "is invalid: %s", cq_strerror(f.status));
        break;
    }
    cqpd_pop(d, mark);
    return -1;
}

int cqpd_field_number(cqp_decoder *d, const json_t *obj, const char *key, bool required, double *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, required, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_number(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_nonneg(cqp_decoder *d, const json_t *obj, const char *key, bool required, double *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, required, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_nonneg(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_vec3(cqp_decoder *d, const json_t *obj, const char *key, bool required, cq_vec3 *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, required, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqp_decode_vec3(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_uint32(cqp_decoder *d, const json_t *obj, const char *key, uint32_t *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, false, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_uint32(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_bool(cqp_decoder *d, const json_t *obj, const char *key, bool *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, false, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_bool(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_integer(cqp_decoder *d, const json_t *obj, const char *key, json_int_t lo, json_int_t hi,
                       json_int_t *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, false, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqpd_integer(d, v, lo, hi, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_pose(cqp_decoder *d, const json_t *obj, const char *key, bool required, cq_xform *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, required, &v, &mark);
    if (in <= 0) {
        if (in == 0)
            *out = cq_xform_identity();
        return in;
    }
    int rc = cqp_decode_pose(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}

int cqpd_field_shape(cqp_decoder *d, const json_t *obj, const char *key, cqp_shape *out)
{
    const json_t *v;
    int mark;
    int in = cqpd_enter(d, obj, key, true, &v, &mark);
    if (in <= 0)
        return in;
    int rc = cqp_decode_shape(d, v, out);
    cqpd_pop(d, mark);
    return rc ? -1 : 1;
}
