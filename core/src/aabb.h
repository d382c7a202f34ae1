/* Internal: axis-aligned bounding boxes for the broadphase and the BVHs. */
#ifndef CQ_AABB_H
#define CQ_AABB_H

#include <math.h>

#include "cq/shape.h"

/* An axis-aligned box; an infinite extent (a plane) is +-INFINITY, never NaN. */
typedef struct cq_aabb {
    cq_vec3 min, max;
} cq_aabb;

/* Whether two boxes overlap (touching counts). */
static inline bool cq_aabb_overlap(const cq_aabb *a, const cq_aabb *b)
{
    return a->min.x <= b->max.x && b->min.x <= a->max.x && a->min.y <= b->max.y && b->min.y <= a->max.y &&
           a->min.z <= b->max.z && b->min.z <= a->max.z;
}

/* cq_aabb_overlap with every comparison made and and-ed, without a branch:
 * for loops where which comparison fails is unpredictable. */
static inline bool cq_aabb_overlap_flat(const cq_aabb *a, const cq_aabb *b)
{
    return (a->min.x <= b->max.x) & (b->min.x <= a->max.x) & (a->min.y <= b->max.y) & (b->min.y <= a->max.y) &
           (a->min.z <= b->max.z) & (b->min.z <= a->max.z);
}

/* The smallest box holding both. */
static inline cq_aabb cq_aabb_union(cq_aabb a, cq_aabb b)
{
    return (cq_aabb){cq_v3(a.min.x < b.min.x ? a.min.x : b.min.x, a.min.y < b.min.y ? a.min.y : b.min.y,
                           a.min.z < b.min.z ? a.min.z : b.min.z),
                     cq_v3(a.max.x > b.max.x ? a.max.x : b.max.x, a.max.y > b.max.y ? a.max.y : b.max.y,
                           a.max.z > b.max.z ? a.max.z : b.max.z)};
}

/* The box grown by r on every side. */
static inline cq_aabb cq_aabb_fatten(cq_aabb a, double r)
{
    return (cq_aabb){cq_sub(a.min, cq_v3(r, r, r)), cq_add(a.max, cq_v3(r, r, r))};
}

/* The box of a local-frame box (centre c, half h) under pose x; inline,
 * so that a caller computing many (the pair cap's check of a batch of
 * moves) reads it from registers: returned through memory, each was
 * stored in 8-byte halves and read back in 16, which stalls. */
static inline cq_aabb cq_aabb_of_obb(const cq_xform *x, cq_vec3 c, cq_vec3 h)
{
    cq_vec3 centre = cq_xform_point(x, c), e;
    const cq_mat3 *r = &x->r;
    e.x = fabs(r->c[0].x) * h.x + fabs(r->c[1].x) * h.y + fabs(r->c[2].x) * h.z;
    e.y = fabs(r->c[0].y) * h.x + fabs(r->c[1].y) * h.y + fabs(r->c[2].y) * h.z;
    e.z = fabs(r->c[0].z) * h.x + fabs(r->c[1].z) * h.y + fabs(r->c[2].z) * h.z;
    return (cq_aabb){cq_sub(centre, e), cq_add(centre, e)};
}

/* The world box of a posed shape: exact for spheres, capsules, boxes,
 * triangles and hulls (from their extreme points along each axis); a plane
 * is infinite except on the side its normal bounds when the normal is
 * axis-aligned. */
cq_aabb cq__shape_aabb(const cq_shape *shape, const cq_xform *pose);

#endif
