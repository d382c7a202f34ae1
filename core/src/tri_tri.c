/* Triangle-triangle: Guigue and Devillers' overlap test (seed 003: signs of
 * 4x4 orientation determinants only, no constructed intersection points),
 * and the triangle-triangle contact (exact distance when separated, a
 * 17-axis SAT and clipping when overlapping). */
#include "geom.h"
#include "manifold.h"
#include "narrow.h"

/* Touching counts as overlap: a point within this fraction of the largest
 * coordinate of a plane or a line is on it (rounding of the determinants). */
#define CQ_TT_REL_TOL 1e-12
/* Seed 002: face axes win unless an edge axis penetrates clearly less. */
#define CQ_TT_EDGE_BIAS 0.95

/* Plain comparisons: fmax is a library call here, and this is the hot path. */
static double cq_tt_larger(double a, double b) { return a > b ? a : b; }

static cq_vec3 cq_tt_normal(const cq_vec3 t[3]) { return cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])); }

/* Flat: (height / longest edge)^2 below CQ_SAT_DEGENERATE. Such a triangle
 * is handled as the segment (or point) it nearly is (an error of at most
 * 1e-6 of its length): its normal is too noisy for the orientation tests
 * and for an SAT axis. */
static bool cq_tt_flat(const cq_vec3 t[3], cq_vec3 n)
{
    double e2 = 0;
    for (int i = 0; i < 3; i++)
        e2 = cq_tt_larger(e2, cq_len2(cq_sub(t[(i + 1) % 3], t[i])));
    return !(cq_len2(n) > CQ_SAT_DEGENERATE * e2 * e2);
}

static double cq_tt_size(const cq_vec3 a[3], const cq_vec3 b[3])
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            s = cq_tt_larger(s, cq_tt_larger(fabs(cq_comp(a[i], k)), fabs(cq_comp(b[i], k))));
    return s;
}

/* The sign of an orientation value d = n . (x - p), zero when x is within
 * tol of the plane (or line pair) whose unnormalised normal is n. */
static int cq_tt_sign(double d, cq_vec3 n, double tol)
{
    if (d * d <= tol * tol * cq_len2(n))
        return 0;
    return d > 0 ? 1 : -1;
}

/* ---- Coplanar: 2D edges and containment (seed 003) ---- */

typedef struct cq_p2 {
    double x, y;
} cq_p2;

static int cq_p2_orient(cq_p2 a, cq_p2 b, cq_p2 c, double tol)
{
    double dx = b.x - a.x, dy = b.y - a.y, o = dx * (c.y - a.y) - dy * (c.x - a.x);
    return cq_tt_sign(o, cq_v3(dx, dy, 0), tol);
}

static bool cq_p2_in_box(cq_p2 a, cq_p2 b, cq_p2 c, double tol)
{
    return c.x >= fmin(a.x, b.x) - tol && c.x <= fmax(a.x, b.x) + tol && c.y >= fmin(a.y, b.y) - tol &&
           c.y <= fmax(a.y, b.y) + tol;
}

/* Closed segments ab and cd meet (zero-length segments included). */
static bool cq_p2_segments(cq_p2 a, cq_p2 b, cq_p2 c, cq_p2 d, double tol)
{
    int o1 = cq_p2_orient(a, b, c, tol), o2 = cq_p2_orient(a, b, d, tol);
    int o3 = cq_p2_orient(c, d, a, tol), o4 = cq_p2_orient(c, d, b, tol);
    if (o1 * o2 < 0 && o3 * o4 < 0)
        return true;
    return (o1 == 0 && cq_p2_in_box(a, b, c, tol)) || (o2 == 0 && cq_p2_in_box(a, b, d, tol)) ||
           (o3 == 0 && cq_p2_in_box(c, d, a, tol)) || (o4 == 0 && cq_p2_in_box(c, d, b, tol));
}

/* p inside the closed triangle t; a zero-area t contains nothing (its
 * edges are tested instead). */
static bool cq_p2_in_triangle(cq_p2 p, const cq_p2 t[3], double tol)
{
    int pos = 0, neg = 0;
    for (int i = 0; i < 3; i++) {
        int s = cq_p2_orient(t[i], t[(i + 1) % 3], p, tol);
        pos += s > 0;
        neg += s < 0;
    }
    return (pos == 0 || neg == 0) && cq_p2_orient(t[0], t[1], t[2], tol) != 0;
}

