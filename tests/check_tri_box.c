/* Triangle-box: the 13-axis overlap test and the box-triangle contact
 * against a brute-force SAT that projects all eight box corners and all
 * three vertices on every candidate axis (world space, unit axes), plus
 * analytic cases: touching, edge-on, vertex on a face, degenerate
 * triangles, deep and contained triangles. */
#include "geom.h"
#include "testutil.h"

/* Outside this band around zero gap (relative to the case's size) the fast
 * test must agree with the oracle. */
#define BAND 1e-9

static cq_shape box_shape(cq_vec3 h) { return (cq_shape){.type = CQ_BOX, .box = {h}}; }

static cq_shape tri_shape(const cq_vec3 t[3]) { return (cq_shape){.type = CQ_TRIANGLE, .triangle = {{t[0], t[1], t[2]}}}; }

/* ---- Oracles ---- */

static void box_range(const cq_obb *o, cq_vec3 l, double *lo, double *hi)
{
    cq_vec3 c[8];
    tu_obb_corners(o, c);
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < 8; k++)
        *lo = fmin(*lo, cq_dot(c[k], l)), *hi = fmax(*hi, cq_dot(c[k], l));
}

static void tri_range(const cq_vec3 t[3], cq_vec3 l, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < 3; k++)
        *lo = fmin(*lo, cq_dot(t[k], l)), *hi = fmax(*hi, cq_dot(t[k], l));
}

/* Candidate axis k (0..12): box axes, triangle normal, box axis x edge.
 * Returns false for an axis that is degenerate (sine below 1e-6). */
static bool oracle_axis(const cq_obb *o, const cq_vec3 t[3], int k, cq_vec3 *l)
{
    cq_vec3 e[3] = {cq_sub(t[1], t[0]), cq_sub(t[2], t[1]), cq_sub(t[0], t[2])};
    double ref;
    if (k < 3)
        *l = o->axes.c[k], ref = 1;
    else if (k == 3)
        *l = cq_cross(e[0], cq_neg(e[2])), ref = cq_len2(e[0]) * cq_len2(e[2]);
    else
        *l = cq_cross(o->axes.c[(k - 4) / 3], e[(k - 4) % 3]), ref = cq_len2(e[(k - 4) % 3]);
    if (!(cq_len2(*l) > 1e-12 * ref))
        return false;
    *l = cq_scale(*l, 1 / cq_len(*l));
    return true;
}

/* Gap (positive = separated) and overlap along unit l (B = triangle). */
static double gap_along(const cq_obb *o, const cq_vec3 t[3], cq_vec3 l)
{
    double alo, ahi, blo, bhi;
    box_range(o, l, &alo, &ahi);
    tri_range(t, l, &blo, &bhi);
    return fmax(blo - ahi, alo - bhi);
}

/* Penetration when B moves along +n (n from A to B). */
static double pen_along(const cq_obb *o, const cq_vec3 t[3], cq_vec3 n)
{
    double alo, ahi, blo, bhi;
    box_range(o, n, &alo, &ahi);
    tri_range(t, n, &blo, &bhi);
    return ahi - blo;
}

/* The largest gap over every candidate axis; its negative is the minimum
 * penetration. face_pen gets the least penetration over the face axes. */
static double oracle_gap(const cq_obb *o, const cq_vec3 t[3], double *face_pen)
{
    double best = -INFINITY, face = INFINITY;
    for (int k = 0; k < 13; k++) {
        cq_vec3 l;
        if (!oracle_axis(o, t, k, &l))
            continue;
        double g = gap_along(o, t, l);
        best = fmax(best, g);
        if (k < 4)
            face = fmin(face, -g);
    }
    if (face_pen)
        *face_pen = face;
    return best;
}

static double case_size(const cq_obb *o, const cq_vec3 t[3])
{
    double s = fmax(fmax(o->half.x, o->half.y), o->half.z);
    for (int k = 0; k < 3; k++)
        s = fmax(s, cq_len(cq_sub(t[k], o->center)));
    return s;
}

/* Oracle: the Euclidean distance of a separated box and triangle, the
 * least of every triangle vertex to the box (clamped in its frame), every
 * box corner to the triangle, and every box edge to every triangle edge. */
