/* Box-box face clipping in vector registers: the polygon where the
 * incident parallelogram Q and the reference rectangle R = |x| <= hu,
 * |y| <= hv overlap, all its candidate corners found at once instead of by
 * four Sutherland-Hodgman passes (box.c, kept as the reference this is
 * tested against).
 *
 * Every keep-or-drop test reads one set of numbers: the signed distances
 * d = sign c - h of Q's four corners from each side line (the passes' own),
 * and the crossings they give. A Q corner is kept when no distance is
 * positive. The crossing of Q's edge m with side line s (strictly opposite
 * signs at its ends) lies on the chord Q cuts from that line; it is kept
 * when it lies within the rectangle along the line. An R corner is kept
 * when it lies strictly inside the chord of the side line at +-v it ends,
 * so it and the crossings of that line are two answers to one question
 * (where does the chord end, inside R or past its corner) and cannot both
 * miss: where a chord ends within rounding of a corner, one of them is
 * kept. The line at +-u through the same corner answers it again from its
 * own chord, so when the two chords disagree by rounding the corner and a
 * crossing a rounding away both come out; nothing is lost. (An earlier
 * direct clip asked the corner question of the two quads' edge lines by
 * Cramer's rule, a third set of numbers, and flush stacks lost corners.)
 *
 * Lanes run over Q's four corners (edge m from corner m to m + 1); the
 * vectors are four doubles, one AVX2 register each (the function is
 * compiled for AVX2 and chosen at run time; an SSE2 build of the same code
 * exists for the tests), and the arithmetic has no branch: which
 * candidates are kept is data a predictor cannot learn. */
#include <float.h>
#include <string.h>

#include "box.h"
#include "sat_box.h"

#if CQ_HAVE_BOX_CLIP_SIMD

/* The vectors never cross a call boundary that is not inlined. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double cq_d4 __attribute__((vector_size(32)));
typedef long long cq_l4 __attribute__((vector_size(32)));

/* The next corner's value in each lane: edge m ends at corner m + 1. */
static inline __attribute__((always_inline)) cq_d4 cq_d4_next(cq_d4 x) { return __builtin_shufflevector(x, x, 1, 2, 3, 0); }

static inline __attribute__((always_inline)) cq_d4 cq_d4_pick(cq_l4 m, cq_d4 a, cq_d4 b) { return (cq_d4)((m & (cq_l4)a) | (~m & (cq_l4)b)); }

/* The least and the largest lane, in every lane. */
static inline __attribute__((always_inline)) cq_d4 cq_d4_min_all(cq_d4 x)
{
    cq_d4 y = __builtin_shufflevector(x, x, 1, 0, 3, 2);
    x = cq_d4_pick(y < x, y, x);
    y = __builtin_shufflevector(x, x, 2, 3, 0, 1);
    return cq_d4_pick(y < x, y, x);
}

static inline __attribute__((always_inline)) cq_d4 cq_d4_max_all(cq_d4 x)
{
    cq_d4 y = __builtin_shufflevector(x, x, 1, 0, 3, 2);
    x = cq_d4_pick(y > x, y, x);
    y = __builtin_shufflevector(x, x, 2, 3, 0, 1);
    return cq_d4_pick(y > x, y, x);
}

/* Mask m (0 or -1) in every lane. */
static inline __attribute__((always_inline)) cq_l4 cq_l4_all(long long m) { return (cq_l4){m, m, m, m}; }

/* Lane m's bit set where mask lane m is set: two SSE2 sign-bit moves on
 * x86 (one lane by one, an AND and a shift each, cost more than the clip's
 * arithmetic). */
static inline __attribute__((always_inline)) unsigned cq_l4_bits(cq_l4 m)
{
#if defined(__SSE2__)
    typedef double cq_d2 __attribute__((vector_size(16)));
    cq_d4 d = (cq_d4)m;
    cq_d2 lo = __builtin_shufflevector(d, d, 0, 1), hi = __builtin_shufflevector(d, d, 2, 3);
    return (unsigned)(__builtin_ia32_movmskpd(lo) | __builtin_ia32_movmskpd(hi) << 2);
#else
    return (unsigned)(m[0] & 1) | (unsigned)(m[1] & 1) << 1 | (unsigned)(m[2] & 1) << 2 | (unsigned)(m[3] & 1) << 3;
#endif
}

