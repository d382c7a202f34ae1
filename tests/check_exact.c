/* Exact re-import: what a world exports (rotation columns, plane normals,
 * hull vertices, mesh arrays) must validate and build again into the very
 * same bits, so that every later answer is byte-identical. The oracle of a
 * fixed point is the first result itself (compared bit for bit); each test
 * also checks the first result against an independent oracle (the polar
 * factor of r (I + S) is r, long-double residuals, the hull tolerance
 * recomputed from the input), so a fixed point that is wrong still fails. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/hull.h"
#include "cq/mesh.h"
#include "cq/world.h"
#include "testutil.h"

Suite *exact_suite(void);

static bool same_bits(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }
static bool same_vec(cq_vec3 a, cq_vec3 b) { return same_bits(&a, &b, sizeof a); }
static bool same_double(double a, double b) { return same_bits(&a, &b, sizeof a); }

static cq_vec3 in_cube(tu_rng *rng, double h)
{
    return cq_v3(tu_uniform(rng, -h, h), tu_uniform(rng, -h, h), tu_uniform(rng, -h, h));
}

static cq_vec3 on_sphere(tu_rng *rng, double r)
{
    double z = tu_uniform(rng, -1, 1), phi = tu_uniform(rng, 0, 2 * CQ_PI), s = sqrt(1 - z * z);
    return cq_v3(r * s * cos(phi), r * s * sin(phi), r * z);
}

/* ---- rotations ---- */

/* max |c_i . c_j - delta_ij| in long double, in units of DBL_EPSILON. */
static double residual_ulps(const cq_mat3 *r)
{
    long double worst = 0;
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            const cq_vec3 a = r->c[i], b = r->c[j];
            long double d = (long double)a.x * b.x + (long double)a.y * b.y + (long double)a.z * b.z - (i == j);
            worst = fmaxl(worst, fabsl(d));
        }
    return (double)(worst / DBL_EPSILON);
}

static double mat_dist(const cq_mat3 *a, const cq_mat3 *b)
{
    double d = 0;
    for (int k = 0; k < 3; k++)
        d = fmax(d, cq_len(cq_sub(a->c[k], b->c[k])));
    return d;
}

/* Feeds the columns of a validated pose back: the same bits must come out. */
static void assert_axes_fixed(const cq_xform *x)
{
    cq_xform again;
    ck_assert_int_eq(cq_pose_from_axes(x->p, x->r.c, &again).status, CQ_OK);
    ck_assert_msg(same_bits(&again, x, sizeof again), "pose moved on re-validation (residual %.2f ulps)",
                  residual_ulps(&x->r));
}

START_TEST(exact_rotations_are_kept)
{
    tu_rng rng = {0xE1};
    for (int run = 0; run < 20000; run++) {
        cq_mat3 r = tu_rotation(&rng);
        cq_vec3 p = in_cube(&rng, 100);
        cq_xform x;
        ck_assert_int_eq(cq_pose_from_axes(p, r.c, &x).status, CQ_OK);
        /* tu_rotation is unit to within a few ulps: kept as given */
        ck_assert_msg(residual_ulps(&r) > 14 || same_bits(&x.r, &r, sizeof r), "exact rotation changed");
        ck_assert(same_vec(x.p, p));
        assert_axes_fixed(&x);
    }
}
END_TEST

/* r (I + S) with S symmetric and small has r as its polar factor (I + S is
 * symmetric positive definite), so the nearest rotation is known exactly. */
START_TEST(perturbed_rotations_are_corrected_once)
{
    tu_rng rng = {0xE2};
    int corrected = 0;
    for (int run = 0; run < 20000; run++) {
        cq_mat3 r = tu_rotation(&rng);
        double mag = pow(10, -tu_uniform(&rng, 4.7, 16));
        double s[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = i; j < 3; j++)
                s[i][j] = s[j][i] = tu_uniform(&rng, -mag, mag);
        cq_vec3 ax[3];
        for (int j = 0; j < 3; j++) {
            ax[j] = r.c[j];
            for (int i = 0; i < 3; i++)
                ax[j] = cq_mad(ax[j], r.c[i], s[i][j]);
        }
        cq_xform x;
        ck_assert_int_eq(cq_pose_from_axes(cq_v3(1, 2, 3), ax, &x).status, CQ_OK);
        corrected += !same_bits(x.r.c, ax, sizeof ax);
        ck_assert_msg(residual_ulps(&x.r) <= 24, "not a rotation: %.2f ulps", residual_ulps(&x.r));
        ck_assert_msg(mat_dist(&x.r, &r) <= 1e-14, "off the polar factor by %g (mag %g)",
                      mat_dist(&x.r, &r), mag);
        assert_axes_fixed(&x);
    }
    ck_assert_int_gt(corrected, 10000);
}
END_TEST