static double oracle_distance(const cq_obb *o, const cq_vec3 t[3])
{
    cq_vec3 c[8];
    tu_obb_corners(o, c);
    double best = INFINITY;
    for (int k = 0; k < 3; k++) {
        cq_vec3 l = cq_mul_mtv(&o->axes, cq_sub(t[k], o->center));
        cq_vec3 d = cq_v3(fmax(fabs(l.x) - o->half.x, 0), fmax(fabs(l.y) - o->half.y, 0), fmax(fabs(l.z) - o->half.z, 0));
        best = fmin(best, cq_len(d));
    }
    for (int k = 0; k < 8; k++)
        best = fmin(best, tu_dist_point_triangle(c[k], t));
    for (int i = 0; i < 8; i++) /* box edges join corners one bit apart */
        for (int bit = 0; bit < 3; bit++)
            for (int e = 0; e < 3 && !(i >> bit & 1); e++) {
                double s, u;
                cq_vec3 p, q;
                best = fmin(best, sqrt(cq__closest_segments(c[i], c[i | 1 << bit], t[e], t[(e + 1) % 3], &s, &u, &p, &q)));
            }
    return best;
}

/* ---- Helpers ---- */

static cq_obb make_obb(cq_vec3 c, cq_vec3 h, cq_mat3 r) { return (cq_obb){c, h, r}; }

static cq_contact collide_box_tri(const cq_obb *o, const cq_vec3 t[3], double skin, const cq_pair_cache *cache,
                                  cq_counters *ctr)
{
    cq_shape a = box_shape(o->half), b = tri_shape(t);
    cq_pair_query q = {.a = &a, .xa = {o->center, o->axes}, .b = &b, .xb = cq_xform_identity(),
                       .skin = skin, .cache = cache, .counters = ctr};
    cq_contact c;
    ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
    tu_assert_contact_sane(c);
    ck_assert_str_eq(cq_algorithm_name(c.algorithm), "sat_triangle_box");
    return c;
}

/* The signed distance from p to the box o, from its definition. */
static double oracle_box_sdf(const cq_obb *o, cq_vec3 p)
{
    cq_vec3 l = cq_mul_mtv(&o->axes, cq_sub(p, o->center));
    double q[3] = {fabs(l.x) - o->half.x, fabs(l.y) - o->half.y, fabs(l.z) - o->half.z}, out = 0;
    for (int i = 0; i < 3; i++)
        out += fmax(q[i], 0) * fmax(q[i], 0);
    return sqrt(out) + fmin(fmax(q[0], fmax(q[1], q[2])), 0);
}

static void random_case(tu_rng *rng, double spread, cq_obb *o, cq_vec3 t[3])
{
    cq_vec3 h = cq_v3(tu_uniform(rng, 0.05, 1), tu_uniform(rng, 0.05, 1), tu_uniform(rng, 0.05, 1));
    *o = make_obb(cq_v3(tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1), tu_uniform(rng, -1, 1)), h, tu_rotation(rng));
    cq_vec3 c = cq_add(o->center, cq_v3(tu_uniform(rng, -spread, spread), tu_uniform(rng, -spread, spread),
                                        tu_uniform(rng, -spread, spread)));
    double s = tu_uniform(rng, 0.1, 1.5);
    for (int k = 0; k < 3; k++)
        t[k] = cq_add(c, cq_v3(tu_uniform(rng, -s, s), tu_uniform(rng, -s, s), tu_uniform(rng, -s, s)));
}

static void translate(const cq_vec3 in[3], cq_vec3 d, cq_vec3 out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = cq_add(in[k], d);
}

/* ---- Overlap test ---- */

START_TEST(random_overlap_agrees_with_brute_force)
{
    tu_rng rng = {20240603};
    int n = 20000, overlaps = 0, in_band = 0;
    for (int i = 0; i < n; i++) {
        cq_obb o;
        cq_vec3 t[3];
        random_case(&rng, 0.75, &o, t);
        double g = oracle_gap(&o, t, NULL);
        bool fast = cq_triangle_box_overlap(t, &o);
        overlaps += fast;
        if (fabs(g) <= BAND * case_size(&o, t)) {
            in_band++;
            continue;
        }
        ck_assert_msg(fast == (g <= 0), "case %d: fast %d, oracle gap %.17g", i, fast, g);
    }
    /* Both verdicts are well represented, so the boundary is exercised. */
    ck_assert_msg(overlaps > n / 4 && overlaps < 3 * n / 4, "overlaps %d of %d", overlaps, n);
    ck_assert_int_lt(in_band, 5);
}
END_TEST

/* Bisects the offset t along a random direction where the oracle's verdict
 * flips, then checks the fast test a relative 1e-7 on either side. */
