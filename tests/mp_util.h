/* Shared by the MessagePack suites (check_proto_mp.c, check_proto_mp_hostile.c):
 * golden bodies written byte by byte from the MessagePack spec (each byte
 * group commented; IEEE-754 bits worked out by hand: 1.0 = 0x3ff0...,
 * 1.5 = 0x3ff8..., float32 0.2 = 0x3e4ccccd = 13421773 * 2^-26), a counting
 * allocator hook, and the check's accept/refuse assertions. */
#ifndef TESTS_MP_UTIL_H
#define TESTS_MP_UTIL_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/alloc.h"
#include "cqp/format.h"
#include "cqp/value.h"

/* ---- golden bodies ---------------------------------------------------- */

/* {"a":{"shape":{"type":"sphere","radius":1.0}},
 *  "b":{"shape":{"type":"sphere","radius":1.0},"pose":{"position":[1.5,0.0,0.0]}}}
 * with every number a float64: 120 bytes (a's value 36, b's 79). */
static const unsigned char pair_f64[] = {
    0x82,                                    /* fixmap, 2 members */
    0xa1, 'a',                               /* fixstr "a" */
    0x81,                                    /* fixmap, 1 member (byte 3) */
    0xa5, 's', 'h', 'a', 'p', 'e',           /* "shape" */
    0x82,                                    /* fixmap, 2 members */
    0xa4, 't', 'y', 'p', 'e',                /* "type" */
    0xa6, 's', 'p', 'h', 'e', 'r', 'e',      /* "sphere" */
    0xa6, 'r', 'a', 'd', 'i', 'u', 's',      /* "radius" */
    0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,      /* float64 1.0: exponent 0x3ff, fraction 0 */
    0xa1, 'b',                               /* "b" (byte 39) */
    0x82,                                    /* fixmap, 2 members */
    0xa5, 's', 'h', 'a', 'p', 'e',           /* "shape" */
    0x82,                                    /* fixmap, 2 members */
    0xa4, 't', 'y', 'p', 'e',                /* "type" */
    0xa6, 's', 'p', 'h', 'e', 'r', 'e',      /* "sphere" */
    0xa6, 'r', 'a', 'd', 'i', 'u', 's',      /* "radius" */
    0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,      /* 1.0 */
    0xa4, 'p', 'o', 's', 'e',                /* "pose" */
    0x81,                                    /* fixmap, 1 member */
    0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', /* "position" */
    0x93,                                    /* fixarray, 3 elements (byte 92) */
    0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,      /* 1.5: the fraction's top bit */
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0,            /* 0.0 */
    0xcb, 0, 0, 0, 0, 0, 0, 0, 0,            /* 0.0 */
};

/* The same with every number a float32: 100 bytes (a's value 32, b's 63). */
static const unsigned char pair_f32[] = {
    0x82,                                    /* fixmap, 2 members */
    0xa1, 'a',                               /* "a" */
    0x81,                                    /* fixmap, 1 member */
    0xa5, 's', 'h', 'a', 'p', 'e',           /* "shape" */
    0x82,                                    /* fixmap, 2 members */
    0xa4, 't', 'y', 'p', 'e',                /* "type" */
    0xa6, 's', 'p', 'h', 'e', 'r', 'e',      /* "sphere" */
    0xa6, 'r', 'a', 'd', 'i', 'u', 's',      /* "radius" */
    0xca, 0x3f, 0x80, 0, 0,                  /* float32 1.0: exponent 0x7f */
    0xa1, 'b',                               /* "b" */
    0x82,                                    /* fixmap, 2 members */
    0xa5, 's', 'h', 'a', 'p', 'e',           /* "shape" */
    0x82,                                    /* fixmap, 2 members */
    0xa4, 't', 'y', 'p', 'e',                /* "type" */
    0xa6, 's', 'p', 'h', 'e', 'r', 'e',      /* "sphere" */
    0xa6, 'r', 'a', 'd', 'i', 'u', 's',      /* "radius" */
    0xca, 0x3f, 0x80, 0, 0,                  /* 1.0 */
    0xa4, 'p', 'o', 's', 'e',                /* "pose" */
    0x81,                                    /* fixmap, 1 member */
    0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', /* "position" */
    0x93,                                    /* fixarray, 3 elements */
    0xca, 0x3f, 0xc0, 0, 0,                  /* float32 1.5 */
    0xca, 0, 0, 0, 0,                        /* 0.0 */
    0xca, 0, 0, 0, 0,                        /* 0.0 */
};

