/* Taking replies apart, outside the clock: the stream envelope's id, status
 * and body, and the touching count of a contacts answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <msgpuck.h>

#include "tick.h"

/* The value under key in the MessagePack map at p, or NULL. */
static const char *mp_get(const char *p, const char *key)
{
    if (mp_typeof(*p) != MP_MAP)
        return NULL;
    uint32_t n = mp_decode_map(&p);
    size_t k = strlen(key);
    for (uint32_t i = 0; i < n; i++) {
        bool match = false;
        if (mp_typeof(*p) == MP_STR) {
            uint32_t len;
            const char *s = mp_decode_str(&p, &len);
            match = len == k && memcmp(s, key, k) == 0;
        } else {
            mp_next(&p);
        }
        if (match)
            return p;
        mp_next(&p);
    }
    return NULL;
}

static bool mp_int(const char *p, long *out)
{
    if (!p)
        return false;
    if (mp_typeof(*p) == MP_UINT)
        *out = (long)mp_decode_uint(&p);
    else if (mp_typeof(*p) == MP_INT)
        *out = (long)mp_decode_int(&p);
    else
        return false;
    return true;
}

static bool open_mp(const tk_buf *raw, tk_reply *r)
{
    const char *p = raw->p, *end = raw->p + raw->len;
    if (raw->len == 0 || mp_check(&p, end) != 0 || p != end)
        return false;
    long v;
    r->id = mp_int(mp_get(raw->p, "id"), &v) ? (uint32_t)v : 0;
    if (!mp_int(mp_get(raw->p, "status"), &v))
        return false;
    r->status = (int)v;
    const char *body = mp_get(raw->p, "body");
    r->body.len = 0;
    if (body) {
        const char *after = body;
        mp_next(&after);
        tk_buf_add(&r->body, body, (size_t)(after - body));
    }
    return true;
}

static bool open_json(const tk_buf *raw, tk_reply *r)
{
    json_t *v = json_loadb(raw->p, raw->len, 0, NULL);
    json_t *status = json_object_get(v, "status"), *id = json_object_get(v, "id");
    bool ok = json_is_integer(status);
    if (ok) {
        r->status = (int)json_integer_value(status);
        r->id = json_is_integer(id) ? (uint32_t)json_integer_value(id) : 0;
        char *body = json_dumps(json_object_get(v, "body"), JSON_COMPACT | JSON_ENCODE_ANY);
        r->body.len = 0;
        if (body)
            tk_buf_str(&r->body, body);
        free(body);
    }
    json_decref(v);
    return ok;
}

bool tk_reply_open(tk_format f, const tk_buf *raw, tk_reply *r)
{
    r->format = f;
    return f == TK_MSGPACK ? open_mp(raw, r) : open_json(raw, r);
}

long tk_reply_touching(const tk_reply *r)
{
    long n = -1;
    if (r->format == TK_MSGPACK) {
        const char *p = r->body.p, *end = r->body.p + r->body.len;
        if (r->body.len && mp_check(&p, end) == 0) {
            const char *stats = mp_get(r->body.p, "stats");
            if (!stats || !mp_int(mp_get(stats, "touching"), &n))
                n = -1;
        }
        return n;
    }
    json_t *v = json_loadb(r->body.p, r->body.len, 0, NULL);
    json_t *t = json_object_get(json_object_get(v, "stats"), "touching");
    if (json_is_integer(t))
        n = (long)json_integer_value(t);
    json_decref(v);
    return n;
}

void tk_reply_describe(const tk_reply *r, char *out, size_t cap)
{
    if (r->format == TK_JSON) {
        snprintf(out, cap, "%.*s", (int)(r->body.len < 400 ? r->body.len : 400), r->body.len ? r->body.p : "");
        return;
    }
    const char *p = r->body.p, *end = r->body.p + r->body.len;
    const char *detail = r->body.len && mp_check(&p, end) == 0 ? mp_get(r->body.p, "detail") : NULL;
    uint32_t len = 0;
    const char *s = detail && mp_typeof(*detail) == MP_STR ? mp_decode_str(&detail, &len) : "";
    snprintf(out, cap, "(MessagePack, %zu bytes) %.*s", r->body.len, (int)len, s);
}
