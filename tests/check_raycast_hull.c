/* Ray casts against hulls and rounded hulls. Oracles, none of them the code
 * under test:
 * - the march along the ray of raycast_oracle.c (brute force over every
 *   triangle of the input points for rounded hulls);
 * - exact answers for axis-aligned rays from a lattice on a cube's faces,
 *   edges and corners (box and sharp hull);
 * - the capsule and sphere closed forms for the equivalent rounded hulls,
 *   and the triangle fan for flat hulls. */
#include "raycast_oracle.h"

/* ---- random rays against the march oracle -------------------------------- */

START_TEST(random_hulls)
{
    tu_rng rng = {8};
    tally all = {0, 0, 0};
    for (int k = 0; k < 40; k++) {
        cq_vec3 p[12];
        int n = 4 + k % 9;
        for (int i = 0; i < n; i++)
            p[i] = rvec(&rng, 1.5);
        cq_hull *h = hull_of(p, n, 0);
        ck_assert_int_eq(h->dim, 3);
        solid s = {convex(h), tu_pose(&rng, 5), NULL, 0};
        tally t = random_rays(&s, &rng, 1.5, 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
        cq_hull_free(h);
    }
    assert_tally(all, 1000);
}
END_TEST

START_TEST(random_rounded_hulls)
{
    tu_rng rng = {9};
    tally all = {0, 0, 0};
    for (int k = 0; k < 24; k++) {
        cq_vec3 p[8];
        int n = 1 + k % 8; /* points, segments, and up to 8-point solids */
        for (int i = 0; i < n; i++)
            p[i] = rvec(&rng, 1);
        cq_hull *h = hull_of(p, n, tu_uniform(&rng, 0.05, 0.8));
        solid s = {convex(h), tu_pose(&rng, 5), p, n};
        tally t = random_rays(&s, &rng, 1.7 + h->radius, 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
        cq_hull_free(h);
    }
    assert_tally(all, 600);
}
END_TEST

/* Axis-aligned rays from a lattice that puts origins on faces, edges and
 * corners of the cube [-1, 1]^3 and directions with exact zeros, against a
 * box and a sharp hull of that cube. Oracle, exact in this arithmetic: the
 * origin is inside when every |coordinate| <= 1; otherwise the ray along
 * axis a hits when both other coordinates are within [-1, 1] and the cube
 * lies ahead, at distance |o_a| - 1, through the face whose normal is -d. */
START_TEST(axis_aligned_lattice)
{
    static const double g[] = {-2, -1, -0.5, 0, 0.5, 1, 2};
    cq_vec3 cube[8];
    for (int i = 0; i < 8; i++)
        cube[i] = cq_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    cq_hull *h = hull_of(cube, 8, 0);
    cq_shape shapes[2] = {box(1, 1, 1), convex(h)};
    for (int k = 0; k < 2; k++)
        for (int n = 0; n < 7 * 7 * 7 * 6; n++) {
            double c[3] = {g[n % 7], g[n / 7 % 7], g[n / 49 % 7]};
            int axis = n / 343 % 3;
            double s = n / 343 < 3 ? 1 : -1;
            double dd[3] = {0, 0, 0};
            dd[axis] = s;
            cq_vec3 o = cq_v3(c[0], c[1], c[2]), d = cq_v3(dd[0], dd[1], dd[2]);
            cq_ray_hit r = cast(&shapes[k], cq_xform_identity(), o, d, 5);
            bool inside = fabs(c[0]) <= 1 && fabs(c[1]) <= 1 && fabs(c[2]) <= 1;
            bool across = fabs(c[(axis + 1) % 3]) <= 1 && fabs(c[(axis + 2) % 3]) <= 1;
            if (inside) {
                assert_inside(r, o, d);
            } else if (across && c[axis] * s < 0) {
                assert_hit(r, fabs(c[axis]) - 1, cq_neg(d));
            } else {
                ck_assert(!r.hit);
            }
        }
    cq_hull_free(h);
}
END_TEST

/* ---- hulls equivalent to other shapes ------------------------------------ */

/* A rounded hull of one point is a sphere, of two points a capsule: the
 * GJK march against the closed forms. Robust hits and misses are decided
 * by the closed form with the radius shrunk and grown by EPS. */
static void compare_round(tu_rng *rng, double r, double hh, int count)
{
    cq_vec3 ends[2] = {cq_v3(0, -hh, 0), cq_v3(0, hh, 0)};
    cq_hull *h = hull_of(hh > 0 ? ends : &ends[0], hh > 0 ? 2 : 1, r);
    cq_shape round = convex(h);
    cq_shape exact = hh > 0 ? capsule(r, hh) : sphere(r);
    cq_shape thin = hh > 0 ? capsule(r - EPS, hh) : sphere(r - EPS), fat = hh > 0 ? capsule(r + EPS, hh) : sphere(r + EPS);
    int hits = 0;
    for (int i = 0; i < count; i++) {
        cq_xform pose = tu_pose(rng, 5);
        cq_vec3 o = cq_add(pose.p, cq_scale(rdir(rng), 4 * (r + hh)));
        cq_vec3 aim = cq_add(pose.p, rvec(rng, 1.2 * (r + hh)));
        if (i % 7 == 0) /* along the axis */
            aim = cq_xform_point(&pose, cq_v3(0, 0, 0)), o = cq_xform_point(&pose, cq_v3(0, 4 * (r + hh), 0));
        if (i % 7 == 1) /* parallel to the axis, off it */
            aim = cq_xform_point(&pose, cq_v3(0.5 * r, 0, 0)), o = cq_xform_point(&pose, cq_v3(0.5 * r, -4 * (r + hh), 0));
        cq_vec3 d = unit(cq_sub(aim, o));
        cq_ray_hit a = cast(&exact, pose, o, d, 20), b = cast(&round, pose, o, d, 20);
        if (cast(&thin, pose, o, d, 20).hit) {
            ck_assert(a.hit && b.hit);
            ck_assert_double_eq_tol(b.distance, a.distance, 1e-7);
            tu_assert_vec_eq_tol(b.normal, a.normal, 1e-6);
            hits++;
        } else if (!cast(&fat, pose, o, d, 20).hit) {
            ck_assert(!a.hit && !b.hit);
        }
    }
    ck_assert(hits > count / 4);
    cq_hull_free(h);
}

START_TEST(rounded_hull_vs_capsule_and_sphere)
{
    tu_rng rng = {12};
    compare_round(&rng, 0.5, 0, 300);
    compare_round(&rng, 0.5, 1, 300);
    compare_round(&rng, 2, 0.1, 300);
    compare_round(&rng, 0.05, 3, 300);
}
END_TEST

START_TEST(flat_and_degenerate_hulls)
{
    tu_rng rng = {13};
    cq_vec3 sq[4] = {cq_v3(-1, -1, 0), cq_v3(1, -1, 0), cq_v3(1, 1, 0), cq_v3(-1, 1, 0)};
    cq_hull *flat = hull_of(sq, 4, 0);
    ck_assert_int_eq(flat->dim, 2);
    cq_shape poly = convex(flat);
    cq_shape fan[2] = {tri(sq[0], sq[1], sq[2]), tri(sq[0], sq[2], sq[3])};
    int hits = 0;
    for (int i = 0; i < 500; i++) {
        cq_xform pose = tu_pose(&rng, 5);
        cq_vec3 lo = cq_scale(rdir(&rng), 3), ld = unit(cq_sub(rvec(&rng, 1.3), lo));
        cq_vec3 o = cq_xform_point(&pose, lo), d = cq_mul_mv(&pose.r, ld);
        cq_ray_hit p = cast(&poly, pose, o, d, 10);
        cq_ray_hit t0 = cast(&fan[0], pose, o, d, 10), t1 = cast(&fan[1], pose, o, d, 10);
        cq_vec3 q = cq_mad(lo, ld, -lo.z / ld.z); /* where the ray crosses z = 0 */
        if (fabs(fabs(q.x) - 1) < 1e-9 || fabs(fabs(q.y) - 1) < 1e-9)
            continue; /* on the rim */
        ck_assert_int_eq(p.hit, t0.hit || t1.hit);
        if (!p.hit)
            continue;
        hits++;
        cq_ray_hit t = t0.hit ? t0 : t1;
        ck_assert_double_eq_tol(p.distance, t.distance, 1e-9);
        tu_assert_vec_eq_tol(p.normal, t.normal, 1e-9);
    }
    ck_assert(hits > 100);
    cq_xform id = cq_xform_identity();
    ck_assert(!cast(&poly, id, cq_v3(-5, 0.2, 0), cq_v3(1, 0, 0), 10).hit); /* edge-on */
    /* without radius, a segment or a point is never hit, not even head-on */
    cq_hull *seg = hull_of(sq, 2, 0), *pt = hull_of(sq, 1, 0);
    cq_shape s = convex(seg), p1 = convex(pt);
    ck_assert(!cast(&s, id, cq_v3(-5, -1, 0), cq_v3(1, 0, 0), 10).hit);
    ck_assert(!cast(&s, id, cq_v3(0, -1, -5), cq_v3(0, 0, 1), 10).hit);
    ck_assert(!cast(&p1, id, cq_v3(-1, -1, -5), cq_v3(0, 0, 1), 10).hit);
    ck_assert(!cast(&p1, id, cq_v3(-1, -1, 0), cq_v3(0, 0, 1), 10).hit);
    /* with a radius the polygon is a rounded slab */
    cq_hull *slab = hull_of(sq, 4, 0.5);
    cq_shape rs = convex(slab);
    cq_ray_hit h = cast(&rs, id, cq_v3(0.2, 0.3, 5), cq_v3(0, 0, -1), 10);
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.distance, 4.5, 1e-8);
    tu_assert_vec_eq_tol(h.normal, cq_v3(0, 0, 1), 1e-8);
    h = cast(&rs, id, cq_v3(5, 0.3, 0), cq_v3(-1, 0, 0), 10); /* edge-on hits the rounded rim */
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.distance, 3.5, 1e-8);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-6);
    cq_hull_free(flat);
    cq_hull_free(seg);
    cq_hull_free(pt);
    cq_hull_free(slab);
}
END_TEST

Suite *raycast_hull_suite(void)
{
    Suite *s = suite_create("raycast_hull");
    TCase *oracle = tcase_create("march_oracle");
    tcase_set_timeout(oracle, 120);
    tcase_add_test(oracle, random_hulls);
    tcase_add_test(oracle, random_rounded_hulls);
    tcase_add_test(oracle, axis_aligned_lattice);
    suite_add_tcase(s, oracle);
    TCase *equiv = tcase_create("equivalent_shapes");
    tcase_add_test(equiv, rounded_hull_vs_capsule_and_sphere);
    tcase_add_test(equiv, flat_and_degenerate_hulls);
    suite_add_tcase(s, equiv);
    return s;
}