/* A quaternion pose is exported as its axes: they must import unchanged.
 * Oracle for the matrix: the sandwich product q v q* on the basis. */
START_TEST(quaternion_poses_import_as_axes_unchanged)
{
    tu_rng rng = {0xE3};
    for (int run = 0; run < 20000; run++) {
        cq_vec3 axis = on_sphere(&rng, 1);
        double angle = tu_uniform(&rng, -4, 4), len = 1 + tu_uniform(&rng, -9e-4, 9e-4);
        cq_quat q = {axis.x * sin(angle / 2) * len, axis.y * sin(angle / 2) * len, axis.z * sin(angle / 2) * len,
                     cos(angle / 2) * len};
        cq_xform x;
        ck_assert_int_eq(cq_pose_from_quat(cq_v3(0, -1, 2), q, &x).status, CQ_OK);
        for (int k = 0; k < 3; k++) {
            /* v' = v + 2w (u x v) + 2 u x (u x v) for the unit quaternion (u, w) */
            cq_vec3 e = cq_v3(k == 0, k == 1, k == 2), u = cq_scale(axis, sin(angle / 2));
            double w = cos(angle / 2);
            cq_vec3 uv = cq_cross(u, e), want = cq_add(e, cq_add(cq_scale(uv, 2 * w), cq_scale(cq_cross(u, uv), 2)));
            tu_assert_vec_eq_tol(x.r.c[k], want, 1e-14);
        }
        ck_assert_msg(residual_ulps(&x.r) <= 24, "quaternion pose not a rotation");
        assert_axes_fixed(&x);
    }
}
END_TEST

/* ---- plane normals ---- */

static cq_shape plane_of(cq_vec3 n, double d) { return (cq_shape){.type = CQ_PLANE, .plane = {n, d}}; }

START_TEST(plane_normals_are_fixed_points)
{
    tu_rng rng = {0xE4};
    for (int run = 0; run < 50000; run++) {
        cq_vec3 dir = run % 7 == 0 ? cq_v3(0, run % 2 ? 1 : -1, 0) : on_sphere(&rng, 1);
        double scale = run % 3 == 0 ? 1 : 1 + tu_uniform(&rng, -9e-5, 9e-5);
        cq_shape s = plane_of(cq_scale(dir, scale), tu_uniform(&rng, -10, 10));
        cq_vec3 in = s.plane.normal;
        ck_assert_int_eq(cq_shape_validate(&s).status, CQ_OK);
        long double len2 = (long double)s.plane.normal.x * s.plane.normal.x +
                           (long double)s.plane.normal.y * s.plane.normal.y +
                           (long double)s.plane.normal.z * s.plane.normal.z;
        ck_assert_msg(fabsl(len2 - 1) <= 16 * DBL_EPSILON, "normal not unit: %Lg", len2 - 1);
        tu_assert_vec_eq_tol(s.plane.normal, cq_scale(in, 1 / cq_len(in)), 4e-15);
        cq_shape again = s;
        ck_assert_int_eq(cq_shape_validate(&again).status, CQ_OK);
        ck_assert_msg(same_bits(&again.plane, &s.plane, sizeof s.plane), "normal moved on re-validation");
    }
}
END_TEST

/* A normal already unit to within a few ulps is kept as given. */
START_TEST(unit_normals_are_kept)
{
    tu_rng rng = {0xE5};
    for (int run = 0; run < 20000; run++) {
        cq_vec3 d = on_sphere(&rng, 1);
        long double l = sqrtl((long double)d.x * d.x + (long double)d.y * d.y + (long double)d.z * d.z);
        cq_vec3 n = cq_v3((double)(d.x / l), (double)(d.y / l), (double)(d.z / l)); /* within 2 ulps of unit */
        cq_shape s = plane_of(n, 0.5);
        ck_assert_int_eq(cq_shape_validate(&s).status, CQ_OK);
        ck_assert(same_vec(s.plane.normal, n));
    }
}
END_TEST

/* ---- hulls ---- */

