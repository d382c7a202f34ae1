/* Ray casts: checking the ray, moving it into the shape's local frame, the
 * closed forms (sphere, capsule, box, triangle, plane) and the way back to
 * world space. Hulls are in raycast_hull.c. Every local cast first decides
 * whether the origin is inside the closed solid, so the entry formulas
 * below only ever see origins outside it. */
#include "cq/mesh.h"
#include "raycast_local.h"

/* Sphere of radius r about centre. The discriminant is r^2 - |f - b d|^2 rather
 * than b^2 - c: b^2 and c are both ~|f|^2, so their difference loses every
 * digit for a small sphere far away (Ray Tracing Gems, ch. 7). The nearer
 * root is c / q with q = -b + sqrt(disc), which never cancels. */
static cq_local_hit ray_sphere_at(cq_vec3 centre, double r, const cq_local_ray *ray)
{
    cq_vec3 f = cq_sub(ray->o, centre);
    double c = cq_len2(f) - r * r;
    if (c <= 0)
        return cq_ray_inside();
    double b = cq_dot(f, ray->d);
    if (b >= 0 || r <= 0)
        return cq_ray_miss(); /* heading away, or a bare point */
    double disc = r * r - cq_len2(cq_mad(f, ray->d, -b));
    if (disc < 0)
        return cq_ray_miss();
    double t = c / (-b + sqrt(disc));
    cq_vec3 n; /* (hit - centre) has length r: it only fails to normalise if r^2 underflows */
    if (t > ray->max || !cq_normalize(cq_mad(f, ray->d, t), 0, &n))
        return cq_ray_miss();
    return cq_ray_entry(t, n);
}

/* Capsule: segment (0, +-h, 0) inflated by r. The capsule lies inside the
 * infinite cylinder of radius r about Y, so a ray that never enters that
 * cylinder misses; one that enters it beside the segment hits the side;
 * otherwise (entering beyond an end, or starting in the cylinder beyond an
 * end, which covers rays parallel to the axis) only the end sphere on that
 * side can be reached first, through the disc that caps the side. */
static cq_local_hit ray_capsule(double r, double h, const cq_local_ray *ray)
{
    cq_vec3 o = ray->o, d = ray->d;
    double beyond = fmax(fabs(o.y) - h, 0);
    double c = o.x * o.x + o.z * o.z - r * r;
    if (c + beyond * beyond <= 0)
        return cq_ray_inside();
    if (r <= 0)
        return cq_ray_miss(); /* a bare segment */
    double cap = o.y > 0 ? h : -h;
    if (c > 0) {
        /* Same stable form as the sphere, in the XZ plane: b^2 - a c = a r^2 - (o x d)^2. */
        double a = d.x * d.x + d.z * d.z, b = o.x * d.x + o.z * d.z;
        double cross = o.x * d.z - o.z * d.x;
        double disc = a * r * r - cross * cross;
        if (b >= 0 || disc < 0)
            return cq_ray_miss(); /* never enters the cylinder (parallel rays have b = 0) */
        double t = c / (-b + sqrt(disc));
        double y = o.y + t * d.y;
        if (fabs(y) <= h) {
            cq_vec3 n;
            if (t > ray->max || !cq_normalize(cq_v3(o.x + t * d.x, 0, o.z + t * d.z), 0, &n))
                return cq_ray_miss();
            return cq_ray_entry(t, n);
        }
        cap = y > 0 ? h : -h;
    }
    return ray_sphere_at(cq_v3(0, cap, 0), r, ray);
}

/* Box: the slab method. A slab the ray runs parallel to is all or nothing,
 * decided by the origin's coordinate, so no 0 * inf or 0 / 0 arises. An
 * origin outside lies beyond some slab it must cross forwards, so the entry
 * is >= 0 (rounding never flips the sign of that slab's h - |o|). Ties between
 * entry faces (edges, corners) go to the lowest axis. */
static cq_local_hit ray_box(cq_vec3 half, const cq_local_ray *ray)
{
    double enter = -INFINITY, leave = INFINITY;
    int axis = 0;
    bool inside = true;
    for (int i = 0; i < 3; i++) {
        double o = cq_comp(ray->o, i), d = cq_comp(ray->d, i), h = cq_comp(half, i);
        inside = inside && fabs(o) <= h;
        if (d == 0) {
            if (fabs(o) > h)
                return cq_ray_miss();
            continue;
        }
        double t1 = (-h - o) / d, t2 = (h - o) / d;
        double near = fmin(t1, t2), far = fmax(t1, t2);
        if (near > enter) {
            enter = near;
            axis = i;
        }
        leave = fmin(leave, far);
    }
    if (inside)
        return cq_ray_inside();
    if (enter > leave || leave < 0 || enter > ray->max)
        return cq_ray_miss();
    double s = cq_comp(ray->d, axis) > 0 ? -1 : 1;
    cq_vec3 n = axis == 0 ? cq_v3(s, 0, 0) : (axis == 1 ? cq_v3(0, s, 0) : cq_v3(0, 0, s));
    return cq_ray_entry(enter, n);
}

