/* The writer's MessagePack mode (write.h's rules), against two independent
 * oracles: byte fixtures derived by hand from the msgpack.org spec (the
 * golden answers of a pair, a contacts reply and a problem, and every
 * header and integer size boundary), and msgpuck, a separate
 * implementation, reading each as one value (the random trees are
 * check_proto_write_mp_random.c's). The float64 fixtures'
 * bits come from IEEE 754 by hand: 1 = 0x3ff0..., 2 = 0x4000..., 0.5 =
 * 0x3fe0..., 0 = all zero bits. */
#include <math.h>
#include <msgpuck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/encode.h"
#include "cqp/problem.h"
#include "number_util.h"
#include "testutil.h"
#include "write_mp_util.h"

/* float64 (0xcb) and its eight big-endian bytes. */
#define F64_0 0xcb, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 /* +0: all bits zero */
#define F64_1 0xcb, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 /* exponent 1023 = 0x3ff */
#define F64_2 0xcb, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 /* exponent 1024 */
#define F64_HALF 0xcb, 0x3f, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 /* exponent 1022 */

/* ---- golden answers ---- */

/* Two unit spheres with centres 3 apart on x: the gap is 3 - 1 - 1 = 1, so
 * they are apart (overlap false, depth 0, no points) by distance 1 along
 * the normal (1,0,0) from A to B; the witnesses are the surface points
 * facing each other, (1,0,0) on A and (2,0,0) on B. No SAT for spheres. */
START_TEST(golden_pair)
{
    cq_shape s = {.type = CQ_SPHERE, .sphere.radius = 1};
    cq_pair_query q = {.a = &s, .xa = cq_xform_identity(), .b = &s, .xb = cq_xform_identity()};
    q.xb.p = cq_v3(3, 0, 0);
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    mdoc d;
    mdoc_init(&d);
    cqp_write_contact(&d.w, &c, NULL);
    MDOC_CHECK(&d,
               0x88,                                               /* fixmap, 8 members */
               0xa7, 'o', 'v', 'e', 'r', 'l', 'a', 'p',            /* fixstr 7 */
               0xc2,                                               /* false */
               0xa8, 'd', 'i', 's', 't', 'a', 'n', 'c', 'e',       /* fixstr 8 */
               F64_1,                                              /* 1 */
               0xa5, 'd', 'e', 'p', 't', 'h',                      /* fixstr 5 */
               F64_0,                                              /* 0 */
               0xa6, 'n', 'o', 'r', 'm', 'a', 'l',                 /* fixstr 6 */
               0x93, F64_1, F64_0, F64_0,                          /* fixarray 3: [1, 0, 0] */
               0xa6, 'p', 'o', 'i', 'n', 't', 's',                 /* fixstr 6 */
               0x90,                                               /* fixarray, empty */
               0xa7, 'w', 'i', 't', 'n', 'e', 's', 's',            /* fixstr 7 */
               0x82,                                               /* fixmap, 2 members */
               0xa1, 'a', 0x93, F64_1, F64_0, F64_0,               /* "a": [1, 0, 0] */
               0xa1, 'b', 0x93, F64_2, F64_0, F64_0,               /* "b": [2, 0, 0] */
               0xa9, 'a', 'l', 'g', 'o', 'r', 'i', 't', 'h', 'm',  /* fixstr 9 */
               0xad, 's', 'p', 'h', 'e', 'r', 'e', '_', 's', 'p', 'h', 'e', 'r', 'e', /* fixstr 13 */
               0xa8, 'f', 'a', 'l', 'l', 'b', 'a', 'c', 'k',       /* fixstr 8 */
               0xc0);                                              /* nil */
}
END_TEST

/* The contacts answer as the handler writes it (cqp_write_contacts), of a
 * world of four unit spheres: "s1" and "s2" with centres 1.5 apart on x
 * overlap by 2 - 1.5 = 0.5 along (1,0,0), their one point B's surface
 * point facing A, (0.5,0,0), at depth 0.5, no witness (distance 0);
 * "bullet" and "target" far from them and from each other. The world's
 * own contacts query (no dt: nothing swept) gives the pair and the
 * counts; one first impact of bullet on target, at half the step, is
 * added by hand so the toi member is written too. */
