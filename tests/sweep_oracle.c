/* The sweep suites' shared checks and oracles, which never call GJK: the
 * analytic root of |c_a + t v - c_b| = r_a + r_b (spheres), closed forms
 * over corners and vertices (planes), and for other pairs a "gap" g(t)
 * written here that is convex in t and <= 0 exactly when the shapes
 * overlap: the point-box clamp (spheres against boxes), segment-triangle
 * distance (capsule-triangle), the largest SAT gap over the 15 axes from
 * the 8 corners' projections (box-box) and over every vertex triple's
 * normal and every vertex pair cross (hulls: a superset of faces and edge
 * crosses, so still exact).
 * The first contact t* is found by a ternary search for the minimum of g
 * and a bisection before it.
 *
 * Tolerances: hit/miss must agree unless the oracle's closest approach is
 * within BAND of touching; a reported time is never after t* (1e-9) and,
 * since g <= distance <= TARGET at the reported time and g is convex,
 * never earlier than t* - TARGET / |min g| (the derivation is at
 * check_time). */
#include "sweep_oracle.h"

/* ---- the sweep under test, with the checks every answer must pass ---- */

cq_sweep_hit sweep_opt(const cq_shape *a, cq_xform xa, cq_vec3 v, const cq_shape *b, cq_xform xb,
                       const cq_sweep_options *opt)
{
    cq_sweep_hit h;
    ck_assert_int_eq(cq_sweep(a, &xa, v, b, &xb, opt, &h), CQ_OK);
    int cap = opt && opt->max_iterations > 0 ? opt->max_iterations : CQ_SWEEP_DEFAULT_MAX_ITERATIONS;
    ck_assert(isfinite(h.time) && h.time >= 0 && h.time <= 1);
    ck_assert(cq_v3_finite(h.point) && cq_v3_finite(h.normal));
    ck_assert_int_ge(h.iterations, 1);
    ck_assert_int_le(h.iterations, cap);
    if (h.has_normal)
        ck_assert_double_eq_tol(cq_len(h.normal), 1.0, 1e-12);
    if (!h.hit) {
        ck_assert(!h.initially_overlapping && !h.iteration_limit && !h.has_normal);
        ck_assert_double_eq(h.time, 1.0);
    }
    if (h.initially_overlapping)
        ck_assert_double_eq(h.time, 0.0);
    return h;
}

cq_sweep_hit sweep(const cq_shape *a, cq_xform xa, cq_vec3 v, const cq_shape *b, cq_xform xb)
{
    return sweep_opt(a, xa, v, b, xb, NULL);
}

double sphere_sphere_toi(cq_vec3 ca, cq_vec3 v, cq_vec3 cb, double rsum)
{
    cq_vec3 d = cq_sub(ca, cb);
    double a = cq_len2(v), b = cq_dot(d, v), c = cq_len2(d) - rsum * rsum;
    if (c <= 0)
        return 0;
    double disc = b * b - a * c;
    if (a == 0 || disc < 0 || b >= 0)
        return -1;
    double t = c / (-b + sqrt(disc)); /* the smaller root, without cancellation */
    return t <= 1 ? t : -1;
}

/* ---- the generic oracle: first root of a convex gap ---- */

toi_oracle oracle(gap_fn g, const void *ctx)
{
    toi_oracle o = {.g0 = g(ctx, 0), .toi = -1};
    double lo = 0, hi = 1;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (g(ctx, m1) <= g(ctx, m2))
            hi = m2;
        else
            lo = m1;
    }
    o.tmin = 0.5 * (lo + hi);
    o.gmin = g(ctx, o.tmin);
    if (o.g0 < o.gmin) {
        o.gmin = o.g0;
        o.tmin = 0;
    }
    if (o.g0 <= 0) {
        o.toi = 0;
    } else if (o.gmin <= 0) {
        lo = 0;
        hi = o.tmin;
        for (int i = 0; i < 200 && hi - lo > 1e-16; i++) {
            double m = 0.5 * (lo + hi);
            if (g(ctx, m) > 0)
                lo = m;
            else
                hi = m;
        }
        o.toi = hi;
    }
    return o;
}

