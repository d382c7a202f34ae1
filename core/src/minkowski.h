/* Internal: the Minkowski difference A - B of two posed proxies, shared by
 * GJK (gjk.c) and EPA (epa.c): support points, the closest point of a
 * simplex to the origin, and the polytope expansion both run. */
#ifndef CQ_MINKOWSKI_H
#define CQ_MINKOWSKI_H

#include "cq/gjk.h"

/* Two posed proxies and the rounding noise of their world coordinates:
 * differences smaller than noise are not meaningful. */
typedef struct cq_pair_proxies {
    const cq_proxy *a, *b;
    const cq_xform *xa, *xb;
    double noise;
} cq_pair_proxies;

/* Sets up pp for the two posed proxies (computes the noise). */
void cq_pair_proxies_init(cq_pair_proxies *pp, const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                          const cq_xform *xb);

/* A point of A - B and where it came from. */
typedef struct cq_mvert {
    cq_vec3 w;      /* pa - pb */
    cq_vec3 pa, pb; /* world points of A and B */
    uint16_t ia, ib;
} cq_mvert;

/* The support point of A - B along the world direction d. */
cq_mvert cq_mink_support(const cq_pair_proxies *pp, cq_vec3 d);

/* The point of A - B made of proxy points ia and ib. */
cq_mvert cq_mink_vertex(const cq_pair_proxies *pp, int ia, int ib);

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
cq_vec3 cq_simplex_solve(cq_simplex *s);

/* What cq_polytope_expand should find. */
typedef enum cq_expand_goal {
    CQ_EXPAND_DEPTH, /* the penetration depth, to convergence */
    CQ_EXPAND_CLASSIFY, /* only whether the depth exceeds a threshold */
} cq_expand_goal;

/* The outcome of cq_polytope_expand. */
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
cq_expand_result cq_polytope_expand(const cq_pair_proxies *pp, const cq_mvert *start, int count,
                                    cq_expand_goal goal, double threshold, int max_iterations,
                                    double tolerance);

#endif
