/* Box-box separating-axis test (seed 000): all 15 axes, computed in A's
 * frame from the relative rotation R = A^T B so each projection radius is a
 * few multiply-adds. Gaps are in world units; a cross axis whose squared
 * length is below CQ_SAT_DEGENERATE (nearly parallel edges) is skipped,
 * because normalising it would amplify rounding into a meaningless gap. */
#include "narrow.h"
#include "sat_box.h"

/* The frame shared by every axis of one pair. */
typedef struct cq_sat_frame {
    double r[3][3];  /* r[i][j] = dot(A_i, B_j) */
    double ar[3][3]; /* |r| */
    double t[3];     /* centre difference in A's frame */
    double ha[3], hb[3];
} cq_sat_frame;

/* Fills the frame; written out entry by entry because this is the hot
 * start of every box pair. */
static inline void cq_sat_frame_init(cq_sat_frame *f, const cq_obb *a, const cq_obb *b)
{
    const cq_vec3 *A = a->axes.c, *B = b->axes.c;
    cq_vec3 d = cq_sub(b->center, a->center);
    f->t[0] = cq_dot(A[0], d), f->t[1] = cq_dot(A[1], d), f->t[2] = cq_dot(A[2], d);
    f->ha[0] = a->half.x, f->ha[1] = a->half.y, f->ha[2] = a->half.z;
    f->hb[0] = b->half.x, f->hb[1] = b->half.y, f->hb[2] = b->half.z;
#define CQ_SAT_R_(i, j) (f->r[i][j] = cq_dot(A[i], B[j]), f->ar[i][j] = fabs(f->r[i][j]))
    CQ_SAT_R_(0, 0), CQ_SAT_R_(0, 1), CQ_SAT_R_(0, 2);
    CQ_SAT_R_(1, 0), CQ_SAT_R_(1, 1), CQ_SAT_R_(1, 2);
    CQ_SAT_R_(2, 0), CQ_SAT_R_(2, 1), CQ_SAT_R_(2, 2);
#undef CQ_SAT_R_
}

/* Unnormalised gap of face axis 0..5: |distance| - radius A - radius B. */
static inline double cq_sat_face(const cq_sat_frame *f, int axis)
{
    if (axis < 3) {
        int i = axis;
        return fabs(f->t[i]) - f->ha[i] - (f->hb[0] * f->ar[i][0] + f->hb[1] * f->ar[i][1] + f->hb[2] * f->ar[i][2]);
    }
    int j = axis - 3;
    double dist = f->t[0] * f->r[0][j] + f->t[1] * f->r[1][j] + f->t[2] * f->r[2][j];
    return fabs(dist) - (f->ha[0] * f->ar[0][j] + f->ha[1] * f->ar[1][j] + f->ha[2] * f->ar[2][j]) - f->hb[j];
}

/* Cross axis A_i x B_j in A's frame: (e_i x column j of r). Returns the
 * unnormalised gap and its squared length. */
static inline double cq_sat_cross(const cq_sat_frame *f, int i, int j, double *len2)
{
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    *len2 = f->r[i1][j] * f->r[i1][j] + f->r[i2][j] * f->r[i2][j];
    double dist = f->t[i2] * f->r[i1][j] - f->t[i1] * f->r[i2][j];
    double ra = f->ha[i1] * f->ar[i2][j] + f->ha[i2] * f->ar[i1][j];
    double rb = f->hb[j1] * f->ar[i][j2] + f->hb[j2] * f->ar[i][j1];
    return fabs(dist) - ra - rb;
}

/* World-unit gap of cross axis A_i x B_j, or -INFINITY when degenerate. */
static inline double cq_sat_cross_gap(const cq_sat_frame *f, int i, int j, bool *skipped)
{
    double len2, g = cq_sat_cross(f, i, j, &len2);
    *skipped = !(len2 >= CQ_SAT_DEGENERATE);
    return *skipped ? -INFINITY : g / sqrt(len2);
}

