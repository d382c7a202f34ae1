/* The bounded MessagePack reader: a reply is not trusted, so every header
 * is read only after its bytes are known to be there, and every length or
 * count is held to the bytes left before anything is walked or copied
 * (as proto/src/mp_check.c holds a request). */
#include <math.h>

#include "cqc_int.h"

enum { T_UINT, T_INT, T_NIL, T_BOOL, T_FLOAT, T_STR, T_SKIP, T_ARR, T_MAP };

/* One header: its type, the integer or length or count it carries, the
 * number it is, and its own size in bytes. */
typedef struct head {
    int type;
    uint64_t u;
    int64_t i;
    double d;
    size_t size;
} head;

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v = v << 8 | p[k];
    return v;
}

/* Lead bytes 0xc0..0xdf: type and the byte count of the field after the lead. */
static const struct {
    uint8_t type, field;
} lead[32] = {
    [0x00] = {T_NIL, 0},  [0x01] = {T_SKIP, 255}, [0x02] = {T_BOOL, 0},  [0x03] = {T_BOOL, 0},
    [0x04] = {T_SKIP, 1}, [0x05] = {T_SKIP, 2},   [0x06] = {T_SKIP, 4},  [0x07] = {T_SKIP, 1},
    [0x08] = {T_SKIP, 2}, [0x09] = {T_SKIP, 4},   [0x0a] = {T_FLOAT, 4}, [0x0b] = {T_FLOAT, 8},
    [0x0c] = {T_UINT, 1}, [0x0d] = {T_UINT, 2},   [0x0e] = {T_UINT, 4},  [0x0f] = {T_UINT, 8},
    [0x10] = {T_INT, 1},  [0x11] = {T_INT, 2},    [0x12] = {T_INT, 4},   [0x13] = {T_INT, 8},
    [0x14] = {T_SKIP, 0}, [0x15] = {T_SKIP, 0},   [0x16] = {T_SKIP, 0},  [0x17] = {T_SKIP, 0},
    [0x18] = {T_SKIP, 0}, [0x19] = {T_STR, 1},    [0x1a] = {T_STR, 2},   [0x1b] = {T_STR, 4},
    [0x1c] = {T_ARR, 2},  [0x1d] = {T_ARR, 4},    [0x1e] = {T_MAP, 2},   [0x1f] = {T_MAP, 4},
};

/* The payload bytes of a skipped bin, ext or fixext after its field. */
static uint64_t skip_bytes(unsigned char c, uint64_t field)
{
    if (c >= 0xd4 && c <= 0xd8)
        return 1 + (1u << (c - 0xd4));   /* type byte + 1, 2, 4, 8 or 16 */
    return c >= 0xc7 ? field + 1 : field; /* ext: a type byte after the length */
}

static void fixed(unsigned char c, head *h)
{
    h->size = 1;
    if (c < 0x80)
        *h = (head){T_UINT, c, 0, c, 1};
    else if (c >= 0xe0)
        *h = (head){T_INT, 0, (int8_t)c, (int8_t)c, 1};
    else if (c < 0x90)
        *h = (head){T_MAP, c & 0x0f, 0, 0, 1};
    else if (c < 0xa0)
        *h = (head){T_ARR, c & 0x0f, 0, 0, 1};
    else
        *h = (head){T_STR, c & 0x1f, 0, 0, 1};
}

static void number(unsigned char c, const unsigned char *f, int n, head *h)
{
    uint64_t v = be(f, n);
    if (h->type == T_FLOAT) {
        if (n == 4) {
            uint32_t b = (uint32_t)v;
            float x;
            memcpy(&x, &b, 4);
            h->d = x;
        } else {
            memcpy(&h->d, &v, 8);
        }
    } else if (h->type == T_UINT) {
        h->u = v;
        h->d = (double)v;
    } else if (h->type == T_INT) {
        int64_t s = n == 1 ? (int8_t)v : n == 2 ? (int16_t)v : n == 4 ? (int32_t)v : (int64_t)v;
        h->i = s;
        h->d = (double)s;
    } else {
        h->u = h->type == T_SKIP ? skip_bytes(c, v) : v;
        if (h->type == T_BOOL)
            h->u = c == 0xc3;
    }
}

/* Reads the header at r->p without consuming it; false when it is cut
 * short, reserved (0xc1), or claims more than the bytes left. */
static bool peek(cqc_rd *r, head *h)
{
    if (r->bad || r->p >= r->end)
        return cqc__fail(r);
    const unsigned char *p = (const unsigned char *)r->p;
    size_t left = (size_t)(r->end - r->p);
    if (*p < 0xc0 || *p >= 0xe0) {
        fixed(*p, h);
    } else {
        int n = lead[*p - 0xc0].field;
        if (n == 255 || left < 1 + (size_t)n)
            return cqc__fail(r);
        *h = (head){.type = lead[*p - 0xc0].type, .size = 1 + (size_t)n};
        number(*p, p + 1, n, h);
    }
    left -= h->size;
    /* A str or a skipped payload needs its bytes; an array's values one
     * byte each at least, a map's members two. */
    if ((h->type == T_STR || h->type == T_SKIP) && h->u > left)
        return cqc__fail(r);
    if ((h->type == T_ARR && h->u > left) || (h->type == T_MAP && h->u > left / 2))
        return cqc__fail(r);
    return true;
}

static bool take(cqc_rd *r, int type, head *h)
{
    if (!peek(r, h) || h->type != type)
        return cqc__fail(r);
    r->p += h->size;
    return true;
}