static cq_world *four_spheres(void)
{
    cq_world *world;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){0}, &world), CQ_OK);
    static const char *const ids[] = {"s1", "s2", "bullet", "target"};
    static const double x[] = {0, 1.5, 100, 200};
    cq_world_op ops[4];
    for (int i = 0; i < 4; i++) {
        ops[i] = (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = ids[i], .pose = cq_xform_identity(),
                               .shape = {.type = CQ_SPHERE, .sphere.radius = 1}, .mask = ~0u, .layer = 1};
        ops[i].pose.p = cq_v3(x[i], 0, 0);
    }
    int bad;
    ck_assert_int_eq(cq_world_apply(world, ops, 4, &bad), CQ_OK);
    return world;
}

START_TEST(golden_contacts)
{
    cq_world *world = four_spheres();
    cq_world_contact pairs[4];
    cq_world_toi toi[1];
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = 4, .toi = toi, .toi_capacity = 1};
    ck_assert_int_eq(cq_world_contacts(world, &(cq_world_contacts_query){0}, &out), CQ_OK);
    ck_assert_int_eq(out.pair_count, 1);
    ck_assert_int_eq(out.toi_count, 0);
    ck_assert_int_eq(cq_world_find(world, "bullet", &toi[0].id), CQ_OK);
    ck_assert_int_eq(cq_world_find(world, "target", &toi[0].other), CQ_OK);
    toi[0].time = 0.5, toi[0].point = cq_v3(1, 1, 0), toi[0].normal = cq_v3(1, 0, 0);
    out.toi_count = 1;
    mdoc d;
    mdoc_init(&d);
    cqp_write_contacts(&d.w, world, &out);
    MDOC_CHECK(&d,
               0x83,                                               /* fixmap, 3 members */
               0xa5, 'p', 'a', 'i', 'r', 's',                      /* fixstr 5 */
               0x91,                                               /* fixarray, 1 pair */
               0x89,                                               /* fixmap, 9 members */
               0xa1, 'a', 0xa2, 's', '1',                          /* "a": "s1" */
               0xa1, 'b', 0xa2, 's', '2',                          /* "b": "s2" */
               0xa7, 'o', 'v', 'e', 'r', 'l', 'a', 'p', 0xc3,      /* "overlap": true */
               0xa8, 'd', 'i', 's', 't', 'a', 'n', 'c', 'e', F64_0, /* "distance": 0 */
               0xa5, 'd', 'e', 'p', 't', 'h', F64_HALF,            /* "depth": 0.5 */
               0xa6, 'n', 'o', 'r', 'm', 'a', 'l',                 /* fixstr 6 */
               0x93, F64_1, F64_0, F64_0,                          /* [1, 0, 0] */
               0xa6, 'p', 'o', 'i', 'n', 't', 's',                 /* fixstr 6 */
               0x91,                                               /* fixarray, 1 point */
               0x83,                                               /* fixmap, 3 members */
               0xa8, 'p', 'o', 's', 'i', 't', 'i', 'o', 'n',       /* fixstr 8 */
               0x93, F64_HALF, F64_0, F64_0,                       /* [0.5, 0, 0] */
               0xa5, 'd', 'e', 'p', 't', 'h', F64_HALF,            /* "depth": 0.5 */
               0xa7, 'f', 'e', 'a', 't', 'u', 'r', 'e',            /* fixstr 7 */
               0xa5, 'f', '0', '.', 'f', '0',                      /* face 0 of each */
               0xa9, 'a', 'l', 'g', 'o', 'r', 'i', 't', 'h', 'm',  /* fixstr 9 */
               0xad, 's', 'p', 'h', 'e', 'r', 'e', '_', 's', 'p', 'h', 'e', 'r', 'e', /* fixstr 13 */
               0xa8, 'f', 'a', 'l', 'l', 'b', 'a', 'c', 'k', 0xc0, /* "fallback": nil */
               0xa3, 't', 'o', 'i',                                /* fixstr 3 */
               0x91,                                               /* fixarray, 1 impact */
               0x85,                                               /* fixmap, 5 members */
               0xa2, 'i', 'd', 0xa6, 'b', 'u', 'l', 'l', 'e', 't', /* "id": "bullet" */
               0xa5, 'o', 't', 'h', 'e', 'r', 0xa6, 't', 'a', 'r', 'g', 'e', 't', /* "other": "target" */
               0xa4, 't', 'i', 'm', 'e', F64_HALF,                 /* "time": 0.5 */
               0xa5, 'p', 'o', 'i', 'n', 't', 0x93, F64_1, F64_1, F64_0, /* "point": [1, 1, 0] */
               0xa6, 'n', 'o', 'r', 'm', 'a', 'l', 0x93, F64_1, F64_0, F64_0, /* "normal": [1, 0, 0] */
               0xa5, 's', 't', 'a', 't', 's',                      /* fixstr 5 */
               0x84,                                               /* fixmap, 4 members */
               0xb0, 'b', 'r', 'o', 'a', 'd', 'p', 'h', 'a', 's', 'e', '_', 'p', 'a', 'i', 'r', 's', /* fixstr 16 */
               0x01,                                               /* positive fixint 1 */
               0xa6, 't', 'e', 's', 't', 'e', 'd', 0x01,           /* "tested": 1 */
               0xa8, 't', 'o', 'u', 'c', 'h', 'i', 'n', 'g', 0x01, /* "touching": 1 */
               0xa5, 's', 'w', 'e', 'p', 't', 0x00);               /* "swept": 0 */
    cq_world_destroy(world);
}
END_TEST

