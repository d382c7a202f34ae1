/* JSON mode, for debugging: requests are built as MessagePack and written
 * out as JSON lines; reply lines are parsed by jansson and turned into
 * MessagePack, so one decoder reads both encodings. */
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "cqc_int.h"

/* Deeper than any request the library builds. */
#define JSON_DEPTH 64

static void text(cqc_w *w, const char *s, size_t n)
{
    cqc__w_raw(w, s, n);
}

/* A str as a JSON string: room for the worst case (every byte escaped)
 * is reserved once. */
static void quoted(cqc_w *w, const char *s, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    char *at = cqc__w_room(w, (size_t)n * 6 + 2), *p = at;
    if (!at)
        return;
    *p++ = '"';
    for (uint32_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\' || ch < 0x20) {
            memcpy(p, "\\u00", 4);
            p[4] = hex[ch >> 4];
            p[5] = hex[ch & 15];
            p += 6;
        } else {
            *p++ = (char)ch;
        }
    }
    *p++ = '"';
    w->b->len += (size_t)(p - at);
}

static bool number(cqc_rd *r, cqc_w *w)
{
    unsigned char c = (unsigned char)*r->p;
    const char *at = r->p;
    double d;
    if (!cqc__rd_num(r, &d))
        return false;
    char s[40];
    int n;
    if (c < 0x80 || (c >= 0xcc && c <= 0xcf))
        n = snprintf(s, sizeof s, "%llu", (unsigned long long)mp_decode_uint(&at));
    else if (c >= 0xe0 || (c >= 0xd0 && c <= 0xd3))
        n = snprintf(s, sizeof s, "%lld", (long long)mp_decode_int(&at));
    else
        n = snprintf(s, sizeof s, "%.17g", d);
    text(w, s, (size_t)n);
    return true;
}

static bool value(cqc_rd *r, cqc_w *w, int depth);

static bool container(cqc_rd *r, cqc_w *w, int depth, bool is_map)
{
    uint32_t n;
    if (depth > JSON_DEPTH || !(is_map ? cqc__rd_map(r, &n) : cqc__rd_arr(r, &n)))
        return cqc__fail(r);
    text(w, is_map ? "{" : "[", 1);
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            text(w, ",", 1);
        if (is_map) {
            const char *k;
            uint32_t kn;
            if (!cqc__rd_str(r, &k, &kn))
                return false;
            quoted(w, k, kn);
            text(w, ":", 1);
        }
        if (!value(r, w, depth + 1))
            return false;
    }
    text(w, is_map ? "}" : "]", 1);
    return true;
}

static bool value(cqc_rd *r, cqc_w *w, int depth)
{
    if (r->p >= r->end)
        return cqc__fail(r);
    unsigned char c = (unsigned char)*r->p;
    bool b;
    const char *s;
    uint32_t n;
    if (cqc__rd_nil(r)) {
        text(w, "null", 4);
        return true;
    }
    if (c == 0xc2 || c == 0xc3) {
        cqc__rd_bool(r, &b);
        text(w, b ? "true" : "false", b ? 4 : 5);
        return true;
    }
    if ((c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf)
        return container(r, w, depth, true);
    if ((c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd)
        return container(r, w, depth, false);
    if ((c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb)) {
        if (!cqc__rd_str(r, &s, &n))
            return false;
        quoted(w, s, n);
        return true;
    }
    return number(r, w);
}

cqc_status cqc__mp_to_json(const char *mp, size_t n, cqc_buf *out)
{
    cqc_rd r = {mp, mp + n, false, false};
    cqc_w w = {out, false};
    if (!value(&r, &w, 0) || r.p != r.end)
        return CQC_EINVAL;
    text(&w, "\n", 1);
    return w.oom ? CQC_ENOMEM : CQC_OK;
}

static bool to_mp(const json_t *v, cqc_w *w, int depth)
{
    const char *key;
    json_t *item;
    size_t i;
    if (depth > JSON_DEPTH)
        return false;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        cqc__w_map(w, (uint32_t)json_object_size(v));
        json_object_foreach((json_t *)v, key, item) {
            cqc__w_str(w, key);
            if (!to_mp(item, w, depth + 1))
                return false;
        }
        return true;
    case JSON_ARRAY:
        cqc__w_arr(w, (uint32_t)json_array_size(v));
        json_array_foreach(v, i, item) if (!to_mp(item, w, depth + 1)) return false;
        return true;
    case JSON_STRING:
        cqc__w_strn(w, json_string_value(v), json_string_length(v));
        return true;
    case JSON_INTEGER: {
        json_int_t k = json_integer_value(v);
        char *at = cqc__w_room(w, 9);
        if (at)
            w->b->len += (size_t)((k < 0 ? mp_encode_int(at, k) : mp_encode_uint(at, (uint64_t)k)) - at);
        return true;
    }
    case JSON_REAL:
        cqc__w_dbl(w, json_real_value(v));
        return true;
    case JSON_TRUE:
    case JSON_FALSE:
        cqc__w_bool(w, json_is_true(v));
        return true;
    case JSON_NULL:
        cqc__w_raw(w, "\xc0", 1);
        return true;
    }
    return false;
}

cqc_status cqc__json_to_mp(const char *line, size_t n, cqc_buf *out)
{
    json_t *v = json_loadb(line, n, JSON_REJECT_DUPLICATES, NULL);
    cqc_w w = {out, false};
    bool ok = v && json_is_object(v) && to_mp(v, &w, 0);
    json_decref(v);
    return w.oom ? CQC_ENOMEM : ok ? CQC_OK : CQC_EPROTO;
}