/* The candidates: Q's corners (0-3), the crossings of side s (0-3: +v,
 * -u, -v, +u, cq_face_frame's order) with edge m at 4 + 4 s + m, R's
 * corners (20-23, in the face corner order). */
enum { CQ_CAND = 24 };

typedef struct cq_cands {
    double x[CQ_CAND], y[CQ_CAND], z[CQ_CAND];
} cq_cands;

/* Each candidate's feature: kinds, and where its indices come from (A:
 * 0 the reference face, 1 + s side s's edge; B: 0 the incident face,
 * 1 + m corner m, 5 + m edge m). */
static const uint8_t cq_cand_kind_a[CQ_CAND] = {
    CQ_FEAT_FACE, CQ_FEAT_FACE, CQ_FEAT_FACE, CQ_FEAT_FACE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE,
    CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE,
    CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE};
static const uint8_t cq_cand_kind_b[CQ_CAND] = {
    CQ_FEAT_VERTEX, CQ_FEAT_VERTEX, CQ_FEAT_VERTEX, CQ_FEAT_VERTEX, CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE,
    CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_EDGE,
    CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE,   CQ_FEAT_EDGE, CQ_FEAT_EDGE, CQ_FEAT_FACE,
    CQ_FEAT_FACE,   CQ_FEAT_FACE,   CQ_FEAT_FACE};
static const uint8_t cq_cand_src_a[CQ_CAND] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 1, 1, 3, 3};
static const uint8_t cq_cand_src_b[CQ_CAND] = {1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8, 0, 0, 0, 0};

#define CQ_ALWAYS_INLINE static inline __attribute__((always_inline))

/* One side line's numbers: which edges cross it, where along it, and the
 * chord's ends (every lane). */
typedef struct cq_side {
    cq_l4 crosses;
    cq_d4 a, lo, hi;
} cq_side;

/* Side s: the crossings stored at 4 + 4 s. A distance within tol of 0
 * (the rounding of the frame's coordinates) counts as 0: a corner that
 * close lies on the line, so an edge along a side (a flush stack) crosses
 * it nowhere, and the corner itself ends the chord. */
CQ_ALWAYS_INLINE cq_side cq_side_cross(cq_d4 x, cq_d4 y, cq_d4 z, int s, double h, double tol, cq_cands *out)
{
    const cq_d4 inf = {INFINITY, INFINITY, INFINITY, INFINITY}, zero = {0, 0, 0, 0};
    double sign = s == 0 || s == 3 ? 1 : -1; /* times +-1: exact */
    cq_d4 c = s & 1 ? x : y, along = s & 1 ? y : x;
    cq_d4 d = sign * c - h;
    cq_l4 on = (d <= tol) & (-d <= tol);
    cq_d4 dp = cq_d4_pick(on, zero, d), dq = cq_d4_next(dp);
    cq_side r = {.crosses = dp * dq < 0};
    /* Lanes that do not cross may divide 0 by 0; they are never read. */
    cq_d4 t = dp / (dp - dq);
    cq_d4 px = x + t * (cq_d4_next(x) - x), py = y + t * (cq_d4_next(y) - y), pz = z + t * (cq_d4_next(z) - z);
    memcpy(&out->x[4 + 4 * s], &px, sizeof px);
    memcpy(&out->y[4 + 4 * s], &py, sizeof py);
    memcpy(&out->z[4 + 4 * s], &pz, sizeof pz);
    r.a = s & 1 ? py : px;
    cq_d4 lo = cq_d4_pick(r.crosses, r.a, cq_d4_pick(on, along, inf));
    cq_d4 hi = cq_d4_pick(r.crosses, r.a, cq_d4_pick(on, along, -inf));
    r.lo = cq_d4_min_all(lo);
    r.hi = cq_d4_max_all(hi);
    return r;
}

/* The heights of R's corners (rx, ry) on Q's plane, through cf along uf
 * and vf: from the plane's normal uf x vf, whose z is far from 0 for an
 * incident face of any size a scene has. A face with a side of subnormal
 * length has a normal whose z has no finite reciprocal (0 times infinity
 * would make the heights NaN): it is a segment along its longer side,
 * whose height is read off that side (cf's, when both are that short). */
