/* Support points of A - B and the closest point of a simplex to the origin.
 * The solvers split a simplex into Voronoi regions by signs of barycentric
 * numerators; a degenerate simplex is solved over its faces instead, so a
 * weight is never a ratio of vanishing numbers. */
#include <float.h>

#include "minkowski.h"

/* Below this sine (triangle) or normalised volume (tetrahedron) a simplex is
 * treated as flat: its weights would be dominated by rounding. */
#define CQ_FLAT 1e-10

int cq_proxy_support(const cq_proxy *p, cq_vec3 dir)
{
    return cq_support_index(p->points, p->count, dir);
}

void cq__pair_proxies_init(cq_pair_proxies *pp, const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                           const cq_xform *xb)
{
    *pp = (cq_pair_proxies){a, b, xa, xb, cq_mul_mtm(&xa->r, &xb->r), cq_xform_inv_point(xa, xb->p), 0};
    /* World coordinates are at most |position| + |local point| in size; each
     * carries a few ulps of that from the transform. */
    double mag = cq_max_abs(xa->p) + cq_max_abs(xb->p) + cq_points_max_abs(a->points, a->count) +
                 cq_points_max_abs(b->points, b->count);
    pp->noise = 64 * DBL_EPSILON * mag;
}

void cq__mink_witnesses(const cq_pair_proxies *pp, const cq_mvert *v, const double *bc, int count,
                        cq_vec3 *pa, cq_vec3 *pb)
{
    cq_vec3 la = cq_v3(0, 0, 0), lb = cq_v3(0, 0, 0);
    for (int i = 0; i < count; i++) {
        la = cq_mad(la, pp->a->points[v[i].ia], bc[i]);
        lb = cq_mad(lb, pp->b->points[v[i].ib], bc[i]);
    }
    *pa = cq_xform_point(pp->xa, la);
    *pb = cq_xform_point(pp->xb, lb);
}

/* Which vertices of a simplex hold its closest point p, in ascending order,
 * and their weights. */
typedef struct cq_reduced {
    int count;
    int idx[4];
    double bc[4];
    cq_vec3 p;
} cq_reduced;

/* Sub-solvers take the simplex points and ascending vertex indices; they
 * write the reduced simplex and its closest point into *out and return the
 * point's squared distance. They read the points where they lie (no copy). */

static double cq_solve1(const cq_mvert *v, int i, cq_reduced *out)
{
    *out = (cq_reduced){1, {i}, {1}, v[i].w};
    return cq_len2(out->p);
}

static double cq_solve2(const cq_mvert *v, int i, int j, cq_reduced *out)
{
    cq_vec3 a = v[i].w, b = v[j].w;
    cq_vec3 e = cq_sub(b, a);
    double ui = cq_dot(b, e);  /* weight of i, times |e|^2 */
    double uj = -cq_dot(a, e); /* weight of j, times |e|^2 */
    if (uj <= 0)
        return cq_solve1(v, i, out);
    if (ui <= 0)
        return cq_solve1(v, j, out);
    /* Both positive, so the sum is positive: the weights lie in (0, 1). */
    double s = ui + uj, bi = ui / s, bj = uj / s;
    *out = (cq_reduced){2, {i, j}, {bi, bj}, cq_add(cq_scale(a, bi), cq_scale(b, bj))};
    return cq_len2(out->p);
}

/* The closer of *best (squared distance best_d2) and a new candidate. */
static double cq_keep_closer(double best_d2, cq_reduced *best, double d2, const cq_reduced *cand)
{
    if (d2 < best_d2) {
        *best = *cand;
        return d2;
    }
    return best_d2;
}