/* Triangle: Moller-Trumbore, double-sided. det = -dot(d, n) with
 * n = e1 x e2, so one relative test rejects both edge-on rays and
 * zero-area triangles (n = 0). */
static cq_local_hit ray_triangle(const cq_vec3 v[3], const cq_local_ray *ray)
{
    cq_vec3 e1 = cq_sub(v[1], v[0]), e2 = cq_sub(v[2], v[0]);
    cq_vec3 n = cq_cross(e1, e2);
    cq_vec3 p = cq_cross(ray->d, e2);
    double det = cq_dot(e1, p);
    if (!(fabs(det) > CQ_RAY_EDGE_ON * cq_len(n)))
        return cq_ray_miss();
    double inv = 1.0 / det;
    cq_vec3 s = cq_sub(ray->o, v[0]);
    double u = cq_dot(s, p) * inv;
    if (u < 0 || u > 1)
        return cq_ray_miss();
    cq_vec3 q = cq_cross(s, e1);
    double w = cq_dot(ray->d, q) * inv;
    if (w < 0 || u + w > 1)
        return cq_ray_miss();
    double t = cq_dot(e2, q) * inv;
    if (t < 0 || t > ray->max || !cq_normalize(n, 0, &n))
        return cq_ray_miss();
    return cq_ray_entry(t, det > 0 ? n : cq_neg(n)); /* face the origin's side */
}

/* Plane: the solid half-space dot(n, x) <= offset. */
static cq_local_hit ray_plane(cq_vec3 n, double offset, const cq_local_ray *ray)
{
    double above = cq_dot(n, ray->o) - offset;
    if (above <= 0)
        return cq_ray_inside();
    double closing = -cq_dot(n, ray->d);
    if (closing <= 0)
        return cq_ray_miss();
    double t = above / closing;
    return t > ray->max ? cq_ray_miss() : cq_ray_entry(t, n);
}

cq_local_hit cq__ray_local(const cq_shape *s, const cq_local_ray *ray)
{
    switch (s->type) {
    case CQ_SPHERE:
        return ray_sphere_at(cq_v3(0, 0, 0), s->sphere.radius, ray);
    case CQ_CAPSULE:
        return ray_capsule(s->capsule.radius, s->capsule.half_height, ray);
    case CQ_BOX:
        return ray_box(s->box.half, ray);
    case CQ_TRIANGLE:
        return ray_triangle(s->triangle.v, ray);
    case CQ_PLANE:
        return ray_plane(s->plane.normal, s->plane.offset, ray);
    case CQ_CONVEX:
        return cq__ray_hull(s->convex.hull, ray);
    case CQ_MESH: /* cast in world space by cq_mesh_raycast */
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return cq_ray_miss();
}

static int ray_check(const cq_shape *shape, const cq_ray *ray)
{
    if (!cq_v3_finite(ray->origin) || !cq_v3_finite(ray->direction) || !cq_finite(ray->max_distance))
        return CQ_ENOT_FINITE;
    if (fabs(cq_len(ray->direction) - 1) > CQ_RAY_UNIT_TOL)
        return CQ_ENOT_UNIT;
    if (ray->max_distance < 0)
        return CQ_ENEGATIVE;
    if ((unsigned)shape->type >= CQ_SHAPE_TYPE_COUNT || (shape->type == CQ_CONVEX && !shape->convex.hull) ||
        (shape->type == CQ_MESH && !shape->mesh.mesh))
        return CQ_ERANGE;
    return CQ_OK;
}

int cq_raycast(const cq_shape *shape, const cq_xform *pose, const cq_ray *ray, cq_ray_hit *out)
{
    *out = (cq_ray_hit){.hit = false};
    int status = ray_check(shape, ray);
    if (status != CQ_OK)
        return status;
    if (shape->type == CQ_MESH)
        return cq_mesh_raycast(shape->mesh.mesh, pose, ray, out);
    cq_vec3 d = cq_scale(ray->direction, 1.0 / cq_len(ray->direction));
    cq_local_ray local = {cq_xform_inv_point(pose, ray->origin), cq_mul_mtv(&pose->r, d), ray->max_distance};
    cq_local_hit h = cq__ray_local(shape, &local);
    if (h.outcome == CQ_RAY_MISS)
        return CQ_OK;
    out->hit = true;
    out->distance = h.t;
    out->point = h.outcome == CQ_RAY_INSIDE ? ray->origin : cq_mad(ray->origin, d, h.t);
    out->normal = h.outcome == CQ_RAY_INSIDE ? cq_neg(d) : cq_mul_mv(&pose->r, h.normal);
    return CQ_OK;
}
