/* Shape proxies and fixed sweeps with analytic answers: head-on, misses,
 * grazing, initial overlap, tunnelling, planes, unsupported input, the
 * iteration cap and the tolerance option. The random cases against the
 * oracles of sweep_oracle.c are in check_sweep_random.c. */
#include <string.h>

#include "cq/fallback.h"
#include "sweep_oracle.h"

Suite *sweep_suite(void);

static uint64_t slot_sum(const cq_counters *c, int slot)
{
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(c, sum);
    return sum[slot];
}

/* ---- shape proxies ---- */

START_TEST(test_proxy_shapes)
{
    cq_vec3 st[CQ_PROXY_STORAGE];
    cq_proxy p;
    cq_shape s = sphere(0.7);
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_OK);
    ck_assert_int_eq(p.count, 1);
    ck_assert_double_eq(p.radius, 0.7);
    ck_assert(p.points[0].x == 0 && p.points[0].y == 0 && p.points[0].z == 0);

    s = capsule(0.3, 1.5);
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_OK);
    ck_assert_int_eq(p.count, 2);
    ck_assert_double_eq(p.radius, 0.3);
    ck_assert_double_eq(fabs(p.points[0].y - p.points[1].y), 3.0);
    ck_assert_double_eq(p.points[0].y + p.points[1].y, 0.0);
    ck_assert(p.points[0].x == 0 && p.points[0].z == 0 && p.points[1].x == 0 && p.points[1].z == 0);

    s = box(cq_v3(1, 2, 3));
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_OK);
    ck_assert_int_eq(p.count, 8);
    ck_assert_double_eq(p.radius, 0);
    int seen = 0;
    for (int k = 0; k < 8; k++) {
        cq_vec3 c = p.points[k];
        ck_assert(fabs(c.x) == 1 && fabs(c.y) == 2 && fabs(c.z) == 3);
        seen |= 1 << ((c.x < 0) | (c.y < 0) << 1 | (c.z < 0) << 2);
    }
    ck_assert_int_eq(seen, 0xFF); /* all eight sign patterns */

    s = triangle(cq_v3(1, 2, 3), cq_v3(-1, 0, 4), cq_v3(5, 5, -5));
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_OK);
    ck_assert_int_eq(p.count, 3);
    ck_assert_double_eq(p.radius, 0);
    for (int i = 0; i < 3; i++)
        ck_assert(memcmp(&p.points[i], &s.triangle.v[i], sizeof(cq_vec3)) == 0);

    s = plane(cq_v3(0, 1, 0), 0);
    p = (cq_proxy){NULL, 0, -1};
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_EUNSUPPORTED);
    ck_assert_int_eq(p.count, 0); /* untouched */
}
END_TEST

START_TEST(test_proxy_convex)
{
    cq_vec3 pts[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}};
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(pts, 5, 0.25, &h), CQ_OK);
    cq_shape s = convex(h);
    cq_vec3 st[CQ_PROXY_STORAGE];
    cq_proxy p;
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_OK);
    ck_assert_ptr_eq(p.points, h->vertices); /* borrowed */
    ck_assert_int_eq(p.count, 4);            /* the interior point is not a vertex */
    ck_assert_double_eq(p.radius, 0.25);
    cq_hull_free(h);
    s = convex(NULL);
    ck_assert_int_eq(cq_shape_proxy(&s, st, &p), CQ_EUNSUPPORTED);
}
END_TEST

/* ---- fixed cases ---- */

START_TEST(test_sphere_sphere_head_on)
{
    cq_shape a = sphere(0.5), b = sphere(1.0);
    cq_sweep_hit h = sweep(&a, at(-10, 0, 0), cq_v3(20, 0, 0), &b, at(0, 0, 0));
    ck_assert(h.hit && !h.initially_overlapping && !h.iteration_limit && h.has_normal);
    double tstar = 8.5 / 20;
    ck_assert_double_le(h.time, tstar + SLACK);
    ck_assert_double_ge(h.time, tstar - TARGET / 20);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-12);
    tu_assert_vec_eq_tol(h.point, cq_v3(-1, 0, 0), 1e-12);
    ck_assert_int_le(h.iterations, 3); /* a face-like approach converges at once */
}
END_TEST