START_TEST(overlap_near_the_boundary)
{
    tu_rng rng = {77001};
    int checked = 0;
    for (int i = 0; i < 2000; i++) {
        cq_obb o;
        cq_vec3 t0[3], t[3];
        random_case(&rng, 0, &o, t0);
        cq_vec3 c = cq_scale(cq_add(cq_add(t0[0], t0[1]), t0[2]), 1.0 / 3);
        translate(t0, cq_sub(o.center, c), t0); /* centroid at the box centre: overlapping */
        cq_vec3 d = cq_mul_mv(&o.axes, cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1)));
        double lo = 0, hi = 10;
        for (int it = 0; it < 80; it++) {
            translate(t0, cq_scale(d, 0.5 * (lo + hi)), t);
            *(oracle_gap(&o, t, NULL) <= 0 ? &lo : &hi) = 0.5 * (lo + hi);
        }
        for (int side = -1; side <= 1; side += 2) {
            translate(t0, cq_scale(d, lo * (1 + side * 1e-7)), t);
            double g = oracle_gap(&o, t, NULL);
            if (fabs(g) <= BAND * case_size(&o, t))
                continue;
            checked++;
            ck_assert_msg(cq_triangle_box_overlap(t, &o) == (g <= 0), "case %d side %d gap %g", i, side, g);
        }
    }
    ck_assert_int_gt(checked, 3000);
}
END_TEST

START_TEST(touching_counts_as_overlap)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 2, 3), cq_mat3_identity());
    /* Lying on the top face; a vertex on the face; an edge on a box edge from outside. */
    cq_vec3 flat[3] = {{-0.5, -0.5, 3}, {0.5, -0.5, 3}, {0, 0.5, 3}};
    cq_vec3 vertex[3] = {{0.2, 0.3, 3}, {1, 1, 4}, {-1, 1, 4}};
    cq_vec3 edge[3] = {{-0.5, 2, 3}, {0.5, 2, 3}, {0, 3, 4}};
    const cq_vec3 *cases[3] = {flat, vertex, edge};
    cq_vec3 away[3] = {{0, 0, 1}, {0, 0, 1}, {0, 1, 1}};
    for (int k = 0; k < 3; k++) {
        cq_vec3 t[3];
        ck_assert_msg(cq_triangle_box_overlap(cases[k], &o), "touching case %d", k);
        translate(cases[k], cq_scale(away[k], 1e-6), t);
        ck_assert_msg(!cq_triangle_box_overlap(t, &o), "lifted case %d", k);
        translate(cases[k], cq_scale(away[k], -1e-6), t);
        ck_assert_msg(cq_triangle_box_overlap(t, &o), "pressed case %d", k);
    }
}
END_TEST

/* Touching built in a rotated frame is touching only up to rounding: the
 * tolerance must absorb it (face contact, a vertex on a face, crossed
 * edges), and a lift of 1e-9 of the size must still separate. */
START_TEST(touching_under_rotation)
{
    tu_rng rng = {4242};
    for (int i = 0; i < 300; i++) {
        cq_vec3 h = cq_v3(tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2));
        cq_obb o = make_obb(cq_v3(tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5), tu_uniform(&rng, -5, 5)), h,
                            tu_rotation(&rng));
        cq_vec3 local[3][3] = {
            {{0.5 * h.x, 0, h.z}, {-0.5 * h.x, 0.5 * h.y, h.z}, {0, -0.5 * h.y, h.z}},      /* on the +z face */
            {{0.3 * h.x, 0.2 * h.y, h.z}, {h.x, 3, h.z + 2}, {-3, h.y, h.z + 1}},          /* a vertex on it */
            {{h.x, -2 * h.y, h.z}, {h.x, 2 * h.y, h.z}, {h.x + 1, 0, h.z + 1}},          /* an edge on the edge */
        };
        cq_vec3 away[3] = {{0, 0, 1}, {0, 0, 1}, {1, 0, 1}};
        for (int k = 0; k < 3; k++) {
            cq_vec3 t[3], lifted[3];
            for (int v = 0; v < 3; v++)
                t[v] = cq_add(o.center, cq_mul_mv(&o.axes, local[k][v]));
            cq_vec3 up = cq_mul_mv(&o.axes, cq_scale(away[k], 1e-9 * case_size(&o, t) / cq_len(away[k])));
            translate(t, up, lifted);
            ck_assert_msg(cq_triangle_box_overlap(t, &o), "case %d kind %d", i, k);
            ck_assert_msg(!cq_triangle_box_overlap(lifted, &o), "lifted case %d kind %d", i, k);
            cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
            ck_assert(c.overlap && c.depth <= 1e-12 * case_size(&o, t));
        }
    }
}
END_TEST

