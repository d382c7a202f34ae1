/* Shared by the sweep suites (check_sweep.c, check_sweep_random.c): shape
 * builders, a sweep that checks every answer's invariants, and the oracles
 * of sweep_oracle.c, which never call GJK. */
#ifndef CQ_SWEEP_ORACLE_H
#define CQ_SWEEP_ORACLE_H

#include "cq/hull.h"
#include "cq/proxy.h"
#include "cq/sweep.h"
#include "testutil.h"

#define TARGET CQ_SWEEP_DEFAULT_TOLERANCE
#define BAND 1e-5 /* grazing band of the oracle gap: either verdict is fine */
#define SLACK 1e-9

/* ---- shapes and poses ---- */

static inline cq_shape sphere(double r) { return (cq_shape){.type = CQ_SPHERE, .sphere = {r}}; }
static inline cq_shape capsule(double r, double hh) { return (cq_shape){.type = CQ_CAPSULE, .capsule = {r, hh}}; }
static inline cq_shape box(cq_vec3 h) { return (cq_shape){.type = CQ_BOX, .box = {h}}; }
static inline cq_shape convex(const cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }
static inline cq_shape plane(cq_vec3 n, double d) { return (cq_shape){.type = CQ_PLANE, .plane = {n, d}}; }

static inline cq_shape triangle(cq_vec3 a, cq_vec3 b, cq_vec3 c)
{
    cq_shape s = {.type = CQ_TRIANGLE};
    s.triangle.v[0] = a;
    s.triangle.v[1] = b;
    s.triangle.v[2] = c;
    return s;
}

static inline cq_xform at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

static inline cq_vec3 rvec(tu_rng *rng, double r)
{
    return cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
}

static inline cq_vec3 unit(cq_vec3 v) { return cq_scale(v, 1.0 / cq_len(v)); }

cq_sweep_hit sweep_opt(const cq_shape *a, cq_xform xa, cq_vec3 v, const cq_shape *b, cq_xform xb,
                       const cq_sweep_options *opt);
cq_sweep_hit sweep(const cq_shape *a, cq_xform xa, cq_vec3 v, const cq_shape *b, cq_xform xb);

/* The smallest root of |d + t v| = R, d = c_a - c_b, or -1. */
double sphere_sphere_toi(cq_vec3 ca, cq_vec3 v, cq_vec3 cb, double rsum);

/* ---- the generic oracle: first root of a convex gap ---- */

typedef double (*gap_fn)(const void *ctx, double t);

typedef struct toi_oracle {
    double g0;   /* gap at t = 0 */
    double gmin; /* smallest gap over [0, 1] */
    double tmin; /* where */
    double toi;  /* first t with gap <= 0, or -1 */
} toi_oracle;

toi_oracle oracle(gap_fn g, const void *ctx);

/* Verdicts the oracle is sure of (outside the grazing band). */
typedef struct tally {
    int hits, misses, overlaps;
} tally;

/* The checks of a random case. For a hit at time t: g(t) <= distance(t) <=
 * TARGET; g convex with g(t*) = 0 and g(tmin) = gmin < 0 means its slope
 * before t* is at most gmin / (tmin - t*) <= gmin, so g(t) >= (t* - t)|gmin|
 * and t* - t <= TARGET / |gmin|. */
void check_time(const cq_sweep_hit *h, const toi_oracle *o, tally *n);
void check_tally(const tally *n, int min_each);

/* ---- oracle gaps ---- */

cq_vec3 clamp_box(cq_vec3 l, cq_vec3 h);
/* Distance from a world point to a posed box, by clamping in its frame. */
double point_box_dist(cq_vec3 p, cq_vec3 h, const cq_xform *x);

typedef struct sphere_box_ctx {
    cq_vec3 c, v; /* sphere centre at t = 0, translation */
    double r;     /* sphere radius (plus any rounding of the box) */
    cq_vec3 h;
    cq_xform xb;
} sphere_box_ctx;

double sphere_box_gap(const void *p, double t);

/* SAT over a fixed axis list: projections of A at t = 0 and of B, and the
 * speed of A's projection, per unit axis. */
#define MAX_AXES 1024
typedef struct sat_ctx {
    int n;
    double amin[MAX_AXES], amax[MAX_AXES], bmin[MAX_AXES], bmax[MAX_AXES], speed[MAX_AXES];
} sat_ctx;

double sat_gap(const void *p, double t);
/* Box-box: the 15 axes of the two frames. */
void sat_boxes(sat_ctx *s, const cq_obb *a, const cq_obb *b, cq_vec3 v);
/* Hulls: normals of every vertex triple of either set and crosses of every
 * pair of vertex pairs. */
void sat_points(sat_ctx *s, const cq_vec3 *pa, int na, const cq_vec3 *pb, int nb, cq_vec3 v);

double point_tri_dist(cq_vec3 p, const cq_vec3 t[3]);

typedef struct capsule_tri_ctx {
    cq_vec3 p, q, v; /* capsule segment at t = 0, translation */
    double r;
    cq_vec3 tri[3]; /* world */
} capsule_tri_ctx;

double capsule_tri_gap(const void *p, double t);

#endif
