/* The hull-hull SAT path (sat_hull.c) against the GJK+EPA path on the same
 * pairs (cq__convex_pair_epa), and against brute-force oracles: the support
 * overlap along the reported normal from the world-space vertices, signed
 * distances from the hulls' face planes for the contact points, analytic
 * cubes and a tetrahedron, the hysteresis and the pair cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifold.h"
#include "narrow.h"
#include "sat_hull.h"
#include "convex_util.h"
#include "testutil.h"

/* Tolerances of the differential, relative to the pair's size (the sum of
 * the two hulls' diagonals): depth, contact points on the surfaces, and the
 * angle between the two paths' normals where both pick the same axis. */
#define DEPTH_TOL 1e-7
#define POINT_TOL 1e-7
#define NORMAL_COS 0.99999 /* about 0.26 degrees */

/* The overlap of two posed hulls' cores along unit n, by brute force over
 * their world-space vertices: A's highest minus B's lowest. */
static double support_overlap(const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb, cq_vec3 n)
{
    double hi = -INFINITY, lo = INFINITY;
    for (int k = 0; k < a->vertex_count; k++)
        hi = fmax(hi, cq_dot(n, cq_xform_point(xa, a->vertices[k])));
    for (int k = 0; k < b->vertex_count; k++)
        lo = fmin(lo, cq_dot(n, cq_xform_point(xb, b->vertices[k])));
    return hi - lo;
}

/* Signed distance of p from a posed hull's core where p is inside or near
 * its surface: the largest face-plane distance (zero on the surface). */
static double plane_sdf(const cq_hull *h, const cq_xform *x, cq_vec3 p)
{
    cq_vec3 l = cq_mul_mtv(&x->r, cq_sub(p, x->p));
    double s = -INFINITY;
    for (int f = 0; f < h->face_count; f++)
        s = fmax(s, cq_dot(h->faces[f].normal, l) - h->faces[f].offset);
    return s;
}

/* Signed distance of p from a posed hull's core, exactly: the plane form
 * inside, the nearest of its faces' fan triangles outside. */
static double hull_sdf(const cq_hull *h, const cq_xform *x, cq_vec3 p)
{
    double s = plane_sdf(h, x, p);
    if (s <= 0)
        return s;
    double best = INFINITY;
    for (int f = 0; f < h->face_count; f++) {
        const cq_hull_face *face = &h->faces[f];
        cq_vec3 t[3] = {cq_xform_point(x, h->vertices[h->face_vertices[face->first]])};
        for (int k = 1; k + 1 < face->count; k++) {
            t[1] = cq_xform_point(x, h->vertices[h->face_vertices[face->first + k]]);
            t[2] = cq_xform_point(x, h->vertices[h->face_vertices[face->first + k + 1]]);
            best = fmin(best, tu_dist_point_triangle(p, t));
        }
    }
    return best;
}

static double pair_size(const cq_hull *a, const cq_hull *b)
{
    return cq_len(cq_sub(a->aabb_max, a->aabb_min)) + cq_len(cq_sub(b->aabb_max, b->aabb_min));
}

/* The query in the order cq_collide runs it, so the reference (called
 * directly, without the dispatcher's swap) sees the same pair. */
static cq_pair_query canonical(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb)
{
    cq_pair_query q = {.a = a, .xa = xa, .b = b, .xb = xb};
    if (cq__b_first(&q))
        q = (cq_pair_query){.a = b, .xa = xb, .b = a, .xb = xa};
    return q;
}

static cq_contact reference(const cq_pair_query *q)
{
    cq_contact c = {.algorithm = CQ_ALG_GJK_EPA, .sat_axis = -1, .normal_axis = -1};
    cq__convex_pair_epa(q, &c);
    return c;
}

/* Every point on B's surface and, moved by its depth along n, on A's; no
 * deeper than the contact. Rounded cores: the surfaces are radius out. */
static void check_points(const cq_contact *c, const cq_hull *a, const cq_xform *xa, const cq_hull *b,
                         const cq_xform *xb, double tol, int pair)
{
    for (int k = 0; k < c->point_count; k++) {
        const cq_contact_point *p = &c->points[k];
        double sb = hull_sdf(b, xb, p->position) - b->radius;
        double sa = hull_sdf(a, xa, cq_mad(p->position, c->normal, p->depth)) - a->radius;
        ck_assert_msg(fabs(sb) <= tol && fabs(sa) <= tol, "pair %d point %d: off the surfaces by %g, %g", pair, k, sb,
                      sa);
        ck_assert_msg(p->depth <= c->depth + tol, "pair %d point %d deeper than the contact", pair, k);
    }
}

