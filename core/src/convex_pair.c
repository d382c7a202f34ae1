/* The general convex path, for every pair without a closed form: GJK on the
 * cores, EPA when they overlap, radii applied, then a manifold by clipping
 * the two shapes' features facing each other. A GJK or EPA failure is
 * counted, logged, and answered with the caller's previous normal, or the
 * contact is dropped: never an invented normal (seed 002). */
#include <stddef.h>
#include <stdint.h>

#include "cq/fallback.h"
#include "cq/hull.h"
#include "cq/proxy.h"
#include "manifold.h"
#include "minkowski.h"
#include "narrow.h"
#include "sat_hull.h"

/* Below this alignment (about 25 degrees) neither feature is a face the
 * normal came through (an edge or vertex contact): one point, the witness. */
#define CQ_FACE_ALIGN 0.9

/* A hint to start loading memory that is read later (no effect where the
 * compiler has no such builtin). */
#if defined(__GNUC__) || defined(__clang__)
#define CQ_PREFETCH(p) __builtin_prefetch(p)
#else
#define CQ_PREFETCH(p) ((void)(p))
#endif

/* Starts loading bytes [p, p + n), n > 0: each cache line once, the last too. */
static void cq_prefetch(const void *p, size_t n)
{
    const char *c = p;
    for (size_t k = 0; k < n; k += 64)
        CQ_PREFETCH(c + k);
    CQ_PREFETCH(c + n - 1);
}

/* Starts loading a hull's faces and face loops, which only the manifold
 * reads, after GJK and EPA: with many shapes they are rarely in cache, and
 * this way the wait overlaps the GJK/EPA work instead of following it. */
static void cq_prefetch_faces(const cq_shape *s)
{
    if (s->type != CQ_CONVEX || s->convex.hull->face_count == 0)
        return;
    const cq_hull *h = s->convex.hull;
    cq_prefetch(h->faces, (size_t)h->face_count * sizeof *h->faces);
    cq_prefetch(h->face_vertices, (size_t)h->face_vertex_count * sizeof *h->face_vertices);
}

/* The bytes of a hull's block loaded before its header is read: a box
 * hull's whole block (header, vertices, faces, loops, edges and the SAT's
 * edge masks, 768 bytes: hull.c), and a line for the block's place within
 * its first line. */
#define CQ_HULL_EARLY_BYTES 832

/* Starts loading the start of a hull's block, header and vertices first,
 * from the hull's address alone: otherwise the header's pointers make
 * the misses one after the other (the header's, then the arrays'), and
 * with many hulls that wait is a good part of a query. A prefetch never
 * faults, so reaching past a small hull's block is harmless. */
static void cq_prefetch_hull(const cq_shape *s)
{
    if (s->type == CQ_CONVEX)
        cq_prefetch(s->convex.hull, CQ_HULL_EARLY_BYTES);
}

/* Starts loading the rest of the block of a hull the SAT takes, once its
 * header is in (a box's has none left). The SAT reads nearly all of it,
 * in an order no hardware prefetcher follows; with many hulls the block
 * is rarely in cache, and its lines missed one after the other cost more
 * than the SAT's work. Asked for at once, their waits overlap. */
static void cq_prefetch_sat_hull(const cq_shape *s)
{
    if (s->type != CQ_CONVEX || !s->convex.hull->sat_data)
        return;
    const cq_hull *h = s->convex.hull;
    uintptr_t c = (uintptr_t)h + CQ_HULL_EARLY_BYTES, end = (uintptr_t)h->sat_data + cq__hull_sat_bytes(h);
    for (; c < end; c += 64)
        CQ_PREFETCH((const void *)c);
}

/* The two shapes as GJK proxies with their storage. */
typedef struct cq_pair_shapes {
    cq_vec3 sa[CQ_PROXY_STORAGE], sb[CQ_PROXY_STORAGE];
    cq_proxy a, b;
} cq_pair_shapes;

/* Whether a, a capsule's core point moved by its radius along unit n,
 * lies on the capsule: where n is one of the core's normals there (square
 * to the axis, or out of the end the point sits on). A level capsule on a
 * face, or an upright one's lower end, then needs no cast. */
static bool cq_capsule_move_exact(const cq_shape *s, const cq_xform *x, cq_vec3 a, cq_vec3 n)
{
    double r = s->capsule.radius, h = s->capsule.half_height;
    cq_vec3 u = x->r.c[1], d = cq_sub(cq_mad(a, n, -r), x->p);
    double t = cq_dot(d, u), c = cq_dot(n, u), tol = 1e-12 * (h + r + cq_max_abs(x->p));
    if (cq_len2(cq_mad(d, u, -t)) > tol * tol) /* not on the axis: a line contact's ball point */
        return false;
    if (fabs(c) <= 1e-12)
        return true;
    return c > 0 ? t >= h - tol : t <= -h + tol;
}

