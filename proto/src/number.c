/* cqp_format_double: the first of "%.15g", "%.16g", "%.17g" that strtod
 * reads back bit-exactly, without calling printf three times.
 *
 * For 1e-38 < |v| < 1e17 (where responses' numbers live, tiny normal
 * components like 6e-17 included) it is exact integer arithmetic: v * 10^k
 * = m 5^k 2^(k+e), scaled into [1e16, 1e18), is a 192-bit product split at
 * the binary point into a 64-bit integer part and a fraction of at most 125
 * bits, and the half-gaps to v's neighbours are 5^k in the same units.
 * Each n-digit candidate is v correctly rounded (ties to even, as glibc's
 * printf) and kept when it lies inside v's rounding interval (its ends
 * included when v's significand is even, as strtod breaks ties to even).
 * No printf, no strtod, no division by a variable: one pass, the digits
 * written two at a time.
 *
 * Elsewhere (and without a 128-bit type) "%.16e" gives v's 17 significant
 * digits correctly rounded; rounding those to n < 17 digits gives printf's
 * own n-digit rounding unless the dropped digits are exactly "5000..." (an
 * n-digit rounding boundary has at most 17 digits, so the 17-digit rounding
 * can only cross it by landing on it), and that tie is left to printf.
 * Candidates are then checked with strtod; 17 digits always read back.
 *
 * The text is laid out exactly as "%.<n>g" lays it out. Integers within
 * 2^53 are written as integers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/write.h"

/* A decimal in scientific form: digits d[0..n) (d[0] != '0'), d[0].d[1].. x 10^exp. */
typedef struct decimal {
    bool neg;
    int n;
    int exp;
    char d[20];
} decimal;

/* d laid out as "%.<precision>g" would: trailing zeros dropped, fixed
 * notation when -4 <= exp < precision, else d.ddde+XX. */
static int layout(const decimal *d, int precision, char *out)
{
    int n = d->n;
    while (n > 1 && d->d[n - 1] == '0')
        n--;
    char *p = out;
    if (d->neg)
        *p++ = '-';
    int e = d->exp;
    if (e < -4 || e >= precision) {
        *p++ = d->d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d->d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100)
            *p++ = (char)('0' + a / 100);
        *p++ = (char)('0' + a / 10 % 10);
        *p++ = (char)('0' + a % 10);
    } else if (e < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = -1; i > e; i--)
            *p++ = '0';
        memcpy(p, d->d, (size_t)n);
        p += n;
    } else {
        for (int i = 0; i <= e; i++)
            *p++ = i < n ? d->d[i] : '0';
        if (n > e + 1) {
            *p++ = '.';
            memcpy(p, d->d + e + 1, (size_t)(n - e - 1));
            p += n - e - 1;
        }
    }
    *p = '\0';
    return (int)(p - out);
}

/* "00".."99": decimal digits are written two at a time. */
static const char two_digits[200] = "0001020304050607080910111213141516171819"
                                    "2021222324252627282930313233343536373839"
                                    "4041424344454647484950515253545556575859"
                                    "6061626364656667686970717273747576777879"
                                    "8081828384858687888990919293949596979899";

/* The 8 decimal digits of v < 10^8, leading zeros included. */
static void write8(uint32_t v, char *dst)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(dst, two_digits + 2 * (hi / 100), 2);
    memcpy(dst + 2, two_digits + 2 * (hi % 100), 2);
    memcpy(dst + 4, two_digits + 2 * (lo / 100), 2);
    memcpy(dst + 6, two_digits + 2 * (lo % 100), 2);
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

/* 5^k up to 5^27, the last below 2^63; larger powers are products of two. */
static const uint64_t pow5[28] = {
    1u, 5u, 25u, 125u, 625u, 3125u, 15625u, 78125u, 390625u, 1953125u, 9765625u, 48828125u,
    244140625u, 1220703125u, 6103515625ull, 30517578125ull, 152587890625ull, 762939453125ull,
    3814697265625ull, 19073486328125ull, 95367431640625ull, 476837158203125ull, 2384185791015625ull,
    11920928955078125ull, 59604644775390625ull, 298023223876953125ull, 1490116119384765625ull,
    7450580596923828125ull,
};

/* The largest scaling: 5^54 < 2^126 keeps every sum below in 128 bits. */
#define MAX_K 54
#define P17 UINT64_C(100000000000000000)

/* x = v 10^k in [1e16, 1e18) as q + frac / 2^s (frac < 2^s, s <= 125),
 * and the gaps from v to half-way to its neighbours above (h) and below
 * (h_lo, half as wide under a power of two) in units of 2^-(s+2). */
typedef struct scaled {
    uint64_t q;
    u128 frac;
    int s;
    u128 h, h_lo;
} scaled;

