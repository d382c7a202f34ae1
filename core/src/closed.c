/* Closed forms for round cores (spheres are points, capsules are segments,
 * inflated by a radius) and for a sphere against a box or a triangle: each
 * pair finds the closest points of the two cores, and one shared tail,
 * cq__round_contact, turns them into a contact. */
#include "geom.h"
#include "narrow.h"

/* Cores closer than this, relative to the magnitude of their coordinates,
 * have no direction between them: the difference is rounding noise. */
#define CQ_COINCIDENT_REL 1e-12
/* A triangle this flat (squared sine at v0, as in geom.c) has no normal. */
#define CQ_TRIANGLE_FLAT_SIN2 1e-24

static const cq_feature cq_round_feature = {CQ_FEAT_FACE, CQ_FEAT_FACE, 0, 0};

/* The unit direction from pa to pb; false when the points coincide. */
static bool cq_core_direction(cq_vec3 pa, cq_vec3 pb, cq_vec3 *n)
{
    cq_vec3 a = cq_vabs(pa), b = cq_vabs(pb);
    double scale = 1 + fmax(fmax(fmax(a.x, a.y), fmax(a.z, b.x)), fmax(b.y, b.z));
    double tiny = CQ_COINCIDENT_REL * scale;
    return cq_normalize(cq_sub(pb, pa), tiny * tiny, n);
}

bool cq__previous_normal(const cq_pair_query *q, cq_contact *out)
{
    out->fallback_reason = CQ_FB_COINCIDENT;
    if (q->cache && q->cache->has_normal && cq_normalize(q->cache->normal, 1e-24, &out->normal)) {
        out->fallback_action = CQ_FBA_PREVIOUS_NORMAL;
        return true;
    }
    out->fallback_action = CQ_FBA_DROPPED;
    cq_count(q->counters, CQ_CTR_ZERO_NORMALS, 1);
    return false;
}

void cq__round_contact(cq_vec3 pa, cq_vec3 pb, double ra, double rb, const cq_pair_query *q, cq_contact *out)
{
    bool dir = cq_core_direction(pa, pb, &out->normal);
    /* Coincident cores are at distance 0: they overlap by both radii. */
    double gap = (dir ? cq_len(cq_sub(pb, pa)) : 0) - ra - rb;
    out->overlap = gap <= q->skin;
    out->depth = gap < 0 ? -gap : 0;
    out->has_normal = dir || cq__previous_normal(q, out);
    if (!out->has_normal)
        return;
    cq_vec3 n = out->normal;
    if (gap > 0) {
        out->has_distance = true;
        out->distance = gap;
        out->witness_a = cq_mad(pa, n, ra);
        out->witness_b = cq_mad(pb, n, -rb);
    }
    if (out->overlap) {
        out->point_count = 1;
        out->points[0] = (cq_contact_point){cq_mad(pb, n, -rb), -gap, cq_round_feature};
    }
}

/* A capsule's core segment in world space. */
static void cq_capsule_segment(const cq_shape *s, const cq_xform *x, cq_vec3 *p, cq_vec3 *q)
{
    cq_vec3 h = cq_scale(x->r.c[1], s->capsule.half_height);
    *p = cq_sub(x->p, h);
    *q = cq_add(x->p, h);
}

void cq__sphere_sphere(const cq_pair_query *q, cq_contact *out)
{
    cq__round_contact(q->xa.p, q->xb.p, q->a->sphere.radius, q->b->sphere.radius, q, out);
}

void cq__sphere_capsule(const cq_pair_query *q, cq_contact *out)
{
    cq_vec3 p, e;
    double t;
    cq_capsule_segment(q->b, &q->xb, &p, &e);
    cq_vec3 pb = cq__closest_on_segment(q->xa.p, p, e, &t);
    cq__round_contact(q->xa.p, pb, q->a->sphere.radius, q->b->capsule.radius, q, out);
}

/* Capsules whose axes lie along each other (geom.h's line contact) get
 * both ends of the overlap of A's axis on B's, each with its own depth; the
 * single closest point stays when an end is off the other capsule or
 * beyond skin, or the overlap is a point. */
static void cq_capsule_line_contact(const cq_vec3 sa[2], const cq_vec3 sb[2], const cq_pair_query *q,
                                    cq_contact *out)
{
    cq_vec3 at[2];
    double depth[2], t[2];
    if (!cq__line_ends(sa[0], sa[1], sb[0], sb[1], true, out->normal, q->a->capsule.radius, q->b->capsule.radius,
                       q->skin, at, depth, t))
        return;
    out->point_count = 2;
    for (int k = 0; k < 2; k++) {
        /* The balls about the nearest axis points meet on this line, but
         * where the axes are not parallel a ball's point need not be its
         * capsule's: the line's crossings of the two capsules are. */
        cq_vec3 b = at[k], a = cq_mad(b, out->normal, depth[k]);
        cq__surface_on_line(q->b, &q->xb, b, out->normal, &b);
        cq__surface_on_line(q->a, &q->xa, a, cq_neg(out->normal), &a);
        out->points[k] = (cq_contact_point){b, cq_dot(cq_sub(a, b), out->normal), cq_round_feature};
    }
}

void cq__capsule_capsule(const cq_pair_query *q, cq_contact *out)
{
    cq_vec3 sa[2], sb[2], ca, cb;
    double s, t;
    cq_capsule_segment(q->a, &q->xa, &sa[0], &sa[1]);
    cq_capsule_segment(q->b, &q->xb, &sb[0], &sb[1]);
    cq__closest_segments(sa[0], sa[1], sb[0], sb[1], &s, &t, &ca, &cb);
    cq__round_contact(ca, cb, q->a->capsule.radius, q->b->capsule.radius, q, out);
    if (out->point_count == 1)
        cq_capsule_line_contact(sa, sb, q, out);
}