/* The SAT answer of one pair against the reference and the oracles. */
static void compare(const cq_contact *s, const cq_contact *e, const cq_pair_query *q, int pair, int *same_axis)
{
    const cq_hull *a = q->a->convex.hull, *b = q->b->convex.hull;
    double size = pair_size(a, b), tol = DEPTH_TOL * size, r = a->radius + b->radius;
    /* Within rounding of touching either verdict is right (GJK's touching
     * band, 1e-9, and the coordinates' noise); elsewhere they agree. */
    double signed_distance = e->has_distance ? e->distance : -e->depth;
    if (fabs(signed_distance) > 1e-9 * size)
        ck_assert_msg(s->overlap == e->overlap, "pair %d: sat overlap %d, epa %d", pair, s->overlap, e->overlap);
    if (s->algorithm != CQ_ALG_SAT_HULL)
        return;
    ck_assert(s->has_normal && s->fallback_reason == CQ_FB_NONE);
    /* The depth is the overlap along the normal (an independent measure),
     * never less than the least penetration, and above it only by the
     * face preference's margin. */
    double along = support_overlap(a, &q->xa, b, &q->xb, s->normal) + r;
    ck_assert_msg(fabs(s->depth - along) <= tol, "pair %d: depth %g, overlap along its normal %g", pair, s->depth,
                  along);
    ck_assert_msg(s->depth >= e->depth - tol, "pair %d: sat depth %g below epa's %g", pair, s->depth, e->depth);
    ck_assert_msg(s->depth - r <= 1.06 * (e->depth - r) + tol, "pair %d: sat depth %g, epa %g", pair, s->depth,
                  e->depth);
    if (fabs(s->depth - e->depth) <= tol) {
        *same_axis += cq_dot(s->normal, e->normal) >= NORMAL_COS;
    } else {
        /* A deeper answer only where a face was preferred to a nearly tied
         * edge: EPA's direction, measured independently, is no better by
         * more than the preference margin. */
        double e_along = support_overlap(a, &q->xa, b, &q->xb, e->normal) + r;
        ck_assert_msg(s->depth - r <= 1.06 * (e_along - r) + tol, "pair %d: normals apart and sat depth %g vs %g",
                      pair, s->depth, e_along);
    }
    if (!q->skip_manifold) {
        check_points(e, a, &q->xa, b, &q->xb, POINT_TOL * size, pair);
        ck_assert_int_ge(s->point_count, 1);
        check_points(s, a, &q->xa, b, &q->xb, POINT_TOL * size, pair);
    }
}

/* n points in a random ellipsoid of semi-axes up to `scale`. */
static cq_hull *random_hull(tu_rng *rng, int n, double scale, double radius)
{
    cq_vec3 pts[64], ax = cq_v3(tu_uniform(rng, 0.3, 1), tu_uniform(rng, 0.3, 1), tu_uniform(rng, 0.3, 1));
    for (int k = 0; k < n; k++) {
        cq_vec3 p;
        do
            p = cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1));
        while (cq_len2(p) > 1);
        pts[k] = cq_v3(p.x * ax.x * scale, p.y * ax.y * scale, p.z * ax.z * scale);
    }
    return cx_hull_of(pts, n, radius);
}

/* B's position along unit u from A's where the reference says the two
 * just touch (bisection on its signed distance). */
