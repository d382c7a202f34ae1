/* Plane pairs (stub, being written). */
#include "narrow.h"

void cq_sphere_plane(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_capsule_plane(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_box_plane(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_triangle_plane(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