START_TEST(test_misses)
{
    cq_shape a = sphere(1), b = box(cq_v3(1, 1, 1));
    cq_xform xa = at(-5, 0, 0), xb = at(0, 0, 0);
    cq_sweep_hit h = sweep(&a, xa, cq_v3(-10, 0, 0), &b, xb); /* moving away */
    ck_assert(!h.hit);
    ck_assert_int_eq(h.iterations, 1);
    h = sweep(&a, at(-5, -3, 0), cq_v3(3, 10, 0), &b, xb); /* passing by, about 2 clear */
    ck_assert(!h.hit);
    h = sweep(&a, at(-5, 2.01, 0), cq_v3(10, 0, 0), &b, xb); /* parallel pass above the top face */
    ck_assert(!h.hit);
    h = sweep(&a, xa, cq_v3(2.99, 0, 0), &b, xb); /* too short by 0.01 */
    ck_assert(!h.hit);
    h = sweep(&a, xa, cq_v3(3.01, 0, 0), &b, xb); /* just long enough */
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.time, 3.0 / 3.01, 1e-6);
    h = sweep(&a, xa, cq_v3(0, 0, 0), &b, xb); /* zero translation */
    ck_assert(!h.hit);
    ck_assert_int_eq(h.iterations, 1);
}
END_TEST

/* Counting: each advancement step is one GJK call; an initial overlap of
 * two coplanar flat shapes has no EPA direction, which is a fallback
 * (counted by reason, action "dropped", and logged with the tags) and a
 * hit without a normal. */
START_TEST(test_counters_and_fallback_log)
{
    cq_counters ctr = {0};
    cq_fallback_slot slots[4];
    cq_fallback_log log;
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 4, NULL), CQ_OK);
    cq_sweep_options o = {.counters = &ctr, .log = &log, .tag_a = 7, .tag_b = 9};
    cq_shape s = sphere(1), b = box(cq_v3(1, 1, 1));
    cq_sweep_hit h = sweep_opt(&s, at(-5, 0, 0), cq_v3(10, 0, 0), &b, at(0, 0, 0), &o);
    ck_assert(h.hit && h.has_normal && !h.fell_back);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_GJK_CALLS), (uint64_t)h.iterations);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_EPA_CALLS), 0);
    ck_assert_int_eq(cq_fallback_log_read(&log, (cq_fallback_record[4]){0}, 4), 0);

    cq_shape t = triangle(cq_v3(0, 0, 0), cq_v3(2, 0, 0), cq_v3(0, 2, 0));
    h = sweep_opt(&t, at(0, 0, 0), cq_v3(1, 0, 0), &t, at(0.5, 0.5, 0), &o);
    ck_assert(h.hit && h.initially_overlapping && !h.has_normal && h.fell_back);
    ck_assert_double_eq(h.time, 0);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_EPA_CALLS), 1);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_ACTIONS + CQ_FBA_DROPPED), 1);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_ZERO_NORMALS), 1);
    uint64_t reasons = 0;
    for (int r = CQ_FB_EPA_ITERATION_LIMIT; r <= CQ_FB_EPA_DEGENERATE; r++)
        reasons += slot_sum(&ctr, CQ_CTR_REASONS + r);
    ck_assert_uint_eq(reasons, 1);
    cq_fallback_record rec[4];
    ck_assert_int_eq(cq_fallback_log_read(&log, rec, 4), 1);
    ck_assert_int_eq(rec[0].action, CQ_FBA_DROPPED);
    ck_assert_int_eq(rec[0].shape_a, CQ_TRIANGLE);
    ck_assert_int_eq(rec[0].shape_b, CQ_TRIANGLE);
    ck_assert_uint_eq(rec[0].tag_a, 7);
    ck_assert_uint_eq(rec[0].tag_b, 9);
    ck_assert_uint_eq(slot_sum(&ctr, CQ_CTR_REASONS + rec[0].reason), 1);
}
END_TEST

