/* Triangle-triangle: the Guigue-Devillers overlap test and the contact,
 * against a brute-force SAT over all 17 candidate axes (projecting all six
 * vertices), an exact distance oracle (golden-section search along every
 * edge against the other triangle), and analytic cases: coplanar overlap,
 * containment, touching, piercing, and degenerate triangles. */
#include "testutil.h"

/* Outside this band around zero gap (relative to the case's size) the fast
 * test must agree with the oracle. */
#define BAND 1e-9

static cq_shape tri_shape(const cq_vec3 t[3]) { return (cq_shape){.type = CQ_TRIANGLE, .triangle = {{t[0], t[1], t[2]}}}; }

/* ---- Oracles ---- */

static void range(const cq_vec3 t[3], cq_vec3 l, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < 3; k++)
        *lo = fmin(*lo, cq_dot(t[k], l)), *hi = fmax(*hi, cq_dot(t[k], l));
}

static cq_vec3 edge(const cq_vec3 t[3], int i) { return cq_sub(t[(i + 1) % 3], t[i]); }

/* Candidate axis k (0..16): the normals, the 9 edge crosses, the 6 in-plane
 * edge normals; false when degenerate (sine below 1e-6). */
static bool oracle_axis(const cq_vec3 a[3], const cq_vec3 b[3], int k, cq_vec3 *l)
{
    cq_vec3 na = cq_cross(edge(a, 0), edge(a, 1)), nb = cq_cross(edge(b, 0), edge(b, 1)), u, v;
    if (k < 2)
        u = k == 0 ? edge(a, 0) : edge(b, 0), v = k == 0 ? edge(a, 1) : edge(b, 1);
    else if (k < 11)
        u = edge(a, (k - 2) / 3), v = edge(b, (k - 2) % 3);
    else
        u = k < 14 ? na : nb, v = k < 14 ? edge(a, k - 11) : edge(b, k - 14);
    *l = cq_cross(u, v);
    if (!(cq_len2(*l) > 1e-12 * cq_len2(u) * cq_len2(v)))
        return false;
    *l = cq_scale(*l, 1 / cq_len(*l));
    return true;
}

static double gap_along(const cq_vec3 a[3], const cq_vec3 b[3], cq_vec3 l)
{
    double alo, ahi, blo, bhi;
    range(a, l, &alo, &ahi);
    range(b, l, &blo, &bhi);
    return fmax(blo - ahi, alo - bhi);
}

/* Penetration when B moves along +n. */
static double pen_along(const cq_vec3 a[3], const cq_vec3 b[3], cq_vec3 n)
{
    double alo, ahi, blo, bhi;
    range(a, n, &alo, &ahi);
    range(b, n, &blo, &bhi);
    return ahi - blo;
}

/* The largest gap over the candidate axes (-minimum penetration);
 * face_pen gets the least penetration over the two normals. */
static double oracle_gap(const cq_vec3 a[3], const cq_vec3 b[3], double *face_pen)
{
    double best = -INFINITY, face = INFINITY;
    for (int k = 0; k < 17; k++) {
        cq_vec3 l;
        if (!oracle_axis(a, b, k, &l))
            continue;
        double g = gap_along(a, b, l);
        best = fmax(best, g);
        if (k < 2)
            face = fmin(face, -g);
    }
    if (face_pen)
        *face_pen = face;
    return best;
}

static double case_size(const cq_vec3 a[3], const cq_vec3 b[3])
{
    double s = 0;
    for (int k = 0; k < 3; k++)
        s = fmax(s, fmax(cq_len(a[k]), cq_len(b[k])));
    return s;
}

