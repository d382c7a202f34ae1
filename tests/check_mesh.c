/* Static triangle meshes. Oracles, none of them the mesh code:
 * - hand-placed scenes with analytic depths, normals and contact points;
 * - the raw per-triangle cq_collide (the control that shows the ghost
 *   normal the internal-edge rule removes);
 * - brute force over every triangle: a plane-then-barycentric ray test
 *   written here, cq_sweep against each triangle, cq_collide against each
 *   triangle for the overlap verdict. */
#include <math.h>

#include "cq/alloc.h"
#include "cq/counters.h"
#include "cq/hull.h"
#include "cq/mesh.h"
#include "cq/world.h"
#include "testutil.h"

#define TOL 1e-9

static cq_xform pose_at(cq_vec3 p, cq_mat3 r) { return (cq_xform){p, r}; }

/* The square [-2, 2]^2 in XZ at y = 0, front side up, split along x = z. */
static cq_mesh *square_floor(void)
{
    static const cq_vec3 v[4] = {{-2, 0, -2}, {-2, 0, 2}, {2, 0, 2}, {2, 0, -2}};
    static const int t[2][3] = {{0, 1, 2}, {0, 2, 3}};
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 4, t, 2, &m), CQ_OK);
    return m;
}

/* A grid of nx by nz cells of size 1 with heights h(x, z), front side up:
 * 2 nx nz triangles. vertices and tris must hold (nx+1)(nz+1) and 2 nx nz. */
static cq_mesh *terrain(tu_rng *rng, int nx, int nz, double amp, cq_vec3 *v, int (*t)[3])
{
    for (int i = 0; i <= nx; i++)
        for (int j = 0; j <= nz; j++)
            v[i * (nz + 1) + j] = cq_v3(i - nx / 2.0, tu_uniform(rng, -amp, amp), j - nz / 2.0);
    int n = 0;
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < nz; j++) {
            int a = i * (nz + 1) + j, b = a + 1, c = a + nz + 1, d = c + 1;
            t[n][0] = a, t[n][1] = b, t[n][2] = d, n++;
            t[n][0] = a, t[n][1] = d, t[n][2] = c, n++;
        }
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, (nx + 1) * (nz + 1), (const int(*)[3])t, n, &m), CQ_OK);
    return m;
}

static cq_contact mesh_contact(const cq_shape *a, cq_xform xa, const cq_mesh *m, cq_xform xm, double skin)
{
    cq_pair_query q = {.a = a, .xa = xa, .xb = xm, .skin = skin};
    cq_contact c;
    ck_assert_int_eq(cq_mesh_collide(&q, m, &c), CQ_OK);
    tu_assert_contact_sane(c);
    return c;
}

/* ---- build --------------------------------------------------------------- */

