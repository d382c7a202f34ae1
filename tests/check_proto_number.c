/* Shortest round-trip doubles (cqp_format_double), the text every number
 * of the wire is written as. Oracles: strtod reads the text back to the same
 * bits; integers match printf's exact "%.0f"; other values match the first
 * of printf's "%.15g", "%.16g", "%.17g" that reads back, and one digit fewer
 * does not; jansson reads the text as the same number; and a hand-written
 * table of edge values (zeros, subnormals, DBL_MAX, the ends of the integer
 * range). */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/write.h"
#include "number_util.h"
#include "testutil.h"

/* Significant digits of a number's text: first to last non-zero digit of
 * the mantissa (at least 1). */
static int significant_digits(const char *s)
{
    int first = -1, last = -1, i = 0;
    for (const char *p = s; *p && *p != 'e'; p++) {
        if (*p < '0' || *p > '9')
            continue;
        if (*p != '0') {
            if (first < 0)
                first = i;
            last = i;
        }
        i++;
    }
    return first < 0 ? 1 : last - first + 1;
}

/* True when strtod reads "%.<p>g" of v back as v. */
static bool printf_round_trips(double v, int p, char *text, size_t size)
{
    snprintf(text, size, "%.*g", p, v);
    return nu_same_bits(strtod(text, NULL), v);
}

/* Every oracle for one finite value. */
static void check_double(double v)
{
    char out[CQP_DOUBLE_CHARS + 8];
    memset(out, '#', sizeof out);
    int len = cqp_format_double(v, out);
    nu_require(len > 0 && len < CQP_DOUBLE_CHARS && strlen(out) == (size_t)len, "%a: length %d", v, len);
    nu_require(nu_same_bits(strtod(out, NULL), v), "%s does not read back as %a", out, v);
    nu_require(out[0] != '+' && !strpbrk(out, "nNiI"), "%a: %s", v, out);

    char ref[64];
    if (v == 0) {
        nu_require(strcmp(out, signbit(v) ? "-0" : "0") == 0, "%a: %s", v, out);
    } else if (fabs(v) <= 0x1p53 && v == floor(v)) {
        /* Integers are written as integers: printf's "%.0f" is exact. */
        snprintf(ref, sizeof ref, "%.0f", v);
        nu_require(strcmp(out, ref) == 0, "%a: %s, not %s", v, out, ref);
    } else {
        /* Shortest: one digit fewer does not read back (below 15 digits
         * "%.15g" already dropped the zeros), and the text is the first of
         * printf's 15, 16, 17 digits that reads back. */
        int k = significant_digits(out);
        nu_require(k <= 17, "%a: %s", v, out);
        nu_require(k <= 15 || !printf_round_trips(v, k - 1, ref, sizeof ref), "%s: %s also reads back", out, ref);
        int p = 15;
        while (p < 17 && !printf_round_trips(v, p, ref, sizeof ref))
            p++;
        if (p == 17)
            snprintf(ref, sizeof ref, "%.17g", v);
        nu_require(strcmp(out, ref) == 0, "%a: %s, not %s", v, out, ref);
    }

    /* Valid JSON that jansson reads as the same number. */
    char json[CQP_DOUBLE_CHARS + 2];
    snprintf(json, sizeof json, "[%s]", out);
    json_t *a = json_loads(json, 0, NULL);
    nu_require(a != NULL, "jansson rejects %s", json);
    nu_require(nu_same_bits(json_number_value(json_array_get(a, 0)), v) || v == 0, "%s", json);
    json_decref(a);
}