/* RFC 9457's members as problem+json has them, in MessagePack. */
START_TEST(golden_problem)
{
    cqp_problem p;
    cqp_fail(&p, CQP_P_BAD_VALUE, "/a/shape/radius", "a.shape.radius must be > 0");
    mdoc d;
    mdoc_init(&d);
    cqp_write_problem(&d.w, &p);
    MDOC_CHECK(&d,
               0x85,                                               /* fixmap, 5 members */
               0xa4, 't', 'y', 'p', 'e',                           /* fixstr 4 */
               0xd9, 0x24,                                         /* str8, 36 bytes: past fixstr's 31 */
               'u', 'r', 'n', ':', 'c', 'o', 'l', 'l', 'i', 's', 'i', 'o', 'n', 'd', ':', /* 15 */
               'p', 'r', 'o', 'b', 'l', 'e', 'm', ':',             /* 8 */
               'i', 'n', 'v', 'a', 'l', 'i', 'd', '-', 'v', 'a', 'l', 'u', 'e', /* 13 */
               0xa5, 't', 'i', 't', 'l', 'e',                      /* fixstr 5 */
               0xad, 'I', 'n', 'v', 'a', 'l', 'i', 'd', ' ', 'v', 'a', 'l', 'u', 'e', /* fixstr 13 */
               0xa6, 's', 't', 'a', 't', 'u', 's',                 /* fixstr 6 */
               0xcd, 0x01, 0x90,                                   /* uint16 400 = 0x0190 */
               0xa6, 'd', 'e', 't', 'a', 'i', 'l',                 /* fixstr 6 */
               0xba,                                               /* fixstr 26 (0xa0 | 0x1a) */
               'a', '.', 's', 'h', 'a', 'p', 'e', '.', 'r', 'a', 'd', 'i', 'u', 's', /* 14 */
               ' ', 'm', 'u', 's', 't', ' ', 'b', 'e', ' ', '>', ' ', '0', /* 12 */
               0xa7, 'p', 'o', 'i', 'n', 't', 'e', 'r',            /* fixstr 7 */
               0xaf,                                               /* fixstr 15 */
               '/', 'a', '/', 's', 'h', 'a', 'p', 'e', '/', 'r', 'a', 'd', 'i', 'u', 's');
}
END_TEST

/* ---- size boundaries ---- */

