/* Fuzz target: the core's queries on shapes and poses decoded from bytes
 * (core/include/cq/; docs/FUZZING.md).
 *
 * Numbers: a byte below 0xF0 is a small value ((b - 120) / 16: the sizes
 * and offsets real scenes have); 0xF0 and above is followed by a raw
 * double. Like the wire layer (proto/src/decode.c), a number that is not
 * finite or is beyond 1e50 in magnitude rejects the input. Then: two
 * shapes (type byte: sphere, capsule, box, triangle, convex of 1-16 points,
 * mesh of 1-8 vertices and 1-6 triangles, plane), two poses (position and
 * a quaternion, normalised as the wire layer does before the core checks
 * it), iteration caps, a ray and a translation. The core's validators
 * decide what is a shape; everything they accept goes through cq_collide,
 * GJK and EPA, cq_raycast and cq_sweep, and every answer must hold what
 * the headers promise: finite numbers, unit normals, distances and depths
 * not negative, times in [0, 1], iteration counts within their caps. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_TARGET "fuzz_geometry"
#include "fuzz_check.h"
#include "cq/collision.h"
#include "cq/gjk.h"
#include "cq/hull.h"
#include "cq/mesh.h"
#include "cq/proxy.h"
#include "cq/raycast.h"
#include "cq/shape.h"
#include "cq/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The wire layer's bound on every number (CQPD_NUMBER_MAX). */
#define WIRE_NUMBER_MAX 1e50
/* How far from 1 a normal's length may be. */
#define UNIT_TOL 1e-6
#define HULL_POINTS_MAX 16
#define MESH_VERTICES_MAX 8
#define MESH_TRIANGLES_MAX 6

/* The input as a stream of bytes and numbers; reading past its end gives
 * zeros, and a number the wire layer would refuse sets bad. */
typedef struct reader {
    const uint8_t *at, *end;
    int bad;
} reader;

static uint8_t byte(reader *r)
{
    return r->at < r->end ? *r->at++ : 0;
}

static double number(reader *r)
{
    uint8_t b = byte(r);
    if (b < 0xF0)
        return ((int)b - 120) / 16.0;
    uint8_t raw[8] = {0};
    for (int i = 0; i < 8; i++)
        raw[i] = byte(r);
    double x;
    memcpy(&x, raw, sizeof x);
    if (!isfinite(x) || fabs(x) > WIRE_NUMBER_MAX) {
        r->bad = 1;
        return 0;
    }
    return x;
}

static cq_vec3 vec(reader *r)
{
    double x = number(r), y = number(r);
    return cq_v3(x, y, number(r));
}

/* Everything a shape owns besides itself (a hull or a mesh). */
typedef struct owned {
    cq_hull *hull;
    cq_mesh *mesh;
} owned;

