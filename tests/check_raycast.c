/* Ray casts against the closed-form shapes, and the conventions every shape
 * keeps. Oracles, none of them the code under test:
 * - analytic entry distances, points and normals for hand-placed rays;
 * - the march along the ray of raycast_oracle.c;
 * - a plane-then-barycentric intersection for triangles;
 * - the identity pose for far poses.
 * Hulls and rounded hulls are in check_raycast_hull.c. */
#include "raycast_oracle.h"

/* ---- analytic cases --------------------------------------------------------- */

START_TEST(sphere_analytic)
{
    tu_rng rng = {1};
    cq_shape s = sphere(2);
    cq_xform pose = at(1, 2, 3);
    pose.r = tu_rotation(&rng); /* a sphere does not care */
    cq_vec3 z = cq_v3(0, 0, 1);
    cq_ray_hit h = cast(&s, pose, cq_v3(1, 2, -10), z, 100);
    assert_hit(h, 11, cq_v3(0, 0, -1));
    tu_assert_vec_eq_tol(h.point, cq_v3(1, 2, 1), TOL);
    /* lateral offset 1.2: the chord's half is sqrt(4 - 1.44) = 1.6 */
    assert_hit(cast(&s, pose, cq_v3(2.2, 2, -10), z, 100), 11.4, cq_v3(0.6, 0, -0.8));
    for (int i = 0; i < 20; i++) {
        cq_vec3 u = rdir(&rng);
        assert_hit(cast(&s, pose, cq_mad(pose.p, u, 10), cq_neg(u), 100), 8, u);
    }
    /* exactly tangent (identity pose: exact arithmetic) touches; just beside it misses */
    assert_hit(cast(&s, at(1, 2, 3), cq_v3(3, 2, -10), z, 100), 13, cq_v3(1, 0, 0));
    ck_assert(!cast(&s, at(1, 2, 3), cq_v3(3 + 1e-9, 2, -10), z, 100).hit);
    /* pointing away, and too short */
    ck_assert(!cast(&s, pose, cq_v3(1, 2, -10), cq_neg(z), 100).hit);
    ck_assert(!cast(&s, pose, cq_v3(1, 2, -10), z, 10.9).hit);
    /* a small sphere far away: the stable discriminant keeps the digits */
    cq_shape small = sphere(1e-3);
    h = cast(&small, at(1e5, 0, 0), cq_v3(0, 5e-4, 0), cq_v3(1, 0, 0), 2e5);
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.distance, 1e5 - sqrt(1e-6 - 25e-8), 1e-9);
}
END_TEST

START_TEST(box_analytic)
{
    cq_shape b = box(1, 2, 3);
    cq_xform pose = at(5, -1, 2);
    pose.r = tu_axis_angle(unit(cq_v3(1, 2, 3)), 0.7);
    cq_vec3 h3[3] = {cq_v3(1, 0, 0), cq_v3(0, 1, 0), cq_v3(0, 0, 1)};
    double half[3] = {1, 2, 3};
    for (int i = 0; i < 3; i++)
        for (int s = -1; s <= 1; s += 2) {
            cq_vec3 e = cq_scale(h3[i], s);
            /* from 4 units out, aimed straight back at a point inside the face */
            cq_vec3 lateral = cq_scale(h3[(i + 1) % 3], 0.5 * half[(i + 1) % 3]);
            cq_vec3 o = cq_xform_point(&pose, cq_add(cq_scale(e, half[i] + 4), lateral));
            cq_ray_hit h = cast(&b, pose, o, cq_mul_mv(&pose.r, cq_neg(e)), 100);
            assert_hit(h, 4, cq_mul_mv(&pose.r, e));
            tu_assert_vec_eq_tol(h.point, cq_xform_point(&pose, cq_add(cq_scale(e, half[i]), lateral)), TOL);
        }
    /* oblique: local origin (-5, 0.5, 0.5), direction (1, 0.1, 0): enters x = -1 at 4 sqrt(1.01) */
    cq_vec3 d = cq_mul_mv(&pose.r, unit(cq_v3(1, 0.1, 0)));
    cq_ray_hit h = cast(&b, pose, cq_xform_point(&pose, cq_v3(-5, 0.5, 0.5)), d, 100);
    assert_hit(h, 4 * sqrt(1.01), cq_mul_mv(&pose.r, cq_v3(-1, 0, 0)));
    /* the same ray steeper, so that it passes above the box (y = 0.5 + 4 * 0.5 > 2) */
    d = cq_mul_mv(&pose.r, unit(cq_v3(1, 0.5, 0)));
    ck_assert(!cast(&b, pose, cq_xform_point(&pose, cq_v3(-5, 0.5, 0.5)), d, 100).hit);
}
END_TEST