/* The box feature a point outside the box (local l, half extents h) is
 * nearest to: a face, edge or vertex for one, two or three axes outside. */
static cq_feature cq_box_feature_of(cq_vec3 l, cq_vec3 h)
{
    int outside = 0, count = 0, inner = 0, neg = 0;
    for (int i = 0; i < 3; i++) {
        if (fabs(cq_comp(l, i)) > cq_comp(h, i))
            outside |= 1 << i, count++;
        else
            inner = i;
        if (cq_comp(l, i) < 0)
            neg |= 1 << i;
    }
    cq_feature f = cq_round_feature;
    if (count == 1) {
        int k = outside == 1 ? 0 : (outside == 2 ? 1 : 2);
        f.index_b = (uint16_t)(2 * k + ((neg >> k) & 1));
    } else if (count == 2) {
        int lo = inner == 0 ? 1 : 0, hi = inner == 2 ? 1 : 2;
        f.kind_b = CQ_FEAT_EDGE;
        f.index_b = (uint16_t)(4 * inner + ((neg >> lo) & 1) + 2 * ((neg >> hi) & 1));
    } else {
        f.kind_b = CQ_FEAT_VERTEX;
        f.index_b = (uint16_t)neg;
    }
    return f;
}

/* The centre is inside the box: the sphere leaves through the face of least
 * penetration, so the depth is the radius plus the distance to that face. A
 * tie keeps the lower axis and the positive side (a flat box has both).
 * A centre on a face may sit outside it by a rounding in the local frame
 * yet coincide with its clamp in the world: that face is the least one,
 * at distance zero, not below. */
static void cq_sphere_in_box(cq_vec3 l, cq_vec3 h, const cq_pair_query *q, cq_contact *out)
{
    int k = 0;
    double pen = INFINITY;
    for (int i = 0; i < 3; i++) {
        double p = cq_comp(h, i) - fabs(cq_comp(l, i));
        if (p < pen)
            pen = p, k = i;
    }
    pen = fmax(pen, 0);
    bool neg = cq_comp(l, k) < 0;
    cq_vec3 face = cq_scale(q->xb.r.c[k], neg ? -1 : 1);
    out->overlap = out->has_normal = true;
    out->normal = cq_neg(face);
    out->depth = q->a->sphere.radius + pen;
    out->point_count = 1;
    cq_feature f = {CQ_FEAT_FACE, CQ_FEAT_FACE, 0, (uint16_t)(2 * k + neg)};
    out->points[0] = (cq_contact_point){cq_mad(q->xa.p, face, pen), out->depth, f};
}

void cq__sphere_box(const cq_pair_query *q, cq_contact *out)
{
    cq_vec3 c = q->xa.p, h = q->b->box.half, n;
    cq_vec3 l = cq_xform_inv_point(&q->xb, c);
    cq_vec3 k = cq_v3(cq_clamp(l.x, -h.x, h.x), cq_clamp(l.y, -h.y, h.y), cq_clamp(l.z, -h.z, h.z));
    cq_vec3 pb = cq_xform_point(&q->xb, k);
    if (!cq_core_direction(c, pb, &n)) {
        cq_sphere_in_box(l, h, q, out);
        return;
    }
    cq__round_contact(c, pb, q->a->sphere.radius, 0, q, out);
    if (out->point_count)
        out->points[0].feature = cq_box_feature_of(l, h);
}

/* The centre lies on the triangle, so the closest points coincide, but a
 * triangle with area still has a geometric normal: (v1 - v0) x (v2 - v0).
 * Being double-sided it has no preferred side; the previous normal picks
 * one when the pair has it, else the winding does. Either way the direction
 * is the triangle's own, not a fallback. */
static void cq_sphere_on_triangle(cq_vec3 tn, cq_vec3 pb, cq_feature f, const cq_pair_query *q, cq_contact *out)
{
    if (q->cache && q->cache->has_normal && cq_dot(q->cache->normal, tn) < 0)
        tn = cq_neg(tn);
    out->overlap = out->has_normal = true;
    out->normal = tn;
    out->depth = q->a->sphere.radius;
    out->point_count = 1;
    out->points[0] = (cq_contact_point){pb, out->depth, f};
}

void cq__sphere_triangle(const cq_pair_query *q, cq_contact *out)
{
    static const uint8_t kinds[] = {[CQ_TRI_FACE] = CQ_FEAT_FACE, [CQ_TRI_EDGE] = CQ_FEAT_EDGE,
                                    [CQ_TRI_VERTEX] = CQ_FEAT_VERTEX};
    cq_vec3 v[3], c = q->xa.p, n, tn;
    for (int i = 0; i < 3; i++)
        v[i] = cq_xform_point(&q->xb, q->b->triangle.v[i]);
    cq_tri_region region;
    int index;
    cq_vec3 pb = cq__closest_on_triangle(c, v[0], v[1], v[2], &region, &index);
    cq_feature f = {CQ_FEAT_FACE, kinds[region], 0, (uint16_t)index};
    cq_vec3 e1 = cq_sub(v[1], v[0]), e2 = cq_sub(v[2], v[0]);
    double flat = CQ_TRIANGLE_FLAT_SIN2 * cq_len2(e1) * cq_len2(e2);
    if (!cq_core_direction(c, pb, &n) && cq_normalize(cq_cross(e1, e2), flat, &tn)) {
        cq_sphere_on_triangle(tn, pb, f, q, out);
        return;
    }
    cq__round_contact(c, pb, q->a->sphere.radius, 0, q, out);
    if (out->point_count)
        out->points[0].feature = f;
}