START_TEST(test_zero_translation_overlap)
{
    cq_shape a = sphere(1), b = box(cq_v3(1, 1, 1));
    cq_sweep_hit h = sweep(&a, at(1.5, 0, 0), cq_v3(0, 0, 0), &b, at(0, 0, 0));
    ck_assert(h.hit && h.initially_overlapping && h.has_normal);
    tu_assert_vec_eq_tol(h.normal, cq_v3(-1, 0, 0), 1e-12);
    tu_assert_vec_eq_tol(h.point, cq_v3(1, 0, 0), 1e-12);
}
END_TEST

START_TEST(test_grazing)
{
    cq_shape a = sphere(1), b = sphere(1);
    /* Tangent path: the closest approach is exactly r_a + r_b. */
    cq_sweep_hit h = sweep(&a, at(-5, 2, 0), cq_v3(10, 0, 0), &b, at(0, 0, 0));
    if (h.hit)
        ck_assert_double_le(h.time, 0.5 + SLACK);
    /* A hair inside: a hit at the analytic time. */
    double y = 2 - 1e-3;
    h = sweep(&a, at(-5, y, 0), cq_v3(10, 0, 0), &b, at(0, 0, 0));
    ck_assert(h.hit && !h.iteration_limit);
    double tstar = sphere_sphere_toi(cq_v3(-5, y, 0), cq_v3(10, 0, 0), cq_v3(0, 0, 0), 2);
    ck_assert_double_le(h.time, tstar + SLACK);
    /* The approach speed at contact is 10 * sqrt(4 - y^2) / 2. */
    ck_assert_double_ge(h.time, tstar - TARGET / (5 * sqrt(4 - y * y)) - SLACK);
    /* A hair outside: a miss. */
    h = sweep(&a, at(-5, 2 + 1e-3, 0), cq_v3(10, 0, 0), &b, at(0, 0, 0));
    ck_assert(!h.hit);
}
END_TEST

START_TEST(test_initially_overlapping)
{
    /* Cores apart, rounded shapes overlapping. */
    cq_shape s1 = sphere(1);
    cq_sweep_hit h = sweep(&s1, at(0, 0, 0), cq_v3(-3, 0, 0), &s1, at(1.5, 0, 0));
    ck_assert(h.hit && h.initially_overlapping && h.has_normal);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-12);
    tu_assert_vec_eq_tol(h.point, cq_v3(0.5, 0, 0), 1e-12);
    ck_assert_int_eq(h.iterations, 1);
    /* Barely overlapping and moving apart: still an overlap. */
    h = sweep(&s1, at(0, 0, 0), cq_v3(-3, 0, 0), &s1, at(2 - 1e-4, 0, 0));
    ck_assert(h.hit && h.initially_overlapping);

    /* Box-box: the least overlap is 0.5 along x (y: 1.8, z: 1.9). */
    cq_shape b = box(cq_v3(1, 1, 1));
    h = sweep(&b, at(0, 0, 0), cq_v3(0, 5, 0), &b, at(1.5, 0.2, 0.1));
    ck_assert(h.hit && h.initially_overlapping && h.has_normal);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-9);
    ck_assert_double_eq_tol(h.point.x, 0.5, 1e-9); /* B's face deepest in A */

    /* Sphere inside a box near its +x face: the box leaves along -x. */
    h = sweep(&s1, at(0.8, 0, 0), cq_v3(1, 1, 1), &b, at(0, 0, 0));
    ck_assert(h.hit && h.initially_overlapping && h.has_normal);
    tu_assert_vec_eq_tol(h.normal, cq_v3(-1, 0, 0), 1e-9);
    tu_assert_vec_eq_tol(h.point, cq_v3(1, 0, 0), 1e-9);

    /* Exactly touching counts as overlap, whatever the motion. */
    h = sweep(&b, at(0, 0, 0), cq_v3(-1, 0, 0), &b, at(2, 0.5, 0.5));
    ck_assert(h.hit && h.initially_overlapping);
}
END_TEST

START_TEST(test_touching_within_tolerance)
{
    cq_shape b = box(cq_v3(1, 1, 1));
    double gap = TARGET / 4;
    cq_sweep_hit h = sweep(&b, at(0, 0, 0), cq_v3(1, 0, 0), &b, at(2 + gap, 0.3, 0));
    ck_assert(h.hit && !h.initially_overlapping);
    ck_assert_double_eq(h.time, 0.0);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-9);
    h = sweep(&b, at(0, 0, 0), cq_v3(-1, 0, 0), &b, at(2 + gap, 0.3, 0)); /* moving apart */
    ck_assert(!h.hit);
    h = sweep(&b, at(0, 0, 0), cq_v3(0, 1, 0), &b, at(2 + gap, 0.3, 0)); /* sliding along the face */
    ck_assert(!h.hit);
}
END_TEST