static double cq_solve3(const cq_mvert *v, int i, int j, int k, cq_reduced *out)
{
    cq_vec3 a = v[i].w, b = v[j].w, c = v[k].w;
    cq_vec3 ab = cq_sub(b, a), ac = cq_sub(c, a);
    cq_vec3 n = cq_cross(ab, ac);
    /* Flat, or the origin projects outside an edge whose opposite weight is
     * not positive: the closest point is on such an edge. */
    bool edge_jk = true, edge_ik = true, edge_ij = true;
    double nn = cq_len2(n);
    if (nn > CQ_FLAT * CQ_FLAT * cq_len2(ab) * cq_len2(ac)) {
        /* Barycentric numerators of the origin's projection (each times
         * |n|^2). They sum to |n|^2 (n . (b x c + c x a + a x b) = n . n),
         * so the first is what the other two leave: one cross product less. */
        double uj = cq_dot(n, cq_cross(c, a));
        double uk = cq_dot(n, cq_cross(a, b));
        double ui = nn - uj - uk;
        if (ui >= 0 && uj >= 0 && uk >= 0) {
            double inv = 1 / nn, bi = ui * inv, bj = uj * inv, bk = uk * inv;
            cq_vec3 p = cq_add(cq_add(cq_scale(a, bi), cq_scale(b, bj)), cq_scale(c, bk));
            *out = (cq_reduced){3, {i, j, k}, {bi, bj, bk}, p};
            return cq_len2(p);
        }
        edge_jk = !(ui > 0);
        edge_ik = !(uj > 0);
        edge_ij = !(uk > 0) || !(edge_jk || edge_ik);
    }
    cq_reduced cand;
    double best = INFINITY;
    if (edge_ij)
        best = cq_keep_closer(best, out, cq_solve2(v, i, j, &cand), &cand);
    if (edge_jk)
        best = cq_keep_closer(best, out, cq_solve2(v, j, k, &cand), &cand);
    if (edge_ik)
        best = cq_keep_closer(best, out, cq_solve2(v, i, k, &cand), &cand);
    return best;
}

static double cq_solve4(const cq_mvert *v, cq_reduced *out)
{
    cq_vec3 a = v[0].w, b = v[1].w, c = v[2].w, d = v[3].w;
    cq_vec3 ab = cq_sub(b, a), ac = cq_sub(c, a), ad = cq_sub(d, a);
    double vol = cq_dot(ab, cq_cross(ac, ad));
    static const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}; /* face i lacks vertex i */
    bool outside[4] = {true, true, true, true};
    if (fabs(vol) > CQ_FLAT * cq_len(ab) * cq_len(ac) * cq_len(ad)) {
        /* Signed volumes with the origin replacing one vertex, over vol.
         * The four volumes sum to vol, so the last is what the others leave. */
        double v0 = cq_dot(b, cq_cross(c, d)), v1 = -cq_dot(a, cq_cross(ac, ad));
        double v2 = cq_dot(ab, cq_cross(cq_neg(a), ad)), v3 = vol - v0 - v1 - v2;
        double inv = 1 / vol;
        double l[4] = {v0 * inv, v1 * inv, v2 * inv, v3 * inv};
        if (l[0] >= 0 && l[1] >= 0 && l[2] >= 0 && l[3] >= 0) {
            double norm = 1 / (l[0] + l[1] + l[2] + l[3]);
            *out = (cq_reduced){4, {0, 1, 2, 3}, {l[0] * norm, l[1] * norm, l[2] * norm, l[3] * norm}, cq_v3(0, 0, 0)};
            for (int m = 0; m < 4; m++)
                out->p = cq_mad(out->p, v[m].w, out->bc[m]);
            return cq_len2(out->p);
        }
        for (int m = 0; m < 4; m++)
            outside[m] = l[m] < 0;
    }
    /* Flat, or the origin lies beyond the faces opposite negative weights. */
    cq_reduced cand;
    double best = INFINITY;
    for (int m = 0; m < 4; m++)
        if (outside[m])
            best = cq_keep_closer(best, out, cq_solve3(v, faces[m][0], faces[m][1], faces[m][2], &cand), &cand);
    return best;
}

cq_vec3 cq__simplex_solve(cq_simplex *s)
{
    /* What a sub-solver leaves when no candidate is finite (overflowing
     * coordinates): the first vertex. */
    cq_reduced r = {1, {0}, {1}, s->v[0].w};
    switch (s->count) {
    case 1:
        cq_solve1(s->v, 0, &r);
        break;
    case 2:
        cq_solve2(s->v, 0, 1, &r);
        break;
    case 3:
        cq_solve3(s->v, 0, 1, 2, &r);
        break;
    default:
        cq_solve4(s->v, &r);
        break;
    }
    /* Ascending indices: compacting in place never overwrites a kept vertex. */
    for (int m = 0; m < r.count; m++) {
        if (r.idx[m] != m)
            s->v[m] = s->v[r.idx[m]];
        s->bc[m] = r.bc[m];
    }
    s->count = r.count;
    return r.p;
}
