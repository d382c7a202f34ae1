/* GJK distance. Oracles: analytic distances (spheres, capsules in built
 * configurations, stacked and crossed cubes), a point clamped into a box,
 * ternary search along a segment (capsules), and for random box pairs a
 * brute force over features: every corner against the other box (the
 * clamp is the minimum over its 6 faces) and the 12 x 12 edge pairs, with
 * separation decided by the 15 SAT axes from corner projections. The
 * simplex solver is checked by the projection certificate: p is the point
 * of a hull closest to the origin iff w . p >= |p|^2 for every vertex w. */
#include "minkowski.h"
#include "testutil.h"

#define TOL 1e-9
#define PAIRS 2000

static cq_xform at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

static cq_vec3 rvec(tu_rng *rng, double r)
{
    return cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
}

/* Corner k has coordinate i negative when bit i of k is set. */
static void box_points(cq_vec3 h, cq_vec3 out[8])
{
    for (int k = 0; k < 8; k++)
        out[k] = cq_v3(k & 1 ? -h.x : h.x, k & 2 ? -h.y : h.y, k & 4 ? -h.z : h.z);
}

static void world_points(const cq_vec3 *local, int n, const cq_xform *x, cq_vec3 *out)
{
    for (int i = 0; i < n; i++)
        out[i] = cq_xform_point(x, local[i]);
}

static cq_gjk_result gjk(const cq_proxy *a, cq_xform xa, const cq_proxy *b, cq_xform xb)
{
    cq_gjk_result r = cq_gjk_distance(a, &xa, b, &xb, NULL);
    ck_assert(isfinite(r.distance) && r.distance >= 0);
    ck_assert(cq_v3_finite(r.point_a) && cq_v3_finite(r.point_b));
    ck_assert_int_le(r.iterations, CQ_GJK_DEFAULT_MAX_ITERATIONS);
    if (r.has_normal)
        ck_assert_double_eq_tol(cq_len(r.normal), 1.0, 1e-12);
    if (r.status == CQ_GJK_SEPARATED) {
        ck_assert(r.has_normal);
        tu_assert_vec_eq_tol(cq_sub(r.point_b, r.point_a), cq_scale(r.normal, r.distance), 1e-9);
    }
    return r;
}

/* ---- oracles ---- */

static double point_box_dist(cq_vec3 p, cq_vec3 h, const cq_xform *x)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    cq_vec3 c = cq_v3(cq_clamp(l.x, -h.x, h.x), cq_clamp(l.y, -h.y, h.y), cq_clamp(l.z, -h.z, h.z));
    return cq_len(cq_sub(l, c));
}

static double point_seg_dist(cq_vec3 p, cq_vec3 a, cq_vec3 b)
{
    cq_vec3 d = cq_sub(b, a);
    double l2 = cq_len2(d);
    double t = l2 > 0 ? cq_clamp(cq_dot(cq_sub(p, a), d) / l2, 0, 1) : 0;
    return cq_len(cq_sub(p, cq_mad(a, d, t)));
}

/* Exact: the interior critical point if it lies in the unit square, else
 * the best endpoint against the other segment (the function is convex). */
static double seg_seg_dist(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2)
{
    double best = fmin(fmin(point_seg_dist(p1, p2, q2), point_seg_dist(q1, p2, q2)),
                       fmin(point_seg_dist(p2, p1, q1), point_seg_dist(q2, p1, q1)));
    cq_vec3 d1 = cq_sub(q1, p1), d2 = cq_sub(q2, p2), r = cq_sub(p1, p2);
    double a = cq_dot(d1, d1), e = cq_dot(d2, d2), b = cq_dot(d1, d2);
    double c = cq_dot(d1, r), f = cq_dot(d2, r), den = a * e - b * b;
    if (den > 1e-14 * a * e) {
        double s = (b * f - c * e) / den, t = (a * f - b * c) / den;
        if (s >= 0 && s <= 1 && t >= 0 && t <= 1)
            best = fmin(best, cq_len(cq_sub(cq_mad(p1, d1, s), cq_mad(p2, d2, t))));
    }
    return best;
}

