/* The general convex path through cq_collide: box hulls against the box SAT
 * and a corner/edge distance oracle, closed forms as oracles for rounded
 * degenerate hulls, manifolds, invariances, caps and fallbacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/fallback.h"
#include "manifold.h"
#include "narrow.h"
#include "testutil.h"

static cq_hull *hull_of(const cq_vec3 *pts, int n, double radius)
{
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(pts, n, radius, &h), CQ_OK);
    return h;
}

static cq_hull *box_hull(cq_vec3 half)
{
    cq_vec3 c[8];
    cq_obb o = {cq_v3(0, 0, 0), half, cq_mat3_identity()};
    tu_obb_corners(&o, c);
    return hull_of(c, 8, 0);
}

static cq_shape convex(const cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }

static cq_contact run(const cq_pair_query *q)
{
    cq_contact c;
    ck_assert_int_eq(cq_collide(q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    return c;
}

static cq_contact pair(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb)
{
    cq_pair_query q = {.a = a, .xa = xa, .b = b, .xb = xb};
    return run(&q);
}

START_TEST(box_hulls_agree_with_box_sat)
{
    enum { N = 10000 };
    static cq_obb a[N], b[N];
    ck_assert_int_eq(tu_read_pairs(a, b, N), N);
    cq_counters ctr = {0};
    int overlapping = 0;
    for (int i = 0; i < N; i++) {
        cq_hull *ha = box_hull(a[i].half), *hb = box_hull(b[i].half);
        cq_shape sa = convex(ha), sb = convex(hb);
        cq_pair_query q = {.a = &sa, .xa = {a[i].center, a[i].axes}, .b = &sb, .xb = {b[i].center, b[i].axes},
                           .counters = &ctr};
        cq_contact c = run(&q);
        ck_assert_str_eq(cq_algorithm_name(c.algorithm), "gjk_epa");
        bool truth = cq_obb_sat(&a[i], &b[i], false).overlap;
        double pen = tu_obb_min_penetration(&a[i], &b[i]);
        if (fabs(pen) > 1e-9) /* outside the touching band the verdicts agree */
            ck_assert_msg(c.overlap == truth, "pair %d: gjk says %d, sat %d", i, c.overlap, truth);
        if (c.overlap && pen > 1e-9) {
            overlapping++;
            ck_assert_msg(c.has_normal && c.fallback_action == CQ_FBA_NONE, "pair %d: no normal", i);
            ck_assert_double_eq_tol(c.depth, pen, 1e-6 * (1 + pen));
            double alo, ahi, blo, bhi; /* the depth is the overlap along the normal */
            tu_obb_interval(&a[i], c.normal, &alo, &ahi);
            tu_obb_interval(&b[i], c.normal, &blo, &bhi);
            ck_assert_double_eq_tol(ahi - blo, c.depth, 1e-6 * (1 + pen));
            ck_assert_int_ge(c.point_count, 1);
        }
        cq_hull_free(ha), cq_hull_free(hb);
    }
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_GJK_EPA], N);
    ck_assert_int_eq((int)sum[CQ_CTR_GJK_CALLS], N);
    uint64_t buckets = 0;
    for (int k = 0; k < CQ_GJK_BUCKETS; k++)
        buckets += sum[CQ_CTR_GJK_BUCKET + k];
    ck_assert(buckets == sum[CQ_CTR_GJK_CALLS] && sum[CQ_CTR_GJK_ITERATIONS] >= buckets);
    ck_assert_int_ge((int)sum[CQ_CTR_EPA_CALLS], overlapping);
    printf("convex: %d box-hull pairs overlap; %.2f GJK iterations per call\n", overlapping,
           (double)sum[CQ_CTR_GJK_ITERATIONS] / (double)sum[CQ_CTR_GJK_CALLS]);
}
END_TEST

/* A 1-point hull with radius r is a sphere and a 2-point hull a capsule:
 * the closed forms are the oracle for the general path. */
START_TEST(rounded_degenerate_hulls_match_closed_forms)
{
    tu_rng rng = {21};
    const cq_vec3 point[1] = {{0, 0, 0}}, seg[2] = {{0, -0.4, 0}, {0, 0.4, 0}};
    cq_hull *hp = hull_of(point, 1, 0.5), *hs = hull_of(seg, 2, 0.3);
    cq_shape hull_sphere = convex(hp), hull_capsule = convex(hs);
    cq_shape sphere = {.type = CQ_SPHERE, .sphere = {0.5}}, capsule = {.type = CQ_CAPSULE, .capsule = {0.3, 0.4}};
    cq_shape boxes = {.type = CQ_BOX, .box = {{0.6, 0.3, 0.45}}};
    for (int i = 0; i < 3000; i++) {
        cq_xform xa = tu_pose(&rng, 0), xb = tu_pose(&rng, 1.3);
        const cq_shape *h = i % 2 ? &hull_sphere : &hull_capsule, *closed = i % 2 ? &sphere : &capsule;
        const cq_shape *other = i % 3 ? &boxes : &sphere;
        cq_contact g = pair(h, xa, other, xb), c = pair(closed, xa, other, xb);
        if (fabs(c.depth) < 1e-9 && fabs(c.distance) < 1e-9)
            continue;
        ck_assert(g.overlap == c.overlap);
        ck_assert_double_eq_tol(g.depth, c.depth, 1e-6);
        ck_assert_double_eq_tol(g.distance, c.distance, 1e-6);
        if (g.has_normal && c.has_normal && (g.depth > 1e-6 || g.distance > 1e-6))
            tu_assert_vec_eq_tol(g.normal, c.normal, 1e-5);
    }
    cq_hull_free(hp), cq_hull_free(hs);
}
END_TEST

