/* Shape sweep by conservative advancement. At each step GJK gives the
 * separation d and direction n of the rounded shapes; the gap of the two
 * shapes' supports along n is a lower bound of their distance that only
 * shrinks at speed dot(v, n) while A translates, so advancing until that
 * gap is half the target can never step past the first contact. */
#include <stddef.h>

#include "cq/fallback.h"
#include "cq/gjk.h"
#include "cq/mesh.h"
#include "cq/proxy.h"
#include "cq/sweep.h"

/* The tolerance floor relative to the coordinates' magnitude: a few
 * hundred ulps, above GJK's rounding noise. */
#define CQ_SWEEP_RELATIVE_FLOOR 1e-11

/* One convex sweep: two proxies, A's start pose, its translation. */
typedef struct cq_sweep_ctx {
    cq_proxy pa, pb;
    const cq_xform *xa, *xb;
    cq_vec3 v;
    double target;
    int max_it;
    cq_shape_type ta, tb;        /* for the fallback log */
    const cq_sweep_options *opt; /* counters and log, may be NULL */
} cq_sweep_ctx;

static cq_counters *cq_sweep_counters(const cq_sweep_ctx *c) { return c->opt ? c->opt->counters : NULL; }

/* EPA found no direction for an initial overlap: reported as a fallback
 * whose action is "dropped" (the hit has no normal), like a contact the
 * convex path cannot orient. */
static void cq_sweep_fallback(const cq_sweep_ctx *c, const cq_epa_result *e)
{
    if (!c->opt)
        return;
    cq_fallback_record rec = {.reason = (uint8_t)cq_fallback_from_epa(e->status), .action = CQ_FBA_DROPPED,
                              .shape_a = (uint8_t)c->ta, .shape_b = (uint8_t)c->tb,
                              .iterations = (uint16_t)e->iterations, .tag_a = c->opt->tag_a, .tag_b = c->opt->tag_b};
    cq_fallback_report(c->opt->counters, c->opt->log, &rec);
}

static double cq_proxy_extent(const cq_proxy *p) { return cq_points_max_abs(p->points, p->count) + p->radius; }

static cq_xform cq_moved(const cq_xform *x, cq_vec3 v, double t)
{
    cq_xform m = *x;
    m.p = cq_mad(x->p, v, t);
    return m;
}

/* The gap between the rounded shapes' supports along the unit world
 * direction n (A at pose x): a lower bound of their distance. */
static double cq_support_gap(const cq_sweep_ctx *c, const cq_xform *x, cq_vec3 n)
{
    int ia = cq_proxy_support(&c->pa, cq_mul_mtv(&x->r, n));
    int ib = cq_proxy_support(&c->pb, cq_mul_mtv(&c->xb->r, cq_neg(n)));
    cq_vec3 a = cq_xform_point(x, c->pa.points[ia]);
    cq_vec3 b = cq_xform_point(c->xb, c->pb.points[ib]);
    return cq_dot(n, cq_sub(b, a)) - c->pa.radius - c->pb.radius;
}

static void cq_set_hit(cq_sweep_hit *out, double t, cq_vec3 point, cq_vec3 normal)
{
    out->hit = true;
    out->has_normal = true;
    out->time = t;
    out->point = point;
    out->normal = normal;
}

/* The cores touch or overlap at t = 0: EPA gives the direction. g holds the
 * GJK answer whose terminal simplex starts EPA. */
static void cq_core_overlap(const cq_sweep_ctx *c, const cq_gjk_result *g, cq_sweep_hit *out)
{
    cq_epa_result e = cq_epa_penetration(&c->pa, c->xa, &c->pb, c->xb, &g->simplex, NULL);
    cq_count(cq_sweep_counters(c), CQ_CTR_EPA_CALLS, 1);
    cq_count(cq_sweep_counters(c), CQ_CTR_EPA_ITERATIONS, (uint64_t)e.iterations);
    out->initially_overlapping = true;
    if (e.status == CQ_EPA_OK) {
        cq_epa_apply_radii(&e, &c->pa, &c->pb);
        cq_set_hit(out, 0, e.point_b, e.normal);
        return;
    }
    cq_sweep_fallback(c, &e);
    out->fell_back = true;
    /* A penetrating GJK simplex holds the origin: its witnesses coincide
     * in a point of both cores. */
    out->hit = true;
    out->time = 0;
    out->point = g->point_b;
}