void cq__obb_gaps_scalar(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                         bool skipped[CQ_SAT_AXIS_COUNT])
{
    cq_sat_frame f;
    cq_sat_frame_init(&f, a, b);
    /* Constant indices throughout: the frame lookups fold at compile time. */
    gap[0] = cq_sat_face(&f, 0), gap[1] = cq_sat_face(&f, 1), gap[2] = cq_sat_face(&f, 2);
    gap[3] = cq_sat_face(&f, 3), gap[4] = cq_sat_face(&f, 4), gap[5] = cq_sat_face(&f, 5);
    for (int k = 0; k < 6; k++)
        skipped[k] = false;
    if (count <= 6)
        return;
    gap[6] = cq_sat_cross_gap(&f, 0, 0, &skipped[6]), gap[7] = cq_sat_cross_gap(&f, 0, 1, &skipped[7]);
    gap[8] = cq_sat_cross_gap(&f, 0, 2, &skipped[8]), gap[9] = cq_sat_cross_gap(&f, 1, 0, &skipped[9]);
    gap[10] = cq_sat_cross_gap(&f, 1, 1, &skipped[10]), gap[11] = cq_sat_cross_gap(&f, 1, 2, &skipped[11]);
    gap[12] = cq_sat_cross_gap(&f, 2, 0, &skipped[12]), gap[13] = cq_sat_cross_gap(&f, 2, 1, &skipped[13]);
    gap[14] = cq_sat_cross_gap(&f, 2, 2, &skipped[14]);
}

/* Whether cq_collide runs boxes a and b B first: the SAT entry points then
 * run in that order too and name the axes back, so a pair's table, verdict
 * and contact carry the very same doubles (rounding differs by order). */
static bool cq_obb_b_first(const cq_obb *a, const cq_obb *b)
{
    cq_shape sa = {.type = CQ_BOX, .box = {a->half}}, sb = {.type = CQ_BOX, .box = {b->half}};
    cq_pair_query q = {.a = &sa, .xa = {a->center, a->axes}, .b = &sb, .xb = {b->center, b->axes}};
    return cq__b_first(&q);
}

/* The gaps of the first count axes in cq_collide's order, named as the
 * caller named the boxes. */
static void cq_obb_gaps_canonical(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                                  bool skipped[CQ_SAT_AXIS_COUNT])
{
    if (!cq_obb_b_first(a, b)) {
        cq__obb_gaps(a, b, count, gap, skipped);
        return;
    }
    double g[CQ_SAT_AXIS_COUNT];
    bool s[CQ_SAT_AXIS_COUNT];
    cq__obb_gaps(b, a, count, g, s);
    for (int k = 0; k < count; k++) /* the face axes swap among themselves, as do the cross axes */
        gap[k] = g[cq__sat_axis_swap(k)], skipped[k] = s[cq__sat_axis_swap(k)];
}

cq_sat_result cq_obb_sat(const cq_obb *a, const cq_obb *b, bool face_only)
{
    double gap[CQ_SAT_AXIS_COUNT];
    bool skipped[CQ_SAT_AXIS_COUNT];
    int count = face_only ? 6 : CQ_SAT_AXIS_COUNT;
    cq_obb_gaps_canonical(a, b, count, gap, skipped);
    cq_sat_result res = {false, -1, -INFINITY, 0};
    for (int k = 0; k < count; k++) {
        if (skipped[k]) {
            res.skipped++;
            continue;
        }
        if (gap[k] > res.gap)
            res.gap = gap[k], res.axis = k;
    }
    res.overlap = !(res.gap > CQ_SAT_TOLERANCE);
    return res;
}

void cq_obb_sat_explain(const cq_obb *a, const cq_obb *b, cq_sat_axis out[CQ_SAT_AXIS_COUNT])
{
    double gap[CQ_SAT_AXIS_COUNT];
    bool skipped[CQ_SAT_AXIS_COUNT];
    cq_obb_gaps_canonical(a, b, CQ_SAT_AXIS_COUNT, gap, skipped);
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
        out[k] = (cq_sat_axis){skipped[k] ? 0.0 : gap[k], skipped[k]};
}

