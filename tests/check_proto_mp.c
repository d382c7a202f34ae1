/* MessagePack in proto: cqp_mp_check, the view's MessagePack backing,
 * cqp_body_open, the media types and the allocator hook. Oracles: golden
 * bodies written byte by byte from the MessagePack spec (each byte group
 * commented; IEEE-754 bits worked out by hand: 1.0 = 0x3ff0..., 1.5 =
 * 0x3ff8..., float32 0.2 = 0x3e4ccccd = 13421773 * 2^-26), read back
 * through the view against the values written; byte offsets in details
 * counted by hand from those layouts; a counting allocator (no allocation
 * for the hostile headers); and a recursive validator written here from the
 * spec (decoding strings to code points, comparing every map's keys
 * pairwise), which must agree with the check on every one-byte edit of the
 * golden bodies. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/alloc.h"
#include "cqp/format.h"
#include "cqp/value.h"

Suite *proto_mp_suite(void);

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

#define C_(a) ((const char *)(a))

/* ---- helpers ---------------------------------------------------------- */

/* The allocator hook counting what proto asks for. */
static long allocs, frees;
static void *count_malloc(size_t n)
{
    allocs++;
    return malloc(n);
}
static void count_free(void *p)
{
    frees++;
    free(p);
}
static void count_start(void)
{
    allocs = frees = 0;
    cqp_set_alloc_funcs(count_malloc, count_free);
}
static void count_stop(void) { cqp_set_alloc_funcs(NULL, NULL); }

static void accepted(const void *b, size_t n)
{
    cqp_problem p = {0};
    int rc = cqp_mp_check(b, n, CQP_MP_MAX_DEPTH, &p);
    ck_assert_msg(rc == 0, "refused: %s", p.detail);
    ck_assert_uint_eq(cqp_mp_span(b), n);
}

