/* Random sweeps against the oracles of sweep_oracle.c: the analytic root
 * for spheres, the convex gaps for sphere-box, box-box, capsule-triangle
 * and hull pairs, the closed form for planes, and the A/B swap and rigid
 * motion of clear hits. */
#include <stdlib.h>

#include "sweep_oracle.h"

Suite *sweep_random_suite(void);

/* A translation that heads roughly from A to B, overshooting or falling
 * short, with a sideways spread: a mix of hits, misses and grazes. */
static cq_vec3 aim(tu_rng *rng, cq_vec3 from, cq_vec3 to, double spread)
{
    return cq_add(cq_scale(cq_sub(to, from), tu_uniform(rng, 0, 2)), rvec(rng, spread));
}

/* ---- random pairs ---- */

START_TEST(test_sphere_sphere_random)
{
    tu_rng rng = {101};
    tally n = {0};
    for (int i = 0; i < 3000; i++) {
        double ra = tu_uniform(&rng, 0.05, 1.5), rb = tu_uniform(&rng, 0.05, 1.5);
        cq_vec3 ca = rvec(&rng, 5), cb = rvec(&rng, 5);
        cq_vec3 v = aim(&rng, ca, cb, 3);
        cq_shape a = sphere(ra), b = sphere(rb);
        cq_sweep_hit h = sweep(&a, at(ca.x, ca.y, ca.z), v, &b, at(cb.x, cb.y, cb.z));
        double tstar = sphere_sphere_toi(ca, v, cb, ra + rb);
        /* The closest approach over [0, 1] decides how sure the verdict is. */
        double s = cq_len2(v) > 0 ? cq_clamp(-cq_dot(cq_sub(ca, cb), v) / cq_len2(v), 0, 1) : 0;
        toi_oracle o = {.g0 = cq_len(cq_sub(ca, cb)) - ra - rb,
                        .gmin = cq_len(cq_sub(cq_mad(ca, v, s), cb)) - ra - rb,
                        .tmin = s,
                        .toi = tstar};
        check_time(&h, &o, &n);
        if (h.hit && !h.initially_overlapping && o.gmin < -BAND) {
            cq_vec3 c = cq_mad(ca, v, h.time);
            tu_assert_vec_eq_tol(h.normal, unit(cq_sub(cb, c)), 1e-9);
            tu_assert_vec_eq_tol(h.point, cq_mad(cb, h.normal, -rb), 1e-9);
        }
    }
    check_tally(&n, 300);
    ck_assert_int_ge(n.overlaps, 30);
}
END_TEST

START_TEST(test_sphere_box_random)
{
    tu_rng rng = {202};
    tally n = {0};
    for (int i = 0; i < 3000; i++) {
        double r = tu_uniform(&rng, 0.02, 1.0);
        cq_vec3 half = cq_v3(tu_uniform(&rng, 0.05, 1.5), tu_uniform(&rng, 0.05, 1.5), tu_uniform(&rng, 0.05, 1.5));
        cq_xform xa = tu_pose(&rng, 4), xb = tu_pose(&rng, 4);
        cq_vec3 v = aim(&rng, xa.p, xb.p, 3);
        cq_shape a = sphere(r), b = box(half);
        cq_sweep_hit h = sweep(&a, xa, v, &b, xb);
        sphere_box_ctx c = {xa.p, v, r, half, xb};
        toi_oracle o = oracle(sphere_box_gap, &c);
        check_time(&h, &o, &n);
        if (h.hit && !h.initially_overlapping && o.gmin < -BAND) {
            /* The point is the box point nearest the centre; the normal points at it. */
            cq_vec3 cw = cq_mad(xa.p, v, h.time);
            cq_vec3 l = cq_xform_inv_point(&xb, cw);
            cq_vec3 q = cq_xform_point(&xb, clamp_box(l, half));
            tu_assert_vec_eq_tol(h.point, q, 1e-9);
            tu_assert_vec_eq_tol(h.normal, unit(cq_sub(q, cw)), 1e-9);
        }
    }
    check_tally(&n, 300);
    ck_assert_int_ge(n.overlaps, 20);
}
END_TEST

/* The gap between boxes a (moved by t v) and b along the unit n. */
static double box_gap_along(const cq_obb *a, const cq_obb *b, cq_vec3 n)
{
    cq_vec3 ca[8], cb[8];
    tu_obb_corners(a, ca);
    tu_obb_corners(b, cb);
    double amax = -INFINITY, bmin = INFINITY;
    for (int k = 0; k < 8; k++) {
        amax = fmax(amax, cq_dot(n, ca[k]));
        bmin = fmin(bmin, cq_dot(n, cb[k]));
    }
    return bmin - amax;
}