static double touching_offset(const cq_shape *sa, const cq_xform *xa, const cq_shape *sb, cq_mat3 rb, cq_vec3 u,
                              double far)
{
    double lo = 0, hi = far;
    for (int it = 0; it < 50; it++) {
        double mid = 0.5 * (lo + hi);
        cq_pair_query q = canonical(sa, *xa, sb, (cq_xform){cq_mad(xa->p, u, mid), rb});
        q.skip_manifold = true;
        cq_contact c = reference(&q);
        if (c.overlap && !c.has_distance)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Two hulls in a random pose at several placements along one direction:
 * deep, shallow, within a hair of touching on both sides, separated. */
static void differential_of(tu_rng *rng, const cq_hull *ha, const cq_hull *hb, bool skip_manifold, int *pairs,
                            int *sat, int *same_axis)
{
    static const double depth[] = {0.5, 0.2, 0.05, 1e-3, 1e-5, 0, -1e-5, -1e-3, -0.2};
    cq_shape sa = cx_convex(ha), sb = cx_convex(hb);
    cq_xform xa = tu_pose(rng, 5);
    cq_mat3 rb = tu_rotation(rng);
    cq_vec3 u = cq_mul_mv(&rb, cq_v3(1, 0, 0)); /* any unit direction */
    double size = pair_size(ha, hb), t0 = touching_offset(&sa, &xa, &sb, rb, u, 4 * size);
    for (size_t k = 0; k < sizeof depth / sizeof depth[0]; k++) {
        cq_xform xb = {cq_mad(xa.p, u, t0 - depth[k] * size), rb};
        cq_pair_query q = canonical(&sa, xa, &sb, xb);
        q.skip_manifold = skip_manifold;
        cq_contact s = cx_run(&q), e = reference(&q);
        compare(&s, &e, &q, *pairs, same_axis);
        ++*pairs;
        *sat += s.algorithm == CQ_ALG_SAT_HULL;
    }
}

/* differential_of on two random hulls of 4 to 8 points (up to about 12
 * faces, around the SAT's face limit). */
static void differential(tu_rng *rng, double radius, bool skip_manifold, int *pairs, int *sat, int *same_axis)
{
    cq_hull *ha = random_hull(rng, 4 + (int)tu_uniform(rng, 0, 5), tu_uniform(rng, 0.5, 2), radius);
    cq_hull *hb = random_hull(rng, 4 + (int)tu_uniform(rng, 0, 5), tu_uniform(rng, 0.5, 2), radius);
    differential_of(rng, ha, hb, skip_manifold, pairs, sat, same_axis);
    cq_hull_free(ha), cq_hull_free(hb);
}

/* Hulls with polygon faces and odd face counts (a square pyramid and a
 * triangular prism, 5 faces each; a box, 6; a pentagonal prism, 7), where
 * triangulated random hulls always have an even count. */
START_TEST(polygon_faced_hulls_agree_with_gjk_epa)
{
    cq_vec3 pyramid[5] = {cq_v3(1, 1, 0), cq_v3(-1, 1, 0), cq_v3(-1, -1, 0), cq_v3(1, -1, 0), cq_v3(0, 0, 1.3)};
    cq_vec3 prism3[6], prism5[10];
    for (int k = 0; k < 3; k++) {
        double t = 2 * CQ_PI * k / 3;
        prism3[k] = cq_v3(cos(t), sin(t), -0.8), prism3[3 + k] = cq_v3(cos(t), sin(t), 0.8);
    }
    for (int k = 0; k < 5; k++) {
        double t = 2 * CQ_PI * k / 5;
        prism5[k] = cq_v3(cos(t), sin(t), -0.5), prism5[5 + k] = cq_v3(cos(t), sin(t), 0.5);
    }
    cq_hull *h[4] = {cx_hull_of(pyramid, 5, 0), cx_hull_of(prism3, 6, 0), cx_box_hull(cq_v3(0.7, 0.4, 1)),
                     cx_hull_of(prism5, 10, 0)};
    ck_assert_int_eq(h[0]->face_count, 5);
    ck_assert_int_eq(h[1]->face_count, 5);
    ck_assert_int_eq(h[3]->face_count, 7);
    tu_rng rng = {4242};
    int pairs = 0, sat = 0, same = 0;
    for (int i = 0; i < 400; i++)
        differential_of(&rng, h[i % 4], h[(i / 4) % 4], i % 5 == 4, &pairs, &sat, &same);
    printf("sat_hull: %d polygon-faced pairs, %d by the SAT\n", pairs, sat);
    ck_assert_int_ge(sat, pairs / 3);
    for (int k = 0; k < 4; k++)
        cq_hull_free(h[k]);
}
END_TEST

START_TEST(random_pairs_agree_with_gjk_epa)
{
    tu_rng rng = {2813};
    int pairs = 0, sat = 0, same = 0;
    for (int i = 0; i < 600; i++)
        differential(&rng, 0, i % 4 == 3, &pairs, &sat, &same);
    printf("sat_hull: %d pairs, %d by the SAT, %d on EPA's axis\n", pairs, sat, same);
    ck_assert_int_ge(sat, pairs / 4); /* the deep and shallow placements of the small hulls */
    /* The rest chose a face within the preference margin of a better edge
     * pair (each checked in compare): on random hulls about one in eight. */
    ck_assert_int_ge(same, sat * 4 / 5);
}
END_TEST

START_TEST(rounded_pairs_agree_with_gjk_epa)
{
    tu_rng rng = {977};
    int pairs = 0, sat = 0, same = 0;
    for (int i = 0; i < 300; i++)
        differential(&rng, tu_uniform(&rng, 0.01, 0.3), false, &pairs, &sat, &same);
    printf("sat_hull: %d rounded pairs, %d by the SAT\n", pairs, sat);
    ck_assert_int_ge(sat, pairs / 10);
}
END_TEST

/* Two unit cubes (half 1) flush face to face at overlap d along x: depth
 * d, normal +x, the four corners of the shared square. */
START_TEST(cubes_face_to_face)
{
    cq_hull *h = cx_box_hull(cq_v3(1, 1, 1));
    cq_shape s = cx_convex(h);
    static const double d[] = {0.5, 0.1, 1e-3};
    for (int k = 0; k < 3; k++) {
        cq_contact c = cx_pair(&s, cq_xform_identity(), &s, (cq_xform){cq_v3(2 - d[k], 0.3, 0), cq_mat3_identity()});
        ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_hull");
        ck_assert_double_eq_tol(c.depth, d[k], 1e-12);
        tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-12);
        ck_assert_int_eq(c.point_count, 4);
        for (int p = 0; p < 4; p++) {
            ck_assert_double_eq_tol(c.points[p].depth, d[k], 1e-12);
            ck_assert(fabs(c.points[p].position.y - 0.3) > 0.7 - 1e-9 && fabs(c.points[p].position.z) > 1 - 1e-9);
        }
    }
    cq_hull_free(h);
}
END_TEST

/* Cube A turned 45 degrees about z (an edge along z at x = sqrt 2), cube B
 * turned 45 degrees about y (an edge along y at x = c - sqrt 2): the edges
 * cross, the axis of least penetration is x with overlap d, and the one
 * contact point is B's edge point closest to A's edge, (sqrt 2 - d, 0, 0). */
START_TEST(cubes_edge_to_edge)
{
    cq_hull *h = cx_box_hull(cq_v3(1, 1, 1));
    cq_shape s = cx_convex(h);
    double r2 = sqrt(2), d = 0.05;
    cq_xform xa = {.p = cq_v3(0, 0, 0), .r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 4)};
    cq_xform xb = {.p = cq_v3(2 * r2 - d, 0, 0), .r = tu_axis_angle(cq_v3(0, 1, 0), CQ_PI / 4)};
    cq_contact c = cx_pair(&s, xa, &s, xb);
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_hull");
    ck_assert_double_eq_tol(c.depth, d, 1e-12);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-12);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(r2 - d, 0, 0), 1e-12);
    ck_assert_double_eq_tol(c.points[0].depth, d, 1e-12);
    cq_hull_free(h);
}
END_TEST