/* v = m 2^e; k in [0, MAX_K] with v 10^k in [1e16, 1e18). */
static scaled scale(uint64_t m, int e, int k, bool pow2)
{
    u128 f = k <= 27 ? (u128)pow5[k] : (u128)pow5[27] * pow5[k - 27];
    scaled x;
    int sh = k + e;
    if (sh >= 0) {
        /* v 10^k is an integer (< 2^60, so m 5^k < 2^60 too). */
        x.q = (uint64_t)(m * f) << sh;
        x.frac = 0;
        x.s = 0;
        x.h = f << (sh + 1);
        x.h_lo = pow2 ? f << sh : x.h;
        return x;
    }
    /* m 5^k as hi 2^64 + lo: below 2^179, so hi < 2^115. */
    u128 a = (u128)m * (uint64_t)f;
    u128 hi = (u128)m * (uint64_t)(f >> 64) + (a >> 64);
    uint64_t lo = (uint64_t)a;
    int s = -sh;
    if (s >= 64) {
        x.q = (uint64_t)(hi >> (s - 64));
        x.frac = (hi & (((u128)1 << (s - 64)) - 1)) << 64 | lo;
    } else {
        x.q = (uint64_t)(hi << (64 - s)) | lo >> s;
        x.frac = lo & ((UINT64_C(1) << s) - 1);
    }
    x.s = s;
    x.h = f << 1;
    x.h_lo = pow2 ? f : x.h;
    return x;
}

/* x rounded to a multiple of p (half to even, as printf rounds), divided
 * by p; *fits tells whether that multiple lies inside v's rounding
 * interval (ends included when even). Always inlined with a constant p. */
static inline uint64_t round_to(const scaled *x, uint64_t p, bool even, bool *fits)
{
    uint64_t d = x->q / p, r = x->q % p;
    int u = x->s + 2;
    u128 f4 = x->frac << 2, unit = (u128)1 << u;
    bool up;
    if (p == 1)
        up = f4 > unit / 2 || (f4 == unit / 2 && (d & 1));
    else
        up = r > p / 2 || (r == p / 2 && (f4 != 0 || (d & 1)));
    if (up) {
        /* (p - r) - frac against h, as integer and fractional parts. */
        u128 t = x->h + f4;
        u128 whole = t >> u;
        *fits = p - r < whole || (p - r == whole && (even || (t & (unit - 1)) != 0));
        return d + 1;
    }
    if (f4 > x->h_lo) {
        *fits = false;
    } else {
        u128 t = x->h_lo - f4;
        u128 whole = t >> u;
        *fits = r < whole || (r == whole && (even || (t & (unit - 1)) != 0));
    }
    return d;
}

/* floor(log10(2^e)) for |e| <= 1650, without floating point: 78913 / 2^18
 * is log10(2) closely enough; the offset keeps the shift non-negative. */
static int floor_log10_pow2(int e)
{
    return (int)((((int64_t)e * 78913) + ((int64_t)1 << 40)) >> 18) - (1 << 22);
}

/* The exponent of "%g": e+XX, e-XX, e+XXX; returns the end. */
static char *write_exp(char *p, int e)
{
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    unsigned a = (unsigned)(e < 0 ? -e : e);
    if (a >= 100) {
        *p++ = (char)('0' + a / 100);
        a %= 100;
    }
    memcpy(p, two_digits + 2 * a, 2);
    return p + 2;
}

/* layout() for the exact path's digits: d holds 17 digits and then '0's
 * up to 32 bytes, of which the first n count. Fixed-size copies (out has
 * CQP_DOUBLE_CHARS bytes) instead of loops; returns the length. */
static int fast_layout(const char d[32], int n, int e, bool neg, char *out)
{
    int nz = n;
    while (nz > 1 && d[nz - 1] == '0')
        nz--;
    char *p = out;
    if (neg)
        *p++ = '-';
    if (e < -4 || e >= n) {
        /* d.ddde+XX: at most 1 + 1 + 16 + 5 bytes after the sign. */
        p[0] = d[0];
        p[1] = '.';
        memcpy(p + 2, d + 1, 16);
        p = write_exp(p + (nz > 1 ? nz + 1 : 1), e);
    } else if (e < 0) {
        /* 0.000ddd: at most 5 + 17 bytes. */
        memcpy(p, "0.000", 5);
        memcpy(p + 1 - e, d, 17);
        p += 1 - e + nz;
    } else if (e + neg <= 14) {
        /* ddd.ddd: the digits, then the fraction moved up by one for the
         * point (the second copy ends at neg + e + 18 <= 32 bytes of out). */
        memcpy(p, d, 16);
        memcpy(p + e + 2, d + e + 1, 16);
        p[e + 1] = '.';
        p += nz > e + 1 ? nz + 1 : e + 1;
    } else {
        /* e >= 14 and e < n <= 17: at most two fraction digits. */
        memcpy(p, d, 17);
        p += e + 1;
        if (nz > e + 1) {
            *p++ = '.';
            memcpy(p, d + e + 1, 2);
            p += nz - e - 1;
        }
    }
    *p = '\0';
    return (int)(p - out);
}

/* The exact path: the length written to out, or -1 when v is out of its
 * range. */
