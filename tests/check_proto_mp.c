/* MessagePack in proto: the view's MessagePack backing read back against
 * the golden bodies of mp_util.h (values written by hand), cqp_body_open,
 * widths and kinds of every header, spans, iteration, the media types and
 * the allocator hook. The check's refusals are check_proto_mp_hostile.c's. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/decode.h"
#include "mp_util.h"

Suite *proto_mp_suite(void);

static void assert_string(cqp_value v, const char *want)
{
    size_t n = 0;
    ck_assert_int_eq(cqp_value_type(v), CQP_V_STRING);
    const char *s = cqp_value_string(v, &n);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(s, want, n) == 0);
}

static void assert_real(cqp_value v, double want)
{
    ck_assert_int_eq(cqp_value_type(v), CQP_V_REAL);
    ck_assert(cqp_value_number(v) == want);
}

static void assert_sphere(cqp_value shape)
{
    ck_assert_int_eq(cqp_value_type(shape), CQP_V_OBJECT);
    ck_assert_uint_eq(cqp_value_size(shape), 2);
    assert_string(cqp_value_get(shape, "type"), "sphere");
    assert_real(cqp_value_get(shape, "radius"), 1.0);
}

/* The pair document read through any view of it. */
static void check_pair_view(cqp_value root)
{
    ck_assert_int_eq(cqp_value_type(root), CQP_V_OBJECT);
    ck_assert_uint_eq(cqp_value_size(root), 2);
    cqp_iter it;
    const char *key;
    size_t key_len;
    cqp_value a, b, pos, e;
    cqp_value_iter_init(&it, root);
    ck_assert(cqp_value_next_member(&it, &key, &key_len, &a));
    ck_assert(cqp_value_key_is(key, key_len, "a"));
    ck_assert(cqp_value_next_member(&it, &key, &key_len, &b));
    ck_assert(cqp_value_key_is(key, key_len, "b"));
    ck_assert(!cqp_value_next_member(&it, &key, &key_len, &e));
    ck_assert_uint_eq(cqp_value_size(a), 1);
    assert_sphere(cqp_value_get(a, "shape"));
    assert_sphere(cqp_value_get(b, "shape"));
    pos = cqp_value_get(cqp_value_get(b, "pose"), "position");
    ck_assert_int_eq(cqp_value_type(pos), CQP_V_ARRAY);
    ck_assert_uint_eq(cqp_value_size(pos), 3);
    static const double want[3] = {1.5, 0.0, 0.0};
    int k = 0;
    for (cqp_value_iter_init(&it, pos); cqp_value_next(&it, &e); k++)
        assert_real(e, want[k]);
    ck_assert_int_eq(k, 3);
    /* Missing members, near misses and lookups in what is no object. */
    ck_assert(!cqp_value_present(cqp_value_get(root, "c")));
    ck_assert(!cqp_value_present(cqp_value_get(a, "pose")));
    ck_assert(!cqp_value_present(cqp_value_get(cqp_value_get(a, "shape"), "typ")));
    ck_assert(!cqp_value_present(cqp_value_get(cqp_value_get(a, "shape"), "types")));
    ck_assert(!cqp_value_present(cqp_value_get(pos, "0")));
    ck_assert(!cqp_value_present(cqp_value_get(cqp_value_get(cqp_value_get(a, "shape"), "type"), "x")));
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
    ck_assert_ptr_eq(cqp_value_get(root, "a").ref, pair_f64 + 3);
    ck_assert_ptr_eq(cqp_value_get(root, "b").ref, pair_f64 + 41);
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
    ck_assert_uint_eq(cqp_value_size(root), 3);
    static const int64_t ints[10] = {127, -32, 255, 65535, 4294967295, INT64_MAX, -128, -32768, -2147483648LL,
                                     INT64_MIN};
    cqp_iter it;
    cqp_value e;
    int k = 0;
    for (cqp_value_iter_init(&it, cqp_value_get(root, "int")); cqp_value_next(&it, &e); k++) {
        ck_assert_int_eq(cqp_value_type(e), CQP_V_INT);
        ck_assert_int_eq(cqp_value_int(e), ints[k]);
    }
    ck_assert_int_eq(k, 10);
    cqp_value real = cqp_value_get(root, "real");
    ck_assert_ptr_eq(real.ref, kinds_doc + 58);
    cqp_value_iter_init(&it, real);
    ck_assert(cqp_value_next(&it, &e));
    assert_real(e, ldexp(13421773, -26));
    ck_assert(cqp_value_next(&it, &e));
    assert_real(e, 3.141592653589793);
    ck_assert(cqp_value_next(&it, &e));
    ck_assert_int_eq(cqp_value_type(e), CQP_V_NULL);
    ck_assert(!cqp_value_next(&it, &e));
    cqp_value text = cqp_value_get(root, "text");
    ck_assert_int_eq(cqp_value_type(cqp_value_get(text, "\xc3\xa9")), CQP_V_BOOL);
    ck_assert(cqp_value_bool(cqp_value_get(text, "\xc3\xa9")));
    assert_string(cqp_value_get(text, "f"), "\xe2\x82\xac");
    ck_assert_uint_eq(cqp_mp_span(text.ref), 15);
}
END_TEST

