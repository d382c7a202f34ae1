/* cqp_mp_check (cqp/value.h): one iterative pass over a MessagePack body
 * that refuses, before anything is decoded or allocated, whatever the view
 * (value_mp.c) could not read blindly. Like Tarantool, it bounds every
 * length and count by the bytes left rather than trusting msgpuck's
 * mp_check, whose 1.0.3 keeps the element count in an int: there a 5-byte
 * array32 header claiming 4,294,967,295 elements passes as valid.
 *
 * The bound holds for the whole document, not one header at a time: the
 * slack is the bytes left beyond one for each value still due in every
 * open array and map (a map member is two values), and every value must
 * fit in it. So an impossible count is refused at its header, and a value
 * is due only where a byte is. */
#include <inttypes.h>
#include <limits.h>
#include <msgpuck.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cqp/value.h"
#include "mp_read.h"

/* Maps with more members than this find duplicate keys by sorting; the
 * smaller ones compare each key with those before it. */
#define SMALL_MAP 16
/* Longest part of a duplicate key its detail quotes. */
#define KEY_QUOTE 64
/* Sorted runs the merge sort of keys starts from. */
#define SORT_RUN 16

/* ---- lead bytes ------------------------------------------------------ */

/* What a lead byte starts. Everything past MAP is refused. */
enum { LEAD_SCALAR, LEAD_STR, LEAD_ARRAY, LEAD_MAP, LEAD_BIN, LEAD_EXT, LEAD_RESERVED };

/* A lead byte: its kind; the bytes of the length or count field after
 * it; a scalar's payload bytes, or the length or count a fixstr, fixarray
 * or fixmap holds in the lead byte itself; and the bytes the value takes
 * before any part of variable length (its next value's offset, for most). */
typedef struct mp_lead {
    unsigned char kind, field, fix, size;
} mp_lead;

#define L_(kind, field, fix, size) {LEAD_##kind, field, fix, size}
#define FIXSTR_(n) L_(STR, 0, n, 1 + (n))
#define FIXARRAY_(n) L_(ARRAY, 0, n, 1)
#define FIXMAP_(n) L_(MAP, 0, n, 1)
#define SCALAR_(payload) L_(SCALAR, 0, payload, 1 + (payload))
#define REP4_(...) __VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__
#define REP16_(...) REP4_(__VA_ARGS__), REP4_(__VA_ARGS__), REP4_(__VA_ARGS__), REP4_(__VA_ARGS__)
#define SEQ4_(m, b) m(b), m(b + 1), m(b + 2), m(b + 3)
#define SEQ16_(m, b) SEQ4_(m, b), SEQ4_(m, b + 4), SEQ4_(m, b + 8), SEQ4_(m, b + 12)

/* The MessagePack spec's table of first bytes, in order. */
static const mp_lead leads[256] = {
    /* 0x00-0x7f positive fixint */
    REP16_(SCALAR_(0)), REP16_(SCALAR_(0)), REP16_(SCALAR_(0)), REP16_(SCALAR_(0)),
    REP16_(SCALAR_(0)), REP16_(SCALAR_(0)), REP16_(SCALAR_(0)), REP16_(SCALAR_(0)),
    SEQ16_(FIXMAP_, 0),                                   /* 0x80-0x8f fixmap */
    SEQ16_(FIXARRAY_, 0),                                 /* 0x90-0x9f fixarray */
    SEQ16_(FIXSTR_, 0), SEQ16_(FIXSTR_, 16),              /* 0xa0-0xbf fixstr */
    SCALAR_(0), L_(RESERVED, 0, 0, 1),                    /* 0xc0 nil, 0xc1 never used */
    SCALAR_(0), SCALAR_(0),                               /* 0xc2 false, 0xc3 true */
    L_(BIN, 1, 0, 2), L_(BIN, 2, 0, 3), L_(BIN, 4, 0, 5), /* 0xc4-0xc6 bin8/16/32 */
    L_(EXT, 1, 0, 3), L_(EXT, 2, 0, 4), L_(EXT, 4, 0, 6), /* 0xc7-0xc9 ext8/16/32 */
    SCALAR_(4), SCALAR_(8),                               /* 0xca float32, 0xcb float64 */
    SCALAR_(1), SCALAR_(2), SCALAR_(4), SCALAR_(8),       /* 0xcc-0xcf uint8-64 */
    SCALAR_(1), SCALAR_(2), SCALAR_(4), SCALAR_(8),       /* 0xd0-0xd3 int8-64 */
    L_(EXT, 0, 1, 3), L_(EXT, 0, 2, 4), L_(EXT, 0, 4, 6), /* 0xd4-0xd6 fixext1/2/4 */
    L_(EXT, 0, 8, 10), L_(EXT, 0, 16, 18),                /* 0xd7-0xd8 fixext8/16 */
    L_(STR, 1, 0, 2), L_(STR, 2, 0, 3), L_(STR, 4, 0, 5), /* 0xd9-0xdb str8/16/32 */
    L_(ARRAY, 2, 0, 3), L_(ARRAY, 4, 0, 5),               /* 0xdc array16, 0xdd array32 */
    L_(MAP, 2, 0, 3), L_(MAP, 4, 0, 5),                   /* 0xde map16, 0xdf map32 */
    REP16_(SCALAR_(0)), REP16_(SCALAR_(0)),               /* 0xe0-0xff negative fixint */
};