CQ_ALWAYS_INLINE cq_d4 cq_corner_heights(const cq_box_clip_in *in, cq_d4 rx, cq_d4 ry)
{
    cq_vec3 nq = cq_cross(in->uf, in->vf);
    double inv = nq.z != 0 ? 1 / nq.z : 0;
    if (isfinite(inv))
        return in->cf.z - ((rx - in->cf.x) * nq.x + (ry - in->cf.y) * nq.y) * inv;
    cq_vec3 w = cq_len2(in->uf) >= cq_len2(in->vf) ? in->uf : in->vf;
    double flat = w.x * w.x + w.y * w.y, slope = flat > 0 && isfinite(w.z / flat) ? w.z / flat : 0;
    return in->cf.z + ((rx - in->cf.x) * w.x + (ry - in->cf.y) * w.y) * slope;
}

/* The candidates and the bits of those kept (within the skin too). */
CQ_ALWAYS_INLINE unsigned cq_clip_cands(const cq_box_clip_in *in, double skin, cq_cands *cd)
{
    const cq_d4 su = {1, -1, -1, 1}, sv = {1, 1, -1, -1};
    double hu = in->hu, hv = in->hv;
    /* Q's corners as box.c builds them: (cf + su uf) + sv vf. */
    cq_d4 x = (in->cf.x + su * in->uf.x) + sv * in->vf.x;
    cq_d4 y = (in->cf.y + su * in->uf.y) + sv * in->vf.y;
    cq_d4 z = (in->cf.z + su * in->uf.z) + sv * in->vf.z;
    memcpy(cd->x, &x, sizeof x), memcpy(cd->y, &y, sizeof y), memcpy(cd->z, &z, sizeof z);
    /* The rounding of the frame coordinates, and more: the passes' own. */
    double tol = cq_box_clip_tol(in);
    /* Inside every side, to tol (a NaN not kept). */
    unsigned keep = cq_l4_bits((y - hv <= tol) & (-x - hu <= tol) & (-y - hv <= tol) & (x - hu <= tol));
    cq_side s0 = cq_side_cross(x, y, z, 0, hv, tol, cd), s1 = cq_side_cross(x, y, z, 1, hu, tol, cd);
    cq_side s2 = cq_side_cross(x, y, z, 2, hv, tol, cd), s3 = cq_side_cross(x, y, z, 3, hu, tol, cd);
    /* R's corners from the chords of the lines at +v (corners 0, 1) and -v
     * (2, 3), inside them by more than tol; height on Q's plane, whose
     * normal uf x vf has a z far from 0 for an incident face (zero only for
     * a zero-size one, whose chords have no inside). */
    cq_d4 rx = su * hu, ry = sv * hv;
    cq_d4 clo = __builtin_shufflevector(s0.lo, s2.lo, 0, 1, 4, 5), chi = __builtin_shufflevector(s0.hi, s2.hi, 0, 1, 4, 5);
    cq_l4 corner = (clo < rx - tol) & (rx + tol < chi);
    keep |= cq_l4_bits(corner) << 20;
    cq_d4 rz = cq_corner_heights(in, rx, ry);
    memcpy(&cd->x[20], &rx, sizeof rx), memcpy(&cd->y[20], &ry, sizeof ry), memcpy(&cd->z[20], &rz, sizeof rz);
    /* Crossings within R along their line, to tol. Where a line at +-u
     * crosses within tol of a corner already kept, that corner is the
     * point (the two chords disagreeing by rounding). */
    keep |= cq_l4_bits(s0.crosses & (s0.a <= hu + tol) & (-s0.a <= hu + tol)) << 4;
    keep |= cq_l4_bits(s2.crosses & (s2.a <= hu + tol) & (-s2.a <= hu + tol)) << 12;
    cq_l4 near_hi = cq_l4_all(corner[1]), near_lo = cq_l4_all(corner[2]);
    cq_l4 s1_ok = s1.crosses & (s1.a <= hv + tol) & (-s1.a <= hv + tol) & ~((s1.a > hv - tol) & near_hi) &
                  ~((-s1.a > hv - tol) & near_lo);
    near_hi = cq_l4_all(corner[0]), near_lo = cq_l4_all(corner[3]);
    cq_l4 s3_ok = s3.crosses & (s3.a <= hv + tol) & (-s3.a <= hv + tol) & ~((s3.a > hv - tol) & near_hi) &
                  ~((-s3.a > hv - tol) & near_lo);
    keep |= cq_l4_bits(s1_ok) << 8 | cq_l4_bits(s3_ok) << 16;
    /* The depth filter, as cq__clip_emit's (a NaN height is not dropped). */
    unsigned high = 0;
    for (int k = 0; k < CQ_CAND; k += 4) {
        cq_d4 h;
        memcpy(&h, &cd->z[k], sizeof h);
        high |= cq_l4_bits(h > skin) << k;
    }
    return keep & ~high;
}