START_TEST(build_validation)
{
    static const cq_vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}};
    static const int good[2][3] = {{0, 2, 1}, {1, 2, 3}};
    static const int bad_index[1][3] = {{0, 1, 4}};
    static const int negative[1][3] = {{0, -1, 2}};
    static const int flat[2][3] = {{0, 2, 1}, {0, 0, 3}};
    size_t before = cq_alloc_bytes();
    cq_mesh *m = (cq_mesh *)1;
    ck_assert_int_eq(cq_mesh_build(v, 4, bad_index, 1, &m), CQ_ERANGE);
    ck_assert(m == NULL);
    ck_assert_int_eq(cq_mesh_build(v, 4, negative, 1, &m), CQ_ERANGE);
    ck_assert_int_eq(cq_mesh_build(v, 0, good, 2, &m), CQ_ERANGE);
    ck_assert_int_eq(cq_mesh_build(v, 4, good, 0, &m), CQ_ERANGE);
    cq_vec3 nan_v[4] = {{0, 0, 0}, {1, 0, 0}, {0, NAN, 1}, {1, 0, 1}};
    ck_assert_int_eq(cq_mesh_build(nan_v, 4, good, 2, &m), CQ_ENOT_FINITE);
    nan_v[2].y = INFINITY;
    ck_assert_int_eq(cq_mesh_build(nan_v, 4, good, 2, &m), CQ_ENOT_FINITE);
    ck_assert(cq_alloc_bytes() == before);

    ck_assert_int_eq(cq_mesh_build(v, 4, good, 2, &m), CQ_OK);
    ck_assert_int_eq(m->triangle_count, 2);
    tu_assert_vec_eq_tol(m->normals[0], cq_v3(0, 1, 0), 1e-15);
    tu_assert_vec_eq_tol(m->normals[1], cq_v3(0, 1, 0), 1e-15);
    /* edge 1 of triangle 0 (2 -> 1) is edge 0 of triangle 1 (1 -> 2) */
    ck_assert_int_eq(m->neighbours[0][1], 1);
    ck_assert_int_eq(m->neighbours[1][0], 0);
    ck_assert_int_eq(m->edges[0][1], CQ_EDGE_COPLANAR);
    ck_assert_int_eq(m->edges[0][0], CQ_EDGE_BOUNDARY);
    ck_assert_int_eq(m->neighbours[0][0], -1);
    cq_mesh_free(m);

    /* a zero-area triangle is kept but has no normal and no neighbours */
    ck_assert_int_eq(cq_mesh_build(v, 4, flat, 2, &m), CQ_OK);
    ck_assert(cq_len2(m->normals[1]) == 0);
    ck_assert_int_eq(m->neighbours[0][0], -1);
    cq_shape ball = {.type = CQ_SPHERE, .sphere = {0.5}};
    cq_contact c = mesh_contact(&ball, pose_at(cq_v3(0.5, 0.4, 0.2), cq_mat3_identity()), m, cq_xform_identity(), 0);
    ck_assert(c.overlap);
    ck_assert_double_eq_tol(c.depth, 0.1, TOL);
    cq_mesh_free(m);
    ck_assert(cq_alloc_bytes() == before);
    cq_mesh_free(NULL);
}
END_TEST

/* A ridge and a valley: classification from both winding conventions. */
START_TEST(edge_kinds)
{
    static const cq_vec3 v[4] = {{0, 0, -1}, {0, 0, 1}, {-1, -1, 0}, {1, -1, 0}};
    static const int ridge[2][3] = {{0, 1, 3}, {0, 2, 1}};   /* roof, front side up */
    static const int valley[2][3] = {{0, 3, 1}, {0, 1, 2}};  /* the same faces wound downwards */
    static const int mixed[2][3] = {{0, 1, 3}, {0, 1, 2}};   /* inconsistent winding */
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 4, ridge, 2, &m), CQ_OK);
    ck_assert(m->normals[0].y > 0 && m->normals[1].y > 0);
    ck_assert_int_eq(m->edges[0][0], CQ_EDGE_CONVEX);
    ck_assert_int_eq(m->edges[1][2], CQ_EDGE_CONVEX);
    cq_mesh_free(m);
    ck_assert_int_eq(cq_mesh_build(v, 4, valley, 2, &m), CQ_OK);
    ck_assert(m->normals[0].y < 0 && m->normals[1].y < 0);
    ck_assert_int_eq(m->edges[0][2], CQ_EDGE_CONCAVE);
    ck_assert_int_eq(m->edges[1][0], CQ_EDGE_CONCAVE);
    cq_mesh_free(m);
    ck_assert_int_eq(cq_mesh_build(v, 4, mixed, 2, &m), CQ_OK);
    ck_assert_int_eq(m->edges[0][0], CQ_EDGE_CONVEX); /* seen from triangle 0's front (up) */
    ck_assert_int_eq(m->edges[1][0], CQ_EDGE_CONCAVE); /* triangle 1's front is down */
    cq_mesh_free(m);
}
END_TEST

/* ---- contacts ------------------------------------------------------------ */

/* A box straddling the diagonal, 0.01 into the floor, the whole scene under
 * a random rigid motion: depth 0.01, normal -up (box to floor), the four
 * bottom corners on the floor plane. */