START_TEST(box_parallel_slabs)
{
    cq_shape b = box(1, 1, 1);
    cq_xform id = cq_xform_identity();
    cq_vec3 x = cq_v3(1, 0, 0), z = cq_v3(0, 0, 1);
    assert_hit(cast(&b, id, cq_v3(-5, 0.5, 0), x, 10), 4, cq_v3(-1, 0, 0));
    assert_hit(cast(&b, id, cq_v3(-5, 1.0, 0), x, 10), 4, cq_v3(-1, 0, 0)); /* on the slab's boundary: closed */
    ck_assert(!cast(&b, id, cq_v3(-5, 1.5, 0), x, 10).hit);
    ck_assert(!cast(&b, id, cq_v3(-5, 1 + 1e-12, 0), x, 10).hit);
    ck_assert(!cast(&b, id, cq_v3(-5, -1 - 1e-12, -1 - 1e-12), x, 10).hit);
    assert_hit(cast(&b, id, cq_v3(0.5, 0.5, -5), z, 10), 4, cq_v3(0, 0, -1));
    /* negative zeros in the direction, and a ray along a face plane leaving it */
    assert_hit(cast(&b, id, cq_v3(-0.5, 0.5, -5), cq_v3(-0.0, -0.0, 1), 10), 4, cq_v3(0, 0, -1));
    ck_assert(!cast(&b, id, cq_v3(1.5, 0, -5), cq_v3(-0.0, 0, 1), 10).hit);
    ck_assert(!cast(&b, id, cq_v3(1, 1, 5), z, 10).hit);
    /* a flat box is a rectangle, hit on its face; in its plane, the slab reaches the rim */
    cq_shape flat = box(0, 1, 1);
    assert_hit(cast(&flat, id, cq_v3(-5, 0.2, 0.3), x, 10), 5, cq_v3(-1, 0, 0));
    assert_hit(cast(&flat, id, cq_v3(5, 0.2, 0.3), cq_neg(x), 10), 5, cq_v3(1, 0, 0));
    assert_hit(cast(&flat, id, cq_v3(0, -5, 0.3), cq_v3(0, 1, 0), 10), 4, cq_v3(0, -1, 0));
    ck_assert(!cast(&flat, id, cq_v3(1e-12, -5, 0.3), cq_v3(0, 1, 0), 10).hit);
}
END_TEST

START_TEST(capsule_analytic_and_axis)
{
    cq_shape c = capsule(0.5, 1);
    cq_xform id = cq_xform_identity();
    cq_vec3 down = cq_v3(0, -1, 0), up = cq_v3(0, 1, 0);
    assert_hit(cast(&c, id, cq_v3(-5, 0.3, 0), cq_v3(1, 0, 0), 10), 4.5, cq_v3(-1, 0, 0));
    /* along the axis, and parallel to it through the end spheres */
    assert_hit(cast(&c, id, cq_v3(0, 5, 0), down, 10), 3.5, up);
    assert_hit(cast(&c, id, cq_v3(0.3, 5, 0), down, 10), 3.6, cq_v3(0.6, 0.8, 0));
    assert_hit(cast(&c, id, cq_v3(0, -5, 0.2), up, 10), 4 - sqrt(0.21), unit(cq_v3(0, -sqrt(0.21), 0.2)));
    assert_hit(cast(&c, id, cq_v3(0.5, 5, 0), down, 10), 4, cq_v3(1, 0, 0)); /* tangent to the side line */
    ck_assert(!cast(&c, id, cq_v3(0.6, 5, 0), down, 10).hit);
    ck_assert(!cast(&c, id, cq_v3(0, 5, 0), up, 10).hit);
    /* enters the infinite cylinder above the end, then hits the end sphere through its centre */
    cq_vec3 d = unit(cq_v3(1, -1, 0));
    assert_hit(cast(&c, id, cq_v3(-3, 4, 0), d, 10), 3 * sqrt(2.0) - 0.5, cq_neg(d));
    /* passes the end and the side without touching */
    ck_assert(!cast(&c, id, cq_v3(-3, 2.2, 0), unit(cq_v3(1, 0.1, 0)), 10).hit);
    /* posed: axis along world z */
    cq_xform pose = at(1, 1, 1);
    pose.r = tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 2);
    assert_hit(cast(&c, pose, cq_v3(1, 1, -5), cq_v3(0, 0, 1), 10), 4.5, cq_v3(0, 0, -1));
}
END_TEST

