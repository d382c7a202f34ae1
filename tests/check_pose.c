/* Poses from quaternions, bit for bit: cq_pose_from_quat and
 * cq_poses_from_quats (vector lanes) against the formula the pose's bits
 * were fixed by, written out here as it stood before either was made
 * faster (normalise by division, the matrix of the unit quaternion, then
 * polar steps until every column is unit and orthogonal within 16 ulps,
 * tested first). What a world exports as axes and imports again depends
 * on those bits (check_exact.c), so they may not move by one ulp: the
 * faults must match too, field and element. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cq/shape.h"
#include "testutil.h"

Suite *pose_suite(void);

/* ---- the reference ---- */

#define REF_TOL (16 * DBL_EPSILON)

static bool ref_exact(const cq_mat3 *r)
{
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            if (!(fabs(r->c[i].x * r->c[j].x + r->c[i].y * r->c[j].y + r->c[i].z * r->c[j].z - (i == j)) <= REF_TOL))
                return false;
    return true;
}

static cq_vec3 ref_cross_over(cq_vec3 a, cq_vec3 b, double det)
{
    cq_vec3 c = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
    double s = 1 / det;
    return (cq_vec3){c.x * s, c.y * s, c.z * s};
}

static cq_mat3 ref_polar(cq_mat3 r)
{
    for (int it = 0; it < 8 && !ref_exact(&r); it++) {
        cq_vec3 c12 = {r.c[1].y * r.c[2].z - r.c[1].z * r.c[2].y, r.c[1].z * r.c[2].x - r.c[1].x * r.c[2].z,
                       r.c[1].x * r.c[2].y - r.c[1].y * r.c[2].x};
        double det = r.c[0].x * c12.x + r.c[0].y * c12.y + r.c[0].z * c12.z;
        cq_mat3 inv_t = {{ref_cross_over(r.c[1], r.c[2], det), ref_cross_over(r.c[2], r.c[0], det),
                          ref_cross_over(r.c[0], r.c[1], det)}};
        for (int k = 0; k < 3; k++)
            r.c[k] = (cq_vec3){(r.c[k].x + inv_t.c[k].x) * 0.5, (r.c[k].y + inv_t.c[k].y) * 0.5,
                               (r.c[k].z + inv_t.c[k].z) * 0.5};
    }
    return r;
}

static cq_fault ref_fault(int status, const char *field, int index) { return (cq_fault){status, field, index, -1}; }

static cq_fault ref_pose(cq_vec3 p, cq_quat q, cq_xform *out)
{
    double pv[3] = {p.x, p.y, p.z}, v[4] = {q.x, q.y, q.z, q.w};
    for (int k = 0; k < 3; k++)
        if (!isfinite(pv[k]))
            return ref_fault(CQ_ENOT_FINITE, "position", k);
    for (int k = 0; k < 4; k++)
        if (!isfinite(v[k]))
            return ref_fault(CQ_ENOT_FINITE, "rotation", k);
    double len = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (!(fabs(len - 1) <= 1e-3))
        return ref_fault(CQ_ENOT_UNIT, "rotation", -1);
    double x = q.x / len, y = q.y / len, z = q.z / len, w = q.w / len;
    cq_mat3 r = {{{1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)},
                  {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)},
                  {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)}}};
    out->p = p;
    out->r = ref_polar(r);
    return ref_fault(CQ_OK, NULL, -1);
}

/* ---- inputs ---- */

#define POSES 4096

/* A unit quaternion (random axis and angle) scaled by len. */
static cq_quat random_quat(tu_rng *rng, double len)
{
    double z = tu_uniform(rng, -1, 1), phi = tu_uniform(rng, 0, 2 * CQ_PI), s = sqrt(1 - z * z);
    double half = tu_uniform(rng, -CQ_PI, CQ_PI), sh = sin(half) * len;
    return (cq_quat){s * cos(phi) * sh, s * sin(phi) * sh, z * sh, cos(half) * len};
}

