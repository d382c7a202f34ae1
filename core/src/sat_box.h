/* Internal: the 15 box-box SAT gaps, shared by the verdict, the
 * explanation and the contact. */
#ifndef CQ_SAT_BOX_H
#define CQ_SAT_BOX_H

#include "cq/collision.h"

/* All 15 gaps of one pair as the contact reads them: gap[k] in world units
 * (-INFINITY for a skipped axis) and bit k of skipped set for a skipped,
 * degenerate cross axis. The spare slot lets the vector variant store whole
 * registers instead of picking lanes apart. */
typedef struct cq_box_gaps {
    double gap[CQ_SAT_AXIS_COUNT + 1];
    unsigned skipped;
    /* The SAT's frame, set with all 15 gaps, for the manifold to reuse
     * instead of rebuilding it from world axes: r[i][j] = A_i . B_j (lane
     * 3 padding), t = A^T (b - a) (B's centre in A's frame), ta = B^T (a -
     * b) (A's centre in B's frame); slot 3 of each is padding. */
    double r[3][4], t[4], ta[4];
} cq_box_gaps;

/* All 15 gaps; uses the AVX2 variant where the CPU has it. With a finite
 * stop it ends after the six face axes when one of them exceeds stop (a
 * certain miss for a caller that only wants gaps up to stop) and returns
 * false: only gap[0..5] are then set. Returns true when all 15 are. */
bool cq__box_gaps_compute(const cq_obb *a, const cq_obb *b, double stop, cq_box_gaps *out);

/* Gaps in world units of the first count axes (6 = faces only, 15 = all).
 * A skipped (degenerate) axis gets -INFINITY and skipped[k] = true. Uses
 * the AVX2 variant where the CPU has it. */
void cq__obb_gaps(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                  bool skipped[CQ_SAT_AXIS_COUNT]);

/* The scalar references the vector variants are tested against. */
void cq__obb_gaps_scalar(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                         bool skipped[CQ_SAT_AXIS_COUNT]);
bool cq__obb_overlap_scalar(const cq_obb *a, const cq_obb *b);

/* x86-64 builds carry an AVX2 variant of the boolean test, chosen at run
 * time; other targets use the scalar one. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CQ_NO_SIMD)
#define CQ_HAVE_AVX2 1
/* cq_obb_overlap and cq__box_gaps_compute on AVX2; call only where
 * __builtin_cpu_supports("avx2"). */
bool cq__obb_overlap_avx2(const cq_obb *a, const cq_obb *b);
bool cq__box_gaps_avx2(const cq_obb *a, const cq_obb *b, double stop, cq_box_gaps *out);
/* cq__box_gaps_avx2 of the boxes at poses xa, xb with half extents ha, hb,
 * read where they lie: no box is copied first. */
bool cq__box_gaps_pose_avx2(const cq_xform *xa, const cq_vec3 *ha, const cq_xform *xb, const cq_vec3 *hb,
                            double stop, cq_box_gaps *out);
/* Verdicts of pairs 0..n-1 in groups of four; returns how many it did (a
 * multiple of four, at most n - 1: it reads 8 bytes past each box, so the
 * last pair is always left to the caller). */
int cq__obb_overlap_many_avx2(const cq_obb *a, const cq_obb *b, int n, bool *out);
#else
#define CQ_HAVE_AVX2 0
#endif

/* cq__box_gaps_compute of the boxes at poses xa, xb with half extents ha,
 * hb; with AVX2 the boxes are read where they lie (a box pair's first
 * stage touches no copy), else they are copied for the scalar code. */
static inline bool cq__box_gaps_pose(const cq_xform *xa, const cq_vec3 *ha, const cq_xform *xb, const cq_vec3 *hb,
                                     double stop, cq_box_gaps *out)
{
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return cq__box_gaps_pose_avx2(xa, ha, xb, hb, stop, out);
#endif
    cq_obb a = {xa->p, *ha, xa->r}, b = {xb->p, *hb, xb->r};
    return cq__box_gaps_compute(&a, &b, stop, out);
}

#endif