START_TEST(box_rests_on_floor)
{
    tu_rng rng = {13};
    cq_mesh *m = square_floor();
    cq_shape box = {.type = CQ_BOX, .box = {{0.5, 0.25, 0.4}}};
    for (int rep = 0; rep < 20; rep++) {
        cq_xform world = tu_pose(&rng, 5);
        double yaw = tu_uniform(&rng, 0, 6.283185307179586);
        cq_vec3 centre = cq_v3(tu_uniform(&rng, -1, 1), 0.25 - 0.01, tu_uniform(&rng, -1, 1));
        cq_xform local = {centre, tu_axis_angle(cq_v3(0, 1, 0), yaw)};
        cq_xform xa = {cq_xform_point(&world, local.p), cq_mul_mm(&world.r, &local.r)};
        cq_contact c = mesh_contact(&box, xa, m, world, 0);
        ck_assert(c.overlap && c.has_normal);
        ck_assert_double_eq_tol(c.depth, 0.01, TOL);
        tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_v3(0, -1, 0)), TOL);
        ck_assert_int_eq(c.point_count, 4);
        for (int k = 0; k < 4; k++) {
            cq_vec3 p = cq_xform_inv_point(&world, c.points[k].position);
            ck_assert_double_eq_tol(p.y, 0, TOL);
            ck_assert_double_eq_tol(c.points[k].depth, 0.01, TOL);
            /* inside the box's footprint: the points of both triangles'
             * manifolds may include cuts along the diagonal */
            cq_vec3 in_box = cq_xform_inv_point(&local, p);
            ck_assert(fabs(in_box.x) <= 0.5 + 1e-7 && fabs(in_box.z) <= 0.4 + 1e-7);
            ck_assert_double_eq_tol(in_box.y, -0.24, TOL);
        }
    }
    cq_mesh_free(m);
}
END_TEST

/* The worst tilt of any overlapping raw per-triangle contact: 1 - |n.y|. */
static double raw_tilt(const cq_shape *a, cq_xform xa, const cq_mesh *m)
{
    double worst = 0;
    for (int k = 0; k < m->triangle_count; k++) {
        cq_shape tri = cq_mesh_triangle(m, k);
        cq_pair_query q = {.a = a, .xa = xa, .b = &tri, .xb = cq_xform_identity()};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        if (c.overlap && c.has_normal)
            worst = fmax(worst, 1 - fabs(c.normal.y));
    }
    return worst;
}

/* A box slides across the shared diagonal: where its corner just clips the
 * far triangle, that triangle alone answers with the diagonal's sideways
 * normal (the control); the mesh keeps the floor normal every frame. */
START_TEST(ghost_edge)
{
    cq_mesh *m = square_floor();
    cq_shape box = {.type = CQ_BOX, .box = {{0.3, 0.1, 0.3}}};
    int ghost_frames = 0;
    for (int f = 0; f < 100; f++) {
        cq_xform xa = {cq_v3(-1 + 0.02 * f, 0.1 - 0.02, 0.001), cq_mat3_identity()};
        cq_contact c = mesh_contact(&box, xa, m, cq_xform_identity(), 0.01);
        ck_assert(c.overlap && c.has_normal);
        tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), 1e-12);
        ck_assert_double_eq_tol(c.depth, 0.02, TOL);
        ck_assert_int_eq(c.point_count, 4);
        for (int k = 0; k < c.point_count; k++) {
            ck_assert_double_eq_tol(c.points[k].position.y, 0, TOL);
            ck_assert_double_eq_tol(c.points[k].depth, 0.02, TOL);
        }
        if (raw_tilt(&box, xa, m) > 0.1)
            ghost_frames++;
    }
    ck_assert_int_gt(ghost_frames, 0);
    cq_mesh_free(m);
}
END_TEST

/* A sphere in a V-shaped trough (faces at 45 degrees meeting along z at
 * y = 0): both faces hold it, 0.05 deep each. The merged contact has one
 * face's normal, and its point on that face: the other face's point, seen
 * along this normal (which runs along that face), is on no line along it
 * (docs/CORE.md, Meshes). */
