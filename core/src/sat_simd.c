/* The box-box SAT on AVX2, four lanes at a time: the lanes run over B's
 * three axes (the fourth is padding that can never separate), so the 15
 * axes cost a few dozen vector operations and no branch. Only this file is
 * compiled for AVX2 (per function, chosen at run time in sat_box.c); FMA is
 * left out so products round as in the scalar code, which stays the
 * reference these are tested against. */
#include "sat_box.h"

#if CQ_HAVE_AVX2
#include <immintrin.h>
#include <string.h>

#define CQ_AVX2 __attribute__((target("avx2")))

typedef double cq_v4 __attribute__((vector_size(32)));
typedef long long cq_m4 __attribute__((vector_size(32)));

CQ_AVX2 static inline cq_v4 cq_v4_abs(cq_v4 x) { return (cq_v4)((cq_m4)x & 0x7fffffffffffffffLL); }

/* (x1, x2, x0, pad) and (x2, x0, x1, pad): the j+1 and j+2 lanes. */
CQ_AVX2 static inline cq_v4 cq_rot1(cq_v4 x) { return __builtin_shufflevector(x, x, 1, 2, 0, 3); }
CQ_AVX2 static inline cq_v4 cq_rot2(cq_v4 x) { return __builtin_shufflevector(x, x, 2, 0, 1, 3); }

/* One pair's SAT frame: rows of R = A^T B and of |R| over B's axes. */
typedef struct cq_frame4 {
    cq_v4 r[3], ar[3], hb, ha4;
    double t[3], ha[3];
} cq_frame4;

/* Lanes 0-2 from the vector at p, lane 3 zero, reading only those three. */
CQ_AVX2 static inline cq_v4 cq_load3(const cq_vec3 *p)
{
    return (cq_v4)_mm256_maskload_pd(&p->x, _mm256_setr_epi64x(-1, -1, -1, 0));
}

/* The columns of the 3x3 whose rows are r0, r1, r2 (lane 3 of r2 zero;
 * lane 3 of r0 and r1 is never read), each with lane 3 zero. */
CQ_AVX2 static inline void cq_transpose3(__m256d r0, __m256d r1, __m256d r2, cq_v4 col[3])
{
    __m256d zero = _mm256_setzero_pd();
    __m256d t0 = _mm256_unpacklo_pd(r0, r1); /* x0 x1 z0 z1 */
    __m256d t1 = _mm256_unpackhi_pd(r0, r1); /* y0 y1 .. .. */
    __m256d t2 = _mm256_unpacklo_pd(r2, zero); /* x2 0 z2 0 */
    __m256d t3 = _mm256_unpackhi_pd(r2, zero); /* y2 0 0 0 */
    col[0] = (cq_v4)_mm256_permute2f128_pd(t0, t2, 0x20);
    col[1] = (cq_v4)_mm256_permute2f128_pd(t1, t3, 0x20);
    col[2] = (cq_v4)_mm256_permute2f128_pd(t0, t2, 0x31);
}

CQ_AVX2 static inline cq_frame4 cq_frame4_make(const cq_obb *a, const cq_obb *b)
{
    const cq_vec3 *A = a->axes.c, *B = b->axes.c;
    cq_vec3 d = cq_sub(b->center, a->center);
    /* B's rows as whole loads (the first two read into the next row, whose
     * lane the transpose drops; the last stops at the end of the box). */
    cq_v4 bt[3];
    cq_transpose3(_mm256_loadu_pd(&B[0].x), _mm256_loadu_pd(&B[1].x), (__m256d)cq_load3(&B[2]), bt);
    cq_v4 bx = bt[0], by = bt[1], bz = bt[2];
    cq_frame4 f;
    f.r[0] = A[0].x * bx + A[0].y * by + A[0].z * bz;
    f.r[1] = A[1].x * bx + A[1].y * by + A[1].z * bz;
    f.r[2] = A[2].x * bx + A[2].y * by + A[2].z * bz;
    f.ar[0] = cq_v4_abs(f.r[0]), f.ar[1] = cq_v4_abs(f.r[1]), f.ar[2] = cq_v4_abs(f.r[2]);
    f.t[0] = cq_dot(A[0], d), f.t[1] = cq_dot(A[1], d), f.t[2] = cq_dot(A[2], d);
    f.ha[0] = a->half.x, f.ha[1] = a->half.y, f.ha[2] = a->half.z;
    f.ha4 = cq_load3(&a->half);
    f.hb = cq_load3(&b->half);
    return f;
}