START_TEST(test_tunnelling)
{
    /* A 1 cm sphere covering 100 units in one step through a 2 mm plate. */
    cq_shape a = sphere(0.01), b = box(cq_v3(0.001, 1, 1));
    cq_sweep_hit h = sweep(&a, at(-50, 0.2, -0.3), cq_v3(100, 0, 0), &b, at(0, 0, 0));
    ck_assert(h.hit && !h.initially_overlapping);
    double tstar = (50 - 0.001 - 0.01) / 100;
    ck_assert_double_le(h.time, tstar + SLACK);
    ck_assert_double_ge(h.time, tstar - TARGET / 100 - SLACK);
    tu_assert_vec_eq_tol(h.normal, cq_v3(1, 0, 0), 1e-12);
    tu_assert_vec_eq_tol(h.point, cq_v3(-0.001, 0.2, -0.3), 1e-9);
}
END_TEST

START_TEST(test_plane_round_shapes)
{
    cq_shape ground = plane(cq_v3(0, 1, 0), 0.5); /* solid below y = 0.5 */
    cq_xform xb = at(0, 1, 0);                    /* surface at y = 1.5 */
    cq_shape s = sphere(0.5);
    cq_sweep_hit h = sweep(&s, at(3, 4, 1), cq_v3(2, -4, 0), &ground, xb);
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.time, 2.0 / 4, 1e-15);
    tu_assert_vec_eq_tol(h.point, cq_v3(4, 1.5, 1), 1e-12);
    tu_assert_vec_eq_tol(h.normal, cq_v3(0, -1, 0), 1e-15);

    /* A capsule lying tilted: its low end leads. */
    cq_shape c = capsule(0.25, 1);
    cq_xform xa = at(0, 5, 0);
    xa.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 6); /* ends at +-(-sin, cos) */
    h = sweep(&c, xa, cq_v3(0, -10, 0), &ground, xb);
    double low = 5 - cos(CQ_PI / 6) - 0.25;
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.time, (low - 1.5) / 10, 1e-15);
    ck_assert_double_eq_tol(h.point.x, sin(CQ_PI / 6), 1e-12);

    /* A rounded hull: its radius counts. */
    cq_vec3 pts[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    cq_hull *hull = NULL;
    ck_assert_int_eq(cq_hull_build(pts, 4, 0.2, &hull), CQ_OK);
    cq_shape hs = convex(hull);
    h = sweep(&hs, at(0, 3, 0), cq_v3(0, -3, 0), &ground, xb);
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.time, (3 - 0.2 - 1.5) / 3, 1e-15);
    /* Already sunk in: an overlap whose point is on the plane above the deepest point. */
    h = sweep(&hs, at(0.5, 1.4, 0), cq_v3(0, 1, 0), &ground, xb);
    ck_assert(h.hit && h.initially_overlapping);
    tu_assert_vec_eq_tol(h.point, cq_v3(0.5, 1.5, 0), 1e-12);
    tu_assert_vec_eq_tol(h.normal, cq_v3(0, -1, 0), 1e-15);
    /* Parallel to the surface or moving away: a miss. */
    h = sweep(&hs, at(0, 3, 0), cq_v3(5, 0, 0), &ground, xb);
    ck_assert(!h.hit);
    h = sweep(&hs, at(0, 3, 0), cq_v3(0, 5, 0), &ground, xb);
    ck_assert(!h.hit);
    cq_hull_free(hull);
}
END_TEST

