/* Closed-form pairs. Oracles: analytic answers and a second distance
 * formula, plus the contract's symmetries (A/B swap, rigid motion) over
 * random pairs. The closest-point primitives are in check_geom.c. */
#include "geom.h"
#include "testutil.h"

#define TOL 1e-9

static cq_shape sphere(double r) { return (cq_shape){.type = CQ_SPHERE, .sphere = {r}}; }
static cq_shape capsule(double r, double hh) { return (cq_shape){.type = CQ_CAPSULE, .capsule = {r, hh}}; }
static cq_shape box(double x, double y, double z) { return (cq_shape){.type = CQ_BOX, .box = {cq_v3(x, y, z)}}; }
static cq_shape tri(cq_vec3 a, cq_vec3 b, cq_vec3 c) { return (cq_shape){.type = CQ_TRIANGLE, .triangle = {{a, b, c}}}; }
static cq_shape plane(cq_vec3 n, double d) { return (cq_shape){.type = CQ_PLANE, .plane = {n, d}}; }

static cq_xform at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

/* A pose whose local Y (a capsule's axis) points along world Z. */
static cq_xform along_z(double x, double y, double z)
{
    cq_xform t = at(x, y, z);
    t.r = tu_axis_angle(cq_v3(1, 0, 0), CQ_PI / 2);
    return t;
}

static cq_vec3 rvec(tu_rng *rng, double r)
{
    return cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
}

static cq_contact run(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb, double skin,
                      const cq_pair_cache *cache, cq_counters *ctr)
{
    cq_pair_query q = {.a = a, .xa = xa, .b = b, .xb = xb, .skin = skin, .cache = cache, .counters = ctr};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    return c;
}

static cq_contact pair(const cq_shape *a, cq_xform xa, const cq_shape *b, cq_xform xb)
{
    return run(a, xa, b, xb, 0, NULL, NULL);
}

static uint64_t counter(const cq_counters *c, int slot)
{
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(c, sum);
    return sum[slot];
}

/* Oracle: distance from p to segment [a, b] by ternary search (convex in t). */
START_TEST(concentric_spheres_drop_without_cache)
{
    cq_shape a = sphere(1), b = sphere(0.5);
    cq_counters ctr = {0};
    cq_contact c = run(&a, at(1, 2, 3), &b, at(1, 2, 3), 0, NULL, &ctr);
    ck_assert(c.overlap && !c.has_normal && !c.has_distance);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_COINCIDENT);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
    ck_assert_double_eq_tol(c.depth, 1.5, TOL);
    ck_assert_int_eq(c.point_count, 0);
    ck_assert_uint_eq(counter(&ctr, CQ_CTR_ZERO_NORMALS), 1);
    ck_assert_uint_eq(counter(&ctr, CQ_CTR_TESTS + CQ_ALG_SPHERE_SPHERE), 1);
}
END_TEST

START_TEST(concentric_spheres_use_previous_normal)
{
    cq_shape a = sphere(1), b = sphere(0.5);
    cq_counters ctr = {0};
    cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(0, 0, 1)};
    cq_contact c = run(&a, at(1, 2, 3), &b, at(1, 2, 3), 0, &cache, &ctr);
    ck_assert(c.overlap && c.has_normal);
    ck_assert(c.normal.x == 0 && c.normal.y == 0 && c.normal.z == 1);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_COINCIDENT);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
    ck_assert_double_eq_tol(c.depth, 1.5, TOL);
    ck_assert_int_eq(c.point_count, 1); /* on B's surface, against the normal */
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(1, 2, 2.5), TOL);
    ck_assert_double_eq_tol(c.points[0].depth, 1.5, TOL);
    ck_assert_uint_eq(counter(&ctr, CQ_CTR_ZERO_NORMALS), 0);
}
END_TEST

START_TEST(coincident_swapped_keeps_caller_orientation)
{
    /* Capsule as A: the dispatcher swaps to sphere-capsule and back; the
     * caller's previous normal must come back as it was given. */
    cq_shape a = capsule(0.25, 1), b = sphere(0.5);
    cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(1, 0, 0)};
    cq_contact c = run(&a, at(0, 0.5, 0), &b, at(0, 0, 0), 0, &cache, NULL);
    ck_assert(c.normal.x == 1 && c.normal.y == 0 && c.normal.z == 0);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
    ck_assert_double_eq_tol(c.depth, 0.75, TOL);
    ck_assert_int_eq(c.algorithm, CQ_ALG_SPHERE_CAPSULE);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(-0.5, 0, 0), TOL); /* on the sphere (B) */
}
END_TEST

START_TEST(sphere_sphere_analytic)
{
    tu_rng rng = {3};
    for (int k = 0; k < 500; k++) {
        double ra = tu_uniform(&rng, 0, 1), rb = tu_uniform(&rng, 0, 1);
        cq_vec3 pa = rvec(&rng, 2), dir = tu_rotation(&rng).c[0];
        double d = tu_uniform(&rng, 0.01, 3);
        cq_vec3 pb = cq_mad(pa, dir, d);
        cq_shape a = sphere(ra), b = sphere(rb);
        cq_xform xa = at(pa.x, pa.y, pa.z), xb = at(pb.x, pb.y, pb.z);
        cq_contact c = pair(&a, xa, &b, xb);
        double gap = d - ra - rb;
        ck_assert(c.overlap == (gap <= 0));
        ck_assert_double_eq_tol(c.distance, fmax(gap, 0), TOL);
        ck_assert_double_eq_tol(c.depth, fmax(-gap, 0), TOL);
        tu_assert_vec_eq_tol(c.normal, dir, TOL);
        if (gap > 0) {
            ck_assert(c.has_distance);
            tu_assert_vec_eq_tol(c.witness_a, cq_mad(pa, dir, ra), TOL);
            tu_assert_vec_eq_tol(c.witness_b, cq_mad(pb, dir, -rb), TOL);
            ck_assert_int_eq(c.point_count, 0);
        } else {
            ck_assert_int_eq(c.point_count, 1);
            tu_assert_vec_eq_tol(c.points[0].position, cq_mad(pb, dir, -rb), TOL);
            ck_assert_double_eq_tol(c.points[0].depth, -gap, TOL);
            ck_assert_int_eq(c.points[0].feature.kind_a, CQ_FEAT_FACE);
            ck_assert_int_eq(c.points[0].feature.kind_b, CQ_FEAT_FACE);
        }
    }
}
END_TEST