START_TEST(box_deep_inside_box_gives_minimum_translation)
{
    cq_hull *big = box_hull(cq_v3(3, 3, 3)), *small = box_hull(cq_v3(0.5, 0.5, 0.5));
    cq_shape a = convex(big), b = convex(small);
    cq_contact c = pair(&a, cq_xform_identity(), &b, (cq_xform){cq_v3(1, 0.2, -0.1), cq_mat3_identity()});
    ck_assert(c.overlap && c.has_normal);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-9);
    ck_assert_double_eq_tol(c.depth, 2.5, 1e-9);
    ck_assert_int_eq(c.point_count, 4);
    cq_hull_free(big), cq_hull_free(small);
}
END_TEST

/* Resting contacts: a hull cube on a box floor gives its four corners, a
 * capsule lying on a box its two ends, a triangle on a hull its corners. */
START_TEST(manifolds_from_face_clipping)
{
    cq_hull *cube = box_hull(cq_v3(0.5, 0.5, 0.5));
    cq_shape floor = {.type = CQ_BOX, .box = {{5, 0.5, 5}}}, c1 = convex(cube);
    cq_xform on = {cq_v3(0.3, 0.5 + 0.5 - 0.01, -0.2), tu_axis_angle(cq_v3(0, 1, 0), 0.4)};
    cq_contact c = pair(&floor, cq_xform_identity(), &c1, on);
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-9);
    ck_assert_double_eq_tol(c.depth, 0.01, 1e-9);
    ck_assert_int_eq(c.point_count, 4);
    for (int k = 0; k < 4; k++) {
        ck_assert_double_eq_tol(c.points[k].depth, 0.01, 1e-9);
        ck_assert_double_eq_tol(c.points[k].position.y, 0.49, 1e-9); /* on B: the cube's bottom */
    }
    cq_shape cap = {.type = CQ_CAPSULE, .capsule = {0.25, 1}};
    cq_xform lying = {cq_v3(0, 0.5 + 0.25 - 0.02, 0), tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 2)};
    c = pair(&cap, lying, &floor, cq_xform_identity());
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), 1e-9);
    ck_assert_double_eq_tol(c.depth, 0.02, 1e-9);
    ck_assert_int_eq(c.point_count, 2);
    ck_assert_double_eq_tol(fabs(c.points[0].position.x - c.points[1].position.x), 2, 1e-9);
    for (int k = 0; k < 2; k++)
        ck_assert_double_eq_tol(c.points[k].position.y, 0.5, 1e-9); /* on B: the floor's top */
    cq_shape tri = {.type = CQ_TRIANGLE, .triangle = {{{-0.2, 0, -0.2}, {0.3, 0, -0.1}, {0, 0, 0.3}}}};
    c = pair(&tri, (cq_xform){cq_v3(0, 0.5 + 0.03, 0), cq_mat3_identity()}, &c1, (cq_xform){cq_v3(0, 1, 0), cq_mat3_identity()});
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-9);
    ck_assert_double_eq_tol(c.depth, 0.03, 1e-9);
    ck_assert_int_eq(c.point_count, 3);
    cq_hull_free(cube);
}
END_TEST

/* A local pose (position, rotation) carried by the pose `to`. */
static cq_xform moved(const cq_xform *to, cq_vec3 p, cq_mat3 r)
{
    return (cq_xform){cq_xform_point(to, p), cq_mul_mm(&to->r, &r)};
}

/* A capsule lying along the top edge x = 1, y = 0.5 of a box (half extents
 * 1, 0.5, 1), its axis at distance D from that edge in the direction at
 * angle phi from the vertical, so past the top face (phi > 0): a line
 * contact. Analytically the normal is that direction, the depth r - D, and
 * the manifold two points at the ends of the axis (z = 0.3 +- 0.5) or of
 * the edge, each at depth r - D, on B's surface: the edge itself when B is
 * the box, the edge moved by D - r along the normal when B is the capsule.
 * Past about 25 degrees neither feature is a face; at 1e-9 rad the top
 * face's clip keeps nothing. Before line contacts the manifold was the one
 * witness point. The scene is carried by random rigid poses, both orders;
 * a capsule square to the edge touches it at one point. */
