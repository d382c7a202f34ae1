/* Internal: box features (faces, edges) as world-space polygons with the
 * feature numbering of cq_feature (collision.h). */
#ifndef CQ_BOX_H
#define CQ_BOX_H

#include "manifold.h"

/* Face index of axis k on side s (s > 0 positive side). */
static inline int cq_box_face_id(int k, double s) { return 2 * k + (s < 0); }

/* Builds face `id` (2k + negative side) as a polygon, outward normal included. */
void cq_box_face(const cq_obb *box, int id, cq_face *out);

/* The face whose outward normal is most aligned with dir. */
int cq_box_face_toward(const cq_obb *box, cq_vec3 dir);

/* The edge parallel to axis k that lies farthest along dir: its end points
 * and feature index. */
uint16_t cq_box_edge_toward(const cq_obb *box, int k, cq_vec3 dir, cq_vec3 *p, cq_vec3 *q);

#endif