START_TEST(sphere_capsule_analytic)
{
    cq_shape s = sphere(0.5), cap = capsule(0.25, 1);
    /* Beside the middle of the axis (capsule along Z). */
    cq_contact c = pair(&s, at(0.6, 0, 0.3), &cap, along_z(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.15, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(-1, 0, 0), TOL);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0.25, 0, 0.3), TOL);
    /* Beyond the end cap: distance from the end point. */
    c = pair(&s, at(0, 0, 3), &cap, along_z(0, 0, 0));
    ck_assert(!c.overlap);
    ck_assert_double_eq_tol(c.distance, 2 - 0.75, TOL);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(0, 0, 1.25), TOL);
}
END_TEST

START_TEST(capsules_parallel_two_points)
{
    /* Both along Y, B offset by 0.8 in x and 0.5 in y: the axes overlap on
     * y in [-0.5, 1], so the manifold holds both ends, on B's surface. */
    cq_shape a = capsule(0.5, 1), b = capsule(0.5, 1);
    cq_contact c = pair(&a, at(0, 0, 0), &b, at(0.8, 0.5, 0));
    ck_assert(c.overlap);
    ck_assert_double_eq_tol(c.depth, 0.2, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), TOL);
    ck_assert_int_eq(c.point_count, 2);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0.3, -0.5, 0), TOL);
    tu_assert_vec_eq_tol(c.points[1].position, cq_v3(0.3, 1, 0), TOL);
    ck_assert_double_eq_tol(c.points[0].depth, 0.2, TOL);
    ck_assert_double_eq_tol(c.points[1].depth, 0.2, TOL);
    /* Parallel and apart: distance and witnesses from the overlap's middle. */
    c = pair(&a, at(0, 0, 0), &b, at(1.5, 0.5, 0));
    ck_assert(!c.overlap);
    ck_assert_double_eq_tol(c.distance, 0.5, TOL);
    tu_assert_vec_eq_tol(c.witness_a, cq_v3(0.5, 0.25, 0), TOL);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(1.0, 0.25, 0), TOL);
    /* Collinear and overlapping: the cores meet, no direction, dropped. */
    c = pair(&a, at(0, 0, 0), &b, at(0, 1, 0));
    ck_assert(c.overlap && !c.has_normal);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
}
END_TEST

/* Distance of p from the axis segment of a capsule of half height hh at x
 * (local y): an oracle for the points below. */
static double axis_distance(cq_vec3 p, cq_xform x, double hh)
{
    return tu_dist_point_segment(p, cq_xform_point(&x, cq_v3(0, hh, 0)), cq_xform_point(&x, cq_v3(0, -hh, 0)));
}

/* B of capsules_parallel_two_points turned about the normal (x): by 2
 * degrees its ends drift across the normal by up to sin(2 deg), and the
 * manifold still holds both ends of the overlap, each a point of B's
 * surface whose move by its depth along the normal lands on A's surface,
 * and shallower than the contact (0.2, where the axes pass closest). By 10
 * degrees, past the line contact's 5.7, one point. (Before the convex
 * path's line contacts shared this rule, capsules took only 0.06 degrees.) */
START_TEST(capsules_nearly_parallel_two_points)
{
    cq_shape a = capsule(0.5, 1), b = capsule(0.5, 1);
    double turns[] = {2, 10};
    for (int t = 0; t < 2; t++) {
        cq_xform xb = at(0.8, 0.5, 0);
        xb.r = tu_axis_angle(cq_v3(1, 0, 0), turns[t] * CQ_PI / 180);
        cq_contact c = pair(&a, at(0, 0, 0), &b, xb);
        ck_assert(c.overlap);
        ck_assert_double_eq_tol(c.depth, 0.2, TOL);
        tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), TOL);
        ck_assert_int_eq(c.point_count, t == 0 ? 2 : 1);
        /* Each end is measured as two balls about the nearest axis points;
         * B's axis runs at 2 degrees to them, which leaves the point inside
         * B by the square of (drift x sine), about 4e-7 here. */
        for (int k = 0; t == 0 && k < 2; k++) {
            cq_contact_point p = c.points[k];
            ck_assert_double_eq_tol(axis_distance(p.position, xb, 1), 0.5, 1e-6);
            ck_assert_double_eq_tol(axis_distance(cq_mad(p.position, c.normal, p.depth), at(0, 0, 0), 1), 0.5, 1e-6);
            ck_assert(p.depth < 0.2 - 1e-5 && p.depth > 0.19);
        }
    }
}
END_TEST

/* A capsule (r 0.3, half height 0.5) 0.5 above a longer one (half height
 * 1, along x), its axis turned 4.75 degrees within the plane square to
 * the normal, the two overlapping over A's end. The balls about the
 * nearest axis points meet on each end's line, but B's ball point there
 * lay 2.5e-5 inside B (its direction leans along B's axis): each point
 * must be on B's surface, moved by its depth on A's (distance from each
 * axis, the oracle), and no deeper than the contact. Both orders. */