/* The clip, written once and compiled for two targets: the
 * vectors are kept in registers only where the target's are as wide. */
static inline __attribute__((always_inline)) int cq_clip_simd(const cq_box_clip_in *in, double skin, bool ref_is_b,
                                                               cq_contact_point out[CQ_CLIP_MAX])
{
    int ref_id = in->ref_id, inc_id = in->inc_id;
    cq_cands cd;
    unsigned keep = cq_clip_cands(in, skin, &cd);
    const uint16_t *ve = cq__box_face_eid[ref_id], *iv = cq__box_face_vid[inc_id], *ie = cq__box_face_eid[inc_id];
    const uint16_t src_a[5] = {(uint16_t)ref_id, ve[0], ve[1], ve[2], ve[3]};
    const uint16_t src_b[9] = {(uint16_t)inc_id, iv[0], iv[1], iv[2], iv[3], ie[0], ie[1], ie[2], ie[3]};
    const cq_clip_frame *fr = &in->fr;
    int m = 0;
    for (; keep; keep &= keep - 1, m++) {
        int k = __builtin_ctz(keep);
        cq_vec3 at = cq_mad(cq_mad(fr->origin, fr->u, cd.x[k]), fr->v, cd.y[k]);
        cq_feature f = {cq_cand_kind_a[k], cq_cand_kind_b[k], src_a[cq_cand_src_a[k]], src_b[cq_cand_src_b[k]]};
        out[m] = (cq_contact_point){ref_is_b ? at : cq_mad(at, fr->n, cd.z[k]), -cd.z[k],
                                    ref_is_b ? cq_feature_swap(f) : f};
    }
    return m;
}

int cq__box_clip_in_sse2(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX])
{
    return cq_clip_simd(in, skin, ref_is_b, out);
}

int cq__box_clip_box_sse2(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX])
{
    cq_box_clip_in in;
    cq__box_clip_setup(ref, ref_id, inc, inc_id, &in);
    return cq_clip_simd(&in, skin, ref_is_b, out);
}

#if CQ_HAVE_AVX2
__attribute__((target("avx2"))) int cq__box_clip_in_avx2(const cq_box_clip_in *in, double skin, bool ref_is_b,
                                                         cq_contact_point out[CQ_CLIP_MAX])
{
    return cq_clip_simd(in, skin, ref_is_b, out);
}

int cq__box_clip_box_avx2(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX])
{
    cq_box_clip_in in;
    cq__box_clip_setup(ref, ref_id, inc, inc_id, &in);
    return cq__box_clip_in_avx2(&in, skin, ref_is_b, out);
}
#endif

/* Without AVX2 the Sutherland-Hodgman passes: compiled for SSE2, gcc 12
 * splits the four-lane vectors into pairs of registers and spills them
 * (1,816 instructions a pair of `cq-bench pairs --contacts` against the
 * passes' 1,468 and AVX2's 1,238, by callgrind); the SSE2 build stays
 * tested, for a compiler that does better. */
int cq__box_clip_in_simd(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX])
{
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return cq__box_clip_in_avx2(in, skin, ref_is_b, out);
#endif
    return cq__box_clip_passes(in, skin, ref_is_b, out);
}

int cq__box_clip_box_simd(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX])
{
    cq_box_clip_in in;
    cq__box_clip_setup(ref, ref_id, inc, inc_id, &in);
    return cq__box_clip_in_simd(&in, skin, ref_is_b, out);
}

#endif