START_TEST(sphere_in_trough)
{
    static const cq_vec3 v[6] = {{-1, 1, -2}, {-1, 1, 2}, {0, 0, -2}, {0, 0, 2}, {1, 1, -2}, {1, 1, 2}};
    static const int t[4][3] = {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}};
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 6, t, 4, &m), CQ_OK);
    for (int k = 0; k < 4; k++)
        ck_assert(m->normals[k].y > 0);
    ck_assert_int_eq(m->edges[1][1], CQ_EDGE_CONCAVE); /* the valley line 3 -> 2 */
    ck_assert_int_eq(m->edges[0][2], CQ_EDGE_COPLANAR); /* 3 -> 0, inside the left face */
    double r = 0.5, dist = 0.45, y0 = dist * sqrt(2.0);
    cq_shape ball = {.type = CQ_SPHERE, .sphere = {r}};
    cq_contact c = mesh_contact(&ball, pose_at(cq_v3(0, y0, 0.3), cq_mat3_identity()), m, cq_xform_identity(), 0);
    ck_assert(c.overlap && c.has_normal);
    ck_assert_double_eq_tol(c.depth, r - dist, TOL);
    double s = 1 / sqrt(2.0);
    bool right = fabs(c.normal.x - s) < TOL, left = fabs(c.normal.x + s) < TOL; /* the face it pushes into */
    ck_assert(left || right);
    ck_assert_double_eq_tol(c.normal.y, -s, TOL);
    ck_assert_int_eq(c.point_count, 1);
    cq_vec3 p = c.points[0].position; /* the foot of the centre on that face */
    ck_assert_double_eq_tol(p.x, (right ? 1 : -1) * dist * s, TOL);
    ck_assert_double_eq_tol(p.y, y0 - dist * s, TOL);
    ck_assert_double_eq_tol(p.z, 0.3, TOL);
    ck_assert_double_eq_tol(c.points[0].depth, r - dist, TOL);
    cq_mesh_free(m);
}
END_TEST

/* Within skin only: the nearest triangle's distance and witnesses. */
START_TEST(separated_within_skin)
{
    cq_mesh *m = square_floor();
    cq_shape ball = {.type = CQ_SPHERE, .sphere = {0.5}};
    cq_contact c = mesh_contact(&ball, pose_at(cq_v3(0.3, 0.53, -0.7), cq_mat3_identity()), m, cq_xform_identity(),
                                0.05);
    ck_assert(c.overlap && c.has_distance);
    ck_assert_double_eq_tol(c.distance, 0.03, TOL);
    ck_assert(c.depth == 0);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(0.3, 0, -0.7), TOL);
    tu_assert_vec_eq_tol(c.witness_a, cq_v3(0.3, 0.03, -0.7), TOL);
    c = mesh_contact(&ball, pose_at(cq_v3(0.3, 0.56, -0.7), cq_mat3_identity()), m, cq_xform_identity(), 0.05);
    ck_assert(!c.overlap);
    cq_mesh_free(m);
}
END_TEST

/* A rounded segment lying in the floor's plane, across the diagonal: each
 * triangle's EPA cannot orient the flat overlap of the cores and drops the
 * normal, keeping what is known (the cores meet: depth at least the
 * radius); so does the mesh. */
START_TEST(dropped_keeps_its_depth)
{
    cq_mesh *m = square_floor();
    cq_vec3 seg[2] = {{-0.5, 0, 0.3}, {0.5, 0, 0.3}};
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(seg, 2, 0.1, &h), CQ_OK);
    cq_shape rod = {.type = CQ_CONVEX, .convex = {h}};
    cq_contact c = mesh_contact(&rod, cq_xform_identity(), m, cq_xform_identity(), 0);
    ck_assert(c.overlap && !c.has_normal);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
    ck_assert_double_eq_tol(c.depth, 0.1, TOL);
    cq_hull_free(h);
    cq_mesh_free(m);
}
END_TEST

START_TEST(unsupported)
{
    cq_mesh *m = square_floor();
    cq_shape plane = {.type = CQ_PLANE, .plane = {{0, 1, 0}, 0}};
    cq_pair_query q = {.a = &plane, .xa = cq_xform_identity(), .xb = cq_xform_identity()};
    cq_contact c = {.depth = 7};
    ck_assert_int_eq(cq_mesh_collide(&q, m, &c), CQ_EUNSUPPORTED);
    ck_assert_double_eq(c.depth, 7);
    cq_sweep_hit h;
    ck_assert_int_eq(cq_mesh_sweep(&plane, &q.xa, cq_v3(0, -1, 0), m, &q.xb, NULL, &h), CQ_EUNSUPPORTED);
    cq_mesh_free(m);
}
END_TEST

