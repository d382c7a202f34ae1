/* Random small meshes for the property suites, and the oracle for a posed
 * mesh's surface: its distance from a point, computed triangle by
 * triangle from the vertices, never by the mesh code. */
#ifndef CQ_MESH_GEN_H
#define CQ_MESH_GEN_H

#include "cq/mesh.h"
#include "testutil.h"

/* The families tm_random draws from. */
typedef enum tm_family {
    TM_FLAT_GRID,  /* a flat grid of 1 to 3 cells a side, split into triangles */
    TM_BUMPY_GRID, /* the same with random heights: convex and concave edges */
    TM_VALLEY,     /* two quads meeting at a random angle, valley or ridge */
    TM_CLOSED_BOX, /* a box's 12 triangles, wound outward */
    TM_SOUP,       /* 2 to 6 unrelated random triangles */
    TM_FAMILIES
} tm_family;

/* A random mesh of the family, its vertices within about scale of the
 * origin. The caller frees it with cq_mesh_free. */
cq_mesh *tm_random(tu_rng *rng, tm_family family, double scale);

/* Oracle: the distance of world point p from the mesh posed at x (the least
 * over its non-degenerate triangles of the exact point-triangle distance):
 * 0 on the surface, never negative (a mesh is a sheet). */
double tm_distance(const cq_mesh *m, const cq_xform *x, cq_vec3 p);

/* The farthest a vertex lies from the mesh's origin. */
double tm_extent(const cq_mesh *m);

/* Up to max world points on the posed mesh's surface (vertices, then
 * triangle centroids) for penetration bounds; returns how many. */
int tm_samples(const cq_mesh *m, const cq_xform *x, cq_vec3 *out, int max);

#endif
