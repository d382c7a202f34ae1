/* The general convex path held to the point rule on the cases an audit
 * found (docs/CORE.md, "The contact"), each against an analytic answer or
 * a distance computed from the shape's definition, and its normals'
 * noise rule: exact axes, nothing else moved, a NaN left for the guard. */
#include <math.h>
#include <stdlib.h>

#include "convex_util.h"
#include "narrow.h"
#include "testutil.h"

/* The audit's two crossing roofs: A's ridge runs along x at y = 0, B's
 * valley along z at y = -0.1, their slopes within 25 degrees of the
 * normal, so a face clips. The exact answer is depth 0.1 along y with one
 * point where ridge and valley cross, on B at [0, -0.1, 0] (in the other
 * order on A's ridge at the origin). Clipped square to the sloped face,
 * the point was [0, -0.1, -0.025] at depth 0.103, 0.009 outside A once
 * moved by it (0.009 off B in the other order). */
START_TEST(crossing_roofs_meet_at_one_point)
{
    const cq_vec3 ra[10] = {{-1, 0, 0}, {1, 0, 0}, {-1, -0.25, -1}, {1, -0.25, -1}, {-1, -0.25, 1},
                            {1, -0.25, 1}, {-1, -1, -1}, {1, -1, -1}, {-1, -1, 1}, {1, -1, 1}};
    const cq_vec3 rb[10] = {{0, -0.1, -1}, {0, -0.1, 1}, {-1, 0.15, -1}, {-1, 0.15, 1}, {1, 0.15, -1},
                            {1, 0.15, 1}, {-1, 1, -1}, {-1, 1, 1}, {1, 1, -1}, {1, 1, 1}};
    cq_hull *ha = cx_hull_of(ra, 10, 0), *hb = cx_hull_of(rb, 10, 0);
    cq_shape a = cx_convex(ha), b = cx_convex(hb);
    for (int order = 0; order < 2; order++) {
        cq_contact c = order ? cx_pair(&b, cq_xform_identity(), &a, cq_xform_identity())
                             : cx_pair(&a, cq_xform_identity(), &b, cq_xform_identity());
        ck_assert(c.overlap && c.has_normal);
        ck_assert_double_eq_tol(c.depth, 0.1, 1e-12);
        tu_assert_vec_eq_tol(c.normal, cq_v3(0, order ? -1 : 1, 0), 1e-12);
        ck_assert_int_ge(c.point_count, 1);
        for (int k = 0; k < c.point_count; k++) {
            tu_assert_vec_eq_tol(c.points[k].position, cq_v3(0, order ? 0 : -0.1, 0), 1e-12);
            ck_assert_double_eq_tol(c.points[k].depth, 0.1, 1e-12);
        }
    }
    cq_hull_free(ha), cq_hull_free(hb);
}
END_TEST

/* A flat-bottomed A under a round B: a box floor (top y = 0.5) and the
 * capsule of closed's capsule_plane case (r 0.5, half height 1, turned 80
 * degrees about z, centre 0.3 above the top), through the general path.
 * The lower end's point is its ball's lowest point; on the vertical
 * through the upper end the capsule's surface lies r / sin 80 below the
 * axis (its ball's lowest point is 0.0076 inside the capsule). Analytic,
 * both orders, every point on the capsule and, moved by its depth, on the
 * floor's top. */
START_TEST(floor_under_a_tilted_capsule_points_on_the_capsule)
{
    double r = 0.5, tilt = 80 * CQ_PI / 180, s = sin(tilt), c = cos(tilt);
    cq_shape floor = {.type = CQ_BOX, .box = {{5, 0.5, 5}}}, cap = {.type = CQ_CAPSULE, .capsule = {r, 1}};
    cq_xform xc = {cq_v3(0, 0.8, 0), tu_axis_angle(cq_v3(0, 0, 1), tilt)};
    cq_vec3 lower = cq_v3(s, 0.8 - c - r, 0), upper = cq_v3(-s, 0.8 + c - r / s, 0);
    for (int order = 0; order < 2; order++) {
        cq_contact ct = order ? cx_pair(&cap, xc, &floor, cq_xform_identity()) : cx_pair(&floor, cq_xform_identity(), &cap, xc);
        ck_assert_int_eq(ct.point_count, 2);
        tu_assert_vec_eq_tol(ct.normal, cq_v3(0, order ? -1 : 1, 0), 1e-9);
        ck_assert_double_eq_tol(ct.depth, 0.5 - lower.y, 1e-9);
        for (int k = 0; k < 2; k++) {
            cq_contact_point p = ct.points[k];
            cq_vec3 on_cap = order ? cq_mad(p.position, ct.normal, p.depth) : p.position;
            cq_vec3 on_floor = order ? p.position : cq_mad(p.position, ct.normal, p.depth);
            cq_vec3 want = p.position.x > 0 ? lower : upper;
            tu_assert_vec_eq_tol(on_cap, want, 1e-9);
            ck_assert_double_eq_tol(p.depth, 0.5 - want.y, 1e-9);
            ck_assert_double_eq_tol(on_floor.y, 0.5, 1e-9);
            ck_assert_double_eq_tol(cx_capsule_sdf(on_cap, &xc, r, 1), 0, 1e-9);
        }
    }
}
END_TEST