/* A regular tetrahedron standing on a face, sunk d into a box's top: depth
 * d, normal down from the tetrahedron (A) to the box (B), its base's three
 * corners as the points. */
START_TEST(tetrahedron_on_a_face)
{
    cq_vec3 t[4] = {cq_v3(1, 0, 0), cq_v3(-0.5, sqrt(3) / 2, 0), cq_v3(-0.5, -sqrt(3) / 2, 0), cq_v3(0, 0, 1.5)};
    cq_hull *ht = cx_hull_of(t, 4, 0), *hb = cx_box_hull(cq_v3(3, 3, 1));
    cq_shape st = cx_convex(ht), sb = cx_convex(hb);
    double d = 0.02;
    cq_contact c = cx_pair(&st, (cq_xform){cq_v3(0.2, -0.1, 1 - d), cq_mat3_identity()}, &sb, cq_xform_identity());
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_hull");
    ck_assert_double_eq_tol(c.depth, d, 1e-12);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, -1), 1e-12);
    ck_assert_int_eq(c.point_count, 3);
    for (int p = 0; p < 3; p++) {
        ck_assert_double_eq_tol(c.points[p].position.z, 1, 1e-12); /* on the box's top */
        ck_assert_double_eq_tol(c.points[p].depth, d, 1e-12);
    }
    cq_hull_free(ht), cq_hull_free(hb);
}
END_TEST

/* Flush cubes tie A's face and B's face: with no cache the tie goes to A's
 * face; a cache naming B's face keeps it (either order of the query, the
 * identity swapped with the shapes); one naming a side face, twice as
 * deep, is not kept; nonsense axes are ignored. */
START_TEST(hysteresis_keeps_the_previous_face)
{
    cq_hull *h = cx_box_hull(cq_v3(1, 1, 1)), *g = cx_box_hull(cq_v3(1.5, 1, 1));
    cq_shape sa = cx_convex(h), sb = cx_convex(g);
    cq_xform xa = cq_xform_identity(), xb = {cq_v3(0, 0, 1.9), cq_mat3_identity()};
    cq_contact c0 = cx_pair(&sa, xa, &sb, xb);
    ck_assert_int_ge(c0.normal_axis, 0);
    tu_assert_vec_eq_tol(c0.normal, cq_v3(0, 0, 1), 1e-12);
    ck_assert_int_eq(c0.normal_axis & 3, 0); /* A's face wins the tie */
    ck_assert(h->faces[c0.normal_axis >> 2].normal.z > 0.99);
    int bottom = -1; /* B's face looking down at A: the tie's other side */
    for (int f = 0; f < g->face_count; f++)
        bottom = g->faces[f].normal.z < -0.99 ? f : bottom;
    ck_assert_int_ge(bottom, 0);
    cq_pair_cache cache = {true, c0.normal, true, bottom << 2 | 1};
    cq_pair_query q = {.a = &sa, .xa = xa, .b = &sb, .xb = xb, .cache = &cache};
    cq_contact c1 = cx_run(&q);
    ck_assert_int_eq(c1.normal_axis, bottom << 2 | 1);
    tu_assert_vec_eq_tol(c1.normal, cq_v3(0, 0, 1), 1e-12);
    ck_assert_double_eq_tol(c1.depth, 0.1, 1e-12);
    /* The same cache seen from the other order names the same face. */
    cq_pair_cache mirrored = {true, cq_v3(0, 0, -1), true, cq__hull_axis_swap(bottom << 2 | 1)};
    cq_pair_query qs = {.a = &sb, .xa = xb, .b = &sa, .xb = xa, .cache = &mirrored};
    cq_contact cs = cx_run(&qs);
    ck_assert_int_eq(cs.normal_axis, bottom << 2);
    tu_assert_vec_eq_tol(cs.normal, cq_v3(0, 0, -1), 1e-12);
    /* A side face of the box B (along x, overlap 2.5) is past the band. */
    for (int f = 0; f < g->face_count; f++) {
        cq_vec3 n = g->faces[f].normal;
        if (n.x > 0.5) {
            cq_pair_cache side = {true, cq_v3(0, 0, 1), true, f << 2 | 1};
            cq_pair_query qq = {.a = &sa, .xa = xa, .b = &sb, .xb = xb, .cache = &side};
            cq_contact c = cx_run(&qq);
            tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-12);
        }
    }
    static const int junk[] = {-7, 3, 1 << 2 | 1, 999 << 2, 1 << 30, 0x7fffffff};
    for (int k = 0; k < 6; k++) {
        cq_pair_cache bad = {true, cq_v3(0, 0, 1), true, junk[k]};
        q.cache = &bad;
        cq_contact c = cx_run(&q);
        ck_assert_double_eq_tol(c.depth, 0.1, 1e-12);
        tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-12);
    }
    cq_hull_free(h), cq_hull_free(g);
}
END_TEST