/* How far below its support along unit d (world) a core point of a
 * rounded shape may lie and still count as that support: a hundredth of
 * CQ_POINT_TOL at the shapes' size and place, well above the rounding of a
 * clipped point. */
static double cq_support_slack(const cq_pair_query *q)
{
    double size = cq_larger(cq__shape_extent(q->a), cq__shape_extent(q->b));
    return 0.01 * CQ_POINT_TOL(size, cq_larger(cq_max_abs(q->xa.p), cq_max_abs(q->xb.p)));
}

/* The support value of proxy p (posed at x) along unit d in world space:
 * the largest d . core point. */
static double cq_core_support(const cq_proxy *p, const cq_xform *x, cq_vec3 d)
{
    return cq_dot(d, cq_xform_point(x, p->points[cq_proxy_support(p, cq_mul_mtv(&x->r, d))]));
}

/* Whether the line along d through core point c (in the core) meets the
 * rounded surface at c + r d, so no cast is needed. Where c lies within
 * slack of the core's support along d the crossing is between c + r d
 * and c + (r + slack) d: the support bounds the rounded shape along d by
 * r beyond it, and c's ball reaches r. Exactly so where d is in c's
 * normal cone (a face whose normal is d: a rounded cube resting on one;
 * the vertex nearest along d). */
static bool cq_move_exact(double support, double slack, cq_vec3 c, cq_vec3 d)
{
    return cq_dot(d, c) >= support - slack;
}

/* Whether p, in face f's plane, lies in the convex polygon f (either
 * winding), or within slack outside it. */
static bool cq_face_contains(const cq_face *f, cq_vec3 p, double slack)
{
    int below = 0, above = 0;
    for (int i = 0; i < f->count; i++) {
        cq_vec3 e = cq_sub(f->v[(i + 1) % f->count], f->v[i]);
        double s = cq_dot(cq_cross(e, cq_sub(p, f->v[i])), f->normal), l = slack * cq_len(e);
        below += s < l, above += s > -l;
    }
    return below == f->count || above == f->count;
}

/* Where the line along unit d through core point c, on hull face f (its
 * outward normal within 60 degrees of d), meets the rounded surface, when
 * that is over the face: the face's plane moved out by r, at c + (r / cos)
 * d, is on the surface where its foot on the face lies in it (the face's
 * normal is then in the core's normal cone there, and the point is r from
 * it). A clip point, seen along a normal off the face's, crosses there,
 * and the ray cast's march is not needed. False otherwise. */
static bool cq_face_crossing(const cq_face *f, cq_vec3 c, cq_vec3 d, double r, double slack, cq_vec3 *x)
{
    double k = cq_dot(d, f->normal);
    if (f->count < 3 || !(k >= 0.5))
        return false;
    cq_vec3 at = cq_mad(c, d, r / k);
    if (!cq_face_contains(f, cq_mad(at, f->normal, -r), slack))
        return false;
    *x = at;
    return true;
}

/* Each point measured again on its line along n (through its position):
 * the position becomes the line's crossing of B's surface and the depth
 * the distance along n from there to A's. A sharp shape's core is its
 * surface, where the points already lie; a rounded one's crossing is its
 * core point moved by the radius only where n is one of the core's
 * normals there (a tilted capsule's upper end lies farther in), so it is
 * found by a ray cast, unless the core point is the core's support along
 * the line (cq_move_exact): on_cores says every point's core points (the
 * point moved back by the radius) lie in the cores, as a clip's and the
 * witness's do; a line contact's ends need not. */