/* An array (or a map of nil-valued "k" members) of n elements. */
static void write_nils(cqp_writer *w, uint32_t n, bool map)
{
    if (map)
        cqp_obj_begin(w);
    else
        cqp_arr_begin(w);
    for (uint32_t i = 0; i < n; i++) {
        if (map)
            cqp_key(w, "k");
        cqp_null(w);
    }
    if (map)
        cqp_obj_end(w);
    else
        cqp_arr_end(w);
}

/* The container's header is header[0..h), then n elements of `each`
 * bytes, every one of them equal to element[0..each). */
static void check_container(uint32_t n, bool map, const uint8_t *header, size_t h)
{
    static const uint8_t member[] = {0xa1, 'k', 0xc0}, nil[] = {0xc0};
    const uint8_t *element = map ? member : nil;
    size_t each = map ? sizeof member : sizeof nil;
    mdoc d;
    mdoc_init(&d);
    write_nils(&d.w, n, map);
    ck_assert(!d.buf.oom);
    ck_assert_uint_eq(d.buf.len, h + (size_t)n * each);
    ck_assert_int_eq(memcmp(d.buf.data, header, h), 0);
    for (size_t i = 0; i < n; i++)
        nu_require(memcmp(d.buf.data + h + i * each, element, each) == 0, "element %zu", i);
    assert_one_value(d.buf.data, d.buf.len);
    cqp_buf_free(&d.buf);
}

START_TEST(header_boundaries)
{
    check_container(0, false, (const uint8_t[]){0x90}, 1);                       /* fixarray 0 */
    check_container(15, false, (const uint8_t[]){0x9f}, 1);                      /* fixarray 15 */
    check_container(16, false, (const uint8_t[]){0xdc, 0x00, 0x10}, 3);          /* array16 */
    check_container(65535, false, (const uint8_t[]){0xdc, 0xff, 0xff}, 3);       /* array16's last */
    check_container(65536, false, (const uint8_t[]){0xdd, 0x00, 0x01, 0x00, 0x00}, 5); /* array32 */
    check_container(0, true, (const uint8_t[]){0x80}, 1);                        /* fixmap 0 */
    check_container(15, true, (const uint8_t[]){0x8f}, 1);                       /* fixmap 15 */
    check_container(16, true, (const uint8_t[]){0xde, 0x00, 0x10}, 3);           /* map16 */
    check_container(65535, true, (const uint8_t[]){0xde, 0xff, 0xff}, 3);        /* map16's last */
    check_container(65536, true, (const uint8_t[]){0xdf, 0x00, 0x01, 0x00, 0x00}, 5); /* map32 */
}
END_TEST

/* A widened header moves only its own content: what encloses it and what
 * follows stay where they belong. */
START_TEST(header_widening_nested)
{
    mdoc d;
    mdoc_init(&d);
    cqp_arr_begin(&d.w);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "k");
    write_nils(&d.w, 16, false);
    cqp_key(&d.w, "m");
    write_nils(&d.w, 17, false);
    cqp_obj_end(&d.w);
    cqp_bool(&d.w, true);
    cqp_arr_end(&d.w);
    MDOC_CHECK(&d,
               0x92,                                               /* fixarray 2 */
               0x82,                                               /* fixmap 2 */
               0xa1, 'k', 0xdc, 0x00, 0x10,                        /* "k": array16 of 16 */
               0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0,
               0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0,
               0xa1, 'm', 0xdc, 0x00, 0x11,                        /* "m": array16 of 17 */
               0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0,
               0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0,
               0xc3);                                              /* true */

    /* Past array16 inside a map, with a member after it. */
    mdoc_init(&d);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "k");
    write_nils(&d.w, 65536, false);
    cqp_key(&d.w, "m");
    cqp_bool(&d.w, false);
    cqp_obj_end(&d.w);
    static const uint8_t head[] = {0x82, 0xa1, 'k', 0xdd, 0x00, 0x01, 0x00, 0x00}; /* fixmap 2, "k": array32 */
    static const uint8_t tail[] = {0xc0, 0xa1, 'm', 0xc2};                         /* the last nil, "m": false */
    ck_assert(!d.buf.oom);
    ck_assert_uint_eq(d.buf.len, sizeof head + 65536 + 3);
    ck_assert_int_eq(memcmp(d.buf.data, head, sizeof head), 0);
    ck_assert_int_eq(memcmp(d.buf.data + d.buf.len - sizeof tail, tail, sizeof tail), 0);
    assert_one_value(d.buf.data, d.buf.len);
    cqp_buf_free(&d.buf);
}
END_TEST

