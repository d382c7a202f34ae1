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
} cq_box_gaps;

/* All 15 gaps; uses the AVX2 variant where the CPU has it. With a finite
 * stop it ends after the six face axes when one of them exceeds stop (a
 * certain miss for a caller that only wants gaps up to stop) and returns
 * false: only gap[0..5] are then set. Returns true when all 15 are. */
bool cq__box_gaps_compute(const cq_obb *a, const cq_obb *b, double stop, cq_box_gaps *out);

/* The contact of box_box.c from gaps already computed (cq__box_box is
 * cq__box_box_from_gaps of cq__box_gaps_compute's, with stop
 * cq__box_box_stop(q)): all as cq__box_gaps_compute returned it. a and b
 * are q's boxes as cq_obb_from_box poses them. */
void cq__box_box_from_gaps(const cq_pair_query *q, const cq_obb *a, const cq_obb *b, const cq_box_gaps *g, bool all,
                           cq_contact *out);

/* The whole answer (cq__collide_begin included) for query q, in the
 * caller's order, when a face axis shows its boxes apart beyond the stop
 * (cq__box_gaps_compute returned false; gap[0..5] of g set, in cq_collide's
 * order, which is B first when b_first): as cq__collide_finish would leave
 * it after cq__box_box_from_gaps, the SAT axis named back, the normal
 * (zero) negated as cq_contact_swap negates it, the test counted. */
void cq__box_box_stopped(const cq_pair_query *q, bool b_first, const cq_box_gaps *g, cq_contact *out);

/* The stop cq__box_box hands cq__box_gaps_compute for query q. */
double cq__box_box_stop(const cq_pair_query *q);

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
/* Verdicts of pairs 0..n-1 in groups of four; returns how many it did (a
 * multiple of four, at most n - 1: it reads 8 bytes past each box, so the
 * last pair is always left to the caller). */
int cq__obb_overlap_many_avx2(const cq_obb *a, const cq_obb *b, int n, bool *out);
/* A box where its owner keeps it: the pose, and the half extents inside a
 * cq_shape (the 8 bytes after them are read, never used). */
typedef struct cq_box_ref {
    const cq_xform *x;
    const cq_vec3 *half;
} cq_box_ref;
/* All 15 gaps of pairs (a[k], b[k]), k = 0..3, the same doubles as
 * cq__box_gaps_avx2 gives each (with no stop). */
void cq__box_gaps_many_avx2(const cq_box_ref a[4], const cq_box_ref b[4], cq_box_gaps out[4]);
/* The six face gaps alone of the same four pairs (gap[0..5] of each out;
 * the rest left as it is), the same doubles: a batch drops the pairs a
 * face axis separates before it pays for the cross axes. Returns bit k set
 * where some face gap of pair k exceeds stop[k]. */
unsigned cq__box_faces_many_avx2(const cq_box_ref a[4], const cq_box_ref b[4], const double stop[4],
                                 cq_box_gaps out[4]);
#else
#define CQ_HAVE_AVX2 0
#endif

#endif