START_TEST(plane_cases)
{
    tu_rng rng = {2};
    cq_vec3 ln = unit(cq_v3(1, 1, 0));
    cq_shape p = plane(ln, 0.5);
    for (int i = 0; i < 20; i++) {
        cq_xform pose = tu_pose(&rng, 5);
        cq_vec3 n = cq_mul_mv(&pose.r, ln);
        cq_vec3 o = cq_xform_point(&pose, cq_v3(3, 3, 1)); /* 3 sqrt 2 - 0.5 above */
        double above = 3 * sqrt(2.0) - 0.5;
        assert_hit(cast(&p, pose, o, cq_neg(n), 10), above, n);
        cq_vec3 slant = cq_mul_mv(&pose.r, unit(cq_add(cq_neg(ln), cq_v3(0, 0, 1)))); /* 45 degrees off -n */
        assert_hit(cast(&p, pose, o, slant, 10), above * sqrt(2.0), n);
        cq_vec3 along = cq_mul_mv(&pose.r, cq_v3(0, 0, 1));
        ck_assert(!cast(&p, pose, o, along, 1e6).hit);
        ck_assert(!cast(&p, pose, o, n, 1e6).hit);
        cq_vec3 in = cq_xform_point(&pose, cq_v3(-1, 0.5, 2));
        assert_inside(cast(&p, pose, in, n, 10), in, n);
    }
}
END_TEST

START_TEST(triangle_cases)
{
    cq_shape t = tri(cq_v3(0, 0, 0), cq_v3(1, 0, 0), cq_v3(0, 1, 0));
    cq_xform id = cq_xform_identity();
    cq_vec3 z = cq_v3(0, 0, 1);
    assert_hit(cast(&t, id, cq_v3(0.2, 0.2, 5), cq_neg(z), 10), 5, z);
    assert_hit(cast(&t, id, cq_v3(0.2, 0.2, -5), z, 10), 5, cq_neg(z)); /* the back faces the ray too */
    ck_assert(!cast(&t, id, cq_v3(0.2, 0.2, 5), z, 10).hit);
    ck_assert(!cast(&t, id, cq_v3(0.6, 0.6, 5), cq_neg(z), 10).hit);
    ck_assert(!cast(&t, id, cq_v3(0.2, 0.2, 5), cq_neg(z), 4.9).hit);
    assert_hit(cast(&t, id, cq_v3(0.5, 0.5, 5), cq_neg(z), 10), 5, z); /* on the hypotenuse */
    /* in its plane: edge-on, a miss even straight through */
    ck_assert(!cast(&t, id, cq_v3(-1, 0.2, 0), cq_v3(1, 0, 0), 10).hit);
    /* starting on the sheet: distance 0, normal against the ray */
    assert_hit(cast(&t, id, cq_v3(0.2, 0.2, 0), z, 10), 0, cq_neg(z));
    /* zero area: collinear and repeated vertices */
    cq_shape line = tri(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_v3(2, 2, 2));
    ck_assert(!cast(&line, id, cq_v3(1, 1, -4), z, 10).hit);
    cq_shape dot = tri(cq_v3(1, 1, 0), cq_v3(1, 1, 0), cq_v3(1, 1, 0));
    ck_assert(!cast(&dot, id, cq_v3(1, 1, -4), z, 10).hit);
}
END_TEST