static int exact_format(double v, char *out)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int biased = (int)(bits >> 52 & 0x7ff);
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    if (biased == 0)
        return -1;
    /* v is in [2^(biased-1023), 2^(biased-1022)), so floor(log10 |v|) is
     * x10 or x10 + 1, and v 10^(16 - x10) is in [1e16, 1e18). */
    int x10 = floor_log10_pow2(biased - 1023);
    int k = 16 - x10;
    if (k < 0 || k > MAX_K)
        return -1;
    uint64_t m = frac | UINT64_C(1) << 52;
    scaled x = scale(m, biased - 1075, k, frac == 0 && biased > 1);
    bool even = (m & 1) == 0, fits;

    /* n digits drop 17 - n of x's 17 integer digits (18 - n of 18); the
     * first candidate inside the interval wins, and 17 digits always are. */
    uint64_t digits;
    int n = 15;
    if (x.q < P17) {
        digits = round_to(&x, 100, even, &fits);
        if (!fits) {
            n = 16;
            digits = round_to(&x, 10, even, &fits);
            if (!fits) {
                n = 17;
                digits = round_to(&x, 1, even, &fits);
            }
        }
    } else {
        x10++;
        digits = round_to(&x, 1000, even, &fits);
        if (!fits) {
            n = 16;
            digits = round_to(&x, 100, even, &fits);
            if (!fits) {
                n = 17;
                digits = round_to(&x, 10, even, &fits);
            }
        }
    }
    /* Rounding 99..9 up gives 10^n: one digit, a decade up. Either way the
     * n digits, padded with zeros to 17, are digits 10^(17-n). */
    static const uint64_t pad[3] = {100, 10, 1};
    digits *= pad[n - 15];
    if (digits == P17) {
        digits /= 10;
        x10++;
    }
    char d[32];
    memset(d + 16, '0', 16);
    uint64_t rest = digits % UINT64_C(10000000000000000);
    d[0] = (char)('0' + digits / UINT64_C(10000000000000000));
    write8((uint32_t)(rest / 100000000), d + 1);
    write8((uint32_t)(rest % 100000000), d + 9);
    return fast_layout(d, n, x10, v < 0, out);
}
#else
static int exact_format(double v, char *out)
{
    (void)v, (void)out;
    return -1;
}
#endif

/* Reads printf's "%.*e" output ("-d.ddde+XX") into *out. */
static void parse_sci(const char *s, decimal *out)
{
    out->neg = *s == '-';
    if (out->neg)
        s++;
    out->n = 0;
    for (; *s != 'e'; s++)
        if (*s != '.')
            out->d[out->n++] = *s;
    out->exp = atoi(s + 1);
}

/* v's digits rounded to n significant digits (1 <= n < 17) from its 17. */
static void round_digits(double v, const decimal *d17, int n, decimal *out)
{
    bool tie = d17->d[n] == '5';
    for (int i = n + 1; tie && i < d17->n; i++)
        tie = d17->d[i] == '0';
    if (tie) {
        char sci[CQP_DOUBLE_CHARS];
        snprintf(sci, sizeof sci, "%.*e", n - 1, v);
        parse_sci(sci, out);
        return;
    }
    *out = *d17;
    out->n = n;
    if (d17->d[n] < '5')
        return;
    int i = n - 1;
    while (i >= 0 && out->d[i] == '9')
        out->d[i--] = '0';
    if (i >= 0) {
        out->d[i]++;
    } else {
        out->d[0] = '1';
        out->exp++;
    }
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The printf path: the first candidate of 15, 16 digits strtod reads back,
 * else 17. */
static int printf_format(double v, char *out)
{
    char sci[CQP_DOUBLE_CHARS];
    snprintf(sci, sizeof sci, "%.16e", v);
    decimal d17, d;
    parse_sci(sci, &d17);
    for (int n = 15; n <= 16; n++) {
        round_digits(v, &d17, n, &d);
        int len = layout(&d, n, out);
        if (same_double(strtod(out, NULL), v))
            return len;
    }
    return layout(&d17, 17, out);
}

static int format_integer(int64_t i, char *out)
{
    char tmp[24];
    char *end = tmp + sizeof tmp, *p = end;
    uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    for (; u >= 100; u /= 100)
        memcpy(p -= 2, two_digits + 2 * (u % 100), 2);
    if (u >= 10)
        memcpy(p -= 2, two_digits + 2 * u, 2);
    else
        *--p = (char)('0' + u);
    if (i < 0)
        *--p = '-';
    int len = (int)(end - p);
    memcpy(out, p, (size_t)len);
    out[len] = '\0';
    return len;
}

int cqp_format_double(double v, char out[CQP_DOUBLE_CHARS])
{
    if (v == 0) {
        strcpy(out, signbit(v) ? "-0" : "0");
        return signbit(v) ? 2 : 1;
    }
    if (fabs(v) <= 0x1p53 && v == (double)(int64_t)v)
        return format_integer((int64_t)v, out);
    int len = exact_format(v, out);
    return len >= 0 ? len : printf_format(v, out);
}
