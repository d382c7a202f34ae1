/// @file server/replay/replay_values.c
/// MessagePack responses compared as values, and shown as JSON text
/// (replay.h). Two answers that hold the same values compare the same
/// however they are encoded (a fixint or a uint8, a float32 or a float64
/// of the same number, a map16 of 3 members): only what a client reads
/// counts, as a JSON client reads numbers and not their spelling. Numbers
/// compare by value across types (3 equals 3.0); map members compare in
/// order, as the daemon writes them in a fixed order.
#include <math.h>
#include <msgpuck.h>
#include <stdio.h>
#include <string.h>

#include "cqp/value.h"
#include "replay.h"

/// A walk over the two bodies: where each starts, the JSON Pointer of the
/// value being compared, and whether duration_us numbers are skipped.
typedef struct walk {
    bool mask;
    char pointer[CQD_REPLAY_POINTER_MAX];
    size_t plen;
} walk;

/// True when data[0..len) is exactly one MessagePack value of the kind the
/// daemon writes. A recording may hold any bytes, so every count is bounded
/// by the bytes left (cqp_mp_check), not by msgpuck's mp_check, which
/// takes an array32 header claiming 2^32 - 1 elements as valid. Whatever
/// it refuses (bin, ext, duplicate keys, non-string keys, nesting past
/// CQP_MP_MAX_DEPTH, which is CQP_WRITER_MAX_DEPTH) is compared as bytes,
/// so the walks below recurse at most that deep.
static bool one_value(const char *data, size_t len)
{
    cqp_problem ignored;
    return len > 0 && cqp_mp_check(data, len, CQP_MP_MAX_DEPTH, &ignored) == 0;
}

static bool is_integer(enum mp_type t) { return t == MP_UINT || t == MP_INT; }
static bool is_number(enum mp_type t) { return is_integer(t) || t == MP_FLOAT || t == MP_DOUBLE; }

/// An integer as a sign and a magnitude, so that every int64 and uint64
/// compares exactly.
typedef struct mp_integer {
    bool negative;
    uint64_t magnitude;
} mp_integer;

static mp_integer decode_integer(const char **p)
{
    if (mp_typeof(**p) == MP_UINT)
        return (mp_integer){false, mp_decode_uint(p)};
    int64_t v = mp_decode_int(p);
    return (mp_integer){v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v};
}

static double decode_double(const char **p)
{
    switch (mp_typeof(**p)) {
    case MP_FLOAT: return mp_decode_float(p);
    case MP_DOUBLE: return mp_decode_double(p);
    case MP_UINT: return (double)mp_decode_uint(p);
    case MP_INT:
    case MP_NIL: case MP_STR: case MP_BIN: case MP_ARRAY: case MP_MAP: case MP_BOOL: case MP_EXT: // callers pass numbers
        break;
    }
    return (double)mp_decode_int(p);
}

/// Two numbers: exactly when both are integers, else as doubles (a NaN
/// equals a NaN: the same bytes must never differ).
static bool same_number(const char **a, const char **b)
{
    if (is_integer(mp_typeof(**a)) && is_integer(mp_typeof(**b))) {
        mp_integer x = decode_integer(a), y = decode_integer(b);
        return x.negative == y.negative && x.magnitude == y.magnitude;
    }
    double x = decode_double(a), y = decode_double(b);
    return x == y || (isnan(x) && isnan(y));
}

/// Appends /segment (RFC 6901: '~' as ~0, '/' as ~1) to the pointer, cut
/// short rather than overflow; returns the length to restore.
static size_t push_segment(walk *w, const char *s, size_t n)
{
    size_t saved = w->plen;
    char *out = w->pointer;
    size_t max = sizeof w->pointer - 1, at = w->plen;
    if (at < max)
        out[at++] = '/';
    for (size_t i = 0; i < n && at + 2 <= max; i++) {
        if (s[i] == '~' || s[i] == '/') {
            out[at++] = '~';
            out[at++] = s[i] == '~' ? '0' : '1';
        } else {
            out[at++] = s[i];
        }
    }
    out[at] = '\0';
    w->plen = at;
    return saved;
}

static void pop_segment(walk *w, size_t saved)
{
    w->plen = saved;
    w->pointer[saved] = '\0';
}

static bool same_value(walk *w, const char **a, const char **b);

static bool same_array(walk *w, const char **a, const char **b)
{
    const char *sa = *a, *sb = *b;
    uint32_t n = mp_decode_array(a);
    if (n != mp_decode_array(b)) {
        *a = sa, *b = sb; /* the count differs: the whole array does */
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        char index[16];
        size_t saved = push_segment(w, index, (size_t)snprintf(index, sizeof index, "%u", i));
        if (!same_value(w, a, b))
            return false;
        pop_segment(w, saved);
    }
    return true;
}

/// One member's key (a str: one_value admits no other).
static bool same_key(const char **a, const char **b, const char **key, uint32_t *len)
{
    uint32_t bn;
    const char *ka = mp_decode_str(a, len), *kb = mp_decode_str(b, &bn);
    *key = ka;
    return *len == bn && memcmp(ka, kb, bn) == 0;
}