/* min over s of the (convex) distance from p + s (q - p) to t. */
static double dist_segment_triangle(cq_vec3 p, cq_vec3 q, const cq_vec3 t[3])
{
    const double g = (sqrt(5) - 1) / 2;
    double lo = 0, hi = 1;
    for (int it = 0; it < 200; it++) {
        double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        if (tu_dist_point_triangle(cq_lerp(p, q, m1), t) <= tu_dist_point_triangle(cq_lerp(p, q, m2), t))
            hi = m2;
        else
            lo = m1;
    }
    double best = tu_dist_point_triangle(cq_lerp(p, q, 0.5 * (lo + hi)), t);
    return fmin(best, fmin(tu_dist_point_triangle(p, t), tu_dist_point_triangle(q, t)));
}

/* Two disjoint triangles are nearest with a point on an edge of one of them. */
static double oracle_distance(const cq_vec3 a[3], const cq_vec3 b[3])
{
    double best = INFINITY;
    for (int i = 0; i < 3; i++) {
        best = fmin(best, dist_segment_triangle(a[i], a[(i + 1) % 3], b));
        best = fmin(best, dist_segment_triangle(b[i], b[(i + 1) % 3], a));
    }
    return best;
}

/* ---- Helpers ---- */

static cq_contact collide_cache(const cq_vec3 a[3], const cq_vec3 b[3], double skin, const cq_pair_cache *cache,
                                cq_counters *ctr)
{
    cq_shape sa = tri_shape(a), sb = tri_shape(b);
    cq_pair_query q = {.a = &sa, .xa = cq_xform_identity(), .b = &sb, .xb = cq_xform_identity(),
                       .skin = skin, .cache = cache, .counters = ctr};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "triangle_triangle");
    return c;
}

static cq_contact collide(const cq_vec3 a[3], const cq_vec3 b[3], double skin)
{
    return collide_cache(a, b, skin, NULL, NULL);
}

static void random_triangle(tu_rng *rng, cq_vec3 centre, cq_vec3 t[3])
{
    double s = tu_uniform(rng, 0.2, 1.5);
    for (int k = 0; k < 3; k++)
        t[k] = cq_add(centre, cq_v3(tu_uniform(rng, -s, s), tu_uniform(rng, -s, s), tu_uniform(rng, -s, s)));
}

static void translate(const cq_vec3 in[3], cq_vec3 d, cq_vec3 out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = cq_add(in[k], d);
}

static cq_vec3 centroid(const cq_vec3 t[3]) { return cq_scale(cq_add(cq_add(t[0], t[1]), t[2]), 1.0 / 3); }

/* B's centroid within spread (per coordinate) of A's: equal centroids
 * always overlap, so spread sets the share of overlapping pairs. */
static void random_pair(tu_rng *rng, double spread, cq_vec3 a[3], cq_vec3 b[3])
{
    random_triangle(rng, cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1)), a);
    random_triangle(rng, cq_v3(0, 0, 0), b);
    cq_vec3 d = cq_v3(tu_uniform(rng, -spread, spread), tu_uniform(rng, -spread, spread), tu_uniform(rng, -spread, spread));
    translate(b, cq_add(cq_sub(centroid(a), centroid(b)), d), b);
}

static void transform(const cq_xform *x, const cq_vec3 in[3], cq_vec3 out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = cq_xform_point(x, in[k]);
}

/* Both argument orders give the same verdict. */
static bool overlap(const cq_vec3 a[3], const cq_vec3 b[3])
{
    bool ab = cq_triangle_triangle_overlap(a, b);
    ck_assert_msg(ab == cq_triangle_triangle_overlap(b, a), "asymmetric verdict");
    return ab;
}

/* ---- Overlap test ---- */

START_TEST(random_overlap_agrees_with_brute_force)
{
    tu_rng rng = {1234567};
    int n = 20000, overlaps = 0, in_band = 0;
    for (int i = 0; i < n; i++) {
        cq_vec3 a[3], b[3];
        random_pair(&rng, 0.45, a, b);
        double g = oracle_gap(a, b, NULL);
        bool fast = overlap(a, b);
        overlaps += fast;
        if (fabs(g) <= BAND * case_size(a, b)) {
            in_band++;
            continue;
        }
        ck_assert_msg(fast == (g <= 0), "case %d: fast %d, oracle gap %.17g", i, fast, g);
    }
    ck_assert_msg(overlaps > n / 4 && overlaps < 3 * n / 4, "overlaps %d of %d", overlaps, n);
    ck_assert_int_lt(in_band, 5);
}
END_TEST