static bool hull_equal(const cq_hull *a, const cq_hull *b, const char **why)
{
#define HULL_FIELD(cond, name)                                                 \
    if (!(cond)) {                                                             \
        *why = name;                                                           \
        return false;                                                          \
    }
    HULL_FIELD(a->dim == b->dim, "dim");
    HULL_FIELD(a->vertex_count == b->vertex_count, "vertex_count");
    HULL_FIELD(a->face_count == b->face_count, "face_count");
    HULL_FIELD(a->edge_count == b->edge_count, "edge_count");
    HULL_FIELD(a->face_vertex_count == b->face_vertex_count, "face_vertex_count");
    HULL_FIELD(same_double(a->radius, b->radius), "radius");
    HULL_FIELD(same_vec(a->centroid, b->centroid), "centroid");
    HULL_FIELD(same_vec(a->aabb_min, b->aabb_min) && same_vec(a->aabb_max, b->aabb_max), "aabb");
    HULL_FIELD(same_bits(a->vertices, b->vertices, sizeof *a->vertices * (size_t)a->vertex_count), "vertices");
    for (int f = 0; f < a->face_count; f++) {
        const cq_hull_face *x = &a->faces[f], *y = &b->faces[f];
        HULL_FIELD(same_vec(x->normal, y->normal) && same_double(x->offset, y->offset), "face plane");
        HULL_FIELD(x->first == y->first && x->count == y->count, "face loop");
    }
    for (int k = 0; k < a->face_vertex_count; k++)
        HULL_FIELD(a->face_vertices[k] == b->face_vertices[k], "face vertices");
    for (int e = 0; e < a->edge_count; e++) {
        const cq_hull_edge *x = &a->edges[e], *y = &b->edges[e];
        HULL_FIELD(x->v0 == y->v0 && x->v1 == y->v1 && x->f0 == y->f0 && x->f1 == y->f1, "edges");
    }
    return true;
#undef HULL_FIELD
}

/* Independent checks of the first build: the vertices are input points in
 * input order (what makes a rebuild see them in the same order), and every
 * input point lies within the tolerance behind every face. */
static void check_against_input(const cq_hull *h, const cq_vec3 *p, int n)
{
    int at = 0;
    for (int v = 0; v < h->vertex_count && at <= n; v++, at++)
        while (at < n && !same_vec(p[at], h->vertices[v]))
            at++;
    ck_assert_msg(at <= n, "the vertices are not input points in input order");
    double worst = -INFINITY; /* (Check asserts are slow: one per hull) */
    for (int f = 0; f < h->face_count; f++)
        for (int i = 0; i < n; i++)
            worst = fmax(worst, cq_dot(h->faces[f].normal, p[i]) - h->faces[f].offset);
    ck_assert_msg(!(worst > tu_hull_tol(p, n)), "a point lies %g outside a face (tol %g)", worst, tu_hull_tol(p, n));
}

enum { CLOUD_KINDS = 14 };

/* A cloud of n points of one of CLOUD_KINDS kinds, in a unit frame; the
 * caller scales, rotates and moves it. Returns n (some kinds fix it). */
static int unit_cloud(tu_rng *rng, int kind, cq_vec3 *q, int n)
{
    double jitter = pow(10, -tu_uniform(rng, 4.5, 9));
    for (int i = 0; i < n; i++) {
        cq_vec3 c = in_cube(rng, 1);
        switch (kind) {
        case 0: /* uniform in a cube */
            q[i] = c;
            break;
        case 1: /* on a sphere: every point extreme */
            q[i] = on_sphere(rng, 1);
            break;
        case 2: /* in a ball */
            q[i] = on_sphere(rng, cbrt(tu_uniform(rng, 0, 1)));
            break;
        case 3: /* a coarse lattice: coplanar, collinear and repeated points */
            q[i] = cq_v3(round(3 * c.x) / 3, round(3 * c.y) / 3, round(3 * c.z) / 3);
            break;
        case 4: /* clusters about a box's corners */
            q[i] = cq_add(cq_v3(i & 1 ? 1 : -1, i & 2 ? 0.5 : -0.5, i & 4 ? 2 : -2), in_cube(rng, jitter));
            break;
        case 5: /* coplanar */
            q[i] = cq_v3(c.x, c.y, 0);
            break;
        case 6: /* nearly coplanar */
            q[i] = cq_v3(c.x, c.y, tu_uniform(rng, -jitter, jitter));
            break;
        case 7: /* collinear */
            q[i] = cq_v3(c.x, 0, 0);
            break;
        case 8: /* nearly collinear */
            q[i] = cq_add(cq_v3(c.x, 0, 0), in_cube(rng, jitter));
            break;
        case 9: /* a few points, each many times */
            q[i] = i < 5 ? c : q[(int)tu_uniform(rng, 0, 5)];
            break;
        case 10: /* one point, maybe repeated */
            q[i] = i ? q[0] : c;
            break;
        case 11: { /* points on a box's faces, a little off them */
            double side = (i / 3) % 2 ? 1 + tu_uniform(rng, -jitter, jitter) : -1;
            q[i] = i % 3 == 0 ? cq_v3(side, c.y, c.z) : i % 3 == 1 ? cq_v3(c.x, side, c.z) : cq_v3(c.x, c.y, side);
            break;
        }
        case 12: /* on a sphere, a little off it */
            q[i] = cq_add(on_sphere(rng, 1), in_cube(rng, jitter));
            break;
        default: /* a cube's corners plus points inside and near its faces */
            q[i] = i < 8 ? cq_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1) : cq_scale(c, 1 + jitter);
            break;
        }
    }
    return n;
}

