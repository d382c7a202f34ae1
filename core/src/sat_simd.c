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

/* (*x, *y, *z, 0) from three scalar loads. The boxes are most often copies
 * made just before (cq_obb_from_box), stored 8 and 16 bytes at a time: a
 * whole 32-byte load over them cannot take its data from the store buffer
 * and waits for the stores to retire, where a scalar load forwards from
 * any store that holds it. Written as loads (the scalar load zeroes the
 * upper lane), not as a vector of four values: gcc then zero-extends with
 * a register-to-register vmovq, which valgrind 3.19 cannot decode. */
CQ_AVX2 static inline cq_v4 cq_set3(const double *x, const double *y, const double *z)
{
    __m128d lo = _mm_loadh_pd(_mm_load_sd(x), y), hi = _mm_load_sd(z);
    return (cq_v4)_mm256_insertf128_pd(_mm256_castpd128_pd256(lo), hi, 1);
}

/* The frame of boxes given by their parts, wherever they lie (an obb's
 * fields, or a pair query's poses and shapes). */
CQ_AVX2 static inline cq_frame4 cq_frame4_of(const cq_vec3 *ca, const cq_vec3 *ha, const cq_mat3 *ra,
                                             const cq_vec3 *cb, const cq_vec3 *hb, const cq_mat3 *rb)
{
    const cq_vec3 *A = ra->c, *B = rb->c;
    cq_vec3 d = cq_sub(*cb, *ca);
    /* B's columns over its axes (lane j: component of B_j), built lane by
     * lane rather than loaded whole and transposed (see cq_set3). */
    cq_v4 bx = cq_set3(&B[0].x, &B[1].x, &B[2].x), by = cq_set3(&B[0].y, &B[1].y, &B[2].y);
    cq_v4 bz = cq_set3(&B[0].z, &B[1].z, &B[2].z);
    cq_frame4 f;
    f.r[0] = A[0].x * bx + A[0].y * by + A[0].z * bz;
    f.r[1] = A[1].x * bx + A[1].y * by + A[1].z * bz;
    f.r[2] = A[2].x * bx + A[2].y * by + A[2].z * bz;
    f.ar[0] = cq_v4_abs(f.r[0]), f.ar[1] = cq_v4_abs(f.r[1]), f.ar[2] = cq_v4_abs(f.r[2]);
    f.t[0] = cq_dot(A[0], d), f.t[1] = cq_dot(A[1], d), f.t[2] = cq_dot(A[2], d);
    f.ha[0] = ha->x, f.ha[1] = ha->y, f.ha[2] = ha->z;
    f.ha4 = cq_set3(&ha->x, &ha->y, &ha->z);
    f.hb = cq_set3(&hb->x, &hb->y, &hb->z);
    return f;
}

