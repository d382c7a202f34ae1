/* Box features. Vertex ids set bit k when local coordinate k is negative;
 * an edge along axis k is 4k + the sign bits of the other two coordinates,
 * lower axis first. A face's corners go round (+u,+v) (-u,+v) (-u,-v)
 * (+u,-v) with u = k+1, v = k+2 (mod 3); edge m runs from corner m to m+1. */
#include <string.h>

#include "box.h"

static const double cq_su[4] = {1, -1, -1, 1}, cq_sv[4] = {1, 1, -1, -1};


/* The corner and edge ids of each face, in corner order: the rule above
 * written out (check_box_box verifies it against corner coordinates). */
const uint16_t cq__box_face_vid[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 4, 5, 1},
                                           {2, 6, 7, 3}, {0, 1, 3, 2}, {4, 5, 7, 6}};
const uint16_t cq__box_face_eid[6][4] = {{4, 10, 6, 8}, {5, 11, 7, 9}, {8, 2, 9, 0},
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

void cq__box_face(const cq_obb *box, int id, cq_face *out)
{
    cq_vec3 c, du, dv;
    cq_face_span(box, id, &c, &du, &dv);
    for (int m = 0; m < 4; m++) {
        out->v[m] = cq_mad(cq_mad(c, du, cq_su[m]), dv, cq_sv[m]);
        out->vid[m] = cq__box_face_vid[id][m], out->eid[m] = cq__box_face_eid[id][m];
    }
    out->count = 4;
    out->normal = cq_scale(box->axes.c[id / 2], (id & 1) ? -1 : 1);
    out->fid = (uint16_t)id;
}

int cq__box_face_toward(const cq_obb *box, const cq_vec3 *dir)
{
    int best = 0;
    double best_dot = -INFINITY;
    /* Selects, not branches (which face it is is unpredictable); the first
     * axis wins a tie. */
    for (int k = 0; k < 3; k++) {
        double d = cq_dot(box->axes.c[k], *dir);
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
    const uint16_t *eid = cq__box_face_eid[id];
    lines[0] = (cq_clip_line){0, 1, hv, eid[0]};
    lines[1] = (cq_clip_line){-1, 0, hu, eid[1]};
    lines[2] = (cq_clip_line){0, -1, hv, eid[2]};
    lines[3] = (cq_clip_line){1, 0, hu, eid[3]};
}

/* Box-box face clipping: cq__clip_polygon's Sutherland-Hodgman passes,
 * specialised to the reference face's rectangle and kept to the same
 * arithmetic, so the same vertices come out in the same order, but for two
 * rules of the vector clip's, which the generic clipper lacks: a distance
 * within rounding of a side counts as 0, and a vertex on a side whose next
 * vertex is outside leaves the polygon along that side (its cut point then
 * lies where two sides meet, not on its incident edge). Both only change
 * where a vertex lies within rounding of a side line (flush stacks). (The
 * clipper's rule for an incident segment has no counterpart here: a box's
 * face has four corners.) */

/* The incident quad while the rectangle clips it, as structure of arrays:
 * a pass moves whole words, no partial stores to forward. Each vertex's
 * feature and outgoing incident edge travel in one word (cq_rect_tag). A
 * pass keeps some vertices and adds one point per crossing: a convex quad
 * ends with at most 8 vertices, but as rounding could make a nearly flat
 * polygon cross a side more often, the bound is the general one, the count
 * at most doubled per pass (4 -> 64), plus the slot a pass reads and writes
 * past its end. */
#define CQ_RECT_POLY_MAX 65

typedef struct cq_rect_poly {
    int n;
    double x[CQ_RECT_POLY_MAX], y[CQ_RECT_POLY_MAX], z[CQ_RECT_POLY_MAX];
    uint64_t tag[CQ_RECT_POLY_MAX];
} cq_rect_poly;

/* A vertex's tag: its feature, reference half first (kind, kind, index,
 * index in bits 0, 8, 16, 32), and in bits 48 up cq_clip_vertex.out_edge
 * plus one (0: the edge from it runs along a side). */
static inline uint64_t cq_rect_tag(unsigned ref_kind, unsigned inc_kind, unsigned ref_index, unsigned inc_index,
                                   int out_edge)
{
    return ref_kind | inc_kind << 8 | (uint64_t)ref_index << 16 | (uint64_t)inc_index << 32 |
           (uint64_t)(out_edge + 1) << 48;
}

/* The tag's feature with A's half first. */
static inline cq_feature cq_rect_feature(uint64_t tag, bool ref_is_b)
{
    cq_feature f = {(uint8_t)tag, (uint8_t)(tag >> 8), (uint16_t)(tag >> 16), (uint16_t)(tag >> 32)};
    return ref_is_b ? cq_feature_swap(f) : f;
}

/* c ? a : b, by masks: compilers turn the plain ternary on these words
 * into a branch, and which way it goes here is unpredictable. */
static inline uint64_t cq_pick(bool c, uint64_t a, uint64_t b)
{
    uint64_t mask = (uint64_t)0 - c;
    return (a & mask) | (b & ~mask);
}

/* One pass of cq_clip_by_line (manifold.c) against a side whose signed
 * distances are dist[0..n] (the polygon's slot n repeats its first vertex,
 * so edge k always ends at k + 1): the same keep and cut rules and the same
 * arithmetic, and a vertex on the line (dp = 0) followed by one outside
 * leaves along the side. Each vertex and the point where its edge would cross are
 * both written, and only the count says which stay: which side a vertex
 * lies on is unpredictable, and a mispredicted branch costs more than the
 * writes. Where nothing crosses (dp = dq possible) the division may give an
 * infinity or NaN, in a slot that is then overwritten. A cut point lies on
 * the incident edge it cuts, or inside the incident face where that edge
 * ran along an earlier side; the edge from it runs along this side when its
 * vertex was inside. */
static void cq_rect_cut(const cq_rect_poly *in, const double *dist, unsigned side_edge, unsigned inc_face,
                        cq_rect_poly *out)
{
    const uint64_t in_face = cq_rect_tag(CQ_FEAT_EDGE, CQ_FEAT_FACE, side_edge, inc_face, -1);
    const uint64_t on_edge = cq_rect_tag(CQ_FEAT_EDGE, CQ_FEAT_EDGE, side_edge, 0, -1);
    int n = in->n, m = 0;
    bool polygon = n > 2;
    for (int k = 0; k < n; k++) {
        double dp = dist[k], dq = dist[k + 1];
        uint64_t tag = in->tag[k], edge = tag >> 48; /* out_edge + 1 */
        /* A vertex on the line whose next one is outside: the boundary
         * leaves it along this side, not along its incident edge. */
        uint64_t along_side = cq_pick(!(dp < 0) & (dq > 0), ~(uint64_t)0 >> 16, ~(uint64_t)0);
        out->x[m] = in->x[k], out->y[m] = in->y[k], out->z[m] = in->z[k], out->tag[m] = tag & along_side;
        m += dp <= 0;
        double t = dp / (dp - dq);
        out->x[m] = in->x[k] + t * (in->x[k + 1] - in->x[k]);
        out->y[m] = in->y[k] + t * (in->y[k + 1] - in->y[k]);
        out->z[m] = in->z[k] + t * (in->z[k + 1] - in->z[k]);
        out->tag[m] = cq_pick(edge == 0, in_face, on_edge | (edge - 1) << 32) | cq_pick(dp < 0, 0, edge << 48);
        m += (dp * dq < 0) & (polygon | (k == 0)); /* strictly apart; a segment is cut once */
    }
    out->n = m;
}

/* Clips against side `side` of the rectangle |x| <= hu, |y| <= hv (edge m
 * borders the side at +v, -u, -v, +u for m = 0..3). The distance is the
 * general line's a x + b y - d with (a, b) = (0, 1), (-1, 0), (0, -1),
 * (1, 0), without the zero term: the same bits for finite coordinates. A
 * distance within tol of 0 (cq_box_clip_tol: the rounding of the frame's
 * coordinates) counts as 0, as in the vector clip: a vertex that close
 * lies on the line, so an incident edge along a side (a flush stack) is
 * kept whole, where its ends' rounding would otherwise cut it in its
 * middle and drop a corner. A pass with every vertex kept changes nothing
 * and is skipped; the result is in *cur. */
static inline void cq_rect_side(cq_rect_poly **cur, cq_rect_poly **spare, int side, double h, double tol,
                                unsigned edge, unsigned inc_face)
{
    cq_rect_poly *p = *cur;
    int n = p->n;
    const double *c = side & 1 ? p->x : p->y;
    double sign = side == 0 || side == 3 ? 1 : -1, dist[CQ_RECT_POLY_MAX]; /* times +-1: exact */
    bool outside = false;
    for (int k = 0; k < n; k++) {
        double d = sign * c[k] - h;
        dist[k] = fabs(d) <= tol ? 0 : d;
        outside |= !(dist[k] <= 0); /* as cq_clip_by_line keeps: a NaN is not kept */
    }
    if (!outside)
        return;
    dist[n] = dist[0];
    p->x[n] = p->x[0], p->y[n] = p->y[0], p->z[n] = p->z[0], p->tag[n] = p->tag[0];
    cq_rect_cut(p, dist, edge, inc_face, *spare);
    *cur = *spare, *spare = p;
}

/* cq__clip_emit for the clipped polygon: the same points, each written and
 * kept by moving the count. The reference face is B's when ref_is_b: the
 * points are then put on it, and the features turned A's half first. */
static int cq_rect_emit(const cq_clip_frame *fr, const cq_rect_poly *p, double skin, bool ref_is_b,
                        cq_contact_point out[CQ_CLIP_MAX])
{
    int m = 0;
    for (int k = 0; k < p->n; k++) {
        cq_vec3 at = cq_mad(cq_mad(fr->origin, fr->u, p->x[k]), fr->v, p->y[k]);
        out[m] = (cq_contact_point){ref_is_b ? at : cq_mad(at, fr->n, p->z[k]), -p->z[k],
                                    cq_rect_feature(p->tag[k], ref_is_b)};
        m += !(p->z[k] > skin);
    }
    return m;
}

void cq__box_clip_setup(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, cq_box_clip_in *in)
{
    int k = ref_id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    in->hu = cq_half_at(ref, u), in->hv = cq_half_at(ref, v);
    in->fr = (cq_clip_frame){cq_mad(ref->center, ref->axes.c[k], ((ref_id & 1) ? -1 : 1) * cq_half_at(ref, k)),
                             ref->axes.c[u], ref->axes.c[v], cq_scale(ref->axes.c[k], (ref_id & 1) ? -1 : 1)};
    cq_vec3 c, du, dv;
    cq_face_span(inc, inc_id, &c, &du, &dv);
    c = cq_sub(c, in->fr.origin);
    /* The incident quad straight in frame coordinates: 9 dots, not 12. */
    const cq_clip_frame *fr = &in->fr;
    in->cf = cq_v3(cq_dot(c, fr->u), cq_dot(c, fr->v), cq_dot(c, fr->n));
    in->uf = cq_v3(cq_dot(du, fr->u), cq_dot(du, fr->v), cq_dot(du, fr->n));
    in->vf = cq_v3(cq_dot(dv, fr->u), cq_dot(dv, fr->v), cq_dot(dv, fr->n));
    in->ref_id = ref_id, in->inc_id = inc_id;
}

/* Axis m of the seen box, coordinate c, in the reference box's frame. */
static inline double cq_seen_axis(const cq_box_seen *s, int c, int m) { return s->ax[c * s->sc + m * s->sm]; }

int cq__box_face_toward_seen(const cq_box_seen *s, int k, double sign)
{
    int best = 0;
    double best_dot = -INFINITY;
    /* As cq__box_face_toward along -sign e_k, the dots read off the frame. */
    for (int m = 0; m < 3; m++) {
        double d = -sign * cq_seen_axis(s, k, m);
        int more = fabs(d) > best_dot;
        best += more * (cq_box_face_id(m, d) - best);
        best_dot = fabs(d) > best_dot ? fabs(d) : best_dot;
    }
    return best;
}

/* The next two axes after k, by table: (k + 1) % 3 is a division. */
static const int cq_next_axis[3] = {1, 2, 0}, cq_prev_axis[3] = {2, 0, 1};

void cq__box_clip_setup_seen(const cq_obb *ref, int ref_id, const cq_box_seen *inc, int inc_id, cq_box_clip_in *in)
{
    int k = ref_id >> 1, u = cq_next_axis[k], v = cq_prev_axis[k];
    double sk = 1 - 2 * (ref_id & 1), hk = cq_half_at(ref, k);
    in->hu = cq_half_at(ref, u), in->hv = cq_half_at(ref, v);
    in->fr = (cq_clip_frame){cq_mad(ref->center, ref->axes.c[k], sk * hk), ref->axes.c[u], ref->axes.c[v],
                             cq_scale(ref->axes.c[k], sk)};
    int j = inc_id >> 1, ju = cq_next_axis[j], jv = cq_prev_axis[j];
    double h[3];
    memcpy(h, &inc->half, sizeof h);
    /* The faces' sides by arithmetic, above too: which is a coin toss. */
    double hj = (1 - 2 * (inc_id & 1)) * h[j], hu = h[ju], hv = h[jv];
    /* The incident face's centre and half edges in the reference face's
     * coordinates (u, v, height above it), read off the seen axes. */
    const double *aj = inc->ax + j * inc->sm, *au = inc->ax + ju * inc->sm, *av = inc->ax + jv * inc->sm;
    int ou = u * inc->sc, ov = v * inc->sc, ok = k * inc->sc;
    in->cf = cq_v3(inc->c[u] + hj * aj[ou], inc->c[v] + hj * aj[ov], sk * (inc->c[k] + hj * aj[ok]) - hk);
    in->uf = cq_v3(hu * au[ou], hu * au[ov], sk * (hu * au[ok]));
    in->vf = cq_v3(hv * av[ou], hv * av[ov], sk * (hv * av[ok]));
    in->ref_id = ref_id, in->inc_id = inc_id;
}

int cq__box_clip_passes(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX])
{
    int ref_id = in->ref_id, inc_id = in->inc_id;
    cq_rect_poly poly[2], *cur = &poly[0], *spare = &poly[1];
    for (int m = 0; m < 4; m++) {
        cq_vec3 p = cq_mad(cq_mad(in->cf, in->uf, cq_su[m]), in->vf, cq_sv[m]);
        cur->x[m] = p.x, cur->y[m] = p.y, cur->z[m] = p.z;
        cur->tag[m] = cq_rect_tag(CQ_FEAT_FACE, CQ_FEAT_VERTEX, (unsigned)ref_id, cq__box_face_vid[inc_id][m],
                                  cq__box_face_eid[inc_id][m]);
    }
    cur->n = 4;
    /* The sides in cq_face_frame's order, +v -u -v +u. A pass that leaves
     * nothing (never here: the SAT found the faces overlapping) leaves the
     * later passes nothing to do, as cq__clip_polygon stops. */
    const uint16_t *edge = cq__box_face_eid[ref_id];
    double tol = cq_box_clip_tol(in);
    for (int side = 0; side < 4; side++)
        cq_rect_side(&cur, &spare, side, side & 1 ? in->hu : in->hv, tol, edge[side], (unsigned)inc_id);
    return cq_rect_emit(&in->fr, cur, skin, ref_is_b, out);
}

int cq__box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                     cq_contact_point out[CQ_CLIP_MAX])
{
    cq_box_clip_in in;
    cq__box_clip_setup(ref, ref_id, inc, inc_id, &in);
    return cq__box_clip_passes(&in, skin, ref_is_b, out);
}

