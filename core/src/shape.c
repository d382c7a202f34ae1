/* Validators for shapes and poses (API.md section 1). They return the
 * first fault with the field it is in, so the wire layer can point at it. */

/* Poses' bits must not depend on the compiler's contraction of products
 * and sums into fused multiply-adds (pose_many.c's lanes and these agree
 * bit for bit, the inline helpers of cq/math.h included); gcc's -std=c11
 * makes none. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include <stddef.h>

#include "cq/shape.h"
#include "pose.h"

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

/* v, or v normalised when it is more than CQ_EXACT_TOL from unit length.
 * A fixed point: v / |v| has |v|^2 within about 6 ulps of 1 (|v|^2, its
 * root, the reciprocal and each product round once: under 5 ulps on the
 * squared length, plus under 2 ulps for computing it again here), so a
 * normalised vector comes back unchanged. */
static cq_vec3 cq_exact_unit(cq_vec3 v)
{
    double len2 = cq_len2(v);
    return fabs(len2 - 1) <= CQ_EXACT_TOL ? v : cq_scale(v, 1 / sqrt(len2));
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
        s->plane.normal = cq_exact_unit(s->plane.normal);
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

/* 1 when |x - target| is within CQ_EXACT_TOL, else 0 (for NaN too): an
 * int, to be and-ed. */
static inline int cq_within_exact(double x, double target) { return fabs(x - target) <= CQ_EXACT_TOL; }

/* True when r's columns are unit and orthogonal within CQ_EXACT_TOL. The
 * six tests are written out and and-ed, not looped over with an exit at
 * the first that fails: so the compiler keeps them in registers without a
 * branch, and the test costs a pose a few nanoseconds where it cost
 * about 10. */
static inline bool cq_exact_rotation(const cq_mat3 *r)
{
    const cq_vec3 *c = r->c;
    return (cq_within_exact(cq_dot(c[0], c[0]), 1) & cq_within_exact(cq_dot(c[0], c[1]), 0) &
            cq_within_exact(cq_dot(c[0], c[2]), 0) & cq_within_exact(cq_dot(c[1], c[1]), 1) &
            cq_within_exact(cq_dot(c[1], c[2]), 0) & cq_within_exact(cq_dot(c[2], c[2]), 1)) != 0;
}

/* Polar steps bound: axes within CQ_AXIS_TOL start at a residual under
 * 3e-4, which every step about squares, so four reach rounding; the rest
 * is margin. */
#define CQ_POLAR_STEPS 8

/* The rotation nearest to r (its polar factor), by the iteration
 * R <- (R + R^-T) / 2, which converges quadratically from an almost
 * orthonormal start. It stops as soon as R is exact (cq_exact_rotation),
 * before the first step when r already is: so every result is exact, and
 * a result fed back comes out bit for bit. Every later formula may assume
 * R^T R = I. */
static cq_mat3 cq_orthonormalize(cq_mat3 r)
{
    for (int it = 0; it < CQ_POLAR_STEPS && !cq_exact_rotation(&r); it++) {
        double det = cq_det(&r);
        cq_mat3 inv_t = {{cq_scale(cq_cross(r.c[1], r.c[2]), 1 / det), cq_scale(cq_cross(r.c[2], r.c[0]), 1 / det),
                          cq_scale(cq_cross(r.c[0], r.c[1]), 1 / det)}};
        for (int k = 0; k < 3; k++)
            r.c[k] = cq_scale(cq_add(r.c[k], inv_t.c[k]), 0.5);
    }
    return r;
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
    /* Polished like axes, so the pose a world exports as axes (API.md
     * keeps no quaternion) imports again bit for bit. A unit quaternion's
     * matrix is almost always exact already: that test is made here, in
     * line, and the polar steps (which would make it first and return r
     * unchanged when it holds) are called only when it fails. */
    cq_mat3 r = cq_quat_to_mat3(q);
    out->r = cq_exact_rotation(&r) ? r : cq_orthonormalize(r);
    return f;
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
