/* cq_mesh_build: validation, face normals, the edge adjacency and its
 * classification, the BVH, and the one-block layout. */
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "cq/alloc.h"
#include "cq/mesh.h"

/* A triangle is degenerate when its area is below this fraction of its
 * longest edge squared: its normal would be rounding noise. */
#define MESH_FLAT_REL 1e-12

/* One directed triangle edge, keyed by its vertex indices in order. */
typedef struct mesh_edge_rec {
    int lo, hi, tri, edge;
} mesh_edge_rec;

/* Byte offsets of the arrays in the block (each 8-byte aligned). */
typedef struct mesh_layout {
    size_t bvh, vertices, normals, triangles, neighbours, edges, total;
} mesh_layout;

static size_t mesh_align(size_t n) { return (n + 7) & ~(size_t)7; }

static mesh_layout mesh_layout_of(int nv, int nt)
{
    mesh_layout l;
    size_t t = (size_t)nt;
    l.bvh = mesh_align(sizeof(cq_mesh));
    l.vertices = l.bvh + mesh_align(sizeof(cq_bvh));
    l.normals = l.vertices + mesh_align(sizeof(cq_vec3) * (size_t)nv);
    l.triangles = l.normals + mesh_align(sizeof(cq_vec3) * t);
    l.neighbours = l.triangles + mesh_align(sizeof(int[3]) * t);
    l.edges = l.neighbours + mesh_align(sizeof(int[3]) * t);
    l.total = l.edges + mesh_align(sizeof(uint8_t[3]) * t);
    return l;
}

static int mesh_validate(const cq_vec3 *v, int nv, const int (*tri)[3], int nt)
{
    if (!v || !tri || nv < 1 || nv > CQ_MESH_MAX_ITEMS || nt < 1 || nt > CQ_MESH_MAX_ITEMS)
        return CQ_ERANGE;
    for (int i = 0; i < nv; i++)
        if (!cq_v3_finite(v[i]))
            return CQ_ENOT_FINITE;
    for (int k = 0; k < nt; k++)
        for (int i = 0; i < 3; i++)
            if (tri[k][i] < 0 || tri[k][i] >= nv)
                return CQ_ERANGE;
    return CQ_OK;
}

/* The unit front normal, or zero for a degenerate triangle. */
static cq_vec3 mesh_normal(const cq_vec3 *v, const int t[3])
{
    cq_vec3 a = v[t[0]], b = v[t[1]], c = v[t[2]], n;
    double l2 = fmax(cq_len2(cq_sub(b, a)), fmax(cq_len2(cq_sub(c, b)), cq_len2(cq_sub(a, c))));
    double tiny = MESH_FLAT_REL * l2;
    if (!cq_normalize(cq_cross(cq_sub(b, a), cq_sub(c, a)), tiny * tiny, &n))
        return cq_v3(0, 0, 0);
    return n;
}

static int mesh_edge_less(const void *pa, const void *pb)
{
    const mesh_edge_rec *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    if (a->tri != b->tri)
        return a->tri < b->tri ? -1 : 1;
    return a->edge < b->edge ? -1 : (a->edge > b->edge);
}

/* How triangle t sees its neighbour u across edge e. The neighbour's normal
 * is flipped when it runs the shared edge the same way (inconsistent
 * winding), so the comparison is between the sides that meet. */
static uint8_t mesh_classify(const cq_mesh *m, int t, int e, int u)
{
    const int *tt = m->triangles[t], *tu = m->triangles[u];
    cq_vec3 nt = m->normals[t], nu = m->normals[u];
    int a = tt[e], b = tt[(e + 1) % 3], opposite = tu[0];
    for (int i = 0; i < 3; i++) {
        if (tu[i] == a && tu[(i + 1) % 3] == b)
            nu = cq_neg(nu);
        if (tu[i] != a && tu[i] != b)
            opposite = tu[i];
    }
    if (cq_dot(nt, nu) >= 1 - CQ_MESH_COPLANAR_TOL)
        return CQ_EDGE_COPLANAR;
    double side = cq_dot(nt, cq_sub(m->vertices[opposite], m->vertices[a]));
    return side < 0 ? CQ_EDGE_CONVEX : CQ_EDGE_CONCAVE;
}

/* Pairs the edges of non-degenerate triangles by vertex indices: an edge
 * met exactly twice links its two triangles; once or three times or more,
 * it is a boundary. */
