/* MessagePack in proto, what cqp_mp_check refuses: truncation, trailing
 * bytes, keys, ext/bin/reserved bytes, UTF-8, depth, headers claiming more
 * than the bytes left, duplicate keys, a million elements, scratch failure.
 * Oracles: byte offsets in details counted by hand from the golden layouts
 * of mp_util.h, a counting allocator (no allocation for the hostile
 * headers), and tests/fuzz/mp_oracle.h's recursive validator written from
 * the spec (sharing nothing with the check), which must agree with it on
 * every one-byte edit of the golden bodies. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/mp_oracle.h"
#include "mp_util.h"

Suite *proto_mp_hostile_suite(void);

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
    ck_assert_uint_eq(cqp_value_size(v), n);
    cqp_iter it;
    cqp_value e;
    int64_t sum = 0;
    for (cqp_value_iter_init(&it, v); cqp_value_next(&it, &e);)
        sum += cqp_value_int(e);
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
    ck_assert_uint_eq(cqp_value_size(cqp_value_mp(C_(b))), 1000000);
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

/* ---- against the oracle ----------------------------------------------- */

static void agree(const unsigned char *b, size_t n, const char *what, size_t at, int byte)
{
    cqp_problem p = {0};
    bool got = cqp_mp_check(C_(b), n, CQP_MP_MAX_DEPTH, &p) == 0;
    int deepest;
    bool want = mpo_check(b, n, CQP_MP_MAX_DEPTH, &deepest);
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
    unsigned char e[512];
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
    int deepest;
    ck_assert(mpo_check(pair_f64, sizeof pair_f64, CQP_MP_MAX_DEPTH, &deepest));
    ck_assert(mpo_check(kinds_doc, sizeof kinds_doc, CQP_MP_MAX_DEPTH, &deepest));
    edits_agree(pair_f64, sizeof pair_f64);
    edits_agree(pair_f32, sizeof pair_f32);
    edits_agree(kinds_doc, sizeof kinds_doc);
}
END_TEST

/* ---- a tick's moves (the check's whole-move path) ----------------------- */

/* A move {"id", "pose": {"position", "rotation"}, "velocity"} as a tick
 * client writes it, float64 numbers, from the spec's bytes; returns its
 * length. */
static size_t tick_move(unsigned char *b, const char *id, double v)
{
    size_t n = 0, len = strlen(id);
    static const char *const keys[] = {"pose", "position", "rotation", "velocity"};
    b[n++] = 0x83;
    b[n++] = 0xa2, b[n++] = 'i', b[n++] = 'd';
    b[n++] = (unsigned char)(0xa0 + len);
    memcpy(b + n, id, len), n += len;
    for (int k = 0; k < 4; k++) {
        b[n++] = (unsigned char)(0xa0 + strlen(keys[k]));
        memcpy(b + n, keys[k], strlen(keys[k])), n += strlen(keys[k]);
        if (k == 0) {
            b[n++] = 0x82;
            continue;
        }
        int count = k == 2 ? 4 : 3;
        b[n++] = (unsigned char)(0x90 + count);
        for (int j = 0; j < count; j++, v += 0.25) {
            uint64_t u;
            memcpy(&u, &v, 8);
            b[n++] = 0xcb;
            for (int s = 56; s >= 0; s -= 8)
                b[n++] = (unsigned char)(u >> s);
        }
    }
    return n;
}

/* {"move": [moves]} around tick moves of the given ids. */
static size_t tick_batch(unsigned char *b, const char *const *ids, int count)
{
    size_t n = 0;
    b[n++] = 0x81;
    b[n++] = 0xa4;
    memcpy(b + n, "move", 4), n += 4;
    b[n++] = (unsigned char)(0x90 + count);
    for (int k = 0; k < count; k++)
        n += tick_move(b + n, ids[k], k);
    return n;
}

/* The check takes a tick's moves whole; every edit of them (a key, a lead
 * byte, an id byte, a length, a cut) still gets the oracle's answer. */
START_TEST(test_tick_moves_agree_with_oracle)
{
    static const char *const ids[] = {"b1", "ab:cd.ef-90123"};
    unsigned char b[400];
    size_t n = tick_batch(b, ids, 2);
    int deepest;
    ck_assert(mpo_check(b, n, CQP_MP_MAX_DEPTH, &deepest));
    accepted(b, n);
    edits_agree(b, n);
    static const char *const long_id[] = {"0123456789abcdefghijklmnopqrstu"}; /* 31 bytes: the longest fixstr */
    n = tick_batch(b, long_id, 1);
    accepted(b, n);
    edits_agree(b, n);
}
END_TEST

/* A tick's move nested so that its vectors are the deepest containers
 * the limit allows, then one level deeper; and an id that is not ASCII. */
START_TEST(test_tick_move_depth_and_utf8)
{
    unsigned char b[400];
    for (int outer = 28; outer <= 30; outer++) { /* the move at depth outer + 1, its vectors at + 3 */
        memset(b, 0x91, (size_t)outer);
        size_t n = (size_t)outer + tick_move(b + outer, "b7", 1.5);
        cqp_problem p = {0};
        int deepest;
        bool want = mpo_check(b, n, CQP_MP_MAX_DEPTH, &deepest);
        ck_assert_int_eq(want, outer + 3 <= CQP_MP_MAX_DEPTH);
        ck_assert_int_eq(cqp_mp_check(C_(b), n, CQP_MP_MAX_DEPTH, &p) == 0, want);
    }
    size_t n = tick_move(b, "b\xc3\xa9", 0); /* "bé": valid UTF-8, off the ASCII path */
    accepted(b, n);
    n = tick_move(b, "b\xc3(", 0); /* a truncated sequence */
    refused(b, n, "invalid UTF-8 at byte 6 in a string");
}
END_TEST

Suite *proto_mp_hostile_suite(void)
{
    Suite *s = suite_create("proto_mp_hostile");
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
    tcase_add_test(hostile, test_tick_moves_agree_with_oracle);
    tcase_add_test(hostile, test_tick_move_depth_and_utf8);
    suite_add_tcase(s, hostile);
    return s;
}
