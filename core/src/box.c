/* Box features. Vertex ids set bit k when local coordinate k is negative;
 * an edge along axis k is 4k + the sign bits of the other two coordinates,
 * lower axis first. A face's corners go round (+u,+v) (-u,+v) (-u,-v)
 * (+u,-v) with u = k+1, v = k+2 (mod 3); edge m runs from corner m to m+1. */
#include <string.h>

#include "box.h"

static const double cq_su[4] = {1, -1, -1, 1}, cq_sv[4] = {1, 1, -1, -1};

static uint16_t cq_edge_id(int k, const double sign[3])
{
    int lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2;
    return (uint16_t)(4 * k + ((sign[lo] < 0) | (sign[hi] < 0) << 1));
}

/* The corner and edge ids of each face, in corner order: the rule above
 * written out (check_box_box verifies it against corner coordinates). */
static const uint16_t cq_face_vid[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 4, 5, 1},
                                           {2, 6, 7, 3}, {0, 1, 3, 2}, {4, 5, 7, 6}};
static const uint16_t cq_face_eid[6][4] = {{4, 10, 6, 8}, {5, 11, 7, 9}, {8, 2, 9, 0},
                                           {10, 3, 11, 1}, {0, 5, 1, 4}, {2, 7, 3, 6}};

/* Half extent k (0..2) by indexing, not by a chain of comparisons. */
static inline double cq_half_at(const cq_obb *box, int k)
{
    double h[3];
    memcpy(h, &box->half, sizeof h);
    return h[k];
}

/* A face as centre and two half-edge vectors (along u and v). */
static void cq_face_span(const cq_obb *box, int id, cq_vec3 *c, cq_vec3 *du, cq_vec3 *dv)
{
    int k = id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    *c = cq_mad(box->center, box->axes.c[k], ((id & 1) ? -1 : 1) * cq_half_at(box, k));
    *du = cq_scale(box->axes.c[u], cq_half_at(box, u));
    *dv = cq_scale(box->axes.c[v], cq_half_at(box, v));
}

void cq_box_face(const cq_obb *box, int id, cq_face *out)
{
    cq_vec3 c, du, dv;
    cq_face_span(box, id, &c, &du, &dv);
    for (int m = 0; m < 4; m++) {
        out->v[m] = cq_mad(cq_mad(c, du, cq_su[m]), dv, cq_sv[m]);
        out->vid[m] = cq_face_vid[id][m], out->eid[m] = cq_face_eid[id][m];
    }
    out->count = 4;
    out->normal = cq_scale(box->axes.c[id / 2], (id & 1) ? -1 : 1);
    out->fid = (uint16_t)id;
}

int cq_box_face_toward(const cq_obb *box, cq_vec3 dir)
{
    int best = 0;
    double best_dot = -INFINITY;
    /* Selects, not branches (which face it is is unpredictable); the first
     * axis wins a tie. */
    for (int k = 0; k < 3; k++) {
        double d = cq_dot(box->axes.c[k], dir);
        int more = fabs(d) > best_dot;
        best += more * (cq_box_face_id(k, d) - best);
        best_dot = fabs(d) > best_dot ? fabs(d) : best_dot;
    }
    return best;
}

/* The frame and the four side lines of face `id`. */
static void cq_face_frame(const cq_obb *box, int id, cq_clip_frame *fr, cq_clip_line lines[4])
{
    int k = id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    double hu = cq_comp(box->half, u), hv = cq_comp(box->half, v);
    fr->origin = cq_mad(box->center, box->axes.c[k], ((id & 1) ? -1 : 1) * cq_comp(box->half, k));
    fr->u = box->axes.c[u], fr->v = box->axes.c[v];
    fr->n = cq_scale(box->axes.c[k], (id & 1) ? -1 : 1);
    /* Edge m borders the side at +v (m = 0), -u (1), -v (2), +u (3). */
    const uint16_t *eid = cq_face_eid[id];
    lines[0] = (cq_clip_line){0, 1, hv, eid[0]};
    lines[1] = (cq_clip_line){-1, 0, hu, eid[1]};
    lines[2] = (cq_clip_line){0, -1, hv, eid[2]};
    lines[3] = (cq_clip_line){1, 0, hu, eid[3]};
}

