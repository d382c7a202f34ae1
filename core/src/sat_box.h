/* Internal: the 15 box-box SAT gaps, shared by the verdict, the
 * explanation and the contact. */
#ifndef CQ_SAT_BOX_H
#define CQ_SAT_BOX_H

#include "cq/collision.h"

/* A candidate axis and its gap. */
typedef struct cq_best {
    double gap;
    int axis;
} cq_best;

/* The better of two candidates, lo holding the lower axes: hi only wins when
 * strictly larger, so a tie keeps the lower axis. The axis is picked by
 * arithmetic on the comparison, which compilers keep free of branches:
 * which axis wins is unpredictable, and a mispredicted branch per level
 * would cost more than the whole tournament. */
static inline cq_best cq_better(cq_best lo, cq_best hi)
{
    int more = hi.gap > lo.gap;
    return (cq_best){hi.gap > lo.gap ? hi.gap : lo.gap, lo.axis + more * (hi.axis - lo.axis)};
}

static inline cq_best cq_at(const double *gap, int k) { return (cq_best){gap[k], k}; }

/* The first of the largest face gaps (0..5) and of the largest cross gaps
 * (6..14), each as a tournament: a few levels of independent comparisons
 * instead of one long chain through a running maximum. */
static inline cq_best cq_best_face(const double *g)
{
    return cq_better(cq_better(cq_better(cq_at(g, 0), cq_at(g, 1)), cq_at(g, 2)),
                     cq_better(cq_better(cq_at(g, 3), cq_at(g, 4)), cq_at(g, 5)));
}

static inline cq_best cq_best_edge(const double *g)
{
    cq_best lo = cq_better(cq_better(cq_at(g, 6), cq_at(g, 7)), cq_better(cq_at(g, 8), cq_at(g, 9)));
    cq_best hi = cq_better(cq_better(cq_at(g, 10), cq_at(g, 11)), cq_better(cq_at(g, 12), cq_at(g, 13)));
    return cq_better(cq_better(lo, hi), cq_at(g, 14));
}

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

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>

/* Lanes of x equal to m, as bits. */
static inline unsigned cq_eq2(__m128d x, __m128d m) { return (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(x, m)); }

/* The first of the largest of the 2n gaps at g (n = 3 or 5), in pairs: a
 * maximum and the first gap equal to it, the tournament's choice for gaps
 * that are not NaN (ties keep the lower axis) without its chain of
 * selects. No gap equal (a NaN maximum) names the first. */
static inline cq_best cq_best_pairs(const double *g, int first, int n)
{
    __m128d x0 = _mm_loadu_pd(g), x1 = _mm_loadu_pd(g + 2), x2 = _mm_loadu_pd(g + 4);
    __m128d x3 = n > 3 ? _mm_loadu_pd(g + 6) : x0, x4 = n > 3 ? _mm_loadu_pd(g + 8) : x0;
    __m128d m = _mm_max_pd(_mm_max_pd(_mm_max_pd(x0, x1), _mm_max_pd(x2, x3)), x4);
    m = _mm_max_pd(m, _mm_shuffle_pd(m, m, 1));
    unsigned bits = cq_eq2(x0, m) | cq_eq2(x1, m) << 2 | cq_eq2(x2, m) << 4;
    if (n > 3)
        bits |= cq_eq2(x3, m) << 6 | cq_eq2(x4, m) << 8;
    int k = __builtin_ctz(bits | 1u << 2 * n);
    return (cq_best){_mm_cvtsd_f64(m), first + (k < 2 * n ? k : 0)};
}

/* cq_best_face of g's gap[0..5], cq_best_edge of its gap[6..14] (the
 * spare slot 15 holds -INFINITY, never the largest, as the AVX2 gaps
 * store it; the scalar ones set it so). */
static inline cq_best cq_gaps_best_face(const cq_box_gaps *g) { return cq_best_pairs(g->gap, 0, 3); }
static inline cq_best cq_gaps_best_edge(const cq_box_gaps *g) { return cq_best_pairs(g->gap + 6, 6, 5); }
#else
static inline cq_best cq_gaps_best_face(const cq_box_gaps *g) { return cq_best_face(g->gap); }
static inline cq_best cq_gaps_best_edge(const cq_box_gaps *g) { return cq_best_edge(g->gap); }
#endif

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
