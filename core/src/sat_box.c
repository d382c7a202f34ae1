/* Box-box separating-axis test (seed 000): all 15 axes, computed in A's
 * frame from the relative rotation R = A^T B so each projection radius is a
 * few multiply-adds. Gaps are in world units; a cross axis whose squared
 * length is below CQ_SAT_DEGENERATE (nearly parallel edges) is skipped,
 * because normalising it would amplify rounding into a meaningless gap. */
#include "sat_box.h"

/* The frame shared by every axis of one pair. */
typedef struct cq_sat_frame {
    double r[3][3];  /* r[i][j] = dot(A_i, B_j) */
    double ar[3][3]; /* |r| */
    double t[3];     /* centre difference in A's frame */
    double ha[3], hb[3];
} cq_sat_frame;

static cq_sat_frame cq_sat_frame_make(const cq_obb *a, const cq_obb *b)
{
    cq_sat_frame f;
    cq_vec3 d = cq_mul_mtv(&a->axes, cq_sub(b->center, a->center));
    f.t[0] = d.x, f.t[1] = d.y, f.t[2] = d.z;
    for (int i = 0; i < 3; i++) {
        f.ha[i] = cq_comp(a->half, i);
        f.hb[i] = cq_comp(b->half, i);
        for (int j = 0; j < 3; j++) {
            f.r[i][j] = cq_dot(a->axes.c[i], b->axes.c[j]);
            f.ar[i][j] = fabs(f.r[i][j]);
        }
    }
    return f;
}

/* Unnormalised gap of face axis 0..5: |distance| - radius A - radius B. */
static double cq_sat_face(const cq_sat_frame *f, int axis)
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
static double cq_sat_cross(const cq_sat_frame *f, int i, int j, double *len2)
{
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    *len2 = f->r[i1][j] * f->r[i1][j] + f->r[i2][j] * f->r[i2][j];
    double dist = f->t[i2] * f->r[i1][j] - f->t[i1] * f->r[i2][j];
    double ra = f->ha[i1] * f->ar[i2][j] + f->ha[i2] * f->ar[i1][j];
    double rb = f->hb[j1] * f->ar[i][j2] + f->hb[j2] * f->ar[i][j1];
    return fabs(dist) - ra - rb;
}

void cq_obb_gaps(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                 bool skipped[CQ_SAT_AXIS_COUNT])
{
    cq_sat_frame f = cq_sat_frame_make(a, b);
    for (int k = 0; k < 6 && k < count; k++) {
        gap[k] = cq_sat_face(&f, k);
        skipped[k] = false;
    }
    for (int k = 6; k < count; k++) {
        double len2;
        double g = cq_sat_cross(&f, (k - 6) / 3, (k - 6) % 3, &len2);
        skipped[k] = !(len2 >= CQ_SAT_DEGENERATE);
        gap[k] = skipped[k] ? -INFINITY : g / sqrt(len2);
    }
}

cq_sat_result cq_obb_sat(const cq_obb *a, const cq_obb *b, bool face_only)
{
    double gap[CQ_SAT_AXIS_COUNT];
    bool skipped[CQ_SAT_AXIS_COUNT];
    int count = face_only ? 6 : CQ_SAT_AXIS_COUNT;
    cq_obb_gaps(a, b, count, gap, skipped);
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
    cq_obb_gaps(a, b, CQ_SAT_AXIS_COUNT, gap, skipped);
    for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++)
        out[k] = (cq_sat_axis){skipped[k] ? 0.0 : gap[k], skipped[k]};
}

/* The boolean path: face axes first, each separating axis returns at once,
 * and the world-unit tolerance is compared squared (gap > tol*|L| as
 * gap^2 > tol^2 |L|^2 for gap > 0), so no square root is taken. */
bool cq_obb_overlap(const cq_obb *a, const cq_obb *b)
{
    cq_sat_frame f = cq_sat_frame_make(a, b);
    for (int k = 0; k < 6; k++)
        if (cq_sat_face(&f, k) > CQ_SAT_TOLERANCE)
            return false;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double len2, g = cq_sat_cross(&f, i, j, &len2);
            if (len2 >= CQ_SAT_DEGENERATE && g > 0 && g * g > CQ_SAT_TOLERANCE * CQ_SAT_TOLERANCE * len2)
                return false;
        }
    return true;
}