#undef L_
#undef FIXSTR_
#undef FIXARRAY_
#undef FIXMAP_
#undef SCALAR_
#undef REP4_
#undef REP16_
#undef SEQ4_
#undef SEQ16_

/* ---- state ----------------------------------------------------------- */

/* One key of an open map: where its lead byte is, its length, and its
 * first 8 bytes as a big-endian integer (zero-padded), which orders and
 * tells apart most keys without touching the body again. */
typedef struct mp_key {
    uint64_t prefix;
    uint32_t at;
    uint32_t len;
} mp_key;

/* An open array or map. */
typedef struct mp_frame {
    uint64_t left;    /* values still to read (a map's keys count) */
    uint64_t members; /* a map's member count */
    size_t keys;      /* a map's first key in the key stack */
    bool map;
} mp_frame;

typedef struct mp_state {
    const unsigned char *d;
    size_t len;
    int max_depth;
    cqp_problem *p;
    /* frames[0] stands for the root's place, so the loop needs no case
     * for "no frame open"; frames[k] is the array or map at depth k. */
    mp_frame frames[CQP_MP_MAX_DEPTH + 1];
    /* The keys of every open map, innermost last: maps close in the order
     * opposite to their opening, so one stack serves them all. It starts in
     * `local`, which the small maps of the deepest document fill at most. */
    mp_key *keys;
    size_t top, cap;
    mp_key local[CQP_MP_MAX_DEPTH * SMALL_MAP];
} mp_state;

/* ---- details --------------------------------------------------------- */

static int bad(mp_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3), cold));

static int bad(mp_state *s, const char *fmt, ...)
{
    char detail[sizeof s->p->detail];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return cqp_fail(s->p, CQP_P_BAD_MSGPACK, NULL, "MessagePack: %s", detail);
}

/* What a value led by c is, for a detail ("a float64", "a str32"). */
static const char *lead_name(unsigned char c)
{
    static const char *const names[] = {
        "a float32", "a float64", "a uint8", "a uint16", "a uint32", "a uint64", "an int8", "an int16",
        "an int32", "an int64", NULL, NULL, NULL, NULL, NULL, "a str8", "a str16", "a str32",
        "an array16", "an array32", "a map16", "a map32",
    };
    return c >= 0xca && c <= 0xdf && names[c - 0xca] ? names[c - 0xca] : "a value";
}

/* Refuses a value (what) that needs own more bytes from byte at on
 * (at_least: own is a lower bound), where fewer are left, counting one for
 * each of the need values due after it. */
static int cut(mp_state *s, size_t at, const char *what, uint64_t own, bool at_least, uint64_t need)
{
    size_t left = s->len - at;
    char due[80] = "";
    if (need > 0)
        snprintf(due, sizeof due, " and at least %" PRIu64 " more for the %s due after it", need,
                 need == 1 ? "value" : "values");
    return bad(s, "truncated at byte %zu: %s needs %s%" PRIu64 " more bytes%s, %zu %s left", at, what,
               at_least ? "at least " : "", own, due, left, left == 1 ? "is" : "are");
}

