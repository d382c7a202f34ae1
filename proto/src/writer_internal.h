/* Raw MessagePack writes into a cqp_writer for proto's own encoders
 * (encode_mp.c): a result whose shape is known is written with one room
 * check and a cursor instead of a writer call per key and value, the
 * bytes being exactly those the calls would write. */
#ifndef CQP_WRITER_INTERNAL_H
#define CQP_WRITER_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "buf_internal.h"

/* Counts `elements` elements (a map's members) of the open container, as
 * that many key calls would (widening its header when a count needs it),
 * then makes room for `bytes` more bytes: where to write them, or NULL
 * when the buffer is (now) oom. MessagePack only, with no key pending. */
char *cqp__mp_raw_begin(cqp_writer *w, uint32_t elements, size_t bytes);
/* Ends the raw write begun by cqp__mp_raw_begin: its bytes end at end. */
void cqp__mp_raw_end(cqp_writer *w, char *end);

/* ---- cursor writes (the room was made by cqp__mp_raw_begin) ---- */

/* A str header for n bytes and the bytes: fixstr, str8, str16 or str32 as
 * the writer's mp_str chooses (at most 5 + n bytes). */
static inline char *cqpw_put_str(char *p, const char *s, size_t n)
{
    if (n < 32) {
        *p++ = (char)(0xa0 | n);
    } else if (n <= UINT8_MAX) {
        *p++ = (char)0xd9;
        *p++ = (char)n;
    } else if (n <= UINT16_MAX) {
        *p++ = (char)0xda;
        *p++ = (char)(n >> 8);
        *p++ = (char)n;
    } else {
        uint32_t be = __builtin_bswap32((uint32_t)n);
        *p++ = (char)0xdb;
        memcpy(p, &be, 4);
        p += 4;
    }
    memcpy(p, s, n);
    return p + n;
}

/* A key known at compile time (fewer than 32 bytes: a fixstr): the
 * copy's length is a constant, so it compiles to a few stores. */
#define CQPW_KEY(p, k) ((p) = cqpw_put_fixstr((p), (k), sizeof(k) - 1))
static inline char *cqpw_put_fixstr(char *p, const char *s, size_t n)
{
    *p = (char)(0xa0 | n);
    memcpy(p + 1, s, n);
    return p + 1 + n;
}

/* A cqp_num as the writer writes it: nil when not finite, -0 as +0
 * unless keep_zero_sign, else float64 (0xcb, the bits big-endian, one
 * byte-swapped store). At most 9 bytes. */
static inline char *cqpw_put_num(char *p, double v, bool keep_zero_sign)
{
    if (!__builtin_isfinite(v)) {
        *p = (char)0xc0;
        return p + 1;
    }
    if (v == 0 && !keep_zero_sign)
        v = 0.0;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits = __builtin_bswap64(bits);
    *p = (char)0xcb;
    memcpy(p + 1, &bits, 8);
    return p + 9;
}

/* A cqp_vec3: a fixarray of three numbers, at most 28 bytes. */
static inline char *cqpw_put_vec3(char *p, cq_vec3 v, bool keep_zero_sign)
{
    *p++ = (char)0x93;
    p = cqpw_put_num(p, v.x, keep_zero_sign);
    p = cqpw_put_num(p, v.y, keep_zero_sign);
    return cqpw_put_num(p, v.z, keep_zero_sign);
}

#endif