START_TEST(capsules_skewed_line_ends_on_both_surfaces)
{
    cq_shape a = capsule(0.3, 1), b = capsule(0.3, 0.5);
    double ang = 4.75 * CQ_PI / 180;
    cq_xform xa = {cq_v3(0, 0, 0), tu_axis_angle(cq_v3(0, 0, 1), -CQ_PI / 2)}; /* local y onto x */
    cq_mat3 turn = tu_axis_angle(cq_v3(0, 1, 0), -ang);
    cq_xform xb = {cq_v3(0.4, 0.5, 0.05), cq_mul_mm(&turn, &xa.r)};
    for (int order = 0; order < 2; order++) {
        cq_contact c = order ? pair(&b, xb, &a, xa) : pair(&a, xa, &b, xb);
        ck_assert_int_eq(c.point_count, 2);
        const cq_xform *on_b = order ? &xa : &xb, *on_a = order ? &xb : &xa;
        double hb = order ? 1 : 0.5, ha = order ? 0.5 : 1;
        for (int k = 0; k < 2; k++) {
            cq_contact_point p = c.points[k];
            ck_assert_double_eq_tol(axis_distance(p.position, *on_b, hb), 0.3, 1e-12);
            ck_assert_double_eq_tol(axis_distance(cq_mad(p.position, c.normal, p.depth), *on_a, ha), 0.3, 1e-12);
            ck_assert(p.depth <= c.depth + 1e-12);
        }
    }
}
END_TEST

START_TEST(capsules_crossing_one_point)
{
    /* A along Y, B along Z at x = 0.9: the axes cross at distance 0.9. */
    cq_shape a = capsule(0.5, 1), b = capsule(0.5, 2);
    cq_contact c = pair(&a, at(0, 0.2, 0), &b, along_z(0.9, 0, 0.4));
    ck_assert_int_eq(c.point_count, 1);
    ck_assert_double_eq_tol(c.depth, 0.1, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), TOL);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0.4, 0, 0), TOL);
    ck_assert_int_eq(c.algorithm, CQ_ALG_CAPSULE_CAPSULE);
    c = pair(&a, at(0, 0, 0), &b, along_z(1.3, 0, 0));
    ck_assert(!c.overlap);
    ck_assert_double_eq_tol(c.distance, 0.3, TOL);
    tu_assert_vec_eq_tol(c.witness_a, cq_v3(0.5, 0, 0), TOL);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(0.8, 0, 0), TOL);
}
END_TEST

/* ---- sphere-box ------------------------------------------------------------ */

/* Oracle: signed distance from a local point to a box, per-axis excess when
 * outside, minus the nearest face's distance inside. */
static double box_signed_distance(cq_vec3 l, cq_vec3 h)
{
    cq_vec3 e = cq_sub(cq_vabs(l), h);
    cq_vec3 out = cq_v3(fmax(e.x, 0), fmax(e.y, 0), fmax(e.z, 0));
    double inside = fmax(e.x, fmax(e.y, e.z));
    return inside > 0 ? cq_len(out) : inside;
}

/* The B half of the feature names the box feature that holds x. */
static void assert_box_feature(cq_vec3 x, cq_vec3 h, cq_feature f)
{
    double tol = 1e-9;
    if (f.kind_b == CQ_FEAT_FACE) {
        int k = f.index_b / 2;
        ck_assert_double_eq_tol(cq_comp(x, k), (f.index_b & 1) ? -cq_comp(h, k) : cq_comp(h, k), tol);
        return;
    }
    int edge_axis = f.kind_b == CQ_FEAT_EDGE ? f.index_b / 4 : -1, bit = 0;
    ck_assert(f.kind_b == CQ_FEAT_VERTEX || f.kind_b == CQ_FEAT_EDGE);
    for (int k = 0; k < 3; k++) {
        if (k == edge_axis)
            continue;
        /* Vertex: bit k; edge: the other two axes' bits, lower axis first. */
        bool neg = f.kind_b == CQ_FEAT_VERTEX ? (f.index_b >> k) & 1 : ((f.index_b % 4) >> bit++) & 1;
        ck_assert_double_eq_tol(cq_comp(x, k), neg ? -cq_comp(h, k) : cq_comp(h, k), tol);
    }
}

START_TEST(sphere_box_against_distance_oracle)
{
    tu_rng rng = {11};
    int inside = 0;
    for (int k = 0; k < 3000; k++) {
        cq_vec3 h = cq_v3(tu_uniform(&rng, 0, 1.5), tu_uniform(&rng, 0, 1.5), tu_uniform(&rng, 0, 1.5));
        if (k % 10 == 0) /* flat boxes are legal */
            h.y = 0;
        cq_shape s = sphere(tu_uniform(&rng, 0, 1)), b = box(h.x, h.y, h.z);
        cq_xform xb = tu_pose(&rng, 2), xs = at(0, 0, 0);
        xs.p = cq_add(xb.p, rvec(&rng, 2.5));
        cq_contact c = pair(&s, xs, &b, xb);
        cq_vec3 l = cq_mul_mtv(&xb.r, cq_sub(xs.p, xb.p));
        double sd = box_signed_distance(l, h), gap = sd - s.sphere.radius;
        inside += sd <= 0;
        ck_assert_msg(c.overlap == (gap <= 0), "case %d", k);
        ck_assert_double_eq_tol(c.distance, fmax(gap, 0), TOL);
        ck_assert_double_eq_tol(c.depth, fmax(-gap, 0), TOL);
        ck_assert(c.has_normal);
        if (!c.overlap)
            continue;
        /* The point is on the box, |sd| from the centre along the normal
         * (towards the box when outside, away from it when inside). */
        cq_vec3 x = c.points[0].position;
        cq_vec3 lx = cq_mul_mtv(&xb.r, cq_sub(x, xb.p));
        ck_assert_double_eq_tol(box_signed_distance(lx, h), 0, TOL);
        tu_assert_vec_eq_tol(x, cq_mad(xs.p, c.normal, sd), TOL);
        ck_assert_double_eq_tol(c.points[0].depth, -gap, TOL);
        assert_box_feature(lx, h, c.points[0].feature);
    }
    ck_assert(inside > 50); /* the inside branch was exercised */
}
END_TEST

