/* Triangle-box: Akenine-Moller's 13-axis SAT (seed 003) as a boolean test,
 * and the box-triangle contact (the same axes, unit length, for the verdict,
 * normal and depth; face clipping or an edge pair for the manifold). Both
 * work in the box frame, where the box is centred at the origin with its
 * faces on the coordinate axes. */
#include "box.h"
#include "geom.h"
#include "narrow.h"

/* Touching counts as overlap: gaps up to this fraction of the problem's
 * size (largest coordinate or half extent) are rounding, not separation;
 * moving the triangle into the box frame alone rounds at about 1e-16 of it. */
#define CQ_TB_REL_TOL 1e-12
/* Seed 002: face axes win unless an edge axis penetrates clearly less. */
#define CQ_TB_EDGE_BIAS 0.95

/* The triangle in the box frame. */
typedef struct cq_tb_frame {
    cq_vec3 v[3];
    cq_vec3 h;
    double tol; /* touching tolerance, world units */
} cq_tb_frame;

static double cq_sum_abs(cq_vec3 a) { return fabs(a.x) + fabs(a.y) + fabs(a.z); }

static cq_tb_frame cq_tb_frame_make(const cq_vec3 tri[3], const cq_obb *box)
{
    cq_tb_frame f = {.h = box->half};
    double size = cq_larger(cq_max_abs(box->half), cq_max_abs(box->center));
    for (int i = 0; i < 3; i++) {
        f.v[i] = cq_mul_mtv(&box->axes, cq_sub(tri[i], box->center));
        size = cq_larger(size, cq_max_abs(tri[i]));
    }
    f.tol = CQ_TB_REL_TOL * size;
    return f;
}

/* e_k x d for the box axis e_k: only components of d, so exact. */
static cq_vec3 cq_axis_cross(int k, cq_vec3 d)
{
    return k == 0 ? cq_v3(0, -d.z, d.y) : k == 1 ? cq_v3(d.z, 0, -d.x) : cq_v3(-d.y, d.x, 0);
}

/* True when the values p0, p1 both lie beyond the box's extent r along an
 * unnormalised axis a (the tolerance scaled by |a|_1 >= |a|). */
static bool cq_tb_beyond(double p0, double p1, cq_vec3 a, const cq_tb_frame *f)
{
    double r = cq_dot(f->h, cq_vabs(a)) + f->tol * cq_sum_abs(a);
    return (p0 > r && p1 > r) || (p0 < -r && p1 < -r);
}

/* Axes e_k x f_j: vertices j and j+1 project alike on them, so only vertex
 * j and the opposite vertex are compared (Akenine-Moller's reduction). */
static bool cq_tb_edges_separate(const cq_tb_frame *f)
{
    for (int j = 0; j < 3; j++) {
        cq_vec3 pj = f->v[j], po = f->v[(j + 2) % 3], e = cq_sub(f->v[(j + 1) % 3], pj);
        for (int k = 0; k < 3; k++) {
            cq_vec3 a = cq_axis_cross(k, e);
            if (cq_tb_beyond(cq_dot(a, pj), cq_dot(a, po), a, f))
                return true;
        }
    }
    return false;
}

/* The box face axes: the box against the triangle's AABB. */
static bool cq_tb_faces_separate(const cq_tb_frame *f)
{
    for (int k = 0; k < 3; k++) {
        double a = cq_comp(f->v[0], k), b = cq_comp(f->v[1], k), c = cq_comp(f->v[2], k);
        double r = cq_comp(f->h, k) + f->tol;
        if ((a > r && b > r && c > r) || (a < -r && b < -r && c < -r))
            return true;
    }
    return false;
}

/* The triangle's plane against the box (seed 003's plane-box test: the box
 * reaches h . |n| along n from its centre). */
static bool cq_tb_plane_separates(const cq_tb_frame *f)
{
    cq_vec3 n = cq_cross(cq_sub(f->v[1], f->v[0]), cq_sub(f->v[2], f->v[0]));
    double s = cq_dot(n, f->v[0]);
    return cq_tb_beyond(s, s, n, f);
}

bool cq_triangle_box_overlap(const cq_vec3 tri[3], const cq_obb *box)
{
    cq_tb_frame f = cq_tb_frame_make(tri, box);
    return !cq_tb_edges_separate(&f) && !cq_tb_faces_separate(&f) && !cq_tb_plane_separates(&f);
}

