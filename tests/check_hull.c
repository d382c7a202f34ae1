/* Convex hull builder. Oracles are independent of the builder: exact answers
 * for cubes, lattices and prisms; brute force (every triple's plane, every
 * point's projection) for random clouds; gift wrapping for flat sets; and
 * structural invariants (containment, Euler, edge pairing, convexity).
 * Tolerance: the documented hull tolerance (tu_hull_tol). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/hull.h"
#include "testutil.h"

Suite *hull_suite(void);

static bool same_point(cq_vec3 a, cq_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static int input_index(cq_vec3 v, const cq_vec3 *p, int n)
{
    for (int i = 0; i < n; i++)
        if (same_point(v, p[i]))
            return i;
    return -1;
}

static cq_vec3 on_sphere(tu_rng *rng, double r)
{
    double z = tu_uniform(rng, -1, 1), phi = tu_uniform(rng, 0, 2 * CQ_PI), s = sqrt(1 - z * z);
    return cq_v3(r * s * cos(phi), r * s * sin(phi), r * z);
}

static cq_vec3 in_cube(tu_rng *rng, double h)
{
    return cq_v3(tu_uniform(rng, -h, h), tu_uniform(rng, -h, h), tu_uniform(rng, -h, h));
}

static cq_hull *build_ok(const cq_vec3 *p, int n)
{
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(p, n, 0.0, &h), CQ_OK);
    ck_assert_ptr_nonnull(h);
    return h;
}

/* Vertices are input points, not within the tolerance of each other (the
 * test's tolerance is an upper bound, up to twice the hull's); aabb and
 * centroid match brute force. */
static void check_vertices(const cq_hull *h, const cq_vec3 *p, int n, double tol)
{
    ck_assert_int_ge(h->vertex_count, 1);
    cq_vec3 lo = h->vertices[0], hi = h->vertices[0], sum = cq_v3(0, 0, 0);
    for (int i = 0; i < h->vertex_count; i++) {
        cq_vec3 v = h->vertices[i];
        ck_assert_msg(input_index(v, p, n) >= 0, "vertex %d is not an input point", i);
        for (int j = 0; j < i; j++)
            ck_assert_msg(cq_len(cq_sub(v, h->vertices[j])) > tol / 4, "vertices %d and %d coincide (%g, tol %g)", i,
                          j, cq_len(cq_sub(v, h->vertices[j])), tol);
        lo = cq_v3(fmin(lo.x, v.x), fmin(lo.y, v.y), fmin(lo.z, v.z));
        hi = cq_v3(fmax(hi.x, v.x), fmax(hi.y, v.y), fmax(hi.z, v.z));
        sum = cq_add(sum, v);
    }
    ck_assert(same_point(h->aabb_min, lo));
    ck_assert(same_point(h->aabb_max, hi));
    tu_assert_vec_eq_tol(h->centroid, cq_scale(sum, 1.0 / h->vertex_count), 1e-12 * (1 + cq_len(hi)));
    for (int i = 0; i < n; i++) {
        ck_assert(p[i].x >= lo.x - tol && p[i].y >= lo.y - tol && p[i].z >= lo.z - tol);
        ck_assert(p[i].x <= hi.x + tol && p[i].y <= hi.y + tol && p[i].z <= hi.z + tol);
    }
}

/* Position of the directed edge a -> b in face f's loop, or -1. */
static int loop_edge(const cq_hull *h, int f, int a, int b)
{
    const cq_hull_face *face = &h->faces[f];
    for (int k = 0; k < face->count; k++) {
        int u = h->face_vertices[face->first + k], v = h->face_vertices[face->first + (k + 1) % face->count];
        if (u == a && v == b)
            return k;
    }
    return -1;
}

/* Gift wrapping in 2-D: the strictly extreme points, counter-clockwise,
 * starting at the lowest-x point. */
static int gift_wrap(const double (*q)[2], int n, int *out)
{
    int start = 0;
    for (int i = 1; i < n; i++)
        if (q[i][0] < q[start][0])
            start = i;
    int m = 0, cur = start;
    do {
        out[m++] = cur;
        int next = cur == 0 ? 1 : 0;
        for (int i = 0; i < n; i++) {
            double ax = q[next][0] - q[cur][0], ay = q[next][1] - q[cur][1];
            double bx = q[i][0] - q[cur][0], by = q[i][1] - q[cur][1];
            double c = ax * by - ay * bx;
            if (c < 0 || (c == 0 && bx * bx + by * by > ax * ax + ay * ay))
                next = i;
        }
        cur = next;
    } while (cur != start && m < n);
    return m;
}

/* The loop is convex within tol and counter-clockwise about n: projected on
 * the plane, every vertex lies within tol of the boundary of the loop's own
 * gift-wrapped hull, which the loop visits in order, with positive area. */