/* Oracle: the plane's intersection, then its barycentric coordinates from
 * the sub-triangle areas. *grazing: within 1e-9 of an edge or of either
 * end of the ray, or within 1e-6 of edge-on. */
static bool tri_oracle(const cq_vec3 v[3], cq_vec3 o, cq_vec3 d, double max, double *t, cq_vec3 *n, bool *grazing)
{
    cq_vec3 nn = cq_cross(cq_sub(v[1], v[0]), cq_sub(v[2], v[0]));
    double n2 = cq_len2(nn), nd = cq_dot(nn, d);
    *n = unit(nn);
    *t = cq_dot(nn, cq_sub(v[0], o)) / nd;
    cq_vec3 p = cq_mad(o, d, *t);
    double m = fmin(*t, max - *t) / (1 + max);
    for (int i = 0; i < 3; i++)
        m = fmin(m, cq_dot(cq_cross(cq_sub(v[(i + 1) % 3], p), cq_sub(v[(i + 2) % 3], p)), nn) / n2);
    *grazing = !(fabs(m) >= 1e-9) || !(fabs(nd) >= 1e-6 * sqrt(n2));
    return m >= 0;
}

START_TEST(triangle_random_vs_barycentric)
{
    tu_rng rng = {3};
    int hits = 0, misses = 0, grazing = 0, count = 4000;
    for (int i = 0; i < count; i++) {
        cq_vec3 v[3] = {rvec(&rng, 1), rvec(&rng, 1), rvec(&rng, 1)};
        cq_shape t = tri(v[0], v[1], v[2]);
        cq_xform pose = tu_pose(&rng, 3);
        /* aimed at a point of the triangle's plane near it */
        double a = tu_uniform(&rng, -0.2, 1.2), b = tu_uniform(&rng, -0.2, 1.2 - a);
        cq_vec3 aim = cq_add(v[0], cq_add(cq_scale(cq_sub(v[1], v[0]), a), cq_scale(cq_sub(v[2], v[0]), b)));
        cq_vec3 lo = rvec(&rng, 4), ld = unit(cq_sub(aim, lo));
        double max = tu_uniform(&rng, 0, 10), tt;
        cq_vec3 n;
        bool graze;
        bool expect = tri_oracle(v, lo, ld, max, &tt, &n, &graze);
        cq_ray_hit h = cast(&t, pose, cq_xform_point(&pose, lo), cq_mul_mv(&pose.r, ld), max);
        if (graze) {
            grazing++;
            continue;
        }
        ck_assert_int_eq(h.hit, expect);
        if (!expect) {
            misses++;
            continue;
        }
        hits++;
        ck_assert_double_eq_tol(h.distance, tt, 1e-9);
        cq_vec3 facing = cq_dot(n, ld) < 0 ? n : cq_neg(n);
        tu_assert_vec_eq_tol(h.normal, cq_mul_mv(&pose.r, facing), 1e-9);
    }
    ck_assert_msg(hits > count / 5 && misses > count / 5 && grazing < count / 100, "%d %d %d", hits, misses, grazing);
}
END_TEST

/* ---- random rays against the march oracle -------------------------------- */

