#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

double tu_uniform(tu_rng *rng, double lo, double hi) { return gen_uniform(rng, lo, hi); }

cq_mat3 tu_axis_angle(cq_vec3 axis, double angle)
{
    double s = sin(angle / 2);
    cq_quat q = {axis.x * s, axis.y * s, axis.z * s, cos(angle / 2)};
    return cq_quat_to_mat3(q);
}

cq_mat3 tu_rotation(tu_rng *rng)
{
    /* Shoemake's uniform random quaternion. */
    double u1 = tu_uniform(rng, 0, 1), u2 = tu_uniform(rng, 0, 2 * CQ_PI), u3 = tu_uniform(rng, 0, 2 * CQ_PI);
    double a = sqrt(1 - u1), b = sqrt(u1);
    cq_quat q = {a * sin(u2), a * cos(u2), b * sin(u3), b * cos(u3)};
    return cq_quat_to_mat3(q);
}

cq_xform tu_pose(tu_rng *rng, double r)
{
    cq_xform x;
    x.p = cq_v3(tu_uniform(rng, -r, r), tu_uniform(rng, -r, r), tu_uniform(rng, -r, r));
    x.r = tu_rotation(rng);
    return x;
}

static int read_obb(FILE *f, cq_obb *o)
{
    double v[15];
    for (int i = 0; i < 15; i++)
        if (fscanf(f, "%lf", &v[i]) != 1)
            return 0;
    o->center = cq_v3(v[0], v[1], v[2]);
    o->half = cq_v3(v[3], v[4], v[5]);
    for (int k = 0; k < 3; k++)
        o->axes.c[k] = cq_v3(v[6 + 3 * k], v[7 + 3 * k], v[8 + 3 * k]);
    return 1;
}

int tu_read_pairs(cq_obb *a, cq_obb *b, int max)
{
    const char *path = getenv("CQ_PAIRS_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    int n = 0;
    while (n < max && read_obb(f, &a[n]) && read_obb(f, &b[n]))
        n++;
    fclose(f);
    return n;
}

void tu_obb_corners(const cq_obb *box, cq_vec3 out[8])
{
    for (int k = 0; k < 8; k++) {
        cq_vec3 p = box->center;
        p = cq_mad(p, box->axes.c[0], (k & 1) ? -box->half.x : box->half.x);
        p = cq_mad(p, box->axes.c[1], (k & 2) ? -box->half.y : box->half.y);
        p = cq_mad(p, box->axes.c[2], (k & 4) ? -box->half.z : box->half.z);
        out[k] = p;
    }
}

void tu_obb_interval(const cq_obb *o, cq_vec3 l, double *lo, double *hi)
{
    cq_vec3 c[8];
    tu_obb_corners(o, c);
    *lo = INFINITY, *hi = -INFINITY;
    for (int k = 0; k < 8; k++)
        *lo = fmin(*lo, cq_dot(c[k], l)), *hi = fmax(*hi, cq_dot(c[k], l));
}

cq_vec3 tu_obb_axis(const cq_obb *a, const cq_obb *b, int k)
{
    cq_vec3 l = k < 3 ? a->axes.c[k] : k < 6 ? b->axes.c[k - 3] : cq_cross(a->axes.c[(k - 6) / 3], b->axes.c[(k - 6) % 3]);
    return cq_len2(l) < 1e-12 ? cq_v3(NAN, NAN, NAN) : cq_scale(l, 1 / cq_len(l));
}

double tu_obb_axis_penetration(const cq_obb *a, const cq_obb *b, int k)
{
    cq_vec3 l = tu_obb_axis(a, b, k);
    if (isnan(l.x))
        return NAN;
    double alo, ahi, blo, bhi;
    tu_obb_interval(a, l, &alo, &ahi);
    tu_obb_interval(b, l, &blo, &bhi);
    return fmin(ahi - blo, bhi - alo);
}

double tu_obb_min_penetration(const cq_obb *a, const cq_obb *b)
{
    double best = INFINITY;
    for (int k = 0; k < 15; k++) {
        double p = tu_obb_axis_penetration(a, b, k);
        if (!isnan(p))
            best = fmin(best, p);
    }
    return best;
}

double tu_dist_point_segment(cq_vec3 p, cq_vec3 a, cq_vec3 b)
{
    cq_vec3 d = cq_sub(b, a);
    double t = cq_len2(d) > 0 ? cq_clamp(cq_dot(cq_sub(p, a), d) / cq_len2(d), 0, 1) : 0;
    return cq_len(cq_sub(p, cq_mad(a, d, t)));
}

double tu_dist_point_triangle(cq_vec3 p, const cq_vec3 t[3])
{
    cq_vec3 e0 = cq_sub(t[1], t[0]), e1 = cq_sub(t[2], t[0]), d = cq_sub(p, t[0]);
    double a = cq_dot(e0, e0), b = cq_dot(e0, e1), c = cq_dot(e1, e1), r0 = cq_dot(d, e0), r1 = cq_dot(d, e1);
    double det = a * c - b * b;
    if (det > 1e-20 * a * c) {
        double u = (c * r0 - b * r1) / det, v = (a * r1 - b * r0) / det;
        if (u >= 0 && v >= 0 && u + v <= 1)
            return cq_len(cq_sub(d, cq_add(cq_scale(e0, u), cq_scale(e1, v))));
    }
    double best = INFINITY;
    for (int k = 0; k < 3; k++)
        best = fmin(best, tu_dist_point_segment(p, t[k], t[(k + 1) % 3]));
    return best;
}

double tu_hull_tol(const cq_vec3 *p, int n)
{
    cq_vec3 lo = p[0], hi = p[0];
    double largest = 0, half = 0;
    for (int i = 0; i < n; i++) {
        lo = cq_v3(fmin(lo.x, p[i].x), fmin(lo.y, p[i].y), fmin(lo.z, p[i].z));
        hi = cq_v3(fmax(hi.x, p[i].x), fmax(hi.y, p[i].y), fmax(hi.z, p[i].z));
        largest = fmax(largest, fmax(fabs(p[i].x), fmax(fabs(p[i].y), fabs(p[i].z))));
    }
    for (int i = 0; i < n; i++) {
        half = fmax(half, fmax(fabs(p[i].x - 0.5 * (lo.x + hi.x)), fabs(p[i].y - 0.5 * (lo.y + hi.y))));
        half = fmax(half, fabs(p[i].z - 0.5 * (lo.z + hi.z)));
    }
    return 2e-6 * half + 64 * DBL_EPSILON * largest;
}
