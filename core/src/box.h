/* Internal: box features (faces, edges) and box-face clipping, with the
 * feature numbering of cq_feature (collision.h). */
#ifndef CQ_BOX_H
#define CQ_BOX_H

#include <float.h>
#include <math.h>

#include "manifold.h"

/* -1 where d < 0, else 1, looked up: which it is is unpredictable, and
 * compilers turn a select between two constants into a branch. */
static inline double cq_sign_of(double d)
{
    static const double sign[2] = {1, -1};
    return sign[d < 0];
}

/* Face index of axis k on side s (s >= 0 positive side). */
static inline int cq_box_face_id(int k, double s) { return 2 * k + (s < 0); }

/* The id of the box edge along axis k at the corners' signs sign[] (the
 * other two axes' signs read, lower axis first). */
static inline uint16_t cq_box_edge_id(int k, const double sign[3])
{
    int lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2;
    return (uint16_t)(4 * k + ((sign[lo] < 0) | (sign[hi] < 0) << 1));
}

/* Builds face `id` (2k + negative side) as a world-space polygon. */
void cq__box_face(const cq_obb *box, int id, cq_face *out);

/* Drops a box face's coincident corners (a zero-size box's): the segment
 * or point it collapses to, whose normal is then dir. */
void cq__box_face_compact(cq_face *f, cq_vec3 dir);

/* The face whose outward normal is most aligned with dir. */
/* dir by address: a vector just computed, passed by value, is copied to
 * the stack with 8-byte stores and read back with a 16-byte load that
 * cannot forward from them (a stall on the box-box path). */
int cq__box_face_toward(const cq_obb *box, const cq_vec3 *dir);

/* The corner and edge ids of each face, in corner order (box.c states
 * the numbering). */
extern const uint16_t cq__box_face_vid[6][4];
extern const uint16_t cq__box_face_eid[6][4];

/* A box-box face clip's input, in the reference face's frame fr: the
 * rectangle |x| <= hu, |y| <= hv and the incident parallelogram with
 * centre cf and half-edge vectors uf, vf (corner m at cf + su[m] uf +
 * sv[m] vf, su = 1 -1 -1 1, sv = 1 1 -1 -1). */
typedef struct cq_box_clip_in {
    cq_clip_frame fr;
    double hu, hv;
    cq_vec3 cf, uf, vf;
    int ref_id, inc_id;
} cq_box_clip_in;

/* The rounding of a clip input's frame coordinates, and more: a signed
 * distance from a side line within it counts as 0 in both clips, so the
 * passes and the vector clip make the same keep-or-cut decisions. */
static inline double cq_box_clip_tol(const cq_box_clip_in *in)
{
    return 64 * DBL_EPSILON *
           (in->hu + in->hv + fabs(in->cf.x) + fabs(in->cf.y) + fabs(in->uf.x) + fabs(in->uf.y) + fabs(in->vf.x) +
            fabs(in->vf.y));
}

/* Fills in for face inc_id of inc clipped against face ref_id of ref. */
void cq__box_clip_setup(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, cq_box_clip_in *in);

/* The incident box as the SAT's frame sees it from the reference box:
 * its centre c and its axis m's coordinate k at ax[k * sc + m * sm] in
 * the reference box's coordinates (R = A^T B's entries with the strides
 * 4, 1 from A, transposed with 1, 4 from B), and its half extents. */
typedef struct cq_box_seen {
    const double *ax;
    int sc, sm;
    const double *c;
    cq_vec3 half;
} cq_box_seen;

/* cq__box_face_toward for the direction -sign e_k of the reference box's
 * frame (against its face 2k + (sign < 0)), read off the seen box's axes:
 * no dot product, and the same face wherever the largest |dot| is not a
 * tie to rounding. */
int cq__box_face_toward_seen(const cq_box_seen *inc, int k, double sign);

/* cq__box_clip_setup from the SAT's frame: the incident quad in the
 * reference face's coordinates by picking entries of R and t (no dot
 * product), the same numbers to rounding. */
void cq__box_clip_setup_seen(const cq_obb *ref, int ref_id, const cq_box_seen *inc, int inc_id, cq_box_clip_in *in);