/* Builds, rebuilds from the vertices and radius (as an import does), and
 * rebuilds again; the builds must agree field by field. */
static void check_rebuild(const cq_vec3 *p, int n, double radius, int kind)
{
    cq_hull *h = NULL, *again = NULL, *third = NULL;
    ck_assert_int_eq(cq_hull_build(p, n, radius, &h), CQ_OK);
    check_against_input(h, p, n);
    ck_assert_int_eq(cq_hull_build(h->vertices, h->vertex_count, h->radius, &again), CQ_OK);
    const char *why = "";
    ck_assert_msg(hull_equal(h, again, &why), "kind %d, %d points, dim %d: rebuild differs in %s", kind, n, h->dim,
                  why);
    ck_assert_int_eq(cq_hull_build(again->vertices, again->vertex_count, again->radius, &third), CQ_OK);
    ck_assert_msg(hull_equal(h, third, &why), "second rebuild differs in %s", why);
    cq_hull_free(h);
    cq_hull_free(again);
    cq_hull_free(third);
}

START_TEST(hull_rebuild_is_exact)
{
    tu_rng rng = {0xE6};
    cq_vec3 q[CQ_HULL_MAX_POINTS], p[CQ_HULL_MAX_POINTS];
    for (int run = 0; run < 4200; run++) {
        int kind = run % CLOUD_KINDS;
        int n = kind == 10 && run % 3 == 0 ? 1 : 1 + (int)tu_uniform(&rng, 0, CQ_HULL_MAX_POINTS);
        n = unit_cloud(&rng, kind, q, n);
        cq_mat3 r = tu_rotation(&rng);
        double size = pow(10, tu_uniform(&rng, -3, 3));
        cq_vec3 at = run % 4 == 0 ? in_cube(&rng, 1e4 * size) : in_cube(&rng, size);
        for (int i = 0; i < n; i++)
            p[i] = cq_add(at, cq_scale(cq_mul_mv(&r, q[i]), size));
        check_rebuild(p, n, run % 2 ? 0.0 : tu_uniform(&rng, 0, size), kind);
    }
}
END_TEST

/* Axis-aligned, unrotated clouds: exact coordinates, exact ties, exactly
 * coplanar faces (the cases rounding cannot break up). */
START_TEST(hull_rebuild_of_exact_grids)
{
    tu_rng rng = {0xE7};
    cq_vec3 p[CQ_HULL_MAX_POINTS];
    for (int run = 0; run < 600; run++) {
        int n = 1 + (int)tu_uniform(&rng, 0, CQ_HULL_MAX_POINTS);
        int side = 1 + run % 4, flat = run % 5; /* flat 1, 2: a plane or a line of the grid */
        for (int i = 0; i < n; i++) {
            p[i] = cq_v3(floor(tu_uniform(&rng, 0, side + 1)), floor(tu_uniform(&rng, 0, side + 1)),
                         floor(tu_uniform(&rng, 0, side + 1)));
            if (flat >= 1)
                p[i].z = 0;
            if (flat == 2)
                p[i].y = 0;
        }
        check_rebuild(p, n, run % 3 ? 0.0 : 0.25, 100 + flat);
    }
}
END_TEST

/* ---- a world exported and imported ---- */

#define BODIES 140
#define RAYS 4000
#define MAX_PAIRS 4096