/* Seen edge-on: the triangle's plane contains a box axis direction. */
START_TEST(edge_on_triangle)
{
    cq_obb o = make_obb(cq_v3(1, 1, 1), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_vec3 slice[3] = {{0.5, -3, -3}, {0.5, 5, -3}, {0.5, 1, 5}};
    ck_assert(cq_triangle_box_overlap(slice, &o));
    cq_vec3 beside[3] = {{2 + 1e-6, -3, -3}, {2 + 1e-6, 5, -3}, {2 + 1e-6, 1, 5}};
    ck_assert(!cq_triangle_box_overlap(beside, &o));
    cq_vec3 on[3] = {{2, -3, -3}, {2, 5, -3}, {2, 1, 5}};
    ck_assert(cq_triangle_box_overlap(on, &o));
    /* Edge-on and diagonal, beside the box's (x = 2, y = 2) edge: touches
     * both face planes x = 2 and y = 2, separated only along its own normal
     * (x + y = 4.5 against the box's 4). */
    cq_vec3 diag[3] = {{2.5, 2, -5}, {2, 2.5, -5}, {2.25, 2.25, 5}};
    ck_assert(!cq_triangle_box_overlap(diag, &o));
    ck_assert_double_eq_tol(oracle_gap(&o, diag, NULL), 0.5 / sqrt(2), 1e-12);
}
END_TEST

START_TEST(degenerate_triangles)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), tu_axis_angle(cq_v3(0, 0, 1), 0.3));
    cq_vec3 p_in[3] = {{0.2, 0.1, 0.3}, {0.2, 0.1, 0.3}, {0.2, 0.1, 0.3}};
    cq_vec3 p_out[3] = {{0, 0, 1.01}, {0, 0, 1.01}, {0, 0, 1.01}};
    cq_vec3 line[3] = {{-3, -3, 0.5}, {3, 3, 0.5}, {1, 1, 0.5}};        /* collinear, through the box */
    cq_vec3 line_out[3] = {{-3, 3.5, 0}, {3, 3.5, 0}, {0, 3.5, 0}};      /* collinear, y = 3.5 > 1.26 */
    cq_vec3 segment_past[3] = {{2, 2, -3}, {2, 2, 3}, {2, 2, 0}};       /* beside a corner: |(2,2)| > sqrt 2 */
    cq_vec3 two_same[3] = {{0.5, 0.5, 3}, {0.5, 0.5, 3}, {0.5, 0.5, -3}}; /* a vertical segment through it */
    ck_assert(cq_triangle_box_overlap(p_in, &o));
    ck_assert(!cq_triangle_box_overlap(p_out, &o));
    ck_assert(cq_triangle_box_overlap(line, &o));
    ck_assert(!cq_triangle_box_overlap(line_out, &o));
    ck_assert(!cq_triangle_box_overlap(segment_past, &o));
    ck_assert(cq_triangle_box_overlap(two_same, &o));
}
END_TEST

