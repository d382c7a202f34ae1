/// @file cq/math.h
/// Double-precision vector, quaternion, rotation and rigid-transform helpers.
/// Everything here is inline and pure: no allocation, no state.
#ifndef CQ_MATH_H
#define CQ_MATH_H

#include <math.h>
#include <stdbool.h>

/// pi, spelled out because strict C11 headers need not define M_PI.
#define CQ_PI 3.14159265358979323846

/// A 3-vector of doubles.
typedef struct cq_vec3 {
    double x, y, z;
} cq_vec3;

/// A quaternion, glTF order (x, y, z, w).
typedef struct cq_quat {
    double x, y, z, w;
} cq_quat;

/// A 3x3 matrix stored by columns. For a rotation the columns are the local
/// unit axes expressed in world space.
typedef struct cq_mat3 {
    cq_vec3 c[3];
} cq_mat3;

/// A rigid transform: world = r * local + p.
typedef struct cq_xform {
    cq_vec3 p;
    cq_mat3 r;
} cq_xform;

/// Constructs a vector.
static inline cq_vec3 cq_v3(double x, double y, double z) { return (cq_vec3){x, y, z}; }
/// a + b.
static inline cq_vec3 cq_add(cq_vec3 a, cq_vec3 b) { return cq_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
/// a - b.
static inline cq_vec3 cq_sub(cq_vec3 a, cq_vec3 b) { return cq_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
/// s * a.
static inline cq_vec3 cq_scale(cq_vec3 a, double s) { return cq_v3(a.x * s, a.y * s, a.z * s); }
/// a + s * b, the common "point along direction" form.
static inline cq_vec3 cq_mad(cq_vec3 a, cq_vec3 b, double s) { return cq_v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z); }
/// -a.
static inline cq_vec3 cq_neg(cq_vec3 a) { return cq_v3(-a.x, -a.y, -a.z); }
/// Dot product.
static inline double cq_dot(cq_vec3 a, cq_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
/// Cross product.
static inline cq_vec3 cq_cross(cq_vec3 a, cq_vec3 b)
{
    return cq_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
/// Squared length.
static inline double cq_len2(cq_vec3 a) { return cq_dot(a, a); }
/// Length.
static inline double cq_len(cq_vec3 a) { return sqrt(cq_dot(a, a)); }
/// Component i (0, 1, 2) of a.
static inline double cq_comp(cq_vec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
/// Sets component i (0, 1, 2) of *v to x.
static inline void cq_set_comp(cq_vec3 *v, int i, double x)
{
    if (i == 0)
        v->x = x;
    else if (i == 1)
        v->y = x;
    else
        v->z = x;
}
/// Component-wise absolute value.
static inline cq_vec3 cq_vabs(cq_vec3 a) { return cq_v3(fabs(a.x), fabs(a.y), fabs(a.z)); }
/// The larger of a and b by one comparison (fmax is a library call; b when
/// either is NaN).
static inline double cq_larger(double a, double b) { return a > b ? a : b; }
/// The largest magnitude among a's components.
static inline double cq_max_abs(cq_vec3 a) { return cq_larger(fabs(a.x), cq_larger(fabs(a.y), fabs(a.z))); }
/// The largest coordinate magnitude of points p[0..n) (0 when n is 0).
static inline double cq_points_max_abs(const cq_vec3 *p, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = cq_larger(cq_max_abs(p[i]), m);
    return m;
}
/// Linear interpolation a + t (b - a).
static inline cq_vec3 cq_lerp(cq_vec3 a, cq_vec3 b, double t) { return cq_mad(a, cq_sub(b, a), t); }
/// Clamps x into [lo, hi].
static inline double cq_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/// Normalises a; returns false and leaves *out untouched when |a|^2 is below
/// tiny (so a caller never divides by a vanishing length).
static inline bool cq_normalize(cq_vec3 a, double tiny, cq_vec3 *out)
{
    double l2 = cq_len2(a);
    if (!(l2 > tiny))
        return false;
    *out = cq_scale(a, 1.0 / sqrt(l2));
    return true;
}

/// True when x is neither NaN nor infinite.
static inline bool cq_finite(double x) { return isfinite(x); }
/// True when every component is finite.
static inline bool cq_v3_finite(cq_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

/// The identity rotation.
static inline cq_mat3 cq_mat3_identity(void)
{
    return (cq_mat3){{cq_v3(1, 0, 0), cq_v3(0, 1, 0), cq_v3(0, 0, 1)}};
}
/// m * v.
static inline cq_vec3 cq_mul_mv(const cq_mat3 *m, cq_vec3 v)
{
    return cq_add(cq_add(cq_scale(m->c[0], v.x), cq_scale(m->c[1], v.y)), cq_scale(m->c[2], v.z));
}
/// transpose(m) * v: a world direction in the local frame.
static inline cq_vec3 cq_mul_mtv(const cq_mat3 *m, cq_vec3 v)
{
    return cq_v3(cq_dot(m->c[0], v), cq_dot(m->c[1], v), cq_dot(m->c[2], v));
}
/// a * b.
static inline cq_mat3 cq_mul_mm(const cq_mat3 *a, const cq_mat3 *b)
{
    return (cq_mat3){{cq_mul_mv(a, b->c[0]), cq_mul_mv(a, b->c[1]), cq_mul_mv(a, b->c[2])}};
}
/// transpose(a) * b: b's axes seen in a's frame.
static inline cq_mat3 cq_mul_mtm(const cq_mat3 *a, const cq_mat3 *b)
{
    return (cq_mat3){{cq_mul_mtv(a, b->c[0]), cq_mul_mtv(a, b->c[1]), cq_mul_mtv(a, b->c[2])}};
}
/// Determinant.
static inline double cq_det(const cq_mat3 *m) { return cq_dot(m->c[0], cq_cross(m->c[1], m->c[2])); }

/// The rotation of a unit quaternion (the caller normalises).
static inline cq_mat3 cq_quat_to_mat3(cq_quat q)
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    return (cq_mat3){{
        cq_v3(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)),
        cq_v3(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)),
        cq_v3(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)),
    }};
}

/// The identity transform.
static inline cq_xform cq_xform_identity(void) { return (cq_xform){cq_v3(0, 0, 0), cq_mat3_identity()}; }
/// A local point in world space.
static inline cq_vec3 cq_xform_point(const cq_xform *x, cq_vec3 p) { return cq_add(x->p, cq_mul_mv(&x->r, p)); }
/// A world point in the local frame.
static inline cq_vec3 cq_xform_inv_point(const cq_xform *x, cq_vec3 p) { return cq_mul_mtv(&x->r, cq_sub(p, x->p)); }
/// b expressed in a's frame: inverse(a) * b.
static inline cq_xform cq_xform_relative(const cq_xform *a, const cq_xform *b)
{
    return (cq_xform){cq_xform_inv_point(a, b->p), cq_mul_mtm(&a->r, &b->r)};
}

#endif