START_TEST(sphere_box_inside_and_features)
{
    cq_shape s = sphere(0.5), b = box(1, 2, 3);
    cq_contact c = pair(&s, at(0.7, 0, 0), &b, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.8, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(-1, 0, 0), TOL);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(1, 0, 0), TOL);
    ck_assert_uint_eq(c.points[0].feature.index_b, 0);
    c = pair(&s, at(0, -1.9, 0), &b, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.6, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), TOL);
    ck_assert_uint_eq(c.points[0].feature.index_b, 3);
    /* Flat box, centre in its plane: the positive face (documented tie). */
    cq_shape flat = box(1, 0, 1);
    c = pair(&s, at(0.2, 0, 0.3), &flat, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.5, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), TOL);
    /* Outside: face, edge and vertex ids in collision.h's numbering. */
    static const struct {
        cq_vec3 p;
        uint8_t kind;
        uint16_t index;
    } feats[] = {{{1.3, 0, 0}, CQ_FEAT_FACE, 0},       {{1.2, 2.2, 0}, CQ_FEAT_EDGE, 8},
                 {{-1.2, 2.2, 0}, CQ_FEAT_EDGE, 9},    {{1.2, -2.2, 0}, CQ_FEAT_EDGE, 10},
                 {{0, -2.2, -3.2}, CQ_FEAT_EDGE, 3},   {{1.2, 2.2, 3.2}, CQ_FEAT_VERTEX, 0},
                 {{-1.2, -2.2, -3.2}, CQ_FEAT_VERTEX, 7}, {{-1.2, 0, 0}, CQ_FEAT_FACE, 1}};
    for (size_t k = 0; k < sizeof feats / sizeof feats[0]; k++) {
        c = pair(&s, at(feats[k].p.x, feats[k].p.y, feats[k].p.z), &b, at(0, 0, 0));
        ck_assert_int_eq(c.point_count, 1);
        ck_assert_int_eq(c.points[0].feature.kind_b, feats[k].kind);
        ck_assert_uint_eq(c.points[0].feature.index_b, feats[k].index);
    }
}
END_TEST

/* A centre on the surface of a posed box: its local coordinates may fall
 * outside the box by a rounding. Analytic answer: touching, depth = radius
 * (never less, so a point sphere's depth is never negative). */
START_TEST(sphere_centre_on_rotated_box_surface)
{
    tu_rng rng = {23};
    for (int k = 0; k < 20000; k++) {
        cq_vec3 h = cq_v3(tu_uniform(&rng, 0, 3), tu_uniform(&rng, 0, 3), tu_uniform(&rng, 0, 3));
        cq_vec3 l = cq_v3(tu_uniform(&rng, -h.x, h.x), tu_uniform(&rng, -h.y, h.y), tu_uniform(&rng, -h.z, h.z));
        int axis = k % 3;
        double side = (k / 3) % 2 ? -1 : 1;
        if (axis == 0)
            l.x = side * h.x;
        else if (axis == 1)
            l.y = side * h.y;
        else
            l.z = side * h.z;
        double r = k % 2 ? 0 : tu_uniform(&rng, 0, 1);
        cq_shape s = sphere(r), b = box(h.x, h.y, h.z);
        cq_xform xb = tu_pose(&rng, 5), xs = at(0, 0, 0);
        xs.p = cq_xform_point(&xb, l);
        cq_contact c = pair(&s, xs, &b, xb);
        ck_assert_msg(c.overlap, "case %d", k);
        ck_assert_msg(c.depth >= r - 1e-12 && c.depth <= r + 1e-12, "case %d: depth %.17g, radius %.17g", k, c.depth, r);
        c = pair(&b, xb, &s, xs);
        ck_assert_msg(c.depth >= r - 1e-12 && c.depth <= r + 1e-12, "case %d swapped", k);
    }
}
END_TEST

/* ---- sphere-triangle ------------------------------------------------------- */

START_TEST(sphere_triangle_analytic)
{
    cq_shape t = tri(cq_v3(0, 0, 0), cq_v3(2, 0, 0), cq_v3(0, 2, 0)), s = sphere(0.5);
    cq_contact c = pair(&s, at(0.5, 0.5, 0.3), &t, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.2, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, -1), TOL);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0.5, 0.5, 0), TOL);
    ck_assert_int_eq(c.points[0].feature.kind_b, CQ_FEAT_FACE);
    /* Below the triangle (double-sided): the normal flips. */
    c = pair(&s, at(0.5, 0.5, -0.3), &t, at(0, 0, 0));
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), TOL);
    /* Beyond the hypotenuse (edge 1) and beyond vertex 0. */
    cq_shape big = sphere(1);
    c = pair(&big, at(1.5, 1.5, 0), &t, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 1 - sqrt(0.5), TOL);
    ck_assert_int_eq(c.points[0].feature.kind_b, CQ_FEAT_EDGE);
    ck_assert_uint_eq(c.points[0].feature.index_b, 1);
    c = pair(&big, at(-1, -1, 0), &t, at(0, 0, 0));
    ck_assert_double_eq_tol(c.distance, sqrt(2) - 1, TOL);
    ck_assert_int_eq(c.algorithm, CQ_ALG_SPHERE_TRIANGLE);
}
END_TEST

START_TEST(sphere_centre_on_triangle)
{
    cq_shape t = tri(cq_v3(0, 0, 0), cq_v3(2, 0, 0), cq_v3(0, 2, 0)), s = sphere(0.5);
    /* No cache: the winding's normal (v1 - v0) x (v2 - v0) = +z, depth r. */
    cq_contact c = pair(&s, at(0.5, 0.5, 0), &t, at(0, 0, 0));
    ck_assert(c.has_normal);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_NONE);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), TOL);
    ck_assert_double_eq_tol(c.depth, 0.5, TOL);
    /* A previous normal picks the side. */
    cq_pair_cache cache = {.has_normal = true, .normal = cq_v3(0.1, 0, -1)};
    c = run(&s, at(0.5, 0.5, 0), &t, at(0, 0, 0), 0, &cache, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, -1), TOL);
    /* A zero-area triangle has no normal: dropped like coincident points. */
    cq_shape line = tri(cq_v3(0, 0, 0), cq_v3(1, 0, 0), cq_v3(2, 0, 0));
    c = pair(&s, at(0.5, 0, 0), &line, at(0, 0, 0));
    ck_assert(c.overlap && !c.has_normal);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
}
END_TEST