CQ_AVX2 static inline cq_frame4 cq_frame4_make(const cq_obb *a, const cq_obb *b)
{
    return cq_frame4_of(&a->center, &a->half, &a->axes, &b->center, &b->half, &b->axes);
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

CQ_AVX2 bool cq__obb_overlap_avx2(const cq_obb *a, const cq_obb *b)
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

/* The frame for the manifold (cq_box_gaps): R's rows as they are, t, and
 * A's centre in B's frame, -(R^T t), as the face gaps of B compute it. */
CQ_AVX2 static inline void cq_frame4_store(const cq_frame4 *f, cq_box_gaps *out)
{
    cq_v4 t = {f->t[0], f->t[1], f->t[2], 0};
    cq_v4 ta = -(f->t[0] * f->r[0] + f->t[1] * f->r[1] + f->t[2] * f->r[2]);
    memcpy(out->r[0], &f->r[0], sizeof t), memcpy(out->r[1], &f->r[1], sizeof t);
    memcpy(out->r[2], &f->r[2], sizeof t);
    memcpy(out->t, &t, sizeof t), memcpy(out->ta, &ta, sizeof ta);
}

CQ_AVX2 static inline __attribute__((always_inline)) bool cq_box_gaps4(cq_frame4 f, double stop, cq_box_gaps *out)
{
    cq_v4 face_a, face_b;
    cq_faces4(&f, &face_a, &face_b);
    /* Whole registers stored in axis order: each one's padding lane lands
     * where the next store overwrites it (the last on the spare slot). */
    memcpy(out->gap, &face_a, sizeof face_a);
    memcpy(out->gap + 3, &face_b, sizeof face_b);
    cq_m4 beyond = (face_a > stop) | (face_b > stop); /* lane 3 is padding */
    if (beyond[0] | beyond[1] | beyond[2])
        return false;
    unsigned s0, s1, s2;
    cq_v4 c0 = cq_cross_gaps4(&f, 0, &s0), c1 = cq_cross_gaps4(&f, 1, &s1), c2 = cq_cross_gaps4(&f, 2, &s2);
    memcpy(out->gap + 6, &c0, sizeof c0);
    memcpy(out->gap + 9, &c1, sizeof c1);
    memcpy(out->gap + 12, &c2, sizeof c2);
    out->skipped = s0 << 6 | s1 << 9 | s2 << 12;
    cq_frame4_store(&f, out);
    return true;
}

CQ_AVX2 bool cq__box_gaps_avx2(const cq_obb *a, const cq_obb *b, double stop, cq_box_gaps *out)
{
    return cq_box_gaps4(cq_frame4_make(a, b), stop, out);
}

CQ_AVX2 bool cq__box_gaps_pose_avx2(const cq_xform *xa, const cq_vec3 *ha, const cq_xform *xb, const cq_vec3 *hb,
                                    double stop, cq_box_gaps *out)
{
    return cq_box_gaps4(cq_frame4_of(&xa->p, ha, &xa->r, &xb->p, hb, &xb->r), stop, out);
}


/* ---- four pairs at a time: lanes over pairs ------------------------------ */

_Static_assert(sizeof(cq_obb) == 15 * sizeof(double), "a box is fifteen doubles in a row");

/* One box's fifteen numbers for four pairs, a number per vector: centre
 * (0-2), half extents (3-5), axes (6-14; axis i's component k at 6+3i+k). */
typedef struct cq_obb4 {
    cq_v4 v[16];
} cq_obb4;

/* Transposes four boxes into lanes, four numbers at a time: each whole load
 * reads numbers k..k+3 of one box (the last group reads 8 bytes past the
 * box, into the next one, and its fourth number is never used). */
CQ_AVX2 static inline void cq_obb4_load(const cq_obb *o, cq_obb4 *out)
{
    #pragma GCC unroll 4
    for (int k = 0; k < 16; k += 4) {
        __m256d r0 = _mm256_loadu_pd((const double *)&o[0] + k), r1 = _mm256_loadu_pd((const double *)&o[1] + k);
        __m256d r2 = _mm256_loadu_pd((const double *)&o[2] + k), r3 = _mm256_loadu_pd((const double *)&o[3] + k);
        __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        out->v[k] = (cq_v4)_mm256_permute2f128_pd(t0, t2, 0x20);
        out->v[k + 1] = (cq_v4)_mm256_permute2f128_pd(t1, t3, 0x20);
        out->v[k + 2] = (cq_v4)_mm256_permute2f128_pd(t0, t2, 0x31);
        out->v[k + 3] = (cq_v4)_mm256_permute2f128_pd(t1, t3, 0x31);
    }
}

/* The lanes where any of the 15 axes separates, every expression in the
 * scalar reference's order (sat_box.c) so each lane rounds as it does.
 * The loops are unrolled (constant indices) so everything stays in
 * registers. */
CQ_AVX2 static inline cq_m4 cq_apart4(const cq_obb4 *A, const cq_obb4 *B)
{
    const double tol = CQ_SAT_TOLERANCE, tol2 = CQ_SAT_TOLERANCE * CQ_SAT_TOLERANCE;
    const cq_v4 *a = A->v, *b = B->v;
    cq_v4 d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    cq_v4 ha[3] = {a[3], a[4], a[5]}, hb[3] = {b[3], b[4], b[5]}, t[3], r[3][3], ar[3][3];
    #pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
        const cq_v4 *ai = &a[6 + 3 * i];
        t[i] = ai[0] * d[0] + ai[1] * d[1] + ai[2] * d[2];
        #pragma GCC unroll 4
        for (int j = 0; j < 3; j++) {
            const cq_v4 *bj = &b[6 + 3 * j];
            r[i][j] = ai[0] * bj[0] + ai[1] * bj[1] + ai[2] * bj[2];
            ar[i][j] = cq_v4_abs(r[i][j]);
        }
    }
    cq_m4 apart = {0, 0, 0, 0};
    #pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
        cq_v4 face = cq_v4_abs(t[i]) - ha[i] - (hb[0] * ar[i][0] + hb[1] * ar[i][1] + hb[2] * ar[i][2]);
        apart |= face > tol;
    }
    #pragma GCC unroll 4
    for (int j = 0; j < 3; j++) {
        cq_v4 dist = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        cq_v4 face = cq_v4_abs(dist) - (ha[0] * ar[0][j] + ha[1] * ar[1][j] + ha[2] * ar[2][j]) - hb[j];
        apart |= face > tol;
    }
    #pragma GCC unroll 4
    for (int i = 0; i < 3; i++) {
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        #pragma GCC unroll 4
        for (int j = 0; j < 3; j++) {
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            cq_v4 len2 = r[i1][j] * r[i1][j] + r[i2][j] * r[i2][j];
            cq_v4 dist = t[i2] * r[i1][j] - t[i1] * r[i2][j];
            cq_v4 ra = ha[i1] * ar[i2][j] + ha[i2] * ar[i1][j];
            cq_v4 rb = hb[j1] * ar[i][j2] + hb[j2] * ar[i][j1];
            cq_v4 g = cq_v4_abs(dist) - ra - rb;
            apart |= (g > 0) & (len2 >= CQ_SAT_DEGENERATE) & (g * g > tol2 * len2);
        }
    }
    return apart;
}

CQ_AVX2 int cq__obb_overlap_many_avx2(const cq_obb *a, const cq_obb *b, int n, bool *out)
{
    int i = 0;
    for (; i + 4 < n; i += 4) { /* i + 4 < n: the reads past box i + 3 stay in the arrays */
        cq_obb4 A, B;
        cq_obb4_load(&a[i], &A);
        cq_obb4_load(&b[i], &B);
        cq_m4 apart = cq_apart4(&A, &B);
        #pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
            out[i + k] = !apart[k];
    }
    return i;
}

#endif