/* Unnormalised gaps of A's faces (lane i) and B's faces (lane j). */
CQ_AVX2 static inline void cq_faces4(const cq_frame4 *f, cq_v4 *face_a, cq_v4 *face_b)
{
    cq_v4 c[3]; /* the columns of |R| */
    cq_transpose3((__m256d)f->ar[0], (__m256d)f->ar[1], (__m256d)f->ar[2], c);
    cq_v4 t = {f->t[0], f->t[1], f->t[2], 0};
    *face_a = cq_v4_abs(t) - f->ha4 - (f->hb[0] * c[0] + f->hb[1] * c[1] + f->hb[2] * c[2]);
    *face_b = cq_v4_abs(f->t[0] * f->r[0] + f->t[1] * f->r[1] + f->t[2] * f->r[2]) -
              (f->ha[0] * f->ar[0] + f->ha[1] * f->ar[1] + f->ha[2] * f->ar[2]) - f->hb;
}

/* Unnormalised gaps of the cross axes A_i x B_j (lane j) and their squared lengths. */
CQ_AVX2 static inline cq_v4 cq_cross4(const cq_frame4 *f, int i, cq_v4 *len2)
{
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    cq_v4 r1 = f->r[i1], r2 = f->r[i2];
    *len2 = r1 * r1 + r2 * r2;
    cq_v4 ra = f->ha[i1] * f->ar[i2] + f->ha[i2] * f->ar[i1];
    cq_v4 rb = cq_rot1(f->hb) * cq_rot2(f->ar[i]) + cq_rot2(f->hb) * cq_rot1(f->ar[i]);
    return cq_v4_abs(f->t[i2] * r1 - f->t[i1] * r2) - ra - rb;
}

CQ_AVX2 bool cq_obb_overlap_avx2(const cq_obb *a, const cq_obb *b)
{
    const double tol2 = CQ_SAT_TOLERANCE * CQ_SAT_TOLERANCE;
    cq_frame4 f = cq_frame4_make(a, b);
    cq_v4 face_a, face_b;
    cq_faces4(&f, &face_a, &face_b);
    cq_m4 apart = (face_a > CQ_SAT_TOLERANCE) | (face_b > CQ_SAT_TOLERANCE);
    cq_v4 l0, l1, l2, g0 = cq_cross4(&f, 0, &l0), g1 = cq_cross4(&f, 1, &l1), g2 = cq_cross4(&f, 2, &l2);
    /* gap > tol |L|, compared squared: no root */
    apart |= (g0 > 0) & (l0 >= CQ_SAT_DEGENERATE) & (g0 * g0 > tol2 * l0);
    apart |= (g1 > 0) & (l1 >= CQ_SAT_DEGENERATE) & (g1 * g1 > tol2 * l1);
    apart |= (g2 > 0) & (l2 >= CQ_SAT_DEGENERATE) & (g2 * g2 > tol2 * l2);
    return !(apart[0] | apart[1] | apart[2] | apart[3]);
}

/* World-unit gaps of the cross axes A_i x B_j (lane j), -INFINITY where
 * degenerate; *skipped gets the degenerate lanes as bits 0..2. */
CQ_AVX2 static inline cq_v4 cq_cross_gaps4(const cq_frame4 *f, int i, unsigned *skipped)
{
    const cq_v4 one = {1, 1, 1, 1}, none = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    cq_v4 len2, g = cq_cross4(f, i, &len2);
    cq_m4 ok = len2 >= CQ_SAT_DEGENERATE;
    /* Degenerate lanes divide by 1 and are then replaced. */
    cq_v4 safe = (cq_v4)(((cq_m4)len2 & ok) | ((cq_m4)one & ~ok));
    cq_v4 w = g / (cq_v4)_mm256_sqrt_pd((__m256d)safe);
    *skipped = (unsigned)_mm256_movemask_pd((__m256d)~ok) & 7;
    return (cq_v4)(((cq_m4)w & ok) | ((cq_m4)none & ~ok));
}

CQ_AVX2 void cq_box_gaps_avx2(const cq_obb *a, const cq_obb *b, cq_box_gaps *out)
{
    cq_frame4 f = cq_frame4_make(a, b);
    cq_v4 face_a, face_b;
    cq_faces4(&f, &face_a, &face_b);
    unsigned s0, s1, s2;
    cq_v4 c0 = cq_cross_gaps4(&f, 0, &s0), c1 = cq_cross_gaps4(&f, 1, &s1), c2 = cq_cross_gaps4(&f, 2, &s2);
    /* Whole registers stored in axis order: each one's padding lane lands
     * where the next store overwrites it (the last on the spare slot). */
    memcpy(out->gap, &face_a, sizeof face_a);
    memcpy(out->gap + 3, &face_b, sizeof face_b);
    memcpy(out->gap + 6, &c0, sizeof c0);
    memcpy(out->gap + 9, &c1, sizeof c1);
    memcpy(out->gap + 12, &c2, sizeof c2);
    out->skipped = s0 << 6 | s1 << 9 | s2 << 12;
}

#endif