/* Quaternions a client may send: unit to rounding, off by up to the
 * tolerance, components of very different sizes, signed zeros, half
 * turns, float32 values widened, lengths at and past the tolerance, and
 * every kind of fault. Kind k of the list below. */
static cq_quat edge_quat(tu_rng *rng, int k)
{
    double t = tu_uniform(rng, -1, 1), f = (double)(float)tu_uniform(rng, 0, 1);
    switch (k) {
    case 0: return (cq_quat){0, 0, 0, 1};
    case 1: return (cq_quat){-0.0, 0, -0.0, -1};
    case 2: return (cq_quat){t, 0, 0, sqrt(1 - t * t)};
    case 3: return (cq_quat){0, t, sqrt(1 - t * t), 0};
    case 4: return (cq_quat){1e-300, -1e-310, 5e-324, 1};
    case 5: return (cq_quat){1e-9 * t, 1e-12, -1e-15, 1 + 9.99e-4};
    case 6: return random_quat(rng, 1 + 1e-3);
    case 7: return random_quat(rng, 1 - 1e-3);
    case 8: return random_quat(rng, 1 + 1.0001e-3);
    case 9: return (cq_quat){(float)t, (float)(f * 0.5), (float)(f * 0.25), (float)sqrt(fabs(1 - t * t - f * f * 0.3125))};
    case 10: return (cq_quat){0.5, 0.5, 0.5, 0.5};
    case 11: return (cq_quat){NAN, 0, 0, 1};
    case 12: return (cq_quat){0, 0, INFINITY, 1};
    case 13: return (cq_quat){0, 0, 0, -INFINITY};
    case 14: return (cq_quat){1e200, 0, 0, 1};
    case 15: return (cq_quat){0, 0, 0, 0};
    case 16: return (cq_quat){0.7, 0.7, 0.7, 0.7};
    default: return random_quat(rng, 1 + tu_uniform(rng, -9.99e-4, 9.99e-4));
    }
}

#define EDGE_KINDS 18

static cq_vec3 edge_position(tu_rng *rng, int k)
{
    switch (k) {
    case 0: return cq_v3(NAN, 0, 0);
    case 1: return cq_v3(0, 0, -INFINITY);
    case 2: return cq_v3(-0.0, 1e308, -5e-324);
    default: return cq_v3(tu_uniform(rng, -1e3, 1e3), tu_uniform(rng, -1, 1), tu_uniform(rng, -1e6, 1e6));
    }
}

/* n inputs: random unit quaternions off by up to the tolerance, and with
 * `edges` set, one in four an edge case and one in 64 a bad position. */
static void fill(tu_rng *rng, cq_quat_pose *in, int n, bool edges)
{
    for (int i = 0; i < n; i++) {
        int kind = edges && (gen_next(rng) & 3) == 0 ? (int)(gen_next(rng) % EDGE_KINDS) : EDGE_KINDS;
        in[i].rotation = edge_quat(rng, kind);
        in[i].position = edge_position(rng, edges && (gen_next(rng) & 63) == 0 ? (int)(gen_next(rng) % 3) : 3);
    }
}

static void assert_same_fault(cq_fault got, cq_fault want, int i)
{
    ck_assert_msg(got.status == want.status && got.index == want.index && got.sub == want.sub &&
                      (got.field == want.field || (got.field && want.field && strcmp(got.field, want.field) == 0)),
                  "pose %d: fault %d %s[%d] against the reference's %d %s[%d]", i, got.status,
                  got.field ? got.field : "-", got.index, want.status, want.field ? want.field : "-", want.index);
}

/* ---- tests ---- */