/* ---- plane pairs ----------------------------------------------------------- */

/* A plane whose local normal is +Z at offset 1, posed by a rotation and a
 * translation, and the oracle for its world signed distance: from a point on
 * it (the local point n * offset, carried by the pose). */
static cq_xform plane_pose(void)
{
    cq_xform x = at(0.3, -0.2, 0.7);
    x.r = tu_axis_angle(cq_scale(cq_v3(1, 2, 2), 1.0 / 3), 0.9);
    return x;
}

static double plane_height(cq_xform xp, cq_vec3 p)
{
    cq_vec3 n = cq_mul_mv(&xp.r, cq_v3(0, 0, 1)), on = cq_xform_point(&xp, cq_v3(0, 0, 1));
    return cq_dot(n, cq_sub(p, on));
}

START_TEST(sphere_plane_analytic)
{
    cq_shape pl = plane(cq_v3(0, 0, 1), 1), s = sphere(0.4);
    cq_xform xp = plane_pose();
    cq_vec3 n = cq_mul_mv(&xp.r, cq_v3(0, 0, 1));
    for (int i = 0; i < 13; i++) {
        double h = -0.45 + 0.1 * i; /* never exactly touching */
        cq_vec3 c = cq_mad(cq_xform_point(&xp, cq_v3(0.4, -0.3, 1)), n, h);
        cq_contact r = pair(&s, at(c.x, c.y, c.z), &pl, xp);
        double gap = plane_height(xp, c) - 0.4;
        ck_assert(r.overlap == (gap <= 0));
        ck_assert_double_eq_tol(r.depth, fmax(-gap, 0), TOL);
        ck_assert_double_eq_tol(r.distance, fmax(gap, 0), TOL);
        tu_assert_vec_eq_tol(r.normal, cq_neg(n), TOL);
        if (gap > 0) {
            tu_assert_vec_eq_tol(r.witness_a, cq_mad(c, n, -0.4), TOL);
            ck_assert_double_eq_tol(plane_height(xp, r.witness_b), 0, TOL);
        } else {
            ck_assert_int_eq(r.point_count, 1);
            ck_assert_double_eq_tol(plane_height(xp, r.points[0].position), 0, TOL);
            ck_assert_double_eq_tol(r.points[0].depth, -gap, TOL);
        }
    }
}
END_TEST

START_TEST(capsule_plane_analytic)
{
    /* Ground y <= 0; capsule (half height 1) tilted by 30 degrees about z,
     * centre at y = 0.6: the axis ends sit at 0.6 -+ cos(30 deg). */
    cq_shape g = plane(cq_v3(0, 1, 0), 0), cap = capsule(0.3, 1);
    cq_xform x = at(2, 0.6, -1);
    x.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 6);
    double low = 0.6 - cos(CQ_PI / 6) - 0.3;
    cq_contact c = pair(&cap, x, &g, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, -low, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), TOL);
    ck_assert_int_eq(c.point_count, 1);
    ck_assert_double_eq_tol(c.points[0].position.y, 0, TOL);
    ck_assert_double_eq_tol(c.points[0].position.x, 2 + 0.5, TOL); /* lower end: x + sin(30) */
    /* Lying flat and sunk by 0.1: both ends, depth 0.1 each. */
    x.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 2);
    x.p = cq_v3(0, 0.2, 0);
    c = pair(&cap, x, &g, at(0, 0, 0));
    ck_assert_int_eq(c.point_count, 2);
    for (int k = 0; k < 2; k++) {
        ck_assert_double_eq_tol(c.points[k].depth, 0.1, TOL);
        ck_assert_double_eq_tol(fabs(c.points[k].position.x), 1, TOL);
        ck_assert_double_eq_tol(c.points[k].position.y, 0, TOL);
    }
    /* Lying flat above: the witness is the middle. */
    x.p = cq_v3(0, 1, 0);
    c = pair(&cap, x, &g, at(0, 0, 0));
    ck_assert_double_eq_tol(c.distance, 0.7, TOL);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(0, 0, 0), TOL);
}
END_TEST

/* The audit's case: a capsule (r 0.5, half height 1) turned 80 degrees
 * about z, its centre 0.3 above the ground y <= 0, the ground named first.
 * Both ends are within reach of the ground. The lower end's point is its
 * ball's lowest point; the upper end's ball reaches lower than the
 * capsule does there (that point lay 0.0076 inside it): on the vertical
 * through the upper end the capsule's surface is the cylinder's, r / sin
 * 80 below the axis. Analytic positions and depths, both orders; every
 * point on the capsule (distance from its axis) and, moved by its depth
 * along the normal, on the ground. */
START_TEST(capsule_plane_tilted_points_on_the_capsule)
{
    double r = 0.5, tilt = 80 * CQ_PI / 180, s = sin(tilt), c = cos(tilt);
    cq_shape g = plane(cq_v3(0, 1, 0), 0), cap = capsule(r, 1);
    cq_xform xc;
    ck_assert_int_eq(cq_pose_from_quat(cq_v3(0, 0.3, 0), (cq_quat){0, 0, 0.6427876096865393, 0.766044443118978}, &xc).status,
                     CQ_OK);
    cq_vec3 lower = cq_v3(s, 0.3 - c - r, 0), upper = cq_v3(-s, 0.3 + c - r / s, 0);
    for (int order = 0; order < 2; order++) {
        cq_contact ct = order ? pair(&cap, xc, &g, at(0, 0, 0)) : pair(&g, at(0, 0, 0), &cap, xc);
        ck_assert_int_eq(ct.point_count, 2);
        tu_assert_vec_eq_tol(ct.normal, cq_v3(0, order ? -1 : 1, 0), TOL);
        ck_assert_double_eq_tol(ct.depth, -lower.y, TOL);
        for (int k = 0; k < 2; k++) {
            cq_contact_point p = ct.points[k];
            cq_vec3 on_cap = order ? cq_mad(p.position, ct.normal, p.depth) : p.position;
            cq_vec3 on_ground = order ? p.position : cq_mad(p.position, ct.normal, p.depth);
            cq_vec3 want = p.position.x > 0 ? lower : upper;
            tu_assert_vec_eq_tol(on_cap, want, TOL);
            ck_assert_double_eq_tol(p.depth, -want.y, TOL);
            ck_assert_double_eq_tol(on_ground.y, 0, TOL);
            ck_assert_double_eq_tol(axis_distance(on_cap, xc, 1), r, TOL);
        }
    }
}
END_TEST

