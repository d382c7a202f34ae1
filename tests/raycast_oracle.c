/* The raycast suites' shared checks, and the marching oracle: sphere
 * tracing along the ray on a lower bound of the signed distance (exact for
 * spheres, capsules, planes, and rounded hulls by brute force over every
 * triangle of the input points; the largest slab or face-plane excess for
 * boxes and sharp hulls), refined by bisection. It runs on the shape shrunk
 * and grown by EPS: a ray that enters the shrunk shape must hit, one that
 * misses the grown shape must miss, and the rest are grazing (counted, and
 * bounded). */
#include "raycast_oracle.h"

#define HMIN 1e-6  /* smallest march step: chords shorter than this may go unseen */
#define ON_SURFACE 1e-7 /* a hit point's distance bound from the surface */

cq_vec3 rdir(tu_rng *rng)
{
    for (;;) {
        cq_vec3 v = rvec(rng, 1);
        double l = cq_len(v);
        if (l > 0.1 && l <= 1)
            return cq_scale(v, 1 / l);
    }
}

cq_hull *hull_of(const cq_vec3 *p, int n, double radius)
{
    cq_hull *h = NULL;
    ck_assert_int_eq(cq_hull_build(p, n, radius, &h), CQ_OK);
    return h;
}

cq_ray_hit cast(const cq_shape *s, cq_xform pose, cq_vec3 o, cq_vec3 d, double max)
{
    cq_ray ray = {o, d, max};
    cq_ray_hit h;
    ck_assert_int_eq(cq_raycast(s, &pose, &ray, &h), CQ_OK);
    if (!h.hit) {
        ck_assert(h.distance == 0 && cq_len2(h.point) == 0 && cq_len2(h.normal) == 0);
        return h;
    }
    ck_assert(isfinite(h.distance) && cq_v3_finite(h.point) && cq_v3_finite(h.normal));
    ck_assert(h.distance >= 0 && h.distance <= max);
    tu_assert_vec_eq_tol(h.point, cq_mad(o, d, h.distance), 1e-12 * (1 + cq_len(o) + h.distance));
    ck_assert_double_eq_tol(cq_len(h.normal), 1.0, 1e-12);
    ck_assert(cq_dot(h.normal, d) <= 1e-12);
    return h;
}

void assert_hit(cq_ray_hit h, double dist, cq_vec3 normal)
{
    ck_assert_msg(h.hit, "expected a hit at %g", dist);
    ck_assert_double_eq_tol(h.distance, dist, TOL);
    tu_assert_vec_eq_tol(h.normal, normal, TOL);
}

void assert_inside(cq_ray_hit h, cq_vec3 o, cq_vec3 d)
{
    ck_assert(h.hit);
    ck_assert(h.distance == 0);
    ck_assert(h.point.x == o.x && h.point.y == o.y && h.point.z == o.z);
    tu_assert_vec_eq_tol(h.normal, cq_neg(d), 1e-15);
}

/* ---- the marching oracle -------------------------------------------------- */

static cq_vec3 on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b)
{
    cq_vec3 ab = cq_sub(b, a);
    double l2 = cq_len2(ab);
    return l2 > 0 ? cq_mad(a, ab, cq_clamp(cq_dot(cq_sub(p, a), ab) / l2, 0, 1)) : a;
}

/* Closest point of triangle abc to p: the plane projection when its three
 * edge signs agree, else the nearest of the three edges. */
static cq_vec3 on_triangle(cq_vec3 p, cq_vec3 a, cq_vec3 b, cq_vec3 c)
{
    cq_vec3 n = cq_cross(cq_sub(b, a), cq_sub(c, a));
    double n2 = cq_len2(n);
    if (n2 > 1e-24 * cq_len2(cq_sub(b, a)) * cq_len2(cq_sub(c, a))) {
        cq_vec3 q = cq_mad(p, n, -cq_dot(cq_sub(p, a), n) / n2);
        if (cq_dot(cq_cross(cq_sub(b, a), cq_sub(q, a)), n) >= 0 && cq_dot(cq_cross(cq_sub(c, b), cq_sub(q, b)), n) >= 0 &&
            cq_dot(cq_cross(cq_sub(a, c), cq_sub(q, c)), n) >= 0)
            return q;
    }
    cq_vec3 best = on_segment(p, a, b);
    cq_vec3 e2 = on_segment(p, b, c), e3 = on_segment(p, c, a);
    if (cq_len2(cq_sub(p, e2)) < cq_len2(cq_sub(p, best)))
        best = e2;
    if (cq_len2(cq_sub(p, e3)) < cq_len2(cq_sub(p, best)))
        best = e3;
    return best;
}

