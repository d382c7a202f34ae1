/* Reference/incident face clipping (Sutherland-Hodgman in the reference
 * face's 2D frame) and manifold reduction. */
#include <float.h>
#include <string.h>

#include "geom.h"
#include "manifold.h"

/* Whether vertex v lies on the line within rounding: that of the distance's
 * terms, and that of the vertex's coordinates, noise (their world
 * coordinates' rounding), scaled by the line's coefficients. */
static bool cq_on_line(const cq_clip_vertex *v, const cq_clip_line *line, double dist, double noise)
{
    double ax = line->a * v->x, by = line->b * v->y;
    double terms = fabs(ax) + fabs(by) + fabs(line->d);
    return fabs(dist) <= (fabs(line->a) + fabs(line->b)) * noise + 64 * DBL_EPSILON * terms;
}

/* Keeps the part of the polygon inside one line. A cut point takes the
 * cutting side edge as its A feature and the incident edge it lies on as
 * its B feature (or the incident face, where two sides meet inside it). An
 * incident segment (seg_noise > 0) lying along the line within rounding is
 * on it, and kept whole: cut, its crossing could fall anywhere along it
 * (a capsule exactly over a box's edge). */
static int cq_clip_by_line(const cq_clip_vertex *in, int n, const cq_clip_line *line, uint16_t inc_face,
                           double seg_noise, cq_clip_vertex *out)
{
    double dist[CQ_CLIP_MAX];
    for (int k = 0; k < n; k++)
        dist[k] = line->a * in[k].x + line->b * in[k].y - line->d;
    if (n == 1) /* a lone point is kept or dropped, never cut */
        return dist[0] <= 0 ? (out[0] = in[0], 1) : 0;
    if (n == 2 && seg_noise > 0 && cq_on_line(&in[0], line, dist[0], seg_noise) &&
        cq_on_line(&in[1], line, dist[1], seg_noise)) {
        out[0] = in[0], out[1] = in[1];
        return 2;
    }
    int m = 0;
    for (int k = 0; k < n; k++) {
        int next = k + 1 == n ? 0 : k + 1;
        double dp = dist[k], dq = dist[next];
        if (dp <= 0) {
            out[m] = in[k];
            /* on the line with the next vertex outside: the boundary leaves
             * along the line, so a later cut of it lies on two sides */
            if (dp == 0 && dq > 0)
                out[m].out_edge = -1;
            m++;
        }
        if (dp * dq < 0 && (n > 2 || k == 0)) { /* strictly on opposite sides: cut (a segment once) */
            const cq_clip_vertex *p = &in[k], *q = &in[next];
            double t = dp / (dp - dq);
            cq_feature f = p->out_edge < 0 ? (cq_feature){CQ_FEAT_EDGE, CQ_FEAT_FACE, line->edge, inc_face}
                                           : (cq_feature){CQ_FEAT_EDGE, CQ_FEAT_EDGE, line->edge, (uint16_t)p->out_edge};
            out[m++] = (cq_clip_vertex){p->x + t * (q->x - p->x), p->y + t * (q->y - p->y),
                                        p->z + t * (q->z - p->z), f, (int16_t)(dp < 0 ? -1 : p->out_edge)};
        }
    }
    return m;
}

int cq__clip_polygon(const cq_clip_frame *fr, const cq_clip_line *lines, int nlines,
                     cq_clip_vertex poly[2][CQ_CLIP_MAX], int n, uint16_t inc_face, double seg_noise, double skin,
                     bool onto_ref, cq_contact_point out[CQ_CLIP_MAX])
{
    int cur = 0;
    seg_noise = n == 2 ? seg_noise : 0;
    for (int s = 0; s < nlines && n > 0; s++, cur = 1 - cur)
        n = cq_clip_by_line(poly[cur], n, &lines[s], inc_face, seg_noise, poly[1 - cur]);
    return cq__clip_emit(fr, poly[cur], n, skin, onto_ref, out);
}

