/* Closed forms (stub, being written). */
#include "narrow.h"

void cq_round_contact(cq_vec3 pa, cq_vec3 pb, double ra, double rb, const cq_pair_query *q, cq_contact *out)
{
    (void)pa; (void)pb; (void)ra; (void)rb; (void)q; (void)out;
}
void cq_sphere_sphere(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_sphere_capsule(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_capsule_capsule(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_sphere_box(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
void cq_sphere_triangle(const cq_pair_query *q, cq_contact *out) { (void)q; (void)out; }
