/* Closest-point primitives after Ericson, "Real-Time Collision Detection"
 * (5.1.2, 5.1.5, 5.1.9), made total: zero-length segments, parallel
 * segments and zero-area triangles each have a defined, finite answer. */
#include "geom.h"

/* Squared sine of the angle below which two segments count as parallel.
 * Above it the cross-product form of the line-line parameter is accurate
 * (its error does not grow as the angle shrinks); below it any point of the
 * overlap is within 1e-12 per unit of length of the true minimum. */
#define CQ_PARALLEL_SIN2 1e-24
/* A triangle whose squared normal is this small relative to |ab|^2 |ac|^2
 * is handled as its three edges: Ericson's divisions would be 0/0. */
#define CQ_FLAT_SIN2 1e-24

cq_vec3 cq__closest_on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b, double *t)
{
    cq_vec3 d = cq_sub(b, a);
    double l2 = cq_len2(d);
    /* A zero-length segment is its point; otherwise the quotient is finite or
     * an infinity that the clamp absorbs. */
    *t = l2 > 0 ? cq_clamp(cq_dot(cq_sub(p, a), d) / l2, 0, 1) : 0;
    return cq_mad(a, d, *t);
}

/* Where [s0, s1] lies along [e0, e1]: t as in cq__line_ends, [*lo, *hi]
 * the overlap with the edge in its fractions; false when it is no line. */
static bool cq_line_overlap(cq_vec3 s0, cq_vec3 s1, cq_vec3 e0, cq_vec3 e1, double t[2], double *lo, double *hi)
{
    cq_vec3 ds = cq_sub(s1, s0), de = cq_sub(e1, e0);
    double ls2 = cq_len2(ds), le2 = cq_len2(de);
    if (!(ls2 > 0 && le2 > 0) || cq_len2(cq_cross(de, ds)) > CQ_LINE_SIN * CQ_LINE_SIN * le2 * ls2)
        return false;
    t[0] = cq_dot(cq_sub(s0, e0), de) / le2;
    t[1] = cq_dot(cq_sub(s1, e0), de) / le2;
    *lo = fmax(0, fmin(t[0], t[1]));
    *hi = fmin(1, fmax(t[0], t[1]));
    return (*hi - *lo) * sqrt(le2) > CQ_LINE_OVERLAP_MIN * sqrt(fmin(ls2, le2));
}

/* One end of a line contact, core points pa of A and pb of B (see
 * cq__line_ends): B's surface point *at and the separation *sep. The two
 * balls about pa and pb, apart by `along` along n and by |l| across it,
 * meet on a line parallel to n only when |l| <= ra + rb (within
 * rounding), and are then apart along it by along - sqrt((ra + rb)^2 -
 * |l|^2), on the line a fraction rb / (ra + rb) of the way from B's point
 * to A's. Measured along n alone, an end that drifted across n would
 * claim the full depth while apart. */
static bool cq_line_end(cq_vec3 pa, cq_vec3 pb, cq_vec3 n, double ra, double rb, cq_vec3 *at, double *sep)
{
    cq_vec3 w = cq_sub(pb, pa);
    double along = cq_dot(w, n), r = ra + rb;
    cq_vec3 l = cq_mad(w, n, -along);
    double across = cq_len(l), noise = 1e-9 * cq_larger(cq_max_abs(pa), cq_max_abs(pb));
    if (!(across <= r + noise))
        return false;
    /* The cosine where they touch: 1 on the line through both centres. */
    double c = !(across > 0) ? 1 : across < r ? sqrt((r - across) * (r + across)) / r : 0;
    *sep = along - r * c;
    *at = r > 0 ? cq_mad(cq_mad(pb, l, -rb / r), n, -rb * c) : pb;
    return true;
}

bool cq__line_ends(cq_vec3 s0, cq_vec3 s1, cq_vec3 e0, cq_vec3 e1, bool seg_is_a, cq_vec3 n, double ra, double rb,
                   double skin, cq_vec3 at[2], double depth[2], double t[2])
{
    double lo, hi;
    if (!cq_line_overlap(s0, s1, e0, e1, t, &lo, &hi))
        return false;
    for (int i = 0; i < 2; i++) {
        double s, sep;
        cq_vec3 pe = cq_lerp(e0, e1, i ? hi : lo), ps = cq__closest_on_segment(pe, s0, s1, &s);
        if (!cq_line_end(seg_is_a ? ps : pe, seg_is_a ? pe : ps, n, ra, rb, &at[i], &sep) || sep > skin)
            return false;
        depth[i] = -sep;
    }
    return true;
}

/* Parameter on the first segment for parallel segments: the middle of the
 * overlap of the second one's projection, or the facing end when the
 * projections are disjoint (the clamp of the middle gives both). */