START_TEST(double_edge_values)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {1.0, "1"},
        {-3.0, "-3"},
        {0.1, "0.1"},
        {1.0 / 3, "0.3333333333333333"},
        {2.0 / 3, "0.6666666666666666"},
        {0.1 + 0.2, "0.30000000000000004"},
        {0x1p53, "9007199254740992"},
        {-0x1p53, "-9007199254740992"},
        {0x1p53 + 2, "9007199254740994"},
        {1e15, "1000000000000000"},
        {1e16, "1e+16"},
        {1e21, "1e+21"},
        {1e23, "1e+23"},
        {1e-7, "1e-07"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {123456.789, "123456.789"},
        {-1.5, "-1.5"},
        {3.141592653589793, "3.141592653589793"},
        {1.5e300, "1.5e+300"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {-DBL_MAX, "-1.7976931348623157e+308"},
        {DBL_MIN, "2.2250738585072014e-308"},
        {0x1.ffffffffffffep-1023, "2.225073858507201e-308"},
        {0x1p-1074, "4.94065645841247e-324"},
        {0x3p-1074, "1.48219693752374e-323"},
        {0x1p-100, "7.888609052210118e-31"},
        {0x1p100, "1.2676506002282294e+30"},
        {0x1p1023, "8.98846567431158e+307"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[CQP_DOUBLE_CHARS];
        int len = cqp_format_double(cases[i].v, out);
        ck_assert_str_eq(out, cases[i].text);
        ck_assert_int_eq(len, (int)strlen(cases[i].text));
        check_double(cases[i].v);
    }
}
END_TEST

/* 64 random bits from the suite's generator (two 32-bit halves). */
static uint64_t random_bits(tu_rng *rng)
{
    uint64_t hi = (uint64_t)tu_uniform(rng, 0, 0x1p32);
    uint64_t lo = (uint64_t)tu_uniform(rng, 0, 0x1p32);
    return hi << 32 | lo;
}

START_TEST(double_random_bit_patterns)
{
    tu_rng rng = {20240605};
    int checked = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = random_bits(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        check_double(v);
        checked++;
    }
    ck_assert_int_gt(checked, 95000);
}
END_TEST

START_TEST(double_exact_range)
{
    /* Random significands with exponents from 1e-13 to 1e19, around the
     * range where the digits come from integer arithmetic, and short
     * decimals at every scale of that range. */
    tu_rng rng = {31337};
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = random_bits(&rng);
        uint64_t biased = 980 + bits % 110;
        bits = (bits & ~(UINT64_C(0x7ff) << 52)) | biased << 52;
        double v;
        memcpy(&v, &bits, sizeof v);
        check_double(v);
    }
    for (int e = -13; e <= 19; e++)
        for (int i = 0; i < 2000; i++) {
            double v = round(tu_uniform(&rng, 1, 10) * 1e4) / 1e4 * pow(10, e);
            check_double(v);
            check_double(nextafter(v, 0));
        }
    /* Exact ties at the 17th digit (printf rounds them to even), the ends
     * of the integer range, and a carry into a new leading digit. */
    static const double edges[] = {
        1250000000000000.25, 1250000000000000.75, 1250000000000001.25, 0.0625, 1e-11, 1e17,
        99999999999999.995, 0.99999999999999994, 9.9999999999999995e-12, 0x1p-37, 0x1p56, 0x1.fffffffffffffp56,
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        check_double(edges[i]);
        check_double(-edges[i]);
        check_double(nextafter(edges[i], 0));
        check_double(nextafter(edges[i], INFINITY));
    }
}
END_TEST

START_TEST(double_random_values)
{
    /* Values as the core computes them, short decimals as clients send
     * them, powers of two (asymmetric rounding gaps), and their neighbours. */
    tu_rng rng = {7};
    for (int i = 0; i < 50000; i++) {
        double v = tu_uniform(&rng, -1000, 1000);
        check_double(v);
        check_double(nextafter(v, INFINITY));
        double short_decimal = round(v * 1000) / 1000;
        check_double(short_decimal);
        check_double(v * 1e-9);
    }
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1, e);
        check_double(p);
        check_double(-p);
        check_double(nextafter(p, 0));
        check_double(nextafter(p, INFINITY));
    }
    for (double p = 1e-320; p < 1e300; p *= 10) {
        check_double(p);
        check_double(nextafter(p, 0));
    }
}
END_TEST

Suite *proto_number_suite(void)
{
    Suite *s = suite_create("proto_number");
    TCase *tc = tcase_create("number");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, double_edge_values);
    tcase_add_test(tc, double_random_bit_patterns);
    tcase_add_test(tc, double_exact_range);
    tcase_add_test(tc, double_random_values);
    suite_add_tcase(s, tc);
    return s;
}
