/* Box features. Vertex ids set bit k when local coordinate k is negative;
 * an edge along axis k is 4k + the sign bits of the other two coordinates,
 * lower axis first. A face's corners go round (+u,+v) (-u,+v) (-u,-v)
 * (+u,-v) with u = k+1, v = k+2 (mod 3); edge m runs from corner m to m+1. */
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

/* A face as centre and two half-edge vectors (along u and v). */
static void cq_face_span(const cq_obb *box, int id, cq_vec3 *c, cq_vec3 *du, cq_vec3 *dv)
{
    int k = id / 2, u = (k + 1) % 3, v = (k + 2) % 3;
    *c = cq_mad(box->center, box->axes.c[k], ((id & 1) ? -1 : 1) * cq_comp(box->half, k));
    *du = cq_scale(box->axes.c[u], cq_comp(box->half, u));
    *dv = cq_scale(box->axes.c[v], cq_comp(box->half, v));
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
    for (int k = 0; k < 3; k++) {
        double d = cq_dot(box->axes.c[k], dir);
        if (fabs(d) > best_dot)
            best_dot = fabs(d), best = cq_box_face_id(k, d);
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

int cq_box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool onto_ref,
                    cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[4];
    cq_face_frame(ref, ref_id, &fr, lines);
    cq_vec3 c, du, dv;
    cq_face_span(inc, inc_id, &c, &du, &dv);
    c = cq_sub(c, fr.origin);
    /* The incident quad straight in frame coordinates: 9 dots, not 12. */
    cq_vec3 cf = cq_v3(cq_dot(c, fr.u), cq_dot(c, fr.v), cq_dot(c, fr.n));
    cq_vec3 uf = cq_v3(cq_dot(du, fr.u), cq_dot(du, fr.v), cq_dot(du, fr.n));
    cq_vec3 vf = cq_v3(cq_dot(dv, fr.u), cq_dot(dv, fr.v), cq_dot(dv, fr.n));
    cq_clip_vertex poly[2][CQ_CLIP_MAX];
    for (int m = 0; m < 4; m++) {
        cq_vec3 p = cq_mad(cq_mad(cf, uf, cq_su[m]), vf, cq_sv[m]);
        poly[0][m] = (cq_clip_vertex){p.x, p.y, p.z,
                                      {CQ_FEAT_FACE, CQ_FEAT_VERTEX, (uint16_t)ref_id, cq_face_vid[inc_id][m]},
                                      (int16_t)cq_face_eid[inc_id][m]};
    }
    return cq_clip_polygon(&fr, lines, 4, poly, 4, (uint16_t)inc_id, skin, onto_ref, out);
}

int cq_box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                cq_contact_point out[CQ_CLIP_MAX])
{
    cq_clip_frame fr;
    cq_clip_line lines[4];
    cq_face_frame(box, id, &fr, lines);
    return cq_clip_lines(&fr, lines, 4, (uint16_t)id, inc, skin, onto_ref, out);
}

static cq_vec3 cq_box_point(const cq_obb *box, const double sign[3])
{
    cq_vec3 p = box->center;
    for (int k = 0; k < 3; k++)
        p = cq_mad(p, box->axes.c[k], sign[k] * cq_comp(box->half, k));
    return p;
}

uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q)
{
    double sign[3];
    for (int m = 0; m < 3; m++)
        sign[m] = cq_dot(box->axes.c[m], dir) < 0 ? -1 : 1;
    sign[k] = 1;
    *p = cq_box_point(box, sign);
    sign[k] = -1;
    *q = cq_box_point(box, sign);
    return cq_edge_id(k, sign);
}