START_TEST(zero_extent_box)
{
    cq_obb flat = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 0), cq_mat3_identity());
    cq_obb point = make_obb(cq_v3(0, 0, 0), cq_v3(0, 0, 0), cq_mat3_identity());
    cq_vec3 through[3] = {{0, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
    cq_vec3 above[3] = {{0, 0, 0.1}, {1, 0, 1}, {-1, 0, 1}};
    ck_assert(cq_triangle_box_overlap(through, &flat));
    ck_assert(!cq_triangle_box_overlap(above, &flat));
    ck_assert(cq_triangle_box_overlap(through, &point));
    ck_assert(!cq_triangle_box_overlap(above, &point));
    cq_contact c = collide_box_tri(&point, through, 0, NULL, NULL);
    ck_assert(c.overlap);
}
END_TEST

/* ---- Contact ---- */

/* Checks one overlapping contact against the oracle. */
static void check_contact(const cq_obb *o, const cq_vec3 t[3], const cq_contact *c, double skin)
{
    double face_pen, g = oracle_gap(o, t, &face_pen), min_pen = -g;
    ck_assert(c->overlap && c->has_normal);
    ck_assert(!c->has_distance || c->distance <= skin + 1e-12); /* separated only within skin */
    double pen = pen_along(o, t, c->normal);
    ck_assert_double_eq_tol(fmax(pen, 0), c->depth, 1e-9);
    /* The chosen axis is within the face preference of the minimum. */
    ck_assert_msg(pen >= min_pen - 1e-9, "pen %g below the minimum %g", pen, min_pen);
    if (min_pen > 0)
        ck_assert_msg(pen <= min_pen / 0.95 + 1e-9, "pen %g vs min %g", pen, min_pen);
    if (pen > min_pen + 1e-9) /* not the least: must be a face axis */
        ck_assert_double_eq_tol(pen, face_pen, 1e-9);
    /* Moving B along the normal by the depth separates. */
    cq_vec3 moved[3];
    translate(t, cq_scale(c->normal, c->depth + 1e-7), moved);
    ck_assert_msg(oracle_gap(o, moved, NULL) > 0, "moved gap %g", oracle_gap(o, moved, NULL));
    /* Apart within the skin, no line along the normal may meet both
     * shapes (a triangle beside a face): then there is no point. */
    if (c->depth > 1e-9)
        ck_assert_int_ge(c->point_count, 1);
    for (int k = 0; k < c->point_count; k++) {
        ck_assert_msg(tu_dist_point_triangle(c->points[k].position, t) <= 1e-9, "point %d off B", k);
        ck_assert(c->points[k].depth <= c->depth + 1e-9 && c->points[k].depth >= -skin - 1e-9);
    }
}

/* The swapped query through cq_collide mirrors the canonical one. */
static void check_swap(const cq_obb *o, const cq_vec3 t[3], const cq_contact *c, double skin)
{
    cq_shape a = box_shape(o->half), b = tri_shape(t);
    cq_pair_query q = {.a = &b, .xa = cq_xform_identity(), .b = &a, .xb = {o->center, o->axes}, .skin = skin};
    cq_contact s;
    ck_assert_int_eq(cq_collide(&q, &s), CQ_OK);
    ck_assert_str_eq(cq_algorithm_name(s.algorithm), "sat_triangle_box");
    ck_assert(s.overlap == c->overlap && s.point_count == c->point_count);
    tu_assert_vec_eq_tol(s.normal, cq_neg(c->normal), 1e-15);
    ck_assert_double_eq_tol(s.depth, c->depth, 1e-15);
    for (int k = 0; k < c->point_count; k++) {
        const cq_contact_point *p = &c->points[k], *m = &s.points[k];
        tu_assert_vec_eq_tol(m->position, cq_mad(p->position, c->normal, p->depth), 1e-12);
        ck_assert(m->feature.kind_a == p->feature.kind_b && m->feature.index_b == p->feature.index_a);
    }
}

START_TEST(random_contacts_against_oracle)
{
    tu_rng rng = {5150};
    int over = 0, edges = 0, faces = 0;
    for (int i = 0; i < 6000; i++) {
        cq_obb o;
        cq_vec3 t[3];
        random_case(&rng, 0.9, &o, t);
        double skin = i % 3 == 0 ? 0.05 : 0;
        cq_contact c = collide_box_tri(&o, t, skin, NULL, NULL);
        double face_pen, g = oracle_gap(&o, t, &face_pen);
        check_swap(&o, t, &c, skin);
        if (fabs(g - skin) <= BAND * case_size(&o, t))
            continue;
        /* Separated pairs are measured in Euclidean distance (the SAT gap
         * only bounds it from below). */
        double d = g > 0 ? oracle_distance(&o, t) : 0;
        if (g > 0 && fabs(d - skin) <= BAND * case_size(&o, t))
            continue;
        ck_assert_msg(c.overlap == (g <= 0 || d <= skin), "case %d gap %g distance %g skin %g", i, g, d, skin);
        if (g > 0) {
            ck_assert(c.has_distance && c.has_normal);
            ck_assert_double_eq_tol(c.distance, d, 1e-9 * (1 + d));
            ck_assert(c.distance >= g - 1e-12);
        }
        if (!c.overlap) {
            ck_assert(c.point_count == 0);
            continue;
        }
        over++;
        check_contact(&o, t, &c, skin);
        bool face = fabs(pen_along(&o, t, c.normal) - face_pen) <= 1e-12;
        faces += face;
        edges += !face;
    }
    ck_assert_int_gt(over, 1500);
    ck_assert_int_gt(edges, 10); /* both kinds of axis were chosen */
    ck_assert_int_gt(faces, 1000);
}
END_TEST

START_TEST(deep_slab_uses_box_face)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_vec3 t[3] = {{-10, -10, 0.9}, {10, -10, 0.9}, {0, 10, 0.9}};
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.1, 1e-12);
    ck_assert_int_eq(c.point_count, 4); /* the clipped square of the top face */
    for (int k = 0; k < 4; k++) {
        cq_vec3 p = c.points[k].position;
        ck_assert_double_eq_tol(fabs(p.x), 1, 1e-12);
        ck_assert_double_eq_tol(fabs(p.y), 1, 1e-12);
        ck_assert_double_eq_tol(p.z, 0.9, 1e-12);
        ck_assert_double_eq_tol(c.points[k].depth, 0.1, 1e-12);
        ck_assert_int_eq(c.points[k].feature.kind_a, CQ_FEAT_EDGE); /* cut by the top face's side edges */
    }
    check_contact(&o, t, &c, 0);
}
END_TEST