/* Distance from a point to a posed box must be ~0 on its surface and the
 * point must not be inside. */
static void check_on_box_surface(cq_vec3 p, const cq_obb *b, double tol)
{
    cq_vec3 l = cq_mul_mtv(&b->axes, cq_sub(p, b->center));
    double out = fmax(fabs(l.x) - b->half.x, fmax(fabs(l.y) - b->half.y, fabs(l.z) - b->half.z));
    ck_assert_double_eq_tol(out, 0.0, tol);
}

static cq_vec3 random_half(tu_rng *rng, double lo, double hi)
{
    return cq_v3(tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi));
}

START_TEST(test_box_box_random)
{
    tu_rng rng = {303};
    tally n = {0};
    sat_ctx *s = malloc(sizeof *s);
    for (int i = 0; i < 3000; i++) {
        cq_vec3 ha = random_half(&rng, 0.1, 1.5), hb = random_half(&rng, 0.1, 1.5);
        cq_xform xa = tu_pose(&rng, 4), xb = tu_pose(&rng, 4);
        cq_vec3 v = aim(&rng, xa.p, xb.p, 3);
        cq_shape a = box(ha), b = box(hb);
        cq_sweep_hit h = sweep(&a, xa, v, &b, xb);
        cq_obb oa = cq_obb_from_box(&a, &xa), ob = cq_obb_from_box(&b, &xb);
        sat_boxes(s, &oa, &ob, v);
        toi_oracle o = oracle(sat_gap, s);
        check_time(&h, &o, &n);
        if (h.hit && !h.initially_overlapping && o.gmin < -BAND) {
            /* At impact the normal separates A from B by at most the
             * tolerance, and the point lies on B's surface. */
            cq_obb at_t = oa;
            at_t.center = cq_mad(oa.center, v, h.time);
            double g = box_gap_along(&at_t, &ob, h.normal);
            ck_assert_double_ge(g, -SLACK);
            ck_assert_double_le(g, TARGET + SLACK);
            check_on_box_surface(h.point, &ob, 1e-9);
            ck_assert_double_le(point_box_dist(h.point, ha, &(cq_xform){at_t.center, xa.r}), TARGET + SLACK);
        }
    }
    free(s);
    check_tally(&n, 300);
    ck_assert_int_ge(n.overlaps, 50);
}
END_TEST

START_TEST(test_capsule_triangle_random)
{
    tu_rng rng = {404};
    tally n = {0};
    for (int i = 0; i < 800; i++) {
        double r = tu_uniform(&rng, 0.02, 0.6), hh = tu_uniform(&rng, 0, 1.2);
        cq_shape a = capsule(r, hh);
        cq_shape b = triangle(rvec(&rng, 1.5), rvec(&rng, 1.5), rvec(&rng, 1.5));
        cq_xform xa = tu_pose(&rng, 4), xb = tu_pose(&rng, 4);
        cq_vec3 v = aim(&rng, xa.p, xb.p, 3);
        cq_sweep_hit h = sweep(&a, xa, v, &b, xb);
        capsule_tri_ctx c = {.p = cq_xform_point(&xa, cq_v3(0, hh, 0)), .q = cq_xform_point(&xa, cq_v3(0, -hh, 0)), .v = v, .r = r};
        for (int k = 0; k < 3; k++)
            c.tri[k] = cq_xform_point(&xb, b.triangle.v[k]);
        toi_oracle o = oracle(capsule_tri_gap, &c);
        check_time(&h, &o, &n);
        if (h.hit && !h.initially_overlapping && o.gmin < -BAND)
            ck_assert_double_le(point_tri_dist(h.point, c.tri), 1e-9); /* on the triangle */
    }
    check_tally(&n, 80);
}
END_TEST

#define HULL_POINTS 8

static cq_hull *random_hull(tu_rng *rng, cq_vec3 pts[HULL_POINTS])
{
    cq_vec3 scale = random_half(rng, 0.3, 1.2);
    for (int i = 0; i < HULL_POINTS; i++) {
        cq_vec3 p = rvec(rng, 1);
        pts[i] = cq_v3(p.x * scale.x, p.y * scale.y, p.z * scale.z);
    }
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(pts, HULL_POINTS, 0, &h), CQ_OK);
    return h;
}

