/* The closest-point primitives under the closed forms. Oracles: brute-force
 * sampling and the projection inequality (each closest point is the
 * projection of the other onto its feature). */
#include "geom.h"
#include "testutil.h"

#define TOL 1e-9

static cq_vec3 rvec(tu_rng *rng, double r)
{
    return cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
}

static double seg_dist(cq_vec3 p, cq_vec3 a, cq_vec3 b)
{
    double lo = 0, hi = 1;
    for (int i = 0; i < 200; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (cq_len2(cq_sub(p, cq_lerp(a, b, m1))) < cq_len2(cq_sub(p, cq_lerp(a, b, m2))))
            hi = m2;
        else
            lo = m1;
    }
    return cq_len(cq_sub(p, cq_lerp(a, b, 0.5 * (lo + hi))));
}

/* ---- primitives ---------------------------------------------------------- */

START_TEST(segment_point_analytic)
{
    double t;
    cq_vec3 a = cq_v3(0, 0, 0), b = cq_v3(2, 0, 0);
    tu_assert_vec_eq_tol(cq__closest_on_segment(cq_v3(1, 1, 0), a, b, &t), cq_v3(1, 0, 0), TOL);
    ck_assert_double_eq_tol(t, 0.5, TOL);
    tu_assert_vec_eq_tol(cq__closest_on_segment(cq_v3(-1, 1, 0), a, b, &t), a, TOL);
    ck_assert_double_eq_tol(t, 0, TOL);
    tu_assert_vec_eq_tol(cq__closest_on_segment(cq_v3(3, 0, 5), a, b, &t), b, TOL);
    ck_assert_double_eq_tol(t, 1, TOL);
    cq_vec3 p = cq_v3(1, 2, 3); /* zero length: the point itself */
    cq_vec3 x = cq__closest_on_segment(cq_v3(7, 7, 7), p, p, &t);
    ck_assert(x.x == p.x && x.y == p.y && x.z == p.z && t == 0);
}
END_TEST

START_TEST(parallel_segments_use_middle_of_overlap)
{
    double s, t;
    cq_vec3 c1, c2;
    /* Overlap of the projections is x in [1, 2]: the middle is x = 1.5. */
    double d2 = cq__closest_segments(cq_v3(0, 0, 0), cq_v3(2, 0, 0), cq_v3(1, 1, 0), cq_v3(3, 1, 0), &s, &t, &c1, &c2);
    ck_assert_double_eq_tol(d2, 1, TOL);
    tu_assert_vec_eq_tol(c1, cq_v3(1.5, 0, 0), TOL);
    tu_assert_vec_eq_tol(c2, cq_v3(1.5, 1, 0), TOL);
    ck_assert_double_eq_tol(s, 0.75, TOL);
    ck_assert_double_eq_tol(t, 0.25, TOL);
    /* Antiparallel, and the arguments swapped: the same middle. */
    cq__closest_segments(cq_v3(3, 1, 0), cq_v3(1, 1, 0), cq_v3(0, 0, 0), cq_v3(2, 0, 0), &s, &t, &c1, &c2);
    tu_assert_vec_eq_tol(c1, cq_v3(1.5, 1, 0), TOL);
    tu_assert_vec_eq_tol(c2, cq_v3(1.5, 0, 0), TOL);
    /* Disjoint projections: the facing ends. */
    d2 = cq__closest_segments(cq_v3(0, 0, 0), cq_v3(1, 0, 0), cq_v3(2, 1, 0), cq_v3(3, 1, 0), &s, &t, &c1, &c2);
    ck_assert_double_eq_tol(d2, 2, TOL);
    tu_assert_vec_eq_tol(c1, cq_v3(1, 0, 0), TOL);
    tu_assert_vec_eq_tol(c2, cq_v3(2, 1, 0), TOL);
}
END_TEST

/* Random segment pairs of one of seven kinds: general, near-parallel,
 * parallel (often collinear), crossing, first or second zero-length, both. */