int cq__clip_emit(const cq_clip_frame *fr, const cq_clip_vertex *v, int n, double skin, bool onto_ref,
                  cq_contact_point out[CQ_CLIP_MAX])
{
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (v[k].z > skin)
            continue;
        cq_vec3 p = cq_mad(cq_mad(fr->origin, fr->u, v[k].x), fr->v, v[k].y);
        out[m++] = (cq_contact_point){onto_ref ? p : cq_mad(p, fr->n, v[k].z), -v[k].z, v[k].f};
    }
    return m;
}

/* The rounding an incident segment's frame coordinates carry: that of its
 * world ones (0 for a polygon, which the side rule leaves alone). */
static double cq_segment_noise(const cq_clip_frame *fr, const cq_face *inc)
{
    if (inc->count != 2)
        return 0;
    double mag = cq_larger(cq_max_abs(fr->origin), cq_larger(cq_max_abs(inc->v[0]), cq_max_abs(inc->v[1])));
    return 64 * DBL_EPSILON * mag;
}

static cq_clip_vertex cq_incident_vertex(double x, double y, double z, uint16_t ref_face, const cq_face *inc, int k)
{
    return (cq_clip_vertex){x, y, z, {CQ_FEAT_FACE, CQ_FEAT_VERTEX, ref_face, inc->vid[k]}, (int16_t)inc->eid[k]};
}

int cq__clip_lines(const cq_clip_frame *fr, const cq_clip_line *lines, int nlines, uint16_t ref_face,
                   const cq_face *inc, double skin, bool onto_ref, cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_vertex poly[2][CQ_CLIP_MAX];
    for (int k = 0; k < inc->count; k++) {
        cq_vec3 d = cq_sub(inc->v[k], fr->origin);
        poly[0][k] = cq_incident_vertex(cq_dot(d, fr->u), cq_dot(d, fr->v), cq_dot(d, fr->n), ref_face, inc, k);
    }
    return cq__clip_polygon(fr, lines, nlines, poly, inc->count, inc->fid, cq_segment_noise(fr, inc), skin, onto_ref,
                            out);
}

/* Whether an incident segment (poly[0..1]) lies along one of the sides
 * within rounding (noise: its world coordinates'). */
static bool cq_segment_on_side(const cq_clip_vertex *poly, const cq_clip_line *lines, int nlines, double noise)
{
    for (int s = 0; s < nlines; s++) {
        const cq_clip_line *l = &lines[s];
        if (cq_on_line(&poly[0], l, l->a * poly[0].x + l->b * poly[0].y - l->d, noise) &&
            cq_on_line(&poly[1], l, l->a * poly[1].x + l->b * poly[1].y - l->d, noise))
            return true;
    }
    return false;
}

/* cq__clip_lines seen along fr->n, which need not be the reference plane's
 * normal pn (dot(fr->n, pn) = k > 0): each incident vertex goes in as the
 * point where the line through it along fr->n meets the plane, and its
 * height is the distance along that line. The projection is affine, so a
 * cut interpolates it exactly as the orthogonal one. Seen along a contact
 * normal, a segment touching the reference's edge (a capsule lying on a
 * box's edge) always lies along that side, where rounding alone would keep
 * it, cut it or drop it: it is left to the line contact (no point). */
static int cq_clip_lines_along(const cq_clip_frame *fr, cq_vec3 pn, double k, const cq_clip_line *lines,
                               int nlines, uint16_t ref_face, const cq_face *inc, double skin, bool onto_ref,
                               cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_vertex poly[2][CQ_CLIP_MAX];
    for (int i = 0; i < inc->count; i++) {
        cq_vec3 d = cq_sub(inc->v[i], fr->origin);
        double z = cq_dot(d, pn) / k;
        d = cq_mad(d, fr->n, -z);
        poly[0][i] = cq_incident_vertex(cq_dot(d, fr->u), cq_dot(d, fr->v), z, ref_face, inc, i);
    }
    if (inc->count == 2 && cq_segment_on_side(poly[0], lines, nlines, cq_segment_noise(fr, inc)))
        return 0;
    return cq__clip_polygon(fr, lines, nlines, poly, inc->count, inc->fid, 0, skin, onto_ref, out);
}

