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

#include "cq/world.h"

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

/* ---- the move of a tick --------------------------------------------- */

/* A move in the exact form a game tick sends 10,000 of a batch:
 * {"id": fixstr, "pose": {"position": [3 float64], "rotation": [4 float64]},
 * "velocity": [3 float64]}, members in that order. After the id, its
 * bytes are fixed but for the numbers' payloads: MPR_MOVE_TAIL bytes whose
 * offsets the MPR_AT_ constants give from the tail's start. */
enum {
    MPR_MOVE_HEAD = 5, /* 0x83, "id" as a fixstr, the id's fixstr lead */
    MPR_MOVE_TAIL = 126,
    MPR_AT_POSITION = 16, /* the first float64 lead of each vector */
    MPR_AT_ROTATION = 53,
    MPR_AT_VELOCITY = 99,
};

/* The tail's bytes, and which of them are fixed (0xff) rather than a
 * number's payload (0). */
static const unsigned char mpr_move_tail[] = {
    0xa4, 'p', 'o', 's', 'e', 0x82, 0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', 0x93,
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0,
    0xa8, 'r', 'o', 't', 'a', 't', 'i', 'o', 'n', 0x94,
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0,
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0,
    0xa8, 'v', 'e', 'l', 'o', 'c', 'i', 't', 'y', 0x93,
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0,
};
static const unsigned char mpr_move_fixed[] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
    0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
};

_Static_assert(sizeof mpr_move_tail == MPR_MOVE_TAIL && sizeof mpr_move_fixed == MPR_MOVE_TAIL, "the tail's tables");

static inline uint64_t mpr_load8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The bytes of the move of that form at q (its lead byte), within avail
 * bytes, with an id of ASCII bytes, or with ids set an id
 * (cq_world_id_valid: 1 to 31 id characters); 0 when it is not one. Reads
 * nothing past q + avail: a check may ask it of bytes it has not checked
 * yet. The check asks only for ASCII (the id's characters cost it 40
 * instructions a move); the decode asks for an id, which a word at a time
 * here costs less than its test a character. */
__attribute__((always_inline)) static inline size_t mpr_move_form_as(const unsigned char *q, size_t avail, bool ids)
{
    if (avail < MPR_MOVE_HEAD + MPR_MOVE_TAIL || q[0] != 0x83 || q[1] != 0xa2 || q[2] != 'i' || q[3] != 'd' ||
        (q[4] & 0xe0) != 0xa0)
        return 0;
    size_t n = q[4] & 0x1f, size = MPR_MOVE_HEAD + n + MPR_MOVE_TAIL;
    if (size > avail)
        return 0;
    uint64_t high = 0;
    bool id = !ids || n > 0;
    // Eight bytes at a time: the tail follows the id, so no load passes the move's end;
    // the bytes past the id are taken as 'a', an id character, or as 0 for ASCII.
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = mpr_load8(q + MPR_MOVE_HEAD + i);
        if (n - i < 8) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            uint64_t keep = (1ull << (8 * (n - i))) - 1;
#else
            uint64_t keep = ~(UINT64_MAX >> (8 * (n - i)));
#endif
            w = (w & keep) | (ids ? 0x6161616161616161u & ~keep : 0);
        }
        if (ids)
            id &= cq_world_id_word(w);
        else
            high |= w;
    }
    const unsigned char *t = q + MPR_MOVE_HEAD + n;
    uint64_t diff = 0;
    // 15 words and one that overlaps the last, whose bytes are all fixed or payload;
    // unrolled, the tables' words are constants.
#pragma GCC unroll 16
    for (size_t i = 0; i + 8 <= MPR_MOVE_TAIL; i += 8)
        diff |= (mpr_load8(t + i) ^ mpr_load8(mpr_move_tail + i)) & mpr_load8(mpr_move_fixed + i);
    size_t last = MPR_MOVE_TAIL - 8;
    diff |= (mpr_load8(t + last) ^ mpr_load8(mpr_move_tail + last)) & mpr_load8(mpr_move_fixed + last);
    return (high & 0x8080808080808080u) == 0 && id && diff == 0 ? size : 0; // an id is ASCII too
}

/* mpr_move_form_as for a check: an id of ASCII bytes. */
static inline size_t mpr_move_form(const unsigned char *q, size_t avail) { return mpr_move_form_as(q, avail, false); }


#endif