/* Whether cross axis A_i x B_j separates by more than the tolerance. The
 * world-unit test gap > tol * |L| is done squared, so no root is taken. */
static inline bool cq_cross_apart(const cq_sat_frame *f, int i, int j)
{
    double len2, g = cq_sat_cross(f, i, j, &len2);
    return g > 0 && len2 >= CQ_SAT_DEGENERATE && g * g > CQ_SAT_TOLERANCE * CQ_SAT_TOLERANCE * len2;
}

/* The scalar boolean path: face axes first, and each separating axis
 * returns at once. Written out axis by axis so every index is a constant. */
bool cq__obb_overlap_scalar(const cq_obb *a, const cq_obb *b)
{
    cq_sat_frame f;
    cq_sat_frame_init(&f, a, b);
    const double tol = CQ_SAT_TOLERANCE;
    if (cq_sat_face(&f, 0) > tol || cq_sat_face(&f, 1) > tol || cq_sat_face(&f, 2) > tol ||
        cq_sat_face(&f, 3) > tol || cq_sat_face(&f, 4) > tol || cq_sat_face(&f, 5) > tol)
        return false;
    return !(cq_cross_apart(&f, 0, 0) || cq_cross_apart(&f, 0, 1) || cq_cross_apart(&f, 0, 2) ||
             cq_cross_apart(&f, 1, 0) || cq_cross_apart(&f, 1, 1) || cq_cross_apart(&f, 1, 2) ||
             cq_cross_apart(&f, 2, 0) || cq_cross_apart(&f, 2, 1) || cq_cross_apart(&f, 2, 2));
}

/* cq_box_gaps' frame, in the AVX2 variant's order of operations. */
static void cq_box_gaps_frame(const cq_obb *a, const cq_obb *b, cq_box_gaps *out)
{
    cq_sat_frame f;
    cq_sat_frame_init(&f, a, b);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            out->r[i][j] = f.r[i][j];
        out->r[i][3] = 0;
        out->t[i] = f.t[i];
        out->ta[i] = -(f.t[0] * f.r[0][i] + f.t[1] * f.r[1][i] + f.t[2] * f.r[2][i]);
    }
    out->t[3] = out->ta[3] = 0;
}

bool cq__box_gaps_compute(const cq_obb *a, const cq_obb *b, double stop, cq_box_gaps *out)
{
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return cq__box_gaps_avx2(a, b, stop, out);
#endif
    /* The scalar fallback computes all 15 and only reports the stop. */
    bool skipped[CQ_SAT_AXIS_COUNT];
    cq__obb_gaps_scalar(a, b, CQ_SAT_AXIS_COUNT, out->gap, skipped);
    out->skipped = 0;
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
        out->skipped |= (unsigned)skipped[k] << k;
    out->gap[CQ_SAT_AXIS_COUNT] = -INFINITY; /* the spare slot, as the AVX2 gaps leave it */
    for (int k = 0; k < 6; k++)
        if (out->gap[k] > stop)
            return false;
    cq_box_gaps_frame(a, b, out);
    return true;
}

void cq__obb_gaps(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                  bool skipped[CQ_SAT_AXIS_COUNT])
{
    if (count < CQ_SAT_AXIS_COUNT) {
        cq__obb_gaps_scalar(a, b, count, gap, skipped);
        return;
    }
    cq_box_gaps g;
    cq__box_gaps_compute(a, b, INFINITY, &g);
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
        gap[k] = g.gap[k], skipped[k] = g.skipped >> k & 1;
}

bool cq_obb_overlap(const cq_obb *a, const cq_obb *b)
{
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return cq__obb_overlap_avx2(a, b);
#endif
    return cq__obb_overlap_scalar(a, b);
}

void cq_obb_overlap_many(const cq_obb *a, const cq_obb *b, int n, bool *out)
{
    int done = 0;
#if CQ_HAVE_AVX2
    if (n > 0 && __builtin_cpu_supports("avx2"))
        done = cq__obb_overlap_many_avx2(a, b, n, out);
#endif
    for (int i = done; i < n; i++)
        out[i] = cq_obb_overlap(&a[i], &b[i]);
}
