/* An independent MessagePack oracle for the fuzz targets: a strict
 * recursive validator written from the MessagePack specification and
 * docs/MSGPACK.md's list of what a request may not hold, and a small reader
 * of the bytes it accepted. It shares nothing with proto/src/mp_check.c
 * (an iterative one-pass table-driven check) or value_mp.c (msgpuck's
 * decoders), so the two can be held against each other: cqp_mp_check must
 * accept exactly what mpo_check accepts.
 *
 * It is slow on purpose where slowness is simple: duplicate keys are found
 * by comparing every pair of keys of a map (quadratic, fine for inputs of
 * fuzzing size) and UTF-8 is checked byte by byte against RFC 3629's
 * table. */
#ifndef MP_ORACLE_H
#define MP_ORACLE_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a value is, as the reader sees it. */
typedef enum mpo_kind {
    MPO_BAD,   /* a byte no request may hold (bin, ext, 0xc1) */
    MPO_NIL,
    MPO_BOOL,
    MPO_UINT,  /* positive fixint, uint 8..64 */
    MPO_INT,   /* negative fixint, int 8..64 */
    MPO_FLOAT, /* float 32 and 64 */
    MPO_STR,
    MPO_ARRAY,
    MPO_MAP,
} mpo_kind;

/* One header as the specification lays it out: the kind, how many bytes
 * the header takes (type byte, length or payload bytes included), and for
 * a string its length, for an array its elements, for a map its pairs. */
typedef struct mpo_head {
    mpo_kind kind;
    size_t head; /* bytes of the header; a scalar is all header */
    uint64_t n;  /* str: bytes after the header; array: elements; map: pairs */
} mpo_head;

static inline uint64_t mpo_be(const uint8_t *p, int bytes)
{
    uint64_t x = 0;
    for (int i = 0; i < bytes; i++)
        x = x << 8 | p[i];
    return x;
}

/* Reads the header at p (left bytes available). False when it is cut;
 * *h is written either way (a refused byte reads as MPO_BAD). */
static inline bool mpo_read_head(const uint8_t *p, size_t left, mpo_head *h)
{
    *h = (mpo_head){.kind = MPO_BAD, .head = 1};
    if (left == 0)
        return false;
    uint8_t b = p[0];
    int len_bytes = 0; /* a big-endian length or count after the type byte */
    if (b <= 0x7f) {
        h->kind = MPO_UINT;
    } else if (b <= 0x8f) {
        h->kind = MPO_MAP;
        h->n = b & 0x0f;
    } else if (b <= 0x9f) {
        h->kind = MPO_ARRAY;
        h->n = b & 0x0f;
    } else if (b <= 0xbf) {
        h->kind = MPO_STR;
        h->n = b & 0x1f;
    } else if (b >= 0xe0) {
        h->kind = MPO_INT;
    } else {
        switch (b) {
        case 0xc0: h->kind = MPO_NIL; break;
        case 0xc2:
        case 0xc3: h->kind = MPO_BOOL; break;
        case 0xca: h->kind = MPO_FLOAT; h->head = 5; break;
        case 0xcb: h->kind = MPO_FLOAT; h->head = 9; break;
        case 0xcc: h->kind = MPO_UINT; h->head = 2; break;
        case 0xcd: h->kind = MPO_UINT; h->head = 3; break;
        case 0xce: h->kind = MPO_UINT; h->head = 5; break;
        case 0xcf: h->kind = MPO_UINT; h->head = 9; break;
        case 0xd0: h->kind = MPO_INT; h->head = 2; break;
        case 0xd1: h->kind = MPO_INT; h->head = 3; break;
        case 0xd2: h->kind = MPO_INT; h->head = 5; break;
        case 0xd3: h->kind = MPO_INT; h->head = 9; break;
        case 0xd9: h->kind = MPO_STR; len_bytes = 1; break;
        case 0xda: h->kind = MPO_STR; len_bytes = 2; break;
        case 0xdb: h->kind = MPO_STR; len_bytes = 4; break;
        case 0xdc: h->kind = MPO_ARRAY; len_bytes = 2; break;
        case 0xdd: h->kind = MPO_ARRAY; len_bytes = 4; break;
        case 0xde: h->kind = MPO_MAP; len_bytes = 2; break;
        case 0xdf: h->kind = MPO_MAP; len_bytes = 4; break;
        default: return true; /* 0xc1, bin 0xc4-0xc6, ext 0xc7-0xc9, fixext 0xd4-0xd8 */
        }
    }
    if (len_bytes) {
        if (left < 1 + (size_t)len_bytes)
            return false;
        h->n = mpo_be(p + 1, len_bytes);
        h->head = 1 + (size_t)len_bytes;
    }
    return h->head <= left;
}