static void check_loop_convex(const cq_vec3 *v, int count, cq_vec3 n, double tol)
{
    cq_vec3 u = fabs(n.x) < 0.6 ? cq_v3(1, 0, 0) : cq_v3(0, 1, 0);
    u = cq_scale(cq_cross(n, u), 1.0 / cq_len(cq_cross(n, u)));
    cq_vec3 w = cq_cross(n, u);
    double q[CQ_HULL_MAX_POINTS][2];
    int wrap[CQ_HULL_MAX_POINTS];
    double area = 0;
    for (int k = 0; k < count; k++) {
        q[k][0] = cq_dot(u, v[k]);
        q[k][1] = cq_dot(w, v[k]);
        area += cq_dot(cq_cross(v[k], v[(k + 1) % count]), n);
    }
    ck_assert_msg(area > 0, "loop is clockwise");
    int m = gift_wrap((const double(*)[2])q, count, wrap);
    ck_assert_int_ge(m, 3);
    int turns = 0;
    for (int j = 0; j < m; j++)
        turns += wrap[(j + 1) % m] < wrap[j];
    ck_assert_msg(turns == 1, "loop does not follow its hull's order");
    for (int k = 0; k < count; k++)
        for (int j = 0; j < m; j++) {
            const double *a = q[wrap[j]], *b = q[wrap[(j + 1) % m]];
            double ex = b[0] - a[0], ey = b[1] - a[1];
            double inside = (ex * (q[k][1] - a[1]) - ey * (q[k][0] - a[0])) / hypot(ex, ey);
            if (inside <= tol)
                break;
            ck_assert_msg(j < m - 1, "loop vertex %d lies %g inside its hull", k, inside);
        }
}

/* Unit normal; vertices on the plane; every input point behind it; the loop
 * convex and counter-clockwise seen from outside. */
static void check_face(const cq_hull *h, int f, const cq_vec3 *p, int n, double tol)
{
    const cq_hull_face *face = &h->faces[f];
    ck_assert_int_ge(face->count, 3);
    ck_assert_double_eq_tol(cq_len(face->normal), 1.0, 1e-12);
    cq_vec3 loop[CQ_HULL_MAX_POINTS];
    for (int k = 0; k < face->count; k++) {
        int i = h->face_vertices[face->first + k];
        ck_assert_int_lt(i, h->vertex_count);
        loop[k] = h->vertices[i];
        ck_assert_msg(fabs(cq_dot(face->normal, loop[k]) - face->offset) <= tol, "face %d vertex off its plane by %g",
                      f, cq_dot(face->normal, loop[k]) - face->offset);
    }
    check_loop_convex(loop, face->count, face->normal, tol);
    for (int i = 0; i < n; i++)
        ck_assert_msg(cq_dot(face->normal, p[i]) <= face->offset + tol, "point %d outside face %d by %g", i, f,
                      cq_dot(face->normal, p[i]) - face->offset);
}

/* Loops tile face_vertices; each edge is the loop edge v0 -> v1 of f0 and
 * v1 -> v0 of f1; every loop edge is exactly one listed edge; Euler. */
static void check_solid_topology(const cq_hull *h, double tol)
{
    int total = 0;
    for (int f = 0; f < h->face_count; f++) {
        ck_assert_int_eq(h->faces[f].first, total);
        total += h->faces[f].count;
    }
    ck_assert_int_eq(total, h->face_vertex_count);
    ck_assert_int_eq(h->face_vertex_count, 2 * h->edge_count);
    ck_assert_int_eq(h->vertex_count - h->edge_count + h->face_count, 2);
    for (int e = 0; e < h->edge_count; e++) {
        cq_hull_edge ed = h->edges[e];
        ck_assert(ed.f0 < h->face_count && ed.f1 < h->face_count && ed.f0 != ed.f1);
        ck_assert_int_ge(loop_edge(h, ed.f0, ed.v0, ed.v1), 0);
        ck_assert_int_ge(loop_edge(h, ed.f1, ed.v1, ed.v0), 0);
        for (int g = 0; g < e; g++) {
            cq_hull_edge o = h->edges[g];
            ck_assert(!((o.v0 == ed.v0 && o.v1 == ed.v1) || (o.v0 == ed.v1 && o.v1 == ed.v0)));
        }
    }
    /* A vertex of a convex polyhedron is on three faces or more; on two it
     * must lie on their common edge, within the corner of their tolerance
     * bands (sqrt(2) tol out from the chord of its neighbours). */
    int degree[CQ_HULL_MAX_POINTS] = {0};
    for (int k = 0; k < h->face_vertex_count; k++)
        degree[h->face_vertices[k]]++;
    for (int f = 0; f < h->face_count; f++) {
        const uint16_t *loop = h->face_vertices + h->faces[f].first;
        int count = h->faces[f].count;
        for (int k = 0; k < count; k++) {
            ck_assert_int_ge(degree[loop[k]], 2);
            if (degree[loop[k]] > 2)
                continue;
            cq_vec3 a = h->vertices[loop[(k + count - 1) % count]], c = h->vertices[loop[(k + 1) % count]];
            cq_vec3 ac = cq_sub(c, a);
            double off = cq_len(cq_cross(ac, cq_sub(h->vertices[loop[k]], a))) / cq_len(ac);
            ck_assert_msg(off <= 1.5 * tol, "vertex %d on two faces lies %g off their edge", loop[k], off);
        }
    }
}

