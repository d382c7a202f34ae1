/* Internal: axis-aligned bounding boxes for the broadphase and the BVHs. */
#ifndef CQ_AABB_H
#define CQ_AABB_H

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

/* The world box of a posed shape: exact for spheres, capsules, boxes,
 * triangles and hulls (from their extreme points along each axis); a plane
 * is infinite except on the side its normal bounds when the normal is
 * axis-aligned. */
cq_aabb cq__shape_aabb(const cq_shape *shape, const cq_xform *pose);

#endif