/* A face kept by the cache while a neighbour grows slightly better: a box
 * on a wider box, tilted back and forth by a degree, keeps one axis. */
START_TEST(hysteresis_holds_under_jitter)
{
    cq_hull *h = cx_box_hull(cq_v3(0.5, 0.5, 0.5)), *g = cx_box_hull(cq_v3(0.5, 0.5, 0.5));
    cq_shape sa = cx_convex(h), sb = cx_convex(g);
    cq_pair_cache cache = {0};
    int first = -1, flips = 0;
    for (int i = 0; i < 40; i++) {
        double tilt = (i % 2 ? 1 : -1) * 0.3 * CQ_PI / 180;
        cq_xform xb = {cq_v3(0.01 * i, 0, 0.99), tu_axis_angle(cq_v3(0, 1, 0), tilt)};
        cq_pair_query q = {.a = &sa, .xa = cq_xform_identity(), .b = &sb, .xb = xb, .cache = &cache};
        cq_contact c = cx_run(&q);
        ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_hull");
        if (first < 0)
            first = c.normal_axis;
        flips += c.normal_axis != first;
        cache = cq_pair_cache_of(&c);
    }
    ck_assert_int_eq(flips, 0);
    cq_hull_free(h), cq_hull_free(g);
}
END_TEST

/* Which path answers: overlapping small solids the SAT, separated pairs
 * GJK, hulls past CQ_SAT_HULL_MAX_FACES and flat hulls EPA. */
START_TEST(dispatch_by_size_and_state)
{
    cq_hull *cube = cx_box_hull(cq_v3(1, 1, 1));
    cq_vec3 ring[80];
    for (int k = 0; k < 40; k++) { /* a 40-gon prism: 42 faces */
        double t = 2 * CQ_PI * k / 40;
        ring[k] = cq_v3(cos(t), sin(t), -1), ring[40 + k] = cq_v3(cos(t), sin(t), 1);
    }
    cq_hull *prism = cx_hull_of(ring, 80, 0), *flat = cx_hull_of(ring, 40, 0);
    ck_assert_int_gt(prism->face_count, CQ_SAT_HULL_MAX_FACES);
    cq_shape sc = cx_convex(cube), sp = cx_convex(prism), sf = cx_convex(flat);
    cq_xform o = cq_xform_identity(), near = {cq_v3(1.5, 0.2, 0.1), cq_mat3_identity()};
    cq_xform far = {cq_v3(5, 0, 0), cq_mat3_identity()};
    ck_assert_int_eq(cx_pair(&sc, o, &sc, near).algorithm, CQ_ALG_SAT_HULL);
    ck_assert_int_eq(cx_pair(&sc, o, &sc, far).algorithm, CQ_ALG_GJK_EPA);
    ck_assert_int_eq(cx_pair(&sc, o, &sp, near).algorithm, CQ_ALG_GJK_EPA);
    ck_assert_int_eq(cx_pair(&sf, o, &sc, near).algorithm, CQ_ALG_GJK_EPA);
    ck_assert_str_eq(cq_algorithm_name(CQ_ALG_SAT_HULL), "sat_hull");
    /* The counters count the path that answered. */
    cq_counters ctr = {0};
    cq_pair_query q = {.a = &sc, .xa = o, .b = &sc, .xb = near, .counters = &ctr};
    cx_run(&q);
    q.xb = far;
    cx_run(&q);
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&ctr, sum);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_HULL], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_GJK_EPA], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_EPA_CALLS], 0);
    cq_hull_free(cube), cq_hull_free(prism), cq_hull_free(flat);
}
END_TEST

/* Swapping A and B mirrors the answer: the normal negated, the axis named
 * from the other hull, the depth the same. */
START_TEST(swap_mirrors_the_answer)
{
    tu_rng rng = {55};
    int sat = 0;
    for (int i = 0; i < 300; i++) {
        cq_hull *ha = random_hull(&rng, 6, 1, 0), *hb = random_hull(&rng, 6, 1, 0);
        cq_shape sa = cx_convex(ha), sb = cx_convex(hb);
        cq_xform xa = tu_pose(&rng, 0.3), xb = tu_pose(&rng, 0.3);
        cq_contact c = cx_pair(&sa, xa, &sb, xb), m = cx_pair(&sb, xb, &sa, xa);
        ck_assert_int_eq(c.overlap, m.overlap);
        ck_assert_int_eq(c.algorithm, m.algorithm);
        if (c.algorithm == CQ_ALG_SAT_HULL) {
            sat++;
            ck_assert_double_eq(c.depth, m.depth);
            tu_assert_vec_eq_tol(c.normal, cq_neg(m.normal), 1e-15);
            ck_assert_int_eq(c.normal_axis, cq__hull_axis_swap(m.normal_axis));
        }
        cq_hull_free(ha), cq_hull_free(hb);
    }
    ck_assert_int_ge(sat, 100);
}
END_TEST