/* Ternary search along the first segment (the distance is convex in s). */
static double seg_seg_search(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2)
{
    double lo = 0, hi = 1;
    for (int i = 0; i < 200; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (point_seg_dist(cq_lerp(p1, q1, m1), p2, q2) < point_seg_dist(cq_lerp(p1, q1, m2), p2, q2))
            hi = m2;
        else
            lo = m1;
    }
    return point_seg_dist(cq_lerp(p1, q1, (lo + hi) / 2), p2, q2);
}

static double box_box_dist(cq_vec3 ha, const cq_xform *xa, cq_vec3 hb, const cq_xform *xb)
{
    cq_vec3 la[8], lb[8], ca[8], cb[8];
    box_points(ha, la);
    box_points(hb, lb);
    world_points(la, 8, xa, ca);
    world_points(lb, 8, xb, cb);
    double best = INFINITY;
    for (int i = 0; i < 8; i++)
        best = fmin(best, fmin(point_box_dist(ca[i], hb, xb), point_box_dist(cb[i], ha, xa)));
    /* Edges join corners that differ in one bit. */
    for (int i = 0; i < 8; i++)
        for (int bi = 0; bi < 3; bi++)
            for (int j = 0; j < 8; j++)
                for (int bj = 0; bj < 3; bj++)
                    if (!(i >> bi & 1) && !(j >> bj & 1))
                        best = fmin(best, seg_seg_dist(ca[i], ca[i | 1 << bi], cb[j], cb[j | 1 << bj]));
    return best;
}

/* Largest gap over the 15 SAT axes from the corners' projections. */
static double sat_gap(const cq_vec3 ca[8], const cq_mat3 *ra, const cq_vec3 cb[8], const cq_mat3 *rb)
{
    cq_vec3 axes[15];
    int n = 0;
    for (int i = 0; i < 3; i++) {
        axes[n++] = ra->c[i];
        axes[n++] = rb->c[i];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            cq_vec3 c = cq_cross(ra->c[i], rb->c[j]);
            if (cq_len2(c) > 1e-12)
                axes[n++] = cq_scale(c, 1 / cq_len(c));
        }
    double gap = -INFINITY;
    for (int k = 0; k < n; k++) {
        double a0 = INFINITY, a1 = -INFINITY, b0 = INFINITY, b1 = -INFINITY;
        for (int i = 0; i < 8; i++) {
            double pa = cq_dot(ca[i], axes[k]), pb = cq_dot(cb[i], axes[k]);
            a0 = fmin(a0, pa), a1 = fmax(a1, pa), b0 = fmin(b0, pb), b1 = fmax(b1, pb);
        }
        gap = fmax(gap, fmax(b0 - a1, a0 - b1));
    }
    return gap;
}

typedef struct box_pair {
    cq_vec3 ha, hb;
    cq_vec3 la[8], lb[8];
    cq_xform xa, xb;
    cq_proxy a, b;
    double gap;
} box_pair;

static void box_pair_init(box_pair *p, cq_vec3 ha, cq_xform xa, cq_vec3 hb, cq_xform xb)
{
    p->ha = ha, p->hb = hb, p->xa = xa, p->xb = xb;
    box_points(ha, p->la);
    box_points(hb, p->lb);
    p->a = (cq_proxy){p->la, 8, 0};
    p->b = (cq_proxy){p->lb, 8, 0};
    cq_vec3 ca[8], cb[8];
    world_points(p->la, 8, &xa, ca);
    world_points(p->lb, 8, &xb, cb);
    p->gap = sat_gap(ca, &xa.r, cb, &xb.r);
}

static void random_box_pair(tu_rng *rng, box_pair *p, double spread)
{
    cq_vec3 ha = cq_v3(tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5));
    cq_vec3 hb = cq_v3(tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5));
    box_pair_init(p, ha, tu_pose(rng, spread), hb, tu_pose(rng, spread));
}

/* ---- the simplex solver ---- */

