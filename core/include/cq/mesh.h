/// @file cq/mesh.h
/// Static triangle meshes: vertices and triangles (concave and open meshes
/// allowed), built once with a BVH over the triangles and an edge adjacency
/// for internal-edge handling, read-only afterwards. Queries take the mesh
/// as the static side B at a pose: pair contacts against a convex shape,
/// rays and sweeps. Never mesh against mesh or plane.
#ifndef CQ_MESH_H
#define CQ_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "cq/api.h"
#include "cq/collision.h"
#include "cq/raycast.h"
#include "cq/sweep.h"

/// Most vertices or triangles a mesh accepts.
#define CQ_MESH_MAX_ITEMS (1 << 24)

/// Two neighbour faces count as coplanar when the cosine of the angle
/// between their normals is at least 1 - this (about 0.08 degrees).
#define CQ_MESH_COPLANAR_TOL 1e-6

/// What lies across a triangle edge, seen from the triangle's front side
/// (the side its winding v0, v1, v2 turns counter-clockwise on). From the
/// back side convex and concave trade places.
typedef enum cq_mesh_edge {
    CQ_EDGE_BOUNDARY, ///< no neighbour, more than one, or a degenerate one
    CQ_EDGE_COPLANAR, ///< the neighbour continues the plane
    CQ_EDGE_CONVEX,   ///< the neighbour bends away (a ridge)
    CQ_EDGE_CONCAVE,  ///< the neighbour bends towards the front (a valley)
} cq_mesh_edge;

struct cq_bvh;

/// A mesh in its local frame. One cq_alloc block (plus the BVH's own);
/// free with cq_mesh_free.
typedef struct cq_mesh {
    int vertex_count;
    int triangle_count;
    const cq_vec3 *vertices;
    const int (*triangles)[3];
    const cq_vec3 *normals;       ///< unit front normal per triangle; zero for a degenerate one
    const int (*neighbours)[3];   ///< triangle across edge i (v[i] to v[i+1]), -1 on a boundary
    const uint8_t (*edges)[3];    ///< cq_mesh_edge of edge i
    cq_vec3 aabb_min, aabb_max;   ///< of the vertices
    const struct cq_bvh *bvh;     ///< over the triangles' boxes
    size_t block_size;
} cq_mesh;

/// Builds a mesh from nv vertices and nt index triples. nv and nt must be
/// 1..CQ_MESH_MAX_ITEMS, indices in [0, nv) (CQ_ERANGE), coordinates
/// finite (CQ_ENOT_FINITE); CQ_ENO_MEMORY when the allocator fails. A
/// triangle of zero area is kept (its index stays valid) but never
/// produces a contact, a ray hit or a sweep hit. Edges are matched by
/// vertex index: an edge shared by exactly two non-degenerate triangles
/// is interior and classified by the angle between them. On success *out
/// is a new mesh owned by the caller; on failure *out is NULL.
CQ_API int cq_mesh_build(const cq_vec3 *vertices, int nv, const int (*triangles)[3], int nt, cq_mesh **out);

/// Frees a mesh from cq_mesh_build; NULL is ignored.
CQ_API void cq_mesh_free(cq_mesh *mesh);

/// Triangle k as a triangle shape in the mesh's frame.
CQ_API cq_shape cq_mesh_triangle(const cq_mesh *mesh, int k);

/// The pair query of q->a (any convex shape: sphere, capsule, box,
/// triangle, convex) against the mesh posed at q->xb; q->b is not read.
/// Each non-degenerate triangle whose box overlaps A's box grown by
/// q->skin is tested with cq_collide (q's skin, cache and log; its
/// counters are left to the caller, so one mesh query counts as one test),
/// in the BVH's fixed order, so the answer is deterministic. Ghost contacts
/// from internal edges are snapped to the face normal or dropped; the rest
/// merge into one contact: the best triangle's normal, depth or distance
/// and witnesses (largest depth - distance, the lower triangle index on
/// ties), every triangle's points measured again along that normal, at most
/// CQ_MAX_POINTS (docs/CORE.md, "Meshes", says how). Overlapping triangles
/// without a normal only matter when no other overlaps: the verdict is then
/// overlap with fallback action "dropped", and the depth they knew.
/// Returns CQ_OK, or CQ_EUNSUPPORTED (out untouched) when A is a plane or
/// a mesh. Never allocates.
CQ_API int cq_mesh_collide(const cq_pair_query *q, const cq_mesh *mesh, cq_contact *out);

/// A ray cast against the mesh at pose: the nearest triangle hit (each
/// double-sided, as cq_raycast on a triangle; the lower triangle index on
/// ties), found through the BVH with closest-hit pruning. A mesh is a
/// sheet, not a solid: a ray starting "inside" a closed mesh reports the
/// first surface it crosses. Status codes as cq_raycast.
CQ_API int cq_mesh_raycast(const cq_mesh *mesh, const cq_xform *pose, const cq_ray *ray, cq_ray_hit *out);

/// cq_sweep of a from xa along translation against the mesh at xm: the
/// earliest hit over the triangles the swept box of A reaches (the lower
/// index on ties); iterations is summed over the triangles swept. Status
/// codes as cq_sweep.
CQ_API int cq_mesh_sweep(const cq_shape *a, const cq_xform *xa, cq_vec3 translation, const cq_mesh *mesh,
                         const cq_xform *xm, const cq_sweep_options *opt, cq_sweep_hit *out);

#endif