/* A str of n bytes 'x' (cqp_strn, and cqp_str when NUL-terminated) has
 * header[0..h). */
static void check_str(size_t n, const uint8_t *header, size_t h)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memset(s, 'x', n);
    s[n] = '\0';
    for (int nul_terminated = 0; nul_terminated < 2; nul_terminated++) {
        mdoc d;
        mdoc_init(&d);
        if (nul_terminated)
            cqp_str(&d.w, s);
        else
            cqp_strn(&d.w, s, n);
        ck_assert(!d.buf.oom);
        ck_assert_uint_eq(d.buf.len, h + n);
        ck_assert_int_eq(memcmp(d.buf.data, header, h), 0);
        ck_assert_int_eq(memcmp(d.buf.data + h, s, n), 0);
        assert_one_value(d.buf.data, d.buf.len);
        cqp_buf_free(&d.buf);
    }
    free(s);
}

START_TEST(string_boundaries)
{
    check_str(0, (const uint8_t[]){0xa0}, 1);                               /* fixstr 0 */
    check_str(31, (const uint8_t[]){0xbf}, 1);                              /* fixstr 31 */
    check_str(32, (const uint8_t[]){0xd9, 0x20}, 2);                        /* str8 */
    check_str(255, (const uint8_t[]){0xd9, 0xff}, 2);                       /* str8's last */
    check_str(256, (const uint8_t[]){0xda, 0x01, 0x00}, 3);                 /* str16 */
    check_str(65535, (const uint8_t[]){0xda, 0xff, 0xff}, 3);               /* str16's last */
    check_str(65536, (const uint8_t[]){0xdb, 0x00, 0x01, 0x00, 0x00}, 5);   /* str32 */
}
END_TEST

/* Keys are str like values, and cqp_strn keeps a NUL byte and stops at n. */
START_TEST(string_keys_and_nul)
{
    mdoc d;
    mdoc_init(&d);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "abcdefghijklmnopqrstuvwxyz012345"); /* 32 bytes: str8 */
    cqp_strn(&d.w, "a\0b\"", 4);
    cqp_key(&d.w, "");
    cqp_strn(&d.w, "xyz", 2);
    cqp_obj_end(&d.w);
    MDOC_CHECK(&d,
               0x82,                                               /* fixmap 2 */
               0xd9, 0x20,                                         /* str8, 32 bytes */
               'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p',
               'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5',
               0xa4, 'a', 0x00, 'b', '"',                          /* fixstr 4, unescaped */
               0xa0,                                               /* fixstr 0: the empty key */
               0xa2, 'x', 'y');                                    /* fixstr 2 */
}
END_TEST

/* The JSON half of cqp_strn: escaped as cqp_str escapes, NUL as \u0000. */
START_TEST(strn_json)
{
    cqp_buf buf = {0};
    cqp_writer w;
    cqp_writer_init(&w, &buf, false);
    cqp_arr_begin(&w);
    cqp_strn(&w, "a\0b\"\\\n", 6);
    cqp_strn(&w, "xyz", 2);
    cqp_strn(&w, NULL, 0);
    cqp_arr_end(&w);
    ck_assert(!buf.oom);
    ck_assert_str_eq(buf.data, "[\"a\\u0000b\\\"\\\\\\n\",\"xy\",\"\"]");
    cqp_buf_free(&buf);
}
END_TEST

/* ---- integers, numbers, constants ---- */

