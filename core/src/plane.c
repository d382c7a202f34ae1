/* Pairs against a plane, which is always B (the highest shape type). The
 * plane is the solid half-space dot(n, x) <= d, so the normal from A to B is
 * minus its outward normal. A's lowest point gives the verdict; A's
 * candidate points within skin, projected onto the plane, are the manifold. */
#include "manifold.h"
#include "narrow.h"

/* A capsule axis tilted less than this sine from the plane is level. */
#define CQ_LEVEL_SIN 1e-12

/* The plane in world space: dot(n, x) <= d. */
typedef struct cq_world_plane {
    cq_vec3 n;
    double d;
} cq_world_plane;

static cq_world_plane cq_plane_world(const cq_pair_query *q)
{
    cq_vec3 n = cq_mul_mv(&q->xb.r, q->b->plane.normal);
    return (cq_world_plane){n, q->b->plane.offset + cq_dot(n, q->xb.p)};
}

/* Height above the surface of the point core p inflated by r. */
static double cq_plane_gap(cq_world_plane pl, cq_vec3 p, double r) { return cq_dot(pl.n, p) - pl.d - r; }

/* Verdict, depth and distance from A's lowest core point (inflated by r);
 * the witness on the plane is the projection of A's nearest point. */
static void cq_plane_verdict(cq_world_plane pl, cq_vec3 low, double r, const cq_pair_query *q, cq_contact *out)
{
    double gap = cq_plane_gap(pl, low, r);
    out->has_normal = true;
    out->normal = cq_neg(pl.n);
    out->overlap = gap <= q->skin;
    out->depth = gap < 0 ? -gap : 0;
    if (gap > 0) {
        out->has_distance = true;
        out->distance = gap;
        out->witness_a = cq_mad(low, pl.n, -r);
        out->witness_b = cq_mad(out->witness_a, pl.n, -gap);
    }
}

/* A rounded A's core point moved by its radius toward the plane lies on
 * its surface only where that direction is one of the core's normals (a
 * tilted capsule's lower end, not its upper one, which that move leaves
 * inside the capsule). Each point's line square to the plane is measured
 * again where it meets A's surface: the point is that crossing's
 * projection onto the plane, its depth the crossing's depth below it. */
static void cq_plane_points_on_lines(cq_world_plane pl, const cq_pair_query *q, double depth, cq_contact_point *pts,
                                     int m)
{
    for (int k = 0; k < m; k++) {
        if (pts[k].depth == depth) /* the lowest point: there the move is exact */
            continue;
        cq_vec3 a = cq_mad(pts[k].position, pl.n, -pts[k].depth);
        if (!cq__surface_on_line(q->a, &q->xa, a, pl.n, &a))
            continue;
        double gap = cq_plane_gap(pl, a, 0);
        pts[k].position = cq_mad(a, pl.n, -gap);
        pts[k].depth = -gap;
    }
}

/* The manifold: every core point (inflated by r) within skin of the plane,
 * projected onto it, reduced to CQ_MAX_POINTS. Vertices are numbered by
 * their place in pts; round shapes use face 0. */
static void cq_plane_points(cq_world_plane pl, const cq_vec3 *pts, int count, double r, cq_feature_kind kind,
                            const cq_pair_query *q, cq_contact *out)
{
    cq_contact_point buf[CQ_HULL_MAX_POINTS];
    int m = 0;
    for (int k = 0; k < count; k++) {
        double gap = cq_plane_gap(pl, pts[k], r);
        if (gap > q->skin)
            continue;
        cq_feature f = {(uint8_t)kind, CQ_FEAT_FACE, (uint16_t)(kind == CQ_FEAT_VERTEX ? k : 0), 0};
        buf[m++] = (cq_contact_point){cq_mad(pts[k], pl.n, -(gap + r)), -gap, f};
    }
    if (m > CQ_MAX_POINTS)
        m = cq__reduce_manifold(buf, m, out->normal);
    if (r > 0 && q->a->type != CQ_SPHERE)
        cq_plane_points_on_lines(pl, q, out->depth, buf, m);
    for (int k = 0; k < m; k++)
        out->points[k] = buf[k];
    out->point_count = m;
}