/* The same document as JSON, whose view must read the same. */
static const char pair_json[] = "{\"a\":{\"shape\":{\"type\":\"sphere\",\"radius\":1.0}},"
                                "\"b\":{\"shape\":{\"type\":\"sphere\",\"radius\":1.0},"
                                "\"pose\":{\"position\":[1.5,0.0,0.0]}}}";

/* Every header width once: {"int":[127,-32,255,65535,4294967295,
 * 18446744073709551615,-128,-32768,-2147483648,-9223372036854775808],
 * "real":[0.2f,3.141592653589793,null],"text":{"é":true,"f":"€"}}:
 * 102 bytes. */
static const unsigned char kinds_doc[] = {
    0xde, 0x00, 0x03,                        /* map16, 3 members */
    0xd9, 0x03, 'i', 'n', 't',               /* str8 "int" */
    0xdc, 0x00, 0x0a,                        /* array16, 10 elements (byte 8) */
    0x7f,                                    /* positive fixint 127 */
    0xe0,                                    /* negative fixint -32 */
    0xcc, 0xff,                              /* uint8 255 */
    0xcd, 0xff, 0xff,                        /* uint16 65535 */
    0xce, 0xff, 0xff, 0xff, 0xff,            /* uint32 4294967295 */
    0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* uint64 2^64-1 */
    0xd0, 0x80,                              /* int8 -128 */
    0xd1, 0x80, 0x00,                        /* int16 -32768 */
    0xd2, 0x80, 0x00, 0x00, 0x00,            /* int32 -2^31 */
    0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0,         /* int64 -2^63 */
    0xda, 0x00, 0x04, 'r', 'e', 'a', 'l',    /* str16 "real" (byte 51) */
    0xdd, 0x00, 0x00, 0x00, 0x03,            /* array32, 3 elements */
    0xca, 0x3e, 0x4c, 0xcc, 0xcd,            /* float32 0.2f */
    0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18, /* float64 pi */
    0xc0,                                    /* nil */
    0xdb, 0x00, 0x00, 0x00, 0x04, 't', 'e', 'x', 't', /* str32 "text" (byte 78) */
    0xdf, 0x00, 0x00, 0x00, 0x02,            /* map32, 2 members */
    0xa2, 0xc3, 0xa9,                        /* "é" (U+00E9) */
    0xc3,                                    /* true */
    0xa1, 'f',                               /* "f" */
    0xa3, 0xe2, 0x82, 0xac,                  /* "€" (U+20AC) */
};

/* A tick's batch: {"upsert":[{"id":"s1","shape":{"type":"sphere","radius":0.5}}],
 *  "move":[{"id":"b2","pose":{"position":[1.0,2.0,-3.0],"rotation":[0,0,1.0,0]},
 *           "velocity":[0.5,0,0]},
 *          {"id":"b3","pose":{"position":[4,5,-0.25f]}}],
 *  "remove":["c3"]}: the first move in the tick's member order (id, pose,
 *  velocity), the second with fixints, a float32 and no velocity. 191 bytes. */
