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

static bool cq_has_pair(const cq_simplex_cache *c, const cq_mvert *m)
{
    for (int i = 0; i < c->count; i++)
        if (c->index_a[i] == m->ia && c->index_b[i] == m->ib)
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
    s->count = 0;
    int n = cache ? cache->count : 0;
    for (int k = 0; k < n && k < 4; k++) {
        int ia = cache->index_a[k], ib = cache->index_b[k];
        if (ia >= pp->a->count || ib >= pp->b->count)
            continue;
        cq_mvert m = cq_mink_vertex(pp, ia, ib);
        cq_simplex_cache seen = cq_cache_of(s);
        if (!cq_has_pair(&seen, &m))
            s->v[s->count++] = m;
    }
    if (s->count == 0)
        s->v[s->count++] = cq_mink_vertex(pp, 0, 0);
}

/* Rebuilds a simplex from its indices and weights. */
static void cq_gjk_restore(const cq_pair_proxies *pp, const cq_simplex_cache *c, const double *bc,
                           cq_simplex *s)
{
    s->count = c->count;
    for (int i = 0; i < c->count; i++) {
        s->v[i] = cq_mink_vertex(pp, c->index_a[i], c->index_b[i]);
        s->bc[i] = bc[i];
    }
}

/* Witnesses, distance and (when the distance is above the band) the normal
 * of the simplex's closest point. */
static void cq_gjk_fill(const cq_simplex *s, double band, cq_gjk_result *r)
{
    cq_vec3 pa = cq_v3(0, 0, 0), pb = cq_v3(0, 0, 0);
    for (int i = 0; i < s->count; i++) {
        pa = cq_mad(pa, s->v[i].pa, s->bc[i]);
        pb = cq_mad(pb, s->v[i].pb, s->bc[i]);
    }
    cq_vec3 ab = cq_sub(pb, pa);
    r->point_a = pa;
    r->point_b = pb;
    r->distance = cq_len(ab);
    r->has_normal = r->distance > band;
    r->normal = r->has_normal ? cq_scale(ab, 1.0 / r->distance) : cq_v3(0, 0, 0);
    r->simplex = cq_cache_of(s);
}

/* A lower bound of the depth when the tetrahedron s holds the origin: the
 * distance to its nearest face plane (0 for a face without a reliable normal). */
static double cq_tetra_depth_bound(const cq_simplex *s)
{
    static const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    double bound = INFINITY;
    for (int i = 0; i < 4; i++) {
        cq_vec3 a = s->v[faces[i][0]].w;
        cq_vec3 ab = cq_sub(s->v[faces[i][1]].w, a), ac = cq_sub(s->v[faces[i][2]].w, a);
        cq_vec3 n = cq_cross(ab, ac);
        double l = cq_len(n);
        double d = l > 1e-10 * cq_len(ab) * cq_len(ac) ? fabs(cq_dot(n, a)) / l : 0;
        bound = d < bound ? d : bound;
    }
    return bound;
}

/* The origin is within the band of (or inside) the simplex: bound the depth. */
static void cq_gjk_classify(const cq_pair_proxies *pp, const cq_simplex *s, double band,
                            int budget, cq_gjk_result *r)
{
    if (s->count == 4 && cq_tetra_depth_bound(s) > band) {
        r->status = CQ_GJK_PENETRATING;
        r->distance = 0;
        return;
    }
    cq_expand_result e = cq_polytope_expand(pp, s->v, s->count, CQ_EXPAND_CLASSIFY, band, budget,
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

cq_gjk_result cq_gjk_distance(const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                              const cq_xform *xb, const cq_gjk_options *opt)
{
    int max_it = opt && opt->max_iterations > 0 ? opt->max_iterations : CQ_GJK_DEFAULT_MAX_ITERATIONS;
    double tol = opt && opt->tolerance > 0 ? opt->tolerance : CQ_GJK_DEFAULT_TOLERANCE;
    cq_simplex_cache *cache = opt ? opt->cache : NULL;
    cq_pair_proxies pp;
    cq_pair_proxies_init(&pp, a, xa, b, xb);
    double band = fmax(tol, pp.noise);

    cq_simplex s;
    cq_gjk_start(&pp, cache, &s);
    /* The previous step's simplex, kept as indices and weights: restored
     * only when a step fails to decrease the distance. */
    cq_simplex_cache prev = {0};
    double prev_bc[4], prev_d2 = INFINITY;
    int it = 0;
    cq_gjk_status status = CQ_GJK_SEPARATED;
    bool in_band = false;
    for (;;) {
        cq_simplex_cache before = cq_cache_of(&s); /* a superset of the solved simplex */
        cq_vec3 v = cq_simplex_solve(&s);
        double d2 = cq_len2(v);
        if (!(d2 < prev_d2)) {
            cq_gjk_restore(&pp, &prev, prev_bc, &s);
            break;
        }
        prev = cq_cache_of(&s);
        for (int i = 0; i < s.count; i++)
            prev_bc[i] = s.bc[i];
        prev_d2 = d2;
        if (s.count == 4 || d2 <= band * band) {
            in_band = true;
            break;
        }
        if (it >= max_it) {
            status = CQ_GJK_ITERATION_LIMIT;
            break;
        }
        cq_mvert w = cq_mink_support(&pp, cq_neg(v));
        it++;
        /* v . w / |v| bounds the distance from below; rounding in v . w is
         * about noise * |v|. */
        double progress = d2 - cq_dot(v, w.w);
        if (progress <= CQ_GJK_RELATIVE_EPSILON * d2 + pp.noise * sqrt(d2) || cq_has_pair(&before, &w))
            break;
        s.v[s.count++] = w;
    }

    cq_gjk_result r = {.status = status, .iterations = it};
    cq_gjk_fill(&s, band, &r);
    if (in_band)
        cq_gjk_classify(&pp, &s, band, max_it - it, &r);
    if (cache)
        *cache = r.simplex;
    return r;
}

void cq_gjk_apply_radii(cq_gjk_result *r, const cq_proxy *a, const cq_proxy *b)
{
    if (!r->has_normal)
        return;
    r->distance -= a->radius + b->radius;
    r->point_a = cq_mad(r->point_a, r->normal, a->radius);
    r->point_b = cq_mad(r->point_b, r->normal, -b->radius);
}