/* Hulls for the preference and hysteresis cases: boxes, whose face
 * ties and near ties make the SAT choose between axes most, polygon
 * faces, and random ones. The caller frees them. */
static void preference_hulls(tu_rng *rng, cq_hull *h[5])
{
    cq_vec3 pyramid[5] = {cq_v3(1, 1, 0), cq_v3(-1, 1, 0), cq_v3(-1, -1, 0), cq_v3(1, -1, 0), cq_v3(0, 0, 1.3)};
    cq_vec3 prism5[10];
    for (int k = 0; k < 5; k++) {
        double t = 2 * CQ_PI * k / 5;
        prism5[k] = cq_v3(cos(t), sin(t), -0.5), prism5[5 + k] = cq_v3(cos(t), sin(t), 0.5);
    }
    h[0] = cx_box_hull(cq_v3(0.5, 0.5, 0.5)), h[1] = cx_box_hull(cq_v3(1.2, 0.08, 0.05));
    h[2] = cx_hull_of(pyramid, 5, 0), h[3] = cx_hull_of(prism5, 10, 0), h[4] = random_hull(rng, 8, 1, 0);
}

/* Overlapping poses of two of those hulls, and a previous face of
 * either (the cache's hysteresis keeps it within its band, so the chosen
 * face is often not the least penetrating). */
static void preference_pair(tu_rng *rng, cq_hull *const h[5], const cq_hull **a, const cq_hull **b, cq_xform *xa,
                            cq_xform *xb, int *prev)
{
    *a = h[(int)tu_uniform(rng, 0, 5)], *b = h[(int)tu_uniform(rng, 0, 5)];
    *xa = tu_pose(rng, 3);
    *xb = (cq_xform){cq_mad(xa->p, cq_mul_mv(&xa->r, tu_rotation(rng).c[0]), tu_uniform(rng, 0.3, 1.6)),
                     tu_rotation(rng)};
    int kind = tu_uniform(rng, 0, 1) < 0.5, faces = kind ? (*b)->face_count : (*a)->face_count;
    *prev = (int)tu_uniform(rng, 0, faces) << 2 | kind;
}

/* One pair's chosen_holds against the clip itself (cq__clip_face_along
 * on the world-space faces cq__shape_face picks): where the SAT says the
 * chosen face's clip keeps a point, the clip keeps one at a skin of a
 * hair above the reference plane; where it does not, none at a hair
 * below. Counts the verdicts of pairs whose chosen and least axes differ. */
static void holds_against_clip(const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb, int prev,
                               int *held, int *refused)
{
    cq_hull_sat s;
    if (!cq__hull_sat_suits(a, b) || !cq__hull_sat_run(a, xa, b, xb, prev, &s) || s.chosen.axis == s.least.axis)
        return;
    int kind = s.chosen.axis & 3; /* the axis identity's kind: 0 A's face, 1 B's */
    ck_assert_int_lt(kind, 2);
    cq_shape sa = cx_convex(a), sb = cx_convex(b);
    cq_vec3 n = s.chosen.normal;
    cq_face fa, fb;
    ck_assert(cq__shape_face(&sa, xa, n, &fa) && cq__shape_face(&sb, xb, cq_neg(n), &fb));
    const cq_face *ref = kind ? &fb : &fa, *inc = kind ? &fa : &fb;
    ck_assert_int_eq(ref->fid, s.chosen.axis >> 2);
    cq_vec3 dir = kind ? cq_neg(n) : n;
    double tol = 1e-9 * pair_size(a, b);
    cq_contact_point pts[CQ_CLIP_MAX];
    if (s.chosen_holds)
        ck_assert_msg(cq__clip_face_along(ref, inc, dir, tol, false, pts) > 0, "held, but clips nothing");
    else
        ck_assert_msg(cq__clip_face_along(ref, inc, dir, -tol, false, pts) == 0, "refused, but clips a point");
    *held += s.chosen_holds, *refused += !s.chosen_holds;
}

/* A small cube (half 0.2) tilted about y by just over 45 degrees, its
 * lowest edge just past the top edge of a big cube (half 1, at the
 * origin; x > 1), so its face most against the top lies beyond the top
 * face and it enters the big cube through its steeper face, whose axis is
 * the least. A cache naming the top face keeps it (its penetration is
 * within the hysteresis band: x - 1 below 0.02 (1 - z)), and its clip
 * keeps nothing: the case where the least axis answers instead. */