START_TEST(capsule_along_a_box_edge_gives_a_line_contact)
{
    cq_shape box = {.type = CQ_BOX, .box = {{1, 0.5, 1}}}, cap = {.type = CQ_CAPSULE, .capsule = {0.25, 0.5}};
    double r = 0.25, phis[] = {1e-9, 0.2, 0.6, 1.0}, dists[] = {0.23, 0.245, 0.25 + 0.005};
    double zc[] = {0.3, 0.9}; /* the second runs past the edge's end: points at z = 0.4 and 1 */
    tu_rng rng = {77};
    cq_mat3 along_z = tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 2); /* the capsule's local y onto z */
    int checked = 0;
    for (int pose = 0; pose < 3; pose++) {
        cq_xform world = pose ? tu_pose(&rng, 50) : cq_xform_identity();
        for (size_t i = 0; i < sizeof phis / sizeof phis[0]; i++)
            for (size_t j = 0; j < sizeof dists / sizeof dists[0]; j++)
                for (size_t c = 0; c < sizeof zc / sizeof zc[0]; c++)
                    for (int order = 0; order < 2; order++) {
                        double D = dists[j];
                        cq_vec3 nl = cq_v3(sin(phis[i]), cos(phis[i]), 0); /* box to capsule, local */
                        cq_vec3 axis = cq_add(cq_v3(1, 0.5, zc[c]), cq_scale(nl, D));
                        cq_xform xb = world, xc = moved(&world, axis, along_z);
                        cq_pair_query q = {.a = order ? &cap : &box, .xa = order ? xc : xb,
                                           .b = order ? &box : &cap, .xb = order ? xb : xc, .skin = 0.01};
                        cq_contact ct = run(&q);
                        ck_assert(ct.overlap);
                        cq_vec3 nw = cq_mul_mv(&world.r, order ? cq_neg(nl) : nl);
                        tu_assert_vec_eq_tol(ct.normal, nw, 1e-9);
                        ck_assert_double_eq_tol(ct.depth, fmax(r - D, 0), 1e-9);
                        ck_assert_int_eq(ct.point_count, 2);
                        double lo = zc[c] - 0.5, hi = fmin(zc[c] + 0.5, 1);
                        for (int k = 0; k < 2; k++) {
                            cq_vec3 p = ct.points[k].position;
                            double z = k == 0 ? hi : lo; /* on the box's edge, z runs the other way: either order */
                            cq_vec3 on_edge = cq_v3(1, 0.5, z), other = cq_v3(1, 0.5, k == 0 ? lo : hi);
                            cq_vec3 shift = order ? cq_v3(0, 0, 0) : cq_scale(nl, D - r);
                            cq_vec3 want = cq_xform_point(&world, cq_add(on_edge, shift));
                            cq_vec3 alt = cq_xform_point(&world, cq_add(other, shift));
                            ck_assert_msg(cq_len(cq_sub(p, want)) < 1e-9 || cq_len(cq_sub(p, alt)) < 1e-9,
                                          "phi %g D %g order %d: point %d off the line contact's ends", phis[i], D,
                                          order, k);
                            ck_assert_double_eq_tol(ct.points[k].depth, r - D, 1e-9);
                            /* A capsule end on the edge, or the capsule's axis on
                             * the edge's end vertex: one vertex, one edge. */
                            cq_feature f = ct.points[k].feature;
                            ck_assert((f.kind_a == CQ_FEAT_VERTEX) + (f.kind_b == CQ_FEAT_VERTEX) == 1);
                            ck_assert((f.kind_a == CQ_FEAT_EDGE) + (f.kind_b == CQ_FEAT_EDGE) == 1);
                        }
                        ck_assert(memcmp(&ct.points[0].feature, &ct.points[1].feature, sizeof(cq_feature)) != 0);
                        ck_assert(cq_len(cq_sub(ct.points[0].position, ct.points[1].position)) > 0.5);
                        checked++;
                        /* Turned square to the edge and to the normal, where
                         * neither feature is a face: it touches the edge at
                         * one point, the witness. */
                        if (phis[i] < 0.6)
                            continue;
                        cq_mat3 square = tu_axis_angle(cq_v3(0, 0, 1), -(CQ_PI / 2 + phis[i]));
                        cq_pair_query x = q;
                        *(order ? &x.xa : &x.xb) = moved(&world, axis, square);
                        ct = run(&x);
                        ck_assert(ct.overlap);
                        ck_assert_double_eq_tol(ct.depth, fmax(r - D, 0), 1e-9);
                        ck_assert_int_eq(ct.point_count, 1);
                    }
    }
    ck_assert_int_eq(checked, 3 * 4 * 3 * 2 * 2);
}
END_TEST

/* cq_line_contact itself, with the normal exactly the face's: every edge
 * of the face lies exactly as far along it, the first (index 0) on the far
 * side. The edge under the segment is the nearest of those, and the line
 * contact lies on it; by height and index alone it would lie 2 away. */
START_TEST(line_contact_picks_the_nearest_of_tied_edges)
{
    cq_face seg = {.count = 2, .v = {{1, 0.73, -0.2}, {1, 0.73, 0.8}}, .vid = {0, 1}, .normal = {0, -1, 0}};
    cq_face top = {.count = 4,
                   .v = {{-1, 0.5, 1}, {-1, 0.5, -1}, {1, 0.5, -1}, {1, 0.5, 1}},
                   .vid = {0, 1, 2, 3},
                   .eid = {10, 11, 12, 13},
                   .normal = {0, 1, 0}};
    cq_contact_point out[2];
    ck_assert_int_eq(cq_line_contact(&seg, &top, cq_v3(0, -1, 0), 0.25, 0, 0.01, out), 2);
    for (int k = 0; k < 2; k++) {
        ck_assert_double_eq_tol(out[k].position.x, 1, 1e-15);
        ck_assert_double_eq_tol(out[k].position.y, 0.5, 1e-15);
        ck_assert_double_eq_tol(out[k].depth, 0.02, 1e-15);
        ck_assert_int_eq(out[k].feature.index_b, 12);
    }
    ck_assert_double_eq_tol(fabs(out[0].position.z - out[1].position.z), 1, 1e-15);
}
END_TEST