static bool same_map(walk *w, const char **a, const char **b)
{
    const char *sa = *a, *sb = *b;
    uint32_t n = mp_decode_map(a);
    if (n != mp_decode_map(b)) {
        *a = sa, *b = sb;
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *key;
        uint32_t klen;
        const char *ka = *a, *kb = *b;
        if (!same_key(a, b, &key, &klen)) {
            *a = ka, *b = kb; /* the difference is the key: report its place */
            return false;
        }
        size_t saved = push_segment(w, key, klen);
        bool masked = w->mask && klen == 11 && memcmp(key, "duration_us", 11) == 0 &&
                      is_number(mp_typeof(**a)) && is_number(mp_typeof(**b));
        if (masked) {
            mp_next(a);
            mp_next(b);
        } else if (!same_value(w, a, b)) {
            return false;
        }
        pop_segment(w, saved);
    }
    return true;
}

/// Two scalars of the same type, neither a number (one_value admits no
/// bin or ext).
static bool same_scalar(enum mp_type t, const char **a, const char **b)
{
    uint32_t na, nb;
    switch (t) {
    case MP_NIL:
        mp_decode_nil(a);
        mp_decode_nil(b);
        return true;
    case MP_BOOL: return mp_decode_bool(a) == mp_decode_bool(b);
    case MP_STR: {
        const char *x = mp_decode_str(a, &na), *y = mp_decode_str(b, &nb);
        return na == nb && memcmp(x, y, na) == 0;
    }
    case MP_UINT: case MP_INT: case MP_BIN: case MP_ARRAY: case MP_MAP: case MP_FLOAT: case MP_DOUBLE: case MP_EXT:
        break;
    }
    return false;
}

/// Compares the values at *a and *b; on a difference both are left at the
/// differing values' first bytes and w->pointer names the place.
static bool same_value(walk *w, const char **a, const char **b)
{
    const char *sa = *a, *sb = *b;
    enum mp_type ta = mp_typeof(**a), tb = mp_typeof(**b);
    bool same;
    if ((ta == MP_ARRAY || ta == MP_MAP) && ta == tb)
        return ta == MP_ARRAY ? same_array(w, a, b) : same_map(w, a, b); /* left at the difference inside */
    if (is_number(ta) && is_number(tb))
        same = same_number(a, b);
    else
        same = ta == tb && same_scalar(ta, a, b);
    if (!same)
        *a = sa, *b = sb;
    return same;
}

cqd_replay_values cqd_replay_same_values(const char *exp, size_t exp_len, const char *got, size_t got_len, bool mask,
                                         cqd_replay_where *where)
{
    if (!one_value(exp, exp_len) || !one_value(got, got_len))
        return CQD_REPLAY_NOT_MSGPACK;
    walk w = {.mask = mask};
    const char *a = exp, *b = got;
    if (same_value(&w, &a, &b))
        return CQD_REPLAY_SAME_VALUES;
    where->exp_off = (size_t)(a - exp);
    where->got_off = (size_t)(b - got);
    memcpy(where->pointer, w.pointer, w.plen + 1);
    return CQD_REPLAY_DIFFERENT_VALUES;
}

/* ---- as JSON text, for the report -------------------------------------- */

static void write_json(cqp_writer *w, const char **p);

static void write_members(cqp_writer *w, const char **p)
{
    uint32_t n = mp_decode_map(p);
    cqp_obj_begin(w);
    for (uint32_t i = 0; i < n; i++) {
        char key[128];
        uint32_t len;
        const char *k = mp_decode_str(p, &len);
        snprintf(key, sizeof key, "%.*s", (int)len, k);
        cqp_key(w, key);
        write_json(w, p);
    }
    cqp_obj_end(w);
}

static void write_elements(cqp_writer *w, const char **p)
{
    uint32_t n = mp_decode_array(p);
    cqp_arr_begin(w);
    for (uint32_t i = 0; i < n; i++)
        write_json(w, p);
    cqp_arr_end(w);
}

/// The value at *p (one that one_value admitted: no bin or ext, nesting
/// within the writer's depth) as JSON through w.
static void write_json(cqp_writer *w, const char **p)
{
    uint32_t n;
    switch (mp_typeof(**p)) {
    case MP_NIL:
        mp_decode_nil(p);
        cqp_null(w);
        break;
    case MP_BOOL: cqp_bool(w, mp_decode_bool(p)); break;
    case MP_UINT: cqp_uint(w, mp_decode_uint(p)); break;
    case MP_INT: cqp_int(w, mp_decode_int(p)); break;
    case MP_FLOAT:
    case MP_DOUBLE: cqp_num(w, decode_double(p)); break;
    case MP_STR: {
        const char *s = mp_decode_str(p, &n);
        cqp_strn(w, s, n);
        break;
    }
    case MP_ARRAY: write_elements(w, p); break;
    case MP_MAP: write_members(w, p); break;
    case MP_BIN:
    case MP_EXT: break;
    }
}

void cqd_replay_value_text(cqp_buf *out, const char *value, size_t max)
{
    cqp_buf text = {0};
    cqp_writer w;
    cqp_writer_init(&w, &text, false);
    w.keep_negative_zero = true; /* shown as the bytes hold it */
    const char *p = value;
    write_json(&w, &p);
    if (text.oom) {
        cqp_buf_puts(out, "(out of memory)");
    } else {
        size_t n = text.len < max ? text.len : max;
        cqp_buf_append(out, text.data, n);
        if (n < text.len)
            cqp_buf_puts(out, "...");
    }
    cqp_buf_free(&text);
}
