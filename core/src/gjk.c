/* GJK distance between two posed proxies. The loop keeps the simplex's
 * closest point v and stops on the first of: no relative progress of the
 * support point, a support point already in the simplex, a squared
 * distance that failed to decrease (the previous best is kept), the
 * iteration cap. Within the touching band the depth is bounded with EPA's
 * polytope to tell touching from penetrating. */
#include <stddef.h>

#include "minkowski.h"

/* Relative progress below which the distance bound counts as converged. */
#define CQ_GJK_RELATIVE_EPSILON 1e-12

const char *cq_gjk_status_name(cq_gjk_status s)
{
    switch (s) {
    case CQ_GJK_SEPARATED:
        return "separated";
    case CQ_GJK_TOUCHING:
        return "touching";
    case CQ_GJK_PENETRATING:
        return "penetrating";
    case CQ_GJK_ITERATION_LIMIT:
        return "iteration_limit";
    }
    return "unknown";
}

/* A pair of proxy indices as one key, so a membership test is one compare. */
static uint32_t cq_pair_key(int ia, int ib) { return (uint32_t)ia << 16 | (uint32_t)ib; }

/* The index pairs of a simplex as keys; returns the count. */
static int cq_keys_of(const cq_simplex *s, uint32_t keys[4])
{
    for (int i = 0; i < s->count; i++)
        keys[i] = cq_pair_key(s->v[i].ia, s->v[i].ib);
    return s->count;
}

static bool cq_has_key(const uint32_t *keys, int n, uint32_t key)
{
    for (int i = 0; i < n; i++)
        if (keys[i] == key)
            return true;
    return false;
}

static cq_simplex_cache cq_cache_of(const cq_simplex *s)
{
    cq_simplex_cache c = {.count = s->count};
    for (int i = 0; i < s->count; i++) {
        c.index_a[i] = s->v[i].ia;
        c.index_b[i] = s->v[i].ib;
    }
    return c;
}

/* The warm-start simplex (valid, distinct index pairs of the cache), or the
 * first points of both proxies. */
static void cq_gjk_start(const cq_pair_proxies *pp, const cq_simplex_cache *cache, cq_simplex *s)
{
    uint32_t keys[4];
    s->count = 0;
    int n = cache ? cache->count : 0;
    for (int k = 0; k < n && k < 4; k++) {
        int ia = cache->index_a[k], ib = cache->index_b[k];
        if (ia >= pp->a->count || ib >= pp->b->count || cq_has_key(keys, s->count, cq_pair_key(ia, ib)))
            continue;
        keys[s->count] = cq_pair_key(ia, ib);
        s->v[s->count++] = cq_mink_vertex(pp, ia, ib);
    }
    if (s->count == 0)
        s->v[s->count++] = cq_mink_vertex(pp, 0, 0);
}

/* Witnesses, distance and (when the distance is above the band) the normal
 * of the simplex's closest point. */
static void cq_gjk_fill(const cq_pair_proxies *pp, const cq_simplex *s, double band, cq_gjk_result *r)
{
    cq_vec3 pa, pb;
    cq__mink_witnesses(pp, s->v, s->bc, s->count, &pa, &pb);
    cq_vec3 ab = cq_sub(pb, pa);
    r->point_a = pa;
    r->point_b = pb;
    r->distance = cq_len(ab);
    r->has_normal = r->distance > band;
    r->normal = r->has_normal ? cq_scale(ab, 1.0 / r->distance) : cq_v3(0, 0, 0);
    r->simplex = cq_cache_of(s);
}

/* True when the tetrahedron s, holding the origin, has every face plane
 * farther than band from the origin, so the depth exceeds band. A face
 * without a reliable normal bounds nothing (false). Squared comparisons:
 * |n . a| / |n| > band without a root or a division. */
static bool cq_tetra_deeper_than(const cq_simplex *s, double band)
{
    static const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    for (int i = 0; i < 4; i++) {
        cq_vec3 a = s->v[faces[i][0]].w;
        cq_vec3 ab = cq_sub(s->v[faces[i][1]].w, a), ac = cq_sub(s->v[faces[i][2]].w, a);
        cq_vec3 n = cq_cross(ab, ac);
        double l2 = cq_len2(n), h = cq_dot(n, a);
        if (!(l2 > 1e-10 * 1e-10 * cq_len2(ab) * cq_len2(ac)) || !(h * h > band * band * l2))
            return false;
    }
    return true;
}