static cq_vec3 random_point(tu_rng *rng, const cq_vec3 *prev, int n, int kind)
{
    cq_vec3 p = rvec(rng, 2);
    if (n > 0 && kind == 1)
        return prev[0]; /* repeated */
    if (n > 1 && kind == 2)
        return cq_lerp(prev[0], prev[1], tu_uniform(rng, -2, 2)); /* collinear */
    if (n > 2 && kind == 3) {
        cq_vec3 e1 = cq_sub(prev[1], prev[0]), e2 = cq_sub(prev[2], prev[0]);
        return cq_add(prev[0], cq_add(cq_scale(e1, tu_uniform(rng, -1, 2)), cq_scale(e2, tu_uniform(rng, -1, 2))));
    }
    if (kind == 4)
        return cq_scale(p, 1e-9); /* tiny */
    return p;
}

START_TEST(test_simplex_solver)
{
    tu_rng rng = {10};
    for (int i = 0; i < 20000; i++) {
        int n = 1 + i % 4, kind = (i / 4) % 6;
        cq_simplex s = {.count = n};
        cq_vec3 w[4];
        for (int k = 0; k < n; k++) {
            w[k] = random_point(&rng, w, k, kind);
            s.v[k] = (cq_mvert){.w = w[k], .ia = (uint16_t)k};
        }
        cq_vec3 p = cq__simplex_solve(&s);
        ck_assert(cq_v3_finite(p));
        ck_assert(s.count >= 1 && s.count <= n);
        double sum = 0;
        cq_vec3 q = cq_v3(0, 0, 0);
        for (int k = 0; k < s.count; k++) {
            ck_assert(s.bc[k] >= 0 && s.bc[k] <= 1);
            ck_assert(k == 0 || s.v[k].ia > s.v[k - 1].ia);
            cq_vec3 orig = w[s.v[k].ia];
            ck_assert(s.v[k].w.x == orig.x && s.v[k].w.y == orig.y && s.v[k].w.z == orig.z);
            sum += s.bc[k];
            q = cq_mad(q, s.v[k].w, s.bc[k]);
        }
        ck_assert_double_eq_tol(sum, 1, 1e-12);
        tu_assert_vec_eq_tol(q, p, 1e-12);
        for (int k = 0; k < n; k++)
            ck_assert(cq_dot(w[k], p) >= cq_len2(p) - 1e-9 * (1 + cq_len2(w[k])));
        if (s.count == 4)
            ck_assert_double_eq_tol(cq_len(p), 0, 1e-12);
    }
}
END_TEST

/* ---- analytic pairs ---- */

START_TEST(test_sphere_sphere)
{
    tu_rng rng = {11};
    cq_vec3 o = cq_v3(0, 0, 0);
    for (int i = 0; i < 500; i++) {
        cq_vec3 ca = rvec(&rng, 5), cb = rvec(&rng, 5);
        double ra = tu_uniform(&rng, 0, 2), rb = tu_uniform(&rng, 0, 2);
        cq_proxy a = {&o, 1, ra}, b = {&o, 1, rb};
        cq_gjk_result r = gjk(&a, at(ca.x, ca.y, ca.z), &b, at(cb.x, cb.y, cb.z));
        double d = cq_len(cq_sub(cb, ca));
        ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
        ck_assert_double_eq_tol(r.distance, d, TOL);
        tu_assert_vec_eq_tol(r.normal, cq_scale(cq_sub(cb, ca), 1 / d), 1e-12);
        ck_assert_int_le(r.iterations, 1);
        cq_gjk_apply_radii(&r, &a, &b);
        ck_assert_double_eq_tol(r.distance, d - ra - rb, TOL);
        tu_assert_vec_eq_tol(r.point_a, cq_mad(ca, cq_sub(cb, ca), ra / d), TOL);
        tu_assert_vec_eq_tol(r.point_b, cq_mad(cb, cq_sub(cb, ca), -rb / d), TOL);
    }
    /* Concentric: the core distance is 0 and no normal is made up. */
    cq_proxy a = {&o, 1, 1}, b = {&o, 1, 0.5};
    cq_gjk_result r = gjk(&a, at(1, 2, 3), &b, at(1, 2, 3));
    ck_assert_int_eq(r.status, CQ_GJK_TOUCHING);
    ck_assert(!r.has_normal);
    ck_assert_double_eq_tol(r.distance, 0, TOL);
}
END_TEST

