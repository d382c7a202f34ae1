/* The router's shard ring: nginx's `hash $collisiond_world consistent`
 * (ngx_http_upstream_hash_module), as deploy/nginx/ring.py models it.
 * Each server of weight 1 gets 160 points; point k is the CRC-32 of the
 * server's "HOST\0PORT" continued with point k-1's 4 bytes (little
 * endian, 0 before the first); a world goes to the first point at or
 * after the CRC-32 of its name, wrapping around. */
#include <stdlib.h>

#include "cqc_int.h"

#define POINTS_PER_SERVER 160

typedef struct point {
    uint32_t hash;
    uint32_t server;
    uint32_t order; /* insertion order: ties keep the first, as ring.py's stable sort does */
} point;

struct cqc_ring {
    point *points;
    size_t n;
};

/* CRC-32 (IEEE, reflected) continued from a finished crc, as zlib.crc32(data, crc). */
static uint32_t crc32_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

static bool unix_prefix(const char *s)
{
    static const char u[] = "unix:";
    for (int i = 0; i < 5; i++)
        if ((s[i] | 0x20) != u[i] && !(u[i] == ':' && s[i] == ':'))
            return false;
    return true;
}

/* nginx splits "host:port" at the last colon when digits (or nothing)
 * follow it; "unix:" paths and names without a port hash with an empty one. */
static uint32_t server_base(const char *s)
{
    size_t n = strlen(s);
    const char *host = s, *port = s + n;
    size_t hn = n;
    if (n >= 5 && unix_prefix(s)) {
        host = s + 5;
        hn = n - 5;
    } else {
        const char *colon = strrchr(s, ':');
        bool digits = colon != NULL;
        for (const char *q = colon ? colon + 1 : s; digits && *q; q++)
            digits = *q >= '0' && *q <= '9';
        if (digits) {
            hn = (size_t)(colon - s);
            port = colon + 1;
        }
    }
    uint32_t crc = crc32_update(0, host, hn);
    crc = crc32_update(crc, "", 1);
    return crc32_update(crc, port, strlen(port));
}

static int by_hash(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

cqc_status cqc_ring_new(const char *const *servers, size_t n, cqc_ring **out)
{
    *out = NULL;
    if (!servers || n == 0 || n > UINT32_MAX / POINTS_PER_SERVER)
        return CQC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!servers[i])
            return CQC_EINVAL;
    cqc_ring *r = cqc__realloc(NULL, sizeof *r);
    point *p = cqc__realloc(NULL, n * POINTS_PER_SERVER * sizeof *p);
    if (!r || !p) {
        cqc__free(r);
        cqc__free(p);
        return CQC_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t base = server_base(servers[i]), prev = 0;
        for (int j = 0; j < POINTS_PER_SERVER; j++, k++) {
            unsigned char le[4] = {(unsigned char)prev, (unsigned char)(prev >> 8), (unsigned char)(prev >> 16),
                                   (unsigned char)(prev >> 24)};
            prev = crc32_update(base, le, 4);
            p[k] = (point){prev, (uint32_t)i, (uint32_t)k};
        }
    }
    qsort(p, k, sizeof *p, by_hash);
    /* One point per hash value: the first of equal ones stays. */
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || p[i].hash != p[m - 1].hash)
            p[m++] = p[i];
    *r = (cqc_ring){p, m};
    *out = r;
    return CQC_OK;
}

void cqc_ring_free(cqc_ring *r)
{
    if (!r)
        return;
    cqc__free(r->points);
    cqc__free(r);
}

size_t cqc_ring_owner(const cqc_ring *r, const char *world)
{
    uint32_t h = crc32_update(0, world, strlen(world));
    size_t lo = 0, hi = r->n; /* the first point with hash >= h */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->points[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return r->points[lo % r->n].server;
}
