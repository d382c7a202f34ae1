#include "narrow.h"

bool cq_triangle_triangle_overlap(const cq_vec3 a[3], const cq_vec3 b[3])
{
    (void)a;
    (void)b;
    return false;
}

void cq_triangle_triangle(const cq_pair_query *q, cq_contact *out)
{
    (void)q;
    (void)out;
}