/* Decodes a shape; 0, or -1 when the builders or the validator refuse it. */
static int shape(reader *r, cq_shape *s, owned *o)
{
    memset(s, 0, sizeof *s);
    s->type = (cq_shape_type)(byte(r) % CQ_SHAPE_TYPE_COUNT);
    switch (s->type) {
    case CQ_SPHERE:
        s->sphere.radius = number(r);
        break;
    case CQ_CAPSULE:
        s->capsule.radius = number(r);
        s->capsule.half_height = number(r);
        break;
    case CQ_BOX:
        s->box.half = vec(r);
        break;
    case CQ_TRIANGLE:
        for (int i = 0; i < 3; i++)
            s->triangle.v[i] = vec(r);
        break;
    case CQ_CONVEX: {
        int n = 1 + byte(r) % HULL_POINTS_MAX;
        cq_vec3 pts[HULL_POINTS_MAX];
        for (int i = 0; i < n; i++)
            pts[i] = vec(r);
        double radius = number(r);
        if (r->bad || cq_hull_build(pts, n, radius, &o->hull) != CQ_OK)
            return -1;
        s->convex.hull = o->hull;
        break;
    }
    case CQ_MESH: {
        int nv = 1 + byte(r) % MESH_VERTICES_MAX, nt = 1 + byte(r) % MESH_TRIANGLES_MAX;
        cq_vec3 v[MESH_VERTICES_MAX];
        int t[MESH_TRIANGLES_MAX][3];
        for (int i = 0; i < nv; i++)
            v[i] = vec(r);
        for (int i = 0; i < nt; i++)
            for (int k = 0; k < 3; k++)
                t[i][k] = byte(r) % nv;
        if (r->bad || cq_mesh_build(v, nv, (const int(*)[3])t, nt, &o->mesh) != CQ_OK)
            return -1;
        s->mesh.mesh = o->mesh;
        break;
    }
    case CQ_PLANE: {
        // The wire layer takes a normal unit within 1e-4: offer unit ones.
        cq_vec3 n = vec(r);
        if (!cq_normalize(n, 1e-300, &n))
            n = cq_v3(0, 1, 0);
        s->plane.normal = n;
        s->plane.offset = number(r);
        break;
    }
    default:
        return -1;
    }
    return r->bad || cq_shape_validate(s).status != CQ_OK ? -1 : 0;
}

/* Decodes a pose; 0, or -1 when cq_pose_from_quat refuses it. */
static int pose(reader *r, cq_xform *x)
{
    cq_vec3 p = vec(r);
    cq_quat q = {number(r), number(r), number(r), number(r)};
    double len = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (len > 1e-150 && isfinite(len))
        q = (cq_quat){q.x / len, q.y / len, q.z / len, q.w / len};
    else
        q = (cq_quat){0, 0, 0, 1};
    return r->bad || cq_pose_from_quat(p, q, x).status != CQ_OK ? -1 : 0;
}