/* Drops the coordinate where n is largest: the projection of largest area. */
static void cq_tt_project(const cq_vec3 t[3], cq_vec3 n, cq_p2 out[3])
{
    cq_vec3 m = cq_vabs(n);
    int drop = m.x >= m.y && m.x >= m.z ? 0 : m.y >= m.z ? 1 : 2;
    for (int i = 0; i < 3; i++)
        out[i] = (cq_p2){cq_comp(t[i], (drop + 1) % 3), cq_comp(t[i], (drop + 2) % 3)};
}

static bool cq_tt_coplanar(const cq_vec3 a[3], const cq_vec3 b[3], cq_vec3 n, double tol)
{
    cq_p2 pa[3], pb[3];
    cq_tt_project(a, n, pa);
    cq_tt_project(b, n, pb);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (cq_p2_segments(pa[i], pa[(i + 1) % 3], pb[j], pb[(j + 1) % 3], tol))
                return true;
    return cq_p2_in_triangle(pa[0], pb, tol) || cq_p2_in_triangle(pb[0], pa, tol);
}

/* ---- Guigue-Devillers ---- */

/* Signs of t's vertices against the plane through p with normal n. */
static void cq_tt_signs(const cq_vec3 t[3], cq_vec3 p, cq_vec3 n, double tol, int s[3])
{
    for (int i = 0; i < 3; i++)
        s[i] = cq_tt_sign(cq_dot(cq_sub(t[i], p), n), n, tol);
}

static bool cq_tt_one_side(const int s[3]) { return s[0] != 0 && s[0] == s[1] && s[0] == s[2]; }

/* The canonical form: the vertex alone on its side of the other plane (a
 * vertex on the plane joins whichever side leaves one alone, in Guigue and
 * Devillers' order), and whether that side is the negative one. -1 when all
 * three lie on the plane. */
static int cq_tt_lonely(const int s[3], bool *neg)
{
    int alone;
    if (s[0] != 0) {
        alone = s[1] == s[0] ? 2 : s[2] == s[0] ? 1 : 0;
        *neg = (alone == 0) == (s[0] < 0);
    } else if (s[1] != 0) {
        alone = s[2] == s[1] ? 0 : 1;
        *neg = (alone == 0) == (s[1] > 0);
    } else {
        alone = s[2] != 0 ? 2 : -1;
        *neg = s[2] < 0;
    }
    return alone;
}

/* [a, b, c, d] > 0 beyond the tolerance: d strictly above the plane abc. */
static bool cq_tt_above(cq_vec3 a, cq_vec3 b, cq_vec3 c, cq_vec3 d, double tol)
{
    cq_vec3 n = cq_cross(cq_sub(b, a), cq_sub(c, a));
    return cq_tt_sign(cq_dot(cq_sub(d, a), n), n, tol) > 0;
}

/* With p1 and p2 alone on the positive sides, the intervals on the planes'
 * common line overlap iff [p1,q1,p2,q2] <= 0 and [p1,r1,r2,p2] <= 0. */
static bool cq_tt_intervals(const cq_vec3 t1[3], const cq_vec3 t2[3], double tol)
{
    return !cq_tt_above(t1[1], t2[0], t1[0], t2[1], tol) && !cq_tt_above(t1[0], t2[0], t1[2], t2[2], tol);
}

static void cq_tt_rotate(const cq_vec3 in[3], int first, bool flip, cq_vec3 out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = in[(first + i) % 3];
    if (flip) {
        cq_vec3 t = out[1];
        out[1] = out[2];
        out[2] = t;
    }
}