/* Refused as malformed MessagePack, with `want` in the detail. */
static void refused_with(const void *b, size_t n, int max_depth, const char *want)
{
    cqp_problem p = {0};
    ck_assert_int_eq(cqp_mp_check(b, n, max_depth, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.pointer, "");
    ck_assert_msg(strncmp(p.detail, "MessagePack: ", 13) == 0, "detail: %s", p.detail);
    ck_assert_msg(strstr(p.detail, want) != NULL, "detail \"%s\" lacks \"%s\"", p.detail, want);
}

static void refused(const void *b, size_t n, const char *want) { refused_with(b, n, CQP_MP_MAX_DEPTH, want); }

static void refused_exactly(const void *b, size_t n, const char *detail)
{
    cqp_problem p = {0};
    ck_assert_int_eq(cqp_mp_check(b, n, CQP_MP_MAX_DEPTH, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.detail, detail);
}

static void assert_string(cqp_value v, const char *want)
{
    size_t n = 0;
    ck_assert_int_eq(cqpv_type(v), CQP_V_STRING);
    const char *s = cqpv_string(v, &n);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(s, want, n) == 0);
}

static void assert_real(cqp_value v, double want)
{
    ck_assert_int_eq(cqpv_type(v), CQP_V_REAL);
    ck_assert(cqpv_number(v) == want);
}

static void assert_sphere(cqp_value shape)
{
    ck_assert_int_eq(cqpv_type(shape), CQP_V_OBJECT);
    ck_assert_uint_eq(cqpv_size(shape), 2);
    assert_string(cqpv_get(shape, "type"), "sphere");
    assert_real(cqpv_get(shape, "radius"), 1.0);
}

/* The pair document read through any view of it. */
static void check_pair_view(cqp_value root)
{
    ck_assert_int_eq(cqpv_type(root), CQP_V_OBJECT);
    ck_assert_uint_eq(cqpv_size(root), 2);
    cqp_iter it;
    const char *key;
    size_t key_len;
    cqp_value a, b, pos, e;
    cqpv_iter_init(&it, root);
    ck_assert(cqpv_next_member(&it, &key, &key_len, &a));
    ck_assert(cqpv_key_is(key, key_len, "a"));
    ck_assert(cqpv_next_member(&it, &key, &key_len, &b));
    ck_assert(cqpv_key_is(key, key_len, "b"));
    ck_assert(!cqpv_next_member(&it, &key, &key_len, &e));
    ck_assert_uint_eq(cqpv_size(a), 1);
    assert_sphere(cqpv_get(a, "shape"));
    assert_sphere(cqpv_get(b, "shape"));
    pos = cqpv_get(cqpv_get(b, "pose"), "position");
    ck_assert_int_eq(cqpv_type(pos), CQP_V_ARRAY);
    ck_assert_uint_eq(cqpv_size(pos), 3);
    static const double want[3] = {1.5, 0.0, 0.0};
    int k = 0;
    for (cqpv_iter_init(&it, pos); cqpv_next(&it, &e); k++)
        assert_real(e, want[k]);
    ck_assert_int_eq(k, 3);
    /* Missing members, near misses and lookups in what is no object. */
    ck_assert(!cqpv_present(cqpv_get(root, "c")));
    ck_assert(!cqpv_present(cqpv_get(a, "pose")));
    ck_assert(!cqpv_present(cqpv_get(cqpv_get(a, "shape"), "typ")));
    ck_assert(!cqpv_present(cqpv_get(cqpv_get(a, "shape"), "types")));
    ck_assert(!cqpv_present(cqpv_get(pos, "0")));
    ck_assert(!cqpv_present(cqpv_get(cqpv_get(cqpv_get(a, "shape"), "type"), "x")));
}

/* ---- golden bodies through the view ----------------------------------- */

START_TEST(test_golden_pair_float64)
{
    ck_assert_uint_eq(sizeof pair_f64, 120);
    accepted(pair_f64, sizeof pair_f64);
    cqp_value root = cqp_value_mp(C_(pair_f64));
    check_pair_view(root);
    /* Spans counted by hand: a's value 36 bytes, b's 79, position's 28. */
    ck_assert_uint_eq(cqp_mp_span(C_(pair_f64) + 3), 36);
    ck_assert_uint_eq(cqp_mp_span(C_(pair_f64) + 41), 79);
    ck_assert_uint_eq(cqp_mp_span(C_(pair_f64) + 92), 28);
    ck_assert_ptr_eq(cqpv_get(root, "a").ref, pair_f64 + 3);
    ck_assert_ptr_eq(cqpv_get(root, "b").ref, pair_f64 + 41);
}
END_TEST

START_TEST(test_golden_pair_float32)
{
    ck_assert_uint_eq(sizeof pair_f32, 100);
    accepted(pair_f32, sizeof pair_f32);
    check_pair_view(cqp_value_mp(C_(pair_f32)));
    ck_assert_uint_eq(cqp_mp_span(C_(pair_f32) + 3), 32);
    ck_assert_uint_eq(cqp_mp_span(C_(pair_f32) + 37), 63);
}
END_TEST

START_TEST(test_golden_kinds)
{
    ck_assert_uint_eq(sizeof kinds_doc, 102);
    accepted(kinds_doc, sizeof kinds_doc);
    cqp_value root = cqp_value_mp(C_(kinds_doc));
    ck_assert_uint_eq(cqpv_size(root), 3);
    static const int64_t ints[10] = {127, -32, 255, 65535, 4294967295, INT64_MAX, -128, -32768, -2147483648LL,
                                     INT64_MIN};
    cqp_iter it;
    cqp_value e;
    int k = 0;
    for (cqpv_iter_init(&it, cqpv_get(root, "int")); cqpv_next(&it, &e); k++) {
        ck_assert_int_eq(cqpv_type(e), CQP_V_INT);
        ck_assert_int_eq(cqpv_int(e), ints[k]);
    }
    ck_assert_int_eq(k, 10);
    cqp_value real = cqpv_get(root, "real");
    ck_assert_ptr_eq(real.ref, kinds_doc + 58);
    cqpv_iter_init(&it, real);
    ck_assert(cqpv_next(&it, &e));
    assert_real(e, ldexp(13421773, -26));
    ck_assert(cqpv_next(&it, &e));
    assert_real(e, 3.141592653589793);
    ck_assert(cqpv_next(&it, &e));
    ck_assert_int_eq(cqpv_type(e), CQP_V_NULL);
    ck_assert(!cqpv_next(&it, &e));
    cqp_value text = cqpv_get(root, "text");
    ck_assert_int_eq(cqpv_type(cqpv_get(text, "\xc3\xa9")), CQP_V_BOOL);
    ck_assert(cqpv_bool(cqpv_get(text, "\xc3\xa9")));
    assert_string(cqpv_get(text, "f"), "\xe2\x82\xac");
    ck_assert_uint_eq(cqp_mp_span(text.ref), 15);
}
END_TEST

START_TEST(test_body_open)
{
    cqp_body b;
    cqp_problem p = {0};
    ck_assert_int_eq(cqp_body_open(&b, CQP_MSGPACK, C_(pair_f64), sizeof pair_f64, &p), 0);
    ck_assert_ptr_null(b.tree);
    ck_assert_int_eq(b.root.format, CQP_MSGPACK);
    ck_assert_ptr_eq(b.root.ref, pair_f64);
    check_pair_view(b.root);
    cqp_body_close(&b);
    ck_assert(!cqpv_present(b.root));

    ck_assert_int_eq(cqp_body_open(&b, CQP_JSON, pair_json, strlen(pair_json), &p), 0);
    ck_assert_ptr_nonnull(b.tree);
    ck_assert_int_eq(b.root.format, CQP_JSON);
    check_pair_view(b.root);
    cqp_body_close(&b);
    ck_assert_ptr_null(b.tree);
    ck_assert(!cqpv_present(b.root));
    cqp_body_close(&b); /* closing twice is harmless */

    /* An empty body opens absent in both formats. */
    for (int f = CQP_JSON; f <= CQP_MSGPACK; f++) {
        ck_assert_int_eq(cqp_body_open(&b, (cqp_format)f, "", 0, &p), 0);
        ck_assert(!cqpv_present(b.root));
        ck_assert_ptr_null(b.tree);
        cqp_body_close(&b);
    }
    /* A malformed one is refused with nothing held. */
    ck_assert_int_eq(cqp_body_open(&b, CQP_MSGPACK, C_(pair_f64), sizeof pair_f64 - 1, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert(!cqpv_present(b.root));
    ck_assert_ptr_null(b.tree);
    ck_assert_int_eq(cqp_body_open(&b, CQP_JSON, "{\"a\":", 5, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_JSON);
    ck_assert(!cqpv_present(b.root));
    ck_assert_ptr_null(b.tree);
}
END_TEST

/* ---- the view, value by value ----------------------------------------- */

typedef struct int_case {
    unsigned char b[9];
    size_t n;
    int64_t i;
    double num;
} int_case;

/* Every integer format at its boundaries; num is the double the value
 * rounds to (2^53 + 1 rounds to even, 2^53). */
static const int_case int_cases[] = {
    {{0x00}, 1, 0, 0},                                                   /* positive fixint */
    {{0x7f}, 1, 127, 127},
    {{0xff}, 1, -1, -1},                                                 /* negative fixint */
    {{0xe0}, 1, -32, -32},
    {{0xcc, 0x80}, 2, 128, 128},                                         /* uint8 */
    {{0xcc, 0xff}, 2, 255, 255},
    {{0xcd, 0x01, 0x00}, 3, 256, 256},                                   /* uint16 */
    {{0xcd, 0xff, 0xff}, 3, 65535, 65535},
    {{0xce, 0x00, 0x01, 0x00, 0x00}, 5, 65536, 65536},                   /* uint32 */
    {{0xce, 0xff, 0xff, 0xff, 0xff}, 5, 4294967295, 4294967295.0},
    {{0xcf, 0, 0, 0, 0x01, 0, 0, 0, 0}, 9, 4294967296, 4294967296.0},    /* uint64 */
    {{0xcf, 0, 0x20, 0, 0, 0, 0, 0, 0x01}, 9, 9007199254740993, 9007199254740992.0},
    {{0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, INT64_MAX, 9223372036854775808.0},
    {{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}, 9, INT64_MAX, 9223372036854775808.0},           /* 2^63: clamped */
    {{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, INT64_MAX, 18446744073709551616.0},
    {{0xd0, 0x7f}, 2, 127, 127},                                         /* int8 */
    {{0xd0, 0x80}, 2, -128, -128},
    {{0xd0, 0x00}, 2, 0, 0},
    {{0xd1, 0x7f, 0xff}, 3, 32767, 32767},                               /* int16 */
    {{0xd1, 0x80, 0x00}, 3, -32768, -32768},
    {{0xd2, 0x7f, 0xff, 0xff, 0xff}, 5, 2147483647, 2147483647},         /* int32 */
    {{0xd2, 0x80, 0, 0, 0}, 5, -2147483648LL, -2147483648.0},
    {{0xd3, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, INT64_MAX, 9223372036854775808.0}, /* int64 */
    {{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, 9, INT64_MIN, -9223372036854775808.0},
    {{0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, -1, -1},
};

START_TEST(test_int_widths)
{
    const int_case *c = &int_cases[_i];
    accepted(c->b, c->n);
    cqp_value v = cqp_value_mp(C_(c->b));
    ck_assert_int_eq(cqpv_type(v), CQP_V_INT);
    ck_assert(cqpv_is_number(v));
    ck_assert_int_eq(cqpv_int(v), c->i);
    ck_assert(cqpv_number(v) == c->num);
    ck_assert_uint_eq(cqpv_size(v), 0);
    ck_assert(!cqpv_bool(v));
}
END_TEST

START_TEST(test_floats)
{
    /* float32 0.2f: exponent 0x7c (2^-3), fraction 0x4ccccd, widened exactly. */
    static const unsigned char f02[] = {0xca, 0x3e, 0x4c, 0xcc, 0xcd};
    /* The least float32 subnormal, 2^-149; -0.0; float64's largest finite. */
    static const unsigned char sub[] = {0xca, 0, 0, 0, 0x01};
    static const unsigned char neg0[] = {0xca, 0x80, 0, 0, 0};
    static const unsigned char big[] = {0xcb, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    /* NaN and the infinities pass the check: the decoders refuse them. */
    static const unsigned char nan32[] = {0xca, 0x7f, 0xc0, 0, 0};
    static const unsigned char inf32[] = {0xca, 0x7f, 0x80, 0, 0};
    static const unsigned char ninf64[] = {0xcb, 0xff, 0xf0, 0, 0, 0, 0, 0, 0};
    static const unsigned char nan64[] = {0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0};
    accepted(f02, 5);
    assert_real(cqp_value_mp(C_(f02)), ldexp(13421773, -26));
    ck_assert(cqpv_number(cqp_value_mp(C_(f02))) == (double)0.2f);
    accepted(sub, 5);
    assert_real(cqp_value_mp(C_(sub)), ldexp(1, -149));
    accepted(neg0, 5);
    ck_assert(signbit(cqpv_number(cqp_value_mp(C_(neg0)))) && cqpv_number(cqp_value_mp(C_(neg0))) == 0);
    accepted(big, 9);
    assert_real(cqp_value_mp(C_(big)), ldexp(0x1fffffffffffff, 971));
    accepted(nan32, 5);
    ck_assert(isnan(cqpv_number(cqp_value_mp(C_(nan32)))));
    accepted(inf32, 5);
    ck_assert(isinf(cqpv_number(cqp_value_mp(C_(inf32)))) && cqpv_number(cqp_value_mp(C_(inf32))) > 0);
    accepted(ninf64, 9);
    ck_assert(isinf(cqpv_number(cqp_value_mp(C_(ninf64)))) && cqpv_number(cqp_value_mp(C_(ninf64))) < 0);
    accepted(nan64, 9);
    ck_assert(isnan(cqpv_number(cqp_value_mp(C_(nan64)))));
    ck_assert_int_eq(cqpv_int(cqp_value_mp(C_(f02))), 0); /* no INT */
}
END_TEST

START_TEST(test_nil_bool)
{
    static const unsigned char nil[] = {0xc0}, no[] = {0xc2}, yes[] = {0xc3};
    accepted(nil, 1);
    accepted(no, 1);
    accepted(yes, 1);
    ck_assert_int_eq(cqpv_type(cqp_value_mp(C_(nil))), CQP_V_NULL);
    ck_assert_int_eq(cqpv_type(cqp_value_mp(C_(no))), CQP_V_BOOL);
    ck_assert_int_eq(cqpv_type(cqp_value_mp(C_(yes))), CQP_V_BOOL);
    ck_assert(!cqpv_bool(cqp_value_mp(C_(no))));
    ck_assert(cqpv_bool(cqp_value_mp(C_(yes))));
    ck_assert(!cqpv_bool(cqp_value_mp(C_(nil))));
    ck_assert(!cqpv_is_number(cqp_value_mp(C_(yes))));
    ck_assert_int_eq(cqpv_type(cqp_value_mp(NULL)), CQP_V_ABSENT);
}
END_TEST

START_TEST(test_string_headers)
{
    /* "abc" as fixstr, str8, str16 and str32: spans 4, 5, 6, 8. */
    static const unsigned char fix[] = {0xa3, 'a', 'b', 'c'};
    static const unsigned char s8[] = {0xd9, 0x03, 'a', 'b', 'c'};
    static const unsigned char s16[] = {0xda, 0x00, 0x03, 'a', 'b', 'c'};
    static const unsigned char s32[] = {0xdb, 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c'};
    static const unsigned char *const all[] = {fix, s8, s16, s32};
    static const size_t spans[] = {4, 5, 6, 8};
    for (int k = 0; k < 4; k++) {
        accepted(all[k], spans[k]);
        size_t n;
        ck_assert_ptr_eq(cqpv_string(cqp_value_mp(C_(all[k])), &n), all[k] + spans[k] - 3);
        assert_string(cqp_value_mp(C_(all[k])), "abc");
    }
    /* A NUL inside, the empty string, 32 bytes (one past fixstr) as str8. */
    static const unsigned char nul[] = {0xa3, 'a', 0, 'b'}, empty[] = {0xa0};
    size_t n;
    accepted(nul, 4);
    ck_assert(memcmp(cqpv_string(cqp_value_mp(C_(nul)), &n), "a\0b", 3) == 0 && n == 3);
    accepted(empty, 1);
    cqpv_string(cqp_value_mp(C_(empty)), &n);
    ck_assert_uint_eq(n, 0);
    unsigned char s32b[34] = {0xd9, 32};
    memset(s32b + 2, 'x', 32);
    accepted(s32b, 34);
    ck_assert_ptr_null(cqpv_string(cqp_value_mp(C_(s8 + 1)), &n)); /* 0x03, an int */
    ck_assert_uint_eq(n, 0);
    /* Keys of every header width are found by cqpv_get. */
    static const unsigned char keys[] = {
        0x84,                                     /* fixmap, 4 members */
        0xa1, 'a', 0x01,                          /* "a": 1 */
        0xd9, 0x01, 'b', 0x02,                    /* str8 "b": 2 */
        0xda, 0x00, 0x01, 'c', 0x03,              /* str16 "c": 3 */
        0xdb, 0x00, 0x00, 0x00, 0x01, 'd', 0x04,  /* str32 "d": 4 */
    };
    accepted(keys, sizeof keys);
    cqp_value m = cqp_value_mp(C_(keys));
    ck_assert_int_eq(cqpv_int(cqpv_get(m, "a")), 1);
    ck_assert_int_eq(cqpv_int(cqpv_get(m, "b")), 2);
    ck_assert_int_eq(cqpv_int(cqpv_get(m, "c")), 3);
    ck_assert_int_eq(cqpv_int(cqpv_get(m, "d")), 4);
    ck_assert(!cqpv_present(cqpv_get(m, "e")));
}
END_TEST

START_TEST(test_spans)
{
    static const struct {
        unsigned char b[12];
        size_t n;
        cqp_vtype t;
        size_t size;
    } kinds[] = {
        {{0x05}, 1, CQP_V_INT, 0},
        {{0xc0}, 1, CQP_V_NULL, 0},
        {{0xca, 0, 0, 0, 0}, 5, CQP_V_REAL, 0},
        {{0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, 9, CQP_V_REAL, 0},
        {{0x90}, 1, CQP_V_ARRAY, 0},                                       /* [] */
        {{0x80}, 1, CQP_V_OBJECT, 0},                                      /* {} */
        {{0x92, 0x91, 0x01, 0xa1, 'x'}, 5, CQP_V_ARRAY, 2},                /* [[1],"x"] */
        {{0xdc, 0x00, 0x02, 0x01, 0x02}, 5, CQP_V_ARRAY, 2},               /* array16 [1,2] */
        {{0xdd, 0x00, 0x00, 0x00, 0x01, 0xc0}, 6, CQP_V_ARRAY, 1},         /* array32 [nil] */
        {{0xde, 0x00, 0x01, 0xa1, 'a', 0x01}, 6, CQP_V_OBJECT, 1},         /* map16 {"a":1} */
        {{0xdf, 0x00, 0x00, 0x00, 0x01, 0xa1, 'a', 0x90}, 8, CQP_V_OBJECT, 1}, /* map32 {"a":[]} */
        {{0x81, 0xa1, 'a', 0x81, 0xa1, 'b', 0x90}, 7, CQP_V_OBJECT, 1},    /* {"a":{"b":[]}} */
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        accepted(kinds[k].b, kinds[k].n);
        cqp_value v = cqp_value_mp(C_(kinds[k].b));
        ck_assert_int_eq(cqpv_type(v), kinds[k].t);
        ck_assert_uint_eq(cqpv_size(v), kinds[k].size);
        /* Each value followed by more: the span is still the value's own. */
        unsigned char two[16];
        memcpy(two, kinds[k].b, kinds[k].n);
        two[kinds[k].n] = 0xc3;
        ck_assert_uint_eq(cqp_mp_span(C_(two)), kinds[k].n);
    }
    /* Elements inside: [[1],"x"]'s second element is at byte 3, 2 bytes. */
    cqp_iter it;
    cqp_value e;
    cqpv_iter_init(&it, cqp_value_mp(C_(kinds[6].b)));
    ck_assert(cqpv_next(&it, &e) && cqp_mp_span(e.ref) == 2);
    ck_assert(cqpv_next(&it, &e) && e.ref == kinds[6].b + 3 && cqp_mp_span(e.ref) == 2);
    ck_assert(!cqpv_next(&it, &e));
}
END_TEST

START_TEST(test_iteration)
{
    /* {"x":1,"y":[true,nil],"z":{}} */
    static const unsigned char doc[] = {0x83, 0xa1, 'x', 0x01, 0xa1, 'y', 0x92, 0xc3, 0xc0, 0xa1, 'z', 0x80};
    accepted(doc, sizeof doc);
    cqp_value root = cqp_value_mp(C_(doc));
    static const char *const names[] = {"x", "y", "z"};
    static const size_t at[] = {3, 6, 11};
    cqp_iter it;
    const char *key;
    size_t key_len;
    cqp_value v;
    int k = 0;
    for (cqpv_iter_init(&it, root); cqpv_next_member(&it, &key, &key_len, &v); k++) {
        ck_assert(cqpv_key_is(key, key_len, names[k]));
        ck_assert_ptr_eq(key, doc + at[k] - 1);
        ck_assert_ptr_eq(v.ref, doc + at[k]);
    }
    ck_assert_int_eq(k, 3);
    /* Empty containers and scalars iterate nothing. */
    cqpv_iter_init(&it, cqpv_get(root, "z"));
    ck_assert(!cqpv_next_member(&it, &key, &key_len, &v));
    cqpv_iter_init(&it, cqpv_get(root, "x"));
    ck_assert(!cqpv_next(&it, &v));
    cqpv_iter_init(&it, cqpv_get(root, "nope"));
    ck_assert(!cqpv_next(&it, &v));
    ck_assert_uint_eq(cqpv_size(cqpv_get(root, "nope")), 0);
    ck_assert(!cqpv_present(cqpv_get(cqpv_get(root, "y"), "x")));
}
END_TEST

/* ---- hostile bodies --------------------------------------------------- */

/* Every proper prefix of a valid body is refused as truncated. */
static void prefixes_refused(const unsigned char *b, size_t n)
{
    refused_exactly(b, 0, "MessagePack: the body is empty");
    for (size_t k = 1; k < n; k++) {
        cqp_problem p = {0};
        ck_assert_msg(cqp_mp_check(C_(b), k, CQP_MP_MAX_DEPTH, &p) == -1, "prefix %zu accepted", k);
        ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
        ck_assert_msg(strstr(p.detail, "truncated at byte ") != NULL, "prefix %zu: %s", k, p.detail);
    }
}

START_TEST(test_truncation)
{
    prefixes_refused(pair_f64, sizeof pair_f64);
    prefixes_refused(pair_f32, sizeof pair_f32);
    prefixes_refused(kinds_doc, sizeof kinds_doc);
    /* Details counted by hand: position's float64s lead at bytes 93, 102
     * and 111, so 119 bytes leave the last 7 of its 8, and 110 leave the
     * second 7, with the third still due. */
    refused_exactly(pair_f64, 119, "MessagePack: truncated at byte 112: a float64 needs 8 more bytes, 7 are left");
    refused_exactly(pair_f64, 110,
                    "MessagePack: truncated at byte 103: a float64 needs 8 more bytes and at least 1 more for the "
                    "value due after it, 7 are left");
    refused_exactly(kinds_doc, 80, "MessagePack: truncated at byte 79: a str32 header needs 4 more bytes, 1 is left");
}
END_TEST

START_TEST(test_trailing)
{
    unsigned char b[sizeof pair_f64 + 1];
    memcpy(b, pair_f64, sizeof pair_f64);
    b[sizeof pair_f64] = 0xc0;
    refused_exactly(b, sizeof b, "MessagePack: trailing bytes: the value ends at byte 120, the body has 121");
    static const unsigned char two[] = {0x01, 0x01}, after_map[] = {0x80, 0x90};
    refused(two, 2, "trailing bytes: the value ends at byte 1, the body has 2");
    refused(after_map, 2, "the value ends at byte 1");
}
END_TEST

START_TEST(test_map_keys)
{
    static const struct {
        unsigned char b[12];
        size_t n;
        const char *want;
    } bad[] = {
        {{0x81, 0x01, 0x02}, 3, "the map key at byte 1 is an integer, not a string"},
        {{0x81, 0xd0, 0xff, 0x02}, 4, "the map key at byte 1 is an integer"},
        {{0x81, 0xc0, 0x02}, 3, "the map key at byte 1 is nil"},
        {{0x81, 0xc3, 0x02}, 3, "the map key at byte 1 is a boolean"},
        {{0x81, 0x90, 0x02}, 3, "the map key at byte 1 is an array"},
        {{0x81, 0x80, 0x02}, 3, "the map key at byte 1 is a map"},
        {{0x81, 0xca, 0, 0, 0, 0, 0x02}, 7, "the map key at byte 1 is a float32"},
        {{0x81, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x02}, 11, "the map key at byte 1 is a float64"},
        {{0x81, 0xc4, 0x01, 'a', 0x02}, 5, "the map key at byte 1 is a bin, not a string"},
        {{0x81, 0xc1, 0x02}, 3, "the reserved byte 0xc1 at byte 1"},
        {{0x81, 0xd4, 0x01, 0x00, 0x02}, 5, "an ext value (0xd4) at byte 1"},
        /* The second member's key: byte 4. */
        {{0x82, 0xa1, 'a', 0x01, 0x02, 0x02}, 6, "the map key at byte 4 is an integer"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        refused(bad[k].b, bad[k].n, bad[k].want);
}
END_TEST

START_TEST(test_ext_bin_reserved)
{
    static const struct {
        unsigned char b[10];
        size_t n;
        const char *want;
    } bad[] = {
        {{0xc7, 0x01, 0x05, 0x00}, 4, "an ext value (0xc7) at byte 0"},
        {{0xc8, 0x00, 0x01, 0x05, 0x00}, 5, "an ext value (0xc8) at byte 0"},
        {{0xc9, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00}, 7, "an ext value (0xc9) at byte 0"},
        {{0xd4, 0x05, 0x00}, 3, "an ext value (0xd4) at byte 0"},
        {{0xd5, 0x05, 0, 0}, 4, "an ext value (0xd5) at byte 0"},
        {{0xd6, 0x05, 0, 0, 0, 0}, 6, "an ext value (0xd6) at byte 0"},
        {{0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, 10, "an ext value (0xd7) at byte 0"}, /* a timestamp */
        {{0xd8, 0x05}, 2, "an ext value (0xd8) at byte 0"},
        {{0xc4, 0x01, 'a'}, 3, "a bin value (0xc4) at byte 0 where a value is expected"},
        {{0xc5, 0x00, 0x01, 'a'}, 4, "a bin value (0xc5) at byte 0"},
        {{0xc6, 0x00, 0x00, 0x00, 0x01, 'a'}, 6, "a bin value (0xc6) at byte 0"},
        {{0xc1}, 1, "the reserved byte 0xc1 at byte 0"},
        {{0x92, 0x01, 0xd4, 0x05, 0x00}, 5, "an ext value (0xd4) at byte 2"},
        {{0x81, 0xa1, 'a', 0xc4, 0x00}, 5, "a bin value (0xc4) at byte 3"},
        {{0x91, 0xc1}, 2, "the reserved byte 0xc1 at byte 1"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        refused(bad[k].b, bad[k].n, bad[k].want);
}
END_TEST

typedef struct utf8_case {
    unsigned char s[20];
    size_t n;
    const char *why;
    size_t at; /* the bad sequence's offset in s */
} utf8_case;

static const utf8_case bad_utf8[] = {
    {{0xc0, 0x80}, 2, "an overlong sequence", 0},              /* U+0000 in two bytes */
    {{0xc1, 0xbf}, 2, "an overlong sequence", 0},
    {{0xe0, 0x80, 0xaf}, 3, "an overlong sequence", 0},        /* '/' in three */
    {{0xf0, 0x82, 0x82, 0xac}, 4, "an overlong sequence", 0},  /* U+20AC in four */
    {{0xed, 0xa0, 0x80}, 3, "a UTF-16 surrogate", 0},          /* U+D800 */
    {{0x41, 0xed, 0xbf, 0xbf}, 4, "a UTF-16 surrogate", 1},    /* U+DFFF */
    {{0xf4, 0x90, 0x80, 0x80}, 4, "a code point past U+10FFFF", 0},
    {{0xf5, 0x80, 0x80, 0x80}, 4, "a code point past U+10FFFF", 0},
    {{0xff}, 1, "a byte that is never UTF-8", 0},
    {{0x80}, 1, "a continuation byte with no lead byte", 0},
    {{'a', 'b', 0xc3}, 3, "a truncated sequence", 2},
    {{0xe2, 0x82}, 2, "a truncated sequence", 0},
    {{0xe2, 0x82, 0x41}, 3, "a truncated sequence", 0},
    {{0xf0, 0x9f, 0x98}, 3, "a truncated sequence", 0},
    /* Past the 8-byte ASCII strides: byte 17. */
    {{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 0xc3, '('}, 19,
     "a truncated sequence", 17},
};

START_TEST(test_bad_utf8)
{
    const utf8_case *c = &bad_utf8[_i];
    char want[96];
    unsigned char b[32];
    /* As a value: a fixstr at byte 0, its bytes from byte 1. */
    b[0] = (unsigned char)(0xa0 | c->n);
    memcpy(b + 1, c->s, c->n);
    snprintf(want, sizeof want, "invalid UTF-8 at byte %zu in a string: %s", 1 + c->at, c->why);
    refused(b, 1 + c->n, want);
    /* As a key: {s: nil}, the key's bytes from byte 2. */
    b[0] = 0x81;
    b[1] = (unsigned char)(0xa0 | c->n);
    memcpy(b + 2, c->s, c->n);
    b[2 + c->n] = 0xc0;
    snprintf(want, sizeof want, "invalid UTF-8 at byte %zu in a map key: %s", 2 + c->at, c->why);
    refused(b, 3 + c->n, want);
}
END_TEST

START_TEST(test_good_utf8)
{
    /* U+00E9, U+20AC, U+1F600, U+10FFFF, U+D7FF, U+E000, U+FFFF, U+0000:
     * 23 bytes, as a value and as a key. */
    static const unsigned char value[] = {0xb7, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xf4, 0x8f,
                                          0xbf, 0xbf, 0xed, 0x9f, 0xbf, 0xee, 0x80, 0x80, 0xef, 0xbf, 0xbf, 0x00};
    accepted(value, sizeof value);
    unsigned char key[2 + sizeof value] = {0x81};
    memcpy(key + 1, value, sizeof value);
    key[1 + sizeof value] = 0xc0;
    accepted(key, sizeof key);
}
END_TEST

/* [[...[]...]]: depth - 1 fixarrays of one element around an empty one. */
static size_t nested_arrays(unsigned char *b, int depth)
{
    memset(b, 0x91, (size_t)depth - 1);
    b[depth - 1] = 0x90;
    return (size_t)depth;
}

START_TEST(test_depth)
{
    unsigned char b[80];
    accepted(b, nested_arrays(b, 32));
    refused_exactly(b, nested_arrays(b, 33), "MessagePack: nesting deeper than 32 at byte 32");
    /* Maps: {"": {"": ... {}}}, two bytes a level. */
    for (int k = 0; k < 32; k++) {
        b[2 * k] = 0x81;
        b[2 * k + 1] = 0xa0;
    }
    b[62] = 0x80;
    accepted(b, 63);       /* 32 maps */
    b[64] = 0x80;
    b[62] = 0x81;
    b[63] = 0xa0;
    refused(b, 65, "nesting deeper than 32 at byte 64");
    /* Scalars do not count; a smaller limit; a larger one caps at 32. */
    static const unsigned char one[] = {0x91, 0x01}, two[] = {0x91, 0x90}, scalar[] = {0x01};
    cqp_problem p;
    ck_assert_int_eq(cqp_mp_check(C_(one), 2, 1, &p), 0);
    refused_with(two, 2, 1, "nesting deeper than 1 at byte 1");
    ck_assert_int_eq(cqp_mp_check(C_(scalar), 1, 0, &p), 0);
    refused_with(one, 2, 0, "nesting deeper than 0 at byte 0");
    refused_with(b, nested_arrays(b, 33), 1000, "nesting deeper than 32 at byte 32");
}
END_TEST

START_TEST(test_huge_headers)
{
    static const struct {
        unsigned char b[6];
        size_t n;
        const char *detail;
    } huge[] = {
        {{0xdd, 0xff, 0xff, 0xff, 0xff}, 5,
         "MessagePack: truncated at byte 5: an array of 4294967295 elements needs at least 4294967295 more bytes, 0 "
         "are left"},
        {{0xdf, 0xff, 0xff, 0xff, 0xff}, 5,
         "MessagePack: truncated at byte 5: a map of 4294967295 members needs at least 8589934590 more bytes, 0 are "
         "left"},
        {{0xdb, 0xff, 0xff, 0xff, 0xff}, 5,
         "MessagePack: truncated at byte 5: a string of 4294967295 bytes needs 4294967295 more bytes, 0 are left"},
        {{0xdc, 0xff, 0xff}, 3,
         "MessagePack: truncated at byte 3: an array of 65535 elements needs at least 65535 more bytes, 0 are left"},
        {{0xde, 0xff, 0xff, 0xa0}, 4,
         "MessagePack: truncated at byte 3: a map of 65535 members needs at least 131070 more bytes, 1 is left"},
        {{0xda, 0xff, 0xff}, 3,
         "MessagePack: truncated at byte 3: a string of 65535 bytes needs 65535 more bytes, 0 are left"},
        {{0x92, 0xdd, 0xff, 0xff, 0xff, 0xff}, 6,
         "MessagePack: truncated at byte 6: an array of 4294967295 elements needs at least 4294967295 more bytes and "
         "at least 1 more for the value due after it, 0 are left"},
        {{0xdd, 0xff, 0xff}, 3, "MessagePack: truncated at byte 1: an array32 header needs 4 more bytes, 2 are left"},
        {{0xdf}, 1, "MessagePack: truncated at byte 1: a map32 header needs 4 more bytes, 0 are left"},
        {{0x9f, 0x01}, 2,
         "MessagePack: truncated at byte 1: an array of 15 elements needs at least 15 more bytes, 1 is left"},
    };
    count_start();
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++)
        refused_exactly(huge[k].b, huge[k].n, huge[k].detail);
    /* Nor does a valid body with small maps allocate. */
    accepted(pair_f64, sizeof pair_f64);
    accepted(kinds_doc, sizeof kinds_doc);
    count_stop();
    ck_assert_int_eq(allocs, 0);
}
END_TEST

/* A map of n members whose keys are "k" and 6 digits (8 bytes with their
 * fixstr byte) and whose values are nil: 9 bytes a member after a 5-byte
 * map32 header, so member i's key is at byte 5 + 9i. */
static unsigned char *many_keys(size_t n, size_t *len)
{
    *len = 5 + 9 * n;
    unsigned char *b = malloc(*len + 1);
    ck_assert_ptr_nonnull(b);
    b[0] = 0xdf;
    for (int k = 0; k < 4; k++)
        b[1 + k] = (unsigned char)(n >> (24 - 8 * k));
    for (size_t i = 0; i < n; i++) {
        unsigned char *m = b + 5 + 9 * i;
        char key[24];
        snprintf(key, sizeof key, "k%06zu", i);
        m[0] = 0xa7;
        memcpy(m + 1, key, 7);
        m[8] = 0xc0;
    }
    return b;
}

START_TEST(test_duplicate_keys)
{
    refused_exactly((const unsigned char[]){0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}, 7,
                    "MessagePack: duplicate key \"a\" at byte 4 (first at byte 1)");
    /* Equal bytes under different headers; equal 8-byte prefixes. */
    refused((const unsigned char[]){0x82, 0xa2, 'a', 'b', 0x01, 0xd9, 0x02, 'a', 'b', 0x02}, 10,
            "duplicate key \"ab\" at byte 5 (first at byte 1)");
    accepted((const unsigned char[]){0x82, 0xa2, 'a', 'b', 0x01, 0xa3, 'a', 'b', 0x00, 0x02}, 10);
    /* A NUL in the key would end the detail: it is quoted as U+FFFD. */
    refused_exactly((const unsigned char[]){0x82, 0xa4, 0, 'a', 'b', 'c', 0xc0, 0xa4, 0, 'a', 'b', 'c', 0xc0}, 13,
                    "MessagePack: duplicate key \"\xEF\xBF\xBD" "abc\" at byte 7 (first at byte 1)");
    accepted((const unsigned char[]){0x82, 0xa9, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n', '1', 0x01, 0xa9, 'p', 'o',
                                     's', 'i', 't', 'i', 'o', 'n', '2', 0x02},
             23);
    /* The same key in two maps is no duplicate. */
    accepted((const unsigned char[]){0x82, 0xa1, 'a', 0x81, 0xa1, 'a', 0x01, 0xa1, 'b', 0x81, 0xa1, 'a', 0x02}, 13);
    /* Around the small-map bound (16 members): first and last members
     * equal, and all distinct. */
    for (size_t n = 15; n <= 18; n++) {
        size_t len;
        unsigned char *b = many_keys(n, &len);
        accepted(b, len);
        memcpy(b + 5 + 9 * (n - 1) + 1, "k000000", 7);
        char want[80];
        snprintf(want, sizeof want, "duplicate key \"k000000\" at byte %zu (first at byte 5)", 5 + 9 * (n - 1));
        refused(b, len, want);
        free(b);
    }
    /* 1000 members, the last repeating the 500th. */
    size_t len;
    unsigned char *b = many_keys(1000, &len);
    accepted(b, len);
    memcpy(b + 5 + 9 * 999 + 1, "k000499", 7);
    refused_exactly(b, len, "MessagePack: duplicate key \"k000499\" at byte 8996 (first at byte 4496)");
    free(b);
}
END_TEST

/* Members of the inner maps below: more keys than the key stack holds
 * before it moves to the heap. */
#define INNER 600

START_TEST(test_duplicates_in_nested_large_maps)
{
    /* {"k000000": M, ..., "k000019": M} with M the INNER-member map of
     * many_keys: each member 8 + 5 + 9 * INNER bytes after a 5-byte header. */
    size_t inner_len;
    unsigned char *inner = many_keys(INNER, &inner_len);
    ck_assert_uint_eq(inner_len, 5 + 9 * INNER);
    size_t member = 8 + inner_len, len = 5 + 20 * member;
    unsigned char *b = malloc(len);
    memcpy(b, "\xdf\x00\x00\x00\x14", 5);
    for (size_t i = 0; i < 20; i++) {
        unsigned char *m = b + 5 + i * member;
        char key[24];
        snprintf(key, sizeof key, "k%06zu", i);
        m[0] = 0xa7;
        memcpy(m + 1, key, 7);
        memcpy(m + 8, inner, inner_len);
    }
    count_start();
    accepted(b, len);
    ck_assert_int_gt(allocs, 0);
    ck_assert_int_eq(allocs, frees);
    /* The outer map's last key repeats its first. */
    memcpy(b + 5 + 19 * member + 1, "k000000", 7);
    char want[80];
    snprintf(want, sizeof want, "duplicate key \"k000000\" at byte %zu (first at byte 5)", 5 + 19 * member);
    refused(b, len, want);
    /* The inner map of the 8th member repeats its key 3 as its last. */
    memcpy(b + 5 + 19 * member + 1, "k000019", 7);
    size_t m7 = 5 + 7 * member + 8;
    memcpy(b + m7 + 5 + 9 * (INNER - 1) + 1, "k000003", 7);
    snprintf(want, sizeof want, "duplicate key \"k000003\" at byte %zu (first at byte %zu)", m7 + 5 + 9 * (INNER - 1),
             m7 + 5 + 9 * 3);
    refused(b, len, want);
    count_stop();
    ck_assert_int_eq(allocs, frees);
    free(b);
    free(inner);
}
END_TEST

START_TEST(test_long_duplicate_key_quoted)
{
    /* A 70-byte key of "é"s, repeated: quoted to 64 bytes (32 "é"). */
    unsigned char b[2 + 2 * (2 + 70 + 1)] = {0x82};
    for (int m = 0; m < 2; m++) {
        unsigned char *k = b + 1 + m * 73;
        k[0] = 0xd9;
        k[1] = 70;
        for (int i = 0; i < 35; i++)
            memcpy(k + 2 + 2 * i, "\xc3\xa9", 2);
        k[72] = 0xc0;
    }
    char want[256] = "MessagePack: duplicate key \"";
    for (int i = 0; i < 32; i++)
        strcat(want, "\xc3\xa9");
    strcat(want, "...\" at byte 74 (first at byte 1)");
    refused_exactly(b, 147, want);
}
END_TEST

START_TEST(test_million_elements)
{
    /* array32 of 10^6 (0x000f4240) positive fixint 1s. */
    size_t n = 1000000, len = 5 + n;
    unsigned char *b = malloc(len);
    memcpy(b, "\xdd\x00\x0f\x42\x40", 5);
    memset(b + 5, 0x01, n);
    count_start();
    accepted(b, len);
    cqp_value v = cqp_value_mp(C_(b));
    ck_assert_uint_eq(cqpv_size(v), n);
    cqp_iter it;
    cqp_value e;
    int64_t sum = 0;
    for (cqpv_iter_init(&it, v); cqpv_next(&it, &e);)
        sum += cqpv_int(e);
    ck_assert_int_eq(sum, (int64_t)n);
    /* One element more than there are bytes: refused at the header. */
    b[4] = 0x41;
    refused_exactly(b, len,
                    "MessagePack: truncated at byte 5: an array of 1000001 elements needs at least 1000001 more "
                    "bytes, 1000000 are left");
    count_stop();
    ck_assert_int_eq(allocs, 0);
    free(b);
}
END_TEST

START_TEST(test_million_keys)
{
    size_t len;
    unsigned char *b = many_keys(1000000, &len);
    ck_assert_uint_eq(len, 9000005);
    count_start();
    accepted(b, len);
    ck_assert_int_gt(allocs, 0);
    ck_assert_int_eq(allocs, frees);
    ck_assert_uint_eq(cqpv_size(cqp_value_mp(C_(b))), 1000000);
    memcpy(b + 5 + 9 * 999999 + 1, "k000000", 7);
    refused_exactly(b, len, "MessagePack: duplicate key \"k000000\" at byte 8999996 (first at byte 5)");
    ck_assert_int_eq(allocs, frees);
    count_stop();
    free(b);
}
END_TEST

/* The key scratch of a large map cannot be had: BUSY, nothing leaked. */
static long fail_after;
static void *failing_malloc(size_t n)
{
    allocs++;
    return fail_after-- > 0 ? malloc(n) : NULL;
}

START_TEST(test_scratch_failure)
{
    /* Each allocation the check of a 5000-member map makes fails in turn:
     * BUSY, with every block it had freed; then one run where all succeed. */
    size_t len;
    unsigned char *b = many_keys(5000, &len);
    int rc = -1;
    for (long k = 0; rc != 0; k++) {
        ck_assert_int_lt(k, 64);
        allocs = frees = 0;
        fail_after = k;
        cqp_set_alloc_funcs(failing_malloc, count_free);
        cqp_problem p = {0};
        rc = cqp_mp_check(C_(b), len, CQP_MP_MAX_DEPTH, &p);
        count_stop();
        if (rc != 0) {
            ck_assert_int_eq(p.kind, CQP_P_BUSY);
            ck_assert_int_eq(allocs, k + 1);
            ck_assert_int_eq(frees, k);
        } else {
            ck_assert_int_gt(k, 0);
            ck_assert_int_eq(allocs, frees);
        }
    }
    free(b);
}
END_TEST

/* ---- the oracle: a recursive validator from the spec ------------------ */

typedef struct ref_key {
    const unsigned char *s;
    uint64_t n;
} ref_key;

static bool ref_utf8(const unsigned char *s, uint64_t n)
{
    uint64_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        int k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0)
            k = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            k = 3, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            k = 4, cp = c & 0x07, min = 0x10000;
        else
            return false;
        if (n - i < (uint64_t)k)
            return false;
        for (int j = 1; j < k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += (uint64_t)k;
    }
    return true;
}

/* The big-endian field of n bytes at *q (advanced), or false at the end. */
static bool ref_field(const unsigned char **q, const unsigned char *end, int n, uint64_t *v)
{
    if (end - *q < n)
        return false;
    *v = 0;
    for (int i = 0; i < n; i++)
        *v = *v << 8 | *(*q)++;
    return true;
}

/* A string at q: NULL unless it is one, fits and is UTF-8. */
static const unsigned char *ref_string(const unsigned char *q, const unsigned char *end, ref_key *k)
{
    unsigned c = *q++;
    uint64_t n;
    if (c >= 0xa0 && c <= 0xbf)
        n = c & 0x1f;
    else if (c < 0xd9 || c > 0xdb || !ref_field(&q, end, c == 0xd9 ? 1 : c == 0xda ? 2 : 4, &n))
        return NULL;
    if ((uint64_t)(end - q) < n || !ref_utf8(q, n))
        return NULL;
    *k = (ref_key){q, n};
    return q + n;
}

static const unsigned char *ref_value(const unsigned char *q, const unsigned char *end, int depth);

static const unsigned char *ref_map(const unsigned char *q, const unsigned char *end, uint64_t n, int depth)
{
    ref_key keys[128];
    for (uint64_t i = 0; i < n; i++) {
        if (q >= end)
            return NULL;
        ck_assert_uint_lt(i, 128);
        if (!(q = ref_string(q, end, &keys[i])))
            return NULL;
        for (uint64_t j = 0; j < i; j++)
            if (keys[j].n == keys[i].n && memcmp(keys[j].s, keys[i].s, keys[i].n) == 0)
                return NULL;
        if (!(q = ref_value(q, end, depth + 1)))
            return NULL;
    }
    return q;
}

static const unsigned char *ref_array(const unsigned char *q, const unsigned char *end, uint64_t n, int depth)
{
    for (uint64_t i = 0; i < n && q; i++)
        q = ref_value(q, end, depth + 1);
    return q;
}

/* The byte after the value at q, which is depth - 1 containers deep, or
 * NULL when the spec or the rules refuse it. */
static const unsigned char *ref_value(const unsigned char *q, const unsigned char *end, int depth)
{
    if (q >= end)
        return NULL;
    unsigned c = *q;
    uint64_t n;
    ref_key k;
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return q + 1;
    if ((c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb))
        return ref_string(q, end, &k);
    q++;
    if ((c >= 0x80 && c <= 0x9f) || (c >= 0xdc && c <= 0xdf)) {
        if (depth > CQP_MP_MAX_DEPTH)
            return NULL;
        if (c <= 0x9f)
            n = c & 0x0f;
        else if (!ref_field(&q, end, c == 0xdc || c == 0xde ? 2 : 4, &n))
            return NULL;
        bool map = (c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf;
        return map ? ref_map(q, end, n, depth) : ref_array(q, end, n, depth);
    }
    switch (c) {
    case 0xcc: case 0xd0: n = 1; break;
    case 0xcd: case 0xd1: n = 2; break;
    case 0xca: case 0xce: case 0xd2: n = 4; break;
    case 0xcb: case 0xcf: case 0xd3: n = 8; break;
    default: return NULL; /* 0xc1, bin, ext */
    }
    return (uint64_t)(end - q) >= n ? q + n : NULL;
}

static bool ref_accepts(const unsigned char *b, size_t n)
{
    return n > 0 && ref_value(b, b + n, 1) == b + n;
}

static void agree(const unsigned char *b, size_t n, const char *what, size_t at, int byte)
{
    cqp_problem p = {0};
    bool got = cqp_mp_check(C_(b), n, CQP_MP_MAX_DEPTH, &p) == 0;
    bool want = ref_accepts(b, n);
    if (got != want)
        ck_abort_msg("%s at %zu (0x%02x): check %s, oracle %s (%s)", what, at, byte, got ? "accepts" : "refuses",
                     want ? "accepts" : "refuses", p.detail);
    if (got && cqp_mp_span(C_(b)) != n)
        ck_abort_msg("%s at %zu (0x%02x): span %zu of %zu", what, at, byte, cqp_mp_span(C_(b)), n);
    if (!got && p.kind != CQP_P_BAD_MSGPACK)
        ck_abort_msg("%s at %zu: kind %d", what, at, (int)p.kind);
}

/* Every one-byte substitution, deletion and insertion of a body. */
static void edits_agree(const unsigned char *b, size_t n)
{
    unsigned char e[256];
    ck_assert_uint_lt(n, sizeof e);
    for (size_t i = 0; i < n; i++)
        for (int v = 0; v < 256; v++) {
            memcpy(e, b, n);
            e[i] = (unsigned char)v;
            agree(e, n, "substitution", i, v);
        }
    for (size_t i = 0; i < n; i++) {
        memcpy(e, b, i);
        memcpy(e + i, b + i + 1, n - i - 1);
        agree(e, n - 1, "deletion", i, b[i]);
    }
    for (size_t i = 0; i <= n; i++)
        for (int v = 0; v < 256; v += 3) {
            memcpy(e, b, i);
            e[i] = (unsigned char)v;
            memcpy(e + i + 1, b + i, n - i);
            agree(e, n + 1, "insertion", i, v);
        }
}

START_TEST(test_edits_agree_with_oracle)
{
    ck_assert(ref_accepts(pair_f64, sizeof pair_f64));
    ck_assert(ref_accepts(kinds_doc, sizeof kinds_doc));
    edits_agree(pair_f64, sizeof pair_f64);
    edits_agree(pair_f32, sizeof pair_f32);
    edits_agree(kinds_doc, sizeof kinds_doc);
}
END_TEST

/* ---- formats and the allocator hook ----------------------------------- */

START_TEST(test_media_types)
{
    ck_assert_str_eq(cqp_format_media_type(CQP_JSON), "application/json");
    ck_assert_str_eq(cqp_format_media_type(CQP_MSGPACK), "application/msgpack");
    ck_assert_str_eq(cqp_format_problem_type(CQP_JSON), "application/problem+json");
    ck_assert_str_eq(cqp_format_problem_type(CQP_MSGPACK), "application/problem+msgpack");
}
END_TEST

static void *dirty_malloc(size_t n)
{
    allocs++;
    void *p = malloc(n);
    if (p)
        memset(p, 0xaa, n);
    return p;
}

START_TEST(test_alloc_hook)
{
    allocs = frees = 0;
    cqp_set_alloc_funcs(dirty_malloc, count_free);
    unsigned char *z = cqp_calloc(4, 8);
    ck_assert_ptr_nonnull(z);
    for (int i = 0; i < 32; i++)
        ck_assert_int_eq(z[i], 0);
    cqp_free(z);
    cqp_free(NULL);
    ck_assert_int_eq(allocs, 1);
    ck_assert_int_eq(frees, 1);
    /* A product past SIZE_MAX asks for nothing. */
    ck_assert_ptr_null(cqp_calloc(SIZE_MAX / 2 + 1, 2));
    ck_assert_ptr_null(cqp_calloc(2, SIZE_MAX / 2 + 1));
    ck_assert_int_eq(allocs, 1);
    /* Half a pair restores malloc and free. */
    cqp_set_alloc_funcs(dirty_malloc, NULL);
    cqp_free(cqp_malloc(16));
    ck_assert_int_eq(allocs, 1);
    ck_assert_int_eq(frees, 1);
    count_stop();
}
END_TEST

Suite *proto_mp_suite(void)
{
    Suite *s = suite_create("proto_mp");
    TCase *view = tcase_create("view");
    tcase_add_test(view, test_golden_pair_float64);
    tcase_add_test(view, test_golden_pair_float32);
    tcase_add_test(view, test_golden_kinds);
    tcase_add_test(view, test_body_open);
    tcase_add_loop_test(view, test_int_widths, 0, (int)(sizeof int_cases / sizeof int_cases[0]));
    tcase_add_test(view, test_floats);
    tcase_add_test(view, test_nil_bool);
    tcase_add_test(view, test_string_headers);
    tcase_add_test(view, test_spans);
    tcase_add_test(view, test_iteration);
    tcase_add_test(view, test_media_types);
    tcase_add_test(view, test_alloc_hook);
    suite_add_tcase(s, view);
    TCase *hostile = tcase_create("hostile");
    tcase_set_timeout(hostile, 60); /* seconds a test under the sanitizers or valgrind */
    tcase_add_test(hostile, test_truncation);
    tcase_add_test(hostile, test_trailing);
    tcase_add_test(hostile, test_map_keys);
    tcase_add_test(hostile, test_ext_bin_reserved);
    tcase_add_loop_test(hostile, test_bad_utf8, 0, (int)(sizeof bad_utf8 / sizeof bad_utf8[0]));
    tcase_add_test(hostile, test_good_utf8);
    tcase_add_test(hostile, test_depth);
    tcase_add_test(hostile, test_huge_headers);
    tcase_add_test(hostile, test_duplicate_keys);
    tcase_add_test(hostile, test_duplicates_in_nested_large_maps);
    tcase_add_test(hostile, test_long_duplicate_key_quoted);
    tcase_add_test(hostile, test_million_elements);
    tcase_add_test(hostile, test_million_keys);
    tcase_add_test(hostile, test_scratch_failure);
    tcase_add_test(hostile, test_edits_agree_with_oracle);
    suite_add_tcase(s, hostile);
    return s;
}