static cq_xform over_the_edge(tu_rng *rng, const cq_hull *small)
{
    cq_mat3 r = tu_axis_angle(cq_v3(0, 1, 0), tu_uniform(rng, 45.3, 46.5) * CQ_PI / 180);
    double z = tu_uniform(rng, 0.85, 0.99);
    cq_vec3 corner = cq_v3(1 + tu_uniform(rng, 0, 0.02) * (1 - z), tu_uniform(rng, -0.5, 0.5), z);
    cq_vec3 low = cq_v3(INFINITY, 0, INFINITY); /* the small cube's lowest corner, posed at the origin */
    for (int k = 0; k < small->vertex_count; k++) {
        cq_vec3 v = cq_mul_mv(&r, small->vertices[k]);
        low = v.z < low.z ? v : low;
    }
    return (cq_xform){cq_sub(corner, low), r};
}

/* The face of h whose normal is +z. */
static int top_face(const cq_hull *h)
{
    int top = -1;
    for (int f = 0; f < h->face_count; f++)
        top = h->faces[f].normal.z > 0.99 ? f : top;
    return top;
}

START_TEST(chosen_holds_is_the_clips_verdict)
{
    tu_rng rng = {6061};
    cq_hull *h[5];
    preference_hulls(&rng, h);
    int held = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        const cq_hull *a, *b;
        cq_xform xa, xb;
        int prev;
        preference_pair(&rng, h, &a, &b, &xa, &xb, &prev);
        holds_against_clip(a, &xa, b, &xb, prev, &held, &refused);
    }
    ck_assert_int_ge(held, 1000);
    /* Refusals, over_the_edge. */
    cq_hull *big = cx_box_hull(cq_v3(1, 1, 1)), *small = cx_box_hull(cq_v3(0.2, 0.2, 0.2));
    int top = top_face(big), refused_before = refused;
    cq_xform o = cq_xform_identity();
    for (int i = 0; i < 400; i++) {
        cq_xform xb = over_the_edge(&rng, small);
        holds_against_clip(big, &o, small, &xb, top << 2, &held, &refused);
    }
    printf("sat_hull: chosen face held %d times, refused %d (%d over the edge)\n", held, refused,
           refused - refused_before);
    ck_assert_int_ge(refused - refused_before, 300);
    cq_hull_free(big), cq_hull_free(small);
    for (int k = 0; k < 5; k++)
        cq_hull_free(h[k]);
}
END_TEST

/* skip_manifold leaves out the points and changes nothing else, bit for
 * bit, where the SAT chooses between a preferred face and the least
 * penetrating axis (the clip's verdict decides which answers). */
START_TEST(skip_manifold_changes_no_number)
{
    tu_rng rng = {7177};
    cq_hull *h[5];
    preference_hulls(&rng, h);
    int sat = 0, other = 0;
    for (int i = 0; i < 20000; i++) {
        const cq_hull *a, *b;
        cq_xform xa, xb;
        int prev;
        preference_pair(&rng, h, &a, &b, &xa, &xb, &prev);
        cq_shape sa = cx_convex(a), sb = cx_convex(b);
        cq_pair_cache cache = {false, cq_v3(0, 0, 0), true, prev};
        cq_pair_query q = {.a = &sa, .xa = xa, .b = &sb, .xb = xb, .cache = &cache};
        cq_contact full = cx_run(&q);
        q.skip_manifold = true;
        cq_contact lean = cx_run(&q);
        ck_assert_int_eq(lean.point_count, 0);
        ck_assert_int_eq(lean.algorithm, full.algorithm);
        ck_assert_int_eq(lean.overlap, full.overlap);
        ck_assert_msg(lean.normal_axis == full.normal_axis && memcmp(&lean.depth, &full.depth, sizeof lean.depth) == 0 &&
                          memcmp(&lean.normal, &full.normal, sizeof lean.normal) == 0,
                      "pair %d: skip_manifold changed the axis, depth or normal", i);
        sat += full.algorithm == CQ_ALG_SAT_HULL;
        other += full.algorithm == CQ_ALG_SAT_HULL && full.normal_axis != prev;
    }
    cq_hull *big = cx_box_hull(cq_v3(1, 1, 1)), *small = cx_box_hull(cq_v3(0.2, 0.2, 0.2));
    cq_shape sbig = cx_convex(big), ssmall = cx_convex(small);
    int top = top_face(big), least = 0;
    for (int i = 0; i < 400; i++) {
        cq_pair_cache cache = {false, cq_v3(0, 0, 0), true, top << 2};
        cq_pair_query q = {.a = &sbig, .xa = cq_xform_identity(), .b = &ssmall, .xb = over_the_edge(&rng, small),
                           .cache = &cache};
        cq_contact full = cx_run(&q);
        q.skip_manifold = true;
        cq_contact lean = cx_run(&q);
        ck_assert_msg(lean.normal_axis == full.normal_axis && memcmp(&lean.depth, &full.depth, sizeof lean.depth) == 0 &&
                          memcmp(&lean.normal, &full.normal, sizeof lean.normal) == 0,
                      "over the edge %d: skip_manifold changed the axis, depth or normal", i);
        least += full.normal_axis != top << 2;
    }
    cq_hull_free(big), cq_hull_free(small);
    ck_assert_int_eq(least, 400); /* the top face's clip keeps nothing */
    printf("sat_hull: %d SAT pairs with a previous face, %d answered by another axis\n", sat, other);
    ck_assert_int_ge(sat, 5000);
    ck_assert_int_ge(other, 1000);
    for (int k = 0; k < 5; k++)
        cq_hull_free(h[k]);
}
END_TEST