START_TEST(test_sphere_box)
{
    tu_rng rng = {12};
    cq_vec3 o = cq_v3(0, 0, 0);
    for (int i = 0; i < 1000; i++) {
        cq_vec3 h = cq_v3(tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2));
        cq_vec3 corners[8];
        box_points(h, corners);
        cq_xform xb = tu_pose(&rng, 2);
        cq_vec3 c = rvec(&rng, 4);
        cq_proxy s = {&o, 1, 0.3}, b = {corners, 8, 0};
        cq_gjk_result r = gjk(&s, at(c.x, c.y, c.z), &b, xb);
        double d = point_box_dist(c, h, &xb);
        if (d > 1e-6) {
            ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
            ck_assert_double_eq_tol(r.distance, d, TOL);
            ck_assert_double_eq_tol(point_box_dist(r.point_b, h, &xb), 0, TOL);
            tu_assert_vec_eq_tol(r.point_a, c, TOL);
        } else if (d == 0) {
            cq_vec3 l = cq_vabs(cq_xform_inv_point(&xb, c));
            if (fmin(h.x - l.x, fmin(h.y - l.y, h.z - l.z)) > 1e-6)
                ck_assert_int_eq(r.status, CQ_GJK_PENETRATING);
        }
    }
}
END_TEST

static void check_capsules(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2, double expect)
{
    cq_vec3 s1[2] = {p1, q1}, s2[2] = {p2, q2};
    cq_proxy a = {s1, 2, 0.1}, b = {s2, 2, 0.2};
    cq_gjk_result r = gjk(&a, cq_xform_identity(), &b, cq_xform_identity());
    ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
    ck_assert_double_eq_tol(r.distance, expect, TOL);
    ck_assert_double_eq_tol(point_seg_dist(r.point_a, p1, q1), 0, TOL);
    ck_assert_double_eq_tol(point_seg_dist(r.point_b, p2, q2), 0, TOL);
    cq_gjk_apply_radii(&r, &a, &b);
    ck_assert_double_eq_tol(r.distance, expect - 0.3, TOL);
}

START_TEST(test_capsule_capsule)
{
    /* Built configurations with known answers. */
    check_capsules(cq_v3(-1, 0, 0), cq_v3(1, 0, 0), cq_v3(0, -1, 0.7), cq_v3(0, 1, 0.7), 0.7);
    check_capsules(cq_v3(0, -1, 0), cq_v3(0, 1, 0), cq_v3(0.5, -0.5, 0), cq_v3(0.5, 3, 0), 0.5);
    check_capsules(cq_v3(0, 0, 0), cq_v3(1, 0, 0), cq_v3(3, 0, 0), cq_v3(5, 0, 0), 2);
    check_capsules(cq_v3(0, 0, 0), cq_v3(1, 0, 0), cq_v3(2, -1, 0.5), cq_v3(2, 1, 0.5), sqrt(1.25));
    /* Random segments against ternary search and the exact formula. */
    tu_rng rng = {13};
    for (int i = 0; i < 1000; i++) {
        cq_vec3 p1 = rvec(&rng, 3), q1 = rvec(&rng, 3), p2 = rvec(&rng, 3), q2 = rvec(&rng, 3);
        double d = seg_seg_search(p1, q1, p2, q2);
        ck_assert_double_eq_tol(d, seg_seg_dist(p1, q1, p2, q2), 1e-9);
        if (d > 1e-6)
            check_capsules(p1, q1, p2, q2, d);
    }
}
END_TEST

/* ---- boxes against the brute force ---- */

START_TEST(test_box_box_random)
{
    tu_rng rng = {14};
    int n = 0;
    while (n < PAIRS) {
        box_pair p;
        random_box_pair(&rng, &p, 3);
        if (p.gap <= 1e-6)
            continue;
        n++;
        cq_gjk_result r = gjk(&p.a, p.xa, &p.b, p.xb);
        double d = box_box_dist(p.ha, &p.xa, p.hb, &p.xb);
        ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
        ck_assert_double_eq_tol(r.distance, d, 1e-9 * (1 + d));
        ck_assert_double_eq_tol(point_box_dist(r.point_a, p.ha, &p.xa), 0, 1e-9);
        ck_assert_double_eq_tol(point_box_dist(r.point_b, p.hb, &p.xb), 0, 1e-9);
    }
}
END_TEST