/* Bisects the offset along a random direction where the oracle's verdict
 * flips (equal centroids overlap), then checks 1e-7 either side. */
START_TEST(overlap_near_the_boundary)
{
    tu_rng rng = {99991};
    int checked = 0;
    for (int i = 0; i < 2000; i++) {
        cq_vec3 a[3], b0[3], b[3];
        random_triangle(&rng, cq_v3(0, 0, 0), a);
        random_triangle(&rng, cq_v3(0, 0, 0), b0);
        translate(b0, cq_sub(centroid(a), centroid(b0)), b0);
        cq_vec3 d = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        double lo = 0, hi = 20;
        for (int it = 0; it < 80; it++) {
            translate(b0, cq_scale(d, 0.5 * (lo + hi)), b);
            *(oracle_gap(a, b, NULL) <= 0 ? &lo : &hi) = 0.5 * (lo + hi);
        }
        for (int side = -1; side <= 1; side += 2) {
            translate(b0, cq_scale(d, lo * (1 + side * 1e-7)), b);
            double g = oracle_gap(a, b, NULL);
            if (fabs(g) <= BAND * case_size(a, b))
                continue;
            checked++;
            ck_assert_msg(overlap(a, b) == (g <= 0), "case %d side %d gap %g", i, side, g);
        }
    }
    ck_assert_int_gt(checked, 3000);
}
END_TEST

/* Coplanar configurations in the plane z = 0 and then under random rigid
 * motions (where coplanarity holds only up to rounding). */
START_TEST(coplanar_cases)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    static const struct {
        cq_vec3 b[3];
        bool overlap;
        cq_vec3 away; /* a nudge of 1e-6 along it separates a touching case */
    } cases[] = {
        {{{0.5, 0.5, 0}, {3, 0.5, 0}, {0.5, 3, 0}}, true, {0, 0, 0}},     /* edges cross */
        {{{2, 2, 0}, {3, 2, 0}, {2, 3, 0}}, false, {0, 0, 0}},            /* disjoint */
        {{{0.2, 0.2, 0}, {0.6, 0.2, 0}, {0.2, 0.6, 0}}, true, {0, 0, 0}}, /* B inside A */
        {{{-1, -1, 0}, {5, -1, 0}, {-1, 5, 0}}, true, {0, 0, 0}},         /* A inside B */
        {{{2, 0, 0}, {3, -1, 0}, {3, 1, 0}}, true, {1, 0, 0}},            /* vertex on vertex */
        {{{1, 1, 0}, {2, 2, 0}, {1, 3, 0}}, true, {1, 1, 0}},             /* vertex on edge */
        {{{0, 2, 0}, {2, 0, 0}, {2, 2, 0}}, true, {1, 1, 0}},             /* shared edge */
        {{{-1, 0.5, 0}, {-0.5, 1, 0}, {-1, 1.5, 0}}, false, {0, 0, 0}},   /* beside an edge */
    };
    tu_rng rng = {31337};
    for (int r = 0; r < 50; r++) {
        cq_xform x = r == 0 ? cq_xform_identity() : tu_pose(&rng, 10);
        for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            cq_vec3 ta[3], tb[3], moved[3];
            transform(&x, a, ta);
            transform(&x, cases[k].b, tb);
            ck_assert_msg(overlap(ta, tb) == cases[k].overlap, "pose %d case %u", r, k);
            if (cq_len2(cases[k].away) == 0)
                continue;
            cq_vec3 d = cq_mul_mv(&x.r, cq_scale(cases[k].away, 1e-6 / cq_len(cases[k].away)));
            translate(tb, d, moved);
            ck_assert_msg(!overlap(ta, moved), "pose %d nudged case %u", r, k);
            translate(tb, cq_neg(d), moved);
            ck_assert_msg(overlap(ta, moved), "pose %d pressed case %u", r, k);
        }
    }
}
END_TEST