/* The support vertex attains the maximum of dot(dir, p) over ALL inputs. */
static void check_support(const cq_hull *h, const cq_vec3 *p, int n, double tol, tu_rng *rng)
{
    for (int k = 0; k < 20; k++) {
        cq_vec3 dir = on_sphere(rng, 1.0);
        int s = cq_hull_support(h, dir);
        ck_assert(s >= 0 && s < h->vertex_count);
        double best = -INFINITY;
        for (int i = 0; i < n; i++)
            best = fmax(best, cq_dot(dir, p[i]));
        ck_assert_msg(cq_dot(dir, h->vertices[s]) >= best - tol, "support short by %g",
                      best - cq_dot(dir, h->vertices[s]));
    }
}

static void check_solid(const cq_hull *h, const cq_vec3 *p, int n, tu_rng *rng)
{
    double tol = tu_hull_tol(p, n);
    ck_assert_int_eq(h->dim, 3);
    ck_assert_int_ge(h->face_count, 4);
    check_vertices(h, p, n, tol);
    for (int f = 0; f < h->face_count; f++)
        check_face(h, f, p, n, tol);
    check_solid_topology(h, tol);
    check_support(h, p, n, tol, rng);
}

/* ---- cubes, lattices, prisms: exact answers ---- */

static int cube_corners(cq_vec3 *out, cq_vec3 centre, double half)
{
    for (int i = 0; i < 8; i++)
        out[i] = cq_add(centre, cq_v3(i & 1 ? half : -half, i & 2 ? half : -half, i & 4 ? half : -half));
    return 8;
}

/* 8 vertices = the corners, 6 quads with axis normals at the faces' offsets. */
static void check_cube(const cq_hull *h, const cq_vec3 *corners, cq_vec3 centre, double half)
{
    ck_assert_int_eq(h->vertex_count, 8);
    ck_assert_int_eq(h->face_count, 6);
    ck_assert_int_eq(h->edge_count, 12);
    for (int i = 0; i < 8; i++)
        ck_assert_int_ge(input_index(corners[i], h->vertices, 8), 0);
    bool seen[6] = {false};
    for (int f = 0; f < 6; f++) {
        cq_hull_face face = h->faces[f];
        ck_assert_int_eq(face.count, 4);
        cq_vec3 a = cq_vabs(face.normal);
        int axis = a.x > 0.5 ? 0 : (a.y > 0.5 ? 1 : 2);
        double sign = cq_comp(face.normal, axis) > 0 ? 1 : -1;
        ck_assert_double_eq_tol(cq_comp(a, axis), 1.0, 1e-12);
        ck_assert_double_eq_tol(face.offset, sign * cq_comp(centre, axis) + half, 1e-9 * (half + cq_len(centre)));
        seen[2 * axis + (sign > 0)] = true;
    }
    for (int k = 0; k < 6; k++)
        ck_assert(seen[k]);
}

START_TEST(cube_with_interior_and_duplicates)
{
    tu_rng rng = {11};
    cq_vec3 p[100];
    cube_corners(p, cq_v3(0, 0, 0), 1.0);
    int n = 8;
    for (; n < 60; n++)
        p[n] = in_cube(&rng, 0.999);
    for (; n < 100; n++) /* exact duplicates of corners */
        p[n] = p[n % 8];
    cq_vec3 tmp = p[0]; /* corners not first: the hull must not depend on order */
    p[0] = p[50];
    p[50] = tmp;
    cq_hull *h = build_ok(p, n);
    cq_vec3 corners[8];
    cube_corners(corners, cq_v3(0, 0, 0), 1.0);
    check_cube(h, corners, cq_v3(0, 0, 0), 1.0);
    check_solid(h, p, n, &rng);
    tu_assert_vec_eq_tol(h->centroid, cq_v3(0, 0, 0), 1e-15);
    ck_assert(same_point(h->aabb_min, cq_v3(-1, -1, -1)));
    ck_assert(same_point(h->aabb_max, cq_v3(1, 1, 1)));
    cq_hull_free(h);
}
END_TEST