static void cq_points_on_lines(const cq_pair_query *q, const cq_pair_shapes *p, cq_vec3 n, cq_contact_point *pts,
                               int m, bool on_cores, const cq_face *fa, const cq_face *fb)
{
    /* A sphere (always A) is met on its centre's line, where every point
     * of its lies: its move by the radius is exact. */
    bool cast_a = p->a.radius > 0 && q->a->type != CQ_SPHERE, cast_b = p->b.radius > 0;
    if (!cast_a && !cast_b)
        return;
    double ra = p->a.radius, rb = p->b.radius, slack = on_cores ? cq_support_slack(q) : 0;
    double sa = cast_a && on_cores ? cq_core_support(&p->a, &q->xa, n) : 0;
    double sb = cast_b && on_cores ? cq_core_support(&p->b, &q->xb, cq_neg(n)) : 0;
    for (int k = 0; k < m; k++) {
        cq_vec3 b = pts[k].position, a = cq_mad(b, n, pts[k].depth);
        cq_vec3 cb = cq_mad(b, n, rb), ca = cq_mad(a, n, -ra); /* the core points */
        if (cast_b && !(on_cores && cq_move_exact(sb, slack, cb, cq_neg(n))) &&
            !(fb && cq_face_crossing(fb, cb, cq_neg(n), rb, slack, &b)))
            cq__surface_on_line(q->b, &q->xb, b, n, &b);
        if (cast_a && !(on_cores && cq_move_exact(sa, slack, ca, n)) &&
            !(fa && cq_face_crossing(fa, ca, n, ra, slack, &a)) &&
            !(q->a->type == CQ_CAPSULE && cq_capsule_move_exact(q->a, &q->xa, a, n)))
            cq__surface_on_line(q->a, &q->xa, a, cq_neg(n), &a);
        pts[k].position = b;
        pts[k].depth = cq_dot(cq_sub(a, b), n);
    }
}

/* The two features facing each other clipped, the better aligned face
 * the reference, seen along n: each point and its partner on the other
 * core lie on one line along n. Positions on B's core, depths of the
 * cores along n. */
static int cq_convex_clip(const cq_face *fa, const cq_face *fb, cq_vec3 n, double skin,
                          cq_contact_point pts[CQ_CLIP_MAX])
{
    double ka = fa->count >= 3 ? cq_dot(fa->normal, n) : -1, kb = fb->count >= 3 ? -cq_dot(fb->normal, n) : -1;
    int m = 0;
    if (ka >= CQ_FACE_ALIGN && ka >= kb) {
        m = cq__clip_face_along(fa, fb, n, skin, false, pts);
    } else if (kb >= CQ_FACE_ALIGN) {
        m = cq__clip_face_along(fb, fa, cq_neg(n), skin, true, pts);
        for (int k = 0; k < m; k++)
            pts[k].feature = cq_feature_swap(pts[k].feature);
    }
    return m;
}

/* Manifold points for normal n (A to B): the clip of the features facing
 * each other (cq_convex_clip); where it keeps nothing and one feature is a
 * segment lying along an edge of the other (a capsule on a box's edge), the
 * two ends of that line contact; else the single witness point on B, at
 * witness_depth (minus the distance when apart within the skin). At most
 * CQ_MAX_POINTS are kept, then measured on their lines along n. Returns
 * whether the features gave the points (false: the witness alone). */
static bool cq_convex_manifold(const cq_pair_query *q, const cq_pair_shapes *p, cq_vec3 witness_b,
                               double witness_depth, bool witness_on_cores, cq_contact *out)
{
    if (q->skip_manifold)
        return true;
    cq_vec3 n = out->normal;
    double ra = p->a.radius, rb = p->b.radius;
    cq_face fa, fb;
    cq_contact_point pts[CQ_CLIP_MAX];
    int m = 0;
    bool on_cores = false, clip = false; /* a clip's points lie in the cores, a line contact's need not */
    if (cq__shape_face(q->a, &q->xa, n, &fa) && cq__shape_face(q->b, &q->xb, cq_neg(n), &fb)) {
        m = cq_convex_clip(&fa, &fb, n, q->skin + ra + rb, pts); /* the clip measures the cores */
        for (int k = 0; k < m; k++) {
            pts[k].position = cq_mad(pts[k].position, n, -rb);
            pts[k].depth += ra + rb;
        }
        on_cores = clip = m > 0;
        if (m == 0)
            m = cq__line_contact(&fa, &fb, n, ra, rb, q->skin, pts);
    }
    if (m == 0) {
        pts[m++] = (cq_contact_point){witness_b, witness_depth, {CQ_FEAT_FACE, CQ_FEAT_FACE, 0, 0}};
        on_cores = witness_on_cores, clip = false;
    }
    m = cq__reduce_manifold(pts, m, n);
    bool clipped = on_cores && clip; /* its points lie on fa and fb */
    cq_points_on_lines(q, p, n, pts, m, on_cores, clipped ? &fa : NULL, clipped ? &fb : NULL);
    for (int k = 0; k < m; k++)
        out->points[k] = pts[k];
    out->point_count = m;
    return clip || m > 1;
}

/* Separation of the rounded shapes along unit n (A to B): a lower bound on
 * their distance when positive, minus the overlap along n otherwise. *b_at
 * is B's surface point farthest along -n (its support point there). */