/* The origin is within the band of (or inside) the simplex: bound the depth. */
static void cq_gjk_classify(const cq_pair_proxies *pp, const cq_simplex *s, double band,
                            int budget, cq_gjk_result *r)
{
    if (s->count == 4 && cq_tetra_deeper_than(s, band)) {
        r->status = CQ_GJK_PENETRATING;
        r->distance = 0;
        return;
    }
    cq_expand_result e = cq__polytope_expand(pp, s->v, s->count, CQ_EXPAND_CLASSIFY, band, budget,
                                             CQ_EPA_DEFAULT_TOLERANCE);
    r->iterations += e.iterations;
    if (e.status == CQ_EPA_ITERATION_LIMIT) {
        r->status = CQ_GJK_ITERATION_LIMIT;
    } else if (e.deeper) {
        r->status = CQ_GJK_PENETRATING;
        r->distance = 0;
    } else {
        r->status = CQ_GJK_TOUCHING;
    }
}

cq_gjk_result cq__gjk_run(const cq_pair_proxies *pp, const cq_gjk_options *opt, cq_simplex *terminal)
{
    int max_it = opt && opt->max_iterations > 0 ? opt->max_iterations : CQ_GJK_DEFAULT_MAX_ITERATIONS;
    double tol = opt && opt->tolerance > 0 ? opt->tolerance : CQ_GJK_DEFAULT_TOLERANCE;
    cq_simplex_cache *cache = opt ? opt->cache : NULL;
    double band = tol > pp->noise ? tol : pp->noise;

    cq_simplex *s = terminal;
    cq_gjk_start(pp, cache, s);
    /* The previous step's solved simplex, restored when a step fails to
     * decrease the distance (before the first step: none, count 0). A
     * plain copy: cheaper than any bookkeeping. */
    cq_simplex prev;
    prev.count = 0;
    double prev_d2 = INFINITY;
    int it = 0;
    cq_gjk_status status = CQ_GJK_SEPARATED;
    bool in_band = false;
    for (;;) {
        uint32_t before[4]; /* a superset of the solved simplex */
        int nbefore = cq_keys_of(s, before);
        cq_vec3 v = cq__simplex_solve(s);
        double d2 = cq_len2(v);
        if (!(d2 < prev_d2)) {
            *s = prev;
            break;
        }
        prev = *s;
        prev_d2 = d2;
        if (s->count == 4 || d2 <= band * band) {
            in_band = true;
            break;
        }
        if (it >= max_it) {
            status = CQ_GJK_ITERATION_LIMIT;
            break;
        }
        cq_mvert w = cq_mink_support(pp, cq_neg(v));
        it++;
        /* v . w / |v| bounds the distance from below; rounding in v . w is
         * about noise * |v|. */
        double progress = d2 - cq_dot(v, w.w);
        if (progress <= CQ_GJK_RELATIVE_EPSILON * d2 + pp->noise * sqrt(d2) ||
            cq_has_key(before, nbefore, cq_pair_key(w.ia, w.ib)))
            break;
        s->v[s->count++] = w;
    }

    /* Every field is set here and in cq_gjk_fill: a zeroing initialiser
     * would compile to a block store that costs more than they do. */
    cq_gjk_result r;
    r.status = status;
    r.iterations = it;
    cq_gjk_fill(pp, s, band, &r);
    if (in_band)
        cq_gjk_classify(pp, s, band, max_it - it, &r);
    if (cache)
        *cache = r.simplex;
    return r;
}

cq_gjk_result cq_gjk_distance(const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                              const cq_xform *xb, const cq_gjk_options *opt)
{
    cq_pair_proxies pp;
    cq__pair_proxies_init(&pp, a, xa, b, xb);
    cq_simplex terminal;
    return cq__gjk_run(&pp, opt, &terminal);
}

void cq_gjk_apply_radii(cq_gjk_result *r, const cq_proxy *a, const cq_proxy *b)
{
    if (!r->has_normal)
        return;
    r->distance -= a->radius + b->radius;
    r->point_a = cq_mad(r->point_a, r->normal, a->radius);
    r->point_b = cq_mad(r->point_b, r->normal, -b->radius);
}