/* RFC 3629, section 4: the bytes of one well-formed UTF-8 character at s
 * (n left), or 0. */
static inline size_t mpo_utf8_char(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c <= 0x7f)
        return 1;
    uint8_t lo = 0x80, hi = 0xbf; /* the range of the second byte */
    size_t len;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong forms */
        if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f; /* nothing past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return len;
}

static inline bool mpo_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t w = mpo_utf8_char(s + i, n - i);
        if (!w)
            return false;
        i += w;
    }
    return true;
}

/* The validator's state: the input's end and the deepest nesting seen. */
typedef struct mpo_walk {
    const uint8_t *end;
    int max_depth; /* arrays and maps may nest this deep (the root is depth 1) */
    int deepest;
} mpo_walk;

static inline size_t mpo_value(mpo_walk *w, const uint8_t *p, int depth);

/* A string at p (header h): its bytes must be there and be UTF-8. Returns
 * its size, or 0 when refused. */
static inline size_t mpo_string(const mpo_walk *w, const uint8_t *p, const mpo_head *h)
{
    size_t left = (size_t)(w->end - p) - h->head;
    if (h->n > left || !mpo_utf8(p + h->head, (size_t)h->n))
        return 0;
    return h->head + (size_t)h->n;
}

/* True when the string values at a and b (both accepted) hold the same
 * bytes, whatever their headers. */
static inline bool mpo_same_string(const uint8_t *a, const uint8_t *b, const uint8_t *end)
{
    mpo_head ha, hb;
    mpo_read_head(a, (size_t)(end - a), &ha);
    mpo_read_head(b, (size_t)(end - b), &hb);
    return ha.n == hb.n && memcmp(a + ha.head, b + hb.head, (size_t)ha.n) == 0;
}

/* A map's pairs from p: keys strings, no key twice. Returns the bytes, or 0. */
static inline size_t mpo_pairs(mpo_walk *w, const uint8_t *p, uint64_t pairs, int depth)
{
    /* A pair takes two bytes at least: a count beyond that cannot be
     * there, and keys[] below stays as small as the input. */
    if (pairs == 0 || pairs > (uint64_t)(w->end - p) / 2)
        return 0; /* the caller tells an empty map from a refused one */
    const uint8_t **keys = malloc((size_t)pairs * sizeof *keys);
    if (!keys)
        abort(); /* the oracle must not have a verdict of its own on memory */
    const uint8_t *at = p;
    size_t used = 0;
    uint64_t i = 0;
    for (; i < pairs; i++) {
        mpo_head h;
        if (!mpo_read_head(at, (size_t)(w->end - at), &h) || h.kind != MPO_STR)
            break;
        size_t key = mpo_string(w, at, &h);
        if (!key)
            break;
        uint64_t j = 0; /* every earlier key of this map */
        while (j < i && !mpo_same_string(keys[j], at, w->end))
            j++;
        if (j < i)
            break;
        keys[i] = at;
        at += key;
        size_t v = mpo_value(w, at, depth);
        if (!v)
            break;
        at += v;
    }
    if (i == pairs)
        used = (size_t)(at - p);
    free(keys);
    return used;
}

/* The value at p, nested inside depth containers. Returns its size, or 0
 * when refused. */
