/* The vector box-face clip (box_clip_simd.c) against the scalar
 * Sutherland-Hodgman passes (cq__box_clip_box) as point sets, to a
 * tolerance: random boxes on every pair of faces, and flush or nearly
 * flush stacks, where an earlier direct clip lost corners. Each point's
 * feature is checked against the geometry it names: an incident corner
 * is that corner, an edge point lies on the edges it names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "box.h"
#include "geom.h"
#include "sat_box.h"
#include "testutil.h"

typedef int (*clip_fn)(const cq_obb *, int, const cq_obb *, int, double, bool, cq_contact_point *);

/* The variants this build and CPU can run. */
static int variants(clip_fn fn[3], const char *name[3])
{
    int n = 0;
#if CQ_HAVE_BOX_CLIP_SIMD
    fn[n] = cq__box_clip_box_sse2, name[n++] = "sse2";
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        fn[n] = cq__box_clip_box_avx2, name[n++] = "avx2";
#endif
#endif
    fn[n] = cq_box_clip_fast, name[n++] = "fast";
    return n;
}

static double to_segment(cq_vec3 x, cq_vec3 p, cq_vec3 q)
{
    cq_vec3 d = cq_sub(q, p);
    double t = fmin(fmax(cq_dot(cq_sub(x, p), d) / cq_len2(d), 0), 1);
    return cq_len(cq_sub(x, cq_mad(p, d, t)));
}

/* Whether p[i] lies on the segment between two other points of p, both
 * farther than tol from it: a point of the polygon's boundary that is no
 * corner (the passes cut an edge lying along a side where rounding puts
 * its ends on either side of it). */
static bool between(const cq_contact_point *p, int n, int i, double tol)
{
    for (int j = 0; j < n; j++)
        for (int k = j + 1; k < n; k++) {
            cq_vec3 x = p[i].position, a = p[j].position, b = p[k].position;
            if (cq_len(cq_sub(x, a)) > tol && cq_len(cq_sub(x, b)) > tol && to_segment(x, a, b) <= tol)
                return true;
        }
    return false;
}

/* Whether every corner of the polygon p (each point not between two
 * others) has a point of q within tol (position and depth). */
static bool covered(const cq_contact_point *p, int n, const cq_contact_point *q, int m, double tol)
{
    for (int i = 0; i < n; i++) {
        bool found = between(p, n, i, tol);
        for (int j = 0; j < m && !found; j++)
            found = cq_len(cq_sub(p[i].position, q[j].position)) <= tol && fabs(p[i].depth - q[j].depth) <= tol;
        if (!found)
            return false;
    }
    return true;
}

/* The end points of box edge e (4 k + sign bits of the other two axes,
 * lower axis first: box.c's numbering), from the box's own axes. */
static void edge_ends(const cq_obb *o, int e, cq_vec3 *p, cq_vec3 *q)
{
    int k = e / 4, lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2;
    double s[3];
    s[lo] = e & 1 ? -1 : 1, s[hi] = e & 2 ? -1 : 1;
    cq_vec3 c = o->center;
    for (int i = 0; i < 3; i++)
        if (i != k)
            c = cq_mad(c, o->axes.c[i], s[i] * cq_comp(o->half, i));
    *p = cq_mad(c, o->axes.c[k], cq_comp(o->half, k));
    *q = cq_mad(c, o->axes.c[k], -cq_comp(o->half, k));
}

/* Distance from x to the line through box edge e. */
static double off_edge(const cq_obb *o, int e, cq_vec3 x)
{
    cq_vec3 p, q;
    edge_ends(o, e, &p, &q);
    cq_vec3 d = cq_sub(q, p);
    return cq_len(cq_cross(cq_sub(x, p), d)) / cq_len(d);
}

/* The corner of box o with vertex id v (bit k: local coordinate k negative). */
static cq_vec3 corner(const cq_obb *o, int v)
{
    cq_vec3 c = o->center;
    for (int k = 0; k < 3; k++)
        c = cq_mad(c, o->axes.c[k], (v >> k & 1 ? -1 : 1) * cq_comp(o->half, k));
    return c;
}