START_TEST(piercing_cases)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    static const cq_vec3 through[3] = {{0.5, 0.5, -1}, {0.5, 0.5, 1}, {1.5, 0.5, 0}}; /* B pierces A's face */
    static const cq_vec3 linked[3] = {{1, 0.5, -1}, {1, 0.5, 1}, {3, 0.5, 1}};       /* each through the other */
    static const cq_vec3 missed[3] = {{1.6, 0.5, -1}, {1.6, 0.5, 1}, {3.6, 0.5, 1}};  /* planes cross, intervals do not */
    static const cq_vec3 touch[3] = {{0.5, 0.5, 0}, {0.5, 0.7, 1}, {0.7, 0.5, 1}};   /* a vertex on A's face */
    static const cq_vec3 edge_on[3] = {{-1, 1, 0}, {1, -1, 0}, {0, 0, 1}};          /* an edge across A's corner */
    ck_assert(overlap(a, through));
    ck_assert(overlap(a, linked));
    ck_assert(!overlap(a, missed));
    ck_assert(overlap(a, touch));
    ck_assert(overlap(a, edge_on));
    cq_vec3 t[3];
    translate(touch, cq_v3(0, 0, 1e-6), t);
    ck_assert(!overlap(a, t));
    translate(edge_on, cq_v3(-1e-6, -1e-6, 0), t);
    ck_assert(!overlap(a, t));
    cq_contact c = collide(a, missed, 0);
    ck_assert(!c.overlap && c.has_distance);
    /* B's edge (1.6, 0.5, z) against A's hypotenuse x + y = 2 in z = 0. */
    ck_assert_double_eq_tol(c.distance, 0.1 / sqrt(2), 1e-12);
}
END_TEST

START_TEST(degenerate_cases)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
#define P(x, y, z) {{x, y, z}, {x, y, z}, {x, y, z}}
    static const cq_vec3 point_in[3] = P(0.5, 0.5, 0), point_above[3] = P(0.5, 0.5, 0.1),
                         point_edge[3] = P(1, 1, 0), point_out[3] = P(1.01, 1, 0);
    static const cq_vec3 pierce[3] = {{0.5, 0.5, -1}, {0.5, 0.5, 1}, {0.5, 0.5, 0.3}};
    static const cq_vec3 above[3] = {{0, 0, 1}, {2, 0, 1}, {1, 0, 1}};
    static const cq_vec3 crossing[3] = {{1, -1, 0}, {1, 1, 0}, {1, 0, 0}};
    static const cq_vec3 beyond[3] = {{3, 0, 0}, {4, 0, 0}, {3.5, 0, 0}};
    static const cq_vec3 seg_x[3] = {{0, 0, 5}, {2, 0, 5}, {1, 0, 5}}, seg_y[3] = {{1, -1, 5}, {1, 1, 5}, {1, 0, 5}};
    static const cq_vec3 seg_y_up[3] = {{1, -1, 6}, {1, 1, 6}, {1, 0, 6}};
#undef P
    ck_assert(overlap(a, point_in));
    ck_assert(!overlap(a, point_above));
    ck_assert(overlap(a, point_edge));
    ck_assert(!overlap(a, point_out));
    ck_assert(overlap(a, pierce));
    ck_assert(!overlap(a, above));
    ck_assert(overlap(a, crossing));
    ck_assert(!overlap(a, beyond));
    ck_assert(overlap(seg_x, seg_y));
    ck_assert(!overlap(seg_x, seg_y_up));
    ck_assert(overlap(point_in, point_in));
    ck_assert(!overlap(point_in, point_above));
    ck_assert_double_eq_tol(collide(a, point_above, 0).distance, 0.1, 1e-12);
    ck_assert_double_eq_tol(collide(a, above, 0).distance, 1, 1e-12);
    ck_assert_double_eq_tol(collide(a, beyond, 0).distance, 1, 1e-12);
    ck_assert_double_eq_tol(collide(seg_x, seg_y_up, 0).distance, 1, 1e-12);
    ck_assert_double_eq_tol(collide(point_in, point_above, 0).distance, 0.1, 1e-12);
}
END_TEST