/* ---- The contact ---- */

enum { CQ_TB_BOX_FACE, CQ_TB_TRI_FACE, CQ_TB_EDGE };

/* One unit axis, oriented from A to B. */
typedef struct cq_tb_axis {
    int kind;
    int k, j;   /* box axis; triangle edge (edge axes) */
    cq_vec3 n;  /* box frame */
    double pen; /* overlap along n; negative = gap */
} cq_tb_axis;

/* Projects both shapes on the unit axis l. The sign follows the centre
 * difference (seed 002), taking B's centre as the middle of its projected
 * interval: that picks the side with the smaller overlap, pen = -gap. An
 * exact tie keeps the side of the previous normal (prev, box frame). */
static cq_tb_axis cq_tb_eval(const cq_tb_frame *f, cq_vec3 l, cq_vec3 prev, int kind, int k, int j)
{
    double p0 = cq_dot(l, f->v[0]), p1 = cq_dot(l, f->v[1]), p2 = cq_dot(l, f->v[2]);
    double lo = fmin(p0, fmin(p1, p2)), hi = fmax(p0, fmax(p1, p2));
    double r = cq_dot(f->h, cq_vabs(l)), mid = lo + hi;
    bool neg = mid < 0 || (mid == 0 && cq_dot(prev, l) < 0);
    return (cq_tb_axis){kind, k, j, neg ? cq_neg(l) : l, neg ? hi + r : r - lo};
}

/* The triangle's unit normal; false (a skipped axis) when the triangle is
 * flat: (height / longest edge)^2 below CQ_SAT_DEGENERATE, the same bound
 * as for the cross axes. A segment-like triangle is then handled by its
 * edge axes alone, which is complete for a segment. */
static bool cq_tb_tri_normal(const cq_tb_frame *f, cq_vec3 *n)
{
    cq_vec3 c = cq_cross(cq_sub(f->v[1], f->v[0]), cq_sub(f->v[2], f->v[0]));
    double e2 = 0;
    for (int j = 0; j < 3; j++)
        e2 = fmax(e2, cq_len2(cq_sub(f->v[(j + 1) % 3], f->v[j])));
    if (!(cq_len2(c) > CQ_SAT_DEGENERATE * e2 * e2))
        return false;
    return cq_normalize(c, 0, n);
}

/* The best face axis and the best edge axis (pen = +inf if none). */
typedef struct cq_tb_best {
    cq_tb_axis face, edge;
    int skipped;
    bool flat; /* the triangle's normal was skipped */
} cq_tb_best;

static void cq_tb_keep(cq_tb_axis *best, cq_tb_axis ax)
{
    if (ax.pen < best->pen)
        *best = ax;
}

/* Edge axes e_k x u_j with u_j the unit edge direction; an axis whose
 * squared length is below CQ_SAT_DEGENERATE (or a zero-length edge) is
 * skipped: its direction is rounding noise. */
static void cq_tb_edge_axes(const cq_tb_frame *f, cq_vec3 prev, cq_tb_best *b)
{
    for (int j = 0; j < 3; j++) {
        cq_vec3 u = cq_v3(0, 0, 0); /* stays zero for a zero-length edge */
        cq_normalize(cq_sub(f->v[(j + 1) % 3], f->v[j]), 0, &u);
        for (int k = 0; k < 3; k++) {
            cq_vec3 l = cq_axis_cross(k, u);
            if (!cq_normalize(l, CQ_SAT_DEGENERATE, &l)) {
                b->skipped++;
                continue;
            }
            cq_tb_keep(&b->edge, cq_tb_eval(f, l, prev, CQ_TB_EDGE, k, j));
        }
    }
}

static cq_tb_best cq_tb_axes(const cq_tb_frame *f, cq_vec3 prev)
{
    cq_tb_best b = {.face = {.pen = INFINITY}, .edge = {.pen = INFINITY}};
    for (int k = 0; k < 3; k++) {
        cq_vec3 l = cq_v3(k == 0, k == 1, k == 2);
        cq_tb_keep(&b.face, cq_tb_eval(f, l, prev, CQ_TB_BOX_FACE, k, 0));
    }
    cq_vec3 n;
    b.flat = !cq_tb_tri_normal(f, &n);
    if (b.flat)
        b.skipped++;
    else
        cq_tb_keep(&b.face, cq_tb_eval(f, n, prev, CQ_TB_TRI_FACE, 0, 0));
    cq_tb_edge_axes(f, prev, &b);
    return b;
}