/* The frame of a reference polygon (count >= 3) and its side lines;
 * false when it has no frame (all its vertices on one point). */
static bool cq_ref_frame(const cq_face *ref, cq_clip_frame *fr, cq_clip_line lines[CQ_FACE_MAX], int *nlines)
{
    *fr = (cq_clip_frame){ref->v[0], cq_v3(0, 0, 0), cq_v3(0, 0, 0), ref->normal};
    /* u along the longest edge from v[0], so a sliver face still has a frame. */
    for (int k = 1; k < ref->count; k++)
        if (cq_len2(cq_sub(ref->v[k], fr->origin)) > cq_len2(fr->u))
            fr->u = cq_sub(ref->v[k], fr->origin);
    if (!cq_normalize(fr->u, 0, &fr->u))
        return false;
    fr->u = cq_sub(fr->u, cq_scale(fr->n, cq_dot(fr->u, fr->n)));
    if (!cq_normalize(fr->u, 0, &fr->u))
        return false;
    fr->v = cq_cross(fr->n, fr->u);
    double px[CQ_FACE_MAX], py[CQ_FACE_MAX], cx = 0, cy = 0;
    for (int k = 0; k < ref->count; k++) {
        cq_vec3 d = cq_sub(ref->v[k], fr->origin);
        px[k] = cq_dot(d, fr->u), py[k] = cq_dot(d, fr->v);
        cx += px[k] / ref->count, cy += py[k] / ref->count;
    }
    *nlines = 0;
    for (int k = 0; k < ref->count; k++) {
        int next = k + 1 == ref->count ? 0 : k + 1;
        double a = py[next] - py[k], b = px[k] - px[next]; /* edge normal; its length does not matter */
        if (a == 0 && b == 0)
            continue;
        double d = a * px[k] + b * py[k];
        if (a * cx + b * cy > d) /* face outward whatever the winding */
            a = -a, b = -b, d = -d;
        lines[(*nlines)++] = (cq_clip_line){a, b, d, ref->eid[k]};
    }
    return true;
}

int cq__clip_face(const cq_face *ref, const cq_face *inc, double skin, bool onto_ref,
                  cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[CQ_FACE_MAX];
    int nlines;
    if (ref->count < 3 || !cq_ref_frame(ref, &fr, lines, &nlines))
        return 0;
    return cq__clip_lines(&fr, lines, nlines, ref->fid, inc, skin, onto_ref, out);
}

int cq__clip_face_along(const cq_face *ref, const cq_face *inc, cq_vec3 dir, double skin, bool onto_ref,
                        cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[CQ_FACE_MAX];
    int nlines;
    double k = cq_dot(dir, ref->normal);
    if (ref->count < 3 || !(k > 0) || !cq_ref_frame(ref, &fr, lines, &nlines))
        return 0;
    fr.n = dir; /* heights, and the move off the plane, along dir */
    return cq_clip_lines_along(&fr, ref->normal, k, lines, nlines, ref->fid, inc, skin, onto_ref, out);
}

/* The edge of face f (count >= 2) lying farthest along dir, and of those
 * within rounding of that height the one nearest to point m: along a face's
 * normal every edge of the face lies as far, and rounding alone would pick
 * one, perhaps the far side's. Returns its index. */
