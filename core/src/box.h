/* Internal: box features (faces, edges) and box-face clipping, with the
 * feature numbering of cq_feature (collision.h). */
#ifndef CQ_BOX_H
#define CQ_BOX_H

#include "manifold.h"

/* Face index of axis k on side s (s >= 0 positive side). */
static inline int cq_box_face_id(int k, double s) { return 2 * k + (s < 0); }

/* Builds face `id` (2k + negative side) as a world-space polygon. */
void cq_box_face(const cq_obb *box, int id, cq_face *out);

/* The face whose outward normal is most aligned with dir. */
int cq_box_face_toward(const cq_obb *box, cq_vec3 dir);

/* Clips face inc_id of box inc against face ref_id of box ref (the sides are
 * axis-aligned lines in the reference face's frame, and the incident quad is
 * built straight in that frame). Output as cq_clip_polygon. */
int cq_box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool onto_ref,
                    cq_contact_point out[CQ_CLIP_MAX]);

/* Clips a world-space polygon against face `id` of the box. */
int cq_box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                cq_contact_point out[CQ_CLIP_MAX]);

/* The edge parallel to axis k that lies farthest along dir: its end points
 * and feature index. */
uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q);

#endif