/* A header whose length or count field the end cuts off. */
__attribute__((cold, noinline)) static int cut_header(mp_state *s, const unsigned char *q)
{
    char what[32];
    snprintf(what, sizeof what, "%s header", lead_name(*q));
    return cut(s, (size_t)(q - s->d) + 1, what, leads[*q].field, false, 0);
}

/* A value of n (bytes, elements, members) whose bytes the end cuts off. */
__attribute__((cold, noinline)) static int cut_value(mp_state *s, const unsigned char *q, uint64_t n, uint64_t need)
{
    char what[64];
    size_t at = (size_t)(q - s->d) + 1 + leads[*q].field;
    switch (leads[*q].kind) {
    case LEAD_STR:
        snprintf(what, sizeof what, "a string of %" PRIu64 " bytes", n);
        return cut(s, at, what, n, false, need);
    case LEAD_ARRAY:
        snprintf(what, sizeof what, "an array of %" PRIu64 " elements", n);
        return cut(s, at, what, n, true, need);
    case LEAD_MAP:
        snprintf(what, sizeof what, "a map of %" PRIu64 " members", n);
        return cut(s, at, what, 2 * n, true, need);
    default: return cut(s, at, lead_name(*q), n, false, need);
    }
}

/* Types as a refused map key names them. */
static const char *const type_names[] = {
    [MP_NIL] = "nil",         [MP_UINT] = "an integer", [MP_INT] = "an integer",  [MP_STR] = "a string",
    [MP_BIN] = "a bin",       [MP_ARRAY] = "an array",  [MP_MAP] = "a map",       [MP_BOOL] = "a boolean",
    [MP_FLOAT] = "a float32", [MP_DOUBLE] = "a float64", [MP_EXT] = "an ext value",
};

/* A lead byte no request may hold here: bin, ext, 0xc1, or (key) a map
 * key that is not a string. */
__attribute__((cold, noinline)) static int refused(mp_state *s, const unsigned char *q, bool key)
{
    size_t pos = (size_t)(q - s->d);
    switch (leads[*q].kind) {
    case LEAD_RESERVED: return bad(s, "the reserved byte 0xc1 at byte %zu", pos);
    case LEAD_EXT: return bad(s, "an ext value (0x%02x) at byte %zu: no field takes one", *q, pos);
    default: break;
    }
    if (key)
        return bad(s, "the map key at byte %zu is %s, not a string", pos, type_names[mp_typeof((char)*q)]);
    return bad(s, "a bin value (0x%02x) at byte %zu where a value is expected: send text as a string", *q, pos);
}

/* ---- UTF-8 ----------------------------------------------------------- */

/* A sequence's length and the range of its second byte by lead byte
 * (Unicode's table 3-7): the ranges rule out overlongs (E0, F0),
 * surrogates (ED) and code points past U+10FFFF (F4). n = 0: the byte
 * leads no sequence. */
typedef struct utf8_lead {
    unsigned char n, lo, hi;
} utf8_lead;

static utf8_lead utf8_rule(unsigned char c)
{
    if (c >= 0xc2 && c <= 0xdf)
        return (utf8_lead){2, 0x80, 0xbf};
    if (c >= 0xe0 && c <= 0xef)
        return (utf8_lead){3, c == 0xe0 ? 0xa0 : 0x80, c == 0xed ? 0x9f : 0xbf};
    if (c >= 0xf0 && c <= 0xf4)
        return (utf8_lead){4, c == 0xf0 ? 0x90 : 0x80, c == 0xf4 ? 0x8f : 0xbf};
    return (utf8_lead){0, 0, 0};
}

/* Why a sequence led by c is refused when its second byte is a
 * continuation byte outside the lead's range. */
static const char *utf8_range_fault(unsigned char c)
{
    if (c == 0xed)
        return "a UTF-16 surrogate";
    if (c == 0xf4)
        return "a code point past U+10FFFF";
    return "an overlong sequence";
}