/* ---- brute force over every triangle ----------------------------------------- */

/* The ray's nearest triangle hit by plane intersection then barycentric
 * coordinates; INFINITY for none. */
static double brute_ray(const cq_mesh *m, const cq_xform *x, cq_vec3 o, cq_vec3 d, double max)
{
    double best = INFINITY;
    for (int k = 0; k < m->triangle_count; k++) {
        cq_vec3 p[3];
        for (int i = 0; i < 3; i++)
            p[i] = cq_xform_point(x, m->vertices[m->triangles[k][i]]);
        cq_vec3 n = cq_cross(cq_sub(p[1], p[0]), cq_sub(p[2], p[0]));
        double den = cq_dot(n, d);
        if (fabs(den) < 1e-12 * cq_len(n))
            continue;
        double t = cq_dot(n, cq_sub(p[0], o)) / den;
        if (t < 0 || t > max)
            continue;
        cq_vec3 h = cq_mad(o, d, t);
        bool inside = true;
        for (int i = 0; i < 3; i++)
            inside = inside && cq_dot(n, cq_cross(cq_sub(p[(i + 1) % 3], p[i]), cq_sub(h, p[i]))) >= 0;
        if (inside)
            best = fmin(best, t);
    }
    return best;
}

static cq_vec3 rand_dir(tu_rng *rng)
{
    cq_vec3 u;
    do
        u = cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1));
    while (!(cq_len2(u) > 0.01 && cq_len2(u) <= 1));
    return cq_scale(u, 1 / cq_len(u));
}

static void check_rays(const cq_mesh *m, const cq_xform *x, tu_rng *rng, int n, double spread)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        cq_vec3 target = cq_xform_point(x, cq_v3(tu_uniform(rng, -spread, spread), 0, tu_uniform(rng, -spread, spread)));
        cq_vec3 d = rand_dir(rng);
        cq_vec3 o = cq_mad(target, d, -tu_uniform(rng, 0.5, 8));
        double max = tu_uniform(rng, 0, 12);
        cq_ray ray = {o, d, max};
        cq_ray_hit h;
        ck_assert_int_eq(cq_mesh_raycast(m, x, &ray, &h), CQ_OK);
        double want = brute_ray(m, x, o, d, max);
        ck_assert_int_eq(h.hit, isfinite(want));
        if (!h.hit)
            continue;
        hits++;
        ck_assert_double_eq_tol(h.distance, want, 1e-9);
        tu_assert_vec_eq_tol(h.point, cq_mad(o, d, h.distance), 1e-9);
        ck_assert(cq_dot(h.normal, d) <= 0);
    }
    ck_assert_int_gt(hits, n / 10);
    ck_assert_int_lt(hits, n);
}

START_TEST(rays_vs_brute_force)
{
    tu_rng rng = {7};
    cq_vec3 v[11 * 11];
    int t[200][3];
    cq_mesh *m = terrain(&rng, 10, 10, 0.6, v, t);
    cq_xform x = tu_pose(&rng, 3);
    check_rays(m, &x, &rng, 3000, 6);
    cq_ray bad = {cq_v3(0, 0, 0), cq_v3(0, 2, 0), 1};
    cq_ray_hit h;
    ck_assert_int_eq(cq_mesh_raycast(m, &x, &bad, &h), CQ_ENOT_UNIT);
    cq_mesh_free(m);
}
END_TEST

/* The earliest cq_sweep hit over every triangle, lower index on ties. */
static cq_sweep_hit brute_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 v, const cq_mesh *m,
                                const cq_xform *xm)
{
    cq_sweep_hit best = {.time = 1};
    for (int k = 0; k < m->triangle_count; k++) {
        cq_shape tri = cq_mesh_triangle(m, k);
        cq_sweep_hit h;
        ck_assert_int_eq(cq_sweep(a, xa, v, &tri, xm, NULL, &h), CQ_OK);
        if (h.hit && (!best.hit || h.time < best.time))
            best = h;
    }
    return best;
}