START_TEST(lattice_with_coplanar_and_collinear_points)
{
    /* 5x5x5 grid: points on every face, edge and in the interior. */
    cq_vec3 p[125];
    int n = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 5; k++)
                p[n++] = cq_v3(0.5 * j - 1, 0.5 * k - 1, 0.5 * i - 1);
    cq_hull *h = build_ok(p, n);
    cq_vec3 corners[8];
    cube_corners(corners, cq_v3(0, 0, 0), 1.0);
    check_cube(h, corners, cq_v3(0, 0, 0), 1.0);
    tu_rng rng = {12};
    check_solid(h, p, n, &rng);
    cq_hull_free(h);
}
END_TEST

START_TEST(octagonal_prism)
{
    /* Two regular octagons plus points inside the caps: 2 octagons + 8 quads. */
    cq_vec3 p[40];
    int n = 0;
    for (int k = 0; k < 8; k++) {
        double a = 2 * CQ_PI * k / 8;
        p[n++] = cq_v3(cos(a), sin(a), -0.5);
        p[n++] = cq_v3(cos(a), sin(a), 0.5);
        p[n++] = cq_v3(0.5 * cos(a), 0.5 * sin(a), 0.5);
        p[n++] = cq_v3(0.3 * cos(a), 0.3 * sin(a), -0.5);
    }
    cq_hull *h = build_ok(p, n);
    ck_assert_int_eq(h->vertex_count, 16);
    ck_assert_int_eq(h->face_count, 10);
    ck_assert_int_eq(h->edge_count, 24);
    int octagons = 0, quads = 0;
    for (int f = 0; f < h->face_count; f++) {
        if (h->faces[f].count == 8) {
            octagons++;
            ck_assert_double_eq_tol(fabs(h->faces[f].normal.z), 1.0, 1e-12);
        } else {
            ck_assert_int_eq(h->faces[f].count, 4);
            ck_assert_double_eq_tol(h->faces[f].normal.z, 0.0, 1e-12);
            ck_assert_double_eq_tol(h->faces[f].offset, cos(CQ_PI / 8), 1e-12);
            quads++;
        }
    }
    ck_assert_int_eq(octagons, 2);
    ck_assert_int_eq(quads, 8);
    tu_rng rng = {13};
    check_solid(h, p, n, &rng);
    cq_hull_free(h);
}
END_TEST

START_TEST(rotated_boxes_have_exact_planes)
{
    /* The faces of a rotated box: normals are the rotation's columns and
     * offsets the half extents (plus the centre's projection). */
    tu_rng rng = {14};
    cq_vec3 p[30];
    for (int run = 0; run < 50; run++) {
        cq_mat3 r = tu_rotation(&rng);
        cq_vec3 centre = in_cube(&rng, 10.0), half = cq_v3(tu_uniform(&rng, 0.1, 3), tu_uniform(&rng, 0.1, 3),
                                                           tu_uniform(&rng, 0.1, 3));
        for (int i = 0; i < 30; i++) {
            cq_vec3 l = i < 8 ? cq_v3(i & 1 ? half.x : -half.x, i & 2 ? half.y : -half.y, i & 4 ? half.z : -half.z)
                              : cq_v3(tu_uniform(&rng, -half.x, half.x), tu_uniform(&rng, -half.y, half.y),
                                      tu_uniform(&rng, -half.z, half.z));
            p[(i + run) % 30] = cq_add(centre, cq_mul_mv(&r, l));
        }
        cq_hull *h = build_ok(p, 30);
        ck_assert_int_eq(h->vertex_count, 8);
        ck_assert_int_eq(h->face_count, 6);
        ck_assert_int_eq(h->edge_count, 12);
        for (int f = 0; f < 6; f++) {
            cq_vec3 n = h->faces[f].normal;
            int axis = 0;
            for (int a = 1; a < 3; a++)
                if (fabs(cq_dot(n, r.c[a])) > fabs(cq_dot(n, r.c[axis])))
                    axis = a;
            cq_vec3 expect = cq_dot(n, r.c[axis]) > 0 ? r.c[axis] : cq_neg(r.c[axis]);
            tu_assert_vec_eq_tol(n, expect, 1e-12);
            ck_assert_double_eq_tol(h->faces[f].offset, cq_dot(expect, centre) + cq_comp(half, axis), 1e-12 * 20);
        }
        check_solid(h, p, 30, &rng);
        cq_hull_free(h);
    }
}
END_TEST