/* Why a byte that leads no sequence is refused. */
static const char *utf8_lead_fault(unsigned char c)
{
    if (c < 0xc0)
        return "a continuation byte with no lead byte";
    if (c < 0xc2)
        return "an overlong sequence";
    return c < 0xf8 ? "a code point past U+10FFFF" : "a byte that is never UTF-8";
}

/* Length of the valid non-ASCII sequence at q (n bytes left), or 0 with
 * *why set. */
static size_t utf8_seq(const unsigned char *q, size_t n, const char **why)
{
    utf8_lead r = utf8_rule(q[0]);
    if (r.n == 0) {
        *why = utf8_lead_fault(q[0]);
        return 0;
    }
    for (size_t k = 1; k < r.n; k++)
        if (k >= n || (q[k] & 0xc0) != 0x80) {
            *why = "a truncated sequence";
            return 0;
        }
    if (q[1] < r.lo || q[1] > r.hi) {
        *why = utf8_range_fault(q[0]);
        return 0;
    }
    return r.n;
}

/* The 8 bytes at q as an integer whose most significant byte is q[0]. */
static uint64_t load8_be(const unsigned char *q)
{
    uint64_t w;
    memcpy(&w, q, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The first n (< 8) of the 8 bytes at q, the rest zeroed: most keys and
 * words are shorter than 8 bytes, and one load with a mask costs less than
 * a copy of variable length. */
static uint64_t load_head_be(const unsigned char *q, size_t n) { return load8_be(q) & ~(UINT64_MAX >> (8 * n)); }

/* Where in q[0..n) the first invalid UTF-8 sequence starts (n: none);
 * avail: bytes readable from q on (>= n). ASCII, nearly all a request's
 * text, is passed eight bytes at a time. */
static size_t utf8_bad(const unsigned char *q, size_t n, size_t avail, const char **why)
{
    size_t i = 0;
    for (; n - i >= 8; i += 8)
        if (load8_be(q + i) & 0x8080808080808080u)
            break;
    if (n - i < 8 && avail - i >= 8 && (load_head_be(q + i, n - i) & 0x8080808080808080u) == 0)
        return n;
    while (i < n) {
        if (q[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(q + i, n - i, why);
        if (k == 0)
            return i;
        i += k;
    }
    return n;
}

/* ---- keys ------------------------------------------------------------ */

/* Bytes of a str header led by c: 1 for a fixstr, else 2, 3 or 5. */
static int str_header(unsigned char c) { return c < 0xd9 ? 1 : 1 + leads[c].field; }

static const unsigned char *key_bytes(const mp_state *s, const mp_key *k)
{
    return s->d + k->at + str_header(s->d[k->at]);
}

static inline bool same_key(const mp_state *s, const mp_key *a, const mp_key *b)
{
    // Equal prefixes and lengths settle keys of up to 8 bytes.
    return a->prefix == b->prefix && a->len == b->len &&
           (a->len <= 8 || memcmp(key_bytes(s, a) + 8, key_bytes(s, b) + 8, a->len - 8) == 0);
}

/* Byte order, then position: a strict total order, equal keys adjacent
 * with the first occurrence first. */
static bool key_less(const mp_state *s, const mp_key *a, const mp_key *b)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix;
    int c = memcmp(key_bytes(s, a), key_bytes(s, b), a->len < b->len ? a->len : b->len);
    if (c != 0)
        return c < 0;
    return a->len != b->len ? a->len < b->len : a->at < b->at;
}

/* The first 8 bytes of the key q[0..n) as a big-endian integer, zeros
 * past its end; avail: bytes readable from q on. */
static uint64_t key_prefix(const unsigned char *q, size_t n, size_t avail)
{
    if (avail >= 8)
        return n < 8 ? load_head_be(q, n) : load8_be(q);
    unsigned char pad[8] = {0};
    memcpy(pad, q, n);
    return load8_be(pad);
}

/* Makes room for n more keys on the stack (a BUSY problem when the
 * scratch cannot be had). */
static int keys_grow(mp_state *s, size_t n)
{
    size_t cap = s->cap * 2 > s->top + n ? s->cap * 2 : s->top + n;
    mp_key *k = cap <= SIZE_MAX / sizeof *k ? cqp_malloc(cap * sizeof *k) : NULL;
    if (!k)
        return cqp_fail(s->p, CQP_P_BUSY, NULL, "out of memory checking the MessagePack body's keys");
    memcpy(k, s->keys, s->top * sizeof *k);
    if (s->keys != s->local)
        cqp_free(s->keys);
    s->keys = k;
    s->cap = cap;
    return 0;
}

static inline int keys_reserve(mp_state *s, size_t n) { return s->cap - s->top >= n ? 0 : keys_grow(s, n); }

/* The first n bytes of a key as a detail quotes them: a NUL, which would
 * end the text, as U+FFFD (out holds 3 * KEY_QUOTE + 1 bytes). */
static void quote_key(const unsigned char *b, int n, char *out)
{
    for (int i = 0; i < n; i++) {
        if (b[i]) {
            *out++ = (char)b[i];
        } else {
            memcpy(out, "\xEF\xBF\xBD", 3);
            out += 3;
        }
    }
    *out = '\0';
}

static int duplicate(mp_state *s, const mp_key *first, const mp_key *again)
{
    // Quoted up to KEY_QUOTE bytes, never cut inside a UTF-8 sequence.
    int n = again->len <= KEY_QUOTE ? (int)again->len : KEY_QUOTE;
    const unsigned char *b = key_bytes(s, again);
    while (n < (int)again->len && n > 0 && (b[n] & 0xc0) == 0x80)
        n--;
    char quoted[3 * KEY_QUOTE + 1];
    quote_key(b, n, quoted);
    return bad(s, "duplicate key \"%s%s\" at byte %" PRIu32 " (first at byte %" PRIu32 ")", quoted,
               n < (int)again->len ? "..." : "", again->at, first->at);
}

/* Records the key led by the byte at `at`, of n bytes whose first 8 are
 * prefix (key_prefix), of the map f; a small map compares it with its
 * keys before. */
static inline int key_note(mp_state *s, const mp_frame *f, size_t at, uint64_t prefix, size_t n)
{
    if (keys_reserve(s, 1))
        return -1;
    mp_key *k = &s->keys[s->top];
    *k = (mp_key){prefix, (uint32_t)at, (uint32_t)n};
    if (f->members <= SMALL_MAP)
        for (size_t i = f->keys; i < s->top; i++)
            if (same_key(s, &s->keys[i], k))
                return duplicate(s, &s->keys[i], k);
    s->top++;
    return 0;
}

/* key_note for the key q[0..n) (its lead byte at `at`). */
static int key_seen(mp_state *s, const mp_frame *f, size_t at, const unsigned char *q, size_t n)
{
    return key_note(s, f, at, key_prefix(q, n, (size_t)(s->d + s->len - q)), n);
}

static void insertion_sort(const mp_state *s, mp_key *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        mp_key k = a[i];
        size_t j = i;
        for (; j > 0 && key_less(s, &k, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = k;
    }
}

/* Merges the sorted src[lo..mid) and src[mid..hi) into dst[lo..hi). */
static void merge(const mp_state *s, const mp_key *src, mp_key *dst, size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        dst[o++] = key_less(s, &src[j], &src[i]) ? src[j++] : src[i++];
    memcpy(dst + o, src + i, (mid - i) * sizeof *dst);
    o += mid - i;
    memcpy(dst + o, src + j, (hi - j) * sizeof *dst);
}

/* Sorts a[0..n) with tmp[0..n) as scratch: a bottom-up merge sort, so
 * O(n log n) whatever the keys, and no recursion. */
static void sort_keys(const mp_state *s, mp_key *a, mp_key *tmp, size_t n)
{
    for (size_t i = 0; i < n; i += SORT_RUN)
        insertion_sort(s, a + i, n - i < SORT_RUN ? n - i : SORT_RUN);
    mp_key *src = a, *dst = tmp;
    for (size_t w = SORT_RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = n - lo < w ? n : lo + w, hi = n - lo < 2 * w ? n : lo + 2 * w;
            merge(s, src, dst, lo, mid, hi);
        }
        mp_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* The duplicate check of a large map, whose keys are the stack's from
 * base on: sorted (the scratch above them on the same stack), so equal
 * keys are neighbours, the first occurrence first. Reports the repeat
 * that comes first in the body. */
static int large_map_keys(mp_state *s, size_t base)
{
    size_t n = s->top - base;
    if (keys_reserve(s, n))
        return -1;
    mp_key *a = s->keys + base;
    sort_keys(s, a, a + n, n);
    // In a run of equal keys the second is the repeat the body reaches first.
    const mp_key *again = NULL;
    size_t first = 0;
    for (size_t i = 1; i < n; i++)
        if (same_key(s, &a[i - 1], &a[i]) && (!again || a[i].at < again->at)) {
            first = i - 1;
            again = &a[i];
        }
    return again ? duplicate(s, &a[first], again) : 0;
}

__attribute__((cold, noinline)) static int trailing(mp_state *s, const unsigned char *q)
{
    return bad(s, "trailing bytes: the value ends at byte %zu, the body has %zu", (size_t)(q - s->d), s->len);
}

/* ---- values ---------------------------------------------------------- */

/* The big-endian length or count field of n (1, 2 or 4) bytes at q. */
static uint64_t load_field(const unsigned char *q, int n)
{
    if (n == 1)
        return q[0];
    if (n == 2)
        return (uint64_t)q[0] << 8 | q[1];
    return (uint64_t)q[0] << 24 | (uint64_t)q[1] << 16 | (uint64_t)q[2] << 8 | q[3];
}

/* The string led by the byte at q: its bytes (n, after a header of h
 * bytes, which fit) are UTF-8, and a key of the map f is recorded. */
static int string(mp_state *s, const mp_frame *f, const unsigned char *q, size_t h, size_t n, bool key)
{
    const char *why = NULL;
    size_t bad_at = utf8_bad(q + h, n, (size_t)(s->d + s->len - q) - h, &why);
    if (bad_at < n)
        return bad(s, "invalid UTF-8 at byte %zu in %s: %s", (size_t)(q - s->d) + h + bad_at,
                   key ? "a map key" : "a string", why);
    return key ? key_seen(s, f, (size_t)(q - s->d), q + h, n) : 0;
}

/* The single pass. It is the hot loop of every MessagePack request (a
 * 10,000-move batch has 210,000 values), so its state stays in locals: the
 * position, the innermost frame's count (the frame in memory is written
 * only when another opens inside it) and the slack, the bytes left beyond
 * one for each value still due in every open array and map, which is what
 * every bound is about: a value fits when its bytes past the one counted
 * for it are within the slack. The values a request is mostly made of
 * come first, each tested straight from its lead byte: a fixstr of up to 8
 * ASCII bytes (a key, an id) from one 8-byte load, a float64 (and the rest
 * of a vector's run of them), a fixmap or fixarray, a fixint. Everything
 * else, and any of those that does not pass, goes through the general
 * path, one table lookup per lead byte, which finds and reports the fault
 * with the count of values due; the function is long because those paths
 * share the locals. */
static int walk(mp_state *s)
{
    const unsigned char *q = s->d;
    // The root is due: its one byte is counted, the rest is slack.
    uint64_t slack = s->len - 1, left = 1;
    bool map = false;
    mp_frame *f = s->frames;
    for (;;) {
        // slack >= 0 holds throughout: the byte at q is there.
        unsigned char c = *q;
        size_t size;
        bool key = map && left % 2 == 0;
        left--;
        if ((c & 0xe0) == 0xa0 && (c & 0x1f) <= 8 && slack >= 8) {
            // Slack of 8 or more: the 8 bytes after the lead are there.
            size_t n = c & 0x1f;
            uint64_t w = load8_be(q + 1);
            uint64_t head = n == 8 ? w : w & ~(UINT64_MAX >> (8 * n));
            if ((head & 0x8080808080808080u) == 0) {
                if (key && key_note(s, f, (size_t)(q - s->d), head, n))
                    return -1;
                q += 1 + n;
                slack -= n;
                goto closed;
            }
        } else if (key) {
            // Only a string may be a key: the general path says what this is.
        } else if (c == 0x83 && f - s->frames + 2 < s->max_depth && (size = mpr_move_form(q, slack + 1)) > 0) {
            // A whole move of a tick's form, three levels deep (the depth
            // fits): its keys distinct strings, its id ASCII, the rest
            // float64s, all within the slack, as the general path would find.
            q += size;
            slack -= size - 1;
            goto closed;
        } else if (c == 0xcb) {
            if (slack < 8)
                goto general;
            q += 9;
            slack -= 8;
            if (!map)
                for (; left > 0 && *q == 0xcb && slack >= 8; left--, slack -= 8)
                    q += 9;
            goto closed;
        } else if ((c & 0xe0) == 0x80) {
            // A fixmap (0x80-0x8f) or fixarray (0x90-0x9f).
            uint64_t n = c & 0x0f;
            bool m = c < 0x90;
            uint64_t own = m ? 2 * n : n;
            if (own > slack || f - s->frames >= s->max_depth)
                goto general;
            q++;
            slack -= own;
            if (n == 0)
                goto closed;
            // A container with values due closes nothing.
            f->left = left;
            *++f = (mp_frame){0, n, s->top, m};
            left = own;
            map = m;
            continue;
        } else if (c < 0x80 || c >= 0xe0) {
            q++;
            goto closed;
        }
    general:;
        const unsigned char *end = s->d + s->len;
        // The values due after this one (each at least a byte), the bytes after its lead.
        uint64_t need = (uint64_t)(end - q) - slack - 1;
        size_t rest = (size_t)(end - q) - 1;
        mp_lead l = leads[c];
        if (l.kind > LEAD_MAP || (key && l.kind != LEAD_STR))
            return refused(s, q, key);
        if (rest < l.field)
            return cut_header(s, q);
        rest -= l.field;
        uint64_t n = l.field ? load_field(q + 1, l.field) : l.fix;
        uint64_t own = l.kind == LEAD_MAP ? 2 * n : n;
        if (own + need > rest)
            return cut_value(s, q, n, need);
        if (l.kind == LEAD_SCALAR) {
            q += l.size;
        } else if (l.kind == LEAD_STR) {
            if (string(s, f, q, 1 + l.field, (size_t)n, key))
                return -1;
            q += l.size + (l.field ? n : 0);
        } else {
            if (f - s->frames >= s->max_depth)
                return bad(s, "nesting deeper than %d at byte %zu", s->max_depth, (size_t)(q - s->d));
            q += l.size;
            need += own;
            if (n > 0) {
                f->left = left;
                *++f = (mp_frame){0, n, s->top, l.kind == LEAD_MAP};
                left = own;
                map = f->map;
            }
        }
        slack = (uint64_t)(end - q) - need;
    closed:
        // The frames whose last value this was close.
        while (left == 0) {
            if (f == s->frames)
                return q == s->d + s->len ? 0 : trailing(s, q);
            if (map && f->members > SMALL_MAP && large_map_keys(s, f->keys))
                return -1;
            s->top = f->keys;
            f--;
            left = f->left;
            map = f->map;
        }
    }
}

int cqp_mp_check(const char *data, size_t len, int max_depth, cqp_problem *p)
{
    if (len == 0)
        return cqp_fail(p, CQP_P_BAD_MSGPACK, NULL, "MessagePack: the body is empty");
    // msgpuck's mp_next counts the values due in an int, and keys note offsets in 32 bits.
    if (len > INT_MAX)
        return cqp_fail(p, CQP_P_BAD_MSGPACK, NULL,
                        "MessagePack: a body of %zu bytes is over the 2 GiB this reader takes", len);
    // Field by field: zeroing the key stack's 8 KiB would cost a small body more than its check.
    mp_state s;
    s.d = (const unsigned char *)data;
    s.len = len;
    s.max_depth = max_depth < CQP_MP_MAX_DEPTH ? max_depth : CQP_MP_MAX_DEPTH;
    s.p = p;
    s.frames[0] = (mp_frame){0};
    s.keys = s.local;
    s.top = 0;
    s.cap = sizeof s.local / sizeof s.local[0];
    int rc = walk(&s);
    if (s.keys != s.local)
        cqp_free(s.keys);
    return rc;
}

size_t cqp_mp_span(const char *p)
{
    const char *end = p;
    mp_next(&end);
    return (size_t)(end - p);
}
