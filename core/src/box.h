/* Internal: box features (faces, edges) and box-face clipping, with the
 * feature numbering of cq_feature (collision.h). */
#ifndef CQ_BOX_H
#define CQ_BOX_H

#include "manifold.h"

/* -1 where d < 0, else 1, looked up: which it is is unpredictable, and
 * compilers turn a select between two constants into a branch. */
static inline double cq_sign_of(double d)
{
    static const double sign[2] = {1, -1};
    return sign[d < 0];
}

/* Face index of axis k on side s (s >= 0 positive side). */
static inline int cq_box_face_id(int k, double s) { return 2 * k + (s < 0); }

/* Builds face `id` (2k + negative side) as a world-space polygon. */
void cq_box_face(const cq_obb *box, int id, cq_face *out);

/* Drops a box face's coincident corners (a zero-size box's): the segment
 * or point it collapses to, whose normal is then dir. */
void cq_box_face_compact(cq_face *f, cq_vec3 dir);

/* The face whose outward normal is most aligned with dir. */
int cq_box_face_toward(const cq_obb *box, cq_vec3 dir);

/* Clips face inc_id of box inc against face ref_id of box ref (the sides are
 * axis-aligned lines in the reference face's frame, and the incident quad is
 * built straight in that frame): the points of cq_clip_polygon, on the
 * incident face, features with the reference half first. When the
 * reference is B's face (ref_is_b) the points are projected onto it instead
 * and the features have A's half first, as a contact wants them. */
int cq_box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                    cq_contact_point out[CQ_CLIP_MAX]);

/* Clips a world-space polygon against face `id` of the box with the
 * generic clipper (cq_clip_lines): the reference cq_box_clip_box is tested
 * against. */
int cq_box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                cq_contact_point out[CQ_CLIP_MAX]);

/* The edge parallel to axis k that lies farthest along dir: its end points
 * and feature index. */
uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q);

#endif
