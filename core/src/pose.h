/* What shape.c's pose validators and pose_many.c's lanes share. */
#ifndef CQ_POSE_H
#define CQ_POSE_H

#include <float.h>

/* How far from unit length and orthogonality a vector or rotation may be
 * and still count as exact: "exact" values are kept bit for bit, so that
 * validating a value twice (a world exported and imported again) leaves it
 * as the first validation did. The bound sits well above the rounding that
 * normalising or one polar step leaves (at most about 6 and 10 ulps; a few
 * in practice) and far below any tolerance. */
#define CQ_EXACT_ULPS 16
#define CQ_EXACT_TOL (CQ_EXACT_ULPS * DBL_EPSILON)

/* x86-64 builds carry cq_poses_from_quats's four-lane AVX2 variant, chosen
 * at run time; others use two lanes of the compiler's generic vectors. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CQ_NO_SIMD)
#define CQ_POSE_AVX2 1
#else
#define CQ_POSE_AVX2 0
#endif

#endif
