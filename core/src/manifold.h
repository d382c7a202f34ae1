/* Internal: contact manifolds by reference/incident face clipping
 * (Sutherland-Hodgman against the reference face's side planes) and the
 * reduction to at most CQ_MAX_POINTS points. Shared by every polygonal pair. */
#ifndef CQ_MANIFOLD_H
#define CQ_MANIFOLD_H

#include <float.h>

#include "cq/collision.h"

/* Largest face polygon the clipper accepts, and its output bound. */
#define CQ_FACE_MAX 64
#define CQ_CLIP_MAX (2 * CQ_FACE_MAX)

/* A convex face polygon in world space. Winding may be either way. */
typedef struct cq_face {
    int count;                  /* 1..CQ_FACE_MAX (1 or 2 for a point or segment) */
    cq_vec3 v[CQ_FACE_MAX];     /* vertices in order around the face */
    uint16_t vid[CQ_FACE_MAX];  /* feature index of vertex k */
    uint16_t eid[CQ_FACE_MAX];  /* feature index of the edge from v[k] to v[k+1] */
    cq_vec3 normal;             /* outward unit normal */
    uint16_t fid;               /* feature index of the face */
} cq_face;

/* A reference face's frame: origin on the face, unit in-plane axes u and
 * v, outward unit normal n. Clipping runs in its coordinates (x, y, height). */
typedef struct cq_clip_frame {
    cq_vec3 origin, u, v, n;
} cq_clip_frame;

/* A side of the reference face in frame coordinates: inside where
 * a x + b y <= d; edge is the reference edge's feature index. */
typedef struct cq_clip_line {
    double a, b, d;
    uint16_t edge;
} cq_clip_line;

/* A vertex being clipped, in frame coordinates (z = height above the
 * reference plane), with its feature (A half: the reference's; B half: the
 * incident's) and the incident edge that the segment to the next vertex lies
 * on (-1 when it runs along a side, made by a cut). 32 bytes: cheap to copy. */
typedef struct cq_clip_vertex {
    double x, y, z;
    cq_feature f;
    int16_t out_edge;
} cq_clip_vertex;

/* Clips the incident polygon poly[0][0..n) (frame coordinates; poly[1] is
 * scratch) against the lines and keeps the points no more than skin above
 * the reference plane. Each output point has depth = distance below the
 * plane (positive = penetrating); a cut point's feature is (the side edge
 * that cut it, the incident edge it lies on). An incident segment (n = 2)
 * lying along a side within seg_noise, the rounding of its coordinates, is
 * kept whole (0: no such rule). With onto_ref the position is projected
 * onto the reference plane, else it stays on the incident polygon. Returns
 * the number of points (<= CQ_CLIP_MAX). */
int cq__clip_polygon(const cq_clip_frame *frame, const cq_clip_line *lines, int nlines,
                     cq_clip_vertex poly[2][CQ_CLIP_MAX], int n, uint16_t inc_face, double seg_noise, double skin,
                     bool onto_ref, cq_contact_point out[CQ_CLIP_MAX]);

/* The tail of every clip: keeps the vertices no more than skin above the
 * reference plane and writes them as contact points (depth = -z; on the
 * incident polygon, or projected onto the reference plane with onto_ref). */
int cq__clip_emit(const cq_clip_frame *frame, const cq_clip_vertex *v, int n, double skin, bool onto_ref,
                  cq_contact_point out[CQ_CLIP_MAX]);

/* cq__clip_polygon for an incident face given in world space. */
int cq__clip_lines(const cq_clip_frame *frame, const cq_clip_line *lines, int nlines, uint16_t ref_face,
                   const cq_face *inc, double skin, bool onto_ref, cq_contact_point out[CQ_CLIP_MAX]);

/* cq__clip_lines with the frame and lines taken from a reference polygon
 * (any winding; a reference with fewer than 3 vertices clips nothing). */
int cq__clip_face(const cq_face *ref, const cq_face *inc, double skin, bool onto_ref,
                  cq_contact_point out[CQ_CLIP_MAX]);

/* cq__clip_face seen along unit dir instead of the reference's normal (dir
 * facing out of the reference, within 90 degrees of its normal): each
 * incident point is projected onto the reference plane along dir, not
 * square to it, and its depth is measured along dir, so a point and its
 * partner on the reference lie on one line along the contact normal. */
int cq__clip_face_along(const cq_face *ref, const cq_face *inc, cq_vec3 dir, double skin, bool onto_ref,
                        cq_contact_point out[CQ_CLIP_MAX]);

/* A triangle as a clipping polygon with outward normal n (features: vertex
 * i, edge i from t[i], face 0). A flat one goes in as the segment or point
 * it collapses to, its longest edge, so the clip does not run back and
 * forth along a line. */
cq_face cq__triangle_face(const cq_vec3 t[3], cq_vec3 n, bool flat);

/* The feature of a posed convex shape (not a plane) facing dir: a face
 * (count >= 3, outward normal), a segment (a capsule's axis, a flat
 * triangle, a segment hull) or a point. False when it does not fit a
 * cq_face (a hull face of more than CQ_FACE_MAX vertices). */
bool cq__shape_face(const cq_shape *s, const cq_xform *x, cq_vec3 dir, cq_face *out);

/* A line contact (geom.h) for a segment feature that no face clip
 * reached. fa and fb are A's feature facing B and B's facing A, one of
 * them a segment, n the unit normal from A to B, ra and rb the rounding
 * radii. Writes the two ends of the segment's overlap with the other's
 * nearest edge, on B's rounded surface, each with its depth along n and
 * its feature, and returns 2; or returns 0 when there is no such line. */
int cq__line_contact(const cq_face *fa, const cq_face *fb, cq_vec3 n, double ra, double rb, double skin,
                     cq_contact_point out[2]);

/* Whether two computed points are one to rounding: within 4 ulps of their
 * coordinates (a box's corners p +- h axis with h far below an ulp of p,
 * or a clip of such a face, repeat a point). */
static inline bool cq_coincident(cq_vec3 a, cq_vec3 b)
{
    double r = 4 * DBL_EPSILON * cq_larger(cq_max_abs(a), cq_max_abs(b));
    return cq_len2(cq_sub(a, b)) <= r * r;
}

/* Drops each point of pts (in place) that coincides with an earlier one,
 * keeping the first; returns the new count. */
int cq__drop_coincident(cq_contact_point *pts, int n);

/* Keeps at most CQ_MAX_POINTS of pts (in place): the deepest, the one
 * farthest from it, then the two that add the most area in the plane
 * orthogonal to normal. Returns the new count. Deterministic: ties keep the
 * earlier point. */
int cq__reduce_manifold(cq_contact_point *pts, int n, cq_vec3 normal);

/* cq__reduce_manifold written to out, pts left as they are. With no more
 * than CQ_MAX_POINTS points all CQ_MAX_POINTS slots are copied, so pts must
 * have that many (those past n carry nothing). */
int cq__reduce_manifold_to(const cq_contact_point *pts, int n, cq_vec3 normal, cq_contact_point out[CQ_MAX_POINTS]);

/* Swaps the A and B halves of a feature id. */
static inline cq_feature cq_feature_swap(cq_feature f)
{
    return (cq_feature){f.kind_b, f.kind_a, f.index_b, f.index_a};
}

#endif