START_TEST(one_pose_matches_the_reference_bit_for_bit)
{
    tu_rng rng = {0x9051};
    static cq_quat_pose in[POSES];
    int made = 0;
    for (int round = 0; round < 16; round++) {
        fill(&rng, in, POSES, true);
        for (int i = 0; i < POSES; i++) {
            cq_xform got, want;
            memset(&got, 0xA5, sizeof got);
            memset(&want, 0xA5, sizeof want);
            cq_fault fg = cq_pose_from_quat(in[i].position, in[i].rotation, &got);
            cq_fault fw = ref_pose(in[i].position, in[i].rotation, &want);
            assert_same_fault(fg, fw, i);
            if (fw.status != CQ_OK)
                continue;
            made++;
            ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "pose %d differs from the reference", i);
        }
    }
    ck_assert_int_gt(made, 16 * POSES / 2); // most inputs are poses, not faults
}
END_TEST

/* The lanes: every count and offset (so groups of four, pairs and the
 * scalar tail all run), poses written through pointers into a strided
 * array; the returned count is the first the reference refuses, every
 * pose before it is the reference's, bit for bit. */
START_TEST(many_poses_match_the_reference_bit_for_bit)
{
    tu_rng rng = {0x9052};
    enum { N = 64, STRIDE = 3 };
    static cq_quat_pose in[N];
    static cq_xform store[N * STRIDE], want[N];
    cq_xform *out[N];
    for (int i = 0; i < N; i++)
        out[i] = &store[i * STRIDE + i % STRIDE];
    int full = 0, stopped = 0;
    for (int round = 0; round < 3000; round++) {
        fill(&rng, in, N, round % 3 != 0);
        size_t off = gen_next(&rng) % 8, n = gen_next(&rng) % (N - off + 1);
        size_t first_bad = n;
        for (size_t i = 0; i < n && first_bad == n; i++)
            if (ref_pose(in[off + i].position, in[off + i].rotation, &want[i]).status != CQ_OK)
                first_bad = i;
        size_t got = cq_poses_from_quats(in + off, n, out + off);
        ck_assert_msg(got == first_bad, "round %d: stopped at %zu of %zu, the reference at %zu", round, got, n,
                      first_bad);
        for (size_t i = 0; i < got; i++)
            ck_assert_msg(memcmp(out[off + i], &want[i], sizeof want[i]) == 0, "round %d: pose %zu of %zu differs",
                          round, i, n);
        full += first_bad == n && n >= 8;
        stopped += first_bad < n;
    }
    ck_assert_int_gt(full, 500);
    ck_assert_int_gt(stopped, 500);
}
END_TEST

/* A fault anywhere in a group: the count stops there, from every place
 * in a group of four and of two. */
START_TEST(many_poses_stop_at_each_fault)
{
    tu_rng rng = {0x9053};
    enum { N = 12 };
    cq_quat_pose in[N];
    cq_xform store[N], want;
    cq_xform *out[N];
    for (int i = 0; i < N; i++)
        out[i] = &store[i];
    for (int bad = 0; bad < N; bad++)
        for (int kind = 0; kind < 4; kind++) {
            fill(&rng, in, N, false);
            if (kind < 3)
                in[bad].rotation = edge_quat(&rng, 11 + kind); // NaN, an infinity
            else
                in[bad].position = edge_position(&rng, 0);
            ck_assert_int_eq(cq_poses_from_quats(in, N, out), bad);
            for (int i = 0; i < bad; i++) {
                ck_assert_int_eq(ref_pose(in[i].position, in[i].rotation, &want).status, CQ_OK);
                ck_assert_msg(memcmp(out[i], &want, sizeof want) == 0, "pose %d before a fault at %d", i, bad);
            }
        }
    ck_assert_int_eq(cq_poses_from_quats(in, 0, out), 0);
}
END_TEST

Suite *pose_suite(void)
{
    Suite *s = suite_create("pose");
    TCase *t = tcase_create("bits");
    tcase_add_test(t, one_pose_matches_the_reference_bit_for_bit);
    tcase_add_test(t, many_poses_match_the_reference_bit_for_bit);
    tcase_add_test(t, many_poses_stop_at_each_fault);
    suite_add_tcase(s, t);
    return s;
}