static double cq_separation_along(const cq_pair_query *q, const cq_pair_shapes *p, cq_vec3 n, cq_vec3 *b_at)
{
    cq_vec3 da = cq_mul_mtv(&q->xa.r, n), db = cq_mul_mtv(&q->xb.r, cq_neg(n));
    cq_vec3 a = cq_xform_point(&q->xa, p->a.points[cq_proxy_support(&p->a, da)]);
    cq_vec3 b = cq_xform_point(&q->xb, p->b.points[cq_proxy_support(&p->b, db)]);
    *b_at = cq_mad(b, n, -p->b.radius);
    return cq_dot(cq_sub(b, a), n) - p->a.radius - p->b.radius;
}

/* GJK or EPA gave up: count and log it, then answer along the previous
 * normal if the caller has one, else drop the contact. overlap_known tells
 * whether the verdict is certain without a normal; cores_overlap that the
 * cores meet (EPA ran), so the shapes overlap by at least both radii:
 * that depth is known even where no normal is (segments crossing, whose
 * Minkowski difference is flat, have it exactly). */
static void cq_convex_fallback(const cq_pair_query *q, const cq_pair_shapes *p, cq_fallback_reason reason,
                               int iterations, bool overlap_known, bool cores_overlap, cq_contact *out)
{
    out->fallback_reason = reason;
    bool prev = q->cache && q->cache->has_normal && cq_normalize(q->cache->normal, 1e-24, &out->normal);
    out->fallback_action = prev ? CQ_FBA_PREVIOUS_NORMAL : CQ_FBA_DROPPED;
    cq_fallback_record rec = {.reason = (uint8_t)reason, .action = (uint8_t)out->fallback_action,
                              .shape_a = (uint8_t)q->a->type, .shape_b = (uint8_t)q->b->type,
                              .iterations = (uint16_t)iterations, .tag_a = q->tag_a, .tag_b = q->tag_b};
    cq_fallback_report(q->counters, q->log, &rec);
    if (!prev) {
        out->overlap = overlap_known;
        out->depth = cores_overlap ? p->a.radius + p->b.radius : 0;
        return;
    }
    cq_vec3 b_at;
    double sep = cq_separation_along(q, p, out->normal, &b_at);
    out->has_normal = true;
    out->overlap = sep <= q->skin;
    out->depth = sep < 0 ? -sep : 0;
    if (out->overlap)
        cq_convex_manifold(q, p, b_at, -sep, false, out); /* A's end is on its support plane, not its core */
}

/* The SAT's axis as the contact: the radii add to its depth (a rounded
 * hull's support is its core's plus the radius along every direction, so
 * the rounded pair's depth is exactly the cores' plus both radii), and the
 * manifold is clipped as EPA's would be, the witness the SAT's deepest
 * feature. Returns whether the features gave the points. */
static bool cq_sat_contact(const cq_pair_query *q, const cq_pair_shapes *p, const cq_hull_axis *s, cq_contact *out)
{
    double ra = p->a.radius, rb = p->b.radius;
    out->normal = s->normal;
    out->normal_axis = s->axis;
    out->depth = (s->gap < 0 ? -s->gap : 0) + ra + rb;
    return cq_convex_manifold(q, p, cq_mad(s->witness_b, s->normal, -rb), out->depth, true, out);
}

/* Two hulls the SAT suits, their cores overlapping or touching: the SAT's
 * chosen axis answers, or its least-penetration axis where the chosen
 * face's features gave no point (its witness need not lie on A's
 * surface). False for any other pair, and where an axis shows the cores
 * apart: GJK then measures their distance, started (*warm) from the
 * features that support that axis. */
static bool cq_convex_sat(const cq_pair_query *q, const cq_pair_shapes *p, cq_simplex_cache *warm, cq_contact *out)
{
    if (q->a->type != CQ_CONVEX || q->b->type != CQ_CONVEX ||
        !cq__hull_sat_suits(q->a->convex.hull, q->b->convex.hull))
        return false;
    cq_hull_sat s;
    int prev = q->cache && q->cache->has_axis ? q->cache->axis : -1;
    if (!cq__hull_sat_run(q->a->convex.hull, &q->xa, q->b->convex.hull, &q->xb, prev, &s)) {
        warm->count = s.apart_count;
        for (int k = 0; k < s.apart_count; k++)
            warm->index_a[k] = s.apart_a[k], warm->index_b[k] = s.apart_b[k];
        return false;
    }
    out->algorithm = CQ_ALG_SAT_HULL;
    out->overlap = out->has_normal = true;
    if (s.least.axis == s.chosen.axis || s.chosen_holds) {
        cq_sat_contact(q, p, &s.chosen, out);
        return true;
    }
    /* Which of two axes answers depends on whether the chosen face clips
     * points, so the clip runs even under skip_manifold (whose contract is
     * that no number changes); cq_collide drops the points afterwards.
     * Where the SAT already knows it does (chosen_holds), neither mode
     * asks the clip. */
    cq_pair_query full = *q;
    full.skip_manifold = false;
    if (!cq_sat_contact(&full, p, &s.chosen, out))
        cq_sat_contact(&full, p, &s.least, out);
    return true;
}