/* A point's feature, reference half first, names geometry the point is on
 * (seen along the reference normal: the incident point's shadow). */
static void assert_feature(const cq_obb *ref, const cq_obb *inc, int ref_id, cq_contact_point pt, bool ref_is_b,
                           double tol)
{
    cq_feature f = ref_is_b ? cq_feature_swap(pt.feature) : pt.feature;
    cq_vec3 n = cq_scale(ref->axes.c[ref_id / 2], ref_id & 1 ? -1 : 1);
    /* On the reference plane: the position minus its height above it. */
    cq_vec3 x = ref_is_b ? pt.position : cq_mad(pt.position, n, pt.depth);
    if (f.kind_a == CQ_FEAT_FACE) {
        ck_assert_int_eq(f.kind_b, CQ_FEAT_VERTEX);
        ck_assert_int_eq(f.index_a, ref_id);
        cq_vec3 c = corner(inc, f.index_b), s = cq_mad(c, n, -cq_dot(cq_sub(c, x), n));
        ck_assert_msg(cq_len(cq_sub(s, x)) <= tol, "corner %d off by %g", f.index_b, cq_len(cq_sub(s, x)));
        return;
    }
    ck_assert_int_eq(f.kind_a, CQ_FEAT_EDGE);
    ck_assert_msg(off_edge(ref, f.index_a, x) <= tol, "off reference edge %d by %g", f.index_a,
                  off_edge(ref, f.index_a, x));
    if (f.kind_b == CQ_FEAT_EDGE) { /* the incident edge's shadow on the plane passes through x */
        cq_vec3 p, q;
        edge_ends(inc, f.index_b, &p, &q);
        p = cq_mad(p, n, -cq_dot(cq_sub(p, x), n)), q = cq_mad(q, n, -cq_dot(cq_sub(q, x), n));
        cq_vec3 d = cq_sub(q, p);
        double off = cq_len(cq_cross(cq_sub(x, p), d)) / cq_len(d);
        ck_assert_msg(off <= tol, "off incident edge %d by %g", f.index_b, off);
    } else {
        ck_assert_int_eq(f.kind_b, CQ_FEAT_FACE);
    }
}

/* Whether x lies in face id of box o as seen along the face's normal
 * (within tol of its rectangle, at any height), and its height above it. */
static bool over_face(const cq_obb *o, int id, cq_vec3 x, double tol, double *height)
{
    int k = id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    cq_vec3 n = cq_scale(o->axes.c[k], id & 1 ? -1 : 1), c = cq_mad(o->center, n, cq_comp(o->half, k));
    cq_vec3 d = cq_sub(x, c);
    *height = cq_dot(d, n);
    return fabs(cq_dot(d, o->axes.c[u])) <= cq_comp(o->half, u) + tol &&
           fabs(cq_dot(d, o->axes.c[v])) <= cq_comp(o->half, v) + tol;
}

/* A clip point lies in the overlap of the two faces: over the reference
 * face, at a depth that is its height below the reference plane, and (the
 * incident point, or the reference point moved along the normal back to
 * the incident plane) on the incident face. */
static void assert_in_overlap(const cq_obb *r, int rf, const cq_obb *c, int cf, cq_contact_point pt, bool b,
                              double tol)
{
    double hr, hc;
    cq_vec3 n = cq_scale(r->axes.c[rf / 2], rf & 1 ? -1 : 1);
    ck_assert_msg(over_face(r, rf, pt.position, tol, &hr), "a point off the reference face");
    ck_assert_double_eq_tol(b ? 0 : hr, b ? hr : -pt.depth, tol);
    cq_vec3 x = b ? cq_mad(pt.position, n, -pt.depth) : pt.position;
    ck_assert_msg(over_face(c, cf, x, tol, &hc) && fabs(hc) <= tol, "a point off the incident face (%g)", hc);
}

/* Each point of a clip names geometry it is on and lies in the faces'
 * overlap, within the skin. */
static void assert_points(const cq_obb *r, int rf, const cq_obb *c, int cf, double skin, bool b,
                          const cq_contact_point *p, int n, double tol)
{
    for (int k = 0; k < n; k++) {
        assert_feature(r, c, rf, p[k], b, tol);
        assert_in_overlap(r, rf, c, cf, p[k], b, tol);
        ck_assert(!(p[k].depth < -skin));
    }
}

