/* Internal: the local-frame ray and answer shared by the closed forms
 * (raycast.c) and the hull casts (raycast_hull.c). */
#ifndef CQ_RAYCAST_LOCAL_H
#define CQ_RAYCAST_LOCAL_H

#include "cq/raycast.h"

/* A ray in a shape's local frame: d is unit, max >= 0. */
typedef struct cq_local_ray {
    cq_vec3 o, d;
    double max;
} cq_local_ray;

typedef enum cq_ray_outcome {
    CQ_RAY_MISS,
    CQ_RAY_ENTRY,  /* first entry at t with the local outward normal */
    CQ_RAY_INSIDE, /* the origin is in the closed solid: t = 0, normal -d */
} cq_ray_outcome;

typedef struct cq_local_hit {
    cq_ray_outcome outcome;
    double t;
    cq_vec3 normal; /* local, unit; set for CQ_RAY_ENTRY only */
} cq_local_hit;

static inline cq_local_hit cq_ray_miss(void) { return (cq_local_hit){CQ_RAY_MISS, 0, {0, 0, 0}}; }
static inline cq_local_hit cq_ray_inside(void) { return (cq_local_hit){CQ_RAY_INSIDE, 0, {0, 0, 0}}; }
static inline cq_local_hit cq_ray_entry(double t, cq_vec3 normal) { return (cq_local_hit){CQ_RAY_ENTRY, t, normal}; }

/* Any hull: face-plane clipping (solid, radius 0), the face of a flat
 * polygon (radius 0), GJK marching (radius > 0); bare points and segments
 * are missed. */
cq_local_hit cq__ray_hull(const cq_hull *hull, const cq_local_ray *ray);

/* The cast of a trusted ray (unit d) at any shape but a mesh, in its local
 * frame: cq_raycast without the checks, for the core's own callers. */
cq_local_hit cq__ray_local(const cq_shape *s, const cq_local_ray *ray);

#endif