static bool cq_tt_gd(const cq_vec3 a[3], const cq_vec3 b[3], cq_vec3 na, cq_vec3 nb, double tol)
{
    int sa[3], sb[3];
    cq_tt_signs(a, b[0], nb, tol, sa);
    cq_tt_signs(b, a[0], na, tol, sb);
    if (cq_tt_one_side(sa) || cq_tt_one_side(sb))
        return false;
    bool neg_a, neg_b;
    int ia = cq_tt_lonely(sa, &neg_a);
    if (ia < 0)
        return cq_tt_coplanar(a, b, na, tol);
    /* A's lonely vertex on the negative side: reverse B to compensate. */
    int sb2[3] = {sb[0], neg_a ? sb[2] : sb[1], neg_a ? sb[1] : sb[2]};
    cq_vec3 b2[3], t1[3], t2[3];
    cq_tt_rotate(b, 0, neg_a, b2);
    int ib = cq_tt_lonely(sb2, &neg_b);
    if (ib < 0)
        return cq_tt_coplanar(a, b, na, tol);
    cq_tt_rotate(a, ia, neg_b, t1);
    cq_tt_rotate(b2, ib, false, t2);
    return cq_tt_intervals(t1, t2, tol);
}

/* ---- Flat triangles ---- */

/* The segment a flat triangle collapses to: its longest edge. */
static int cq_tt_longest(const cq_vec3 t[3])
{
    int m = 0;
    for (int i = 1; i < 3; i++)
        if (cq_len2(cq_sub(t[(i + 1) % 3], t[i])) > cq_len2(cq_sub(t[(m + 1) % 3], t[m])))
            m = i;
    return m;
}

static void cq_tt_segment(const cq_vec3 t[3], cq_vec3 *p, cq_vec3 *q)
{
    int m = cq_tt_longest(t);
    *p = t[m];
    *q = t[(m + 1) % 3];
}

/* Segment pq against the triangle t (normal n): it must reach the plane,
 * and then its line must pass every edge on the same side. */
static bool cq_tt_segment_triangle(cq_vec3 p, cq_vec3 q, const cq_vec3 t[3], cq_vec3 n, double tol)
{
    int sp = cq_tt_sign(cq_dot(cq_sub(p, t[0]), n), n, tol), sq = cq_tt_sign(cq_dot(cq_sub(q, t[0]), n), n, tol);
    if (sp * sq > 0)
        return false;
    if (sp == 0 && sq == 0) {
        const cq_vec3 s[3] = {p, q, q};
        return cq_tt_coplanar(s, t, n, tol);
    }
    cq_vec3 d = cq_sub(q, p);
    int pos = 0, neg = 0;
    for (int i = 0; i < 3; i++) {
        cq_vec3 e = cq_sub(t[(i + 1) % 3], t[i]);
        double o = cq_dot(cq_cross(cq_sub(t[i], p), e), d);
        int s = cq_tt_sign(o, cq_cross(d, e), tol);
        pos += s > 0;
        neg += s < 0;
    }
    return pos == 0 || neg == 0;
}

bool cq_triangle_triangle_overlap(const cq_vec3 a[3], const cq_vec3 b[3])
{
    double tol = CQ_TT_REL_TOL * cq_tt_size(a, b);
    cq_vec3 na = cq_tt_normal(a), nb = cq_tt_normal(b), p, q, r, s, c1, c2;
    bool fa = cq_tt_flat(a, na), fb = cq_tt_flat(b, nb);
    if (!fa && !fb)
        return cq_tt_gd(a, b, na, nb, tol);
    if (fa && fb) {
        double u, v;
        cq_tt_segment(a, &p, &q);
        cq_tt_segment(b, &r, &s);
        return cq__closest_segments(p, q, r, s, &u, &v, &c1, &c2) <= tol * tol;
    }
    cq_tt_segment(fa ? a : b, &p, &q);
    return cq_tt_segment_triangle(p, q, fa ? b : a, fa ? nb : na, tol);
}

/* ---- The contact: separated ---- */

typedef struct cq_tt_near {
    double d2;
    cq_vec3 pa, pb;
    cq_feature f;
} cq_tt_near;

static uint8_t cq_tt_region_kind(cq_tri_region r)
{
    return r == CQ_TRI_FACE ? CQ_FEAT_FACE : r == CQ_TRI_EDGE ? CQ_FEAT_EDGE : CQ_FEAT_VERTEX;
}