START_TEST(small_triangle_inside_box)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_vec3 t[3] = {{0.8, -0.1, -0.1}, {0.8, 0.1, -0.1}, {0.8, 0, 0.1}};
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.2, 1e-12);
    ck_assert_int_eq(c.point_count, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_double_eq_tol(c.points[k].depth, 0.2, 1e-12);
        ck_assert_int_eq(c.points[k].feature.kind_a, CQ_FEAT_FACE);
        ck_assert_int_eq(c.points[k].feature.index_a, 0); /* +x face */
        ck_assert_int_eq(c.points[k].feature.kind_b, CQ_FEAT_VERTEX);
    }
    check_contact(&o, t, &c, 0);
}
END_TEST

/* The triangle's normal wins: a tilted box corner pokes into a big
 * triangle; the box face most anti-parallel is clipped to it. */
START_TEST(box_corner_into_triangle)
{
    cq_mat3 r = tu_axis_angle(cq_v3(1, 0, 0), 0.2);
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), r);
    double top = cq_dot(cq_v3(0, 0, 1), cq_mul_mv(&r, cq_v3(0, 1, 1))) - 0.05;
    cq_vec3 t[3] = {{-5, -5, top}, {5, -5, top}, {0, 5, top}};
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-12);
    ck_assert_double_eq_tol(c.depth, 0.05, 1e-12);
    ck_assert_int_ge(c.point_count, 2);
    for (int k = 0; k < c.point_count; k++) {
        ck_assert_double_eq_tol(c.points[k].position.z, top, 1e-12); /* projected onto B */
        ck_assert_int_eq(c.points[k].feature.kind_b, CQ_FEAT_FACE);  /* B's half is the triangle's */
    }
    check_contact(&o, t, &c, 0);
}
END_TEST

/* A triangle edge crossing the box's (x = 1, z = 1) edge diagonally, 0.01
 * inside it: only the edge-cross axis (1, 0, 1)/sqrt 2 gives that depth. */
START_TEST(edge_edge_contact)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    double e = 0.01 / sqrt(2);
    cq_vec3 p = cq_v3(1 - e, 0, 1 - e), d = cq_v3(3, 0, -3);
    cq_vec3 t[3] = {cq_sub(p, d), cq_add(p, d), {2, 0.5, 2}};
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    check_contact(&o, t, &c, 0);
    tu_assert_vec_eq_tol(c.normal, cq_scale(cq_v3(1, 0, 1), 1 / sqrt(2)), 1e-12);
    ck_assert_double_eq_tol(c.depth, 0.01, 1e-12);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, p, 1e-12);
    ck_assert_int_eq(c.points[0].feature.kind_a, CQ_FEAT_EDGE);
    ck_assert_int_eq(c.points[0].feature.index_a, 4); /* along y, x and z positive */
    ck_assert_int_eq(c.points[0].feature.kind_b, CQ_FEAT_EDGE);
    ck_assert_int_eq(c.points[0].feature.index_b, 0);
}
END_TEST

START_TEST(degenerate_triangle_contacts)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_counters ctr = {0};
    cq_vec3 point[3] = {{0.7, 0.1, 0.2}, {0.7, 0.1, 0.2}, {0.7, 0.1, 0.2}};
    cq_contact c = collide_box_tri(&o, point, 0, NULL, &ctr);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.3, 1e-12);
    ck_assert_int_eq(c.point_count, 1);
    tu_assert_vec_eq_tol(c.points[0].position, point[0], 1e-12);
    ck_assert_uint_eq(ctr.v[CQ_CTR_SAT_AXES_SKIPPED], 10); /* normal + 9 crosses */
    cq_vec3 seg[3] = {{-2, 0.3, 0.8}, {2, 0.3, 0.8}, {0, 0.3, 0.8}};
    c = collide_box_tri(&o, seg, 0, NULL, NULL);
    check_contact(&o, seg, &c, 0);
    ck_assert_double_eq_tol(c.depth, 0.2, 1e-12);
    cq_vec3 out[3] = {{-2, 1.5, 0.8}, {2, 1.5, 0.8}, {0, 1.5, 0.8}};
    c = collide_box_tri(&o, out, 0, NULL, NULL);
    ck_assert(!c.overlap && c.has_normal);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 1, 0), 1e-15);
}
END_TEST

START_TEST(axis_aligned_edges_are_skipped_and_counted)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_counters ctr = {0};
    cq_vec3 t[3] = {{0, 0, 0.5}, {3, 0, 0.5}, {0, 3, 0.5}}; /* edges along x, y and the diagonal */
    cq_contact c = collide_box_tri(&o, t, 0, NULL, &ctr);
    ck_assert_uint_eq(ctr.v[CQ_CTR_SAT_AXES_SKIPPED], 2); /* x cross the x edge, y cross the y edge */
    check_contact(&o, t, &c, 0);
}
END_TEST