void cq__sphere_plane(const cq_pair_query *q, cq_contact *out)
{
    cq_world_plane pl = cq_plane_world(q);
    double r = q->a->sphere.radius;
    cq_plane_verdict(pl, q->xa.p, r, q, out);
    if (out->overlap)
        cq_plane_points(pl, &q->xa.p, 1, r, CQ_FEAT_FACE, q, out);
}

void cq__capsule_plane(const cq_pair_query *q, cq_contact *out)
{
    cq_world_plane pl = cq_plane_world(q);
    double r = q->a->capsule.radius;
    cq_vec3 h = cq_scale(q->xa.r.c[1], q->a->capsule.half_height);
    cq_vec3 ends[2] = {cq_sub(q->xa.p, h), cq_add(q->xa.p, h)};
    /* A capsule level with the plane (to rounding) is nearest along its
     * whole axis: its middle is the deterministic witness. */
    double tilt = cq_dot(pl.n, h);
    bool level = fabs(tilt) <= CQ_LEVEL_SIN * q->a->capsule.half_height;
    cq_vec3 low = level ? q->xa.p : ends[tilt < 0];
    cq_plane_verdict(pl, low, r, q, out);
    if (out->overlap)
        cq_plane_points(pl, ends, 2, r, CQ_FEAT_FACE, q, out);
}

/* Corner k of the box at its pose; bit i of k set means negative along axis i
 * (the vertex numbering of cq_feature). */
static cq_vec3 cq_box_corner(const cq_pair_query *q, int k)
{
    cq_vec3 p = q->xa.p, h = q->a->box.half;
    for (int i = 0; i < 3; i++)
        p = cq_mad(p, q->xa.r.c[i], (k >> i & 1) ? -cq_comp(h, i) : cq_comp(h, i));
    return p;
}

void cq__box_plane(const cq_pair_query *q, cq_contact *out)
{
    cq_world_plane pl = cq_plane_world(q);
    /* Seed 003: only the diagonal along the plane normal matters, and of its
     * two corners the lower one decides contact (the upper one would only
     * tell "fully inside", which a contact does not report). */
    int low = 0;
    for (int i = 0; i < 3; i++)
        low |= (cq_dot(q->xa.r.c[i], pl.n) > 0) << i;
    cq_plane_verdict(pl, cq_box_corner(q, low), 0, q, out);
    if (!out->overlap)
        return;
    cq_vec3 corners[8];
    for (int k = 0; k < 8; k++)
        corners[k] = cq_box_corner(q, k);
    cq_plane_points(pl, corners, 8, 0, CQ_FEAT_VERTEX, q, out);
}

void cq__triangle_plane(const cq_pair_query *q, cq_contact *out)
{
    cq_world_plane pl = cq_plane_world(q);
    cq_vec3 v[3];
    int low = 0;
    for (int i = 0; i < 3; i++) {
        v[i] = cq_xform_point(&q->xa, q->a->triangle.v[i]);
        if (cq_plane_gap(pl, v[i], 0) < cq_plane_gap(pl, v[low], 0))
            low = i;
    }
    cq_plane_verdict(pl, v[low], 0, q, out);
    if (out->overlap)
        cq_plane_points(pl, v, 3, 0, CQ_FEAT_VERTEX, q, out);
}

void cq__convex_plane(const cq_pair_query *q, cq_contact *out)
{
    cq_world_plane pl = cq_plane_world(q);
    const cq_hull *h = q->a->convex.hull;
    int low = cq_hull_support(h, cq_mul_mtv(&q->xa.r, cq_neg(pl.n)));
    cq_plane_verdict(pl, cq_xform_point(&q->xa, h->vertices[low]), h->radius, q, out);
    if (!out->overlap)
        return;
    cq_vec3 v[CQ_HULL_MAX_POINTS];
    for (int k = 0; k < h->vertex_count; k++)
        v[k] = cq_xform_point(&q->xa, h->vertices[k]);
    cq_plane_points(pl, v, h->vertex_count, h->radius, CQ_FEAT_VERTEX, q, out);
}
