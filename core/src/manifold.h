/* Internal: contact manifolds by reference/incident face clipping
 * (Sutherland-Hodgman against the reference face's side planes) and the
 * reduction to at most CQ_MAX_POINTS points. Shared by every polygonal pair. */
#ifndef CQ_MANIFOLD_H
#define CQ_MANIFOLD_H

#include "cq/collision.h"

/* Largest face polygon the clipper accepts, and its output bound. */
#define CQ_FACE_MAX 32
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

/* Clips inc against the side planes of ref and keeps the points no more than
 * skin in front of ref's plane. Each output point has depth = distance behind
 * ref's plane (positive = penetrating) and a feature whose A half is ref's
 * (face, or the side edge that cut it) and whose B half is inc's (vertex, or
 * the edge that was cut). With onto_ref the position is projected onto ref's
 * plane, else it stays on inc. Returns the number of points (<= CQ_CLIP_MAX). */
int cq_clip_face(const cq_face *ref, const cq_face *inc, double skin, bool onto_ref,
                 cq_contact_point out[CQ_CLIP_MAX]);

/* Keeps at most CQ_MAX_POINTS of pts (in place): the deepest, the one
 * farthest from it, then the two that add the most area in the plane
 * orthogonal to normal. Returns the new count. Deterministic: ties keep the
 * earlier point. */
int cq_reduce_manifold(cq_contact_point *pts, int n, cq_vec3 normal);

/* Swaps the A and B halves of a feature id. */
static inline cq_feature cq_feature_swap(cq_feature f)
{
    return (cq_feature){f.kind_b, f.kind_a, f.index_b, f.index_a};
}

#endif