static const unsigned char batch_tick[] = {
    0x83,                                    /* fixmap, 3 members */
    0xa6, 'u', 'p', 's', 'e', 'r', 't',      /* "upsert" */
    0x91,                                    /* fixarray, 1 element */
    0x82,                                    /* fixmap, 2 members */
    0xa2, 'i', 'd', 0xa2, 's', '1',          /* "id": "s1" */
    0xa5, 's', 'h', 'a', 'p', 'e',           /* "shape" */
    0x82,                                    /* fixmap, 2 members */
    0xa4, 't', 'y', 'p', 'e',                /* "type" */
    0xa6, 's', 'p', 'h', 'e', 'r', 'e',      /* "sphere" */
    0xa6, 'r', 'a', 'd', 'i', 'u', 's',      /* "radius" */
    0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0,      /* float64 0.5: exponent 0x3fe */
    0xa4, 'm', 'o', 'v', 'e',                /* "move" (byte 51) */
    0x92,                                    /* fixarray, 2 elements */
    0x83,                                    /* fixmap, 3 members */
    0xa2, 'i', 'd', 0xa2, 'b', '2',          /* "id": "b2" */
    0xa4, 'p', 'o', 's', 'e',                /* "pose" */
    0x82,                                    /* fixmap, 2 members */
    0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', /* "position" */
    0x93,                                    /* fixarray, 3 elements */
    0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,      /* 1.0 */
    0xcb, 0x40, 0x00, 0, 0, 0, 0, 0, 0,      /* 2.0: exponent 0x400 */
    0xcb, 0xc0, 0x08, 0, 0, 0, 0, 0, 0,      /* -3.0: sign, exponent 0x400, fraction 0.5 */
    0xa8, 'r', 'o', 't', 'a', 't', 'i', 'o', 'n', /* "rotation" */
    0x94,                                    /* fixarray, 4 elements: x, y, z, w */
    0x00, 0x00,                              /* x = y = 0 (fixints) */
    0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,      /* z = 1.0: half a turn about z */
    0x00,                                    /* w = 0 */
    0xa8, 'v', 'e', 'l', 'o', 'c', 'i', 't', 'y', /* "velocity" */
    0x93,                                    /* fixarray, 3 elements */
    0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0,      /* 0.5 */
    0x00, 0x00,                              /* 0, 0 */
    0x82,                                    /* fixmap, 2 members */
    0xa2, 'i', 'd', 0xa2, 'b', '3',          /* "id": "b3" */
    0xa4, 'p', 'o', 's', 'e',                /* "pose" */
    0x81,                                    /* fixmap, 1 member */
    0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', /* "position" */
    0x93,                                    /* fixarray, 3 elements */
    0x04, 0x05,                              /* 4, 5 */
    0xca, 0xbe, 0x80, 0, 0,                  /* float32 -0.25: sign, exponent 0x7d */
    0xa6, 'r', 'e', 'm', 'o', 'v', 'e',      /* "remove" */
    0x91,                                    /* fixarray, 1 element */
    0xa2, 'c', '3',                          /* "c3" */
};

#define C_(a) ((const char *)(a))

/* ---- helpers ---------------------------------------------------------- */

/* The allocator hook counting what proto asks for. */
static long allocs, frees; /* per suite: each file has its own */
static inline void *count_malloc(size_t n)
{
    allocs++;
    return malloc(n);
}
static inline void count_free(void *p)
{
    frees++;
    free(p);
}
static inline void count_start(void)
{
    allocs = frees = 0;
    cqp_set_alloc_funcs(count_malloc, count_free);
}
static inline void count_stop(void) { cqp_set_alloc_funcs(NULL, NULL); }

static inline void accepted(const void *b, size_t n)
{
    cqp_problem p = {0};
    int rc = cqp_mp_check(b, n, CQP_MP_MAX_DEPTH, &p);
    ck_assert_msg(rc == 0, "refused: %s", p.detail);
    ck_assert_uint_eq(cqp_mp_span(b), n);
}

/* Refused as malformed MessagePack, with `want` in the detail. */
static inline void refused_with(const void *b, size_t n, int max_depth, const char *want)
{
    cqp_problem p = {0};
    ck_assert_int_eq(cqp_mp_check(b, n, max_depth, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.pointer, "");
    ck_assert_msg(strncmp(p.detail, "MessagePack: ", 13) == 0, "detail: %s", p.detail);
    ck_assert_msg(strstr(p.detail, want) != NULL, "detail \"%s\" lacks \"%s\"", p.detail, want);
}

static inline void refused(const void *b, size_t n, const char *want) { refused_with(b, n, CQP_MP_MAX_DEPTH, want); }

static inline void refused_exactly(const void *b, size_t n, const char *detail)
{
    cqp_problem p = {0};
    ck_assert_int_eq(cqp_mp_check(b, n, CQP_MP_MAX_DEPTH, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.detail, detail);
}

#endif