START_TEST(test_hull_hull_random)
{
    tu_rng rng = {505};
    tally n = {0};
    sat_ctx *s = malloc(sizeof *s);
    for (int i = 0; i < 400; i++) {
        cq_vec3 la[HULL_POINTS], lb[HULL_POINTS], wa[HULL_POINTS], wb[HULL_POINTS];
        cq_hull *ha = random_hull(&rng, la), *hb = random_hull(&rng, lb);
        cq_xform xa = tu_pose(&rng, 3), xb = tu_pose(&rng, 3);
        cq_vec3 v = aim(&rng, xa.p, xb.p, 2);
        cq_shape a = convex(ha), b = convex(hb);
        cq_sweep_hit h = sweep(&a, xa, v, &b, xb);
        for (int k = 0; k < HULL_POINTS; k++) {
            wa[k] = cq_xform_point(&xa, la[k]);
            wb[k] = cq_xform_point(&xb, lb[k]);
        }
        sat_points(s, wa, HULL_POINTS, wb, HULL_POINTS, v);
        toi_oracle o = oracle(sat_gap, s);
        check_time(&h, &o, &n);
        cq_hull_free(ha);
        cq_hull_free(hb);
    }
    free(s);
    check_tally(&n, 40);
}
END_TEST

START_TEST(test_rounded_hull_sphere)
{
    /* A box's corners rounded by rh against a sphere: the sphere meets the
     * box grown by rh, so the clamp oracle applies with r + rh. */
    tu_rng rng = {606};
    tally n = {0};
    for (int i = 0; i < 600; i++) {
        cq_vec3 half = random_half(&rng, 0.1, 1.2), corners[8];
        for (int k = 0; k < 8; k++)
            corners[k] = cq_v3(k & 1 ? -half.x : half.x, k & 2 ? -half.y : half.y, k & 4 ? -half.z : half.z);
        double rh = tu_uniform(&rng, 0.01, 0.4), r = tu_uniform(&rng, 0.05, 0.8);
        cq_hull *hull = NULL;
        ck_assert_int_eq(cq_hull_build(corners, 8, rh, &hull), CQ_OK);
        cq_shape a = sphere(r), b = convex(hull);
        cq_xform xa = tu_pose(&rng, 4), xb = tu_pose(&rng, 4);
        cq_vec3 v = aim(&rng, xa.p, xb.p, 3);
        cq_sweep_hit h = sweep(&a, xa, v, &b, xb);
        sphere_box_ctx c = {xa.p, v, r + rh, half, xb};
        toi_oracle o = oracle(sphere_box_gap, &c);
        check_time(&h, &o, &n);
        if (h.hit && !h.initially_overlapping && o.gmin < -BAND) /* on the rounded surface */
            ck_assert_double_eq_tol(point_box_dist(h.point, half, &xb), rh, 1e-9);
        cq_hull_free(hull);
    }
    check_tally(&n, 60);
}
END_TEST

/* ---- planes ---- */

START_TEST(test_plane_analytic)
{
    tu_rng rng = {707};
    int hits = 0, misses = 0;
    for (int i = 0; i < 1000; i++) {
        cq_vec3 nl = unit(rvec(&rng, 1));
        double off = tu_uniform(&rng, -1, 1);
        cq_xform xb = tu_pose(&rng, 2), xa = tu_pose(&rng, 4);
        cq_shape p = plane(nl, off);
        cq_vec3 nw = cq_mul_mv(&xb.r, nl);
        double dw = off + cq_dot(nw, xb.p);
        cq_vec3 half = random_half(&rng, 0.1, 1);
        /* A box's lowest corner along -n decides; shifted above the plane. */
        cq_shape b = box(half);
        cq_vec3 c[8];
        tu_obb_corners(&(cq_obb){xa.p, half, xa.r}, c);
        double low = INFINITY;
        for (int k = 0; k < 8; k++)
            low = fmin(low, cq_dot(nw, c[k]) - dw);
        double lift = tu_uniform(&rng, 0.1, 3) - low;
        xa.p = cq_mad(xa.p, nw, lift);
        double hgt = low + lift;
        cq_vec3 v = cq_add(cq_scale(nw, -tu_uniform(&rng, 0, 2 * hgt)), rvec(&rng, 2));
        cq_sweep_hit h = sweep(&b, xa, v, &p, xb);
        double speed = -cq_dot(nw, v);
        double tstar = speed > 0 ? hgt / speed : INFINITY;
        if (tstar <= 1 - 1e-9) {
            ck_assert(h.hit && !h.initially_overlapping);
            ck_assert_double_eq_tol(h.time, tstar, 1e-12 * (1 + tstar));
            tu_assert_vec_eq_tol(h.normal, cq_neg(nw), 1e-12);
            ck_assert_double_eq_tol(cq_dot(nw, h.point), dw, 1e-9); /* on the plane */
            hits++;
        } else if (tstar > 1 + 1e-9) {
            ck_assert(!h.hit);
            misses++;
        }
    }
    ck_assert_int_ge(hits, 200);
    ck_assert_int_ge(misses, 200);
}
END_TEST