START_TEST(test_box_box_penetrating)
{
    tu_rng rng = {15};
    int n = 0;
    while (n < PAIRS) {
        box_pair p;
        random_box_pair(&rng, &p, 1);
        if (p.gap >= -1e-6)
            continue;
        n++;
        cq_gjk_result r = gjk(&p.a, p.xa, &p.b, p.xb);
        ck_assert_int_eq(r.status, CQ_GJK_PENETRATING);
        ck_assert_double_eq(r.distance, 0);
        ck_assert(!r.has_normal);
        /* A point common to both cores. */
        ck_assert_double_eq_tol(point_box_dist(r.point_a, p.ha, &p.xa), 0, 1e-9);
        ck_assert_double_eq_tol(point_box_dist(r.point_a, p.hb, &p.xb), 0, 1e-9);
    }
}
END_TEST

/* Touching and nearly touching cubes: stacked face to face, an edge on a
 * face, two crossed edges; offset along the separating direction. */
START_TEST(test_touching)
{
    cq_vec3 h = cq_v3(1, 1, 1);
    double r2 = sqrt(2.0);
    cq_xform edge_x = at(0, 0, 0), edge_z = at(0, 0, 0);
    edge_x.r = tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 4);
    edge_z.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 4);
    struct {
        cq_xform xa, xb;
        double contact_y; /* B's centre height at which the two touch */
    } cases[] = {
        {at(0, 0, 0), at(0.3, 0, -0.2), 2},      /* face on face */
        {at(0, 0, 0), edge_z, 1 + r2},           /* edge on face */
        {edge_x, edge_z, 2 * r2},                /* crossed edges */
    };
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 5; k++) {
            static const double offsets[5] = {0, 1e-12, -1e-12, 1e-6, -1e-6};
            box_pair p;
            cq_xform xb = cases[c].xb;
            xb.p.y = cases[c].contact_y + offsets[k];
            box_pair_init(&p, h, cases[c].xa, h, xb);
            cq_gjk_result r = gjk(&p.a, p.xa, &p.b, xb);
            if (offsets[k] > 1e-9) {
                ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
                ck_assert_double_eq_tol(r.distance, offsets[k], 1e-12);
                tu_assert_vec_eq_tol(r.normal, cq_v3(0, 1, 0), 1e-9);
            } else if (offsets[k] < -1e-9) {
                ck_assert_int_eq(r.status, CQ_GJK_PENETRATING);
            } else {
                ck_assert_int_eq(r.status, CQ_GJK_TOUCHING);
                ck_assert(r.distance <= CQ_GJK_DEFAULT_TOLERANCE);
            }
        }
    }
}
END_TEST

/* ---- symmetries ---- */

START_TEST(test_swap_symmetry)
{
    tu_rng rng = {16};
    for (int i = 0; i < PAIRS; i++) {
        box_pair p;
        random_box_pair(&rng, &p, 2);
        cq_gjk_result ab = gjk(&p.a, p.xa, &p.b, p.xb), ba = gjk(&p.b, p.xb, &p.a, p.xa);
        ck_assert_int_eq(ab.status, ba.status);
        ck_assert_double_eq_tol(ab.distance, ba.distance, 1e-9 * (1 + ab.distance));
        if (ab.status == CQ_GJK_SEPARATED) {
            tu_assert_vec_eq_tol(ab.normal, cq_neg(ba.normal), 1e-6);
            ck_assert_double_eq_tol(ab.distance, box_box_dist(p.ha, &p.xa, p.hb, &p.xb), 1e-9 * (1 + ab.distance));
        }
    }
}
END_TEST