static int mesh_adjacency(cq_mesh *m, int (*nb)[3], uint8_t (*kind)[3])
{
    int nt = m->triangle_count, n = 0;
    size_t size = sizeof(mesh_edge_rec) * 3 * (size_t)nt;
    mesh_edge_rec *r = cq_alloc(size);
    if (!r)
        return CQ_ENO_MEMORY;
    for (int k = 0; k < nt; k++) {
        for (int e = 0; e < 3; e++) {
            nb[k][e] = -1;
            kind[k][e] = CQ_EDGE_BOUNDARY;
        }
        if (cq_len2(m->normals[k]) == 0)
            continue;
        for (int e = 0; e < 3; e++) {
            int a = m->triangles[k][e], b = m->triangles[k][(e + 1) % 3];
            r[n++] = (mesh_edge_rec){a < b ? a : b, a < b ? b : a, k, e};
        }
    }
    qsort(r, (size_t)n, sizeof *r, mesh_edge_less);
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && r[j].lo == r[i].lo && r[j].hi == r[i].hi)
            j++;
        if (j - i == 2) {
            nb[r[i].tri][r[i].edge] = r[i + 1].tri;
            nb[r[i + 1].tri][r[i + 1].edge] = r[i].tri;
        }
        i = j;
    }
    cq_free(r, size);
    for (int k = 0; k < nt; k++)
        for (int e = 0; e < 3; e++)
            if (nb[k][e] >= 0)
                kind[k][e] = mesh_classify(m, k, e, nb[k][e]);
    return CQ_OK;
}

/* The BVH over the triangles' local boxes. */
static int mesh_bvh(cq_mesh *m, cq_bvh *bvh)
{
    size_t size = sizeof(cq_aabb) * (size_t)m->triangle_count;
    cq_aabb *boxes = cq_alloc(size);
    if (!boxes)
        return CQ_ENO_MEMORY;
    for (int k = 0; k < m->triangle_count; k++) {
        cq_vec3 p = m->vertices[m->triangles[k][0]];
        boxes[k] = (cq_aabb){p, p};
        for (int i = 1; i < 3; i++) {
            p = m->vertices[m->triangles[k][i]];
            boxes[k] = cq_aabb_union(boxes[k], (cq_aabb){p, p});
        }
    }
    int status = cq__bvh_build(bvh, boxes, m->triangle_count);
    cq_free(boxes, size);
    return status;
}

int cq_mesh_build(const cq_vec3 *vertices, int nv, const int (*triangles)[3], int nt, cq_mesh **out)
{
    *out = NULL;
    int status = mesh_validate(vertices, nv, triangles, nt);
    if (status != CQ_OK)
        return status;
    mesh_layout l = mesh_layout_of(nv, nt);
    unsigned char *block = cq_alloc(l.total);
    if (!block)
        return CQ_ENO_MEMORY;
    memset(block, 0, l.total);
    cq_mesh *m = (cq_mesh *)block;
    cq_vec3 *v = (cq_vec3 *)(block + l.vertices), *normals = (cq_vec3 *)(block + l.normals);
    int(*tri)[3] = (int(*)[3])(block + l.triangles);
    memcpy(v, vertices, sizeof *v * (size_t)nv);
    memcpy(tri, triangles, sizeof *tri * (size_t)nt);
    *m = (cq_mesh){.vertex_count = nv, .triangle_count = nt, .vertices = v, .triangles = (const int(*)[3])tri,
                   .normals = normals, .aabb_min = v[0], .aabb_max = v[0], .block_size = l.total};
    for (int i = 1; i < nv; i++) {
        cq_aabb box = cq_aabb_union((cq_aabb){m->aabb_min, m->aabb_max}, (cq_aabb){v[i], v[i]});
        m->aabb_min = box.min, m->aabb_max = box.max;
    }
    for (int k = 0; k < nt; k++)
        normals[k] = mesh_normal(v, tri[k]);
    int(*nb)[3] = (int(*)[3])(block + l.neighbours);
    uint8_t(*kind)[3] = (uint8_t(*)[3])(block + l.edges);
    m->neighbours = (const int(*)[3])nb;
    m->edges = (const uint8_t(*)[3])kind;
    cq_bvh *bvh = (cq_bvh *)(block + l.bvh);
    m->bvh = bvh;
    status = mesh_adjacency(m, nb, kind);
    if (status == CQ_OK)
        status = mesh_bvh(m, bvh);
    if (status != CQ_OK) {
        cq_free(block, l.total);
        return status;
    }
    *out = m;
    return CQ_OK;
}

void cq_mesh_free(cq_mesh *mesh)
{
    if (!mesh)
        return;
    cq__bvh_free((cq_bvh *)mesh->bvh);
    cq_free(mesh, mesh->block_size);
}

cq_shape cq_mesh_triangle(const cq_mesh *mesh, int k)
{
    const int *t = mesh->triangles[k];
    return (cq_shape){.type = CQ_TRIANGLE,
                      .triangle = {{mesh->vertices[t[0]], mesh->vertices[t[1]], mesh->vertices[t[2]]}}};
}