START_TEST(test_unsupported)
{
    cq_shape p = plane(cq_v3(0, 1, 0), 0), s = sphere(1);
    cq_xform x = cq_xform_identity();
    cq_sweep_hit h = {.iterations = 42};
    ck_assert_int_eq(cq_sweep(&p, &x, cq_v3(1, 0, 0), &s, &x, NULL, &h), CQ_EUNSUPPORTED);
    ck_assert_int_eq(cq_sweep(&p, &x, cq_v3(1, 0, 0), &p, &x, NULL, &h), CQ_EUNSUPPORTED);
    cq_shape nohull = convex(NULL);
    ck_assert_int_eq(cq_sweep(&s, &x, cq_v3(1, 0, 0), &nohull, &x, NULL, &h), CQ_EUNSUPPORTED);
    ck_assert_int_eq(cq_sweep(&s, &x, cq_v3(NAN, 0, 0), &s, &x, NULL, &h), CQ_ENOT_FINITE);
    ck_assert_int_eq(cq_sweep(&s, &x, cq_v3(INFINITY, 0, 0), &p, &x, NULL, &h), CQ_ENOT_FINITE);
    ck_assert_int_eq(h.iterations, 42); /* out untouched */
}
END_TEST

/* ---- the iteration cap ---- */

START_TEST(test_iteration_cap)
{
    /* An oblique approach: the centre line turns as A advances, so each
     * step only closes part of the gap. */
    cq_shape a = sphere(1), b = sphere(1);
    cq_xform xa = at(-5, 1.9, 0), xb = at(0, 0, 0);
    cq_vec3 v = cq_v3(10, 0, 0);
    double tstar = sphere_sphere_toi(xa.p, v, xb.p, 2);
    cq_sweep_hit full = sweep(&a, xa, v, &b, xb);
    ck_assert(full.hit && !full.iteration_limit);
    ck_assert_int_gt(full.iterations, 3);
    double prev = 0;
    for (int cap = 1; cap <= 3; cap++) {
        cq_sweep_options opt = {.max_iterations = cap};
        cq_sweep_hit h = sweep_opt(&a, xa, v, &b, xb, &opt);
        ck_assert(h.hit && h.iteration_limit && h.has_normal);
        ck_assert_int_eq(h.iterations, cap);
        ck_assert_double_le(h.time, tstar); /* conservative: never past contact */
        ck_assert_double_gt(h.time, prev); /* each evaluation advances */
        prev = h.time;
    }
    ck_assert_double_le(prev, full.time);
    /* A cap that a miss does not need leaves the miss alone. */
    cq_sweep_options one = {.max_iterations = 1};
    cq_sweep_hit h = sweep_opt(&a, xa, cq_neg(v), &b, xb, &one);
    ck_assert(!h.hit);
}
END_TEST

START_TEST(test_tolerance_option)
{
    /* The reported separation tracks the requested tolerance. */
    cq_shape a = box(cq_v3(1, 1, 1)), b = box(cq_v3(1, 1, 1));
    for (int e = 8; e >= 2; e--) {
        double tol = pow(10, -e);
        cq_sweep_options opt = {.tolerance = tol};
        cq_sweep_hit h = sweep_opt(&a, at(-5, 0.5, 0.2), cq_v3(10, 0, 0), &b, at(0, 0, 0), &opt);
        ck_assert(h.hit);
        double sep = 3 - 10 * h.time; /* face-to-face gap at the reported time */
        ck_assert_double_ge(sep, -SLACK);
        ck_assert_double_le(sep, tol + SLACK);
    }
}
END_TEST

Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("proxy");
    tcase_add_test(tc, test_proxy_shapes);
    tcase_add_test(tc, test_proxy_convex);
    suite_add_tcase(s, tc);

    tc = tcase_create("fixed");
    tcase_add_test(tc, test_sphere_sphere_head_on);
    tcase_add_test(tc, test_misses);
    tcase_add_test(tc, test_zero_translation_overlap);
    tcase_add_test(tc, test_grazing);
    tcase_add_test(tc, test_initially_overlapping);
    tcase_add_test(tc, test_touching_within_tolerance);
    tcase_add_test(tc, test_tunnelling);
    tcase_add_test(tc, test_plane_round_shapes);
    tcase_add_test(tc, test_unsupported);
    tcase_add_test(tc, test_iteration_cap);
    tcase_add_test(tc, test_tolerance_option);
    tcase_add_test(tc, test_counters_and_fallback_log);
    suite_add_tcase(s, tc);
    return s;
}