START_TEST(box_plane_resting_and_tilted)
{
    cq_shape g = plane(cq_v3(0, 1, 0), 0), b = box(1, 0.5, 1);
    cq_contact c = pair(&b, at(0, 0.4, 0), &g, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.1, TOL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, -1, 0), TOL);
    ck_assert_int_eq(c.point_count, 4);
    for (int k = 0; k < 4; k++) {
        ck_assert_double_eq_tol(c.points[k].position.y, 0, TOL);
        ck_assert_double_eq_tol(c.points[k].depth, 0.1, TOL);
        ck_assert_int_eq(c.points[k].feature.kind_a, CQ_FEAT_VERTEX);
        ck_assert(c.points[k].feature.index_a & 2); /* the -y corners */
    }
    /* Random tilts against the eight-corner oracle on a posed plane. */
    tu_rng rng = {5};
    cq_shape pl = plane(cq_v3(0, 0, 1), 1);
    cq_xform xp = plane_pose();
    for (int k = 0; k < 500; k++) {
        cq_xform xb = tu_pose(&rng, 2);
        cq_shape bx = box(tu_uniform(&rng, 0, 1), tu_uniform(&rng, 0, 1), tu_uniform(&rng, 0, 1));
        cq_obb obb = cq_obb_from_box(&bx, &xb);
        cq_vec3 corner[8];
        tu_obb_corners(&obb, corner);
        double lowest = INFINITY;
        int below = 0;
        for (int i = 0; i < 8; i++) {
            lowest = fmin(lowest, plane_height(xp, corner[i]));
            below += plane_height(xp, corner[i]) <= 0;
        }
        c = pair(&bx, xb, &pl, xp);
        ck_assert(c.overlap == (lowest <= 0));
        ck_assert_double_eq_tol(c.depth, fmax(-lowest, 0), TOL);
        ck_assert_double_eq_tol(c.distance, fmax(lowest, 0), TOL);
        ck_assert_int_eq(c.point_count, below < 4 ? below : 4);
        double deepest = 0;
        for (int i = 0; i < c.point_count; i++) {
            const cq_contact_point *p = &c.points[i];
            ck_assert_double_eq_tol(plane_height(xp, p->position), 0, TOL);
            /* The point is its corner projected: the corner is depth below. */
            cq_vec3 back = cq_mad(p->position, c.normal, p->depth);
            tu_assert_vec_eq_tol(back, corner[p->feature.index_a], TOL);
            deepest = fmax(deepest, p->depth);
        }
        if (below)
            ck_assert_double_eq_tol(deepest, -lowest, TOL);
    }
}
END_TEST

START_TEST(triangle_plane_analytic)
{
    cq_shape g = plane(cq_v3(0, 1, 0), 0);
    cq_shape t = tri(cq_v3(0, -0.2, 0), cq_v3(1, 0.1, 0), cq_v3(0, -0.05, 1));
    cq_contact c = pair(&t, at(0, 0, 0), &g, at(0, 0, 0));
    ck_assert_double_eq_tol(c.depth, 0.2, TOL);
    ck_assert_int_eq(c.point_count, 2);
    ck_assert_uint_eq(c.points[0].feature.index_a, 0);
    ck_assert_uint_eq(c.points[1].feature.index_a, 2);
    tu_assert_vec_eq_tol(c.points[1].position, cq_v3(0, 0, 1), TOL);
    ck_assert_double_eq_tol(c.points[1].depth, 0.05, TOL);
    c = pair(&t, at(0, 0.5, 0), &g, at(0, 0, 0));
    ck_assert(!c.overlap);
    ck_assert_double_eq_tol(c.distance, 0.3, TOL);
    tu_assert_vec_eq_tol(c.witness_a, cq_v3(0, 0.3, 0), TOL);
    tu_assert_vec_eq_tol(c.witness_b, cq_v3(0, 0, 0), TOL);
}
END_TEST

/* ---- contract over every closed pair ---------------------------------------- */

enum { CLOSED_PAIRS = 9 };
static const struct {
    cq_shape_type a, b;
    cq_algorithm alg;
} closed_pairs[CLOSED_PAIRS] = {
    {CQ_SPHERE, CQ_SPHERE, CQ_ALG_SPHERE_SPHERE},    {CQ_SPHERE, CQ_CAPSULE, CQ_ALG_SPHERE_CAPSULE},
    {CQ_SPHERE, CQ_BOX, CQ_ALG_SPHERE_BOX},          {CQ_SPHERE, CQ_TRIANGLE, CQ_ALG_SPHERE_TRIANGLE},
    {CQ_SPHERE, CQ_PLANE, CQ_ALG_SPHERE_PLANE},      {CQ_CAPSULE, CQ_CAPSULE, CQ_ALG_CAPSULE_CAPSULE},
    {CQ_CAPSULE, CQ_PLANE, CQ_ALG_CAPSULE_PLANE},    {CQ_BOX, CQ_PLANE, CQ_ALG_BOX_PLANE},
    {CQ_TRIANGLE, CQ_PLANE, CQ_ALG_TRIANGLE_PLANE},
};