static void check_sweeps(const cq_mesh *m, const cq_xform *xm, tu_rng *rng, int n, double spread)
{
    cq_shape shapes[3] = {{.type = CQ_SPHERE, .sphere = {0.3}},
                          {.type = CQ_BOX, .box = {{0.3, 0.2, 0.25}}},
                          {.type = CQ_CAPSULE, .capsule = {0.2, 0.3}}};
    int hits = 0;
    for (int i = 0; i < n; i++) {
        const cq_shape *a = &shapes[i % 3];
        cq_vec3 local = cq_v3(tu_uniform(rng, -spread, spread), tu_uniform(rng, 1.5, 3), tu_uniform(rng, -spread, spread));
        cq_xform xa = {cq_xform_point(xm, local), tu_rotation(rng)};
        cq_vec3 dir = rand_dir(rng); /* downwards in the mesh's frame */
        dir.y = -fabs(dir.y);
        cq_vec3 v = cq_scale(cq_mul_mv(&xm->r, dir), tu_uniform(rng, 0, 5));
        cq_sweep_hit h, want = brute_sweep(a, &xa, v, m, xm);
        ck_assert_int_eq(cq_mesh_sweep(a, &xa, v, m, xm, NULL, &h), CQ_OK);
        ck_assert_int_eq(h.hit, want.hit);
        if (!h.hit)
            continue;
        hits++;
        ck_assert_double_eq_tol(h.time, want.time, 1e-12);
        tu_assert_vec_eq_tol(h.normal, want.normal, 1e-12);
    }
    ck_assert_int_gt(hits, n / 10);
    ck_assert_int_lt(hits, n);
}

START_TEST(sweeps_vs_brute_force)
{
    tu_rng rng = {8};
    cq_vec3 v[11 * 11];
    int t[200][3];
    cq_mesh *m = terrain(&rng, 10, 10, 0.6, v, t);
    cq_xform x = tu_pose(&rng, 3);
    check_sweeps(m, &x, &rng, 300, 5);
    cq_mesh_free(m);
}
END_TEST

/* A flat triangle swept from where it cuts through mesh triangle 0 and lies
 * on mesh triangle 1: both overlap at t = 0, triangle 0 (the lower index)
 * gives the hit with its EPA normal, and triangle 1's coplanar overlap,
 * which EPA cannot orient, is still reported as the sweep's fallback. */
START_TEST(sweep_reports_a_triangles_fallback)
{
    static const cq_vec3 v[6] = {{0.5, 0.5, -1}, {1, 0.5, 1}, {0.5, 1, 1}, {0.5, 0.5, 0}, {2.5, 0.5, 0}, {0.5, 2.5, 0}};
    static const int t[2][3] = {{0, 1, 2}, {3, 4, 5}};
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 6, t, 2, &m), CQ_OK);
    cq_shape a = {.type = CQ_TRIANGLE, .triangle = {{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}}};
    cq_xform xa = pose_at(cq_v3(0, 0, 0), cq_mat3_identity()), xm = xa;
    cq_counters ctr = {0};
    cq_sweep_options o = {.counters = &ctr};
    cq_sweep_hit h;
    ck_assert_int_eq(cq_mesh_sweep(&a, &xa, cq_v3(1, 0, 0), m, &xm, &o, &h), CQ_OK);
    ck_assert(h.hit && h.initially_overlapping && h.time == 0);
    ck_assert(h.has_normal && h.fell_back);
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_uint_eq(sum[CQ_CTR_ACTIONS + CQ_FBA_DROPPED], 1);
    cq_mesh_free(m);
}
END_TEST