START_TEST(tolerance_decides_extreme_points)
{
    /* Unit cube: tau = 1e-6 * 2 + 64 ulps (the half-extent 1 rounds up to
     * 2). A point 0.3e-6 above the top face is on it; one 1e-5 above is an
     * apex, and the top becomes the four triangles around it. */
    cq_vec3 p[9], corners[8];
    cube_corners(p, cq_v3(0, 0, 0), 1.0);
    cube_corners(corners, cq_v3(0, 0, 0), 1.0);
    p[8] = cq_v3(0.3, 0.2, 1 + 0.3e-6);
    cq_hull *h = build_ok(p, 9);
    check_cube(h, corners, cq_v3(0, 0, 0), 1.0);
    ck_assert(cq_dot(cq_v3(0, 0, 1), p[8]) <= 1.0 + tu_hull_tol(p, 9));
    cq_hull_free(h);

    p[8] = cq_v3(0.3, 0.2, 1 + 1e-5);
    h = build_ok(p, 9);
    ck_assert_int_eq(h->vertex_count, 9);
    ck_assert_int_eq(h->face_count, 9);
    ck_assert_int_eq(h->edge_count, 16);
    int triangles = 0;
    for (int f = 0; f < h->face_count; f++)
        if (h->faces[f].count == 3) {
            triangles++;
            ck_assert(input_index(p[8], h->vertices, h->vertex_count) >= 0);
            ck_assert_double_eq_tol(cq_dot(h->faces[f].normal, p[8]), h->faces[f].offset, 1e-12);
        }
    ck_assert_int_eq(triangles, 4);
    tu_rng rng = {15};
    check_solid(h, p, 9, &rng);
    cq_hull_free(h);
}
END_TEST

/* ---- random clouds ---- */

/* Brute force on a small cloud in general position: a triple spans a facet
 * when every other point lies strictly behind its plane. */
static int brute_facets(const cq_vec3 *p, int n, cq_vec3 *normals, bool *extreme)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++) {
                cq_vec3 nrm = cq_cross(cq_sub(p[j], p[i]), cq_sub(p[k], p[i]));
                nrm = cq_scale(nrm, 1.0 / cq_len(nrm));
                int above = 0, below = 0;
                for (int q = 0; q < n; q++) {
                    double s = cq_dot(nrm, cq_sub(p[q], p[i]));
                    above += s > 1e-9;
                    below += s < -1e-9;
                }
                if (above && below)
                    continue;
                normals[count++] = above ? cq_neg(nrm) : nrm;
                extreme[i] = extreme[j] = extreme[k] = true;
            }
    return count;
}

START_TEST(random_small_clouds_match_brute_force)
{
    tu_rng rng = {21};
    cq_vec3 p[24], normals[2000];
    for (int run = 0; run < 60; run++) {
        int n = 4 + run % 21;
        for (int i = 0; i < n; i++)
            p[i] = in_cube(&rng, 1.0);
        bool extreme[24] = {false};
        int facets = brute_facets(p, n, normals, extreme);
        cq_hull *h = build_ok(p, n);
        check_solid(h, p, n, &rng);
        ck_assert_int_eq(h->face_count, facets);
        for (int f = 0; f < h->face_count; f++) {
            ck_assert_int_eq(h->faces[f].count, 3);
            int match = 0;
            for (int k = 0; k < facets; k++)
                match += cq_len(cq_sub(normals[k], h->faces[f].normal)) < 1e-9;
            ck_assert_int_eq(match, 1);
        }
        int extremes = 0;
        for (int i = 0; i < n; i++) {
            extremes += extreme[i];
            bool is_vertex = input_index(p[i], h->vertices, h->vertex_count) >= 0;
            ck_assert_int_eq(is_vertex, extreme[i]);
        }
        ck_assert_int_eq(h->vertex_count, extremes);
        cq_hull_free(h);
    }
}
END_TEST

/* A cloud of one of several kinds: sphere (all extreme), cube, cube with
 * its corners, ball, or snapped to a coarse lattice (many coplanar,
 * collinear and duplicate points). Returns the kind. */
static int random_cloud(tu_rng *rng, cq_vec3 *p, int n, int run)
{
    int kind = run % 5;
    for (int i = 0; i < n; i++) {
        switch (kind) {
        case 0:
            p[i] = on_sphere(rng, 1.0);
            break;
        case 1:
            p[i] = in_cube(rng, 2.0);
            break;
        case 2:
            p[i] = i < 8 ? cq_v3(i & 1 ? 2 : -2, i & 2 ? 2 : -2, i & 4 ? 2 : -2) : in_cube(rng, 2.0);
            break;
        case 3:
            p[i] = on_sphere(rng, cbrt(tu_uniform(rng, 0, 1)));
            break;
        default: {
            cq_vec3 q = in_cube(rng, 1.0);
            p[i] = cq_v3(round(4 * q.x) / 4, round(4 * q.y) / 4, round(4 * q.z) / 4);
        }
        }
    }
    return kind;
}

START_TEST(random_clouds_invariants)
{
    tu_rng rng = {22};
    cq_vec3 p[CQ_HULL_MAX_POINTS];
    for (int run = 0; run < 200; run++) {
        int n = 4 + (int)tu_uniform(&rng, 0, CQ_HULL_MAX_POINTS - 3);
        int kind = random_cloud(&rng, p, n, run);
        cq_hull *h = build_ok(p, n);
        check_solid(h, p, n, &rng);
        if (kind == 0) /* every point on a sphere is extreme */
            ck_assert_int_eq(h->vertex_count, n);
        cq_hull_free(h);
    }
}
END_TEST