/* Box-box face clipping, found directly. The clipped polygon is the
 * incident face P (a parallelogram in the reference face's frame) cut by
 * the reference rectangle R, |x| <= hu and |y| <= hv. Its corners are of
 * three kinds, each found on its own instead of by four Sutherland-Hodgman
 * passes that copy the polygon each time:
 *  - P's corners inside R (feature: reference face, incident vertex);
 *  - the points where P's edges enter and leave R (side edge, incident edge);
 *  - R's corners strictly inside P (side edge, incident face).
 * They are cq_clip_polygon's points, with its features, in another order
 * (check_box_box compares the two; where the overlap is a mere segment,
 * the feature here is the incident edge the point lies on). */

/* A clipped point in frame coordinates, before it is put in world space. */
typedef struct cq_rect_point {
    double x, y, z;
    cq_feature f;
} cq_rect_point;

/* The sides in cq_clip_polygon's order: +v, -u, -v, +u (edge m of a face
 * borders side m). Where two sides meet, Sutherland-Hodgman makes the
 * corner when the later side cuts the segment the earlier one left, so
 * corner j of R (cq_su, cq_sv order) bears the edge of side cq_corner_side[j]. */
static const int cq_corner_side[4] = {3, 1, 2, 3};

/* c ? a : b, by masks on the bits. */
static inline double cq_select(int c, double a, double b)
{
    uint64_t x, y, mask = (uint64_t)0 - (uint64_t)c;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & mask) | (y & ~mask);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* Where the line x(t) = p + t e (one coordinate) lies within |x| <= h: the
 * parameters it comes in and goes out at, with the sides it crosses there
 * (side_lo for the low bound -h, side_hi for +h). A line that never moves
 * along the coordinate is inside for every t or for none. */
static inline void cq_slab(double p, double e, double h, int side_lo, int side_hi, double *t_in, int *s_in,
                           double *t_out, int *s_out)
{
    if (e == 0) {
        bool inside = fabs(p) <= h;
        *t_in = inside ? -INFINITY : INFINITY, *t_out = inside ? INFINITY : -INFINITY;
        *s_in = *s_out = -1;
        return;
    }
    double inv = 1 / e, lo = (-h - p) * inv, hi = (h - p) * inv;
    /* Masks and arithmetic on the sign instead of selects, which compilers
     * turn into branches whose way is unpredictable here. */
    int up = e > 0;
    *t_in = cq_select(up, lo, hi), *t_out = cq_select(up, hi, lo);
    *s_in = side_hi + up * (side_lo - side_hi), *s_out = side_lo + up * (side_hi - side_lo);
}