void check_time(const cq_sweep_hit *h, const toi_oracle *o, tally *n)
{
    if (o->g0 < -BAND) {
        ck_assert(h->hit && h->initially_overlapping);
        n->overlaps++;
    } else if (o->g0 > BAND && o->gmin > BAND) {
        ck_assert_msg(!h->hit, "false hit: gmin %g time %g it %d", o->gmin, h->time, h->iterations);
        n->misses++;
    } else if (o->g0 > BAND && o->gmin < -BAND) {
        ck_assert_msg(h->hit && !h->initially_overlapping && !h->iteration_limit, "missed: toi %g", o->toi);
        ck_assert_double_le(h->time, o->toi + SLACK);
        ck_assert_double_ge(h->time, o->toi - TARGET / -o->gmin - SLACK);
        n->hits++;
    } else if (h->hit && !h->initially_overlapping && o->toi >= 0) {
        ck_assert_double_le(h->time, o->toi + SLACK); /* grazing: still never late */
    }
}

void check_tally(const tally *n, int min_each)
{
    ck_assert_int_ge(n->hits, min_each);
    ck_assert_int_ge(n->misses, min_each);
}

/* ---- oracle gaps ---- */

cq_vec3 clamp_box(cq_vec3 l, cq_vec3 h)
{
    return cq_v3(cq_clamp(l.x, -h.x, h.x), cq_clamp(l.y, -h.y, h.y), cq_clamp(l.z, -h.z, h.z));
}

double point_box_dist(cq_vec3 p, cq_vec3 h, const cq_xform *x)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    return cq_len(cq_sub(l, clamp_box(l, h)));
}

double sphere_box_gap(const void *p, double t)
{
    const sphere_box_ctx *c = p;
    return point_box_dist(cq_mad(c->c, c->v, t), c->h, &c->xb) - c->r;
}

static void sat_add_axis(sat_ctx *s, cq_vec3 axis, const cq_vec3 *pa, int na, const cq_vec3 *pb, int nb, cq_vec3 v)
{
    if (cq_len2(axis) < 1e-12)
        return;
    ck_assert_int_lt(s->n, MAX_AXES);
    cq_vec3 u = unit(axis);
    int k = s->n++;
    s->amin[k] = s->bmin[k] = INFINITY;
    s->amax[k] = s->bmax[k] = -INFINITY;
    for (int i = 0; i < na; i++) {
        s->amin[k] = fmin(s->amin[k], cq_dot(u, pa[i]));
        s->amax[k] = fmax(s->amax[k], cq_dot(u, pa[i]));
    }
    for (int i = 0; i < nb; i++) {
        s->bmin[k] = fmin(s->bmin[k], cq_dot(u, pb[i]));
        s->bmax[k] = fmax(s->bmax[k], cq_dot(u, pb[i]));
    }
    s->speed[k] = cq_dot(u, v);
}

double sat_gap(const void *p, double t)
{
    const sat_ctx *s = p;
    double g = -INFINITY;
    for (int k = 0; k < s->n; k++) {
        double m = t * s->speed[k];
        g = fmax(g, fmax(s->bmin[k] - (s->amax[k] + m), (s->amin[k] + m) - s->bmax[k]));
    }
    return g;
}

void sat_boxes(sat_ctx *s, const cq_obb *a, const cq_obb *b, cq_vec3 v)
{
    cq_vec3 ca[8], cb[8];
    tu_obb_corners(a, ca);
    tu_obb_corners(b, cb);
    s->n = 0;
    for (int i = 0; i < 3; i++) {
        sat_add_axis(s, a->axes.c[i], ca, 8, cb, 8, v);
        sat_add_axis(s, b->axes.c[i], ca, 8, cb, 8, v);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            sat_add_axis(s, cq_cross(a->axes.c[i], b->axes.c[j]), ca, 8, cb, 8, v);
}

static void sat_triples(sat_ctx *s, const cq_vec3 *p, int n, const cq_vec3 *pa, int na, const cq_vec3 *pb,
                        int nb, cq_vec3 v)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++)
                sat_add_axis(s, cq_cross(cq_sub(p[j], p[i]), cq_sub(p[k], p[i])), pa, na, pb, nb, v);
}