static int cq_edge_toward(const cq_face *f, cq_vec3 dir, cq_vec3 m)
{
    int edges = f->count == 2 ? 1 : f->count, best = 0;
    double scale = 0;
    for (int k = 0; k < f->count; k++)
        scale = cq_larger(scale, cq_max_abs(cq_sub(f->v[k], m)));
    double tol = 1e-9 * scale, best_h = -INFINITY, best_d = INFINITY;
    for (int k = 0; k < edges; k++) {
        cq_vec3 a = f->v[k], b = f->v[k + 1 == f->count ? 0 : k + 1];
        double t, h = 0.5 * cq_dot(cq_add(a, b), dir), d = cq_len2(cq_sub(m, cq__closest_on_segment(m, a, b, &t)));
        if (h > best_h + tol || (h >= best_h - tol && d < best_d))
            best_h = cq_larger(h, best_h), best_d = d, best = k;
    }
    return best;
}

/* For a segment feature (a capsule's axis, a segment hull, a flat
 * triangle) lying along an edge just past the other shape's face, or with
 * the normal too tilted for either feature to be a face. The other feature
 * is a segment or a face, whose edge lying farthest toward the segment
 * (the nearest of those within rounding) is the one used. Only where the
 * segment lies along that edge and both ends of their overlap touch the
 * other shape within skin (cq__line_ends) are the ends written; a point's
 * feature is a segment vertex on the edge, or the segment's edge on an
 * edge vertex. Otherwise 0: the single witness point then says more (a
 * segment turned off the edge touches it at one point). */
int cq__line_contact(const cq_face *fa, const cq_face *fb, cq_vec3 n, double ra, double rb, double skin,
                     cq_contact_point out[2])
{
    bool seg_is_a = fa->count == 2;
    const cq_face *seg = seg_is_a ? fa : fb, *other = seg_is_a ? fb : fa;
    if (seg->count != 2 || other->count < 2)
        return 0;
    /* The other shape's edge facing the segment: toward A along -n. */
    cq_vec3 s0 = seg->v[0], s1 = seg->v[1];
    int k = cq_edge_toward(other, seg_is_a ? cq_neg(n) : n, cq_lerp(s0, s1, 0.5));
    int next = k + 1 == other->count ? 0 : k + 1;
    cq_vec3 e0 = other->v[k], e1 = other->v[next];
    cq_vec3 at[2];
    double depth[2], t[2];
    if (!cq__line_ends(s0, s1, e0, e1, seg_is_a, n, ra, rb, skin, at, depth, t))
        return 0; /* no line, or an end off the other shape: the witness point says more */
    for (int i = 0; i < 2; i++) {
        /* The overlap's low end is the segment end projecting lower, or the
         * edge's first vertex where that end lies before it; the high end
         * likewise. Its feature: that segment vertex on the edge, or the
         * segment's edge on that edge vertex. */
        int j = (t[0] <= t[1]) == (i == 0) ? 0 : 1;
        bool seg_end = i ? t[j] < 1 : t[j] > 0;
        cq_feature f = seg_end ? (cq_feature){CQ_FEAT_VERTEX, CQ_FEAT_EDGE, seg->vid[j], other->eid[k]}
                               : (cq_feature){CQ_FEAT_EDGE, CQ_FEAT_VERTEX, seg->eid[0], other->vid[i ? next : k]};
        out[i] = (cq_contact_point){at[i], depth[i], seg_is_a ? f : cq_feature_swap(f)};
    }
    return 2;
}

cq_face cq__triangle_face(const cq_vec3 t[3], cq_vec3 n, bool flat)
{
    cq_face f = {.count = 3, .normal = n, .fid = 0};
    int m = 0;
    for (int i = 1; flat && i < 3; i++)
        if (cq_len2(cq_sub(t[(i + 1) % 3], t[i])) > cq_len2(cq_sub(t[(m + 1) % 3], t[m])))
            m = i;
    if (flat)
        f.count = cq_len2(cq_sub(t[(m + 1) % 3], t[m])) > 0 ? 2 : 1;
    for (int i = 0; i < f.count; i++) {
        f.v[i] = t[(m + i) % 3];
        f.vid[i] = (uint16_t)((m + i) % 3);
        f.eid[i] = (uint16_t)(flat ? m : i);
    }
    return f;
}