/* x's vertices against the triangle y; x_is_a tells which side is which. */
static void cq_tt_vertices(const cq_vec3 x[3], const cq_vec3 y[3], bool x_is_a, cq_tt_near *best)
{
    for (int i = 0; i < 3; i++) {
        cq_tri_region r;
        int k;
        cq_vec3 c = cq__closest_on_triangle(x[i], y[0], y[1], y[2], &r, &k);
        double d2 = cq_len2(cq_sub(c, x[i]));
        if (!(d2 < best->d2))
            continue;
        cq_feature f = {CQ_FEAT_VERTEX, cq_tt_region_kind(r), (uint16_t)i, (uint16_t)k};
        *best = x_is_a ? (cq_tt_near){d2, x[i], c, f} : (cq_tt_near){d2, c, x[i], cq_feature_swap(f)};
    }
}

static void cq_tt_edges(const cq_vec3 a[3], const cq_vec3 b[3], cq_tt_near *best)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s, t;
            cq_vec3 ca, cb;
            double d2 = cq__closest_segments(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3], &s, &t, &ca, &cb);
            if (d2 < best->d2)
                *best = (cq_tt_near){d2, ca, cb, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, (uint16_t)i, (uint16_t)j}};
        }
}

/* Disjoint triangles are nearest at a vertex against the other triangle or
 * at two edges: the minimum of those 15 closest-point pairs is exact. Within
 * the skin the pair touches at one point, the witness on B. */
static void cq_tt_separated(const cq_pair_query *q, const cq_vec3 a[3], const cq_vec3 b[3], double tol,
                            cq_contact *out)
{
    cq_tt_near c = {.d2 = INFINITY};
    cq_tt_vertices(a, b, true, &c);
    cq_tt_vertices(b, a, false, &c);
    cq_tt_edges(a, b, &c);
    out->has_distance = true;
    out->distance = sqrt(c.d2);
    out->witness_a = c.pa;
    out->witness_b = c.pb;
    out->overlap = out->distance <= q->skin;
    out->has_normal = cq_normalize(cq_sub(c.pb, c.pa), tol * tol, &out->normal) || cq__previous_normal(q, out);
    if (!out->overlap || !out->has_normal)
        return;
    out->points[0] = (cq_contact_point){c.pb, -out->distance, c.f};
    out->point_count = 1;
}

/* ---- The contact: overlapping ---- */

enum { CQ_TT_FACE_A, CQ_TT_FACE_B, CQ_TT_CROSS, CQ_TT_SIDE_A, CQ_TT_SIDE_B };

/* One unit axis oriented from A to B; i, j: the edges of A and B it comes
 * from (-1: none). */
typedef struct cq_tt_axis {
    int kind, i, j;
    cq_vec3 n;
    double pen; /* overlap along n; negative = gap */
} cq_tt_axis;

typedef struct cq_tt_sat {
    const cq_vec3 *a, *b;
    cq_vec3 prev; /* previous normal or zero: breaks exact sign ties */
    cq_tt_axis face, edge;
    int skipped;
} cq_tt_sat;

static void cq_tt_range(const cq_vec3 t[3], cq_vec3 l, double *lo, double *hi)
{
    double p0 = cq_dot(l, t[0]), p1 = cq_dot(l, t[1]), p2 = cq_dot(l, t[2]);
    *lo = fmin(p0, fmin(p1, p2));
    *hi = fmax(p0, fmax(p1, p2));
}

/* Sign by the centre difference (seed 002), centres being the middles of
 * the projected intervals: that is the side of smaller overlap. */
static void cq_tt_consider(cq_tt_sat *s, cq_vec3 raw, int kind, int i, int j)
{
    cq_vec3 l;
    if (!cq_normalize(raw, CQ_SAT_DEGENERATE, &l)) {
        s->skipped++;
        return;
    }
    double alo, ahi, blo, bhi;
    cq_tt_range(s->a, l, &alo, &ahi);
    cq_tt_range(s->b, l, &blo, &bhi);
    double mid = (blo + bhi) - (alo + ahi);
    bool neg = mid < 0 || (mid == 0 && cq_dot(s->prev, l) < 0);
    cq_tt_axis ax = {kind, i, j, neg ? cq_neg(l) : l, neg ? bhi - alo : ahi - blo};
    cq_tt_axis *best = kind <= CQ_TT_FACE_B ? &s->face : &s->edge;
    if (ax.pen < best->pen)
        *best = ax;
}

