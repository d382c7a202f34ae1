/* Ray casts against hulls in their local frame: face-plane clipping for
 * sharp solids, the face of a sharp flat polygon, and for any hull with a
 * rounding radius a march on GJK point-to-core distances. */
#include "cq/gjk.h"
#include "raycast_local.h"

/* Cyrus-Beck: the ray's parameter interval [0, max] clipped by every face's
 * half-space. A face the ray runs parallel to keeps all or nothing, by the
 * origin's side. The last face to raise the entry is the one entered. */
static cq_local_hit ray_solid(const cq_hull *h, const cq_local_ray *ray)
{
    double enter = 0, leave = ray->max;
    int entry = -1;
    for (int i = 0; i < h->face_count; i++) {
        const cq_hull_face *f = &h->faces[i];
        double denom = cq_dot(f->normal, ray->d);
        double room = f->offset - cq_dot(f->normal, ray->o); /* >= 0: origin behind the face */
        if (denom == 0) {
            if (room < 0)
                return cq_ray_miss();
            continue;
        }
        double t = room / denom;
        if (denom < 0 && t > enter) {
            enter = t;
            entry = i;
        } else if (denom > 0 && t < leave) {
            leave = t;
        }
        if (enter > leave)
            return cq_ray_miss();
    }
    /* No face entered at t > 0 and none left before 0: the origin is behind every face. */
    return entry < 0 ? cq_ray_inside() : cq_ray_entry(enter, h->faces[entry].normal);
}

/* A flat polygon is a double-sided sheet: the plane of face 0, then the
 * point against every rim edge of its loop (counter-clockwise about face
 * 0's normal), which is the triangle fan's test for a convex polygon. */
static cq_local_hit ray_polygon(const cq_hull *h, const cq_local_ray *ray)
{
    const cq_hull_face *f = &h->faces[0];
    double denom = cq_dot(f->normal, ray->d);
    if (!(fabs(denom) > CQ_RAY_EDGE_ON))
        return cq_ray_miss();
    double t = (f->offset - cq_dot(f->normal, ray->o)) / denom;
    if (t < 0 || t > ray->max)
        return cq_ray_miss();
    cq_vec3 p = cq_mad(ray->o, ray->d, t);
    const uint16_t *loop = h->face_vertices + f->first;
    for (int k = 0; k < f->count; k++) {
        cq_vec3 a = h->vertices[loop[k]], b = h->vertices[loop[(k + 1) % f->count]];
        if (cq_dot(cq_cross(cq_sub(b, a), cq_sub(p, a)), f->normal) < 0)
            return cq_ray_miss();
    }
    return cq_ray_entry(t, denom < 0 ? f->normal : cq_neg(f->normal));
}

/* The march's stopping distance: CQ_RAY_GJK_TOLERANCE of the hull's scale,
 * which also bounds the rounding noise of the GJK distances. */
static double ray_hull_tolerance(const cq_hull *h)
{
    cq_vec3 lo = cq_vabs(h->aabb_min), hi = cq_vabs(h->aabb_max);
    double extent = fmax(fmax(fmax(lo.x, lo.y), fmax(lo.z, hi.x)), fmax(hi.y, hi.z));
    return CQ_RAY_GJK_TOLERANCE * (h->radius + extent);
}

/* Rounded hull (radius > 0, any dim). f(t), the distance from the ray point
 * to the rounded surface, is convex in t with slope -dot(d, n) (n: unit,
 * from the point toward the core), so:
 * - the Newton step t += f / dot(d, n) lands at or before the first root,
 *   since a convex f lies above its tangent: the march never tunnels
 *   through, and is at least as long as plain conservative advancement;
 * - once dot(d, n) <= 0, f can only grow: a miss.
 * A GJK answer without a normal means the point is on the core, deep in
 * the rounding; the normal then comes from the previous step. At GJK's own
 * iteration limit (CQ_RAY_GJK_MAX_ITERATIONS support points, far more than
 * a point against a hull needs) its distance is only an upper bound; it is
 * used as it is, so such a step could pass the surface by GJK's residual. */
static cq_local_hit ray_rounded(const cq_hull *h, const cq_local_ray *ray)
{
    cq_vec3 x = ray->o;
    cq_proxy point = {&x, 1, 0}, core = {h->vertices, h->vertex_count, 0};
    cq_xform id = cq_xform_identity();
    cq_simplex_cache warm = {0};
    cq_gjk_options opt = {.max_iterations = CQ_RAY_GJK_MAX_ITERATIONS, .cache = &warm};
    double tol = ray_hull_tolerance(h);
    double t = 0;
    cq_vec3 toward = cq_neg(ray->d);
    for (int it = 0; it < CQ_RAY_GJK_MAX_ITERATIONS; it++) {
        x = cq_mad(ray->o, ray->d, t);
        cq_gjk_result g = cq_gjk_distance(&point, &id, &core, &id, &opt);
        double f = g.has_normal ? g.distance - h->radius : -h->radius;
        if (g.has_normal)
            toward = g.normal;
        if (f <= tol)
            return t == 0 ? cq_ray_inside() : cq_ray_entry(t, cq_neg(toward));
        double closing = cq_dot(ray->d, toward);
        if (!(closing > 0) || t >= ray->max)
            return cq_ray_miss();
        /* A step past max means the root is past it too, up to rounding: look at max once. */
        t = fmin(t + f / closing, ray->max);
    }
    return cq_ray_miss();
}

cq_local_hit cq__ray_hull(const cq_hull *h, const cq_local_ray *ray)
{
    if (h->radius > 0)
        return ray_rounded(h, ray);
    if (h->dim == 3)
        return ray_solid(h, ray);
    if (h->dim == 2)
        return ray_polygon(h, ray);
    return cq_ray_miss(); /* a bare point or segment has no area to hit */
}