/* The Sutherland-Hodgman passes (cq__box_clip_box) and the vector clip
 * (cq__box_clip_box_simd and its per-target forms) on a clip input
 * already set up. */
int cq__box_clip_passes(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX]);
int cq__box_clip_in_simd(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX]);
int cq__box_clip_in_sse2(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX]);
int cq__box_clip_in_avx2(const cq_box_clip_in *in, double skin, bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX]);

/* The vector clip (box_clip_simd.c): the same polygon as cq__box_clip_box
 * as a set of points (to rounding; a corner of the overlap that lies
 * within rounding of both polygons' sides may come out twice, a rounding
 * apart), every candidate found at once from one set of signed distances:
 * incident corners inside the rectangle, the crossings of each incident
 * edge with each side line, and the rectangle's corners inside the
 * incident quad, read off the chord that quad cuts from a side line.
 * Features as cq__box_clip_box's, a rectangle corner's being (the side
 * edge at +-v it lies on, the incident face). Points are in no
 * particular cyclic order. Available where CQ_HAVE_BOX_CLIP_SIMD; on a
 * CPU without AVX2 it is cq__box_clip_box (the SSE2 build measured slower). */
int cq__box_clip_box_simd(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX]);

/* The vector clip for one target each (the first two doubles to a
 * register, the second four, compiled per function): what
 * cq__box_clip_box_simd picks from, exposed for the tests. */
int cq__box_clip_box_sse2(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX]);
int cq__box_clip_box_avx2(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                          cq_contact_point out[CQ_CLIP_MAX]);

#if (defined(__SSE2__) || defined(__aarch64__)) && (defined(__GNUC__) || defined(__clang__)) && !defined(CQ_NO_SIMD) && \
    !defined(CQ_NO_BOX_CLIP_SIMD)
#define CQ_HAVE_BOX_CLIP_SIMD 1
#else
#define CQ_HAVE_BOX_CLIP_SIMD 0
#endif

/* Clips face inc_id of box inc against face ref_id of box ref (the sides are
 * axis-aligned lines in the reference face's frame, and the incident quad is
 * built straight in that frame): the points of cq__clip_polygon, on the
 * incident face, features with the reference half first. When the
 * reference is B's face (ref_is_b) the points are projected onto it instead
 * and the features have A's half first, as a contact wants them. */
int cq__box_clip_box(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin, bool ref_is_b,
                     cq_contact_point out[CQ_CLIP_MAX]);

/* Clips a world-space polygon against face `id` of the box with the
 * generic clipper (cq__clip_lines): the reference cq__box_clip_box is tested
 * against. */
int cq__box_clip(const cq_obb *box, int id, const cq_face *inc, double skin, bool onto_ref,
                 cq_contact_point out[CQ_CLIP_MAX]);

/* The edge parallel to axis k that lies farthest along dir: its end points
 * and feature index. */
uint16_t cq__box_edge_toward(const cq_obb *box, int k, const cq_vec3 *dir, cq_vec3 *p, cq_vec3 *q);

/* The box-box face clip the contact uses: the vector clip where built,
 * else the scalar Sutherland-Hodgman passes. */
static inline int cq_box_clip_fast(const cq_obb *ref, int ref_id, const cq_obb *inc, int inc_id, double skin,
                                   bool ref_is_b, cq_contact_point out[CQ_CLIP_MAX])
{
#if CQ_HAVE_BOX_CLIP_SIMD
    return cq__box_clip_box_simd(ref, ref_id, inc, inc_id, skin, ref_is_b, out);
#else
    return cq__box_clip_box(ref, ref_id, inc, inc_id, skin, ref_is_b, out);
#endif
}

/* cq_box_clip_fast on a clip input already set up. */
static inline int cq_box_clip_fast_in(const cq_box_clip_in *in, double skin, bool ref_is_b,
                                      cq_contact_point out[CQ_CLIP_MAX])
{
#if CQ_HAVE_BOX_CLIP_SIMD
    return cq__box_clip_in_simd(in, skin, ref_is_b, out);
#else
    return cq__box_clip_passes(in, skin, ref_is_b, out);
#endif
}

#endif
