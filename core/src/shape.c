/* Validators for shapes and poses (API.md section 1). They return the
 * first fault with the field it is in, so the wire layer can point at it. */
#include <stddef.h>

#include "cq/shape.h"

static cq_fault cq_ok(void) { return (cq_fault){CQ_OK, NULL, -1, -1}; }

static cq_fault cq_bad(int status, const char *field, int index, int sub)
{
    return (cq_fault){status, field, index, sub};
}

/* A size: finite and >= 0. */
static cq_fault cq_check_size(double v, const char *field, int index)
{
    if (!cq_finite(v))
        return cq_bad(CQ_ENOT_FINITE, field, index, -1);
    if (v < 0)
        return cq_bad(CQ_ENEGATIVE, field, index, -1);
    return cq_ok();
}

static cq_fault cq_check_vec(cq_vec3 v, const char *field, int index)
{
    for (int k = 0; k < 3; k++)
        if (!cq_finite(cq_comp(v, k)))
            return index < 0 ? cq_bad(CQ_ENOT_FINITE, field, k, -1)
                             : cq_bad(CQ_ENOT_FINITE, field, index, k);
    return cq_ok();
}

cq_fault cq_shape_validate(cq_shape *s)
{
    cq_fault f = cq_ok();
    switch (s->type) {
    case CQ_SPHERE:
        return cq_check_size(s->sphere.radius, "radius", -1);
    case CQ_CAPSULE:
        f = cq_check_size(s->capsule.radius, "radius", -1);
        return f.status ? f : cq_check_size(s->capsule.half_height, "half_height", -1);
    case CQ_BOX:
        for (int k = 0; k < 3 && !f.status; k++)
            f = cq_check_size(cq_comp(s->box.half, k), "half_extents", k);
        return f;
    case CQ_TRIANGLE:
        for (int k = 0; k < 3 && !f.status; k++)
            f = cq_check_vec(s->triangle.v[k], "vertices", k);
        return f;
    case CQ_PLANE:
        f = cq_check_vec(s->plane.normal, "normal", -1);
        if (f.status)
            return f;
        if (!cq_finite(s->plane.offset))
            return cq_bad(CQ_ENOT_FINITE, "offset", -1, -1);
        if (fabs(cq_len(s->plane.normal) - 1) > CQ_NORMAL_TOL)
            return cq_bad(CQ_ENOT_UNIT, "normal", -1, -1);
        s->plane.normal = cq_scale(s->plane.normal, 1 / cq_len(s->plane.normal));
        return f;
    case CQ_CONVEX:
        return s->convex.hull ? f : cq_bad(CQ_ERANGE, "points", -1, -1);
    case CQ_MESH:
        return s->mesh.mesh ? f : cq_bad(CQ_ERANGE, "triangles", -1, -1);
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return cq_bad(CQ_ERANGE, "type", -1, -1);
}

cq_fault cq_pose_from_quat(cq_vec3 position, cq_quat q, cq_xform *out)
{
    cq_fault f = cq_check_vec(position, "position", -1);
    if (f.status)
        return f;
    double v[4] = {q.x, q.y, q.z, q.w};
    for (int k = 0; k < 4; k++)
        if (!cq_finite(v[k]))
            return cq_bad(CQ_ENOT_FINITE, "rotation", k, -1);
    double len = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (!(fabs(len - 1) <= CQ_QUAT_UNIT_TOL))
        return cq_bad(CQ_ENOT_UNIT, "rotation", -1, -1);
    q = (cq_quat){q.x / len, q.y / len, q.z / len, q.w / len};
    out->p = position;
    out->r = cq_quat_to_mat3(q);
    return f;
}

/* The rotation nearest to m (its polar factor), by the iteration
 * R <- (R + R^-T) / 2, which converges quadratically from an almost
 * orthonormal start: axes accepted within CQ_AXIS_TOL become an exact
 * rotation, so every later formula may assume R^T R = I. */
static cq_mat3 cq_orthonormalize(cq_mat3 r)
{
    for (int it = 0; it < 8; it++) {
        double det = cq_det(&r);
        cq_mat3 inv_t = {{cq_scale(cq_cross(r.c[1], r.c[2]), 1 / det), cq_scale(cq_cross(r.c[2], r.c[0]), 1 / det),
                          cq_scale(cq_cross(r.c[0], r.c[1]), 1 / det)}};
        double change = 0;
        for (int k = 0; k < 3; k++) {
            cq_vec3 next = cq_scale(cq_add(r.c[k], inv_t.c[k]), 0.5);
            change = fmax(change, cq_len2(cq_sub(next, r.c[k])));
            r.c[k] = next;
        }
        if (change < 1e-32)
            break;
    }
    return r;
}

cq_fault cq_pose_from_axes(cq_vec3 position, const cq_vec3 axes[3], cq_xform *out)
{
    cq_fault f = cq_check_vec(position, "position", -1);
    for (int k = 0; k < 3 && !f.status; k++)
        f = cq_check_vec(axes[k], "axes", k);
    if (f.status)
        return f;
    for (int k = 0; k < 3; k++)
        if (!(fabs(cq_len(axes[k]) - 1) <= CQ_AXIS_TOL))
            return cq_bad(CQ_ENOT_UNIT, "axes", k, -1);
    for (int k = 0; k < 3; k++)
        if (!(fabs(cq_dot(axes[k], axes[(k + 1) % 3])) <= CQ_AXIS_TOL))
            return cq_bad(CQ_ENOT_ORTHOGONAL, "axes", (k + 1) % 3, -1);
    cq_mat3 r = {{axes[0], axes[1], axes[2]}};
    if (!(cq_det(&r) > 0))
        return cq_bad(CQ_EMIRROR, "axes", -1, -1);
    out->p = position;
    out->r = cq_orthonormalize(r);
    return f;
}
