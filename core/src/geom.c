/* Closest-point primitives (stub, being written). */
#include "geom.h"

cq_vec3 cq_closest_on_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b, double *t)
{
    (void)p; (void)b;
    *t = 0;
    return a;
}

double cq_closest_segments(cq_vec3 p1, cq_vec3 q1, cq_vec3 p2, cq_vec3 q2,
                           double *s, double *t, cq_vec3 *c1, cq_vec3 *c2)
{
    (void)q1; (void)q2;
    *s = *t = 0;
    *c1 = p1;
    *c2 = p2;
    return cq_len2(cq_sub(p1, p2));
}

cq_vec3 cq_closest_on_triangle(cq_vec3 p, cq_vec3 a, cq_vec3 b, cq_vec3 c,
                               cq_tri_region *region, int *index)
{
    (void)p; (void)b; (void)c;
    *region = CQ_TRI_VERTEX;
    *index = 0;
    return a;
}