/* When penetrating, an edge axis must beat CQ_TB_EDGE_BIAS times the face
 * penetration; when the best face axis separates or touches (within skin,
 * or a penetration within rounding, tol), the axis with the larger gap is
 * the better separating direction, by more than rounding: an edge axis
 * along the face normal has the face's gap give or take an ulp, and would
 * turn a face contact into one edge point. */
static cq_tb_axis cq_tb_choose(const cq_tb_best *b, double tol)
{
    const cq_tb_axis *f = &b->face, *e = &b->edge;
    bool edge = f->pen > tol ? e->pen < CQ_TB_EDGE_BIAS * f->pen : e->pen < f->pen - tol;
    return edge ? *e : *f;
}

/* The point where edge a-b of the triangle crosses the plane x_c = 0 (box
 * frame), its coordinate c set to exactly 0; false when it does not cross.
 * An edge lying in the plane gives its ends through its neighbours. */
static bool cq_tb_plane_cross(cq_vec3 a, cq_vec3 b, int c, cq_vec3 *out)
{
    double da = cq_comp(a, c), db = cq_comp(b, c);
    if (da == 0) {
        *out = a;
        return true;
    }
    if ((da < 0) == (db < 0) || db == 0)
        return false;
    *out = cq_add(a, cq_scale(cq_sub(b, a), da / (da - db)));
    cq_set_comp(out, c, 0);
    return true;
}

/* The triangle seen edge-on along n (within about 6 degrees of parallel to
 * it) against a box face that is a segment or a point: the only lines
 * along n that meet the face lie in the plane through the segment and n,
 * x_c = 0 in the box frame (c the face's zero axis). The triangle's cut by
 * that plane, clipped to the segment's extent along axis a, holds the
 * points; each one's depth is measured along n to the face, so moved by it
 * the point lies on the box. Clipping the projected triangle instead would
 * need the face's sides, which it has not. */
static int cq_tb_edge_on(const cq_obb *box, const cq_tb_frame *f, int k, int c, cq_vec3 nb, double skin,
                         uint16_t face, cq_contact_point out[CQ_CLIP_MAX])
{
    int a = 3 - k - c, m = 0;
    cq_vec3 cut[3];
    for (int j = 0; j < 3 && m < 2; j++)
        if (cq_tb_plane_cross(f->v[j], f->v[(j + 1) % 3], c, &cut[m]) &&
            (m == 0 || cq_len2(cq_sub(cut[m], cut[0])) > 0))
            m++;
    if (m == 0)
        return 0;
    if (m == 1)
        cut[1] = cut[0];
    double ha = cq_comp(f->h, a) + f->tol, ua = cq_comp(cut[0], a), ub = cq_comp(cut[1], a);
    double t0 = 0, t1 = 1, du = ub - ua;
    if (du == 0 && fabs(ua) > ha)
        return 0;
    if (du != 0) {
        double s0 = (-ha - ua) / du, s1 = (ha - ua) / du;
        t0 = fmax(t0, fmin(s0, s1)), t1 = fmin(t1, fmax(s0, s1));
    }
    if (t0 > t1)
        return 0;
    int n = 0;
    for (int e = 0; e < (t1 > t0 ? 2 : 1); e++) {
        double t = e ? t1 : t0;
        cq_vec3 p = t == 0 ? cut[0] : t == 1 ? cut[1] : cq_add(cut[0], cq_scale(cq_sub(cut[1], cut[0]), t));
        double depth = cq_comp(f->h, k) - cq_dot(p, nb);
        if (depth < -skin)
            continue;
        cq_vec3 w = cq_add(box->center, cq_mul_mv(&box->axes, p));
        out[n++] = (cq_contact_point){w, depth, {CQ_FEAT_FACE, CQ_FEAT_FACE, face, 0}};
    }
    return n;
}