/* A bumpy grid of quads: shared edges, convex and concave ones. */
static cq_mesh *random_mesh(tu_rng *rng, double size)
{
    enum { N = 4 };
    cq_vec3 v[(N + 1) * (N + 1)];
    int t[2 * N * N][3], nt = 0;
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= N; j++)
            v[i * (N + 1) + j] = cq_v3((i - N / 2.0) * size, tu_uniform(rng, -0.3, 0.3) * size, (j - N / 2.0) * size);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int a = i * (N + 1) + j, b = a + 1, c = a + N + 1, d = c + 1;
            memcpy(t[nt++], (int[3]){a, b, d}, sizeof t[0]);
            memcpy(t[nt++], (int[3]){a, d, c}, sizeof t[0]);
        }
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, (N + 1) * (N + 1), (const int(*)[3])t, nt, &m), CQ_OK);
    return m;
}

static cq_hull *random_hull(tu_rng *rng, double size)
{
    cq_vec3 q[CQ_HULL_MAX_POINTS];
    int kind = (int)tu_uniform(rng, 0, CLOUD_KINDS), n = unit_cloud(rng, kind, q, 4 + (int)tu_uniform(rng, 0, 60));
    for (int i = 0; i < n; i++)
        q[i] = cq_scale(q[i], size);
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(q, n, tu_uniform(rng, 0, 1) < 0.5 ? 0.0 : tu_uniform(rng, 0, 0.3) * size, &h),
                     CQ_OK);
    return h;
}

/* A shape of type t as the wire layer hands it over: validated. */
static cq_shape random_shape(tu_rng *rng, cq_shape_type t)
{
    double size = tu_uniform(rng, 0.3, 1.5);
    cq_shape s = {.type = t};
    switch (t) {
    case CQ_SPHERE:
        s.sphere.radius = size;
        break;
    case CQ_CAPSULE:
        s.capsule.radius = 0.5 * size;
        s.capsule.half_height = tu_uniform(rng, 0, 1) * size;
        break;
    case CQ_BOX:
        s.box.half = cq_v3(tu_uniform(rng, 0.2, 1) * size, tu_uniform(rng, 0.2, 1) * size, tu_uniform(rng, 0, 1) * size);
        break;
    case CQ_TRIANGLE:
        for (int k = 0; k < 3; k++)
            s.triangle.v[k] = in_cube(rng, size);
        break;
    case CQ_CONVEX:
        s.convex.hull = random_hull(rng, size);
        break;
    case CQ_MESH:
        s.mesh.mesh = random_mesh(rng, size);
        break;
    default: /* a plane whose normal is unit only within the wire tolerance */
        s.plane.normal = cq_scale(cq_add(cq_v3(0, 1, 0), in_cube(rng, 0.4)), 1);
        s.plane.normal = cq_scale(s.plane.normal, (1 + tu_uniform(rng, -5e-5, 5e-5)) / cq_len(s.plane.normal));
        s.plane.offset = tu_uniform(rng, -9, -6);
        break;
    }
    ck_assert_int_eq(cq_shape_validate(&s).status, CQ_OK);
    return s;
}

/* A pose as the wire layer hands it over: from a quaternion off unit, or
 * from axes off orthonormal, both within the wire tolerances. */
static cq_xform random_pose(tu_rng *rng, int i)
{
    cq_vec3 p = in_cube(rng, 6);
    cq_xform x;
    if (i % 2) {
        cq_vec3 axis = on_sphere(rng, 1);
        double a = tu_uniform(rng, -4, 4), l = 1 + tu_uniform(rng, -9e-4, 9e-4), s = sin(a / 2) * l;
        ck_assert_int_eq(cq_pose_from_quat(p, (cq_quat){axis.x * s, axis.y * s, axis.z * s, cos(a / 2) * l}, &x).status,
                         CQ_OK);
    } else {
        cq_mat3 r = tu_rotation(rng);
        cq_vec3 ax[3];
        for (int k = 0; k < 3; k++)
            ax[k] = cq_add(r.c[k], in_cube(rng, 1e-5));
        ck_assert_int_eq(cq_pose_from_axes(p, ax, &x).status, CQ_OK);
    }
    return x;
}

static cq_shape_type body_type(int i)
{
    static const cq_shape_type types[] = {CQ_SPHERE, CQ_CAPSULE, CQ_BOX, CQ_TRIANGLE, CQ_CONVEX, CQ_CONVEX};
    if (i % 40 == 7)
        return CQ_PLANE;
    if (i % 15 == 3)
        return CQ_MESH;
    return types[i % 6];
}

