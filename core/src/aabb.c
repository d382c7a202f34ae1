/* World boxes of posed shapes, from each shape's extreme points along the
 * world axes: |R| times the half extents for boxes, the segment's ends
 * plus the radius for capsules, the points themselves for triangles and
 * hulls. */
#include "aabb.h"
#include "cq/mesh.h"

static cq_aabb cq_aabb_of_points(const cq_xform *x, const cq_vec3 *p, int n, double r)
{
    cq_vec3 w = cq_xform_point(x, p[0]);
    cq_aabb a = {w, w};
    for (int k = 1; k < n; k++) {
        w = cq_xform_point(x, p[k]);
        a = cq_aabb_union(a, (cq_aabb){w, w});
    }
    return cq_aabb_fatten(a, r);
}

/* A half-space dot(n, x) <= d is bounded only along an axis its normal is
 * parallel to. */
static cq_aabb cq_aabb_of_plane(const cq_shape *s, const cq_xform *x)
{
    cq_vec3 n = cq_mul_mv(&x->r, s->plane.normal);
    double d = s->plane.offset + cq_dot(n, x->p);
    cq_aabb a = {cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, INFINITY)};
    for (int k = 0; k < 3; k++) {
        double c = cq_comp(n, k);
        bool aligned = fabs(c) == 1 && cq_len2(n) - c * c == 0;
        if (!aligned)
            continue;
        if (c > 0)
            cq_set_comp(&a.max, k, d);
        else
            cq_set_comp(&a.min, k, -d);
    }
    return a;
}

cq_aabb cq__shape_aabb(const cq_shape *s, const cq_xform *x)
{
    switch (s->type) {
    case CQ_SPHERE:
        return cq_aabb_fatten((cq_aabb){x->p, x->p}, s->sphere.radius);
    case CQ_CAPSULE: {
        const cq_vec3 ends[2] = {cq_v3(0, -s->capsule.half_height, 0), cq_v3(0, s->capsule.half_height, 0)};
        return cq_aabb_of_points(x, ends, 2, s->capsule.radius);
    }
    case CQ_BOX:
        return cq_aabb_of_obb(x, cq_v3(0, 0, 0), s->box.half);
    case CQ_TRIANGLE:
        return cq_aabb_of_points(x, s->triangle.v, 3, 0);
    case CQ_CONVEX:
        return cq_aabb_of_points(x, s->convex.hull->vertices, s->convex.hull->vertex_count, s->convex.hull->radius);
    case CQ_MESH: {
        const cq_mesh *m = s->mesh.mesh;
        cq_vec3 c = cq_scale(cq_add(m->aabb_min, m->aabb_max), 0.5), h = cq_scale(cq_sub(m->aabb_max, m->aabb_min), 0.5);
        return cq_aabb_of_obb(x, c, h);
    }
    case CQ_PLANE:
        return cq_aabb_of_plane(s, x);
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return (cq_aabb){cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, INFINITY)};
}