/* Closest point of the convex hull of pts to an outside p: the nearest over
 * every triangle (or the segment, or the point) of the points. */
static cq_vec3 on_cloud(cq_vec3 p, const cq_vec3 *pts, int n)
{
    if (n == 1)
        return pts[0];
    if (n == 2)
        return on_segment(p, pts[0], pts[1]);
    cq_vec3 best = pts[0];
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++) {
                cq_vec3 c = on_triangle(p, pts[i], pts[j], pts[k]);
                if (cq_len2(cq_sub(p, c)) < cq_len2(cq_sub(p, best)))
                    best = c;
            }
    return best;
}

/* The largest face-plane excess: <= 0 exactly inside the hull, and never
 * above the distance to it. */
static double face_excess(const cq_hull *h, cq_vec3 x)
{
    double m = -INFINITY;
    for (int i = 0; i < h->face_count; i++)
        m = fmax(m, cq_dot(h->faces[i].normal, x) - h->faces[i].offset);
    return m;
}

/* A lower bound of the signed distance from world point w to the solid,
 * <= 0 exactly when w is inside (closed). */
static double lower_bound(const solid *s, cq_vec3 w)
{
    cq_vec3 x = cq_xform_inv_point(&s->pose, w);
    const cq_shape *sh = &s->shape;
    switch (sh->type) {
    case CQ_SPHERE:
        return cq_len(x) - sh->sphere.radius;
    case CQ_CAPSULE: {
        double hh = sh->capsule.half_height;
        return cq_len(cq_sub(x, cq_v3(0, cq_clamp(x.y, -hh, hh), 0))) - sh->capsule.radius;
    }
    case CQ_BOX: {
        cq_vec3 e = cq_sub(cq_vabs(x), sh->box.half);
        return fmax(e.x, fmax(e.y, e.z));
    }
    case CQ_PLANE:
        return cq_dot(sh->plane.normal, x) - sh->plane.offset;
    case CQ_CONVEX: {
        const cq_hull *h = sh->convex.hull;
        double in = h->dim == 3 ? face_excess(h, x) : INFINITY;
        if (h->radius == 0 || in <= 0)
            return in - h->radius;
        return cq_len(cq_sub(x, on_cloud(x, s->pts, s->npts))) - h->radius;
    }
    default:
        ck_abort_msg("no oracle for this shape");
    }
    return 0;
}

/* First t in [0, max] where lower_bound + shift <= 0 (shift > 0 shrinks the
 * solid, < 0 grows it), by sphere tracing and then bisection. */
static bool march(const solid *s, cq_vec3 o, cq_vec3 d, double max, double shift, double *t_out)
{
    double t = 0, prev = 0;
    for (long k = 0; k < 20000000; k++) {
        double g = lower_bound(s, cq_mad(o, d, t)) + shift;
        if (g <= 0) {
            double lo = prev, hi = t;
            for (int i = 0; i < 100 && t > 0; i++) {
                double mid = 0.5 * (lo + hi);
                if (lower_bound(s, cq_mad(o, d, mid)) + shift <= 0)
                    hi = mid;
                else
                    lo = mid;
            }
            *t_out = hi;
            return true;
        }
        if (t >= max)
            return false;
        prev = t;
        t = fmin(t + fmax(g, HMIN), max);
    }
    ck_abort_msg("march did not finish");
    return false;
}