void sat_points(sat_ctx *s, const cq_vec3 *pa, int na, const cq_vec3 *pb, int nb, cq_vec3 v)
{
    s->n = 0;
    sat_triples(s, pa, na, pa, na, pb, nb, v);
    sat_triples(s, pb, nb, pa, na, pb, nb, v);
    for (int i = 0; i < na; i++)
        for (int j = i + 1; j < na; j++)
            for (int k = 0; k < nb; k++)
                for (int l = k + 1; l < nb; l++)
                    sat_add_axis(s, cq_cross(cq_sub(pa[j], pa[i]), cq_sub(pb[l], pb[k])), pa, na, pb, nb, v);
}

static double point_seg_dist(cq_vec3 p, cq_vec3 a, cq_vec3 b)
{
    cq_vec3 d = cq_sub(b, a);
    double l2 = cq_len2(d);
    double s = l2 > 0 ? cq_clamp(cq_dot(cq_sub(p, a), d) / l2, 0, 1) : 0;
    return cq_len(cq_sub(p, cq_mad(a, d, s)));
}

/* Convex in s, so a ternary search finds the minimum. */
static double seg_seg_dist(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2)
{
    double lo = 0, hi = 1;
    for (int i = 0; i < 100; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (point_seg_dist(cq_lerp(p1, q1, m1), p2, q2) <= point_seg_dist(cq_lerp(p1, q1, m2), p2, q2))
            hi = m2;
        else
            lo = m1;
    }
    return point_seg_dist(cq_lerp(p1, q1, 0.5 * (lo + hi)), p2, q2);
}

/* Inside the triangle's prism: on the inner side of all three edge planes. */
static bool in_prism(cq_vec3 p, const cq_vec3 t[3], cq_vec3 n)
{
    for (int i = 0; i < 3; i++)
        if (cq_dot(cq_cross(cq_sub(t[(i + 1) % 3], t[i]), cq_sub(p, t[i])), n) < 0)
            return false;
    return true;
}

double point_tri_dist(cq_vec3 p, const cq_vec3 t[3])
{
    cq_vec3 n = unit(cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])));
    if (in_prism(p, t, n))
        return fabs(cq_dot(n, cq_sub(p, t[0])));
    return fmin(point_seg_dist(p, t[0], t[1]), fmin(point_seg_dist(p, t[1], t[2]), point_seg_dist(p, t[2], t[0])));
}

/* Closest pairs of a segment and a triangle involve a segment end or a
 * triangle edge, unless the segment pierces the triangle. */
static double seg_tri_dist(cq_vec3 p, cq_vec3 q, const cq_vec3 t[3])
{
    cq_vec3 n = unit(cq_cross(cq_sub(t[1], t[0]), cq_sub(t[2], t[0])));
    double sp = cq_dot(n, cq_sub(p, t[0])), sq = cq_dot(n, cq_sub(q, t[0]));
    if ((sp <= 0 && sq >= 0) || (sp >= 0 && sq <= 0)) {
        double den = sp - sq;
        cq_vec3 x = den != 0 ? cq_lerp(p, q, sp / den) : p;
        if (in_prism(x, t, n))
            return 0;
    }
    double d = fmin(point_tri_dist(p, t), point_tri_dist(q, t));
    for (int i = 0; i < 3; i++)
        d = fmin(d, seg_seg_dist(p, q, t[i], t[(i + 1) % 3]));
    return d;
}

double capsule_tri_gap(const void *p, double t)
{
    const capsule_tri_ctx *c = p;
    return seg_tri_dist(cq_mad(c->p, c->v, t), cq_mad(c->q, c->v, t), c->tri) - c->r;
}