START_TEST(test_rigid_invariance)
{
    tu_rng rng = {17};
    for (int i = 0; i < PAIRS; i++) {
        box_pair p;
        random_box_pair(&rng, &p, 2);
        cq_xform t = tu_pose(&rng, 1);
        t.p = cq_add(t.p, cq_v3(1e4, -1e4, 1e4));
        cq_xform xa = {cq_xform_point(&t, p.xa.p), cq_mul_mm(&t.r, &p.xa.r)};
        cq_xform xb = {cq_xform_point(&t, p.xb.p), cq_mul_mm(&t.r, &p.xb.r)};
        cq_gjk_result r0 = gjk(&p.a, p.xa, &p.b, p.xb), r1 = gjk(&p.a, xa, &p.b, xb);
        /* Coordinates near 1e4 carry ~1e-12 of rounding each. */
        double tol = 1e-12 * 1e4 * 10;
        if (fabs(p.gap) < 1e-6)
            continue;
        ck_assert_int_eq(r0.status, r1.status);
        ck_assert_double_eq_tol(r0.distance, r1.distance, tol);
        if (r0.status == CQ_GJK_SEPARATED && r0.distance > 1e-3)
            tu_assert_vec_eq_tol(cq_mul_mv(&t.r, r0.normal), r1.normal, 1e-6);
    }
}
END_TEST

/* ---- degenerate proxies ---- */

START_TEST(test_degenerate_proxies)
{
    cq_vec3 one[1] = {{0, 0, 0}};
    cq_vec3 twin[2] = {{0.5, 0, 0}, {0.5, 0, 0}};
    cq_vec3 line[3] = {{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}};
    cq_vec3 square[4] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
    cq_proxy p_one = {one, 1, 0}, p_twin = {twin, 2, 0}, p_line = {line, 3, 0}, p_square = {square, 4, 0};
    cq_xform id = cq_xform_identity();
    tu_rng rng = {18};
    for (int i = 0; i < 500; i++) {
        cq_vec3 q = rvec(&rng, 3);
        cq_xform xq = at(q.x, q.y, q.z);
        cq_gjk_result r = gjk(&p_twin, id, &p_one, xq);
        ck_assert_double_eq_tol(r.distance, cq_len(cq_sub(q, twin[0])), TOL);
        r = gjk(&p_line, id, &p_one, xq);
        ck_assert_double_eq_tol(r.distance, point_seg_dist(q, line[0], line[2]), TOL);
        r = gjk(&p_square, id, &p_one, xq);
        ck_assert_double_eq_tol(r.distance, point_box_dist(q, cq_v3(1, 1, 0), &id), TOL);
        /* Flat against flat, crossing or not: finite, never NaN. */
        cq_xform xs = tu_pose(&rng, 1);
        r = gjk(&p_square, id, &p_square, xs);
        r = gjk(&p_line, id, &p_line, xs);
        r = gjk(&p_twin, id, &p_twin, xs);
    }
    /* Coplanar overlapping squares: the difference is flat, depth 0. */
    cq_gjk_result r = gjk(&p_square, id, &p_square, at(0.5, 0.2, 0));
    ck_assert_int_eq(r.status, CQ_GJK_TOUCHING);
    /* Boxes 1e-9 across, apart and overlapping. */
    cq_vec3 tiny[8];
    box_points(cq_v3(1e-9, 1e-9, 1e-9), tiny);
    cq_proxy p_tiny = {tiny, 8, 0};
    r = gjk(&p_tiny, id, &p_tiny, at(1e-8, 0, 0));
    ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
    ck_assert_double_eq_tol(r.distance, 8e-9, 1e-15);
    r = gjk(&p_tiny, id, &p_tiny, at(1.5e-9, 0, 0));
    ck_assert_int_eq(r.status, CQ_GJK_TOUCHING);
    r = gjk(&p_tiny, id, &p_tiny, at(0, 0, 0));
    ck_assert_int_eq(r.status, CQ_GJK_PENETRATING);
}
END_TEST

/* ---- iteration caps and warm start ---- */

START_TEST(test_iteration_cap)
{
    tu_rng rng = {19};
    int limited = 0;
    for (int i = 0; i < PAIRS; i++) {
        box_pair p;
        random_box_pair(&rng, &p, 2);
        cq_gjk_result full = gjk(&p.a, p.xa, &p.b, p.xb);
        for (int cap = 1; cap <= 3; cap++) {
            cq_gjk_options opt = {.max_iterations = cap};
            cq_gjk_result r = cq_gjk_distance(&p.a, &p.xa, &p.b, &p.xb, &opt);
            ck_assert_int_le(r.iterations, cap);
            ck_assert(isfinite(r.distance));
            if (full.iterations > cap) {
                ck_assert_int_eq(r.status, CQ_GJK_ITERATION_LIMIT);
                /* The best bound so far is an upper bound. */
                ck_assert(r.distance >= full.distance - 1e-12);
                limited++;
            } else {
                ck_assert_int_eq(r.status, full.status);
                ck_assert_double_eq_tol(r.distance, full.distance, 1e-12);
            }
        }
    }
    ck_assert_int_gt(limited, PAIRS);
}
END_TEST

