/* cq-gen's records. Each value comes from its own gen_uniform draw, in the
 * order the formats list them (the draw order is part of the format: it
 * decides every later number), and the arithmetic is spelt out operation by
 * operation, so the files stay byte-identical to the ones the benchmark
 * figures in docs/PERFORMANCE.md were measured on. */
#include "gen.h"

#include <math.h>

#include "splitmix.h"

#define GEN_PI 3.14159265358979323846

/* Record layouts: offsets of each field in one line's numbers. */
enum { BOX_CENTRE = 0, BOX_HALF = 3, BOX_AXES = 6, BOX_LEN = 15 };
enum { SCENE_CENTRE = 0, SCENE_HALF = 3, SCENE_QUAT = 6, SCENE_VEL = 10, SCENE_LEN = 13 };
enum { RAY_ORIGIN = 0, RAY_DIR = 3, RAY_REACH = 6, RAY_LEN = 7 };

static const double pair_centre = 2, pair_half_lo = 0.2, pair_half_hi = 2;
static const double scene_size = 0.25, scene_speed = 3, scene_dt = 1.0 / 60.0;

typedef struct angles {
    double yaw, pitch, roll;
} angles;

static void draw_n(gen_rng *rng, double *v, int n, double lo, double hi)
{
    for (int i = 0; i < n; i++)
        v[i] = gen_uniform(rng, lo, hi);
}

/* Pitch spans half a turn only: with yaw and roll over a full turn that
 * already reaches every rotation. */
static angles draw_angles(gen_rng *rng)
{
    angles a;
    a.yaw = gen_uniform(rng, -GEN_PI, GEN_PI);
    a.pitch = gen_uniform(rng, -GEN_PI / 2, GEN_PI / 2);
    a.roll = gen_uniform(rng, -GEN_PI, GEN_PI);
    return a;
}

/* The columns of Rz(yaw) Ry(pitch) Rx(roll), expanded. */
static void axes_of(angles a, double ax[9])
{
    double cy = cos(a.yaw), sy = sin(a.yaw), cp = cos(a.pitch), sp = sin(a.pitch);
    double cr = cos(a.roll), sr = sin(a.roll);
    ax[0] = cy * cp;
    ax[1] = sy * cp;
    ax[2] = -sp;
    ax[3] = cy * sp * sr - sy * cr;
    ax[4] = sy * sp * sr + cy * cr;
    ax[5] = cp * sr;
    ax[6] = cy * sp * cr + sy * sr;
    ax[7] = sy * sp * cr - cy * sr;
    ax[8] = cp * cr;
}

/* The same rotation as a quaternion (x, y, z, w): the product of the three
 * half-angle quaternions, expanded. */
static void quat_of(angles a, double q[4])
{
    double cy = cos(a.yaw / 2), sy = sin(a.yaw / 2), cp = cos(a.pitch / 2), sp = sin(a.pitch / 2);
    double cr = cos(a.roll / 2), sr = sin(a.roll / 2);
    q[0] = sr * cp * cy - cr * sp * sy;
    q[1] = cr * sp * cy + sr * cp * sy;
    q[2] = cr * cp * sy - sr * sp * cy;
    q[3] = cr * cp * cy + sr * sp * sy;
}

/* 17 significant digits: every double reads back as itself. */
static void put_line(FILE *out, const double *v, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(out, i ? " %.17g" : "%.17g", v[i]);
    fputc('\n', out);
}

static void draw_box(gen_rng *rng, double box[BOX_LEN])
{
    draw_n(rng, box + BOX_CENTRE, 3, -pair_centre, pair_centre);
    draw_n(rng, box + BOX_HALF, 3, pair_half_lo, pair_half_hi);
    axes_of(draw_angles(rng), box + BOX_AXES);
}

int gen_pairs(FILE *out, long n, uint64_t seed)
{
    gen_rng rng = {seed};
    double pair[2 * BOX_LEN];
    for (long i = 0; i < n; i++) {
        draw_box(&rng, pair);
        draw_box(&rng, pair + BOX_LEN);
        put_line(out, pair, 2 * BOX_LEN);
    }
    return ferror(out) ? -1 : 0;
}

/* pow rather than cbrt: the benchmark's files were made with n ** (1/3),
 * which rounds 1/3 first (n = 1000 gives 19.999999999999996, not 20). */
double gen_scene_half(long n) { return 2.0 * pow((double)n, 1.0 / 3.0); }

/* A scene box's half extents are a pair box's, quartered. */
static void draw_scene_box(gen_rng *rng, double half, double box[SCENE_LEN])
{
    for (int k = 0; k < 3; k++)
        box[SCENE_HALF + k] = gen_uniform(rng, pair_half_lo, pair_half_hi) * scene_size;
    quat_of(draw_angles(rng), box + SCENE_QUAT);
    draw_n(rng, box + SCENE_CENTRE, 3, -half, half);
    draw_n(rng, box + SCENE_VEL, 3, -scene_speed, scene_speed);
}

int gen_scene(FILE *out, long n, uint64_t seed)
{
    gen_rng rng = {seed};
    double half = gen_scene_half(n), box[SCENE_LEN];
    fprintf(out, "%.17g %.17g\n", half, scene_dt);
    for (long i = 0; i < n; i++) {
        draw_scene_box(&rng, half, box);
        put_line(out, box, SCENE_LEN);
    }
    return ferror(out) ? -1 : 0;
}

/* Dividing by the length (not multiplying by its inverse) and summing the
 * squares in x, y, z order keep the reference's rounding. */
static void normalise(double d[3])
{
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len == 0)
        return;
    for (int k = 0; k < 3; k++)
        d[k] /= len;
}

int gen_rays(FILE *out, long n, uint64_t seed, double half)
{
    gen_rng rng = {seed};
    double ray[RAY_LEN];
    for (long i = 0; i < n; i++) {
        draw_n(&rng, ray + RAY_ORIGIN, 3, -half, half);
        draw_n(&rng, ray + RAY_DIR, 3, -1, 1);
        normalise(ray + RAY_DIR);
        ray[RAY_REACH] = 0.5 * half;
        put_line(out, ray, RAY_LEN);
    }
    return ferror(out) ? -1 : 0;
}
