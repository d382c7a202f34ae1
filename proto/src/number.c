/* cqp_format_double: the first of "%.15g", "%.16g", "%.17g" that strtod
 * reads back bit-exactly, without calling printf three times.
 *
 * For |v| from about 1e-38 to 1e17 (where responses' numbers live, tiny
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

/* x = v 10^k in [1e16, 1e18) as its integer part q and what decides each
 * candidate beyond q: how the fraction compares with 1/2 (-1, 0, 1),
 * whether it is zero, and the largest integer distances from x to a
 * candidate above (up) or below (down, -1 when none) that stay inside
 * v's rounding interval, its ends included or not as strtod rounds. */
typedef struct scaled {
    uint64_t q;
    int half;
    bool frac;
    int64_t up, down;
} scaled;

/* The exact part: v = m 2^e with k in [0, MAX_K] and v 10^k in [1e16,
 * 1e18). v 10^k = m 5^k 2^-s is q + frac 2^-s; the half-gaps between v
 * and its neighbours, in units of 2^-(s+2), are 2 5^k above and below
 * (5^k below under a power of two, whose lower neighbour is nearer). */
static scaled scale(uint64_t m, int e, int k, bool pow2, bool even)
{
    u128 f = k <= 27 ? (u128)pow5[k] : (u128)pow5[27] * pow5[k - 27];
    uint64_t q;
    u128 frac, h;
    int s = -(k + e);
    if (s <= 0) {
        /* An integer (< 2^60, so m 5^k < 2^60 too). */
        q = (uint64_t)(m * f) << -s;
        frac = 0;
        h = f << (1 - s);
        s = 0;
    } else {
        /* m 5^k as hi 2^64 + lo: below 2^179, so hi < 2^115. And s <=
         * 125: x = m 5^k 2^-s >= 1e16 > 2^53 > m gives 2^s < 5^k < 2^126. */
        u128 a = (u128)m * (uint64_t)f;
        u128 hi = (u128)m * (uint64_t)(f >> 64) + (a >> 64);
        uint64_t lo = (uint64_t)a;
        if (s >= 64) {
            q = (uint64_t)(hi >> (s - 64));
            frac = (hi & (((u128)1 << (s - 64)) - 1)) << 64 | lo;
        } else {
            q = (uint64_t)(hi << (64 - s)) | lo >> s;
            frac = lo & ((UINT64_C(1) << s) - 1);
        }
        h = f << 1;
    }
    u128 h_lo = pow2 ? h >> 1 : h;
    /* Everything below 2^128: h < 2^127 and frac 4 < 2^127. */
    int u = s + 2;
    u128 f4 = frac << 2, unit = (u128)1 << u, mask = unit - 1;
    scaled x = {.q = q, .half = f4 > unit / 2 ? 1 : f4 == unit / 2 ? 0 : -1, .frac = frac != 0};
    /* A candidate z above q is at z - frac: inside when z frac-units are
     * at most h + frac (strictly below when odd and they are equal). */
    u128 t = h + f4;
    x.up = (int64_t)(t >> u) - (!even && (t & mask) == 0);
    /* One r below q is at r + frac: inside when r <= h_lo - frac (same). */
    if (f4 > h_lo) {
        x.down = -1;
    } else {
        t = h_lo - f4;
        x.down = (int64_t)(t >> u) - (!even && (t & mask) == 0);
    }
    return x;
}

/* scale() in 64-bit arithmetic, for k <= 27, a fraction (k + e < 0) and
 * equal gaps (not a power of two): m 5^k < 2^116 and x >= 2^53 give
 * s <= 62, and in units of 2^-(s+1) the half-gap is 5^k < 2^63, so
 * 5^k + 2 frac < 2^64. The common case: |v| from about 1e-11 to 2^53. */
static scaled scale64(uint64_t m, int e, int k, bool even)
{
    uint64_t f = pow5[k];
    int s = -(k + e), u = s + 1;
    u128 mf = (u128)m * f;
    uint64_t frac = (uint64_t)mf & ((UINT64_C(1) << s) - 1);
    uint64_t f2 = frac << 1, unit = UINT64_C(1) << u, mask = unit - 1;
    scaled x = {
        .q = (uint64_t)(mf >> s),
        .half = f2 > unit / 2 ? 1 : f2 == unit / 2 ? 0 : -1,
        .frac = frac != 0,
    };
    uint64_t t = f + f2;
    x.up = (int64_t)(t >> u) - (!even && (t & mask) == 0);
    if (f2 > f) {
        x.down = -1;
    } else {
        t = f - f2;
        x.down = (int64_t)(t >> u) - (!even && (t & mask) == 0);
    }
    return x;
}

