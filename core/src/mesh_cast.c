/* Rays and sweeps against a static mesh: the BVH walks the triangles in
 * the mesh's frame, nearer boxes first, and each candidate is cast as a
 * triangle shape; the nearest answer so far prunes every box behind it. */
#include "bvh.h"
#include "cq/mesh.h"
#include "cq/proxy.h"

typedef struct mesh_ray_ctx {
    const cq_mesh *m;
    const cq_xform *pose;
    cq_ray ray;
    cq_ray_hit *out;
    int best;
} mesh_ray_ctx;

static double mesh_ray_visit(void *ctx, int k, double tmax)
{
    mesh_ray_ctx *c = ctx;
    if (cq_len2(c->m->normals[k]) == 0)
        return tmax;
    cq_shape tri = cq_mesh_triangle(c->m, k);
    cq_ray r = c->ray;
    r.max_distance = tmax;
    cq_ray_hit h;
    if (cq_raycast(&tri, c->pose, &r, &h) != CQ_OK || !h.hit)
        return tmax;
    if (c->best < 0 || h.distance < c->out->distance || (h.distance == c->out->distance && k < c->best)) {
        *c->out = h;
        c->best = k;
    }
    return c->out->distance;
}

int cq_mesh_raycast(const cq_mesh *mesh, const cq_xform *pose, const cq_ray *ray, cq_ray_hit *out)
{
    *out = (cq_ray_hit){.hit = false};
    if (!cq_v3_finite(ray->origin) || !cq_v3_finite(ray->direction) || !cq_finite(ray->max_distance))
        return CQ_ENOT_FINITE;
    if (fabs(cq_len(ray->direction) - 1) > CQ_RAY_UNIT_TOL)
        return CQ_ENOT_UNIT;
    if (ray->max_distance < 0)
        return CQ_ENEGATIVE;
    mesh_ray_ctx c = {mesh, pose, *ray, out, -1};
    c.ray.direction = cq_scale(ray->direction, 1.0 / cq_len(ray->direction));
    cq_vec3 o = cq_xform_inv_point(pose, ray->origin), d = cq_mul_mtv(&pose->r, c.ray.direction);
    cq__bvh_query_ray(mesh->bvh, o, d, ray->max_distance, mesh_ray_visit, &c);
    return CQ_OK;
}

typedef struct mesh_sweep_ctx {
    const cq_mesh *m;
    const cq_shape *a;
    const cq_xform *xa, *xm;
    cq_vec3 v;
    const cq_sweep_options *opt;
    cq_sweep_hit *out;
    int best;
} mesh_sweep_ctx;

static double mesh_sweep_visit(void *ctx, int k, double tmax)
{
    mesh_sweep_ctx *c = ctx;
    if (cq_len2(c->m->normals[k]) == 0)
        return tmax;
    cq_shape tri = cq_mesh_triangle(c->m, k);
    cq_sweep_hit h;
    if (cq_sweep(c->a, c->xa, c->v, &tri, c->xm, c->opt, &h) != CQ_OK)
        return tmax;
    int iterations = c->out->iterations + h.iterations;
    bool fell_back = c->out->fell_back || h.fell_back;
    if (h.hit && (c->best < 0 || h.time < c->out->time || (h.time == c->out->time && k < c->best))) {
        *c->out = h;
        c->best = k;
    }
    c->out->iterations = iterations;
    c->out->fell_back = fell_back;
    return c->best < 0 ? tmax : c->out->time;
}

int cq_mesh_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 translation, const cq_mesh *mesh,
                  const cq_xform *xm, const cq_sweep_options *opt, cq_sweep_hit *out)
{
    cq_vec3 store[CQ_PROXY_STORAGE];
    cq_proxy pa;
    if (cq_shape_proxy(a, store, &pa) != CQ_OK)
        return CQ_EUNSUPPORTED;
    if (!cq_v3_finite(translation))
        return CQ_ENOT_FINITE;
    *out = (cq_sweep_hit){.time = 1};
    mesh_sweep_ctx c = {mesh, a, xa, xm, translation, opt, out, -1};
    cq_xform rel = cq_xform_relative(xm, xa);
    cq_aabb box = cq__shape_aabb(a, &rel);
    cq__bvh_query_sweep(mesh->bvh, &box, cq_mul_mtv(&xm->r, translation), 1, mesh_sweep_visit, &c);
    return CQ_OK;
}