static cq_world *new_world(void)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = 0.05}, &w), CQ_OK);
    return w;
}

static void apply(cq_world *w, const cq_world_op *ops, int n)
{
    int bad = -2;
    ck_assert_int_eq(cq_world_apply(w, ops, n, &bad), CQ_OK);
}

/* What an import rebuilds from an exported body: the hull from its
 * vertices and radius, the mesh from its arrays, the pose from its
 * columns, the shape validated again. */
static cq_world_op import_op(const char *id, const cq_world_body *b)
{
    cq_shape s = b->shape;
    if (s.type == CQ_CONVEX) {
        const cq_hull *h = s.convex.hull;
        cq_hull *copy = NULL;
        ck_assert_int_eq(cq_hull_build(h->vertices, h->vertex_count, h->radius, &copy), CQ_OK);
        s.convex.hull = copy;
    } else if (s.type == CQ_MESH) {
        const cq_mesh *m = s.mesh.mesh;
        cq_mesh *copy = NULL;
        ck_assert_int_eq(cq_mesh_build(m->vertices, m->vertex_count, m->triangles, m->triangle_count, &copy), CQ_OK);
        s.mesh.mesh = copy;
    }
    ck_assert_int_eq(cq_shape_validate(&s).status, CQ_OK);
    cq_xform pose;
    ck_assert_int_eq(cq_pose_from_axes(b->pose.p, b->pose.r.c, &pose).status, CQ_OK);
    return (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = id, .shape = s, .pose = pose, .velocity = b->velocity,
                         .layer = b->layer, .mask = b->mask};
}

static void assert_mesh_equal(const cq_mesh *a, const cq_mesh *b)
{
    ck_assert_int_eq(a->vertex_count, b->vertex_count);
    ck_assert_int_eq(a->triangle_count, b->triangle_count);
    ck_assert(same_bits(a->vertices, b->vertices, sizeof *a->vertices * (size_t)a->vertex_count));
    ck_assert(same_bits(a->triangles, b->triangles, sizeof *a->triangles * (size_t)a->triangle_count));
    ck_assert(same_bits(a->normals, b->normals, sizeof *a->normals * (size_t)a->triangle_count));
    ck_assert(same_vec(a->aabb_min, b->aabb_min) && same_vec(a->aabb_max, b->aabb_max));
}

/* The stored bodies agree bit for bit (hull and mesh by content). */
static void assert_body_equal(const cq_world_body *a, const cq_world_body *b)
{
    ck_assert_int_eq(a->shape.type, b->shape.type);
    ck_assert(same_bits(&a->pose, &b->pose, sizeof a->pose));
    ck_assert(same_vec(a->velocity, b->velocity));
    ck_assert(a->layer == b->layer && a->mask == b->mask);
    const char *why = "";
    switch (a->shape.type) {
    case CQ_CONVEX:
        ck_assert_msg(hull_equal(a->shape.convex.hull, b->shape.convex.hull, &why), "hull differs in %s", why);
        break;
    case CQ_MESH:
        assert_mesh_equal(a->shape.mesh.mesh, b->shape.mesh.mesh);
        break;
    case CQ_PLANE:
        ck_assert(same_vec(a->shape.plane.normal, b->shape.plane.normal));
        ck_assert(same_double(a->shape.plane.offset, b->shape.plane.offset));
        break;
    case CQ_SPHERE:
        ck_assert(same_double(a->shape.sphere.radius, b->shape.sphere.radius));
        break;
    case CQ_CAPSULE:
        ck_assert(same_double(a->shape.capsule.radius, b->shape.capsule.radius));
        ck_assert(same_double(a->shape.capsule.half_height, b->shape.capsule.half_height));
        break;
    case CQ_BOX:
        ck_assert(same_vec(a->shape.box.half, b->shape.box.half));
        break;
    default:
        ck_assert(same_bits(a->shape.triangle.v, b->shape.triangle.v, sizeof a->shape.triangle.v));
        break;
    }
}

typedef struct contacts_run {
    cq_world_contact pairs[MAX_PAIRS];
    cq_world_toi toi[BODIES];
    cq_world_contacts_out out;
} contacts_run;