START_TEST(integer_boundaries)
{
    mdoc d;
    mdoc_init(&d);
    cqp_arr_begin(&d.w);
    static const int64_t ints[] = {0, 127, 128, 255, 256, 65535, 65536, -1, -32, -33, -128, -129, -32768, -32769,
                                   INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MIN, INT64_MAX};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        cqp_int(&d.w, ints[i]);
    cqp_uint(&d.w, UINT32_MAX);
    cqp_uint(&d.w, (uint64_t)UINT32_MAX + 1);
    cqp_uint(&d.w, UINT64_MAX);
    cqp_arr_end(&d.w);
    MDOC_CHECK(&d,
               0xdc, 0x00, 0x15,                                   /* array16 of 21 */
               0x00,                                               /* positive fixint 0 */
               0x7f,                                               /* positive fixint 127 */
               0xcc, 0x80,                                         /* uint8 128 */
               0xcc, 0xff,                                         /* uint8 255 */
               0xcd, 0x01, 0x00,                                   /* uint16 256 */
               0xcd, 0xff, 0xff,                                   /* uint16 65535 */
               0xce, 0x00, 0x01, 0x00, 0x00,                       /* uint32 65536 */
               0xff,                                               /* negative fixint -1 */
               0xe0,                                               /* negative fixint -32 */
               0xd0, 0xdf,                                         /* int8 -33 */
               0xd0, 0x80,                                         /* int8 -128 */
               0xd1, 0xff, 0x7f,                                   /* int16 -129 */
               0xd1, 0x80, 0x00,                                   /* int16 -32768 */
               0xd2, 0xff, 0xff, 0x7f, 0xff,                       /* int32 -32769 */
               0xd2, 0x80, 0x00, 0x00, 0x00,                       /* int32 -2^31 */
               0xd3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, /* int64 -2^31 - 1 */
               0xd3, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* int64 INT64_MIN */
               0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* uint64 INT64_MAX: non-negative */
               0xce, 0xff, 0xff, 0xff, 0xff,                       /* uint32 2^32 - 1 */
               0xcf, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* uint64 2^32 */
               0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff); /* uint64 UINT64_MAX */
}
END_TEST

/* Every number is a float64, integral ones too; -0 is +0 unless kept, and
 * what is not finite is nil. */
START_TEST(numbers_and_constants)
{
    mdoc d;
    mdoc_init(&d);
    cqp_arr_begin(&d.w);
    cqp_num(&d.w, 1.5);
    cqp_num(&d.w, 3);
    cqp_num(&d.w, -0.0);
    cqp_num(&d.w, -1e-300 * 1e-300); /* underflows to -0 */
    d.w.keep_negative_zero = true;
    cqp_num(&d.w, -0.0);
    d.w.keep_negative_zero = false;
    cqp_num(&d.w, NAN);
    cqp_num(&d.w, INFINITY);
    cqp_num(&d.w, -INFINITY);
    cqp_bool(&d.w, true);
    cqp_bool(&d.w, false);
    cqp_null(&d.w);
    cqp_vec3(&d.w, cq_v3(-0.0, NAN, 2));
    cqp_arr_end(&d.w);
    MDOC_CHECK(&d,
               0x9c,                                               /* fixarray 12 */
               0xcb, 0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1.5: mantissa .1 binary */
               0xcb, 0x40, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 3 = 1.1b x 2^1 */
               F64_0,                                              /* -0 written +0 */
               F64_0,                                              /* the underflow too */
               0xcb, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* -0 kept: the sign bit */
               0xc0, 0xc0, 0xc0,                                   /* NaN, +inf, -inf: nil */
               0xc3, 0xc2, 0xc0,                                   /* true, false, nil */
               0x93, F64_0, 0xc0, F64_2);                          /* [0, nil, 2] */
}
END_TEST

/* ---- depth and raw ---- */