static cq_shape random_shape(tu_rng *rng, cq_shape_type t)
{
    switch (t) {
    case CQ_SPHERE:
        return sphere(tu_uniform(rng, 0.1, 1));
    case CQ_CAPSULE:
        return capsule(tu_uniform(rng, 0.1, 0.7), tu_uniform(rng, 0, 1));
    case CQ_BOX:
        return box(tu_uniform(rng, 0.1, 1), tu_uniform(rng, 0.1, 1), tu_uniform(rng, 0.1, 1));
    case CQ_TRIANGLE:
        return tri(rvec(rng, 1), rvec(rng, 1), rvec(rng, 1));
    default:
        return plane(cq_v3(0, 1, 0), tu_uniform(rng, -0.5, 0.5));
    }
}

/* Shapes placed so that each one's reference (centre, capsule axis end,
 * box corner, triangle vertex, plane surface) is `gap` apart along +x from
 * A to B; for each closed pair the analytic gap is exactly `gap`. */
static void gap_pair(int k, double gap, cq_shape *a, cq_xform *xa, cq_shape *b, cq_xform *xb)
{
    *a = sphere(0.5), *xa = at(0, 0, 0), *xb = at(0.5 + gap, 0, 0);
    switch (k) {
    case 0: *b = sphere(0.3), xb->p.x += 0.3; break;
    case 1: *b = capsule(0.3, 1), xb->p.x += 0.3; break;
    case 2: *b = box(0.2, 1, 1), xb->p.x += 0.2; break;
    case 3: *b = tri(cq_v3(0, -1, -1), cq_v3(0, 1, -1), cq_v3(0, 0, 1)); break;
    case 4: *b = plane(cq_v3(-1, 0, 0), 0); break;
    case 5: *a = capsule(0.5, 1), *b = capsule(0.3, 1), *xb = along_z(0.8 + gap, 0, 0); break;
    case 6: *a = capsule(0.5, 1), *b = plane(cq_v3(-1, 0, 0), 0); break;
    case 7: *a = box(0.5, 1, 1), *b = plane(cq_v3(-1, 0, 0), 0); break;
    default:
        *a = tri(cq_v3(0, 0, 0), cq_v3(-1, 1, 0), cq_v3(-1, 0, 1)), *b = plane(cq_v3(-1, 0, 0), 0);
        xb->p.x = gap;
    }
}

START_TEST(skin_half_overlaps_double_separates)
{
    const double skin = 0.04;
    for (int k = 0; k < CLOSED_PAIRS; k++) {
        cq_shape a, b;
        cq_xform xa, xb;
        gap_pair(k, 0.5 * skin, &a, &xa, &b, &xb);
        ck_assert_int_eq(a.type, closed_pairs[k].a);
        ck_assert_int_eq(b.type, closed_pairs[k].b);
        cq_contact c = run(&a, xa, &b, xb, skin, NULL, NULL);
        ck_assert_msg(c.overlap && c.has_distance, "pair %d", k);
        ck_assert_double_eq_tol(c.distance, 0.5 * skin, TOL);
        ck_assert(c.depth == 0);
        ck_assert(c.point_count >= 1);
        for (int i = 0; i < c.point_count; i++)
            ck_assert_double_eq_tol(c.points[i].depth, -0.5 * skin, TOL);
        tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), TOL);
        gap_pair(k, 2 * skin, &a, &xa, &b, &xb);
        c = run(&a, xa, &b, xb, skin, NULL, NULL);
        ck_assert_msg(!c.overlap, "pair %d", k);
        ck_assert_double_eq_tol(c.distance, 2 * skin, TOL);
        ck_assert_int_eq(c.point_count, 0);
        /* Penetrating by the same amount: depth, no distance. */
        gap_pair(k, -0.5 * skin, &a, &xa, &b, &xb);
        c = run(&a, xa, &b, xb, skin, NULL, NULL);
        ck_assert(c.overlap && !c.has_distance);
        ck_assert_double_eq_tol(c.depth, 0.5 * skin, TOL);
        ck_assert(c.distance == 0);
    }
}
END_TEST

/* Random poses close enough that about half the pairs touch. */
static void random_pair(tu_rng *rng, int k, cq_shape *a, cq_xform *xa, cq_shape *b, cq_xform *xb)
{
    *a = random_shape(rng, closed_pairs[k].a);
    *b = random_shape(rng, closed_pairs[k].b);
    *xa = tu_pose(rng, 1.2);
    *xb = tu_pose(rng, 1.2);
}

START_TEST(algorithm_is_the_closed_form_both_ways)
{
    tu_rng rng = {9};
    cq_counters ctr = {0};
    for (int k = 0; k < CLOSED_PAIRS; k++)
        for (int i = 0; i < 20; i++) {
            cq_shape a, b;
            cq_xform xa, xb;
            random_pair(&rng, k, &a, &xa, &b, &xb);
            ck_assert(cq_collide_supported(a.type, b.type) && cq_collide_supported(b.type, a.type));
            ck_assert_int_eq(run(&a, xa, &b, xb, 0, NULL, &ctr).algorithm, closed_pairs[k].alg);
            ck_assert_int_eq(run(&b, xb, &a, xa, 0, NULL, &ctr).algorithm, closed_pairs[k].alg);
        }
    for (int k = 0; k < CLOSED_PAIRS; k++)
        ck_assert_uint_eq(counter(&ctr, CQ_CTR_TESTS + closed_pairs[k].alg), 40);
}
END_TEST