static void run_contacts(cq_world *w, double dt, contacts_run *r)
{
    memset(r, 0, sizeof *r);
    r->out = (cq_world_contacts_out){.pairs = r->pairs, .pair_capacity = MAX_PAIRS, .toi = r->toi,
                                     .toi_capacity = BODIES};
    ck_assert_int_eq(cq_world_contacts(w, &(cq_world_contacts_query){.dt = dt}, &r->out), CQ_OK);
}

static void assert_ray_hit_equal(const cq_world_ray_hit *a, const cq_world_ray_hit *b)
{
    ck_assert(same_bits(&a->id, &b->id, sizeof a->id) && a->hit.hit == b->hit.hit);
    ck_assert(same_double(a->hit.distance, b->hit.distance));
    ck_assert(same_vec(a->hit.point, b->hit.point) && same_vec(a->hit.normal, b->hit.normal));
}

static void assert_sweep_hit_equal(const cq_world_sweep_hit *a, const cq_world_sweep_hit *b)
{
    const cq_sweep_hit *x = &a->hit, *y = &b->hit;
    ck_assert(same_bits(&a->id, &b->id, sizeof a->id));
    ck_assert(x->hit == y->hit && x->initially_overlapping == y->initially_overlapping &&
              x->iteration_limit == y->iteration_limit && x->has_normal == y->has_normal);
    ck_assert(same_double(x->time, y->time) && same_vec(x->point, y->point) && same_vec(x->normal, y->normal));
    ck_assert_int_eq(x->iterations, y->iterations);
}

/* Contacts (discrete, then with CCD) compare byte for byte. */
static void assert_same_contacts(cq_world *a, cq_world *b)
{
    static contacts_run ra, rb;
    for (int pass = 0; pass < 2; pass++) {
        double dt = pass ? 0.5 : 0.0;
        run_contacts(a, dt, &ra);
        run_contacts(b, dt, &rb);
        ck_assert_int_eq(ra.out.pair_count, rb.out.pair_count);
        ck_assert_int_eq(ra.out.toi_count, rb.out.toi_count);
        ck_assert_int_eq(ra.out.tested, rb.out.tested);
        ck_assert_int_eq(ra.out.swept, rb.out.swept);
        ck_assert(same_bits(ra.pairs, rb.pairs, sizeof ra.pairs[0] * (size_t)ra.out.pair_count));
        ck_assert(same_bits(ra.toi, rb.toi, sizeof ra.toi[0] * (size_t)ra.out.toi_count));
        ck_assert_int_gt(ra.out.pair_count, 20); /* a world that touches, so the comparison means something */
    }
}

/* Closest hits, all hits, sweeps and overlaps compare field by field. */
static void assert_same_queries(const cq_world *a, const cq_world *b, tu_rng *rng)
{
    static cq_world_ray rays[RAYS];
    static cq_world_ray_hit ha[RAYS], hb[RAYS];
    static int first_a[RAYS + 1], first_b[RAYS + 1];
    int hits = 0;
    for (int i = 0; i < RAYS; i++) {
        cq_vec3 from = in_cube(rng, 12), to = in_cube(rng, 5), d = cq_sub(to, from);
        rays[i] = (cq_world_ray){{from, cq_scale(d, 1 / cq_len(d)), 40}, i % 5 ? 0xFFFFFFFFu : 1u + (uint32_t)i % 7};
    }
    ck_assert_int_eq(cq_world_raycast(a, rays, RAYS, ha, NULL), CQ_OK);
    ck_assert_int_eq(cq_world_raycast(b, rays, RAYS, hb, NULL), CQ_OK);
    for (int i = 0; i < RAYS; i++) {
        assert_ray_hit_equal(&ha[i], &hb[i]);
        hits += ha[i].hit.hit;
    }
    ck_assert_int_gt(hits, RAYS / 4);
    ck_assert_int_eq(cq_world_raycast_all(a, rays, RAYS, NULL, 0, first_a, NULL), CQ_ERANGE);
    int total = first_a[RAYS];
    cq_world_ray_hit *all_a = calloc((size_t)total, sizeof *all_a), *all_b = calloc((size_t)total, sizeof *all_b);
    ck_assert(all_a && all_b);
    ck_assert_int_eq(cq_world_raycast_all(a, rays, RAYS, all_a, total, first_a, NULL), CQ_OK);
    ck_assert_int_eq(cq_world_raycast_all(b, rays, RAYS, all_b, total, first_b, NULL), CQ_OK);
    ck_assert(same_bits(first_a, first_b, sizeof first_a));
    for (int k = 0; k < total; k++)
        assert_ray_hit_equal(&all_a[k], &all_b[k]);
    free(all_a);
    free(all_b);

    for (int i = 0; i < 300; i++) {
        cq_shape s = random_shape(rng, (cq_shape_type)(i % 4));
        cq_world_shape_query q = {.shape = &s, .pose = random_pose(rng, i), .translation = in_cube(rng, 6),
                                  .mask = 0xFFFFFFFFu};
        cq_world_sweep_hit sa, sb;
        ck_assert_int_eq(cq_world_sweep(a, &q, &sa), CQ_OK);
        ck_assert_int_eq(cq_world_sweep(b, &q, &sb), CQ_OK);
        assert_sweep_hit_equal(&sa, &sb);
        cq_world_handle oa[BODIES], ob[BODIES];
        int na = -1, nb = -2;
        ck_assert_int_eq(cq_world_overlap(a, &q, oa, BODIES, &na), CQ_OK);
        ck_assert_int_eq(cq_world_overlap(b, &q, ob, BODIES, &nb), CQ_OK);
        ck_assert_int_eq(na, nb);
        ck_assert(same_bits(oa, ob, sizeof oa[0] * (size_t)na));
    }
}