START_TEST(support_ties_and_brute_force)
{
    cq_vec3 p[8];
    cube_corners(p, cq_v3(0, 0, 0), 1.0);
    cq_hull *h = build_ok(p, 8);
    cq_vec3 dirs[] = {cq_v3(1, 0, 0), cq_v3(0, -1, 0), cq_v3(0, 0, 1), cq_v3(1, 1, 0), cq_v3(0, 0, 0)};
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        double best = -INFINITY;
        int lowest = -1;
        for (int i = 0; i < h->vertex_count; i++) {
            double t = cq_dot(dirs[k], h->vertices[i]);
            if (t > best) {
                best = t;
                lowest = i;
            }
        }
        ck_assert_int_eq(cq_hull_support(h, dirs[k]), lowest);
    }
    tu_rng rng = {23};
    check_support(h, p, 8, 0.0, &rng);
    cq_hull_free(h);
}
END_TEST

/* ---- degenerate inputs ---- */

START_TEST(single_point_and_repeated_point)
{
    cq_vec3 p[CQ_HULL_MAX_POINTS];
    for (int i = 0; i < CQ_HULL_MAX_POINTS; i++)
        p[i] = cq_v3(1.5, -2, 3);
    int counts[] = {1, CQ_HULL_MAX_POINTS};
    for (int k = 0; k < 2; k++) {
        cq_hull *h = NULL;
        ck_assert_int_eq(cq_hull_build(p, counts[k], 0.25, &h), CQ_OK);
        ck_assert_int_eq(h->dim, 0);
        ck_assert_int_eq(h->vertex_count, 1);
        ck_assert_int_eq(h->face_count, 0);
        ck_assert_int_eq(h->edge_count, 0);
        ck_assert_int_eq(h->face_vertex_count, 0);
        ck_assert_double_eq(h->radius, 0.25);
        ck_assert(same_point(h->vertices[0], p[0]));
        ck_assert(same_point(h->centroid, p[0]));
        ck_assert_int_eq(cq_hull_support(h, cq_v3(1, 2, 3)), 0);
        cq_hull_free(h);
    }
}
END_TEST

/* A segment whose ends are the inputs p[lo] and p[hi], every point near it. */
static void check_segment(const cq_hull *h, const cq_vec3 *p, int n, int lo, int hi)
{
    double tol = tu_hull_tol(p, n);
    ck_assert_int_eq(h->dim, 1);
    ck_assert_int_eq(h->vertex_count, 2);
    ck_assert_int_eq(h->face_count, 0);
    ck_assert_int_eq(h->edge_count, 1);
    cq_hull_edge e = h->edges[0];
    ck_assert(e.f0 == 0xFFFF && e.f1 == 0xFFFF);
    ck_assert((e.v0 == 0 && e.v1 == 1) || (e.v0 == 1 && e.v1 == 0));
    ck_assert_int_ge(input_index(p[lo], h->vertices, 2), 0);
    ck_assert_int_ge(input_index(p[hi], h->vertices, 2), 0);
    cq_vec3 a = h->vertices[0], d = cq_sub(h->vertices[1], a);
    for (int i = 0; i < n; i++) {
        double t = cq_clamp(cq_dot(cq_sub(p[i], a), d) / cq_len2(d), 0, 1);
        ck_assert(cq_len(cq_sub(p[i], cq_mad(a, d, t))) <= tol);
    }
}

START_TEST(two_points)
{
    cq_vec3 p[2] = {cq_v3(1, 2, 3), cq_v3(-1, 0, 2)};
    cq_hull *h = build_ok(p, 2);
    check_segment(h, p, 2, 0, 1);
    cq_hull_free(h);
}
END_TEST

START_TEST(collinear_points)
{
    tu_rng rng = {31};
    cq_vec3 p[100];
    for (int run = 0; run < 20; run++) {
        cq_vec3 o = in_cube(&rng, 3.0), dir = on_sphere(&rng, 1.0);
        int n = 3 + run * 4, lo = 0, hi = 0;
        double t[100];
        for (int i = 0; i < n; i++) {
            t[i] = tu_uniform(&rng, -2, 2);
            if (i % 7 == 3)
                t[i] = t[i / 2]; /* duplicates */
            p[i] = cq_mad(o, dir, t[i]);
            lo = t[i] < t[lo] ? i : lo;
            hi = t[i] > t[hi] ? i : hi;
        }
        cq_hull *h = build_ok(p, n);
        check_segment(h, p, n, lo, hi);
        cq_hull_free(h);
    }
}
END_TEST

