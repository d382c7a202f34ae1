/* cq_poses_from_quats: cq_pose_from_quat for several poses at a time, in
 * the lanes of vectors (two in SSE2's, four in AVX2's where the processor
 * has it). Each lane runs the very operations the scalar function runs,
 * in its order (the square root, the divisions, the matrix's products and
 * sums, the exactness test's dot products), and IEEE arithmetic rounds a
 * lane as it rounds a scalar, so every bit is the scalar's. The core is
 * built without contraction into fused multiply-adds (gcc's -std=c11,
 * clang's pragma below; AVX2's target does not add FMA), which would
 * round the two differently. A group with anything unusual (a fault, a
 * matrix that needs polar steps) is left to the scalar function, which
 * then decides it. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <string.h>

#include "cq/shape.h"
#include "pose.h"

#if CQ_POSE_AVX2
#include <immintrin.h>
#endif

typedef double cq_dv_2 __attribute__((vector_size(16)));
typedef long long cq_lv_2 __attribute__((vector_size(16)));

/* Two square roots: SSE2's where x86-64 has it, else one at a time. */
static inline cq_dv_2 cq_sqrt_2(cq_dv_2 s)
{
#if CQ_POSE_AVX2
    return (cq_dv_2)_mm_sqrt_pd((__m128d)s);
#else
    return (cq_dv_2){sqrt(s[0]), sqrt(s[1])};
#endif
}

/* The components of in[0] and in[1]'s quaternions, lane k from in[k]:
 * loaded whole and shuffled, not put together lane by lane in memory (a
 * vector read of scalar stores waits for them). */
static inline void cq_load_2(const cq_quat_pose *in, cq_dv_2 *x, cq_dv_2 *y, cq_dv_2 *z, cq_dv_2 *w)
{
    cq_dv_2 a[2], b[2];
    memcpy(a, &in[0].rotation, sizeof a);
    memcpy(b, &in[1].rotation, sizeof b);
    *x = __builtin_shufflevector(a[0], b[0], 0, 2);
    *y = __builtin_shufflevector(a[0], b[0], 1, 3);
    *z = __builtin_shufflevector(a[1], b[1], 0, 2);
    *w = __builtin_shufflevector(a[1], b[1], 1, 3);
}

#define CQ_LANES 2
#define CQ_LANE(name) name##_2
#define CQ_LANE_ATTR
#define CQ_LANE_SQRT cq_sqrt_2
#include "pose_lanes.h"
#undef CQ_LANES
#undef CQ_LANE
#undef CQ_LANE_ATTR
#undef CQ_LANE_SQRT

#if CQ_POSE_AVX2
typedef double cq_dv_4 __attribute__((vector_size(32)));
typedef long long cq_lv_4 __attribute__((vector_size(32)));

/* cq_load_2's four-lane transpose. */
__attribute__((target("avx2"))) static inline void cq_load_4(const cq_quat_pose *in, cq_dv_4 *x, cq_dv_4 *y,
                                                            cq_dv_4 *z, cq_dv_4 *w)
{
    cq_dv_4 r[4];
    for (int k = 0; k < 4; k++)
        r[k] = (cq_dv_4)_mm256_loadu_pd(&in[k].rotation.x);
    cq_dv_4 xz01 = __builtin_shufflevector(r[0], r[1], 0, 4, 2, 6), yw01 = __builtin_shufflevector(r[0], r[1], 1, 5, 3, 7);
    cq_dv_4 xz23 = __builtin_shufflevector(r[2], r[3], 0, 4, 2, 6), yw23 = __builtin_shufflevector(r[2], r[3], 1, 5, 3, 7);
    *x = __builtin_shufflevector(xz01, xz23, 0, 1, 4, 5);
    *z = __builtin_shufflevector(xz01, xz23, 2, 3, 6, 7);
    *y = __builtin_shufflevector(yw01, yw23, 0, 1, 4, 5);
    *w = __builtin_shufflevector(yw01, yw23, 2, 3, 6, 7);
}

#define CQ_LANES 4
#define CQ_LANE(name) name##_4
#define CQ_LANE_ATTR __attribute__((target("avx2")))
#define CQ_LANE_SQRT(s) ((cq_dv_4)_mm256_sqrt_pd((__m256d)(s)))
#include "pose_lanes.h"
#undef CQ_LANES
#undef CQ_LANE
#undef CQ_LANE_ATTR
#undef CQ_LANE_SQRT

/* The four-lane loop, compiled for AVX2: from in[k] on, while each group
 * of four is plain; returns where it stopped. */
__attribute__((target("avx2"))) static size_t cq_poses_avx2(const cq_quat_pose *in, size_t k, size_t n,
                                                           cq_xform *const *out)
{
    while (k + 4 <= n && cq_pose_lanes_4(in + k, out + k))
        k += 4;
    return k;
}
#endif

/* From in[k] on, as far as the widest lanes take plain groups. */
static size_t cq_poses_lanes(const cq_quat_pose *in, size_t k, size_t n, cq_xform *const *out)
{
#if CQ_POSE_AVX2
    if (__builtin_cpu_supports("avx2"))
        k = cq_poses_avx2(in, k, n, out);
#endif
    while (k + 2 <= n && cq_pose_lanes_2(in + k, out + k))
        k += 2;
    return k;
}

size_t cq_poses_from_quats(const cq_quat_pose *in, size_t n, cq_xform *const *out)
{
    for (size_t k = cq_poses_lanes(in, 0, n, out); k < n; k++)
        if (cq_pose_from_quat(in[k].position, in[k].rotation, out[k]).status != CQ_OK)
            return k;
    return n;
}
