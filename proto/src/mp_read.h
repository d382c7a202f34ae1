/* Inline readers of MessagePack values inside bytes cqp_mp_check accepted,
 * for the decoders' one-pass fast paths (decode_move_mp.c): the view
 * (value_mp.c) answers each question with a call, and a tick's batch asks
 * some 200,000 of them. Nothing here checks bounds (the check did), and
 * each reader answers false, with *p unmoved, for a value of another kind:
 * the caller then leaves it to the view. A number reads as cqp_value_number
 * reads it. */
#ifndef CQP_MP_READ_H
#define CQP_MP_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t mpr_be(const unsigned char *p, int n)
{
    uint64_t x = 0;
    for (int k = 0; k < n; k++)
        x = x << 8 | p[k];
    return x;
}

static inline uint64_t mpr_be64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* The uncommon numbers: every integer width past the fixints, float32. */
static inline bool mpr_number_wide(const unsigned char **p, double *out)
{
    const unsigned char *q = *p;
    unsigned c = q[0];
    if (c == 0xca) {
        uint32_t u = (uint32_t)mpr_be(q + 1, 4);
        float x;
        memcpy(&x, &u, 4);
        // Every float32 is exactly a double, NaN and the infinities included.
        *out = (double)x;
    } else if (c >= 0xcc && c <= 0xcf) {
        *out = (double)mpr_be(q + 1, 1 << (c - 0xcc));
    } else if (c >= 0xd0 && c <= 0xd3) {
        int n = 1 << (c - 0xd0);
        uint64_t u = mpr_be(q + 1, n);
        // Sign-extended from n bytes (a two's complement integer).
        int64_t x = n == 8 ? (int64_t)u : (int64_t)(u ^ (1ull << (8 * n - 1))) - (int64_t)(1ull << (8 * n - 1));
        *out = (double)x;
    } else {
        return false;
    }
    *p = q + 1 + (1 << (c & 3));
    return true;
}

/* The number at *p into *out, *p past it; false for any other value. */
static inline bool mpr_number(const unsigned char **p, double *out)
{
    const unsigned char *q = *p;
    unsigned c = q[0];
    if (c == 0xcb) {
        uint64_t u = mpr_be64(q + 1);
        memcpy(out, &u, 8);
        *p = q + 9;
        return true;
    }
    if (c < 0x80 || c >= 0xe0) {
        *out = (double)(c < 0x80 ? (int)c : (int)c - 256);
        *p = q + 1;
        return true;
    }
    return mpr_number_wide(p, out);
}

/* A string's bytes (*s, *n of them), *p past it; false for any other value. */
static inline bool mpr_str(const unsigned char **p, const char **s, uint32_t *n)
{
    const unsigned char *q = *p;
    unsigned c = q[0];
    int h;
    if ((c & 0xe0) == 0xa0) {
        *n = c & 0x1f;
        h = 1;
    } else if (c >= 0xd9 && c <= 0xdb) {
        h = 1 << (c - 0xd9);
        *n = (uint32_t)mpr_be(q + 1, h);
        h++;
    } else {
        return false;
    }
    *s = (const char *)q + h;
    *p = q + h + *n;
    return true;
}

/* A container's count, *p past its header (lo: its fix form's first lead
 * byte; l16: its 16-bit form's, the 32-bit form's the next). */
static inline bool mpr_count(const unsigned char **p, uint32_t *n, unsigned lo, unsigned l16)
{
    const unsigned char *q = *p;
    unsigned c = q[0];
    if (c >= lo && c < lo + 16) {
        *n = c - lo;
        *p = q + 1;
    } else if (c == l16 || c == l16 + 1) {
        int w = c == l16 ? 2 : 4;
        *n = (uint32_t)mpr_be(q + 1, w);
        *p = q + 1 + w;
    } else {
        return false;
    }
    return true;
}

/* A map's member count or an array's element count, *p past the header. */
static inline bool mpr_map(const unsigned char **p, uint32_t *n) { return mpr_count(p, n, 0x80, 0xde); }
static inline bool mpr_array(const unsigned char **p, uint32_t *n) { return mpr_count(p, n, 0x90, 0xdc); }

/* True when s[0..n) is name[0..len): the length first, then the bytes,
 * in one word for the lengths of the decoders' keys (gcc calls memcmp for
 * an 8-byte compare of unknown alignment). */
static inline bool mpr_is(const char *s, uint32_t n, const char *name, uint32_t len)
{
    if (n != len)
        return false;
    if (len == 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, name, 8);
        return a == b;
    }
    for (uint32_t k = 0; k < len; k++)
        if (s[k] != name[k])
            return false;
    return true;
}

#endif