START_TEST(test_warm_start)
{
    tu_rng rng = {20};
    int warm_total = 0, fresh_total = 0;
    for (int i = 0; i < 500; i++) {
        box_pair p;
        random_box_pair(&rng, &p, 3);
        cq_simplex_cache cache = {0};
        cq_gjk_options opt = {.cache = &cache};
        cq_gjk_result cold = cq_gjk_distance(&p.a, &p.xa, &p.b, &p.xb, &opt);
        ck_assert_int_eq(cache.count, cold.simplex.count);
        /* Move B a little: the warm start still gives the brute-force answer. */
        p.xb.p = cq_add(p.xb.p, cq_v3(1e-3, -2e-3, 1e-3));
        box_pair q;
        box_pair_init(&q, p.ha, p.xa, p.hb, p.xb);
        cq_gjk_result warm = cq_gjk_distance(&q.a, &q.xa, &q.b, &q.xb, &opt);
        cq_gjk_result fresh = gjk(&q.a, q.xa, &q.b, q.xb);
        ck_assert_int_eq(warm.status, fresh.status);
        ck_assert_double_eq_tol(warm.distance, fresh.distance, 1e-9);
        warm_total += warm.iterations;
        fresh_total += fresh.iterations;
    }
    ck_assert_int_lt(warm_total, fresh_total);
    /* Indices out of range are ignored. */
    box_pair p;
    box_pair_init(&p, cq_v3(1, 1, 1), at(0, 0, 0), cq_v3(1, 1, 1), at(3, 0, 0));
    cq_simplex_cache bad = {.count = 2, .index_a = {9, 500}, .index_b = {0, 70}};
    cq_gjk_options opt = {.cache = &bad};
    cq_gjk_result r = cq_gjk_distance(&p.a, &p.xa, &p.b, &p.xb, &opt);
    ck_assert_int_eq(r.status, CQ_GJK_SEPARATED);
    ck_assert_double_eq_tol(r.distance, 1, TOL);
}
END_TEST

START_TEST(test_support_and_names)
{
    cq_vec3 pts[4] = {{1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0}};
    cq_proxy p = {pts, 4, 0};
    ck_assert_int_eq(cq_proxy_support(&p, cq_v3(1, 0, 0)), 0);
    ck_assert_int_eq(cq_proxy_support(&p, cq_v3(0, 1, 0)), 2);
    ck_assert_int_eq(cq_proxy_support(&p, cq_v3(0, 0, 0)), 0);
    ck_assert_str_eq(cq_gjk_status_name(CQ_GJK_SEPARATED), "separated");
    ck_assert_str_eq(cq_gjk_status_name(CQ_GJK_TOUCHING), "touching");
    ck_assert_str_eq(cq_gjk_status_name(CQ_GJK_PENETRATING), "penetrating");
    ck_assert_str_eq(cq_gjk_status_name(CQ_GJK_ITERATION_LIMIT), "iteration_limit");
}
END_TEST

Suite *gjk_suite(void)
{
    Suite *s = suite_create("gjk");
    TCase *tc = tcase_create("analytic");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sphere_sphere);
    tcase_add_test(tc, test_sphere_box);
    tcase_add_test(tc, test_capsule_capsule);
    tcase_add_test(tc, test_touching);
    tcase_add_test(tc, test_degenerate_proxies);
    tcase_add_test(tc, test_support_and_names);
    tcase_add_test(tc, test_simplex_solver);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_box_box_random);
    tcase_add_test(tc, test_box_box_penetrating);
    tcase_add_test(tc, test_swap_symmetry);
    tcase_add_test(tc, test_rigid_invariance);
    tcase_add_test(tc, test_iteration_cap);
    tcase_add_test(tc, test_warm_start);
    suite_add_tcase(s, tc);
    return s;
}