/* The unit normal, or zero for a flat triangle (a skipped axis). */
static cq_vec3 cq_tt_unit_normal(const cq_vec3 t[3])
{
    cq_vec3 n = cq_tt_normal(t);
    return cq_tt_flat(t, n) ? cq_v3(0, 0, 0) : cq_scale(n, 1 / cq_len(n));
}

/* The unit direction of edge i, zero for a zero-length edge. */
static cq_vec3 cq_tt_edge_dir(const cq_vec3 t[3], int i)
{
    cq_vec3 u = cq_v3(0, 0, 0);
    cq_normalize(cq_sub(t[(i + 1) % 3], t[i]), 0, &u);
    return u;
}

/* The 17 axes: both normals, the 9 edge crosses, and the 6 in-plane edge
 * normals that separate coplanar triangles. */
static void cq_tt_axes(cq_tt_sat *s)
{
    cq_vec3 na = cq_tt_unit_normal(s->a), nb = cq_tt_unit_normal(s->b), ua[3], ub[3];
    for (int i = 0; i < 3; i++) {
        ua[i] = cq_tt_edge_dir(s->a, i);
        ub[i] = cq_tt_edge_dir(s->b, i);
    }
    cq_tt_consider(s, na, CQ_TT_FACE_A, -1, -1);
    cq_tt_consider(s, nb, CQ_TT_FACE_B, -1, -1);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            cq_tt_consider(s, cq_cross(ua[i], ub[j]), CQ_TT_CROSS, i, j);
    for (int k = 0; k < 3; k++) {
        cq_tt_consider(s, cq_cross(na, ua[k]), CQ_TT_SIDE_A, k, -1);
        cq_tt_consider(s, cq_cross(nb, ub[k]), CQ_TT_SIDE_B, -1, k);
    }
}

/* When penetrating, an edge axis must beat CQ_TT_EDGE_BIAS times the face
 * penetration (no face axis: +inf, so any edge axis wins). */
static cq_tt_axis cq_tt_choose(const cq_tt_sat *s)
{
    const cq_tt_axis *f = &s->face, *e = &s->edge;
    bool edge = f->pen > 0 ? e->pen < CQ_TT_EDGE_BIAS * f->pen : e->pen < f->pen;
    return edge ? *e : *f;
}

static int cq_tt_farthest(const cq_vec3 t[3], cq_vec3 dir)
{
    int m = 0;
    for (int i = 1; i < 3; i++)
        if (cq_dot(t[i], dir) > cq_dot(t[m], dir))
            m = i;
    return m;
}

/* The triangle as a clipping polygon (flat ones only ever incident). */
static cq_face cq_tt_face(const cq_vec3 t[3], cq_vec3 n) { return cq__triangle_face(t, n, cq_tt_flat(t, cq_tt_normal(t))); }

/* Reference = the triangle whose normal is the axis, incident = the other;
 * B as reference gets A's points projected onto it and the halves of each
 * feature swapped. */
static int cq_tt_clip(const cq_vec3 a[3], const cq_vec3 b[3], const cq_tt_axis *ax, double skin,
                      cq_contact_point out[CQ_CLIP_MAX])
{
    cq_face fa = cq_tt_face(a, ax->n), fb = cq_tt_face(b, cq_neg(ax->n));
    if (ax->kind == CQ_TT_FACE_A)
        return cq__clip_face(&fa, &fb, skin, false, out);
    int m = cq__clip_face(&fb, &fa, skin, true, out);
    for (int i = 0; i < m; i++)
        out[i].feature = cq_feature_swap(out[i].feature);
    return m;
}

/* The feature of t an edge axis comes from: edge e, or (e < 0) the vertex
 * farthest along dir, as a segment. */
static void cq_tt_feature(const cq_vec3 t[3], int e, cq_vec3 dir, cq_vec3 seg[2], uint8_t *kind, uint16_t *idx)
{
    int m = e >= 0 ? e : cq_tt_farthest(t, dir);
    seg[0] = t[m];
    seg[1] = e >= 0 ? t[(m + 1) % 3] : t[m];
    *kind = e >= 0 ? CQ_FEAT_EDGE : CQ_FEAT_VERTEX;
    *idx = (uint16_t)m;
}