START_TEST(random_spheres)
{
    tu_rng rng = {4};
    tally all = {0, 0, 0};
    for (int k = 0; k < 40; k++) {
        double r = tu_uniform(&rng, 0.1, 2);
        solid s = {sphere(r), tu_pose(&rng, 5), NULL, 0};
        tally t = random_rays(&s, &rng, r, 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
    }
    assert_tally(all, 1000);
}
END_TEST

START_TEST(random_capsules)
{
    tu_rng rng = {5};
    tally all = {0, 0, 0};
    for (int k = 0; k < 40; k++) {
        double r = tu_uniform(&rng, 0.1, 1), hh = tu_uniform(&rng, 0, 2);
        solid s = {capsule(r, hh), tu_pose(&rng, 5), NULL, 0};
        tally t = random_rays(&s, &rng, r + hh, 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
    }
    assert_tally(all, 1000);
}
END_TEST

START_TEST(random_boxes)
{
    tu_rng rng = {6};
    tally all = {0, 0, 0};
    for (int k = 0; k < 40; k++) {
        cq_vec3 h = cq_v3(tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2));
        solid s = {box(h.x, h.y, h.z), tu_pose(&rng, 5), NULL, 0};
        tally t = random_rays(&s, &rng, cq_len(h), 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
    }
    assert_tally(all, 1000);
}
END_TEST

START_TEST(random_planes)
{
    tu_rng rng = {7};
    tally all = {0, 0, 0};
    for (int k = 0; k < 40; k++) {
        solid s = {plane(rdir(&rng), tu_uniform(&rng, -1, 1)), tu_pose(&rng, 5), NULL, 0};
        tally t = random_rays(&s, &rng, 2, 25);
        all.hits += t.hits, all.misses += t.misses, all.grazing += t.grazing;
    }
    assert_tally(all, 1000);
}
END_TEST

/* ---- conventions ------------------------------------------------------------ */

START_TEST(inside_every_solid)
{
    tu_rng rng = {10};
    cq_vec3 cloud[6] = {cq_v3(1, 0, 0), cq_v3(-1, 0, 0), cq_v3(0, 1, 0), cq_v3(0, -1, 0), cq_v3(0, 0, 1), cq_v3(0, 0, -1)};
    cq_hull *sharp = hull_of(cloud, 6, 0), *round = hull_of(cloud, 6, 0.3);
    cq_hull *seg = hull_of(cloud, 2, 0.3), *disc = hull_of(cloud, 4, 0.3);
    cq_shape shapes[] = {sphere(1), capsule(0.5, 1), box(1, 0.5, 0.2), plane(cq_v3(0, 0, 1), 0.5),
                         convex(sharp), convex(round), convex(seg), convex(disc)};
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 30; i++) {
            cq_xform pose = tu_pose(&rng, 100);
            cq_vec3 o = cq_xform_point(&pose, rvec(&rng, 0.1));
            cq_vec3 d = rdir(&rng);
            assert_inside(cast(&shapes[k], pose, o, d, tu_uniform(&rng, 0, 3)), o, d);
        }
    cq_hull_free(sharp);
    cq_hull_free(round);
    cq_hull_free(seg);
    cq_hull_free(disc);
}
END_TEST

START_TEST(surface_start)
{
    cq_vec3 cube[8];
    for (int i = 0; i < 8; i++)
        cube[i] = cq_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    cq_vec3 origin = cq_v3(0, 0, 0);
    cq_hull *sharp = hull_of(cube, 8, 0), *ball = hull_of(&origin, 1, 1);
    cq_shape shapes[] = {sphere(1), capsule(0.5, 1), box(1, 1, 1), plane(cq_v3(1, 0, 0), 1), convex(sharp), convex(ball)};
    cq_vec3 on[] = {cq_v3(1, 0, 0), cq_v3(0.5, 0.3, 0), cq_v3(1, 0.3, -0.2), cq_v3(1, 7, 3), cq_v3(1, 0.25, 0.5),
                    cq_v3(1, 0, 0)};
    cq_xform id = cq_xform_identity();
    /* exactly on the surface: the closed solid holds its boundary, both ways */
    for (int k = 0; k < 6; k++) {
        cq_vec3 in = cq_v3(-1, 0, 0), out = cq_v3(1, 0, 0), skew = unit(cq_v3(1, 2, -3));
        assert_inside(cast(&shapes[k], id, on[k], in, 5), on[k], in);
        assert_inside(cast(&shapes[k], id, on[k], out, 5), on[k], out);
        assert_inside(cast(&shapes[k], id, on[k], skew, 5), on[k], skew);
    }
    /* a hair outside: outward misses, inward enters at once through the surface */
    cq_vec3 hair = cq_v3(1 + 1e-12, 0, 0);
    cq_shape s = sphere(1);
    ck_assert(!cast(&s, id, hair, cq_v3(1, 0, 0), 5).hit);
    assert_hit(cast(&s, id, hair, cq_v3(-1, 0, 0), 5), 1e-12, cq_v3(1, 0, 0));
    cq_shape b = box(1, 1, 1);
    ck_assert(!cast(&b, id, hair, cq_v3(1, 0, 0), 5).hit);
    assert_hit(cast(&b, id, hair, cq_v3(-1, 0, 0), 5), 1e-12, cq_v3(1, 0, 0));
    cq_hull_free(sharp);
    cq_hull_free(ball);
}
END_TEST

START_TEST(max_distance_cutoff)
{
    cq_vec3 cube[8];
    for (int i = 0; i < 8; i++)
        cube[i] = cq_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    cq_vec3 origin = cq_v3(0, 0, 0);
    cq_hull *sharp = hull_of(cube, 8, 0), *ball = hull_of(&origin, 1, 1);
    /* each surface is first met at exactly 4 along +x from the origin */
    cq_shape shapes[] = {sphere(1), capsule(1, 1), box(1, 1, 1), plane(cq_v3(-1, 0, 0), 1),
                         tri(cq_v3(-1, -1, -1), cq_v3(-1, 2, 0), cq_v3(-1, 0, 2)), convex(sharp)};
    cq_xform pose = at(5, 0, 0);
    cq_vec3 x = cq_v3(1, 0, 0);
    for (int k = 0; k < 6; k++) {
        assert_hit(cast(&shapes[k], pose, origin, x, 4), 4, cq_v3(-1, 0, 0));
        ck_assert_msg(!cast(&shapes[k], pose, origin, x, nextafter(4, 0)).hit, "shape %d", k);
        ck_assert(!cast(&shapes[k], pose, origin, x, 0).hit);
    }
    /* the rounded hull converges onto 4 from below, within its tolerance */
    cq_shape round = convex(ball);
    cq_ray_hit h = cast(&round, pose, origin, x, 4);
    ck_assert(h.hit);
    ck_assert_double_eq_tol(h.distance, 4, 1e-8);
    ck_assert(!cast(&round, pose, origin, x, 4 - 1e-6).hit);
    cq_hull_free(sharp);
    cq_hull_free(ball);
}
END_TEST

/* The same local ray against the same shape, at the identity and at a far
 * rotated pose: the same distance, and points and normals moved rigidly. */
START_TEST(rigid_transform_invariance)
{
    tu_rng rng = {11};
    cq_vec3 cloud[7];
    for (int i = 0; i < 7; i++)
        cloud[i] = rvec(&rng, 1);
    cq_hull *sharp = hull_of(cloud, 7, 0), *round = hull_of(cloud, 7, 0.25);
    cq_shape shapes[] = {sphere(0.8), capsule(0.4, 0.7), box(0.5, 0.9, 0.3),
                         tri(cq_v3(-1, -0.5, 0.1), cq_v3(1, -0.4, 0), cq_v3(0.1, 1, -0.2)), plane(unit(cq_v3(1, 2, 2)), 0.1),
                         convex(sharp), convex(round)};
    int hits = 0;
    for (int k = 0; k < 7; k++)
        for (int i = 0; i < 40; i++) {
            cq_vec3 lo = cq_scale(rdir(&rng), 4);
            cq_vec3 ld = unit(cq_sub(rvec(&rng, i % 2 ? 0.3 : 2.5), lo)); /* aimed near the centre, or anywhere */
            cq_ray_hit a = cast(&shapes[k], cq_xform_identity(), lo, ld, 10);
            cq_xform far = tu_pose(&rng, 50);
            far.p = cq_add(far.p, cq_v3(1e4, -1e4, 1e4));
            cq_ray_hit b = cast(&shapes[k], far, cq_xform_point(&far, lo), cq_mul_mv(&far.r, ld), 10);
            ck_assert_int_eq(a.hit, b.hit);
            if (!a.hit)
                continue;
            hits++;
            ck_assert_double_eq_tol(b.distance, a.distance, 1e-7);
            tu_assert_vec_eq_tol(b.point, cq_xform_point(&far, a.point), 1e-7);
            tu_assert_vec_eq_tol(b.normal, cq_mul_mv(&far.r, a.normal), k == 6 ? 1e-6 : 1e-9);
        }
    ck_assert(hits > 7 * 15);
    cq_hull_free(sharp);
    cq_hull_free(round);
}
END_TEST

START_TEST(zero_size_shapes)
{
    cq_xform pose = at(2, 3, 4);
    cq_vec3 x = cq_v3(1, 0, 0);
    cq_shape pt = sphere(0), seg = capsule(0, 1);
    ck_assert(!cast(&pt, pose, cq_v3(-3, 3, 4), x, 10).hit);
    assert_inside(cast(&pt, pose, cq_v3(2, 3, 4), x, 10), cq_v3(2, 3, 4), x);
    ck_assert(!cast(&seg, pose, cq_v3(-3, 3.5, 4), x, 10).hit);
    assert_inside(cast(&seg, pose, cq_v3(2, 3.5, 4), x, 10), cq_v3(2, 3.5, 4), x);
    /* a zero box follows the slabs: a ray exactly through its point hits it */
    cq_shape zb = box(0, 0, 0);
    assert_hit(cast(&zb, pose, cq_v3(-3, 3, 4), x, 10), 5, cq_v3(-1, 0, 0));
    ck_assert(!cast(&zb, pose, cq_v3(-3, 3, 4 + 1e-12), x, 10).hit);
    cq_shape line = box(0, 1, 0);
    assert_hit(cast(&line, pose, cq_v3(-3, 3.5, 4), x, 10), 5, cq_v3(-1, 0, 0));
    ck_assert(!cast(&line, pose, cq_v3(-3, 3.5, 4.001), x, 10).hit);
}
END_TEST

START_TEST(bad_input)
{
    cq_shape s = sphere(1);
    cq_xform pose = at(5, 0, 0);
    cq_ray_hit h = {.hit = true, .distance = 7};
    cq_ray ray = {cq_v3(0, 0, 0), cq_v3(1.01, 0, 0), 10};
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENOT_UNIT);
    ck_assert(!h.hit && h.distance == 0);
    ray.direction = cq_v3(0, 0, 0);
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENOT_UNIT);
    ray.direction = cq_v3(1 + 5e-7, 0, 0); /* within the tolerance: normalised */
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_OK);
    assert_hit(h, 4, cq_v3(-1, 0, 0));
    ray.direction = cq_v3(1, 0, 0);
    ray.max_distance = -1;
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENEGATIVE);
    ray.max_distance = INFINITY;
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENOT_FINITE);
    ray.max_distance = 10;
    ray.origin.y = NAN;
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENOT_FINITE);
    ray.origin.y = 0;
    ray.direction.z = NAN;
    ck_assert_int_eq(cq_raycast(&s, &pose, &ray, &h), CQ_ENOT_FINITE);
    ray.direction.z = 0;
    cq_shape none = convex(NULL);
    ck_assert_int_eq(cq_raycast(&none, &pose, &ray, &h), CQ_ERANGE);
    cq_shape odd = {.type = CQ_SHAPE_TYPE_COUNT};
    ck_assert_int_eq(cq_raycast(&odd, &pose, &ray, &h), CQ_ERANGE);
    ck_assert(!h.hit);
}
END_TEST