START_TEST(world_export_import_answers_identically)
{
    tu_rng rng = {0xE8};
    static char ids[BODIES][16];
    static cq_world_op ops[BODIES];
    cq_world *a = new_world(), *b = new_world();
    for (int i = 0; i < BODIES; i++) {
        snprintf(ids[i], sizeof ids[i], "s%03d", i);
        cq_shape_type t = body_type(i);
        bool moving = t != CQ_PLANE && t != CQ_MESH;
        cq_vec3 v = moving ? in_cube(&rng, 4) : cq_v3(0, 0, 0);
        uint32_t layer = 1u << (i % 3), mask = i % 11 ? 0xFFFFFFFFu : 0x5u;
        ops[i] = (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = ids[i], .shape = random_shape(&rng, t),
                               .pose = random_pose(&rng, i), .velocity = v, .layer = layer, .mask = mask};
    }
    apply(a, ops, BODIES);

    /* export: every body as the world reports it; import: rebuilt into b */
    cq_world_handle handles[BODIES];
    int count = 0;
    ck_assert_int_eq(cq_world_list(a, handles, BODIES, &count), CQ_OK);
    ck_assert_int_eq(count, BODIES);
    for (int i = 0; i < BODIES; i++) {
        cq_world_body body;
        ck_assert_int_eq(cq_world_get(a, handles[i], &body), CQ_OK);
        ck_assert_str_eq(cq_world_id(a, handles[i]), ids[i]);
        ops[i] = import_op(ids[i], &body);
    }
    apply(b, ops, BODIES);
    for (int i = 0; i < BODIES; i++) {
        cq_world_handle hb;
        cq_world_body ba, bb;
        ck_assert_int_eq(cq_world_find(b, ids[i], &hb), CQ_OK);
        ck_assert(same_bits(&hb, &handles[i], sizeof hb));
        ck_assert_int_eq(cq_world_get(a, handles[i], &ba), CQ_OK);
        ck_assert_int_eq(cq_world_get(b, hb, &bb), CQ_OK);
        assert_body_equal(&ba, &bb);
    }
    assert_same_contacts(a, b);
    assert_same_queries(a, b, &rng);
    cq_world_destroy(a);
    cq_world_destroy(b);
}
END_TEST

Suite *exact_suite(void)
{
    Suite *s = suite_create("exact");
    TCase *poses = tcase_create("poses");
    tcase_set_timeout(poses, 60); /* seconds a test under the sanitizers */
    tcase_add_test(poses, exact_rotations_are_kept);
    tcase_add_test(poses, perturbed_rotations_are_corrected_once);
    tcase_add_test(poses, quaternion_poses_import_as_axes_unchanged);
    tcase_add_test(poses, plane_normals_are_fixed_points);
    tcase_add_test(poses, unit_normals_are_kept);
    suite_add_tcase(s, poses);
    TCase *hulls = tcase_create("hulls");
    tcase_set_timeout(hulls, 120);
    tcase_add_test(hulls, hull_rebuild_is_exact);
    tcase_add_test(hulls, hull_rebuild_of_exact_grids);
    suite_add_tcase(s, hulls);
    TCase *world = tcase_create("world");
    tcase_set_timeout(world, 60);
    tcase_add_test(world, world_export_import_answers_identically);
    suite_add_tcase(s, world);
    return s;
}
