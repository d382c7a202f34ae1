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

/* Largest coordinate magnitude (comparisons, not fmax: this runs per query). */
static double cq_max_abs(const cq_vec3 *pts, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) {
        double x = fabs(pts[i].x), y = fabs(pts[i].y), z = fabs(pts[i].z);
        m = x > m ? x : m;
        m = y > m ? y : m;
        m = z > m ? z : m;
    }
    return m;
}

void cq_pair_proxies_init(cq_pair_proxies *pp, const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                          const cq_xform *xb)
{
    *pp = (cq_pair_proxies){a, b, xa, xb, cq_mul_mtm(&xa->r, &xb->r), cq_xform_inv_point(xa, xb->p), 0};
    /* World coordinates are at most |position| + |local point| in size; each
     * carries a few ulps of that from the transform. */
    double mag = cq_max_abs(&xa->p, 1) + cq_max_abs(&xb->p, 1) + cq_max_abs(a->points, a->count) +
                 cq_max_abs(b->points, b->count);
    pp->noise = 64 * DBL_EPSILON * mag;
}

void cq_mink_witnesses(const cq_pair_proxies *pp, const cq_mvert *v, const double *bc, int count,
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

/* Which vertices of a simplex hold its closest point, in ascending order,
 * and their weights. */
typedef struct cq_reduced {
    int count;
    int idx[4];
    double bc[4];
} cq_reduced;

/* Sub-solvers take the simplex points w and ascending vertex indices; they
 * write the reduced simplex into *out and return the squared distance of
 * its closest point. */

static double cq_solve1(const cq_vec3 *w, int i, cq_reduced *out)
{
    *out = (cq_reduced){1, {i}, {1}};
    return cq_len2(w[i]);
}

static double cq_solve2(const cq_vec3 *w, int i, int j, cq_reduced *out)
{
    cq_vec3 e = cq_sub(w[j], w[i]);
    double ui = cq_dot(w[j], e);  /* weight of i, times |e|^2 */
    double uj = -cq_dot(w[i], e); /* weight of j, times |e|^2 */
    if (uj <= 0)
        return cq_solve1(w, i, out);
    if (ui <= 0)
        return cq_solve1(w, j, out);
    /* Both positive, so the sum is positive: the weights lie in (0, 1). */
    double s = ui + uj;
    *out = (cq_reduced){2, {i, j}, {ui / s, uj / s}};
    return cq_len2(cq_add(cq_scale(w[i], out->bc[0]), cq_scale(w[j], out->bc[1])));
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

static double cq_solve3(const cq_vec3 *w, int i, int j, int k, cq_reduced *out)
{
    cq_vec3 ab = cq_sub(w[j], w[i]), ac = cq_sub(w[k], w[i]);
    cq_vec3 n = cq_cross(ab, ac);
    /* Flat, or the origin projects outside an edge whose opposite weight is
     * not positive: the closest point is on such an edge. */
    bool edge_jk = true, edge_ik = true, edge_ij = true;
    if (cq_len2(n) > CQ_FLAT * CQ_FLAT * cq_len2(ab) * cq_len2(ac)) {
        /* Barycentric numerators of the origin's projection (each times |n|^2). */
        double ui = cq_dot(n, cq_cross(w[j], w[k]));
        double uj = cq_dot(n, cq_cross(w[k], w[i]));
        double uk = cq_dot(n, cq_cross(w[i], w[j]));
        double s = ui + uj + uk;
        if (ui >= 0 && uj >= 0 && uk >= 0 && s > 0) {
            *out = (cq_reduced){3, {i, j, k}, {ui / s, uj / s, uk / s}};
            cq_vec3 p = cq_add(cq_add(cq_scale(w[i], out->bc[0]), cq_scale(w[j], out->bc[1])),
                               cq_scale(w[k], out->bc[2]));
            return cq_len2(p);
        }
        edge_jk = !(ui > 0);
        edge_ik = !(uj > 0);
        edge_ij = !(uk > 0) || !(edge_jk || edge_ik);
    }
    cq_reduced cand;
    double best = INFINITY;
    if (edge_ij)
        best = cq_keep_closer(best, out, cq_solve2(w, i, j, &cand), &cand);
    if (edge_jk)
        best = cq_keep_closer(best, out, cq_solve2(w, j, k, &cand), &cand);
    if (edge_ik)
        best = cq_keep_closer(best, out, cq_solve2(w, i, k, &cand), &cand);
    return best;
}

static double cq_solve4(const cq_vec3 *w, cq_reduced *out)
{
    cq_vec3 a = w[0], b = w[1], c = w[2], d = w[3];
    cq_vec3 ab = cq_sub(b, a), ac = cq_sub(c, a), ad = cq_sub(d, a);
    double vol = cq_dot(ab, cq_cross(ac, ad));
    static const int faces[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}; /* face i lacks vertex i */
    bool outside[4] = {true, true, true, true};
    if (fabs(vol) > CQ_FLAT * cq_len(ab) * cq_len(ac) * cq_len(ad)) {
        /* Signed volumes with the origin replacing one vertex, over vol. */
        double l[4];
        l[0] = cq_dot(b, cq_cross(c, d)) / vol;
        l[1] = -cq_dot(a, cq_cross(ac, ad)) / vol;
        l[2] = cq_dot(ab, cq_cross(cq_neg(a), ad)) / vol;
        l[3] = cq_dot(ab, cq_cross(ac, cq_neg(a))) / vol;
        if (l[0] >= 0 && l[1] >= 0 && l[2] >= 0 && l[3] >= 0) {
            double s = l[0] + l[1] + l[2] + l[3];
            *out = (cq_reduced){4, {0, 1, 2, 3}, {l[0] / s, l[1] / s, l[2] / s, l[3] / s}};
            cq_vec3 p = cq_v3(0, 0, 0);
            for (int i = 0; i < 4; i++)
                p = cq_mad(p, w[i], out->bc[i]);
            return cq_len2(p);
        }
        for (int i = 0; i < 4; i++)
            outside[i] = l[i] < 0;
    }
    /* Flat, or the origin lies beyond the faces opposite negative weights. */
    cq_reduced cand;
    double best = INFINITY;
    for (int i = 0; i < 4; i++)
        if (outside[i])
            best = cq_keep_closer(best, out, cq_solve3(w, faces[i][0], faces[i][1], faces[i][2], &cand), &cand);
    return best;
}

cq_vec3 cq_simplex_solve(cq_simplex *s)
{
    cq_vec3 w[4];
    for (int i = 0; i < s->count; i++)
        w[i] = s->v[i].w;
    cq_reduced r = {1, {0}, {1}};
    switch (s->count) {
    case 1:
        cq_solve1(w, 0, &r);
        break;
    case 2:
        cq_solve2(w, 0, 1, &r);
        break;
    case 3:
        cq_solve3(w, 0, 1, 2, &r);
        break;
    default:
        cq_solve4(w, &r);
        break;
    }
    /* Ascending indices: compacting in place never overwrites a kept vertex. */
    cq_vec3 p = cq_v3(0, 0, 0);
    for (int m = 0; m < r.count; m++) {
        if (r.idx[m] != m)
            s->v[m] = s->v[r.idx[m]];
        s->bc[m] = r.bc[m];
        p = cq_mad(p, s->v[m].w, s->bc[m]);
    }
    s->count = r.count;
    return p;
}