/* Oracles for the line contacts: the signed distance of p from a posed
 * capsule (its axis along local y) and from a posed box. */
static double capsule_sdf(cq_vec3 p, const cq_xform *x, double r, double h)
{
    return tu_dist_point_segment(p, cq_xform_point(x, cq_v3(0, h, 0)), cq_xform_point(x, cq_v3(0, -h, 0))) - r;
}

static double box_sdf(cq_vec3 p, const cq_xform *x, cq_vec3 half)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    cq_vec3 q = cq_v3(fabs(l.x) - half.x, fabs(l.y) - half.y, fabs(l.z) - half.z);
    cq_vec3 o = cq_v3(fmax(q.x, 0), fmax(q.y, 0), fmax(q.z, 0));
    return cq_len(o) + fmin(fmax(q.x, fmax(q.y, q.z)), 0);
}

/* The same capsule straight above the edge (phi = 0), turned with the box
 * through 2000 small rotations, near the origin and 1000 away: the normal
 * is the top face's, so every top edge lies as high along it, the face
 * clip keeps the axis whole or nothing as rounding falls, and a line
 * contact must take the edge under the capsule, not one that rounding
 * ranks first (the far side's once gave points 1.76 outside the capsule).
 * Every point lies at an end of the axis on the edge, at depth r - D.
 * Rounding of the world coordinates, not only of the frame's, must count
 * as lying on the side: 1000 away it once cut the axis at z = -0.12.
 * Turned about the normal, the ends drift across the edge by l =
 * half_height sin(yaw). By 0.5 degrees (0.004) both stay on it: each is a
 * point of B's surface whose move by its depth along the normal lands on
 * A's surface, sqrt(r^2 - l^2) - D deep. By 5 degrees on a capsule of
 * half-height 3 (0.26 across) they leave it, and the contact is the one
 * witness point (those ends once claimed the full depth while 0.0975 apart
 * from the capsule). */