START_TEST(depth_limit)
{
    mdoc d;
    mdoc_init(&d);
    for (int i = 0; i < CQP_WRITER_MAX_DEPTH; i++)
        cqp_arr_begin(&d.w);
    cqp_int(&d.w, 1);
    for (int i = 0; i < CQP_WRITER_MAX_DEPTH; i++)
        cqp_arr_end(&d.w);
    uint8_t expected[CQP_WRITER_MAX_DEPTH + 1];
    memset(expected, 0x91, CQP_WRITER_MAX_DEPTH); /* fixarray 1 at every level */
    expected[CQP_WRITER_MAX_DEPTH] = 0x01;
    mdoc_check(&d, expected, sizeof expected);

    /* One more level, or a vector at the deepest one, is not representable. */
    for (int vec = 0; vec < 2; vec++) {
        mdoc_init(&d);
        for (int i = 0; i < CQP_WRITER_MAX_DEPTH + !vec; i++)
            cqp_arr_begin(&d.w);
        if (vec)
            cqp_vec3(&d.w, cq_v3(1, 2, 3));
        for (int i = 0; i < 3 * CQP_WRITER_MAX_DEPTH; i++)
            cqp_obj_begin(&d.w);
        for (int i = 0; i < 4 * CQP_WRITER_MAX_DEPTH + !vec; i++)
            cqp_arr_end(&d.w);
        ck_assert(d.buf.oom);
        ck_assert_int_eq(d.w.depth, 0);
        cqp_buf_free(&d.buf);
    }
    /* An end without a begin marks the buffer. */
    mdoc_init(&d);
    cqp_obj_end(&d.w);
    ck_assert(d.buf.oom);
    cqp_buf_free(&d.buf);
}
END_TEST

/* A body already in MessagePack inside an envelope counts as one value. */
START_TEST(raw_embedding)
{
    static const char body[] = {(char)0x81, (char)0xa3, 'h', 'i', 't', (char)0xc0}; /* {"hit": nil} */
    mdoc d;
    mdoc_init(&d);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "id");
    cqp_int(&d.w, 7);
    cqp_key(&d.w, "body");
    cqp_raw(&d.w, body, sizeof body);
    cqp_key(&d.w, "list");
    cqp_arr_begin(&d.w);
    cqp_raw(&d.w, body, sizeof body);
    cqp_raw(&d.w, "\x01", 1);
    cqp_arr_end(&d.w);
    cqp_obj_end(&d.w);
    MDOC_CHECK(&d,
               0x83,                                               /* fixmap 3 */
               0xa2, 'i', 'd', 0x07,                               /* "id": 7 */
               0xa4, 'b', 'o', 'd', 'y',                           /* fixstr 4 */
               0x81, 0xa3, 'h', 'i', 't', 0xc0,                    /* the body verbatim */
               0xa4, 'l', 'i', 's', 't',                           /* fixstr 4 */
               0x92,                                               /* fixarray 2 */
               0x81, 0xa3, 'h', 'i', 't', 0xc0, 0x01);
}
END_TEST

/* An allocation failure midway leaves a buffer marked, never a crash or a
 * patch written past it. */
START_TEST(oom_midway)
{
    mdoc d;
    mdoc_init(&d);
    cqp_arr_begin(&d.w);
    for (int i = 0; i < 20; i++)
        cqp_int(&d.w, i);
    d.buf.oom = true;
    cqp_arr_end(&d.w);
    ck_assert(d.buf.oom);
    ck_assert_int_eq(d.w.depth, 0);
    ck_assert_int_eq((uint8_t)d.buf.data[0], 0x90); /* the reserved byte, untouched */
    cqp_buf_free(&d.buf);
}
END_TEST

Suite *proto_write_mp_suite(void)
{
    Suite *s = suite_create("proto_write_mp");
    TCase *tc = tcase_create("write_mp");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, golden_pair);
    tcase_add_test(tc, golden_contacts);
    tcase_add_test(tc, golden_problem);
    tcase_add_test(tc, header_boundaries);
    tcase_add_test(tc, header_widening_nested);
    tcase_add_test(tc, string_boundaries);
    tcase_add_test(tc, string_keys_and_nul);
    tcase_add_test(tc, strn_json);
    tcase_add_test(tc, integer_boundaries);
    tcase_add_test(tc, numbers_and_constants);
    tcase_add_test(tc, depth_limit);
    tcase_add_test(tc, raw_embedding);
    tcase_add_test(tc, oom_midway);
    suite_add_tcase(s, tc);
    return s;
}