int cq__box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                 cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[4];
    cq_face_frame(box, id, &fr, lines);
    return cq__clip_lines(&fr, lines, 4, (uint16_t)id, inc, skin, onto_ref, out);
}

/* The point center + sum of s_m h_m axis_m, summed in axis order. */
static inline cq_vec3 cq_box_point(const cq_obb *box, double s0, double s1, double s2)
{
    cq_vec3 p = cq_mad(box->center, box->axes.c[0], s0 * box->half.x);
    p = cq_mad(p, box->axes.c[1], s1 * box->half.y);
    return cq_mad(p, box->axes.c[2], s2 * box->half.z);
}

uint16_t cq__box_edge_toward(const cq_obb *box, int k, const cq_vec3 *dir, cq_vec3 *p, cq_vec3 *q)
{
    double sign[3] = {cq_sign_of(cq_dot(box->axes.c[0], *dir)), cq_sign_of(cq_dot(box->axes.c[1], *dir)),
                      cq_sign_of(cq_dot(box->axes.c[2], *dir))};
    sign[k] = 1;
    *p = cq_box_point(box, sign[0], sign[1], sign[2]);
    sign[k] = -1;
    *q = cq_box_point(box, sign[0], sign[1], sign[2]);
    return cq_box_edge_id(k, sign);
}