START_TEST(line_contact_takes_the_edge_under_the_segment)
{
    double r = 0.25, D = 0.23;
    cq_vec3 half = cq_v3(1, 0.5, 3);
    cq_shape box = {.type = CQ_BOX, .box = {half}}, cap = {.type = CQ_CAPSULE, .capsule = {r, 0.5}};
    cq_mat3 along_z = tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 2);
    cq_vec3 tilt = cq_scale(cq_v3(1, 2, 3), 1 / sqrt(14.0)), away[] = {{0, 0, 0}, {1000, -700, 300}};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 2000; i++) {
            cq_xform world = {away[w], tu_axis_angle(tilt, 0.1 + 0.001 * i)};
            cq_xform xc = moved(&world, cq_v3(1, 0.5 + D, 0.3), along_z);
            cq_pair_query q = {.a = &cap, .xa = xc, .b = &box, .xb = world, .skin = 0.01};
            cq_contact ct = run(&q);
            ck_assert_int_eq(ct.point_count, 2);
            for (int k = 0; k < 2; k++) {
                cq_vec3 l = cq_xform_inv_point(&world, ct.points[k].position); /* on B, the box */
                ck_assert_msg(fabs(l.x - 1) < 1e-9 && fabs(l.y - 0.5) < 1e-9 && fabs(fabs(l.z - 0.3) - 0.5) < 1e-9,
                              "%g away, rotation %d: point %d at box-local (%g %g %g)", away[w].x, i, k, l.x, l.y,
                              l.z);
                ck_assert_double_eq_tol(ct.points[k].depth, r - D, 1e-9);
            }
        }
    struct {
        double half_height, yaw_deg;
        int points;
    } turns[] = {{0.5, 0.5, 2}, {3, 5, 1}};
    cq_vec3 nl = cq_v3(sin(0.6), cos(0.6), 0);
    for (size_t t = 0; t < sizeof turns / sizeof turns[0]; t++) {
        double h = turns[t].half_height, yaw = turns[t].yaw_deg * CQ_PI / 180, l = h * sin(yaw);
        cq_shape c = {.type = CQ_CAPSULE, .capsule = {r, h}};
        cq_mat3 turned = tu_axis_angle(nl, yaw);
        cq_xform xc = {cq_add(cq_v3(1, 0.5, 0), cq_scale(nl, D)), cq_mul_mm(&turned, &along_z)};
        cq_xform xb = cq_xform_identity();
        for (int order = 0; order < 2; order++) {
            cq_pair_query q = {.a = order ? &box : &c, .xa = order ? xb : xc, .b = order ? &c : &box,
                               .xb = order ? xc : xb, .skin = 0.01};
            cq_contact ct = run(&q);
            ck_assert_double_eq_tol(ct.depth, r - D, 1e-9);
            ck_assert_int_eq(ct.point_count, turns[t].points);
            if (ct.point_count == 1)
                continue;
            for (int k = 0; k < 2; k++) {
                cq_contact_point pt = ct.points[k];
                cq_vec3 on_a = cq_mad(pt.position, ct.normal, pt.depth);
                double sdf_b = order ? capsule_sdf(pt.position, &xc, r, h) : box_sdf(pt.position, &xb, half);
                double sdf_a = order ? box_sdf(on_a, &xb, half) : capsule_sdf(on_a, &xc, r, h);
                ck_assert_double_eq_tol(sdf_b, 0, 1e-9);
                ck_assert_double_eq_tol(sdf_a, 0, 1e-9);
                ck_assert_double_eq_tol(pt.depth, sqrt(r * r - l * l) - D, 1e-8);
            }
        }
    }
}
END_TEST

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
    cq_hull *ha = hull_of(ra, 10, 0), *hb = hull_of(rb, 10, 0);
    cq_shape a = convex(ha), b = convex(hb);
    for (int order = 0; order < 2; order++) {
        cq_contact c = order ? pair(&b, cq_xform_identity(), &a, cq_xform_identity())
                             : pair(&a, cq_xform_identity(), &b, cq_xform_identity());
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
        cq_contact ct = order ? pair(&cap, xc, &floor, cq_xform_identity()) : pair(&floor, cq_xform_identity(), &cap, xc);
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
            ck_assert_double_eq_tol(capsule_sdf(on_cap, &xc, r, 1), 0, 1e-9);
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
        cq_xform xc = moved(&world, cq_v3(0.25, 0.1, 0), cq_mat3_identity());
        for (int order = 0; order < 2; order++) {
            cq_contact c = order ? pair(&cap, xc, &seg, world) : pair(&seg, world, &cap, xc);
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
    cq_contact oracle = pair(&seg_cap, cq_xform_identity(), &cap, xc);
    ck_assert_str_eq(cq_algorithm_name(oracle.algorithm), "capsule_capsule");
    ck_assert_double_eq_tol(oracle.depth, 0.3, 1e-12);
    for (int order = 0; order < 2; order++) {
        cq_contact c = order ? pair(&cap, xc, &seg, cq_xform_identity()) : pair(&seg, cq_xform_identity(), &cap, xc);
        ck_assert(c.overlap);
        ck_assert_double_eq_tol(c.depth, oracle.depth, 1e-12);
        if (!c.has_normal)
            ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
        cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(order ? -1 : 1, 0, 0)};
        cq_pair_query q = {.a = order ? &cap : &seg, .xa = order ? xc : cq_xform_identity(), .b = order ? &seg : &cap,
                           .xb = order ? cq_xform_identity() : xc, .cache = &cache};
        c = run(&q);
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
                cq_contact ct = run(&q);
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
        cq_contact ct = order ? pair(&box, cq_xform_identity(), &ball, xs) : pair(&ball, xs, &box, cq_xform_identity());
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
        cq_vec3 s = cq_gjk_snap_normal(&q, bad[i]);
        ck_assert_msg(!cq_v3_finite(s), "case %d: [%g %g %g]", i, s.x, s.y, s.z);
    }
    cq_vec3 noisy = cq_gjk_snap_normal(&q, cq_v3(-2.2e-16, 1, -1.1e-16)); /* the rule still holds */
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
        cq_contact ct = run(&q);
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

/* Two cubes with crossed edges, 0.005 apart within a skin of 0.01: no face
 * clips, so the manifold is the one witness point, on B's surface (its
 * lowest edge, or in the other order A's highest), at depth -0.005 (it
 * once carried the contact's depth, 0), from GJK or from the fallback
 * along the previous normal. */
START_TEST(apart_within_skin_point_has_minus_the_distance)
{
    cq_hull *cube = box_hull(cq_v3(0.5, 0.5, 0.5));
    cq_shape a = convex(cube), b = convex(cube);
    double edge = 0.5 * sqrt(2), gap = 0.005;
    cq_xform xa = {cq_v3(0, 0, 0), tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 4)};
    cq_xform xb = {cq_v3(0, 0, 2 * edge + gap), tu_axis_angle(cq_v3(0, 1, 0), CQ_PI / 4)};
    for (int order = 0; order < 2; order++) {
        cq_pair_query q = {.a = &a, .xa = order ? xb : xa, .b = &b, .xb = order ? xa : xb, .skin = 0.01};
        cq_contact c = run(&q);
        ck_assert(c.overlap && c.has_distance);
        ck_assert_double_eq_tol(c.distance, gap, 1e-12);
        ck_assert_int_eq(c.point_count, 1);
        ck_assert_double_eq_tol(c.points[0].depth, -gap, 1e-12);
        ck_assert_double_eq_tol(c.points[0].position.z, order ? edge : edge + gap, 1e-12);
        /* GJK capped at one iteration, answered along the previous normal:
         * the point is B's support point there (once B's centre), at the
         * same depth. */
        cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(0, 0, order ? -1 : 1)};
        q.gjk_max_iterations = 1;
        q.cache = &cache;
        c = run(&q);
        ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
        ck_assert(c.overlap);
        ck_assert_int_eq(c.point_count, 1);
        ck_assert_double_eq_tol(c.points[0].depth, -gap, 1e-12);
        ck_assert_double_eq_tol(c.points[0].position.z, order ? edge : edge + gap, 1e-12);
    }
    cq_hull_free(cube);
}
END_TEST

/* Equal cube hulls stacked face on face, the top one turned about the
 * vertical by 1e-14 to 1e-10 rad, at depths 0.05, 0.01 and 0: the
 * Minkowski difference then has points within about 1e-12 of each
 * other's lines, which once made EPA give up (a degenerate fallback, the
 * contact dropped). Each must give the stack's depth, the vertical normal
 * and four points, in both orders. */