/* A zero-size box is the segment it collapses to: half extents [0, 0.2,
 * 0] beside a parallel capsule (r 0.3, its axis 0.25 away along x and
 * from y = -0.7 to 0.9) touch along the line y in [-0.2, 0.2]: two
 * points at its ends, depth 0.05, on the segment or 0.05 short of it on
 * the capsule. The box's face was a polygon with coincident corners, and
 * the line ran along the capsule's axis, past the box's ends (0.67 off
 * it). Both orders, aligned and turned together. */
START_TEST(segment_box_along_a_capsule_gives_its_ends)
{
    cq_shape seg = {.type = CQ_BOX, .box = {{0, 0.2, 0}}}, cap = {.type = CQ_CAPSULE, .capsule = {0.3, 0.8}};
    tu_rng rng = {5};
    for (int pose = 0; pose < 4; pose++) {
        cq_xform world = pose ? tu_pose(&rng, 10) : cq_xform_identity();
        cq_xform xc = cx_moved(&world, cq_v3(0.25, 0.1, 0), cq_mat3_identity());
        for (int order = 0; order < 2; order++) {
            cq_contact c = order ? cx_pair(&cap, xc, &seg, world) : cx_pair(&seg, world, &cap, xc);
            ck_assert(c.overlap && c.has_normal);
            ck_assert_double_eq_tol(c.depth, 0.05, 1e-9);
            tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_v3(order ? -1 : 1, 0, 0)), 1e-9);
            ck_assert_int_eq(c.point_count, 2);
            for (int k = 0; k < 2; k++) {
                cq_vec3 l = cq_xform_inv_point(&world, c.points[k].position);
                ck_assert_double_eq_tol(l.x, order ? 0 : -0.05, 1e-9);
                ck_assert_double_eq_tol(fabs(l.y), 0.2, 1e-9);
                ck_assert_double_eq_tol(l.z, 0, 1e-9);
                ck_assert_double_eq_tol(c.points[k].depth, 0.05, 1e-9);
            }
            ck_assert_double_eq_tol(cq_len(cq_sub(c.points[0].position, c.points[1].position)), 0.4, 1e-9);
        }
    }
}
END_TEST

/* The audit's zero-size box (half extents [0, 1, 0]: a segment along y)
 * crossing a capsule (r 0.3) turned onto z, both through the origin. The
 * cores cross, so their Minkowski difference is flat and EPA can orient
 * nothing (either side along x is as good); the depth is still known:
 * both radii, 0.3, which the capsule-capsule closed form on the same
 * geometry (a radius-0 capsule for the box) reports. It once said overlap
 * at depth 0. With a previous normal along x the answer is that normal's
 * overlap, 0.3 too. Both orders. */
START_TEST(segment_box_crossing_a_capsule_keeps_its_depth)
{
    cq_shape seg = {.type = CQ_BOX, .box = {{0, 1, 0}}}, cap = {.type = CQ_CAPSULE, .capsule = {0.3, 0.5}};
    cq_shape seg_cap = {.type = CQ_CAPSULE, .capsule = {0, 1}};
    cq_xform xc = {cq_v3(0, 0, 0), tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 2)};
    cq_contact oracle = cx_pair(&seg_cap, cq_xform_identity(), &cap, xc);
    ck_assert_str_eq(cq_algorithm_name(oracle.algorithm), "capsule_capsule");
    ck_assert_double_eq_tol(oracle.depth, 0.3, 1e-12);
    for (int order = 0; order < 2; order++) {
        cq_contact c = order ? cx_pair(&cap, xc, &seg, cq_xform_identity()) : cx_pair(&seg, cq_xform_identity(), &cap, xc);
        ck_assert(c.overlap);
        ck_assert_double_eq_tol(c.depth, oracle.depth, 1e-12);
        if (!c.has_normal)
            ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
        cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(order ? -1 : 1, 0, 0)};
        cq_pair_query q = {.a = order ? &cap : &seg, .xa = order ? xc : cq_xform_identity(), .b = order ? &seg : &cap,
                           .xb = order ? cq_xform_identity() : xc, .cache = &cache};
        c = cx_run(&q);
        ck_assert(c.overlap && c.has_normal);
        ck_assert_double_eq_tol(c.depth, 0.3, 1e-12);
    }
}
END_TEST