/* Edge axes: one point, the closest point on B's feature to A's. */
static int cq_tt_edge_point(const cq_vec3 a[3], const cq_vec3 b[3], const cq_tt_axis *ax, cq_contact_point *out)
{
    cq_vec3 sa[2], sb[2], ca, cb;
    double s, t;
    cq_feature f;
    cq_tt_feature(a, ax->i, ax->n, sa, &f.kind_a, &f.index_a);
    cq_tt_feature(b, ax->j, cq_neg(ax->n), sb, &f.kind_b, &f.index_b);
    cq__closest_segments(sa[0], sa[1], sb[0], sb[1], &s, &t, &ca, &cb);
    out[0] = (cq_contact_point){cb, ax->pen, f};
    return 1;
}

/* One point at B's vertex deepest along n: for an empty clip (touching
 * within rounding) and for the previous-normal fallback. */
static int cq_tt_deepest(const cq_vec3 b[3], cq_vec3 n, double pen, cq_contact_point *out)
{
    int m = cq_tt_farthest(b, cq_neg(n));
    out[0] = (cq_contact_point){b[m], pen, {CQ_FEAT_NONE, CQ_FEAT_VERTEX, 0, (uint16_t)m}};
    return 1;
}

static void cq_tt_manifold(const cq_vec3 a[3], const cq_vec3 b[3], const cq_tt_axis *ax, double skin,
                           cq_contact *out)
{
    cq_contact_point pts[CQ_CLIP_MAX];
    int m = ax->kind <= CQ_TT_FACE_B ? cq_tt_clip(a, b, ax, skin, pts) : cq_tt_edge_point(a, b, ax, pts);
    if (m == 0)
        m = cq_tt_deepest(b, ax->n, ax->pen, pts);
    m = cq__reduce_manifold(pts, m, ax->n);
    for (int i = 0; i < m; i++)
        out->points[i] = pts[i];
    out->point_count = m;
}

/* Every axis skipped (flat triangles along one line, or points): no
 * direction is defined; the previous normal, if any, with the overlap
 * measured along it. */
static void cq_tt_undefined(const cq_pair_query *q, const cq_vec3 a[3], const cq_vec3 b[3], cq_contact *out)
{
    out->has_normal = cq__previous_normal(q, out);
    if (!out->has_normal)
        return;
    double alo, ahi, blo, bhi;
    cq_tt_range(a, out->normal, &alo, &ahi);
    cq_tt_range(b, out->normal, &blo, &bhi);
    out->depth = fmax(ahi - blo, 0);
    out->point_count = cq_tt_deepest(b, out->normal, ahi - blo, out->points);
}

static void cq_tt_overlapping(const cq_pair_query *q, const cq_vec3 a[3], const cq_vec3 b[3], cq_contact *out)
{
    cq_tt_sat s = {a, b, cq_v3(0, 0, 0), {.pen = INFINITY}, {.pen = INFINITY}, 0};
    if (q->cache && q->cache->has_normal)
        s.prev = q->cache->normal;
    cq_tt_axes(&s);
    cq_count(q->counters, CQ_CTR_SAT_AXES_SKIPPED, (uint64_t)s.skipped);
    out->overlap = true;
    if (s.face.pen == INFINITY && s.edge.pen == INFINITY) {
        cq_tt_undefined(q, a, b, out);
        return;
    }
    cq_tt_axis ax = cq_tt_choose(&s);
    out->has_normal = true;
    out->normal = ax.n;
    out->depth = fmax(ax.pen, 0);
    if (!q->skip_manifold)
        cq_tt_manifold(a, b, &ax, q->skin, out);
}

void cq__triangle_triangle(const cq_pair_query *q, cq_contact *out)
{
    cq_vec3 a[3], b[3];
    for (int i = 0; i < 3; i++) {
        a[i] = cq_xform_point(&q->xa, q->a->triangle.v[i]);
        b[i] = cq_xform_point(&q->xb, q->b->triangle.v[i]);
    }
    if (cq_triangle_triangle_overlap(a, b))
        cq_tt_overlapping(q, a, b, out);
    else
        cq_tt_separated(q, a, b, CQ_TT_REL_TOL * cq_tt_size(a, b), out);
}