/* 10,000 triangles: the BVH finds exactly what trying every triangle finds. */
START_TEST(terrain_10000)
{
    enum { NX = 50, NZ = 100 };
    tu_rng rng = {9};
    static cq_vec3 v[(NX + 1) * (NZ + 1)];
    static int t[2 * NX * NZ][3];
    cq_mesh *m = terrain(&rng, NX, NZ, 0.3, v, t);
    ck_assert_int_eq(m->triangle_count, 10000);
    cq_xform x = tu_pose(&rng, 10);
    check_rays(m, &x, &rng, 300, 30);
    check_sweeps(m, &x, &rng, 60, 30);
    cq_shape ball = {.type = CQ_SPHERE, .sphere = {0.4}};
    cq_shape box = {.type = CQ_BOX, .box = {{0.5, 0.3, 0.4}}};
    int overlaps = 0;
    for (int i = 0; i < 200; i++) {
        const cq_shape *a = i % 2 ? &box : &ball;
        cq_vec3 local = cq_v3(tu_uniform(&rng, -24, 24), tu_uniform(&rng, -0.5, 0.9), tu_uniform(&rng, -49, 49));
        cq_xform xa = {cq_xform_point(&x, local), tu_rotation(&rng)};
        cq_contact c = mesh_contact(a, xa, m, x, 0.02);
        bool any = false;
        for (int k = 0; k < m->triangle_count; k++) {
            cq_shape tri = cq_mesh_triangle(m, k);
            cq_pair_query q = {.a = a, .xa = xa, .b = &tri, .xb = x, .skin = 0.02};
            cq_contact r;
            ck_assert_int_eq(cq_collide(&q, &r), CQ_OK);
            any = any || r.overlap;
        }
        ck_assert_int_eq(c.overlap, any);
        overlaps += any;
    }
    ck_assert_int_gt(overlaps, 20);
    ck_assert_int_lt(overlaps, 200);
    cq_mesh_free(m);
}
END_TEST

/* ---- as a shape: dispatch, rays, sweeps, the world ------------------------------ */

START_TEST(dispatch_box_on_floor)
{
    cq_mesh *m = square_floor();
    cq_shape floor_shape = {.type = CQ_MESH, .mesh = {m}}, box = {.type = CQ_BOX, .box = {{0.5, 0.25, 0.4}}};
    ck_assert_int_eq(cq_shape_validate(&floor_shape).status, CQ_OK);
    cq_shape no_mesh = {.type = CQ_MESH};
    ck_assert_int_eq(cq_shape_validate(&no_mesh).status, CQ_ERANGE);
    ck_assert_str_eq(cq_shape_type_name(CQ_MESH), "mesh");
    cq_xform xa = {cq_v3(0.2, 0.24, -0.1), cq_mat3_identity()}, xm = cq_xform_identity();
    cq_counters ctr = {0};
    cq_pair_query q = {.a = &box, .xa = xa, .b = &floor_shape, .xb = xm, .counters = &ctr};
    cq_pair_query s = {.a = &floor_shape, .xa = xm, .b = &box, .xb = xa};
    cq_contact c, d;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    ck_assert_int_eq(cq_collide(&s, &d), CQ_OK);
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "mesh");
    ck_assert_double_eq_tol(c.depth, 0.01, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), TOL);
    ck_assert_int_eq(c.point_count, 4);
    ck_assert_double_eq_tol(d.depth, 0.01, TOL);
    tu_assert_vec_eq_tol(d.normal, cq_v3(0, 1, 0), TOL); /* floor to box: up */
    ck_assert_int_eq(d.point_count, 4);
    for (int k = 0; k < 4; k++) /* now on the box's bottom face */
        ck_assert_double_eq_tol(d.points[k].position.y, -0.01, TOL);
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_MESH], 1);
    cq_shape plane = {.type = CQ_PLANE, .plane = {{0, 1, 0}, 0}};
    cq_pair_query mm = {.a = &floor_shape, .xa = xm, .b = &floor_shape, .xb = xm};
    cq_pair_query mp = {.a = &plane, .xa = xm, .b = &floor_shape, .xb = xm};
    ck_assert_int_eq(cq_collide(&mm, &c), CQ_EUNSUPPORTED);
    ck_assert_int_eq(cq_collide(&mp, &c), CQ_EUNSUPPORTED);
    ck_assert(!cq_collide_supported(CQ_MESH, CQ_MESH) && !cq_collide_supported(CQ_PLANE, CQ_MESH));
    cq_mesh_free(m);
}
END_TEST

