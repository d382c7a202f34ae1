/* Reference/incident face clipping and manifold reduction. */
#include "manifold.h"

/* A vertex of the polygon being clipped: its position, its feature, and
 * the incident edge that the segment to the next vertex lies on (-1 when
 * that segment runs along a side plane, made by an earlier cut). */
typedef struct cq_clip_vertex {
    cq_vec3 p;
    cq_feature f;
    int out_edge;
} cq_clip_vertex;

/* Keeps the part of the polygon on the inner side of dot(n, x) <= d. A cut
 * point takes the cutting side edge as its A feature and the incident edge
 * it lies on as its B feature. */
static int cq_clip_plane(const cq_clip_vertex *in, int n, cq_vec3 normal, double d, uint16_t side_edge,
                         uint16_t inc_face, cq_clip_vertex *out)
{
    int m = 0;
    for (int k = 0; k < n; k++) {
        const cq_clip_vertex *p = &in[k], *q = &in[(k + 1) % n];
        double dp = cq_dot(normal, p->p) - d, dq = cq_dot(normal, q->p) - d;
        if (dp <= 0)
            out[m++] = *p;
        if (n > 1 && ((dp < 0 && dq > 0) || (dp > 0 && dq < 0))) {
            cq_feature f = {CQ_FEAT_EDGE, CQ_FEAT_EDGE, side_edge, (uint16_t)p->out_edge};
            if (p->out_edge < 0) /* two side planes meet inside the incident face */
                f = (cq_feature){CQ_FEAT_EDGE, CQ_FEAT_FACE, side_edge, inc_face};
            cq_vec3 r = cq_lerp(p->p, q->p, dp / (dp - dq));
            out[m++] = (cq_clip_vertex){r, f, dp <= 0 ? -1 : p->out_edge};
        }
    }
    return m;
}

/* The outward normal of the side plane through ref's edge from a to b,
 * whatever the winding; false for a degenerate edge. */
static bool cq_side_normal(const cq_face *ref, cq_vec3 centre, cq_vec3 a, cq_vec3 b, cq_vec3 *side)
{
    if (!cq_normalize(cq_cross(cq_sub(b, a), ref->normal), 1e-300, side))
        return false;
    if (cq_dot(*side, cq_sub(centre, a)) > 0)
        *side = cq_neg(*side);
    return true;
}

int cq_clip_face(const cq_face *ref, const cq_face *inc, double skin, bool onto_ref,
                 cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_vertex buf[2][CQ_CLIP_MAX];
    int n = inc->count, cur = 0;
    for (int k = 0; k < n; k++)
        buf[0][k] = (cq_clip_vertex){inc->v[k], {CQ_FEAT_FACE, CQ_FEAT_VERTEX, ref->fid, inc->vid[k]}, inc->eid[k]};
    cq_vec3 centre = cq_v3(0, 0, 0);
    for (int k = 0; k < ref->count; k++)
        centre = cq_add(centre, ref->v[k]);
    centre = cq_scale(centre, 1.0 / ref->count);
    for (int s = 0; ref->count >= 3 && s < ref->count && n > 0; s++) {
        cq_vec3 a = ref->v[s], side;
        if (!cq_side_normal(ref, centre, a, ref->v[(s + 1) % ref->count], &side))
            continue;
        n = cq_clip_plane(buf[cur], n, side, cq_dot(side, a), ref->eid[s], inc->fid, buf[1 - cur]);
        cur = 1 - cur;
    }
    double plane = cq_dot(ref->normal, ref->v[0]);
    int m = 0;
    for (int k = 0; k < n; k++) {
        const cq_clip_vertex *v = &buf[cur][k];
        double depth = plane - cq_dot(ref->normal, v->p);
        if (depth < -skin)
            continue;
        cq_vec3 p = onto_ref ? cq_mad(v->p, ref->normal, depth) : v->p;
        out[m++] = (cq_contact_point){p, depth, v->f};
    }
    return m;
}

/* Twice the signed area of (a, b, c) seen along n. */
static double cq_area(cq_vec3 a, cq_vec3 b, cq_vec3 c, cq_vec3 n)
{
    return cq_dot(cq_cross(cq_sub(b, a), cq_sub(c, a)), n);
}

int cq_reduce_manifold(cq_contact_point *pts, int n, cq_vec3 normal)
{
    if (n <= CQ_MAX_POINTS)
        return n;
    int keep[CQ_MAX_POINTS] = {0, 0, 0, 0};
    for (int k = 1; k < n; k++) /* the deepest */
        if (pts[k].depth > pts[keep[0]].depth)
            keep[0] = k;
    double best = -1;
    for (int k = 0; k < n; k++) { /* the farthest from it */
        double d = cq_len2(cq_sub(pts[k].position, pts[keep[0]].position));
        if (d > best)
            best = d, keep[1] = k;
    }
    cq_vec3 a = pts[keep[0]].position, b = pts[keep[1]].position;
    double hi = 0, lo = 0;
    keep[2] = keep[3] = -1;
    for (int k = 0; k < n; k++) { /* the widest on each side of that line */
        double s = cq_area(a, b, pts[k].position, normal);
        if (s > hi)
            hi = s, keep[2] = k;
        if (s < lo)
            lo = s, keep[3] = k;
    }
    cq_contact_point out[CQ_MAX_POINTS];
    int m = 0;
    for (int i = 0; i < CQ_MAX_POINTS; i++) {
        bool dup = keep[i] < 0;
        for (int j = 0; j < i && !dup; j++)
            dup = keep[j] == keep[i];
        if (!dup)
            out[m++] = pts[keep[i]];
    }
    for (int i = 0; i < m; i++)
        pts[i] = out[i];
    return m;
}