/* The best separation over every candidate axis, by brute force from the
 * world-space vertices: the face normals of both hulls and the cross
 * product of every edge pair, none pruned, each axis both ways. For two
 * polytopes it is their signed distance when apart, and minus the
 * penetration depth otherwise (the Minkowski difference's face normals
 * are among the axes). */
static double brute_force_separation(const cq_hull *a, const cq_xform *xa, const cq_hull *b, const cq_xform *xb)
{
    double best = -INFINITY;
    for (int f = 0; f < a->face_count + b->face_count; f++) {
        cq_vec3 n = f < a->face_count ? cq_mul_mv(&xa->r, a->faces[f].normal)
                                      : cq_mul_mv(&xb->r, b->faces[f - a->face_count].normal);
        best = fmax(best, fmax(-support_overlap(a, xa, b, xb, n), -support_overlap(a, xa, b, xb, cq_neg(n))));
    }
    for (int i = 0; i < a->edge_count; i++)
        for (int j = 0; j < b->edge_count; j++) {
            const cq_hull_edge *ea = &a->edges[i], *eb = &b->edges[j];
            cq_vec3 da = cq_mul_mv(&xa->r, cq_sub(a->vertices[ea->v1], a->vertices[ea->v0]));
            cq_vec3 db = cq_mul_mv(&xb->r, cq_sub(b->vertices[eb->v1], b->vertices[eb->v0]));
            cq_vec3 n = cq_cross(da, db);
            if (cq_len2(n) <= 1e-12 * cq_len2(da) * cq_len2(db))
                continue;
            n = cq_scale(n, 1 / cq_len(n));
            best = fmax(best, fmax(-support_overlap(a, xa, b, xb, n), -support_overlap(a, xa, b, xb, cq_neg(n))));
        }
    return best;
}

/* The SAT reads its Gauss-map data (the edges' arcs and face masks) from
 * the hull's block and copies or derives the rest; whatever that layout,
 * its least penetration must be the unpruned SAT's, and an apart verdict
 * the unpruned SAT's too: a mask or arc out of place drops the axis that
 * reaches the depth (or the one that separates). */
START_TEST(least_axis_is_the_unpruned_sat)
{
    tu_rng rng = {9041};
    int overlapping = 0, apart = 0;
    for (int i = 0; i < 6000; i++) {
        cq_hull *a = i % 3 ? random_hull(&rng, 4 + i % 5, 1, 0) : cx_box_hull(cq_v3(0.6, 0.3, 0.9));
        cq_hull *b = i % 2 ? random_hull(&rng, 4 + i % 4, 0.7, 0) : cx_box_hull(cq_v3(0.5, 0.5, 0.2));
        cq_xform xa = tu_pose(&rng, 1), xb = tu_pose(&rng, 1);
        if (cq__hull_sat_suits(a, b)) {
            cq_hull_sat s;
            double brute = brute_force_separation(a, &xa, b, &xb), tol = 1e-9 * pair_size(a, b);
            if (cq__hull_sat_run(a, &xa, b, &xb, -1, &s)) {
                ck_assert_msg(fabs(s.least.gap - brute) <= tol, "pair %d: least gap %.17g, unpruned %.17g", i,
                              s.least.gap, brute);
                overlapping++;
            } else {
                ck_assert_msg(brute > -tol, "pair %d: apart, but the unpruned SAT finds %.17g", i, brute);
                apart++;
            }
        }
        cq_hull_free(a), cq_hull_free(b);
    }
    printf("sat_hull: %d overlapping and %d apart against the unpruned SAT\n", overlapping, apart);
    ck_assert_int_ge(overlapping, 1000);
    ck_assert_int_ge(apart, 500);
}
END_TEST

Suite *sat_hull_suite(void)
{
    Suite *s = suite_create("sat_hull");
    TCase *tc = tcase_create("sat_hull");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_pairs_agree_with_gjk_epa);
    tcase_add_test(tc, rounded_pairs_agree_with_gjk_epa);
    tcase_add_test(tc, polygon_faced_hulls_agree_with_gjk_epa);
    tcase_add_test(tc, cubes_face_to_face);
    tcase_add_test(tc, cubes_edge_to_edge);
    tcase_add_test(tc, tetrahedron_on_a_face);
    tcase_add_test(tc, hysteresis_keeps_the_previous_face);
    tcase_add_test(tc, hysteresis_holds_under_jitter);
    tcase_add_test(tc, dispatch_by_size_and_state);
    tcase_add_test(tc, swap_mirrors_the_answer);
    tcase_add_test(tc, chosen_holds_is_the_clips_verdict);
    tcase_add_test(tc, skip_manifold_changes_no_number);
    tcase_add_test(tc, least_axis_is_the_unpruned_sat);
    suite_add_tcase(s, tc);
    return s;
}