START_TEST(coplanar_points_match_gift_wrapping)
{
    tu_rng rng = {41};
    cq_vec3 p[CQ_HULL_MAX_POINTS];
    double q[CQ_HULL_MAX_POINTS][2];
    int wrap[CQ_HULL_MAX_POINTS];
    for (int run = 0; run < 40; run++) {
        cq_mat3 r = tu_rotation(&rng);
        cq_vec3 origin = in_cube(&rng, 5.0);
        int n = 3 + (int)tu_uniform(&rng, 0, CQ_HULL_MAX_POINTS - 2);
        for (int i = 0; i < n; i++) {
            /* odd runs: a square of random points; even runs: all on a
             * circle, at angles far enough apart to be clearly extreme */
            double a = 2 * CQ_PI * (i + tu_uniform(&rng, 0, 0.5)) / n;
            q[i][0] = run % 2 ? tu_uniform(&rng, -1, 1) : cos(a);
            q[i][1] = run % 2 ? tu_uniform(&rng, -1, 1) : sin(a);
            p[i] = cq_add(origin, cq_mul_mv(&r, cq_v3(q[i][0], q[i][1], 0)));
        }
        int m = gift_wrap((const double (*)[2])q, n, wrap);
        cq_hull *h = build_ok(p, n);
        double tol = tu_hull_tol(p, n);
        ck_assert_int_eq(h->dim, 2);
        ck_assert_int_eq(h->face_count, 2);
        ck_assert_int_eq(h->vertex_count, m);
        ck_assert_int_eq(h->edge_count, m);
        ck_assert_int_eq(h->face_vertex_count, 2 * m);
        int up = cq_dot(h->faces[0].normal, r.c[2]) > 0 ? 0 : 1;
        tu_assert_vec_eq_tol(h->faces[up].normal, r.c[2], 1e-9);
        tu_assert_vec_eq_tol(h->faces[1 - up].normal, cq_neg(r.c[2]), 1e-9);
        for (int f = 0; f < 2; f++)
            check_face(h, f, p, n, tol);
        /* the loop of the face looking along +z is the gift-wrap loop */
        const uint16_t *loop = h->face_vertices + h->faces[up].first;
        int shift = input_index(p[wrap[0]], h->vertices, h->vertex_count);
        int k0 = 0;
        while (loop[k0] != shift)
            k0++;
        for (int k = 0; k < m; k++)
            ck_assert(same_point(h->vertices[loop[(k0 + k) % m]], p[wrap[k]]));
        for (int e = 0; e < m; e++) {
            cq_hull_edge ed = h->edges[e];
            ck_assert(ed.f0 == 0 && ed.f1 == 1);
            ck_assert_int_ge(loop_edge(h, 0, ed.v0, ed.v1), 0);
            ck_assert_int_ge(loop_edge(h, 1, ed.v1, ed.v0), 0);
        }
        check_support(h, p, n, tol, &rng);
        cq_hull_free(h);
    }
}
END_TEST

START_TEST(near_duplicates)
{
    /* Clusters of 8 around each cube corner: well below the tolerance they
     * are one vertex; around and above it any valid hull will do. */
    tu_rng rng = {51};
    cq_vec3 p[64], corners[8];
    double jitter[] = {1e-13, 1e-9, 1e-7, 1e-6, 3e-6, 1e-5, 1e-3};
    for (size_t k = 0; k < sizeof jitter / sizeof jitter[0]; k++) {
        for (int run = 0; run < 20; run++) {
            cube_corners(corners, cq_v3(0, 0, 0), 1.0);
            for (int i = 0; i < 64; i++)
                p[i] = cq_add(corners[i % 8], in_cube(&rng, jitter[k]));
            cq_hull *h = build_ok(p, 64);
            check_solid(h, p, 64, &rng);
            if (jitter[k] <= 1e-7) {
                ck_assert_int_eq(h->vertex_count, 8);
                ck_assert_int_eq(h->face_count, 6);
                ck_assert_int_eq(h->edge_count, 12);
            } else {
                ck_assert_int_ge(h->vertex_count, 8);
            }
            cq_hull_free(h);
        }
    }
}
END_TEST

START_TEST(tiny_and_far_clouds)
{
    tu_rng rng = {61};
    cq_vec3 p[100], corners[8];
    struct {
        cq_vec3 centre;
        double size;
    } cases[] = {{{0, 0, 0}, 1e-9}, {{1e6, -1e6, 1e6}, 1.0}, {{0, 0, 0}, 1e-300}, {{0, 0, 0}, 1e300}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cq_vec3 centre = cases[c].centre;
        double s = cases[c].size;
        int n = cube_corners(p, centre, s);
        for (; n < 40; n++)
            p[n] = cq_add(centre, in_cube(&rng, 0.9 * s));
        cq_hull *h = build_ok(p, n);
        cube_corners(corners, centre, s);
        check_cube(h, corners, centre, s);
        if (cases[c].size > 1e-200 && cases[c].size < 1e200)
            check_solid(h, p, n, &rng);
        cq_hull_free(h);

        for (int i = 0; i < 60; i++) /* on a sphere: every point extreme */
            p[i] = cq_add(centre, on_sphere(&rng, s));
        h = build_ok(p, 60);
        ck_assert_int_eq(h->vertex_count, 60);
        if (cases[c].size > 1e-200 && cases[c].size < 1e200)
            check_solid(h, p, 60, &rng);
        cq_hull_free(h);
    }
}
END_TEST