START_TEST(nearly_aligned_stacks_keep_their_contact)
{
    cq_hull *cube = box_hull(cq_v3(0.5, 0.5, 0.5));
    cq_shape a = convex(cube), b = convex(cube);
    static const double depths[] = {0.05, 0.01, 0};
    int runs = 0;
    for (int e = -140; e <= -100; e += 2)
        for (int di = 0; di < 3; di++)
            for (int order = 0; order < 2; order++) {
                double yaw = pow(10, e / 10.0), d = depths[di];
                cq_xform below = {cq_v3(0, 0, 0), cq_mat3_identity()};
                cq_xform above = {cq_v3(0, 0, 1 - d), tu_axis_angle(cq_v3(0, 0, 1), yaw)};
                cq_pair_query q = {.a = &a, .xa = order ? above : below, .b = &b, .xb = order ? below : above, .skin = 0.01};
                cq_contact c = run(&q);
                ck_assert_msg(c.fallback_reason == CQ_FB_NONE && c.has_normal, "yaw %g depth %g: fallback %d", yaw, d,
                              c.fallback_reason);
                ck_assert_double_eq_tol(c.depth, d, 1e-12);
                ck_assert_double_eq_tol(c.normal.z, order ? -1 : 1, 1e-12);
                ck_assert_msg(c.point_count == 4, "yaw %g depth %g: %d points", yaw, d, c.point_count);
                runs++;
            }
    ck_assert_int_eq(runs, 21 * 3 * 2);
    /* Unequal boxes off centre, tilted about a skew axis (a reviewer's
     * case: a face was removed as nearly seen, and a finer convergence
     * test then met a vertex the polytope already had). */
    cq_hull *slab = box_hull(cq_v3(1.5, 1.75, 1.25));
    cq_shape s1 = convex(slab), s2 = convex(slab);
    static const double gaps[] = {2.49999, 2.499};
    for (int gi = 0; gi < 2; gi++)
        for (int e = -120; e <= -100; e += 5)
            for (int order = 0; order < 2; order++) {
                double tilt = pow(10, e / 10.0);
                cq_xform below = {cq_v3(0, 0, 0), cq_mat3_identity()}, above;
                ck_assert_int_eq(cq_pose_from_quat(cq_v3(-0.3, -0.3, gaps[gi]), (cq_quat){-tilt, tilt / 2, tilt / 2, 1}, &above).status,
                                 CQ_OK);
                cq_pair_query q = {.a = &s1, .xa = order ? above : below, .b = &s2, .xb = order ? below : above, .skin = 0.01};
                cq_contact c = run(&q);
                ck_assert_msg(c.fallback_reason == CQ_FB_NONE && c.has_normal, "tilt %g gap %g: fallback %d", tilt, gaps[gi],
                              c.fallback_reason);
                ck_assert_double_eq_tol(c.depth, 2.5 - gaps[gi], 1e-9);
                ck_assert_double_eq_tol(fabs(c.normal.z), 1, 1e-9);
                ck_assert_msg(c.point_count == 4, "tilt %g gap %g: %d points", tilt, gaps[gi], c.point_count);
            }
    cq_hull_free(slab);
    cq_hull_free(cube);
}
END_TEST

/* Five equally deep points, all on one side of the line from the first to
 * the one farthest from it (that line is an edge of their polygon): the
 * reduction must still keep four of the corners, not three, and no
 * near-duplicate as a corner. Then the same
 * through cq_collide: a thin hull on a wider one turned by 45 degrees, a
 * five-cornered overlap 0.001 deep. */
START_TEST(reduction_keeps_four_corners)
{
    const cq_vec3 corner[5] = {{0, 0, 0}, {10, 0, 0}, {9.5, 1, 0}, {5, 1.2, 0}, {0.5, 1, 0}};
    cq_contact_point pts[5], kept[CQ_MAX_POINTS];
    for (int k = 0; k < 5; k++)
        pts[k] = (cq_contact_point){corner[k], 0.01, {CQ_FEAT_FACE, CQ_FEAT_VERTEX, 0, (uint16_t)k}};
    int m = cq_reduce_manifold_to(pts, 5, cq_v3(0, 0, 1), kept);
    ck_assert_int_eq(m, 4);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(kept[i].feature.index_b, kept[j].feature.index_b);
    /* A triangle, a point inside it and a corner's near-duplicate (1e-12
     * off): the polygon is the triangle, and its three corners are kept,
     * not the duplicate as a fourth. */
    const cq_vec3 tri[5] = {{0, 0, 0}, {10, 0, 0}, {5, 5, 0}, {5, 5 + 1e-12, 0}, {5, 2, 0}};
    for (int k = 0; k < 5; k++)
        pts[k] = (cq_contact_point){tri[k], 0.01, {CQ_FEAT_FACE, CQ_FEAT_VERTEX, 0, (uint16_t)k}};
    m = cq_reduce_manifold_to(pts, 5, cq_v3(0, 0, 1), kept);
    ck_assert_int_eq(m, 3);
    for (int i = 0; i < m; i++)
        ck_assert_int_lt(kept[i].feature.index_b, 3);

    cq_hull *thin = box_hull(cq_v3(0.25, 0.7, 0.1)), *top = box_hull(cq_v3(0.25, 0.7, 0.5));
    cq_shape a = convex(thin), b = convex(top);
    cq_xform xb;
    ck_assert_int_eq(cq_pose_from_quat(cq_v3(0, -0.45, 0.599), (cq_quat){0, 0, -0.38268343236508962, 0.92387953251128674}, &xb)
                         .status,
                     CQ_OK);
    cq_contact c = pair(&a, cq_xform_identity(), &b, xb);
    ck_assert(c.overlap);
    ck_assert_double_eq_tol(c.depth, 0.001, 1e-12);
    ck_assert_msg(c.point_count == 4, "%d points", c.point_count);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(c.points[k].depth, 0.001, 1e-12);
    cq_hull_free(thin);
    cq_hull_free(top);
}
END_TEST