START_TEST(swap_mirrors_the_contact)
{
    tu_rng rng = {13};
    int touching = 0;
    for (int k = 0; k < CLOSED_PAIRS; k++)
        for (int i = 0; i < 300; i++) {
            cq_shape a, b;
            cq_xform xa, xb;
            random_pair(&rng, k, &a, &xa, &b, &xb);
            cq_contact ab = pair(&a, xa, &b, xb), ba = pair(&b, xb, &a, xa);
            ck_assert(ab.overlap == ba.overlap && ab.has_normal == ba.has_normal);
            ck_assert_double_eq_tol(ab.distance, ba.distance, TOL);
            ck_assert_double_eq_tol(ab.depth, ba.depth, TOL);
            tu_assert_vec_eq_tol(ab.normal, cq_neg(ba.normal), TOL);
            if (ab.has_distance) {
                tu_assert_vec_eq_tol(ab.witness_a, ba.witness_b, TOL);
                tu_assert_vec_eq_tol(ab.witness_b, ba.witness_a, TOL);
            }
            ck_assert_int_eq(ab.point_count, ba.point_count);
            touching += ab.point_count > 0;
            for (int p = 0; p < ab.point_count; p++) {
                /* On the other surface: moved by the depth along the normal. */
                cq_vec3 moved = cq_mad(ab.points[p].position, ab.normal, ab.points[p].depth);
                tu_assert_vec_eq_tol(ba.points[p].position, moved, TOL);
                ck_assert_double_eq_tol(ba.points[p].depth, ab.points[p].depth, TOL);
                ck_assert_int_eq(ba.points[p].feature.kind_a, ab.points[p].feature.kind_b);
                ck_assert_uint_eq(ba.points[p].feature.index_b, ab.points[p].feature.index_a);
                if (a.type == CQ_SPHERE) /* now on the sphere, which is B */
                    ck_assert_double_eq_tol(cq_len(cq_sub(moved, xa.p)), a.sphere.radius, TOL);
            }
        }
    ck_assert(touching > 500);
}
END_TEST

static cq_xform move_pose(const cq_xform *t, const cq_xform *x)
{
    return (cq_xform){cq_xform_point(t, x->p), cq_mul_mm(&t->r, &x->r)};
}

/* Box corners below a plane shape posed at xp (heights by the oracle). */
static int corners_below(const cq_shape *bx, const cq_xform *xb, const cq_shape *pl, const cq_xform *xp)
{
    cq_obb obb = cq_obb_from_box(bx, xb);
    cq_vec3 corner[8], n = cq_mul_mv(&xp->r, pl->plane.normal);
    tu_obb_corners(&obb, corner);
    int below = 0;
    for (int i = 0; i < 8; i++)
        below += cq_dot(n, cq_sub(corner[i], xp->p)) <= pl->plane.offset;
    return below;
}

START_TEST(rigid_motion_invariance)
{
    tu_rng rng = {17};
    for (int k = 0; k < CLOSED_PAIRS; k++)
        for (int i = 0; i < 300; i++) {
            cq_shape a, b;
            cq_xform xa, xb, t = tu_pose(&rng, 1000);
            random_pair(&rng, k, &a, &xa, &b, &xb);
            cq_contact c0 = pair(&a, xa, &b, xb), c1 = pair(&a, move_pose(&t, &xa), &b, move_pose(&t, &xb));
            /* Coordinates near 1000 carry ~1e-13 of rounding each. */
            double tol = 1e-9 * (1 + 1000);
            ck_assert(c0.overlap == c1.overlap && c0.point_count == c1.point_count);
            ck_assert_double_eq_tol(c1.distance, c0.distance, tol);
            ck_assert_double_eq_tol(c1.depth, c0.depth, tol);
            tu_assert_vec_eq_tol(c1.normal, cq_mul_mv(&t.r, c0.normal), 1e-6);
            /* A sunk box's corners are reduced to four; a box's symmetry can
             * tie two candidates exactly, so only the deepest (kept first)
             * is compared there. */
            bool reduced = a.type == CQ_BOX && corners_below(&a, &xa, &b, &xb) > CQ_MAX_POINTS;
            for (int p = 0; p < (reduced ? 1 : c0.point_count); p++) {
                tu_assert_vec_eq_tol(c1.points[p].position, cq_xform_point(&t, c0.points[p].position), tol);
                ck_assert_double_eq_tol(c1.points[p].depth, c0.points[p].depth, tol);
            }
        }
}
END_TEST

Suite *closed_suite(void)
{
    Suite *s = suite_create("closed");
    TCase *round = tcase_create("round");
    tcase_set_timeout(round, 60); /* seconds a test under the sanitizers */
    tcase_add_test(round, concentric_spheres_drop_without_cache);
    tcase_add_test(round, concentric_spheres_use_previous_normal);
    tcase_add_test(round, coincident_swapped_keeps_caller_orientation);
    tcase_add_test(round, sphere_sphere_analytic);
    tcase_add_test(round, sphere_capsule_analytic);
    tcase_add_test(round, capsules_parallel_two_points);
    tcase_add_test(round, capsules_nearly_parallel_two_points);
    tcase_add_test(round, capsules_skewed_line_ends_on_both_surfaces);
    tcase_add_test(round, capsules_crossing_one_point);
    tcase_add_test(round, sphere_box_against_distance_oracle);
    tcase_add_test(round, sphere_box_inside_and_features);
    tcase_add_test(round, sphere_centre_on_rotated_box_surface);
    tcase_add_test(round, sphere_triangle_analytic);
    tcase_add_test(round, sphere_centre_on_triangle);
    suite_add_tcase(s, round);
    TCase *pl = tcase_create("plane");
    tcase_add_test(pl, sphere_plane_analytic);
    tcase_add_test(pl, capsule_plane_analytic);
    tcase_add_test(pl, capsule_plane_tilted_points_on_the_capsule);
    tcase_add_test(pl, box_plane_resting_and_tilted);
    tcase_add_test(pl, triangle_plane_analytic);
    suite_add_tcase(s, pl);
    TCase *contract = tcase_create("contract");
    tcase_set_timeout(contract, 60);
    tcase_add_test(contract, skin_half_overlaps_double_separates);
    tcase_add_test(contract, algorithm_is_the_closed_form_both_ways);
    tcase_add_test(contract, swap_mirrors_the_contact);
    tcase_add_test(contract, rigid_motion_invariance);
    suite_add_tcase(s, contract);
    return s;
}