START_TEST(shape_rays_and_sweeps)
{
    tu_rng rng = {21};
    cq_vec3 v[11 * 11];
    int t[200][3];
    cq_mesh *m = terrain(&rng, 10, 10, 0.6, v, t);
    cq_shape ms = {.type = CQ_MESH, .mesh = {m}}, ball = {.type = CQ_SPHERE, .sphere = {0.3}};
    cq_xform x = tu_pose(&rng, 2);
    for (int i = 0; i < 200; i++) {
        cq_vec3 o = cq_xform_point(&x, cq_v3(tu_uniform(&rng, -5, 5), 2, tu_uniform(&rng, -5, 5)));
        cq_ray ray = {o, rand_dir(&rng), 10};
        cq_ray_hit a, b;
        ck_assert_int_eq(cq_raycast(&ms, &x, &ray, &a), CQ_OK);
        ck_assert_int_eq(cq_mesh_raycast(m, &x, &ray, &b), CQ_OK);
        ck_assert(a.hit == b.hit && a.distance == b.distance);
        cq_xform xa = {o, cq_mat3_identity()};
        cq_sweep_hit sa, sb;
        cq_vec3 move = cq_scale(ray.direction, 4);
        ck_assert_int_eq(cq_sweep(&ball, &xa, move, &ms, &x, NULL, &sa), CQ_OK);
        ck_assert_int_eq(cq_mesh_sweep(&ball, &xa, move, m, &x, NULL, &sb), CQ_OK);
        ck_assert(sa.hit == sb.hit && sa.time == sb.time);
        ck_assert_int_eq(cq_sweep(&ms, &x, move, &ball, &xa, NULL, &sa), CQ_EUNSUPPORTED);
    }
    cq_mesh_free(m);
}
END_TEST

/* The floor as a static world shape under a resting box: one pair. */
START_TEST(world_box_on_floor)
{
    cq_mesh *m = square_floor();
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = 0.001}, &w), CQ_OK);
    cq_world_op ops[2] = {
        {.kind = CQ_WORLD_UPSERT, .id = "floor", .shape = {.type = CQ_MESH, .mesh = {m}}, .pose = cq_xform_identity(),
         .layer = 1, .mask = 1},
        {.kind = CQ_WORLD_UPSERT, .id = "box", .shape = {.type = CQ_BOX, .box = {{0.5, 0.25, 0.4}}},
         .pose = {cq_v3(0.3, 0.24, 0.1), tu_axis_angle(cq_v3(0, 1, 0), 0.5)}, .velocity = cq_v3(1, 0, 0),
         .layer = 1, .mask = 1},
    };
    int bad = -1;
    ck_assert_int_eq(cq_world_apply(w, ops, 2, &bad), CQ_OK);
    cq_world_contact pairs[4];
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = 4};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = 1.0 / 60}, &out), CQ_OK);
    ck_assert_int_eq(out.pair_count, 1);
    const cq_contact *c = &pairs[0].contact;
    ck_assert(c->overlap && c->has_normal);
    ck_assert_double_eq_tol(c->depth, 0.01, TOL);
    ck_assert_double_eq_tol(fabs(c->normal.y), 1, TOL);
    ck_assert_int_eq(c->point_count, 4);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(c->points[k].depth, 0.01, TOL);
    cq_world_destroy(w); /* frees the mesh: the world owns it */
}
END_TEST

Suite *mesh_suite(void)
{
    Suite *s = suite_create("mesh");
    TCase *tc = tcase_create("mesh");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, build_validation);
    tcase_add_test(tc, edge_kinds);
    tcase_add_test(tc, box_rests_on_floor);
    tcase_add_test(tc, ghost_edge);
    tcase_add_test(tc, sphere_in_trough);
    tcase_add_test(tc, separated_within_skin);
    tcase_add_test(tc, dropped_keeps_its_depth);
    tcase_add_test(tc, unsupported);
    tcase_add_test(tc, rays_vs_brute_force);
    tcase_add_test(tc, sweeps_vs_brute_force);
    tcase_add_test(tc, terrain_10000);
    tcase_add_test(tc, dispatch_box_on_floor);
    tcase_add_test(tc, shape_rays_and_sweeps);
    tcase_add_test(tc, world_box_on_floor);
    tcase_add_test(tc, sweep_reports_a_triangles_fallback);
    suite_add_tcase(s, tc);
    return s;
}