/* Two coincident points: no axis at all. The previous normal if known,
 * else dropped and counted, never an invented normal. */
START_TEST(coincident_points_fall_back)
{
    static const cq_vec3 p[3] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
    cq_counters ctr = {0};
    cq_contact c = collide_cache(p, p, 0, NULL, &ctr);
    ck_assert(c.overlap && !c.has_normal && c.point_count == 0);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_DROPPED);
    ck_assert_uint_eq(ctr.v[CQ_CTR_ZERO_NORMALS], 1);
    ck_assert_uint_eq(ctr.v[CQ_CTR_SAT_AXES_SKIPPED], 17);
    cq_pair_cache cache = {.has_normal = true, .normal = {0, 1, 0}};
    c = collide_cache(p, p, 0, &cache, NULL);
    ck_assert(c.overlap && c.has_normal);
    ck_assert_int_eq(c.fallback_reason, CQ_FB_COINCIDENT);
    ck_assert_int_eq(c.fallback_action, CQ_FBA_PREVIOUS_NORMAL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-15);
    ck_assert_double_eq(c.depth, 0);
}
END_TEST

/* ---- Contact ---- */

static void check_overlapping(const cq_vec3 a[3], const cq_vec3 b[3], const cq_contact *c, double skin)
{
    double face_pen, min_pen = -oracle_gap(a, b, &face_pen);
    ck_assert(c->overlap && c->has_normal && !c->has_distance);
    double pen = pen_along(a, b, c->normal);
    ck_assert_double_eq_tol(fmax(pen, 0), c->depth, 1e-9);
    ck_assert_msg(pen >= min_pen - 1e-9, "pen %g below the minimum %g", pen, min_pen);
    if (min_pen > 0)
        ck_assert_msg(pen <= min_pen / 0.95 + 1e-9, "pen %g vs min %g", pen, min_pen);
    if (pen > min_pen + 1e-9)
        ck_assert_double_eq_tol(pen, face_pen, 1e-9);
    cq_vec3 moved[3];
    translate(b, cq_scale(c->normal, c->depth + 1e-7), moved);
    ck_assert_msg(oracle_gap(a, moved, NULL) > 0, "moved gap %g", oracle_gap(a, moved, NULL));
    ck_assert_int_ge(c->point_count, 1);
    cq_vec3 nb = cq_cross(edge(b, 0), edge(b, 1));
    nb = cq_scale(nb, 1 / cq_len(nb));
    for (int k = 0; k < c->point_count; k++) {
        cq_vec3 p = c->points[k].position;
        ck_assert_msg(fabs(cq_dot(cq_sub(p, b[0]), nb)) <= 1e-9, "point %d off B's plane", k);
        ck_assert_msg(tu_dist_point_triangle(p, b) <= 1e-9, "point %d off B", k);
        ck_assert(c->points[k].depth <= c->depth + 1e-9 && c->points[k].depth >= -skin - 1e-9);
    }
}

static void check_separated(const cq_vec3 a[3], const cq_vec3 b[3], const cq_contact *c)
{
    double d = oracle_distance(a, b);
    ck_assert(c->has_distance && c->has_normal);
    ck_assert_double_eq_tol(c->distance, d, 1e-9);
    ck_assert_double_eq_tol(cq_len(cq_sub(c->witness_b, c->witness_a)), c->distance, 1e-12);
    ck_assert(tu_dist_point_triangle(c->witness_a, a) <= 1e-12 && tu_dist_point_triangle(c->witness_b, b) <= 1e-12);
    tu_assert_vec_eq_tol(c->normal, cq_scale(cq_sub(c->witness_b, c->witness_a), 1 / c->distance), 1e-9);
    ck_assert(oracle_gap(a, b, NULL) <= d + 1e-12); /* the SAT gap bounds the distance from below */
    ck_assert_double_eq(c->depth, 0);
}