/* The golden batch decoded: every op as the bytes say, worked by hand
 * (half a turn about z is the rotation with columns -x, -y, z). */
static void assert_vec(cq_vec3 v, double x, double y, double z)
{
    ck_assert_msg(v.x == x && v.y == y && v.z == z, "(%.17g, %.17g, %.17g) want (%g, %g, %g)", v.x, v.y, v.z, x, y, z);
}

static void assert_identity(cq_mat3 r)
{
    assert_vec(r.c[0], 1, 0, 0);
    assert_vec(r.c[1], 0, 1, 0);
    assert_vec(r.c[2], 0, 0, 1);
}

START_TEST(test_golden_batch)
{
    ck_assert_uint_eq(sizeof batch_tick, 191);
    accepted(batch_tick, sizeof batch_tick);
    cqp_problem p = {0};
    cqp_decoder d;
    static const cqp_limits limits = {.batch_items = 4, .hull_points = 8};
    cqp_decoder_init(&d, &limits, &p);
    cqp_batch b = {0};
    ck_assert_msg(cqp_decode_batch(&d, cqp_value_mp(C_(batch_tick)), &b) == 0, "%s at %s", p.detail, p.pointer);
    ck_assert_int_eq(b.count, 4);
    ck_assert_int_eq(b.upserts, 1);
    ck_assert_int_eq(b.moves, 2);
    ck_assert_int_eq(b.removes, 1);
    const cq_world_op *op = b.ops;
    ck_assert_int_eq(op[0].kind, CQ_WORLD_UPSERT);
    ck_assert_str_eq(op[0].id, "s1");
    ck_assert_int_eq(op[0].shape.type, CQ_SPHERE);
    ck_assert(op[0].shape.sphere.radius == 0.5);
    assert_vec(op[0].pose.p, 0, 0, 0);
    assert_identity(op[0].pose.r);
    assert_vec(op[0].velocity, 0, 0, 0);

    ck_assert_int_eq(op[1].kind, CQ_WORLD_MOVE);
    ck_assert_str_eq(op[1].id, "b2");
    assert_vec(op[1].pose.p, 1, 2, -3);
    assert_vec(op[1].pose.r.c[0], -1, 0, 0);
    assert_vec(op[1].pose.r.c[1], 0, -1, 0);
    assert_vec(op[1].pose.r.c[2], 0, 0, 1);
    assert_vec(op[1].velocity, 0.5, 0, 0);
    ck_assert(!op[1].keep_velocity);

    ck_assert_int_eq(op[2].kind, CQ_WORLD_MOVE);
    ck_assert_str_eq(op[2].id, "b3");
    assert_vec(op[2].pose.p, 4, 5, -0.25);
    assert_identity(op[2].pose.r);
    ck_assert(op[2].keep_velocity);

    ck_assert_int_eq(op[3].kind, CQ_WORLD_REMOVE);
    ck_assert_str_eq(op[3].id, "c3");
    cqp_batch_release(&b);

    /* one byte short: the last id's string runs past the end */
    cqp_body body;
    ck_assert_int_eq(cqp_body_open(&body, CQP_MSGPACK, C_(batch_tick), sizeof batch_tick - 1, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
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
    ck_assert(!cqp_value_present(b.root));

    ck_assert_int_eq(cqp_body_open(&b, CQP_JSON, pair_json, strlen(pair_json), &p), 0);
    ck_assert_ptr_nonnull(b.tree);
    ck_assert_int_eq(b.root.format, CQP_JSON);
    check_pair_view(b.root);
    cqp_body_close(&b);
    ck_assert_ptr_null(b.tree);
    ck_assert(!cqp_value_present(b.root));
    cqp_body_close(&b); /* closing twice is harmless */

    /* An empty body opens absent in both formats. */
    for (int f = CQP_JSON; f <= CQP_MSGPACK; f++) {
        ck_assert_int_eq(cqp_body_open(&b, (cqp_format)f, "", 0, &p), 0);
        ck_assert(!cqp_value_present(b.root));
        ck_assert_ptr_null(b.tree);
        cqp_body_close(&b);
    }
    /* A malformed one is refused with nothing held. */
    ck_assert_int_eq(cqp_body_open(&b, CQP_MSGPACK, C_(pair_f64), sizeof pair_f64 - 1, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert(!cqp_value_present(b.root));
    ck_assert_ptr_null(b.tree);
    ck_assert_int_eq(cqp_body_open(&b, CQP_JSON, "{\"a\":", 5, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_JSON);
    ck_assert(!cqp_value_present(b.root));
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
    ck_assert_int_eq(cqp_value_type(v), CQP_V_INT);
    ck_assert(cqp_value_is_number(v));
    ck_assert_int_eq(cqp_value_int(v), c->i);
    ck_assert(cqp_value_number(v) == c->num);
    ck_assert_uint_eq(cqp_value_size(v), 0);
    ck_assert(!cqp_value_bool(v));
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
    ck_assert(cqp_value_number(cqp_value_mp(C_(f02))) == (double)0.2f);
    accepted(sub, 5);
    assert_real(cqp_value_mp(C_(sub)), ldexp(1, -149));
    accepted(neg0, 5);
    ck_assert(signbit(cqp_value_number(cqp_value_mp(C_(neg0)))) && cqp_value_number(cqp_value_mp(C_(neg0))) == 0);
    accepted(big, 9);
    assert_real(cqp_value_mp(C_(big)), ldexp(0x1fffffffffffff, 971));
    accepted(nan32, 5);
    ck_assert(isnan(cqp_value_number(cqp_value_mp(C_(nan32)))));
    accepted(inf32, 5);
    ck_assert(isinf(cqp_value_number(cqp_value_mp(C_(inf32)))) && cqp_value_number(cqp_value_mp(C_(inf32))) > 0);
    accepted(ninf64, 9);
    ck_assert(isinf(cqp_value_number(cqp_value_mp(C_(ninf64)))) && cqp_value_number(cqp_value_mp(C_(ninf64))) < 0);
    accepted(nan64, 9);
    ck_assert(isnan(cqp_value_number(cqp_value_mp(C_(nan64)))));
    ck_assert_int_eq(cqp_value_int(cqp_value_mp(C_(f02))), 0); /* no INT */
}
END_TEST

START_TEST(test_nil_bool)
{
    static const unsigned char nil[] = {0xc0}, no[] = {0xc2}, yes[] = {0xc3};
    accepted(nil, 1);
    accepted(no, 1);
    accepted(yes, 1);
    ck_assert_int_eq(cqp_value_type(cqp_value_mp(C_(nil))), CQP_V_NULL);
    ck_assert_int_eq(cqp_value_type(cqp_value_mp(C_(no))), CQP_V_BOOL);
    ck_assert_int_eq(cqp_value_type(cqp_value_mp(C_(yes))), CQP_V_BOOL);
    ck_assert(!cqp_value_bool(cqp_value_mp(C_(no))));
    ck_assert(cqp_value_bool(cqp_value_mp(C_(yes))));
    ck_assert(!cqp_value_bool(cqp_value_mp(C_(nil))));
    ck_assert(!cqp_value_is_number(cqp_value_mp(C_(yes))));
    ck_assert_int_eq(cqp_value_type(cqp_value_mp(NULL)), CQP_V_ABSENT);
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
        ck_assert_ptr_eq(cqp_value_string(cqp_value_mp(C_(all[k])), &n), all[k] + spans[k] - 3);
        assert_string(cqp_value_mp(C_(all[k])), "abc");
    }
    /* A NUL inside, the empty string, 32 bytes (one past fixstr) as str8. */
    static const unsigned char nul[] = {0xa3, 'a', 0, 'b'}, empty[] = {0xa0};
    size_t n;
    accepted(nul, 4);
    ck_assert(memcmp(cqp_value_string(cqp_value_mp(C_(nul)), &n), "a\0b", 3) == 0 && n == 3);
    accepted(empty, 1);
    cqp_value_string(cqp_value_mp(C_(empty)), &n);
    ck_assert_uint_eq(n, 0);
    unsigned char s32b[34] = {0xd9, 32};
    memset(s32b + 2, 'x', 32);
    accepted(s32b, 34);
    ck_assert_ptr_null(cqp_value_string(cqp_value_mp(C_(s8 + 1)), &n)); /* 0x03, an int */
    ck_assert_uint_eq(n, 0);
    /* Keys of every header width are found by cqp_value_get. */
    static const unsigned char keys[] = {
        0x84,                                     /* fixmap, 4 members */
        0xa1, 'a', 0x01,                          /* "a": 1 */
        0xd9, 0x01, 'b', 0x02,                    /* str8 "b": 2 */
        0xda, 0x00, 0x01, 'c', 0x03,              /* str16 "c": 3 */
        0xdb, 0x00, 0x00, 0x00, 0x01, 'd', 0x04,  /* str32 "d": 4 */
    };
    accepted(keys, sizeof keys);
    cqp_value m = cqp_value_mp(C_(keys));
    ck_assert_int_eq(cqp_value_int(cqp_value_get(m, "a")), 1);
    ck_assert_int_eq(cqp_value_int(cqp_value_get(m, "b")), 2);
    ck_assert_int_eq(cqp_value_int(cqp_value_get(m, "c")), 3);
    ck_assert_int_eq(cqp_value_int(cqp_value_get(m, "d")), 4);
    ck_assert(!cqp_value_present(cqp_value_get(m, "e")));
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
        ck_assert_int_eq(cqp_value_type(v), kinds[k].t);
        ck_assert_uint_eq(cqp_value_size(v), kinds[k].size);
        /* Each value followed by more: the span is still the value's own. */
        unsigned char two[16];
        memcpy(two, kinds[k].b, kinds[k].n);
        two[kinds[k].n] = 0xc3;
        ck_assert_uint_eq(cqp_mp_span(C_(two)), kinds[k].n);
    }
    /* Elements inside: [[1],"x"]'s second element is at byte 3, 2 bytes. */
    cqp_iter it;
    cqp_value e;
    cqp_value_iter_init(&it, cqp_value_mp(C_(kinds[6].b)));
    ck_assert(cqp_value_next(&it, &e) && cqp_mp_span(e.ref) == 2);
    ck_assert(cqp_value_next(&it, &e) && e.ref == kinds[6].b + 3 && cqp_mp_span(e.ref) == 2);
    ck_assert(!cqp_value_next(&it, &e));
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
    for (cqp_value_iter_init(&it, root); cqp_value_next_member(&it, &key, &key_len, &v); k++) {
        ck_assert(cqp_value_key_is(key, key_len, names[k]));
        ck_assert_ptr_eq(key, doc + at[k] - 1);
        ck_assert_ptr_eq(v.ref, doc + at[k]);
    }
    ck_assert_int_eq(k, 3);
    /* Empty containers and scalars iterate nothing. */
    cqp_value_iter_init(&it, cqp_value_get(root, "z"));
    ck_assert(!cqp_value_next_member(&it, &key, &key_len, &v));
    cqp_value_iter_init(&it, cqp_value_get(root, "x"));
    ck_assert(!cqp_value_next(&it, &v));
    cqp_value_iter_init(&it, cqp_value_get(root, "nope"));
    ck_assert(!cqp_value_next(&it, &v));
    ck_assert_uint_eq(cqp_value_size(cqp_value_get(root, "nope")), 0);
    ck_assert(!cqp_value_present(cqp_value_get(cqp_value_get(root, "y"), "x")));
}
END_TEST

/* ---- hostile bodies --------------------------------------------------- */

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
    tcase_add_test(view, test_golden_batch);
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
    return s;
}