static int finite3(cq_vec3 v)
{
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

static void check_unit(cq_vec3 n, const char *what)
{
    check(finite3(n) && fabs(cq_len(n) - 1) <= UNIT_TOL, what);
}

/* Runs cq_collide (skipping distances when skip, as batch contacts do) and
 * checks its contact; -1 when the pair is unsupported, else its overlap
 * verdict. */
static int run_collide(const cq_shape *a, const cq_xform *xa, const cq_shape *b, const cq_xform *xb, double skin,
                       int gjk_cap, int epa_cap, bool skip)
{
    cq_pair_query q = {.a = a, .xa = *xa, .b = b, .xb = *xb, .skin = skin,
                       .gjk_max_iterations = gjk_cap, .epa_max_iterations = epa_cap, .skip_distance = skip};
    cq_contact c;
    if (cq_collide(&q, &c) != CQ_OK)
        return -1;
    check(isfinite(c.distance) && c.distance >= 0, "collide: distance negative or not finite");
    check(isfinite(c.depth) && c.depth >= 0, "collide: depth negative or not finite");
    if (c.has_normal)
        check_unit(c.normal, "collide: normal not unit");
    else
        check(finite3(c.normal), "collide: normal not finite");
    if (c.has_distance)
        check(finite3(c.witness_a) && finite3(c.witness_b), "collide: witness not finite");
    check(c.point_count >= 0 && c.point_count <= CQ_MAX_POINTS, "collide: point count out of range");
    for (int i = 0; i < c.point_count; i++)
        check(finite3(c.points[i].position) && isfinite(c.points[i].depth), "collide: contact point not finite");
    check(isfinite(c.sat_gap), "collide: SAT gap not finite");
    check(c.sat_axis >= -1 && c.sat_axis < CQ_SAT_AXIS_COUNT, "collide: SAT axis out of range");
    return c.overlap;
}

/* skip_manifold leaves out the points and changes nothing else, bit for bit. */
static void run_skip_manifold(const cq_shape *a, const cq_xform *xa, const cq_shape *b, const cq_xform *xb,
                              double skin, int gjk_cap, int epa_cap)
{
    cq_pair_query q = {.a = a, .xa = *xa, .b = b, .xb = *xb, .skin = skin,
                       .gjk_max_iterations = gjk_cap, .epa_max_iterations = epa_cap};
    cq_contact full, lean;
    if (cq_collide(&q, &full) != CQ_OK)
        return;
    q.skip_manifold = true;
    check(cq_collide(&q, &lean) == CQ_OK, "collide: skip_manifold refused a pair");
    check(lean.point_count == 0, "collide: skip_manifold kept points");
    check(lean.overlap == full.overlap && lean.has_normal == full.has_normal &&
              lean.has_distance == full.has_distance && lean.algorithm == full.algorithm &&
              lean.fallback_reason == full.fallback_reason && lean.fallback_action == full.fallback_action &&
              lean.sat_axis == full.sat_axis,
          "collide: skip_manifold changed the verdict, the path or the fallback");
    check(memcmp(&lean.distance, &full.distance, sizeof full.distance) == 0 &&
              memcmp(&lean.depth, &full.depth, sizeof full.depth) == 0 &&
              memcmp(&lean.normal, &full.normal, sizeof full.normal) == 0 &&
              memcmp(&lean.witness_a, &full.witness_a, sizeof full.witness_a) == 0 &&
              memcmp(&lean.witness_b, &full.witness_b, sizeof full.witness_b) == 0 &&
              memcmp(&lean.sat_gap, &full.sat_gap, sizeof full.sat_gap) == 0,
          "collide: skip_manifold changed a number");
}

static void run_gjk_epa(const cq_shape *a, const cq_xform *xa, const cq_shape *b, const cq_xform *xb, int gjk_cap,
                        int epa_cap)
{
    cq_vec3 sa[CQ_PROXY_STORAGE], sb[CQ_PROXY_STORAGE];
    cq_proxy pa, pb;
    if (cq_shape_proxy(a, sa, &pa) != CQ_OK || cq_shape_proxy(b, sb, &pb) != CQ_OK)
        return;
    cq_gjk_options go = {.max_iterations = gjk_cap};
    cq_gjk_result g = cq_gjk_distance(&pa, xa, &pb, xb, &go);
    int gjk_limit = gjk_cap > 0 ? gjk_cap : CQ_GJK_DEFAULT_MAX_ITERATIONS;
    check(g.iterations >= 0 && g.iterations <= gjk_limit, "gjk: iterations over the cap");
    check(isfinite(g.distance) && g.distance >= 0, "gjk: distance negative or not finite");
    check(finite3(g.point_a) && finite3(g.point_b), "gjk: witness not finite");
    if (g.has_normal)
        check_unit(g.normal, "gjk: normal not unit");
    check(g.simplex.count >= 0 && g.simplex.count <= 4, "gjk: simplex size out of range");
    cq_gjk_apply_radii(&g, &pa, &pb);
    check(isfinite(g.distance) && finite3(g.point_a) && finite3(g.point_b), "gjk radii: not finite");
    if (g.status == CQ_GJK_SEPARATED)
        return;

    cq_epa_options eo = {.max_iterations = epa_cap};
    cq_epa_result e = cq_epa_penetration(&pa, xa, &pb, xb, &g.simplex, &eo);
    int epa_limit = epa_cap > 0 ? epa_cap : CQ_EPA_DEFAULT_MAX_ITERATIONS;
    check(e.iterations >= 0 && e.iterations <= epa_limit, "epa: iterations over the cap");
    check(isfinite(e.depth) && finite3(e.point_a) && finite3(e.point_b), "epa: not finite");
    if (e.status == CQ_EPA_OK)
        check_unit(e.normal, "epa: normal not unit");
    cq_epa_apply_radii(&e, &pa, &pb);
    check(isfinite(e.depth) && finite3(e.point_a) && finite3(e.point_b), "epa radii: not finite");
}

static void run_raycast(const cq_shape *s, const cq_xform *x, cq_vec3 origin, cq_vec3 dir, double max_distance)
{
    if (!cq_normalize(dir, 1e-300, &dir))
        dir = cq_v3(1, 0, 0);
    cq_ray ray = {origin, dir, fabs(max_distance)};
    cq_ray_hit h;
    if (cq_raycast(s, x, &ray, &h) != CQ_OK || !h.hit)
        return;
    check(isfinite(h.distance) && h.distance >= 0 && h.distance <= ray.max_distance,
          "raycast: distance outside [0, max_distance]");
    check(finite3(h.point), "raycast: point not finite");
    check_unit(h.normal, "raycast: normal not unit");
}

static void run_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 translation, const cq_shape *b,
                      const cq_xform *xb, int cap)
{
    cq_sweep_options o = {.max_iterations = cap};
    cq_sweep_hit h;
    if (cq_sweep(a, xa, translation, b, xb, &o, &h) != CQ_OK)
        return;
    int limit = cap > 0 ? cap : CQ_SWEEP_DEFAULT_MAX_ITERATIONS;
    // A mesh sums the iterations of the triangles it sweeps (cq/mesh.h).
    if (b->type == CQ_MESH)
        limit *= b->mesh.mesh->triangle_count;
    check(h.iterations >= 0 && h.iterations <= limit, "sweep: iterations over the cap");
    check(isfinite(h.time) && h.time >= 0 && h.time <= 1, "sweep: time outside [0, 1]");
    check(finite3(h.point), "sweep: point not finite");
    if (h.hit && h.has_normal)
        check_unit(h.normal, "sweep: normal not unit");
    if (!h.hit)
        check(h.time == 1 && !h.initially_overlapping, "sweep: a miss that is not a whole translation");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, data + size, 0};
    cq_shape a, b;
    owned oa = {0}, ob = {0};
    cq_xform xa, xb;
    if (shape(&r, &a, &oa) == 0 && shape(&r, &b, &ob) == 0 && pose(&r, &xa) == 0 && pose(&r, &xb) == 0) {
        // Caps from 1 (the hardest on the loops' exits) to 64, or the default.
        uint8_t caps = byte(&r);
        int gjk_cap = caps & 0x0F ? (caps & 0x0F) * 4 : 0;
        int epa_cap = caps >> 4 ? (caps >> 4) * 4 : 0;
        double skin = fabs(number(&r));
        cq_vec3 origin = vec(&r), dir = vec(&r);
        double max_distance = number(&r);
        cq_vec3 translation = vec(&r);
        if (!r.bad) {
            // Swapped inputs give the mirrored result (cq/collision.h),
            // whatever the caps and scales: one pair is computed in one
            // order whichever way round it comes.
            int ab = run_collide(&a, &xa, &b, &xb, skin, gjk_cap, epa_cap, false);
            int ba = run_collide(&b, &xb, &a, &xa, skin, gjk_cap, epa_cap, false);
            check(ab == ba, "collide: swapping the shapes changed the verdict");
            // Skipping distances only ends a miss sooner (a gap past the
            // skin); what it calls touching, the full query does too.
            int skipped = run_collide(&a, &xa, &b, &xb, skin, gjk_cap, epa_cap, true);
            check(skipped != 1 || ab == 1, "collide: skip_distance found an overlap the full query did not");
            run_skip_manifold(&a, &xa, &b, &xb, skin, gjk_cap, epa_cap);
            run_gjk_epa(&a, &xa, &b, &xb, gjk_cap, epa_cap);
            run_raycast(&a, &xa, origin, dir, max_distance);
            run_raycast(&b, &xb, origin, dir, max_distance);
            run_sweep(&a, &xa, translation, &b, &xb, gjk_cap);
        }
    }
    cq_hull_free(oa.hull);
    cq_mesh_free(oa.mesh);
    cq_hull_free(ob.hull);
    cq_mesh_free(ob.mesh);
    return 0;
}