/* One clip of every variant against the reference passes: the passes'
 * own points checked as the variants' are, each of their points among
 * the variant's, and each of the variant's in the faces' overlap (where
 * the overlap has no area the passes may keep only one end of it).
 * Returns the points compared. */
static int compare_clip(const cq_obb *r, int rf, const cq_obb *c, int cf, double skin, bool b, double tol)
{
    clip_fn fn[3];
    const char *name[3];
    int nv = variants(fn, name), compared = 0;
    cq_contact_point want[CQ_CLIP_MAX], got[CQ_CLIP_MAX];
    int m = cq__box_clip_box(r, rf, c, cf, skin, b, want);
    assert_points(r, rf, c, cf, skin, b, want, m, tol);
    for (int v = 0; v < nv; v++) {
        int n = fn[v](r, rf, c, cf, skin, b, got);
        ck_assert_msg(covered(want, m, got, n, tol), "%s: faces %d/%d: %d points, the passes %d", name[v], rf, cf, n,
                      m);
        assert_points(r, rf, c, cf, skin, b, got, n, tol);
        compared += n;
    }
    return compared;
}

START_TEST(vector_clip_matches_the_passes_on_random_boxes)
{
    tu_rng rng = {77};
    int compared = 0;
    for (int i = 0; i < 400; i++) {
        cq_obb r = {cq_v3(0, 0, 0), cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        cq_obb c = {tu_pose(&rng, 1).p, cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        for (int rf = 0; rf < 6; rf++)
            for (int cf = 0; cf < 6; cf++) {
                /* Only faces that face each other are clipped by the contact;
                 * the others make polygons no less valid to compare. */
                compared += compare_clip(&r, rf, &c, cf, 0.3, false, 1e-9);
                compared += compare_clip(&r, rf, &c, cf, 0.3, true, 1e-9);
            }
    }
    ck_assert_int_gt(compared, 20000);
}
END_TEST

/* Whether each corner of the rectangle [x0, x1] x [y0, y1] (on A's top
 * face, A unturned at the origin) has a point of p at the stack's depth. */
static void assert_corners(const char *name, const cq_contact_point *p, int n, const double rect[4], double depth)
{
    for (int c = 0; c < 4; c++) {
        double x = rect[c & 1], y = rect[2 + (c >> 1)];
        bool found = false;
        for (int k = 0; k < n && !found; k++)
            found = fabs(p[k].position.x - x) <= 1e-9 && fabs(p[k].position.y - y) <= 1e-9 &&
                    fabs(p[k].depth - depth) <= 1e-9;
        ck_assert_msg(found, "%s: corner (%g, %g) missing from %d points", name, x, y, n);
    }
}

/* A box of half extents hb on a box of half extents ha, turned by yaw about
 * the normal and moved by (dx, dy) in the plane, 0.05 deep: the reference
 * is A's top face, the incident B's bottom face. Where rect is given (the
 * faces' overlap, a rectangle with area), the passes and every variant
 * have its four corners among their points. */
static int flush_stack(cq_vec3 ha, cq_vec3 hb, double dx, double dy, double yaw, const double *rect)
{
    cq_obb a = {cq_v3(0, 0, 0), ha, cq_mat3_identity()};
    cq_obb b = {cq_v3(dx, dy, ha.z + hb.z - 0.05), hb, tu_axis_angle(cq_v3(0, 0, 1), yaw)};
    int inc = cq__box_face_toward(&b, &(cq_vec3){0, 0, -1});
    if (rect) {
        clip_fn fn[3];
        const char *name[3];
        int nv = variants(fn, name);
        cq_contact_point got[CQ_CLIP_MAX];
        assert_corners("passes", got, cq__box_clip_box(&a, 4, &b, inc, 0.01, false, got), rect, 0.05);
        for (int v = 0; v < nv; v++)
            assert_corners(name[v], got, fn[v](&a, 4, &b, inc, 0.01, false, got), rect, 0.05);
    }
    return compare_clip(&a, 4, &b, inc, 0.01, false, 1e-9);
}

/* Flush and nearly flush stacks on a 0.1 grid of sizes and offsets (sizes
 * and offsets that are not binary fractions, so sides meet within
 * rounding), at yaws of 0, 1e-16, 1e-9 rad, and a diamond through a
 * square's corners: the same point sets as the passes, and where the
 * overlap is a rectangle with area, all four of its corners among the
 * points of the passes and of each variant (at 1e-9 rad the corners move
 * by less than 1e-9). */
START_TEST(vector_clip_keeps_flush_stacks)
{
    static const double yaws[] = {0, 1e-16, -1e-16, 1e-9, -5e-10};
    clip_fn fn[3];
    const char *name[3];
    int compared = 0, stacks = 0, nv = variants(fn, name);
    for (int i = 1; i <= 4; i++)
        for (int j = 1; j <= 4; j++)
            for (int di = -4; di <= 4; di++)
                for (size_t y = 0; y < sizeof yaws / sizeof yaws[0]; y++) {
                    cq_vec3 ha = cq_v3(0.1 * i, 0.1 * j, 0.5), hb = cq_v3(0.1 * j, 0.1 * i, 0.5);
                    double dx = 0.1 * di, dy = 0.1 * (di / 2);
                    double rect[4] = {fmax(-ha.x, dx - hb.x), fmin(ha.x, dx + hb.x), fmax(-ha.y, dy - hb.y),
                                      fmin(ha.y, dy + hb.y)};
                    bool area = rect[1] - rect[0] > 1e-9 && rect[3] - rect[2] > 1e-9;
                    compared += flush_stack(ha, hb, dx, dy, yaws[y], area ? rect : NULL);
                    stacks++;
                }
    /* The reviewer's diamond: a square turned 45 degrees whose corners lie on
     * a square's sides, so the overlap is the square. */
    static const double square[4] = {-1, 1, -1, 1};
    compared += flush_stack(cq_v3(1, 1, 1), cq_v3(1.4142135623730949, 1.4142135623730949, 0.5), 0, 0,
                            0.78539816339744831, square);
    printf("flush stacks: %d, %d points compared\n", stacks, compared);
    ck_assert_int_gt(compared, 1200 * (nv + 1));
}
END_TEST

/* The generic clipper (cq_clip_by_line of manifold.c, which the hull,
 * triangle and mesh face clips share) on the flush stacks above: each of
 * its points names geometry it lies on. A vertex on a side whose next
 * vertex is outside leaves the polygon along that side, so the point cut
 * after it is named by two sides, not by an incident edge it is not on;
 * where the overlap has area its four corners are among the points. */
START_TEST(generic_clip_names_edges_on_flush_stacks)
{
    static const double yaws[] = {0, 1e-16, -1e-16, 1e-9, -5e-10};
    int points = 0;
    for (int i = 1; i <= 4; i++)
        for (int j = 1; j <= 4; j++)
            for (int di = -4; di <= 4; di++)
                for (size_t y = 0; y < sizeof yaws / sizeof yaws[0]; y++)
                    for (int b = 0; b < 2; b++) {
                        cq_vec3 ha = cq_v3(0.1 * i, 0.1 * j, 0.5), hb = cq_v3(0.1 * j, 0.1 * i, 0.5);
                        cq_obb ra = {cq_v3(0, 0, 0), ha, cq_mat3_identity()};
                        cq_obb ib = {cq_v3(0.1 * di, 0.1 * (di / 2), ha.z + hb.z - 0.05), hb,
                                     tu_axis_angle(cq_v3(0, 0, 1), yaws[y])};
                        int inc = cq__box_face_toward(&ib, &(cq_vec3){0, 0, -1});
                        cq_face face;
                        cq__box_face(&ib, inc, &face);
                        cq_contact_point got[CQ_CLIP_MAX];
                        int n = cq__box_clip(&ra, 4, &face, 0.01, b, got);
                        for (int k = 0; k < n && b; k++) /* projected onto the reference: A's half first */
                            got[k].feature = cq_feature_swap(got[k].feature);
                        assert_points(&ra, 4, &ib, inc, 0.01, b, got, n, 1e-9);
                        double dx = 0.1 * di, dy = 0.1 * (di / 2);
                        double rect[4] = {fmax(-ha.x, dx - hb.x), fmin(ha.x, dx + hb.x), fmax(-ha.y, dy - hb.y),
                                          fmin(ha.y, dy + hb.y)};
                        if (rect[1] - rect[0] > 1e-9 && rect[3] - rect[2] > 1e-9)
                            assert_corners("generic", got, n, rect, 0.05);
                        points += n;
                    }
    printf("generic clip on flush stacks: %d points checked\n", points);
    ck_assert_int_gt(points, 1200);
}
END_TEST

/* The largest difference between two clip inputs' numbers. */
static double input_diff(const cq_box_clip_in *x, const cq_box_clip_in *y)
{
    cq_vec3 d[7] = {cq_sub(x->fr.origin, y->fr.origin), cq_sub(x->fr.u, y->fr.u), cq_sub(x->fr.v, y->fr.v),
                    cq_sub(x->fr.n, y->fr.n),           cq_sub(x->cf, y->cf),     cq_sub(x->uf, y->uf),
                    cq_sub(x->vf, y->vf)};
    double e = fmax(fabs(x->hu - y->hu), fabs(x->hv - y->hv));
    for (int k = 0; k < 7; k++)
        e = fmax(e, cq_max_abs(d[k]));
    return e;
}

/* The clip input read off the SAT's frame (cq__box_clip_setup_seen, as
 * the contact builds it) against the one built from world axes
 * (cq__box_clip_setup), for every reference face of either box: the same
 * incident face as cq__box_face_toward picks where the pick is no tie,
 * the same numbers to rounding, and the vector clip of it the passes'
 * point set of the world-built input. Returns the points compared. */
static int compare_seen(const cq_obb *a, const cq_obb *b, double tol)
{
    cq_box_gaps g;
    cq__box_gaps_compute(a, b, INFINITY, &g);
    int compared = 0;
    for (int ref_is_b = 0; ref_is_b < 2; ref_is_b++) {
        const cq_obb *ref = ref_is_b ? b : a, *inc = ref_is_b ? a : b;
        cq_box_seen seen = {&g.r[0][0], ref_is_b ? 1 : 4, ref_is_b ? 4 : 1, ref_is_b ? g.ta : g.t, inc->half};
        for (int rf = 0; rf < 6; rf++) {
            cq_vec3 back = cq_scale(ref->axes.c[rf / 2], rf & 1 ? 1 : -1);
            int cf = cq__box_face_toward(inc, &back);
            double dots[3], top = 0, second = 0;
            for (int m = 0; m < 3; m++)
                dots[m] = fabs(cq_dot(inc->axes.c[m], back)), top = fmax(top, dots[m]);
            for (int m = 0; m < 3; m++)
                second = dots[m] < top ? fmax(second, dots[m]) : second;
            if (top - second > 1e-12)
                ck_assert_int_eq(cq__box_face_toward_seen(&seen, rf / 2, rf & 1 ? -1 : 1), cf);
            cq_box_clip_in want, got;
            cq__box_clip_setup(ref, rf, inc, cf, &want);
            cq__box_clip_setup_seen(ref, rf, &seen, cf, &got);
            ck_assert_int_eq(got.ref_id, rf);
            ck_assert_int_eq(got.inc_id, cf);
            ck_assert_msg(input_diff(&want, &got) <= 1e-12, "faces %d/%d: inputs differ by %g", rf, cf,
                          input_diff(&want, &got));
            cq_contact_point pw[CQ_CLIP_MAX], pg[CQ_CLIP_MAX];
            int m = cq__box_clip_box(ref, rf, inc, cf, 0.3, ref_is_b, pw);
            int n = cq_box_clip_fast_in(&got, 0.3, ref_is_b, pg);
            ck_assert_msg(covered(pw, m, pg, n, tol), "faces %d/%d: %d points, the passes %d", rf, cf, n, m);
            assert_points(ref, rf, inc, cf, 0.3, ref_is_b, pw, m, tol);
            assert_points(ref, rf, inc, cf, 0.3, ref_is_b, pg, n, tol);
            compared += n;
        }
    }
    return compared;
}

START_TEST(frame_setup_matches_world_setup)
{
    tu_rng rng = {91};
    int compared = 0;
    for (int i = 0; i < 400; i++) {
        cq_xform xa = tu_pose(&rng, 3), xb = tu_pose(&rng, 3);
        cq_obb a = {xa.p, cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        cq_obb b = {cq_add(xa.p, cq_scale(xb.p, 0.5)),
                    cq_v3(tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5), tu_uniform(&rng, 0.2, 1.5)),
                    tu_rotation(&rng)};
        compared += compare_seen(&a, &b, 1e-9);
    }
    /* Flush and nearly flush stacks, off the origin and turned as a whole,
     * where the sides meet within rounding. */
    static const double yaws[] = {0, 1e-16, 1e-9, 0.78539816339744831};
    for (int i = 1; i <= 4; i++)
        for (int di = -3; di <= 3; di++)
            for (int y = 0; y < 4; y++) {
                cq_mat3 turn = i & 1 ? cq_mat3_identity() : tu_rotation(&rng);
                cq_vec3 ha = cq_v3(0.1 * i, 0.3, 0.5), hb = cq_v3(0.3, 0.1 * i, 0.5);
                cq_obb a = {cq_v3(0.7, -0.2, 0.1), ha, turn};
                cq_mat3 yaw = tu_axis_angle(cq_v3(0, 0, 1), yaws[y]);
                cq_obb b = {cq_add(a.center, cq_mul_mv(&turn, cq_v3(0.1 * di, 0.05 * di, ha.z + hb.z - 0.05))), hb,
                            cq_mul_mm(&turn, &yaw)};
                compared += compare_seen(&a, &b, 1e-9);
            }
    printf("frame setup: %d points compared\n", compared);
    ck_assert_int_gt(compared, 10000);
}
END_TEST

/* The contact on flush stacks keeps four points at the stack's depth
 * whichever clip built it (the reduction follows the clip). */
START_TEST(flush_stack_contacts_have_four_corners)
{
    for (int i = 1; i <= 5; i++)
        for (int s = 0; s < 3; s++) {
            /* (At 1e-9 rad the overlap is a pentagon with a vertex 1e-10
             * off a side, which the reduction may keep: not a rectangle.) */
            static const double yaws[] = {0, 1e-16, -1e-16};
            double h = 0.1 * i;
            cq_shape a = {.type = CQ_BOX, .box = {{h, 0.3, 0.5}}}, b = {.type = CQ_BOX, .box = {{0.3, h, 0.5}}};
            cq_pair_query q = {.a = &a, .xa = {cq_v3(0, 0, 0), cq_mat3_identity()}, .b = &b,
                               .xb = {cq_v3(h - 0.3, 0.3 - h, 0.95), tu_axis_angle(cq_v3(0, 0, 1), yaws[s])},
                               .skin = 0.01};
            cq_contact c;
            ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
            ck_assert(c.overlap);
            ck_assert_int_eq(c.point_count, 4);
            /* Four distinct corners: the pairwise distances are all a side or more. */
            double least = INFINITY;
            for (int p = 0; p < 4; p++)
                for (int r = p + 1; r < 4; r++)
                    least = fmin(least, cq_len(cq_sub(c.points[p].position, c.points[r].position)));
            ck_assert_double_ge(least, 2 * fmin(h, 0.3) - 1e-9);
            for (int p = 0; p < 4; p++)
                ck_assert_double_eq_tol(c.points[p].depth, 0.05, 1e-9);
        }
}
END_TEST

Suite *box_clip_suite(void)
{
    Suite *s = suite_create("box_clip");
    TCase *tc = tcase_create("clip");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, vector_clip_matches_the_passes_on_random_boxes);
    tcase_add_test(tc, vector_clip_keeps_flush_stacks);
    tcase_add_test(tc, flush_stack_contacts_have_four_corners);
    tcase_add_test(tc, generic_clip_names_edges_on_flush_stacks);
    tcase_add_test(tc, frame_setup_matches_world_setup);
    suite_add_tcase(s, tc);
    return s;
}