/* The cores overlap or touch: EPA for depth and normal, started from GJK's
 * terminal simplex (its points as GJK computed them). */
static void cq_convex_penetrating(const cq_pair_query *q, const cq_pair_shapes *p, const cq_pair_proxies *pp,
                                  const cq_simplex *terminal, cq_contact *out)
{
    cq_epa_options opt = {.max_iterations = q->epa_max_iterations};
    cq_epa_result e = cq__epa_run(pp, terminal->v, terminal->count, &opt);
    cq_count(q->counters, CQ_CTR_EPA_CALLS, 1);
    cq_count(q->counters, CQ_CTR_EPA_ITERATIONS, (uint64_t)e.iterations);
    if (e.status != CQ_EPA_OK) {
        cq_convex_fallback(q, p, cq_fallback_from_epa(e.status), e.iterations, true, true, out);
        return;
    }
    cq_epa_apply_radii(&e, &p->a, &p->b);
    out->overlap = true;
    out->has_normal = true;
    out->normal = cq__gjk_snap_normal(q, e.normal);
    out->depth = e.depth > 0 ? e.depth : 0;
    cq_convex_manifold(q, p, e.point_b, out->depth, true, out); /* EPA's witnesses: one on each core */
}

/* The general path; allow_sat lets suitable hull pairs take the SAT
 * first (where it shows the cores apart, GJK goes on; should GJK then
 * find them overlapping after all, a verdict on the edge of rounding, EPA
 * answers). */
static void cq_convex_run(const cq_pair_query *q, bool allow_sat, cq_contact *out)
{
    cq_prefetch_hull(q->a);
    cq_prefetch_hull(q->b);
    cq_pair_shapes p;
    if (cq_shape_proxy(q->a, p.sa, &p.a) != CQ_OK || cq_shape_proxy(q->b, p.sb, &p.b) != CQ_OK)
        return; /* validated shapes always have a proxy; an empty answer, not a guess */
    if (allow_sat) {
        cq_prefetch_sat_hull(q->a);
        cq_prefetch_sat_hull(q->b);
    }
    if (!q->skip_manifold) {
        cq_prefetch_faces(q->a);
        cq_prefetch_faces(q->b);
    }
    cq_simplex_cache warm = {0};
    if (allow_sat && cq_convex_sat(q, &p, &warm, out))
        return;
    /* One setup for GJK and EPA: the same noise and the same points. */
    cq_pair_proxies pp;
    cq__pair_proxies_init(&pp, &p.a, &q->xa, &p.b, &q->xb);
    cq_gjk_options opt = {.max_iterations = q->gjk_max_iterations, .cache = warm.count ? &warm : NULL};
    cq_simplex terminal;
    cq_gjk_result g = cq__gjk_run(&pp, &opt, &terminal);
    cq_count_gjk(q->counters, g.iterations);
    if (g.status == CQ_GJK_ITERATION_LIMIT) {
        /* The best distance so far bounds the true one from above. */
        bool certain = g.distance - p.a.radius - p.b.radius <= q->skin;
        cq_convex_fallback(q, &p, CQ_FB_GJK_ITERATION_LIMIT, g.iterations, certain, false, out);
        return;
    }
    if (g.status != CQ_GJK_SEPARATED) {
        cq_convex_penetrating(q, &p, &pp, &terminal, out);
        return;
    }
    cq_gjk_apply_radii(&g, &p.a, &p.b);
    out->has_normal = true;
    out->normal = cq__gjk_snap_normal(q, g.normal);
    out->overlap = g.distance <= q->skin;
    if (g.distance > 0) {
        out->has_distance = true;
        out->distance = g.distance;
        out->witness_a = g.point_a;
        out->witness_b = g.point_b;
    } else {
        out->depth = -g.distance;
    }
    if (out->overlap)
        cq_convex_manifold(q, &p, g.point_b, out->has_distance ? -out->distance : out->depth, true, out);
}

void cq__convex_pair(const cq_pair_query *q, cq_contact *out) { cq_convex_run(q, true, out); }

void cq__convex_pair_epa(const cq_pair_query *q, cq_contact *out) { cq_convex_run(q, false, out); }