/* The hit's normal is the surface's at the hit point, per shape type. */
static void check_normal(const solid *s, const cq_ray_hit *h)
{
    cq_vec3 x = cq_xform_inv_point(&s->pose, h->point);
    cq_vec3 n = cq_mul_mtv(&s->pose.r, h->normal);
    const cq_shape *sh = &s->shape;
    switch (sh->type) {
    case CQ_SPHERE:
        tu_assert_vec_eq_tol(n, cq_scale(x, 1 / sh->sphere.radius), 1e-7);
        break;
    case CQ_CAPSULE: {
        double hh = sh->capsule.half_height;
        cq_vec3 c = cq_v3(0, cq_clamp(x.y, -hh, hh), 0);
        tu_assert_vec_eq_tol(n, cq_scale(cq_sub(x, c), 1 / sh->capsule.radius), 1e-7);
        break;
    }
    case CQ_BOX: {
        int axis = -1;
        for (int i = 0; i < 3; i++)
            if (fabs(cq_comp(n, i)) > 0.5)
                axis = i;
        ck_assert(axis >= 0);
        double s1 = cq_comp(n, axis);
        ck_assert_double_eq_tol(fabs(s1), 1.0, 1e-12); /* +- a box axis */
        ck_assert_double_eq_tol(cq_comp(x, axis), s1 * cq_comp(sh->box.half, axis), 1e-9);
        break;
    }
    case CQ_PLANE:
        tu_assert_vec_eq_tol(n, sh->plane.normal, 1e-12);
        break;
    case CQ_CONVEX: {
        const cq_hull *hl = sh->convex.hull;
        if (hl->radius > 0) {
            tu_assert_vec_eq_tol(n, unit(cq_sub(x, on_cloud(x, s->pts, s->npts))), 1e-6);
            break;
        }
        bool found = false;
        for (int i = 0; i < hl->face_count && !found; i++)
            found = cq_len(cq_sub(n, hl->faces[i].normal)) < 1e-12 &&
                    fabs(cq_dot(hl->faces[i].normal, x) - hl->faces[i].offset) < 1e-9;
        ck_assert_msg(found, "hull normal is not a face normal at the hit");
        break;
    }
    default:
        break;
    }
}

/* One ray against the march oracle; see the top of the file. */
static void check_ray(const solid *s, cq_vec3 o, cq_vec3 d, double max, tally *tl)
{
    cq_ray_hit h = cast(&s->shape, s->pose, o, d, max);
    double ts, tg, t0;
    bool shrunk = march(s, o, d, max, EPS, &ts);
    bool grown = march(s, o, d, max, -EPS, &tg);
    if (shrunk) {
        ck_assert_msg(h.hit, "robust hit at %.12g missed", ts);
        ck_assert(grown && march(s, o, d, max, 0, &t0));
        ck_assert_msg(h.distance >= tg - TOL && h.distance <= ts + TOL, "%.12g not in [%.12g, %.12g]", h.distance, tg,
                      ts);
        ck_assert_double_eq_tol(h.distance, t0, 1e-7);
        tl->hits++;
    } else if (!grown) {
        ck_assert_msg(!h.hit, "robust miss hit at %.12g", h.distance);
        tl->misses++;
    } else {
        tl->grazing++;
    }
    if (!h.hit)
        return;
    if (h.distance == 0 && cq_len(cq_add(h.normal, d)) <= 1e-15) {
        ck_assert(lower_bound(s, o) <= 1e-12); /* inside, or on the surface */
        return;
    }
    ck_assert_msg(fabs(lower_bound(s, h.point)) <= ON_SURFACE, "hit point %g off the surface",
                  lower_bound(s, h.point));
    check_normal(s, &h);
}

tally random_rays(const solid *s, tu_rng *rng, double size, int count)
{
    tally tl = {0, 0, 0};
    for (int i = 0; i < count; i++) {
        cq_vec3 target = cq_add(s->pose.p, rvec(rng, 0.9 * size));
        cq_vec3 o = i % 10 == 0 ? cq_add(s->pose.p, rvec(rng, 0.2 * size))
                                : cq_add(s->pose.p, cq_scale(rdir(rng), tu_uniform(rng, 1.5, 4) * size));
        cq_vec3 d = i % 10 == 0 ? rdir(rng) : unit(cq_sub(target, o));
        double max = tu_uniform(rng, 0.5, 2.5) * cq_len(cq_sub(target, o));
        check_ray(s, o, d, max, &tl);
    }
    return tl;
}

void assert_tally(tally tl, int count)
{
    ck_assert_msg(tl.hits >= count / 5 && tl.misses >= count / 10, "hits %d misses %d", tl.hits, tl.misses);
    ck_assert_msg(tl.grazing <= count / 50, "grazing %d of %d", tl.grazing, count);
}