Suite *raycast_suite(void)
{
    Suite *s = suite_create("raycast");
    TCase *closed = tcase_create("closed_forms");
    tcase_add_test(closed, sphere_analytic);
    tcase_add_test(closed, box_analytic);
    tcase_add_test(closed, box_parallel_slabs);
    tcase_add_test(closed, capsule_analytic_and_axis);
    tcase_add_test(closed, plane_cases);
    tcase_add_test(closed, triangle_cases);
    tcase_add_test(closed, triangle_random_vs_barycentric);
    suite_add_tcase(s, closed);
    TCase *oracle = tcase_create("march_oracle");
    tcase_set_timeout(oracle, 120);
    tcase_add_test(oracle, random_spheres);
    tcase_add_test(oracle, random_capsules);
    tcase_add_test(oracle, random_boxes);
    tcase_add_test(oracle, random_planes);
    suite_add_tcase(s, oracle);
    TCase *conv = tcase_create("conventions");
    tcase_add_test(conv, inside_every_solid);
    tcase_add_test(conv, surface_start);
    tcase_add_test(conv, max_distance_cutoff);
    tcase_add_test(conv, rigid_transform_invariance);
    tcase_add_test(conv, zero_size_shapes);
    tcase_add_test(conv, bad_input);
    suite_add_tcase(s, conv);
    return s;
}