static inline size_t mpo_value(mpo_walk *w, const uint8_t *p, int depth)
{
    mpo_head h;
    if (p >= w->end || !mpo_read_head(p, (size_t)(w->end - p), &h))
        return 0;
    switch (h.kind) {
    case MPO_BAD: return 0;
    case MPO_STR: return mpo_string(w, p, &h);
    case MPO_ARRAY:
    case MPO_MAP: break;
    default: return h.head;
    }
    if (depth + 1 > w->max_depth)
        return 0;
    if (depth + 1 > w->deepest)
        w->deepest = depth + 1;
    if (h.kind == MPO_MAP) {
        size_t body = mpo_pairs(w, p + h.head, h.n, depth + 1);
        return h.n == 0 ? h.head : body ? h.head + body : 0;
    }
    const uint8_t *at = p + h.head;
    for (uint64_t i = 0; i < h.n; i++) {
        size_t v = mpo_value(w, at, depth + 1);
        if (!v)
            return 0;
        at += v;
    }
    return (size_t)(at - p);
}

/* True when data[0..len) is exactly one value a request may hold, nesting
 * at most max_depth deep (what cqp_mp_check documents: values above
 * CQP_MP_MAX_DEPTH act as it, which the caller applies). *deepest gets the
 * deepest nesting of the accepted value (0 for a scalar). */
static inline bool mpo_check(const uint8_t *data, size_t len, int max_depth, int *deepest)
{
    mpo_walk w = {.end = data + len, .max_depth = max_depth};
    *deepest = 0;
    if (len == 0 || len > INT_MAX)
        return false;
    size_t used = mpo_value(&w, data, 0);
    *deepest = w.deepest;
    return used == len;
}

/* ---- reading accepted bytes -------------------------------------------- */
/* Every p below lies in bytes mpo_check accepted, which end at end. */

static inline mpo_head mpo_head_at(const uint8_t *p, const uint8_t *end)
{
    mpo_head h;
    mpo_read_head(p, (size_t)(end - p), &h);
    return h;
}

/* The byte after the value at p. */
static inline const uint8_t *mpo_skip(const uint8_t *p, const uint8_t *end)
{
    mpo_walk w = {.end = end, .max_depth = INT_MAX};
    return p + mpo_value(&w, p, 0);
}

/* A string's bytes and length. */
static inline const uint8_t *mpo_str(const uint8_t *p, const uint8_t *end, size_t *len)
{
    mpo_head h = mpo_head_at(p, end);
    *len = (size_t)h.n;
    return p + h.head;
}

/* An integer's value (a uint above INT64_MAX saturates) and a float's. */
static inline int64_t mpo_int(const uint8_t *p)
{
    uint8_t b = p[0];
    if (b <= 0x7f)
        return b;
    if (b >= 0xe0)
        return (int8_t)b;
    int bytes = 1 << ((b & 3));
    uint64_t x = mpo_be(p + 1, bytes);
    if (b >= 0xcc && b <= 0xcf)
        return x > INT64_MAX ? INT64_MAX : (int64_t)x;
    /* int 8..64: sign-extend from the top bit */
    if (bytes < 8 && (x >> (bytes * 8 - 1)))
        x |= ~UINT64_C(0) << (bytes * 8);
    return (int64_t)x;
}

static inline double mpo_float(const uint8_t *p)
{
    if (p[0] == 0xca) {
        uint32_t bits = (uint32_t)mpo_be(p + 1, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    uint64_t bits = mpo_be(p + 1, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Element i of the array at p, or NULL. */
static inline const uint8_t *mpo_index(const uint8_t *p, const uint8_t *end, uint64_t i)
{
    mpo_head h = mpo_head_at(p, end);
    if (h.kind != MPO_ARRAY || i >= h.n)
        return NULL;
    const uint8_t *at = p + h.head;
    while (i--)
        at = mpo_skip(at, end);
    return at;
}

/* The value of the member of the map at p whose key is key[0..n), or NULL. */
static inline const uint8_t *mpo_member(const uint8_t *p, const uint8_t *end, const char *key, size_t n)
{
    mpo_head h = mpo_head_at(p, end);
    if (h.kind != MPO_MAP)
        return NULL;
    const uint8_t *at = p + h.head;
    for (uint64_t i = 0; i < h.n; i++) {
        size_t len;
        const uint8_t *k = mpo_str(at, end, &len);
        const uint8_t *v = k + len;
        if (len == n && memcmp(k, key, n) == 0)
            return v;
        at = mpo_skip(v, end);
    }
    return NULL;
}

#endif