int cq_box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                    cq_contact_point out[CQ_CLIP_MAX])
{
    int k = ref_id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    double hu = cq_half_at(ref, u), hv = cq_half_at(ref, v);
    cq_clip_frame fr = {cq_mad(ref->center, ref->axes.c[k], ((ref_id & 1) ? -1 : 1) * cq_half_at(ref, k)),
                        ref->axes.c[u], ref->axes.c[v], cq_scale(ref->axes.c[k], (ref_id & 1) ? -1 : 1)};
    cq_vec3 c, du, dv;
    cq_face_span(inc, inc_id, &c, &du, &dv);
    c = cq_sub(c, fr.origin);
    /* The incident quad straight in frame coordinates: 9 dots, not 12. */
    cq_vec3 cf = cq_v3(cq_dot(c, fr.u), cq_dot(c, fr.v), cq_dot(c, fr.n));
    cq_vec3 uf = cq_v3(cq_dot(du, fr.u), cq_dot(du, fr.v), cq_dot(du, fr.n));
    cq_vec3 vf = cq_v3(cq_dot(dv, fr.u), cq_dot(dv, fr.v), cq_dot(dv, fr.n));
    const uint16_t *side_edge = cq_face_eid[ref_id], *inc_vid = cq_face_vid[inc_id], *inc_eid = cq_face_eid[inc_id];
    cq_vec3 p[5];
    for (int m = 0; m < 4; m++)
        p[m] = cq_mad(cq_mad(cf, uf, cq_su[m]), vf, cq_sv[m]);
    p[4] = p[0];
    /* Every candidate is written and only the count says which stay: which
     * are kept is unpredictable, and a mispredicted branch costs more than
     * the writes. At most 4 + 8 + 4 are written. */
    cq_rect_point pt[16];
    int n = 0;
    for (int m = 0; m < 4; m++) {
        pt[n] = (cq_rect_point){p[m].x, p[m].y, p[m].z, {CQ_FEAT_FACE, CQ_FEAT_VERTEX, (uint16_t)ref_id, inc_vid[m]}};
        n += (fabs(p[m].x) <= hu) & (fabs(p[m].y) <= hv);
        /* The edge's part inside R, by the slabs of x (sides -u, +u) and
         * y (-v, +v): an end strictly outside a side crosses it strictly
         * inside the edge, the only cut cq_clip_polygon makes. */
        cq_vec3 e = cq_sub(p[m + 1], p[m]);
        double xi, xo, yi, yo;
        int sxi, sxo, syi, syo;
        cq_slab(p[m].x, e.x, hu, 1, 3, &xi, &sxi, &xo, &sxo);
        cq_slab(p[m].y, e.y, hv, 2, 0, &yi, &syi, &yo, &syo);
        int x_in = xi > yi, x_out = xo < yo;
        double t_in = xi > yi ? xi : yi, t_out = xo < yo ? xo : yo;
        int s_in = syi + x_in * (sxi - syi), s_out = syo + x_out * (sxo - syo);
        int cut = t_in < t_out;
        cq_vec3 a = cq_mad(p[m], e, t_in), b = cq_mad(p[m], e, t_out);
        pt[n] = (cq_rect_point){a.x, a.y, a.z, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, side_edge[s_in & 3], inc_eid[m]}};
        n += cut & (t_in > 0) & (t_in < 1);
        pt[n] = (cq_rect_point){b.x, b.y, b.z, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, side_edge[s_out & 3], inc_eid[m]}};
        n += cut & (t_out > 0) & (t_out < 1);
    }
    /* R's corner (x, y) = cf + s uf + t vf in the plane, solved by Cramer's
     * rule; a flat P (a zero half extent) holds no corner. */
    double det = uf.x * vf.y - uf.y * vf.x, inv = 1 / det;
    for (int j = 0; det != 0 && j < 4; j++) {
        double x = cq_su[j] * hu, y = cq_sv[j] * hv, wx = x - cf.x, wy = y - cf.y;
        double s = (wx * vf.y - wy * vf.x) * inv, t = (uf.x * wy - uf.y * wx) * inv;
        pt[n] = (cq_rect_point){x, y, cf.z + s * uf.z + t * vf.z,
                                {CQ_FEAT_EDGE, CQ_FEAT_FACE, side_edge[cq_corner_side[j]], (uint16_t)inc_id}};
        n += (fabs(s) < 1) & (fabs(t) < 1);
    }
    /* Kept when no more than skin above the reference plane; put on the
     * incident face, or onto the reference face when that is B's, with A's
     * half of the feature first. */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        cq_vec3 at = cq_mad(cq_mad(fr.origin, fr.u, pt[i].x), fr.v, pt[i].y);
        out[kept] = (cq_contact_point){ref_is_b ? at : cq_mad(at, fr.n, pt[i].z), -pt[i].z,
                                       ref_is_b ? cq_feature_swap(pt[i].f) : pt[i].f};
        kept += !(pt[i].z > skin);
    }
    return kept;
}

int cq_box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[4];
    cq_face_frame(box, id, &fr, lines);
    return cq_clip_lines(&fr, lines, 4, (uint16_t)id, inc, skin, onto_ref, out);
}

/* The point center + sum of s_m h_m axis_m, summed in axis order. */
static inline cq_vec3 cq_box_point(const cq_obb *box, double s0, double s1, double s2)
{
    cq_vec3 p = cq_mad(box->center, box->axes.c[0], s0 * box->half.x);
    p = cq_mad(p, box->axes.c[1], s1 * box->half.y);
    return cq_mad(p, box->axes.c[2], s2 * box->half.z);
}

uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q)
{
    double sign[3] = {cq_sign_of(cq_dot(box->axes.c[0], dir)), cq_sign_of(cq_dot(box->axes.c[1], dir)),
                      cq_sign_of(cq_dot(box->axes.c[2], dir))};
    sign[k] = 1;
    *p = cq_box_point(box, sign[0], sign[1], sign[2]);
    sign[k] = -1;
    *q = cq_box_point(box, sign[0], sign[1], sign[2]);
    return cq_edge_id(k, sign);
}