/* A box face that is a segment or a point (the box is zero across it, or
 * so thin that its corners round together) has no sides to clip by: the
 * triangle is the reference instead, facing A, the face seen along n (the
 * normal is the box's axis, not the triangle's, so the points must lie on
 * lines along it), where the triangle is not within about 6 degrees of
 * parallel to n; nearer parallel, its cut through the face's plane. */
static int cq_tb_collapsed_ref(const cq_obb *box, const cq_tb_frame *f, const cq_vec3 t[3], bool flat,
                               cq_face *box_face, int k, cq_vec3 n, double skin, cq_contact_point out[CQ_CLIP_MAX])
{
    cq_vec3 tn, nb = cq_mul_mtv(&box->axes, n);
    int c = cq_comp(f->h, (k + 1) % 3) <= cq_comp(f->h, (k + 2) % 3) ? (k + 1) % 3 : (k + 2) % 3;
    if (flat || !cq_normalize(cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])), 0, &tn))
        return cq_tb_edge_on(box, f, k, c, nb, skin, box_face->fid, out);
    if (cq_dot(tn, n) > 0)
        tn = cq_neg(tn);
    if (-cq_dot(tn, n) < 0.1)
        return cq_tb_edge_on(box, f, k, c, nb, skin, box_face->fid, out);
    cq_face ref = cq__triangle_face(t, tn, false);
    int m = cq__clip_face_along(&ref, box_face, cq_neg(n), skin, true, out);
    for (int i = 0; i < m; i++)
        out[i].feature = cq_feature_swap(out[i].feature);
    return m;
}

/* Box face reference, triangle incident: the points stay on the triangle. */
static int cq_tb_box_ref(const cq_obb *box, const cq_tb_frame *f, const cq_vec3 t[3], bool flat, int k, cq_vec3 n, double skin,
                         cq_contact_point out[CQ_CLIP_MAX])
{
    cq_face ref, inc = cq__triangle_face(t, cq_neg(n), flat);
    cq__box_face(box, cq_box_face_id(k, cq_dot(box->axes.c[k], n)), &ref);
    cq_face compact = ref; /* corners that coincide, to rounding or exactly */
    cq__box_face_compact(&compact, n);
    if (compact.count < 4)
        return cq_tb_collapsed_ref(box, f, t, flat, &compact, k, n, skin, out);
    return cq__clip_face(&ref, &inc, skin, false, out);
}

/* Triangle reference (it is B, so its half of each feature is swapped to
 * the B side), the box face facing it incident, projected onto it. */
static int cq_tb_tri_ref(const cq_obb *box, const cq_vec3 t[3], cq_vec3 n, double skin,
                         cq_contact_point out[CQ_CLIP_MAX])
{
    cq_face inc, ref = cq__triangle_face(t, cq_neg(n), false);
    cq__box_face(box, cq__box_face_toward(box, &n), &inc);
    int m = cq__clip_face(&ref, &inc, skin, true, out);
    for (int i = 0; i < m; i++)
        out[i].feature = cq_feature_swap(out[i].feature);
    return m;
}

/* Edge-edge: one point, the closest point of the triangle's edge to the
 * box's edge that lies farthest along n. */
static int cq_tb_edge_point(const cq_obb *box, const cq_vec3 t[3], const cq_tb_axis *ax, cq_vec3 n,
                            cq_contact_point *out)
{
    cq_vec3 p, q, ca, cb;
    double s, u;
    uint16_t ea = cq__box_edge_toward(box, ax->k, &n, &p, &q);
    cq__closest_segments(p, q, t[ax->j], t[(ax->j + 1) % 3], &s, &u, &ca, &cb);
    out[0] = (cq_contact_point){cb, ax->pen, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, ea, (uint16_t)ax->j}};
    return 1;
}

/* Where the line v + s nb (box frame) leaves the box on the side nb
 * points to: s at that end; false when the line misses the box (to the
 * touching tolerance). */
static bool cq_tb_exit_along(const cq_tb_frame *f, cq_vec3 v, cq_vec3 nb, double *s)
{
    double lo = -INFINITY, hi = INFINITY;
    for (int i = 0; i < 3; i++) {
        double h = cq_comp(f->h, i) + f->tol, p = cq_comp(v, i), d = cq_comp(nb, i);
        if (d == 0) {
            if (fabs(p) > h)
                return false;
            continue;
        }
        double s0 = (-h - p) / d, s1 = (h - p) / d;
        lo = fmax(lo, fmin(s0, s1)), hi = fmin(hi, fmax(s0, s1));
    }
    *s = hi;
    return lo <= hi;
}