START_TEST(swap_and_rigid_motion_invariance)
{
    tu_rng rng = {8};
    cq_vec3 pts[40];
    for (int i = 0; i < 300; i++) {
        for (int k = 0; k < 40; k++)
            pts[k] = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -0.5, 0.5), tu_uniform(&rng, -0.7, 0.7));
        cq_hull *h = hull_of(pts, 12 + i % 28, i % 3 ? 0 : 0.1);
        cq_shape a = convex(h), b = {.type = CQ_BOX, .box = {{0.5, 0.4, 0.6}}};
        cq_xform xa = tu_pose(&rng, 0), xb = tu_pose(&rng, 1.2);
        cq_contact c = pair(&a, xa, &b, xb), s = pair(&b, xb, &a, xa);
        ck_assert(c.overlap == s.overlap);
        ck_assert_double_eq_tol(c.depth, s.depth, 1e-9);
        ck_assert_double_eq_tol(c.distance, s.distance, 1e-9);
        if (c.has_normal)
            tu_assert_vec_eq_tol(c.normal, cq_neg(s.normal), 1e-9);
        /* The same pair carried far away and turned. */
        cq_xform m = {cq_v3(1e4, -2e4, 3e4), tu_rotation(&rng)};
        cq_xform fa = {cq_xform_point(&m, xa.p), cq_mul_mm(&m.r, &xa.r)}, fb = {cq_xform_point(&m, xb.p), cq_mul_mm(&m.r, &xb.r)};
        cq_contact f = pair(&a, fa, &b, fb);
        if (fabs(c.depth) > 1e-6 || c.distance > 1e-6) {
            ck_assert(f.overlap == c.overlap);
            ck_assert_double_eq_tol(f.depth, c.depth, 1e-7);
            ck_assert_double_eq_tol(f.distance, c.distance, 1e-7);
            if (c.has_normal)
                tu_assert_vec_eq_tol(f.normal, cq_mul_mv(&m.r, c.normal), 1e-6);
        }
        cq_hull_free(h);
    }
}
END_TEST

START_TEST(degenerate_hulls_give_finite_answers)
{
    tu_rng rng = {12};
    const cq_vec3 one[1] = {{0.1, 0.2, 0.3}}, dup[4] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    const cq_vec3 line[3] = {{0, 0, 0}, {0.5, 0.5, 0}, {1, 1, 0}}, flat[4] = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}};
    const cq_vec3 tiny[4] = {{0, 0, 0}, {1e-9, 0, 0}, {0, 1e-9, 0}, {0, 0, 1e-9}};
    const cq_vec3 *sets[] = {one, dup, line, flat, tiny};
    const int counts[] = {1, 4, 3, 4, 4};
    cq_shape others[] = {{.type = CQ_BOX, .box = {{0.5, 0.5, 0.5}}}, {.type = CQ_SPHERE, .sphere = {0.4}},
                         {.type = CQ_CAPSULE, .capsule = {0.2, 0.5}},
                         {.type = CQ_TRIANGLE, .triangle = {{{-1, 0, -1}, {1, 0, -1}, {0, 0, 1}}}}};
    for (int s = 0; s < 5; s++)
        for (int r = 0; r < 2; r++) {
            cq_hull *h = hull_of(sets[s], counts[s], r * 0.05);
            cq_shape a = convex(h);
            for (int i = 0; i < 400; i++) {
                cq_xform xa = tu_pose(&rng, 0), xb = tu_pose(&rng, 1);
                cq_contact c = pair(&a, xa, &others[i % 4], xb);
                if (c.overlap && c.fallback_action == CQ_FBA_NONE)
                    ck_assert(c.has_normal);
            }
            cq_hull_free(h);
        }
}
END_TEST

/* A ball of 256 points against a box: the depth is the overlap along the
 * normal, and no box face or sampled axis separates with less. */