static void random_segments(tu_rng *rng, int kind, cq_vec3 s[4])
{
    cq_vec3 p1 = rvec(rng, 1), d1 = rvec(rng, 1), p2 = rvec(rng, 1), d2 = rvec(rng, 1), zero = cq_v3(0, 0, 0);
    if (kind == 1)
        d2 = cq_mad(cq_scale(d1, tu_uniform(rng, -2, 2)), rvec(rng, 1), pow(10, -tu_uniform(rng, 3, 14)));
    if (kind == 2) {
        d2 = cq_scale(d1, tu_uniform(rng, -2, 2));
        if (tu_uniform(rng, 0, 1) < 0.5)
            p2 = cq_mad(p1, d1, tu_uniform(rng, -1, 2));
    }
    if (kind == 3)
        p2 = cq_mad(cq_mad(p1, d1, tu_uniform(rng, 0, 1)), d2, -tu_uniform(rng, 0, 1));
    if (kind == 4 || kind == 6)
        d1 = zero;
    if (kind == 5 || kind == 6)
        d2 = zero;
    s[0] = p1, s[1] = cq_add(p1, d1), s[2] = p2, s[3] = cq_add(p2, d2);
}

/* Oracle: the smallest distance over an n x n grid of both segments. */
static double brute_segments(const cq_vec3 s[4], int n)
{
    double best = INFINITY;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            cq_vec3 a = cq_lerp(s[0], s[1], i / (double)(n - 1)), b = cq_lerp(s[2], s[3], j / (double)(n - 1));
            best = fmin(best, cq_len2(cq_sub(a, b)));
        }
    return sqrt(best);
}

START_TEST(segments_against_brute_force)
{
    enum { CASES = 3500, GRID = 100 };
    tu_rng rng = {20240601};
    double worst = 0;
    for (int k = 0; k < CASES; k++) {
        cq_vec3 g[4], c1, c2;
        double s, t;
        random_segments(&rng, k % 7, g);
        double d2 = cq__closest_segments(g[0], g[1], g[2], g[3], &s, &t, &c1, &c2);
        ck_assert(isfinite(d2) && cq_v3_finite(c1) && cq_v3_finite(c2));
        ck_assert(s >= 0 && s <= 1 && t >= 0 && t <= 1);
        tu_assert_vec_eq_tol(c1, cq_lerp(g[0], g[1], s), 1e-12);
        tu_assert_vec_eq_tol(c2, cq_lerp(g[2], g[3], t), 1e-12);
        ck_assert_double_eq_tol(d2, cq_len2(cq_sub(c1, c2)), 1e-15);
        /* Never worse than any sample, and better only by what the grid misses. */
        double d = sqrt(d2), b = brute_segments(g, GRID);
        double lip = (cq_len(cq_sub(g[1], g[0])) + cq_len(cq_sub(g[3], g[2]))) / (2.0 * (GRID - 1));
        ck_assert_msg(d <= b + 1e-12 && d >= b - lip - 1e-12, "case %d: %.17g vs grid %.17g", k, d, b);
        worst = fmax(worst, d - b);
        /* Optimality of a convex problem: each point is the projection of
         * the other onto its segment, (c2 - c1).(v - c1) <= 0 at both ends. */
        for (int e = 0; e < 2; e++) {
            ck_assert_msg(cq_dot(cq_sub(c2, c1), cq_sub(g[e], c1)) <= 1e-10, "case %d: s not optimal", k);
            ck_assert_msg(cq_dot(cq_sub(c1, c2), cq_sub(g[2 + e], c2)) <= 1e-10, "case %d: t not optimal", k);
        }
    }
    ck_assert(worst <= 1e-12);
}
END_TEST