/* ---- symmetries ---- */

/* A random box-box or sphere-box case the oracle calls a clear hit. */
typedef struct clear_case {
    cq_shape a, b;
    cq_xform xa, xb;
    cq_vec3 v;
    toi_oracle o;
} clear_case;

static clear_case clear_hit(tu_rng *rng, bool sphere_a, sat_ctx *s)
{
    for (;;) {
        clear_case c;
        cq_vec3 ha = random_half(rng, 0.1, 1.5), hb = random_half(rng, 0.1, 1.5);
        c.a = sphere_a ? sphere(ha.x) : box(ha);
        c.b = box(hb);
        c.xa = tu_pose(rng, 4);
        c.xb = tu_pose(rng, 4);
        c.v = aim(rng, c.xa.p, c.xb.p, 2);
        if (sphere_a) {
            sphere_box_ctx sc = {c.xa.p, c.v, ha.x, hb, c.xb};
            c.o = oracle(sphere_box_gap, &sc);
        } else {
            cq_obb oa = cq_obb_from_box(&c.a, &c.xa), ob = cq_obb_from_box(&c.b, &c.xb);
            sat_boxes(s, &oa, &ob, c.v);
            c.o = oracle(sat_gap, s);
        }
        if (c.o.g0 > BAND && c.o.gmin < -0.05)
            return c;
    }
}

START_TEST(test_swap_consistency)
{
    tu_rng rng = {808};
    sat_ctx *s = malloc(sizeof *s);
    for (int i = 0; i < 1000; i++) {
        bool sph = i % 2;
        clear_case c = clear_hit(&rng, sph, s);
        cq_sweep_hit h1 = sweep(&c.a, c.xa, c.v, &c.b, c.xb);
        cq_sweep_hit h2 = sweep(&c.b, c.xb, cq_neg(c.v), &c.a, c.xa);
        ck_assert(h1.hit && h2.hit);
        double band = TARGET / -c.o.gmin + SLACK;
        ck_assert_double_eq_tol(h1.time, h2.time, band);
        /* Both face the same relative configuration within band of time. */
        tu_assert_vec_eq_tol(h2.normal, cq_neg(h1.normal), 1e-3);
        if (sph) /* a unique contact: the point on A's surface, carried with A */
            tu_assert_vec_eq_tol(cq_mad(h2.point, c.v, h2.time), h1.point, 1e-4);
    }
    free(s);
}
END_TEST

static cq_xform compose(const cq_xform *t, const cq_xform *x)
{
    return (cq_xform){cq_xform_point(t, x->p), cq_mul_mm(&t->r, &x->r)};
}

START_TEST(test_rigid_invariance)
{
    tu_rng rng = {909};
    sat_ctx *s = malloc(sizeof *s);
    for (int i = 0; i < 1000; i++) {
        bool sph = i % 2;
        clear_case c = clear_hit(&rng, sph, s);
        cq_xform t = tu_pose(&rng, 50);
        cq_sweep_hit h1 = sweep(&c.a, c.xa, c.v, &c.b, c.xb);
        cq_sweep_hit h2 = sweep(&c.a, compose(&t, &c.xa), cq_mul_mv(&t.r, c.v), &c.b, compose(&t, &c.xb));
        ck_assert(h1.hit && h2.hit);
        ck_assert_double_eq_tol(h1.time, h2.time, TARGET / -c.o.gmin + SLACK);
        tu_assert_vec_eq_tol(h2.normal, cq_mul_mv(&t.r, h1.normal), 1e-3);
        if (sph)
            tu_assert_vec_eq_tol(h2.point, cq_xform_point(&t, h1.point), 1e-4);
    }
    free(s);
}
END_TEST

Suite *sweep_random_suite(void)
{
    Suite *s = suite_create("sweep_random");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sphere_sphere_random);
    tcase_add_test(tc, test_sphere_box_random);
    tcase_add_test(tc, test_box_box_random);
    tcase_add_test(tc, test_capsule_triangle_random);
    tcase_add_test(tc, test_hull_hull_random);
    tcase_add_test(tc, test_rounded_hull_sphere);
    tcase_add_test(tc, test_plane_analytic);
    tcase_add_test(tc, test_swap_consistency);
    tcase_add_test(tc, test_rigid_invariance);
    suite_add_tcase(s, tc);
    return s;
}