/* A against B and B against A mirror each other. Points are compared as
 * sets only below four: a reduction from more may keep other points. */
static void check_swap(const cq_vec3 a[3], const cq_vec3 b[3], const cq_contact *c, double skin)
{
    cq_contact s = collide(b, a, skin);
    ck_assert(s.overlap == c->overlap && s.has_distance == c->has_distance);
    tu_assert_vec_eq_tol(s.normal, cq_neg(c->normal), 1e-9);
    ck_assert_double_eq_tol(s.depth, c->depth, 1e-9);
    ck_assert_double_eq_tol(s.distance, c->distance, 1e-9);
    ck_assert_int_eq(s.point_count, c->point_count);
    if (c->point_count >= 4 || c->has_distance)
        return;
    for (int k = 0; k < c->point_count; k++) {
        const cq_contact_point *p = &c->points[k];
        cq_vec3 mirrored = cq_mad(p->position, c->normal, p->depth);
        bool found = false;
        for (int m = 0; m < s.point_count && !found; m++)
            found = cq_len(cq_sub(s.points[m].position, mirrored)) <= 1e-9 &&
                    fabs(s.points[m].depth - p->depth) <= 1e-9;
        ck_assert_msg(found, "point %d has no mirror", k);
    }
}

START_TEST(random_contacts_against_oracles)
{
    tu_rng rng = {8675309};
    int over = 0, apart = 0, edges = 0, faces = 0;
    for (int i = 0; i < 6000; i++) {
        cq_vec3 a[3], b[3];
        random_pair(&rng, 0.45, a, b);
        double skin = i % 3 == 0 ? 0.05 : 0;
        cq_contact c = collide(a, b, skin);
        double face_pen, g = oracle_gap(a, b, &face_pen);
        if (fabs(g) <= BAND * case_size(a, b))
            continue;
        check_swap(a, b, &c, skin);
        if (g > 0) {
            apart++;
            check_separated(a, b, &c);
            ck_assert(c.overlap == (c.distance <= skin));
            continue;
        }
        over++;
        check_overlapping(a, b, &c, skin);
        bool face = fabs(pen_along(a, b, c.normal) - face_pen) <= 1e-12;
        faces += face;
        edges += !face;
    }
    ck_assert_int_gt(over, 1500);
    ck_assert_int_gt(apart, 1500);
    ck_assert_int_gt(edges, 10);
    ck_assert_int_gt(faces, 500);
}
END_TEST

/* A vertex of B pokes 0.1 through a large A: A's face is the reference,
 * the point is that vertex. Swapped, B's face is, and the point lands on it. */
START_TEST(vertex_through_face)
{
    static const cq_vec3 big[3] = {{-5, -5, 0}, {5, -5, 0}, {0, 5, 0}};
    static const cq_vec3 small[3] = {{0, 0, -0.1}, {1, 0, 1}, {0, 1, 1}};
    cq_contact c = collide(big, small, 0);
    check_overlapping(big, small, &c, 0);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.1, 1e-15);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, small[0], 1e-12);
    ck_assert(c.points[0].feature.kind_a == CQ_FEAT_FACE && c.points[0].feature.kind_b == CQ_FEAT_VERTEX);
    c = collide(small, big, 0);
    check_overlapping(small, big, &c, 0);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, -1), 1e-15);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0, 0, 0), 1e-12);
    ck_assert(c.points[0].feature.kind_a == CQ_FEAT_VERTEX && c.points[0].feature.kind_b == CQ_FEAT_FACE);
}
END_TEST

/* Coplanar overlap penetrates nothing along the normal: depth 0, normal
 * along the plane's, points on the overlap polygon. */