START_TEST(sign_tie_follows_previous_normal)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_vec3 t[3] = {{-10, -10, 0}, {10, -10, 0}, {0, 10, 0}}; /* through the centre */
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    ck_assert_double_eq_tol(c.depth, 1, 1e-12);
    ck_assert_double_eq_tol(fabs(c.normal.z), 1, 1e-15);
    cq_pair_cache down = {.has_normal = true, .normal = {0, 0, -1}}, up = {.has_normal = true, .normal = {0, 0, 1}};
    c = collide_box_tri(&o, t, 0, &down, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, -1), 1e-15);
    c = collide_box_tri(&o, t, 0, &up, NULL);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-15);
}
END_TEST

/* A flat box (zero thickness along z) whose face along the normal (+x) is
 * a segment, against a triangle seen edge-on (in the plane y = 0, square
 * to z): the triangle-reference clip cannot see it, and the triangle's
 * deepest vertex (0.9, 0, -0.5) stood for the contact at depth 0.1, 0.5
 * off the box once moved. The triangle's cut by the box's plane z = 0
 * runs from x = 0.9 to 0.905, each end measured along x to the face at 1. */
START_TEST(flat_box_segment_face_against_an_edge_on_triangle)
{
    cq_obb o = make_obb(cq_v3(0, 0.4, 0), cq_v3(1, 1, 0), cq_mat3_identity());
    cq_vec3 t[3] = {{0.9, 0, -0.5}, {0.9, 0, 0.5}, {0.91, 0, -0.5}};
    cq_contact c = collide_box_tri(&o, t, 0, NULL, NULL);
    ck_assert(c.overlap);
    tu_assert_vec_eq_tol(c.normal, cq_v3(1, 0, 0), 1e-15);
    ck_assert_double_eq_tol(c.depth, 0.1, 1e-12);
    ck_assert_int_eq(c.point_count, 2);
    const double want_x[2] = {0.9, 0.905};
    for (int i = 0; i < 2; i++) {
        int hit = 0;
        for (int k = 0; k < c.point_count; k++) {
            cq_contact_point p = c.points[k];
            hit += cq_len(cq_sub(p.position, cq_v3(want_x[i], 0, 0))) < 1e-12 && fabs(p.depth - (1 - want_x[i])) < 1e-12;
        }
        ck_assert_msg(hit == 1, "no point at x = %g", want_x[i]);
    }
    for (int k = 0; k < c.point_count; k++) {
        cq_vec3 on_a = cq_add(c.points[k].position, cq_scale(c.normal, c.points[k].depth));
        ck_assert_double_eq_tol(oracle_box_sdf(&o, on_a), 0, 1e-12);
    }
}
END_TEST

START_TEST(skin_contact_has_negative_depth)
{
    cq_obb o = make_obb(cq_v3(0, 0, 0), cq_v3(1, 1, 1), cq_mat3_identity());
    cq_vec3 t[3] = {{-0.5, -0.5, 1.01}, {0.5, -0.5, 1.01}, {0, 0.5, 1.01}};
    cq_contact c = collide_box_tri(&o, t, 0.02, NULL, NULL);
    ck_assert(c.overlap && c.has_distance);
    ck_assert_double_eq_tol(c.distance, 0.01, 1e-12);
    ck_assert_double_eq(c.depth, 0);
    tu_assert_vec_eq_tol(c.normal, cq_v3(0, 0, 1), 1e-15);
    ck_assert_int_eq(c.point_count, 3);
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq_tol(c.points[k].depth, -0.01, 1e-12);
    c = collide_box_tri(&o, t, 0.005, NULL, NULL);
    ck_assert(!c.overlap && c.point_count == 0);
    /* Within skin but beside the top face: the clip is empty, and no line
     * along the normal meets both shapes, so no point obeys the point rule
     * (the deepest vertex at the axis's gap lay 0.005 beside the box). */
    cq_vec3 side[3] = {{1.005, -0.5, 1.005}, {3, -0.5, 3}, {3, 0.5, 3}};
    c = collide_box_tri(&o, side, 0.02, NULL, NULL);
    ck_assert(c.overlap);
    ck_assert_int_eq(c.point_count, 0);
    /* Above the face's corner instead, the deepest vertex stands in,
     * measured along the normal to the face: 1.005 - 1. */
    cq_vec3 corner[3] = {{0.995, -0.5, 1.005}, {3, -0.5, 3}, {3, 0.5, 3}};
    c = collide_box_tri(&o, corner, 0.02, NULL, NULL);
    ck_assert(c.overlap);
    for (int k = 0; k < c.point_count; k++) {
        ck_assert(tu_dist_point_triangle(c.points[k].position, corner) <= 1e-12);
        cq_vec3 on_a = cq_add(c.points[k].position, cq_scale(c.normal, c.points[k].depth));
        ck_assert_double_eq_tol(oracle_box_sdf(&o, on_a), 0, 1e-12);
    }
}
END_TEST