/* ---- invalid input, allocation ---- */

START_TEST(invalid_input)
{
    cq_vec3 p[CQ_HULL_MAX_POINTS + 1];
    for (int i = 0; i <= CQ_HULL_MAX_POINTS; i++)
        p[i] = cq_v3(i, i * i % 7, i % 3);
    cq_hull *h = (cq_hull *)p;
    ck_assert_int_eq(cq_hull_build(p, 0, 0, &h), CQ_ERANGE);
    ck_assert_ptr_null(h);
    ck_assert_int_eq(cq_hull_build(p, CQ_HULL_MAX_POINTS + 1, 0, &h), CQ_ERANGE);
    ck_assert_int_eq(cq_hull_build(NULL, 4, 0, &h), CQ_ERANGE);
    ck_assert_int_eq(cq_hull_build(p, 4, -1e-300, &h), CQ_ENEGATIVE);
    ck_assert_int_eq(cq_hull_build(p, 4, NAN, &h), CQ_ENOT_FINITE);
    ck_assert_int_eq(cq_hull_build(p, 4, INFINITY, &h), CQ_ENOT_FINITE);
    p[3].y = NAN;
    ck_assert_int_eq(cq_hull_build(p, 4, 0, &h), CQ_ENOT_FINITE);
    p[3].y = -INFINITY;
    ck_assert_int_eq(cq_hull_build(p, 4, 0, &h), CQ_ENOT_FINITE);
    ck_assert_ptr_null(h);
}
END_TEST

static void *failing_alloc(size_t size, void *ctx)
{
    (void)size;
    (*(int *)ctx)++;
    return NULL;
}

static void unused_free(void *ptr, size_t size, void *ctx)
{
    (void)ptr;
    (void)size;
    (void)ctx;
    ck_abort_msg("free without a successful alloc");
}

START_TEST(allocation_failure_and_no_leak)
{
    tu_rng rng = {71};
    cq_vec3 p[200];
    for (int i = 0; i < 200; i++)
        p[i] = on_sphere(&rng, 2.0);
    size_t before = cq_alloc_bytes();
    int calls = 0;
    cq_allocator failing = {failing_alloc, unused_free, &calls};
    cq_set_allocator(&failing);
    cq_hull *h = (cq_hull *)p;
    int status = cq_hull_build(p, 200, 0, &h);
    cq_set_allocator(NULL);
    ck_assert_int_eq(status, CQ_ENO_MEMORY);
    ck_assert_int_eq(calls, 1); /* one block per hull */
    ck_assert_ptr_null(h);
    ck_assert_uint_eq(cq_alloc_bytes(), before);

    int sizes[] = {1, 2, 3, 200};
    for (int k = 0; k < 4; k++) {
        h = build_ok(p, sizes[k]);
        ck_assert_uint_gt(cq_alloc_bytes(), before);
        cq_hull_free(h);
        ck_assert_uint_eq(cq_alloc_bytes(), before);
    }
    cq_hull_free(NULL);
}
END_TEST

Suite *hull_suite(void)
{
    Suite *s = suite_create("hull");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, cube_with_interior_and_duplicates);
    tcase_add_test(exact, lattice_with_coplanar_and_collinear_points);
    tcase_add_test(exact, octagonal_prism);
    tcase_add_test(exact, support_ties_and_brute_force);
    tcase_add_test(exact, rotated_boxes_have_exact_planes);
    tcase_add_test(exact, tolerance_decides_extreme_points);
    suite_add_tcase(s, exact);
    TCase *random = tcase_create("random");
    tcase_set_timeout(random, 300); /* about a minute under the sanitizers */
    tcase_add_test(random, random_small_clouds_match_brute_force);
    tcase_add_test(random, random_clouds_invariants);
    suite_add_tcase(s, random);
    TCase *degenerate = tcase_create("degenerate");
    tcase_set_timeout(degenerate, 60); /* seconds a test under the sanitizers */
    tcase_add_test(degenerate, single_point_and_repeated_point);
    tcase_add_test(degenerate, two_points);
    tcase_add_test(degenerate, collinear_points);
    tcase_add_test(degenerate, coplanar_points_match_gift_wrapping);
    tcase_add_test(degenerate, near_duplicates);
    tcase_add_test(degenerate, tiny_and_far_clouds);
    suite_add_tcase(s, degenerate);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, invalid_input);
    tcase_add_test(errors, allocation_failure_and_no_leak);
    suite_add_tcase(s, errors);
    return s;
}