/* A clip can come back empty inside the skin (the nearest part of the
 * triangle outside the face's side planes): then the triangle's vertex
 * deepest along the normal stands for the contact, its depth measured
 * along the normal to the box (the point rule), or no point where that
 * line misses the box or the vertex lies beyond the skin. */
static int cq_tb_deepest(const cq_tb_frame *f, const cq_vec3 t[3], const cq_tb_axis *ax, double skin,
                         cq_contact_point *out)
{
    int m = 0;
    for (int i = 1; i < 3; i++)
        if (cq_dot(f->v[i], ax->n) < cq_dot(f->v[m], ax->n))
            m = i;
    double depth;
    if (!cq_tb_exit_along(f, f->v[m], ax->n, &depth) || depth < -skin)
        return 0;
    out[0] = (cq_contact_point){t[m], depth, {CQ_FEAT_NONE, CQ_FEAT_VERTEX, 0, (uint16_t)m}};
    return 1;
}

static void cq_tb_manifold(const cq_obb *box, const cq_vec3 t[3], const cq_tb_frame *f, const cq_tb_best *b,
                           const cq_tb_axis *ax, double skin, cq_contact *out)
{
    cq_contact_point pts[CQ_CLIP_MAX];
    cq_vec3 n = out->normal;
    int m = ax->kind == CQ_TB_BOX_FACE   ? cq_tb_box_ref(box, f, t, b->flat, ax->k, n, skin, pts)
            : ax->kind == CQ_TB_TRI_FACE ? cq_tb_tri_ref(box, t, n, skin, pts)
                                         : cq_tb_edge_point(box, t, ax, n, pts);
    if (m == 0)
        m = cq_tb_deepest(f, t, ax, skin, pts);
    m = cq__reduce_manifold(pts, m, n);
    for (int i = 0; i < m; i++)
        out->points[i] = pts[i];
    out->point_count = m;
}

/* The verdict is the SAT's: overlap when the largest gap over the 13 unit
 * axes is at most the skin. That gap is a lower bound of the Euclidean
 * distance, not the distance, so a separated pair reports no distance; its
 * normal is the most separating axis. */
void cq__box_triangle(const cq_pair_query *q, cq_contact *out)
{
    cq_obb box = cq_obb_from_box(q->a, &q->xa);
    cq_vec3 t[3];
    for (int i = 0; i < 3; i++)
        t[i] = cq_xform_point(&q->xb, q->b->triangle.v[i]);
    cq_tb_frame f = cq_tb_frame_make(t, &box);
    bool prev_known = q->cache && q->cache->has_normal;
    cq_vec3 prev = prev_known ? cq_mul_mtv(&box.axes, q->cache->normal) : cq_v3(0, 0, 0);
    cq_tb_best best = cq_tb_axes(&f, prev);
    cq_count(q->counters, CQ_CTR_SAT_AXES_SKIPPED, (uint64_t)best.skipped);
    cq_tb_axis ax = cq_tb_choose(&best, f.tol);
    /* The SAT gap bounds the distance from below: beyond the skin it is a
     * certain miss; a separated pair gets its Euclidean distance by GJK,
     * which also decides a gap within the skin. */
    double gap = -fmin(best.face.pen, best.edge.pen);
    if (gap > q->skin + f.tol && q->skip_distance)
        return;
    if (gap > f.tol) {
        cq_gjk_status st = cq__pair_distance(q, out);
        if (st == CQ_GJK_ITERATION_LIMIT) /* answered below from the SAT */
            cq_count(q->counters, CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT, 1);
        if (st == CQ_GJK_SEPARATED && out->distance > q->skin)
            return;
    }
    out->overlap = gap <= q->skin + f.tol;
    if (!out->overlap) { /* GJK could not measure it: the separating axis */
        out->has_normal = true;
        out->normal = cq_mul_mv(&box.axes, ax.n);
        return;
    }
    out->has_normal = true;
    out->normal = cq_mul_mv(&box.axes, ax.n);
    out->depth = fmax(ax.pen, 0);
    if (!q->skip_manifold)
        cq_tb_manifold(&box, t, &f, &best, &ax, q->skin, out);
}