/* Where the exact normal is an axis the general path says so: a capsule
 * against the face of an axis-aligned box, apart or sunk, at the origin
 * and 1000 or 1e5 away, gives a normal with exact zeros (GJK left noise
 * up to 1e-15 near the origin and 1e-11 far away) and length 1. A normal
 * genuinely off an axis by 1e-9 (a capsule end just past a box edge) keeps
 * its component: snapping moves only what lies below the stated
 * precision. Both orders, so the mirror is exact too. */
START_TEST(axis_normals_are_exact)
{
    cq_shape box = {.type = CQ_BOX, .box = {{1, 0.5, 0.7}}};
    static const double away[] = {0, 1000, 1e5};
    int runs = 0;
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 300; i++) {
            double u = fmod(i * 0.6180339887, 1), v = fmod(i * 0.4142135, 1), t = fmod(i * 0.7320508, 1);
            cq_shape cap = {.type = CQ_CAPSULE, .capsule = {0.3 + 0.2 * u, 0.5 * v}};
            int axis = i % 3;
            double sign = (i / 3) % 2 ? 1 : -1, half[3] = {1, 0.5, 0.7};
            double c[3] = {(u - 0.5) * 0.8, (v - 0.5) * 0.4, (t - 0.5) * 0.6};
            c[axis] = sign * (half[axis] + cap.capsule.radius + (axis == 1) * cap.capsule.half_height - 0.05 + 0.1 * t);
            cq_vec3 o = cq_v3(away[w], -0.3 * away[w], 0.7 * away[w]);
            cq_xform xb = {o, cq_mat3_identity()}, xc = {cq_add(o, cq_v3(c[0], c[1], c[2])), cq_mat3_identity()};
            for (int order = 0; order < 2; order++) {
                cq_pair_query q = {.a = order ? &box : &cap, .xa = order ? xb : xc, .b = order ? &cap : &box,
                                   .xb = order ? xc : xb, .skin = 0.2};
                cq_contact ct = cx_run(&q);
                ck_assert(ct.has_normal);
                double n[3] = {ct.normal.x, ct.normal.y, ct.normal.z};
                for (int k = 0; k < 3; k++)
                    if (k != axis)
                        ck_assert_msg(n[k] == 0, "%g away, case %d: normal [%g %g %g]", away[w], i, n[0], n[1], n[2]);
                ck_assert_msg(fabs(n[axis]) == 1, "%g away, case %d order %d: normal [%.17g %.17g %.17g] depth %g dist %g", away[w], i, order, n[0], n[1], n[2], ct.depth, ct.distance);
                runs++;
            }
        }
    ck_assert_int_eq(runs, 3 * 300 * 2);
    /* A capsule end 0.2 beyond a box's top edge (x = 1, y = 0.5) in the
     * direction 1e-9 rad off the vertical. */
    cq_shape ball = {.type = CQ_CAPSULE, .capsule = {0.3, 0}};
    double phi = 1e-9;
    cq_xform xs = {cq_v3(1 + 0.2 * sin(phi), 0.5 + 0.2 * cos(phi), 0), cq_mat3_identity()};
    for (int order = 0; order < 2; order++) {
        cq_contact ct = order ? cx_pair(&box, cq_xform_identity(), &ball, xs) : cx_pair(&ball, xs, &box, cq_xform_identity());
        double sign = order ? 1 : -1;
        ck_assert_double_eq_tol(ct.normal.x, sign * sin(phi), 1e-15);
        ck_assert(ct.normal.x != 0);
        ck_assert_double_eq_tol(ct.normal.y, sign * cos(phi), 1e-15);
    }
}
END_TEST

/* The noise rule removes rounding, never a NaN: (NaN, 0, 1e-20) once came
 * back as the axis (1, 0, 0), since fmin skips a NaN and a NaN is never
 * below the threshold, which hid it from the dispatcher's guard. */