START_TEST(triangle_regions_analytic)
{
    cq_vec3 a = cq_v3(0, 0, 0), b = cq_v3(1, 0, 0), c = cq_v3(0, 1, 0);
    static const struct {
        cq_vec3 p, expect;
        cq_tri_region region;
        int index;
    } cases[] = {
        {{0.2, 0.2, 1}, {0.2, 0.2, 0}, CQ_TRI_FACE, 0},   {{-1, -1, 0}, {0, 0, 0}, CQ_TRI_VERTEX, 0},
        {{2, -0.5, 0}, {1, 0, 0}, CQ_TRI_VERTEX, 1},      {{-0.5, 2, 2}, {0, 1, 0}, CQ_TRI_VERTEX, 2},
        {{0.5, -1, 0}, {0.5, 0, 0}, CQ_TRI_EDGE, 0},      {{1, 1, -3}, {0.5, 0.5, 0}, CQ_TRI_EDGE, 1},
        {{-1, 0.5, 3}, {0, 0.5, 0}, CQ_TRI_EDGE, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cq_tri_region r;
        int i;
        tu_assert_vec_eq_tol(cq__closest_on_triangle(cases[k].p, a, b, c, &r, &i), cases[k].expect, TOL);
        ck_assert_int_eq(r, cases[k].region);
        ck_assert_int_eq(i, cases[k].index);
    }
}
END_TEST

/* Random triangles of five kinds: general, collinear, two vertices equal,
 * all equal, and slivers 1e-9 off collinear. */
static void random_triangle(tu_rng *rng, int kind, cq_vec3 v[3])
{
    for (int i = 0; i < 3; i++)
        v[i] = rvec(rng, 1);
    if (kind == 1 || kind == 4)
        v[2] = cq_lerp(v[0], v[1], tu_uniform(rng, -1, 2));
    if (kind == 4)
        v[2] = cq_mad(v[2], rvec(rng, 1), 1e-9);
    if (kind == 2)
        v[(int)tu_uniform(rng, 0, 3)] = v[(int)tu_uniform(rng, 0, 3)];
    if (kind == 3)
        v[1] = v[2] = v[0];
}

/* Oracle: the smallest distance over the barycentric grid (i, j) / n. */
static double brute_triangle(cq_vec3 p, const cq_vec3 v[3], int n)
{
    double best = INFINITY;
    cq_vec3 ab = cq_sub(v[1], v[0]), ac = cq_sub(v[2], v[0]);
    for (int i = 0; i <= n; i++)
        for (int j = 0; i + j <= n; j++) {
            cq_vec3 x = cq_add(v[0], cq_add(cq_scale(ab, i / (double)n), cq_scale(ac, j / (double)n)));
            best = fmin(best, cq_len2(cq_sub(p, x)));
        }
    return sqrt(best);
}

/* The reported feature holds the point: vertex, edge by the ternary-search
 * oracle, face by non-negative barycentric areas. */
static void assert_on_feature(cq_vec3 x, const cq_vec3 v[3], cq_tri_region r, int i)
{
    if (r == CQ_TRI_VERTEX) {
        ck_assert(cq_len(cq_sub(x, v[i])) <= 1e-12);
    } else if (r == CQ_TRI_EDGE) {
        ck_assert(seg_dist(x, v[i], v[(i + 1) % 3]) <= 1e-9);
    } else {
        cq_vec3 n = cq_cross(cq_sub(v[1], v[0]), cq_sub(v[2], v[0]));
        for (int k = 0; k < 3; k++)
            ck_assert(cq_dot(n, cq_cross(cq_sub(v[(k + 1) % 3], v[k]), cq_sub(x, v[k]))) >= -1e-12);
        ck_assert(fabs(cq_dot(n, cq_sub(x, v[0]))) <= 1e-12 * cq_len(n));
    }
}

START_TEST(triangle_against_brute_force)
{
    enum { CASES = 2500, GRID = 80 };
    tu_rng rng = {77};
    for (int k = 0; k < CASES; k++) {
        cq_vec3 v[3], p = rvec(&rng, 2);
        random_triangle(&rng, k % 5, v);
        cq_tri_region r;
        int i;
        cq_vec3 x = cq__closest_on_triangle(p, v[0], v[1], v[2], &r, &i);
        ck_assert(cq_v3_finite(x));
        ck_assert(i >= 0 && i < 3);
        assert_on_feature(x, v, r, i);
        double d = cq_len(cq_sub(p, x)), b = brute_triangle(p, v, GRID);
        double lip = (cq_len(cq_sub(v[1], v[0])) + cq_len(cq_sub(v[2], v[0]))) / GRID;
        ck_assert_msg(d <= b + 1e-12 && d >= b - lip - 1e-12, "case %d: %.17g vs grid %.17g", k, d, b);
        /* x is the projection of p onto a convex set: (p - x).(v - x) <= 0. */
        for (int e = 0; e < 3; e++)
            ck_assert_msg(cq_dot(cq_sub(p, x), cq_sub(v[e], x)) <= 1e-10, "case %d: not a projection", k);
    }
}
END_TEST

/* ---- round pairs ----------------------------------------------------------- */

Suite *geom_suite(void)
{
    Suite *s = suite_create("geom");
    TCase *tc = tcase_create("closest");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, segment_point_analytic);
    tcase_add_test(tc, parallel_segments_use_middle_of_overlap);
    tcase_add_test(tc, segments_against_brute_force);
    tcase_add_test(tc, triangle_regions_analytic);
    tcase_add_test(tc, triangle_against_brute_force);
    suite_add_tcase(s, tc);
    return s;
}