static double cq_parallel_param(cq_vec3 p1, cq_vec3 d1, double a, cq_vec3 p2, cq_vec3 q2)
{
    double u = cq_dot(cq_sub(p2, p1), d1) / a, v = cq_dot(cq_sub(q2, p1), d1) / a;
    double lo = fmax(0, fmin(u, v)), hi = fmin(1, fmax(u, v));
    return cq_clamp(0.5 * (lo + hi), 0, 1);
}

double cq__closest_segments(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2,
                            double *s, double *t, cq_vec3 *c1, cq_vec3 *c2)
{
    cq_vec3 d1 = cq_sub(q1, p1), d2 = cq_sub(q2, p2);
    double a = cq_len2(d1), e = cq_len2(d2);
    if (!(a > 0)) {
        *s = 0;
        *c1 = p1;
        *c2 = cq__closest_on_segment(p1, p2, q2, t);
    } else if (!(e > 0)) {
        *t = 0;
        *c2 = p2;
        *c1 = cq__closest_on_segment(p2, p1, q1, s);
    } else {
        cq_vec3 n = cq_cross(d1, d2);
        double nn = cq_len2(n);
        /* s of the lines' common perpendicular: ((p2 - p1) x d2) . n / |n|^2. */
        *s = nn > CQ_PARALLEL_SIN2 * a * e ? cq_clamp(cq_dot(cq_cross(cq_sub(p2, p1), d2), n) / nn, 0, 1)
                                           : cq_parallel_param(p1, d1, a, p2, q2);
        /* Best t for that s; if t had to be clamped, the best s for that t. */
        *c2 = cq__closest_on_segment(cq_mad(p1, d1, *s), p2, q2, t);
        *c1 = cq__closest_on_segment(*c2, p1, q1, s);
    }
    return cq_len2(cq_sub(*c1, *c2));
}

/* A zero-area triangle is a segment (or a point): the nearest of its edges,
 * reported as a vertex when the point falls on an end. Ties keep the lower
 * edge. */
static cq_vec3 cq_closest_on_edges(cq_vec3 p, const cq_vec3 v[3], cq_tri_region *region, int *index)
{
    cq_vec3 best = v[0];
    double best_d2 = INFINITY;
    for (int i = 0; i < 3; i++) {
        double t;
        cq_vec3 c = cq__closest_on_segment(p, v[i], v[(i + 1) % 3], &t);
        double d2 = cq_len2(cq_sub(p, c));
        if (!(d2 < best_d2))
            continue;
        best_d2 = d2;
        best = c;
        *region = t > 0 && t < 1 ? CQ_TRI_EDGE : CQ_TRI_VERTEX;
        *index = t < 1 ? i : (i + 1) % 3;
    }
    return best;
}

static cq_vec3 cq_tri_result(cq_vec3 c, cq_tri_region r, int i, cq_tri_region *region, int *index)
{
    *region = r;
    *index = i;
    return c;
}

cq_vec3 cq__closest_on_triangle(cq_vec3 p, cq_vec3 a, cq_vec3 b, cq_vec3 c,
                                cq_tri_region *region, int *index)
{
    const cq_vec3 v[3] = {a, b, c};
    cq_vec3 ab = cq_sub(b, a), ac = cq_sub(c, a);
    if (cq_len2(cq_cross(ab, ac)) <= CQ_FLAT_SIN2 * cq_len2(ab) * cq_len2(ac))
        return cq_closest_on_edges(p, v, region, index);
    /* Ericson's Voronoi-region walk: vertex a, b, edge ab, vertex c, edge ca,
     * edge bc, then the face. Every edge here has non-zero length. */
    cq_vec3 ap = cq_sub(p, a), bp = cq_sub(p, b), cp = cq_sub(p, c);
    double d1 = cq_dot(ab, ap), d2 = cq_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0)
        return cq_tri_result(a, CQ_TRI_VERTEX, 0, region, index);
    double d3 = cq_dot(ab, bp), d4 = cq_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3)
        return cq_tri_result(b, CQ_TRI_VERTEX, 1, region, index);
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0)
        return cq_tri_result(cq_mad(a, ab, d1 / (d1 - d3)), CQ_TRI_EDGE, 0, region, index);
    double d5 = cq_dot(ab, cp), d6 = cq_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6)
        return cq_tri_result(c, CQ_TRI_VERTEX, 2, region, index);
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0)
        return cq_tri_result(cq_mad(a, ac, d2 / (d2 - d6)), CQ_TRI_EDGE, 2, region, index);
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0)
        return cq_tri_result(cq_lerp(b, c, (d4 - d3) / ((d4 - d3) + (d5 - d6))), CQ_TRI_EDGE, 1, region, index);
    double den = va + vb + vc;
    /* Rounding in a sliver can leave no positive area: fall back to the edges. */
    if (!(den > 0))
        return cq_closest_on_edges(p, v, region, index);
    cq_vec3 f = cq_add(a, cq_add(cq_scale(ab, vb / den), cq_scale(ac, vc / den)));
    return cq_tri_result(f, CQ_TRI_FACE, 0, region, index);
}
