/* Where a line along the contact normal meets a rounded shape's surface:
 * the manifold's points are measured on such lines, one point of each
 * shape, so that a point on B moved by its depth along the normal lands on
 * A. A core point moved by the radius along the normal lies on the
 * surface only where the normal is one of the core's normals there (a
 * capsule's lower end, not its upper one); the line's own crossing always
 * does. */
#include "narrow.h"
#include "raycast_local.h"

double cq__shape_extent(const cq_shape *s)
{
    switch (s->type) {
    case CQ_SPHERE:
        return s->sphere.radius;
    case CQ_CAPSULE:
        return s->capsule.half_height + s->capsule.radius;
    case CQ_BOX:
        return cq_len(s->box.half);
    case CQ_TRIANGLE:
        return cq_larger(cq_len(s->triangle.v[0]), cq_larger(cq_len(s->triangle.v[1]), cq_len(s->triangle.v[2])));
    case CQ_CONVEX: {
        const cq_hull *h = s->convex.hull;
        cq_vec3 lo = cq_vabs(h->aabb_min), hi = cq_vabs(h->aabb_max);
        return cq_len(cq_v3(cq_larger(lo.x, hi.x), cq_larger(lo.y, hi.y), cq_larger(lo.z, hi.z))) + h->radius;
    }
    case CQ_MESH:
    case CQ_PLANE:
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return 0;
}

bool cq__surface_on_line(const cq_shape *s, const cq_xform *x, cq_vec3 p, cq_vec3 dir, cq_vec3 *out)
{
    /* From beyond the whole shape, so the first crossing is the surface;
     * the shape's own cast, without cq_raycast's checks of a caller's ray. */
    double reach = 2 * (cq_len(cq_sub(p, x->p)) + cq__shape_extent(s)) + 1e-300;
    cq_vec3 from = cq_mad(p, dir, -reach);
    cq_local_ray ray = {cq_xform_inv_point(x, from), cq_mul_mtv(&x->r, dir), 2 * reach};
    cq_local_hit hit = s->type == CQ_MESH || s->type == CQ_PLANE ? cq_ray_miss() : cq__ray_local(s, &ray);
    if (hit.outcome != CQ_RAY_ENTRY || !(hit.t > 0))
        return false;
    *out = cq_mad(from, dir, hit.t);
    return true;
}
