/* Internal: the Minkowski difference A - B of two posed proxies, shared by
 * GJK (gjk.c) and EPA (epa.c): support points, the closest point of a
 * simplex to the origin, and the polytope expansion both run. */
#ifndef CQ_MINKOWSKI_H
#define CQ_MINKOWSKI_H

#include "cq/gjk.h"

/* Two posed proxies, worked on in A's local frame: B's points are mapped into
 * it by the relative pose (r, t), so a support point costs one rotation of
 * the direction and one transform of B's point, where world coordinates
 * would take two of each. Results go back to the world at the end. noise is
 * the rounding noise of the world coordinates: differences smaller than it
 * are not meaningful (rigid motions keep distances, so it holds here too). */
typedef struct cq_pair_proxies {
    const cq_proxy *a, *b;
    const cq_xform *xa, *xb;
    cq_mat3 r; /* B's axes in A's frame */
    cq_vec3 t; /* B's origin in A's frame */
    double noise;
} cq_pair_proxies;

/* Sets up pp for the two posed proxies (the relative pose and the noise). */
void cq__pair_proxies_init(cq_pair_proxies *pp, const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                           const cq_xform *xb);

/* A point of A - B (in A's frame) and the proxy points it is made of. Small
 * on purpose: simplices and the EPA polytope copy these around; the world
 * points of A and B are derived from the indices only for the answer. */
typedef struct cq_mvert {
    cq_vec3 w;
    uint16_t ia, ib;
} cq_mvert;

/* cq_proxy_support's loop, inline for the support points below (they run
 * several times per query). Written as selects so it compiles branch-free:
 * which point wins is data, not a predictable branch. */
static inline int cq_support_index(const cq_vec3 *pts, int count, cq_vec3 dir)
{
    int best = 0;
    double best_dot = cq_dot(pts[0], dir);
    for (int i = 1; i < count; i++) {
        double d = cq_dot(pts[i], dir);
        best = d > best_dot ? i : best;
        best_dot = d > best_dot ? d : best_dot;
    }
    return best;
}

/* The point of A - B made of proxy points ia and ib. */
static inline cq_mvert cq_mink_vertex(const cq_pair_proxies *pp, int ia, int ib)
{
    cq_vec3 b = cq_add(cq_mul_mv(&pp->r, pp->b->points[ib]), pp->t);
    return (cq_mvert){cq_sub(pp->a->points[ia], b), (uint16_t)ia, (uint16_t)ib};
}

/* The support point of A - B along d (A's frame). */
static inline cq_mvert cq_mink_support(const cq_pair_proxies *pp, cq_vec3 d)
{
    int ia = cq_support_index(pp->a->points, pp->a->count, d);
    int ib = cq_support_index(pp->b->points, pp->b->count, cq_mul_mtv(&pp->r, cq_neg(d)));
    return cq_mink_vertex(pp, ia, ib);
}

/* World witnesses of the point sum(bc[k] * v[k].w) of A - B: the same
 * combination of the A points and of the B points. */
void cq__mink_witnesses(const cq_pair_proxies *pp, const cq_mvert *v, const double *bc, int count,
                        cq_vec3 *pa, cq_vec3 *pb);

/* A simplex with barycentric weights (summing to 1) of its closest point. */
typedef struct cq_simplex {
    int count;
    cq_mvert v[4];
    double bc[4];
} cq_simplex;

/* Reduces s to the smallest sub-simplex holding its point closest to the
 * origin, sets the weights and returns that point. Degenerate simplices
 * (repeated points, collinear triangles, flat tetrahedra) are solved over
 * their faces, so no weight is ever a ratio of vanishing numbers. A
 * tetrahedron that holds the origin stays whole, with count 4. */
cq_vec3 cq__simplex_solve(cq_simplex *s);

/* cq_gjk_distance on set-up proxies; *terminal receives the terminal
 * simplex's points (those of result.simplex, in its order), so EPA can
 * start from them without recomputing them. */
cq_gjk_result cq__gjk_run(const cq_pair_proxies *pp, const cq_gjk_options *opt, cq_simplex *terminal);

/* cq_epa_penetration on set-up proxies, started from count points of A - B. */
cq_epa_result cq__epa_run(const cq_pair_proxies *pp, const cq_mvert *start, int count, const cq_epa_options *opt);

/* What cq__polytope_expand should find. */
typedef enum cq_expand_goal {
    CQ_EXPAND_DEPTH, /* the penetration depth, to convergence */
    CQ_EXPAND_CLASSIFY, /* only whether the depth exceeds a threshold */
} cq_expand_goal;

/* The outcome of cq__polytope_expand. */
typedef struct cq_expand_result {
    cq_epa_status status;
    bool deeper;      /* CLASSIFY: the depth exceeds the threshold */
    double depth;
    cq_vec3 normal;   /* unit; set with status OK in DEPTH mode */
    cq_vec3 point_a, point_b;
    int iterations;
} cq_expand_result;

/* EPA: builds a polytope from the simplex points (completing a tetrahedron
 * with support points when needed) and expands it toward the boundary of
 * A - B nearest the origin, within max_iterations and the fixed capacity.
 * In CLASSIFY mode it stops as soon as the depth is known to be above or at
 * most threshold; a difference too flat for a polytope counts as at most. */
cq_expand_result cq__polytope_expand(const cq_pair_proxies *pp, const cq_mvert *start, int count,
                                     cq_expand_goal goal, double threshold, int max_iterations,
                                     double tolerance);

#endif