START_TEST(snap_keeps_a_non_finite_normal)
{
    cq_shape box = {.type = CQ_BOX, .box = {{1, 1, 1}}};
    cq_pair_query q = {.a = &box, .xa = cq_xform_identity(), .b = &box, .xb = cq_xform_identity()};
    static const cq_vec3 bad[] = {{NAN, 0, 1e-20}, {0, NAN, 0}, {INFINITY, 0, 0}, {1e-20, -INFINITY, NAN}};
    for (int i = 0; i < 4; i++) {
        cq_vec3 s = cq__gjk_snap_normal(&q, bad[i]);
        ck_assert_msg(!cq_v3_finite(s), "case %d: [%g %g %g]", i, s.x, s.y, s.z);
    }
    cq_vec3 noisy = cq__gjk_snap_normal(&q, cq_v3(-2.2e-16, 1, -1.1e-16)); /* the rule still holds */
    ck_assert(noisy.x == 0 && noisy.y == 1 && noisy.z == 0);
}
END_TEST

/* A rounded cube (core half 0.5, radius 0.1) turned 0.2 rad about z lies
 * 0.05 deep on a rounded slab (core top y = 0.5), apart within a skin of
 * 0.5 at its upper corners: normal +y, and the four corners of its bottom
 * face, each on its line along y. The lower two are its core's support
 * along -y: the radius below them. The upper two lie on the tilted face,
 * whose surface is its plane moved out by the radius: r / cos 0.2 below
 * them. A's surface over its top face is y = 0.6. Closed forms, so exact
 * to rounding (the ray cast's march was exact to 1e-9), and the rounded
 * cube resting square on one gets the radius below and above its corners. */
START_TEST(rounded_hull_points_in_closed_form)
{
    cq_vec3 slab[8], cube[8];
    for (int i = 0; i < 8; i++) {
        cq_vec3 s = cq_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
        slab[i] = cq_v3(3 * s.x, 0.5 * s.y, 3 * s.z), cube[i] = cq_scale(s, 0.5);
    }
    cq_hull *ha, *hb;
    ck_assert_int_eq(cq_hull_build(slab, 8, 0.1, &ha), CQ_OK);
    ck_assert_int_eq(cq_hull_build(cube, 8, 0.1, &hb), CQ_OK);
    cq_shape a = {.type = CQ_CONVEX, .convex = {ha}}, b = {.type = CQ_CONVEX, .convex = {hb}};
    for (int tilted = 0; tilted < 2; tilted++) {
        double phi = tilted ? 0.2 : 0, c = cos(phi), s = sin(phi);
        cq_xform xb = {cq_v3(0.1, 0.65 + 0.5 * (s + c), -0.2), {{{c, s, 0}, {-s, c, 0}, {0, 0, 1}}}};
        cq_pair_query q = {.a = &a, .xa = cq_xform_identity(), .b = &b, .xb = xb, .skin = 0.5};
        cq_contact ct = cx_run(&q);
        ck_assert(ct.overlap && ct.has_normal);
        ck_assert(ct.normal.x == 0 && ct.normal.y == 1 && ct.normal.z == 0);
        ck_assert_double_eq_tol(ct.depth, 0.05, 1e-12);
        ck_assert_int_eq(ct.point_count, 4);
        for (int i = 0; i < 4; i++) {
            cq_vec3 corner = cq_xform_point(&xb, cq_v3(i & 1 ? 0.5 : -0.5, -0.5, i & 2 ? 0.5 : -0.5));
            bool upper = tilted && (i & 1);
            cq_vec3 want = cq_mad(corner, cq_v3(0, 1, 0), -(upper ? 0.1 / c : 0.1));
            int hit = -1;
            for (int k = 0; k < 4 && hit < 0; k++)
                if (cq_len(cq_sub(ct.points[k].position, want)) <= 1e-12)
                    hit = k;
            ck_assert_msg(hit >= 0, "tilt %d corner %d: no point at [%.17g %.17g %.17g]", tilted, i, want.x, want.y,
                          want.z);
            ck_assert_double_eq_tol(ct.points[hit].depth, 0.6 - want.y, 1e-12);
        }
    }
    cq_hull_free(ha), cq_hull_free(hb);
}
END_TEST

Suite *convex_points_suite(void)
{
    Suite *s = suite_create("convex_points");
    TCase *tc = tcase_create("audit_cases");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, crossing_roofs_meet_at_one_point);
    tcase_add_test(tc, floor_under_a_tilted_capsule_points_on_the_capsule);
    tcase_add_test(tc, segment_box_along_a_capsule_gives_its_ends);
    tcase_add_test(tc, segment_box_crossing_a_capsule_keeps_its_depth);
    tcase_add_test(tc, axis_normals_are_exact);
    tcase_add_test(tc, snap_keeps_a_non_finite_normal);
    tcase_add_test(tc, rounded_hull_points_in_closed_form);
    suite_add_tcase(s, tc);
    return s;
}