START_TEST(hull_of_256_points)
{
    tu_rng rng = {4};
    cq_vec3 pts[256];
    for (int k = 0; k < 256; k++) {
        cq_vec3 d = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        cq_normalize(d, 1e-6, &d);
        pts[k] = d;
    }
    cq_hull *h = hull_of(pts, 256, 0);
    cq_shape a = convex(h), b = {.type = CQ_BOX, .box = {{0.5, 0.5, 0.5}}};
    for (int i = 0; i < 200; i++) {
        cq_xform xb = tu_pose(&rng, 1.2);
        cq_contact c = pair(&a, cq_xform_identity(), &b, xb);
        if (!c.overlap || !c.has_normal || c.depth < 1e-9)
            continue;
        double amax = -INFINITY, bmin = INFINITY;
        for (int k = 0; k < h->vertex_count; k++)
            amax = fmax(amax, cq_dot(h->vertices[k], c.normal));
        cq_obb ob = {xb.p, b.box.half, xb.r};
        double blo, bhi;
        tu_obb_interval(&ob, c.normal, &blo, &bhi);
        bmin = blo;
        ck_assert_double_eq_tol(amax - bmin, c.depth, 1e-7);
        for (int k = 0; k < 3; k++) { /* the box's own faces separate no cheaper */
            double lo = INFINITY, hi = -INFINITY;
            for (int v = 0; v < h->vertex_count; v++)
                lo = fmin(lo, cq_dot(h->vertices[v], xb.r.c[k])), hi = fmax(hi, cq_dot(h->vertices[v], xb.r.c[k]));
            tu_obb_interval(&ob, xb.r.c[k], &blo, &bhi);
            ck_assert(c.depth <= fmin(hi - blo, bhi - lo) + 1e-7);
        }
    }
    cq_hull_free(h);
}
END_TEST

/* The caps hold, and a failure is counted, logged, and answered with the
 * previous normal or dropped. */
START_TEST(caps_and_fallbacks)
{
    cq_hull *big = box_hull(cq_v3(1, 1, 1));
    cq_vec3 ball[64];
    tu_rng rng = {77};
    for (int k = 0; k < 64; k++) {
        cq_vec3 d = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        cq_normalize(d, 1e-6, &d);
        ball[k] = d;
    }
    cq_hull *round = hull_of(ball, 64, 0);
    cq_shape a = convex(big), b = convex(round);
    cq_fallback_slot slots[8];
    cq_fallback_log log;
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 8, NULL), CQ_OK);
    cq_counters ctr = {0};
    cq_pair_query q = {.a = &a, .xa = cq_xform_identity(), .b = &b, .xb = {cq_v3(0.3, 0.2, 0.1), cq_mat3_identity()},
                       .counters = &ctr, .log = &log, .tag_a = 11, .tag_b = 22, .epa_max_iterations = 1};
    cq_contact c = run(&q);
    ck_assert(c.overlap && !c.has_normal && c.point_count == 0);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_EPA_ITERATION_LIMIT);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
    cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(0, 1, 0)};
    q.cache = &cache;
    c = run(&q);
    ck_assert(c.overlap && c.has_normal);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-12);
    double low = INFINITY; /* the overlap along the previous normal: A's top to B's bottom */
    for (int k = 0; k < 64; k++)
        low = fmin(low, ball[k].y);
    ck_assert_double_eq_tol(c.depth, 1 - (0.2 + low), 1e-12);
    cq_fallback_record rec[8];
    int n = cq_fallback_log_read(&log, rec, 8);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(rec[0].action, CQ_FBA_PREVIOUS_NORMAL);
    ck_assert_int_eq(rec[1].action, CQ_FBA_DROPPED);
    ck_assert(rec[0].reason == CQ_FB_EPA_ITERATION_LIMIT && rec[0].shape_a == CQ_CONVEX && rec[0].tag_b == 22);
    ck_assert_int_le(rec[0].iterations, 1);
    /* A GJK cap of 1 on a separated pair that needs more. */
    q = (cq_pair_query){.a = &a, .xa = cq_xform_identity(), .b = &b, .xb = {cq_v3(2.5, 1.7, 0.9), tu_rotation(&rng)},
                        .counters = &ctr, .log = &log, .gjk_max_iterations = 1};
    c = run(&q);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_GJK_ITERATION_LIMIT);
    ck_assert(!c.has_normal);
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_REASONS + CQ_FB_EPA_ITERATION_LIMIT], 2);
    ck_assert_int_eq((int)sum[CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_PREVIOUS_NORMAL], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 2);
    ck_assert_int_le((int)sum[CQ_CTR_GJK_ITERATIONS], 3 * 32 + 1);
    cq_hull_free(big), cq_hull_free(round);
}
END_TEST

Suite *convex_suite(void)
{
    Suite *s = suite_create("convex");
    TCase *tc = tcase_create("gjk_epa_pairs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, box_hulls_agree_with_box_sat);
    tcase_add_test(tc, rounded_degenerate_hulls_match_closed_forms);
    tcase_add_test(tc, box_deep_inside_box_gives_minimum_translation);
    tcase_add_test(tc, manifolds_from_face_clipping);
    tcase_add_test(tc, apart_within_skin_point_has_minus_the_distance);
    tcase_add_test(tc, capsule_along_a_box_edge_gives_a_line_contact);
    tcase_add_test(tc, line_contact_takes_the_edge_under_the_segment);
    tcase_add_test(tc, line_contact_picks_the_nearest_of_tied_edges);
    tcase_add_test(tc, nearly_aligned_stacks_keep_their_contact);
    tcase_add_test(tc, reduction_keeps_four_corners);
    tcase_add_test(tc, swap_and_rigid_motion_invariance);
    tcase_add_test(tc, degenerate_hulls_give_finite_answers);
    tcase_add_test(tc, hull_of_256_points);
    tcase_add_test(tc, caps_and_fallbacks);
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
