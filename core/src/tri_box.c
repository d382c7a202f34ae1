#include "narrow.h"

bool cq_triangle_box_overlap(const cq_vec3 tri[3], const cq_obb *box)
{
    (void)tri;
    (void)box;
    return false;
}

void cq_box_triangle(const cq_pair_query *q, cq_contact *out)
{
    (void)q;
    (void)out;
}