static void cq_sweep_convex(const cq_sweep_ctx *c, cq_sweep_hit *out)
{
    cq_simplex_cache cache = {0};
    cq_gjk_options gopt = {.tolerance = fmin(CQ_GJK_DEFAULT_TOLERANCE, c->target / 8), .cache = &cache};
    double t = 0;
    cq_vec3 point = {0, 0, 0}, normal = {0, 0, 0};
    for (int it = 1; it <= c->max_it; it++) {
        cq_xform x = cq_moved(c->xa, c->v, t);
        cq_gjk_result g = cq_gjk_distance(&c->pa, &x, &c->pb, c->xb, &gopt);
        cq_count_gjk(cq_sweep_counters(c), g.iterations);
        out->iterations = it;
        if (!g.has_normal) {
            if (t <= 0)
                cq_core_overlap(c, &g, out);
            else /* rounding after a conservative step: the shapes touch */
                cq_set_hit(out, t, point, normal);
            return;
        }
        cq_gjk_apply_radii(&g, &c->pa, &c->pb);
        point = g.point_b;
        normal = g.normal;
        double speed = cq_dot(c->v, normal);
        if (g.distance <= 0 && t <= 0) {
            out->initially_overlapping = true;
            cq_set_hit(out, 0, point, normal);
            return;
        }
        if (g.distance <= c->target) {
            /* Touching at the start is an impact only if the whole
             * translation closes the gap by more than the tolerance:
             * otherwise A slides or leaves and never gets deeper. */
            if (t > 0 || speed > c->target)
                cq_set_hit(out, t, point, normal);
            return;
        }
        if (!(speed > 0))
            return; /* the gap along n never closes: a miss */
        double step = (cq_support_gap(c, &x, normal) - c->target / 2) / speed;
        if (t + step > 1)
            return;
        if (!(step > 0)) { /* GJK's distance is within its own error of the gap: touching */
            cq_set_hit(out, t, point, normal);
            return;
        }
        t += step;
    }
    out->iteration_limit = true;
    cq_set_hit(out, t, point, normal);
}

/* A plane as B: A's support point deepest along -N crosses the plane
 * N.x = D at a time given in closed form. */
static void cq_sweep_plane(const cq_proxy *pa, const cq_xform *xa, cq_vec3 v, const cq_shape *plane,
                           const cq_xform *xb, cq_sweep_hit *out)
{
    cq_vec3 n = cq_mul_mv(&xb->r, plane->plane.normal);
    double d = plane->plane.offset + cq_dot(n, xb->p);
    int i = cq_proxy_support(pa, cq_mul_mtv(&xa->r, cq_neg(n)));
    cq_vec3 s = cq_mad(cq_xform_point(xa, pa->points[i]), n, -pa->radius);
    double h = cq_dot(n, s) - d;
    out->iterations = 1;
    if (h <= 0) {
        out->initially_overlapping = true;
        cq_set_hit(out, 0, cq_mad(s, n, -h), cq_neg(n));
        return;
    }
    double speed = -cq_dot(n, v);
    if (!(speed > 0) || h > speed)
        return;
    double t = h / speed;
    cq_set_hit(out, t, cq_mad(s, v, t), cq_neg(n));
}

int cq_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 translation, const cq_shape *b,
             const cq_xform *xb, const cq_sweep_options *opt, cq_sweep_hit *out)
{
    cq_vec3 store_a[CQ_PROXY_STORAGE], store_b[CQ_PROXY_STORAGE];
    cq_sweep_ctx c = {.xa = xa, .xb = xb, .v = translation, .ta = a->type, .tb = b->type, .opt = opt};
    if (b->type == CQ_MESH && b->mesh.mesh)
        return cq_mesh_sweep(a, xa, translation, b->mesh.mesh, xb, opt, out);
    if (cq_shape_proxy(a, store_a, &c.pa) != CQ_OK)
        return CQ_EUNSUPPORTED;
    bool plane = b->type == CQ_PLANE;
    if (!plane && cq_shape_proxy(b, store_b, &c.pb) != CQ_OK)
        return CQ_EUNSUPPORTED;
    if (!cq_v3_finite(translation))
        return CQ_ENOT_FINITE;
    *out = (cq_sweep_hit){.time = 1};
    if (plane) {
        cq_sweep_plane(&c.pa, xa, translation, b, xb, out);
        return CQ_OK;
    }
    double tol = opt && opt->tolerance > 0 ? opt->tolerance : CQ_SWEEP_DEFAULT_TOLERANCE;
    double scale = cq_max_abs(xa->p) + cq_max_abs(translation) + cq_max_abs(xb->p) +
                   cq_proxy_extent(&c.pa) + cq_proxy_extent(&c.pb);
    c.target = fmax(tol, CQ_SWEEP_RELATIVE_FLOOR * scale);
    c.max_it = opt && opt->max_iterations > 0 ? opt->max_iterations : CQ_SWEEP_DEFAULT_MAX_ITERATIONS;
    cq_sweep_convex(&c, out);
    return CQ_OK;
}
