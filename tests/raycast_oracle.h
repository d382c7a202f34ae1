/* Shared by the raycast suites (check_raycast.c, check_raycast_hull.c):
 * shape builders, a cast that checks every answer's invariants, and the
 * marching oracle, defined in raycast_oracle.c. */
#ifndef CQ_RAYCAST_ORACLE_H
#define CQ_RAYCAST_ORACLE_H

#include "cq/raycast.h"
#include "testutil.h"

#define TOL 1e-9   /* analytic answers */
#define EPS 1e-7   /* oracle shrink/grow band: rays within it of a surface are grazing */

static inline cq_shape sphere(double r) { return (cq_shape){.type = CQ_SPHERE, .sphere = {r}}; }
static inline cq_shape capsule(double r, double hh) { return (cq_shape){.type = CQ_CAPSULE, .capsule = {r, hh}}; }
static inline cq_shape box(double x, double y, double z) { return (cq_shape){.type = CQ_BOX, .box = {cq_v3(x, y, z)}}; }
static inline cq_shape tri(cq_vec3 a, cq_vec3 b, cq_vec3 c) { return (cq_shape){.type = CQ_TRIANGLE, .triangle = {{a, b, c}}}; }
static inline cq_shape plane(cq_vec3 n, double d) { return (cq_shape){.type = CQ_PLANE, .plane = {n, d}}; }
static inline cq_shape convex(const cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }

static inline cq_xform at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

static inline cq_vec3 unit(cq_vec3 v) { return cq_scale(v, 1.0 / cq_len(v)); }

static inline cq_vec3 rvec(tu_rng *rng, double r)
{
    return cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
}

cq_vec3 rdir(tu_rng *rng);
cq_hull *hull_of(const cq_vec3 *p, int n, double radius);

/* Casts and checks what holds for every answer: finite, distance within
 * [0, max], point on the ray, unit normal against the ray. */
cq_ray_hit cast(const cq_shape *s, cq_xform pose, cq_vec3 o, cq_vec3 d, double max);
void assert_hit(cq_ray_hit h, double dist, cq_vec3 normal);
void assert_inside(cq_ray_hit h, cq_vec3 o, cq_vec3 d);

/* A solid as the oracle sees it; pts/npts are a rounded hull's input points. */
typedef struct solid {
    cq_shape shape;
    cq_xform pose;
    const cq_vec3 *pts;
    int npts;
} solid;

typedef struct tally {
    int hits, misses, grazing;
} tally;

/* Random rays at a posed solid of bounding radius `size`: most aimed at a
 * point near it, some from inside (about its centre), lengths that cut
 * some hits short. */
tally random_rays(const solid *s, tu_rng *rng, double size, int count);
void assert_tally(tally tl, int count);

#endif