/* Twice the signed area of (a, b, c) seen along n. */
static double cq_area(cq_vec3 a, cq_vec3 b, cq_vec3 c, cq_vec3 n)
{
    return cq_dot(cq_cross(cq_sub(b, a), cq_sub(c, a)), n);
}

/* Whether x beats best by more than rounding: exact ties (a box's symmetric
 * corners) then keep the earlier point however the pair is moved. */
static bool cq_beats(double x, double best) { return x > best + 1e-12 * fabs(best); }

int cq__reduce_manifold_to(const cq_contact_point *pts, int n, cq_vec3 normal, cq_contact_point out[CQ_MAX_POINTS])
{
    if (n <= CQ_MAX_POINTS) {
        /* All CQ_MAX_POINTS slots whatever n (pts has them): a fixed size is
         * a few moves, where copying n would call memcpy or branch on n.
         * Slots past n carry nothing anyone reads. */
        memcpy(out, pts, CQ_MAX_POINTS * sizeof *out);
        return n;
    }
    int keep[CQ_MAX_POINTS] = {0, 0, -1, -1};
    for (int k = 1; k < n; k++) /* the deepest */
        if (cq_beats(pts[k].depth, pts[keep[0]].depth))
            keep[0] = k;
    double best = -1;
    for (int k = 0; k < n; k++) { /* the farthest from it */
        double d = cq_len2(cq_sub(pts[k].position, pts[keep[0]].position));
        if (cq_beats(d, best))
            best = d, keep[1] = k;
    }
    cq_vec3 a = pts[keep[0]].position, b = pts[keep[1]].position;
    double hi = 0, lo = 0;
    for (int k = 0; k < n; k++) { /* the widest on each side of that line */
        double s = cq_area(a, b, pts[k].position, normal);
        if (cq_beats(s, hi))
            hi = s, keep[2] = k;
        if (cq_beats(-s, -lo))
            lo = s, keep[3] = k;
    }
    if ((keep[2] < 0) != (keep[3] < 0)) {
        /* Every point on one side of a-b, which is then an edge of their
         * hull: the fourth is the one farthest outside the triangle a, b,
         * c across its other two edges (b-c or c-a), so a polygon of
         * equally deep points keeps four corners, not three. */
        int third = keep[2] >= 0 ? 2 : 3;
        cq_vec3 c = pts[keep[third]].position;
        /* Beyond by more than rounding, a 1e-9 part of the triangle's own
         * area: a corner's near-duplicate must not take the place. */
        double side = third == 2 ? 1 : -1, best_beyond = 1e-9 * fabs(third == 2 ? hi : lo);
        for (int k = 0; k < n; k++) {
            double beyond = cq_larger(-side * cq_area(b, c, pts[k].position, normal),
                                      -side * cq_area(c, a, pts[k].position, normal));
            if (cq_beats(beyond, best_beyond))
                best_beyond = beyond, keep[5 - third] = k;
        }
    }
    int m = 0;
    for (int i = 0; i < CQ_MAX_POINTS; i++) {
        bool dup = keep[i] < 0;
        for (int j = 0; j < i && !dup; j++)
            dup = keep[j] == keep[i];
        if (!dup)
            out[m++] = pts[keep[i]];
    }
    return m;
}

int cq__drop_coincident(cq_contact_point *pts, int n)
{
    int m = 0;
    for (int k = 0; k < n; k++) {
        bool seen = false;
        for (int i = 0; i < m && !seen; i++)
            seen = cq_coincident(pts[k].position, pts[i].position);
        if (!seen)
            pts[m++] = pts[k];
    }
    return m;
}

int cq__reduce_manifold(cq_contact_point *pts, int n, cq_vec3 normal)
{
    if (n <= CQ_MAX_POINTS)
        return n;
    cq_contact_point out[CQ_MAX_POINTS];
    int m = cq__reduce_manifold_to(pts, n, normal, out);
    for (int i = 0; i < m; i++)
        pts[i] = out[i];
    return m;
}