/* A triangle flat on a rotated box's face, 0.005 above it within a skin
 * of 0.01 (then exactly touching), crossing the face's edges: some edge
 * axis is parallel to the face normal and shows the face's gap give or
 * take an ulp. The face must still win: the contact is the clipped polygon
 * (4 points), not one edge point (which a 1e-17 larger edge gap once gave). */
START_TEST(flat_within_skin_keeps_the_face)
{
    cq_xform pose; /* a quarter turn about x, as a client's quaternion */
    ck_assert_int_eq(cq_pose_from_quat(cq_v3(0, 0, 0), (cq_quat){0.70710678118654757, 0, 0, 0.70710678118654757}, &pose).status,
                     CQ_OK);
    const cq_mat3 r = pose.r;
    cq_obb o = make_obb(cq_v3(1.1000000000000001, 2.2999999999999998, -0.69999999999999996),
                        cq_v3(0.29999999999999999, 0.25, 0.10000000000000001), r);
    const cq_vec3 local[3] = {{-0.95000000000000007, 0.95000000000000007, 0}, {-0.29999999999999999, 0.25, 0},
                              {0.29999999999999999, -0.25, 0}};
    cq_vec3 at = cq_v3(1.3500000000000001, 2.1949999999999998, -0.59999999999999998), t[3];
    for (int i = 0; i < 3; i++)
        t[i] = cq_add(at, cq_mul_mv(&r, local[i]));
    cq_contact c = collide_box_tri(&o, t, 0.01, NULL, NULL);
    ck_assert(c.overlap && c.has_distance);
    ck_assert_double_eq_tol(c.distance, 0.005, 1e-12);
    ck_assert_double_eq_tol(fabs(c.normal.y), 1, 1e-12);
    ck_assert_msg(c.point_count == 4, "%d points", c.point_count);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(c.points[k].depth, -0.005, 1e-12);
    /* Exactly touching, where the face's penetration rounds to a few ulps
     * above 0 (a reviewer's case): the face still wins, 4 points at 0. */
    cq_obb o2 = make_obb(cq_v3(1.1, 2.3, -0.7), cq_v3(1.4142135623730949, 0.35, 0.25), r);
    const cq_vec3 local2[3] = {{-0.65, -0.4, 0}, {1.4142135623730949, 0.35, 0}, {1.4142135623730949, -0.25, 0}};
    cq_vec3 at2 = cq_v3(1.1, 2.05, -0.7);
    for (int i = 0; i < 3; i++)
        t[i] = cq_add(at2, cq_mul_mv(&r, local2[i]));
    c = collide_box_tri(&o2, t, 0.01, NULL, NULL);
    ck_assert(c.overlap);
    ck_assert_double_eq_tol(c.depth, 0, 1e-12);
    ck_assert_msg(c.point_count == 4, "touching: %d points", c.point_count);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(c.points[k].depth, 0, 1e-12);
}
END_TEST

Suite *tri_box_suite(void)
{
    Suite *s = suite_create("tri_box");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, random_overlap_agrees_with_brute_force);
    tcase_add_test(tc, flat_within_skin_keeps_the_face);
    tcase_add_test(tc, overlap_near_the_boundary);
    tcase_add_test(tc, touching_counts_as_overlap);
    tcase_add_test(tc, touching_under_rotation);
    tcase_add_test(tc, edge_on_triangle);
    tcase_add_test(tc, degenerate_triangles);
    tcase_add_test(tc, zero_extent_box);
    tcase_add_test(tc, random_contacts_against_oracle);
    tcase_add_test(tc, deep_slab_uses_box_face);
    tcase_add_test(tc, small_triangle_inside_box);
    tcase_add_test(tc, box_corner_into_triangle);
    tcase_add_test(tc, edge_edge_contact);
    tcase_add_test(tc, degenerate_triangle_contacts);
    tcase_add_test(tc, axis_aligned_edges_are_skipped_and_counted);
    tcase_add_test(tc, sign_tie_follows_previous_normal);
    tcase_add_test(tc, skin_contact_has_negative_depth);
    tcase_add_test(tc, flat_box_segment_face_against_an_edge_on_triangle);
    suite_add_tcase(s, tc);
    return s;
}