/* The fast paths below take the forms a reply is mostly made of (fixmap,
 * fixarray, fixstr, float64, fixint) straight from the lead byte, each
 * against the same bound as peek's; anything else goes through peek. */
static inline size_t left(const cqc_rd *r)
{
    return (size_t)(r->end - r->p);
}

bool cqc__rd_map(cqc_rd *r, uint32_t *n)
{
    unsigned char c = r->p < r->end ? (unsigned char)*r->p : 0;
    if (c >= 0x80 && c <= 0x8f && !r->bad && (size_t)(c & 0x0f) <= (left(r) - 1) / 2) {
        *n = c & 0x0f;
        r->p++;
        return true;
    }
    head h;
    if (!take(r, T_MAP, &h))
        return false;
    *n = (uint32_t)h.u;
    return true;
}

bool cqc__rd_arr(cqc_rd *r, uint32_t *n)
{
    unsigned char c = r->p < r->end ? (unsigned char)*r->p : 0;
    if (c >= 0x90 && c <= 0x9f && !r->bad && (size_t)(c & 0x0f) <= left(r) - 1) {
        *n = c & 0x0f;
        r->p++;
        return true;
    }
    head h;
    if (!take(r, T_ARR, &h))
        return false;
    *n = (uint32_t)h.u;
    return true;
}

bool cqc__rd_str(cqc_rd *r, const char **s, uint32_t *n)
{
    unsigned char c = r->p < r->end ? (unsigned char)*r->p : 0;
    if (c >= 0xa0 && c <= 0xbf && !r->bad && (size_t)(c & 0x1f) <= left(r) - 1) {
        *s = r->p + 1;
        *n = c & 0x1f;
        r->p += 1 + *n;
        return true;
    }
    head h;
    if (!take(r, T_STR, &h))
        return false;
    *s = r->p;
    *n = (uint32_t)h.u;
    r->p += h.u;
    return true;
}

bool cqc__rd_num(cqc_rd *r, double *v)
{
    unsigned char c = r->p < r->end ? (unsigned char)*r->p : 0xc1;
    if (c == 0xcb && !r->bad && left(r) >= 9) {
        uint64_t b = be((const unsigned char *)r->p + 1, 8);
        double d;
        memcpy(&d, &b, 8);
        if (isfinite(d)) {
            *v = d;
            r->p += 9;
            return true;
        }
    } else if (c < 0x80 && !r->bad) {
        *v = c;
        r->p++;
        return true;
    }
    head h;
    if (!peek(r, &h) || (h.type != T_UINT && h.type != T_INT && h.type != T_FLOAT) || !isfinite(h.d))
        return cqc__fail(r);
    r->p += h.size;
    *v = h.d;
    return true;
}

bool cqc__rd_uint(cqc_rd *r, uint64_t *v)
{
    head h;
    if (!peek(r, &h) || (h.type != T_UINT && !(h.type == T_INT && h.i >= 0)))
        return cqc__fail(r);
    r->p += h.size;
    *v = h.type == T_UINT ? h.u : (uint64_t)h.i;
    return true;
}

bool cqc__rd_bool(cqc_rd *r, bool *v)
{
    head h;
    if (!take(r, T_BOOL, &h))
        return false;
    *v = h.u != 0;
    return true;
}

bool cqc__rd_nil(cqc_rd *r)
{
    if (r->bad || r->p >= r->end || (unsigned char)*r->p != 0xc0)
        return false;
    r->p++;
    return true;
}

/* Iterative, so a deeply nested reply cannot exhaust the stack; the count
 * of values still due is held to the bytes left, so it cannot overflow. */
bool cqc__rd_skip(cqc_rd *r)
{
    uint64_t due = 1;
    while (due > 0) {
        head h;
        if (!peek(r, &h))
            return false;
        r->p += h.size;
        due--;
        if (h.type == T_STR || h.type == T_SKIP)
            r->p += h.u;
        else if (h.type == T_ARR || h.type == T_MAP)
            due += h.type == T_MAP ? 2 * h.u : h.u;
        if (due > (uint64_t)(r->end - r->p))
            return cqc__fail(r);
    }
    return true;
}

bool cqc__rd_strcpy(cqc_rd *r, char *dst, size_t cap)
{
    const char *s;
    uint32_t n;
    if (!cqc__rd_str(r, &s, &n))
        return false;
    if (n >= cap)
        return cqc__fail(r);
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

bool cqc__rd_strcut(cqc_rd *r, char *dst, size_t cap)
{
    const char *s;
    uint32_t n;
    if (!cqc__rd_str(r, &s, &n))
        return false;
    size_t k = n < cap ? n : cap - 1;
    memcpy(dst, s, k);
    dst[k] = '\0';
    return true;
}

bool cqc__rd_vec(cqc_rd *r, double *v, uint32_t n)
{
    uint32_t k;
    if (!cqc__rd_arr(r, &k) || k != n)
        return cqc__fail(r);
    for (uint32_t i = 0; i < n; i++)
        if (!cqc__rd_num(r, &v[i]))
            return false;
    return true;
}

bool cqc__rd_each(cqc_rd *r, cqc_member_fn f, void *out)
{
    uint32_t n;
    if (!cqc__rd_map(r, &n))
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const char *k;
        uint32_t kn;
        if (!cqc__rd_str(r, &k, &kn) || !f(r, k, kn, out))
            return cqc__fail(r);
    }
    return true;
}