/* x rounded to a multiple of p (half to even, as printf rounds), divided
 * by p; *fits tells whether that multiple lies inside v's rounding
 * interval. Inlined with a constant p. */
static inline uint64_t round_to(const scaled *x, uint64_t p, bool *fits)
{
    uint64_t d = x->q / p, r = x->q % p;
    bool up;
    if (p == 1)
        up = x->half > 0 || (x->half == 0 && (d & 1));
    else
        up = r > p / 2 || (r == p / 2 && (x->frac || (d & 1)));
    if (up) {
        *fits = (int64_t)(p - r) <= x->up;
        return d + 1;
    }
    *fits = (int64_t)r <= x->down;
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

/* The 8 decimal digits of v < 10^8 as byte values 0..9, the first in the
 * lowest byte: halves, quarters, then single digits are split in parallel
 * (x 10486 >> 20 is x / 100 below 10^4, x 103 >> 10 is x / 10 below 100;
 * no lane spills into the next). */
static inline uint64_t digits8(uint32_t v)
{
    uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
    uint64_t hi = (x * 10486 >> 20) & UINT64_C(0x0000007f0000007f);
    x = hi | (x - hi * 100) << 16;
    hi = (x * 103 >> 10) & UINT64_C(0x000f000f000f000f);
    return hi | (x - hi * 10) << 8;
}

/* Stores digits8's digits as 8 characters. */
static void put8(char *dst, uint64_t digits)
{
    uint64_t text = digits | UINT64_C(0x3030303030303030);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    text = __builtin_bswap64(text);
#endif
    memcpy(dst, &text, 8);
}

/* layout() for the exact path: digits is the n significant digits padded
 * with zeros to 17. They are written straight to their place in out, and
 * only the few before a point are moved; returns the length. */
static int fast_layout(uint64_t digits, int n, int e, bool neg, char *out)
{
    uint64_t rest = digits % UINT64_C(10000000000000000);
    char first = (char)('0' + digits / UINT64_C(10000000000000000));
    uint64_t mid = digits8((uint32_t)(rest / 100000000)), low = digits8((uint32_t)(rest % 100000000));
    /* Significant digits: trailing zero digits are the zero bytes at the
     * top of low, then of mid. */
    int nz = low ? 17 - __builtin_clzll(low) / 8 : mid ? 9 - __builtin_clzll(mid) / 8 : 1;
    char *p = out;
    *p = '-';
    p += neg;
    if (e < 0 && e >= -4) {
        /* 0.000ddd: at most 5 + 17 bytes. */
        memcpy(p, "0.000", 5);
        p += 1 - e;
        p[0] = first;
        put8(p + 1, mid);
        put8(p + 9, low);
        p += nz;
    } else {
        /* ddd.ddd (lead = e < n) or d.ddde+XX (lead = 0): the digits one
         * place up, then the lead + 1 before the point written again one
         * place down (from the registers: a copy within out would become a
         * memmove call); the point stays only before fraction digits (else
         * the exponent or the end overwrites it). */
        bool sci = e < -4 || e >= n;
        int lead = sci ? 0 : e;
        p[1] = first;
        put8(p + 2, mid);
        put8(p + 10, low);
        p[0] = first;
        for (int i = 1; i <= lead; i++)
            p[i] = (char)('0' + (i <= 8 ? mid >> (8 * (i - 1)) : low >> (8 * (i - 9))));
        p[lead + 1] = '.';
        p += nz > lead + 1 ? nz + 1 : lead + 1;
        if (sci)
            p = write_exp(p, e);
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
    int e = biased - 1075;
    bool pow2 = frac == 0 && biased > 1, even = (m & 1) == 0;
    scaled x = k <= 27 && k + e < 0 && !pow2 ? scale64(m, e, k, even) : scale(m, e, k, pow2, even);
    bool fits;

    /* n digits drop 17 - n of x's 17 integer digits (18 - n of 18); the
     * first candidate inside the interval wins, and 17 digits always are. */
    uint64_t digits;
    int n = 15;
    if (x.q < P17) {
        digits = round_to(&x, 100, &fits);
        if (!fits) {
            n = 16;
            digits = round_to(&x, 10, &fits);
            if (!fits) {
                n = 17;
                digits = round_to(&x, 1, &fits);
            }
        }
    } else {
        /* 18 digits: floor(log10 |v|) was x10 + 1. */
        x10++;
        digits = round_to(&x, 1000, &fits);
        if (!fits) {
            n = 16;
            digits = round_to(&x, 100, &fits);
            if (!fits) {
                n = 17;
                digits = round_to(&x, 10, &fits);
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
    return fast_layout(digits, n, x10, v < 0, out);
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
