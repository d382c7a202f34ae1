#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

double tu_uniform(tu_rng *rng, double lo, double hi)
{
    rng->state += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) * (1.0 / 9007199254740992.0));
}

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