START_TEST(coplanar_contact)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    static const cq_vec3 b[3] = {{0.5, 0.5, 0}, {3, 0.5, 0}, {0.5, 3, 0}};
    cq_contact c = collide(a, b, 0);
    ck_assert(c.overlap);
    ck_assert_double_eq_tol(c.depth, 0, 1e-15);
    ck_assert_double_eq_tol(fabs(c.normal.z), 1, 1e-15);
    ck_assert_int_eq(c.point_count, 3); /* the overlap is the triangle (.5,.5) (1.5,.5) (.5,1.5) */
    for (int k = 0; k < 3; k++) {
        cq_vec3 p = c.points[k].position;
        ck_assert_double_eq_tol(p.z, 0, 1e-15);
        ck_assert(p.x >= 0.5 - 1e-12 && p.y >= 0.5 - 1e-12 && p.x + p.y <= 2 + 1e-12);
    }
}
END_TEST

START_TEST(edge_cross_contact)
{
    /* B's edge along y dips 0.05 below A's edge along x... at A's corner
     * region: A vertical in the xz plane, B vertical in the yz plane. */
    static const cq_vec3 a[3] = {{-1, 0, 0}, {1, 0, 0}, {0, 0, -2}};
    static const cq_vec3 b[3] = {{0, -1, -0.05}, {0, 1, -0.05}, {0, 0, 2}};
    cq_contact c = collide(a, b, 0);
    check_overlapping(a, b, &c, 0);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.05, 1e-15);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, cq_v3(0, 0, -0.05), 1e-15);
    ck_assert(c.points[0].feature.kind_a == CQ_FEAT_EDGE && c.points[0].feature.index_a == 0);
    ck_assert(c.points[0].feature.kind_b == CQ_FEAT_EDGE && c.points[0].feature.index_b == 0);
}
END_TEST

START_TEST(within_skin_touches_at_witness)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    static const cq_vec3 b[3] = {{0.5, 0.5, 0.01}, {1, 0.5, 1}, {0.5, 1, 1}};
    cq_contact c = collide(a, b, 0.02);
    ck_assert(c.overlap && c.has_distance);
    ck_assert_double_eq_tol(c.distance, 0.01, 1e-15);
    ck_assert_double_eq(c.depth, 0);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-12);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, b[0], 1e-15);
    ck_assert_double_eq_tol(c.points[0].depth, -0.01, 1e-15);
    ck_assert(c.points[0].feature.kind_a == CQ_FEAT_FACE && c.points[0].feature.kind_b == CQ_FEAT_VERTEX);
    c = collide(a, b, 0.005);
    ck_assert(!c.overlap && c.point_count == 0 && c.has_distance);
}
END_TEST

START_TEST(skipped_axes_are_counted)
{
    static const cq_vec3 a[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    static const cq_vec3 b[3] = {{0.5, 0.5, -1}, {1.5, 0.5, -1}, {0.5, 0.5, 1}}; /* edges along x and z */
    cq_counters ctr = {0};
    cq_contact c = collide_cache(a, b, 0, NULL, &ctr);
    check_overlapping(a, b, &c, 0);
    ck_assert_uint_eq(ctr.v[CQ_CTR_SAT_AXES_SKIPPED], 1); /* A's x edge against B's x edge */
}
END_TEST

Suite *tri_tri_suite(void)
{
    Suite *s = suite_create("tri_tri");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, random_overlap_agrees_with_brute_force);
    tcase_add_test(tc, overlap_near_the_boundary);
    tcase_add_test(tc, coplanar_cases);
    tcase_add_test(tc, piercing_cases);
    tcase_add_test(tc, degenerate_cases);
    tcase_add_test(tc, coincident_points_fall_back);
    tcase_add_test(tc, random_contacts_against_oracles);
    tcase_add_test(tc, vertex_through_face);
    tcase_add_test(tc, coplanar_contact);
    tcase_add_test(tc, edge_cross_contact);
    tcase_add_test(tc, within_skin_touches_at_witness);
    tcase_add_test(tc, skipped_axes_are_counted);
    suite_add_tcase(s, tc);
    return s;
}
