/* A convex shape against a static mesh: the triangles the BVH finds near A
 * are tested one by one with the ordinary pair query, contacts from
 * internal edges are given their face normal (ghost collisions), and the
 * triangle contacts are merged into one. */
#include "bvh.h"
#include "cq/gjk.h"
#include "cq/mesh.h"
#include "cq/proxy.h"
#include "manifold.h"
#include "narrow.h"

/* A normal within this of the face normal (1 - |cos|) is the face normal. */
#define MESH_FACE_COS_TOL 1e-9

/* Room for the kept points and one more triangle's. */
#define MESH_POINT_BUF (2 * CQ_MAX_POINTS)

/* Snapped contacts held back until every face contact is known, and the
 * distinct face-contact normals kept to compare them with. */
#define MESH_DEFER_MAX 8

typedef struct mesh_deferred {
    int k;
    cq_contact c;
} mesh_deferred;

/* What the internal-edge rule did to a triangle contact. */
typedef enum mesh_edge_outcome {
    MESH_FACE,    /* the normal was the face normal already */
    MESH_KEPT,    /* from a boundary or convex feature: a real contact */
    MESH_SNAPPED, /* from an internal feature: now the face contact */
} mesh_edge_outcome;

typedef struct mesh_pair_ctx {
    const cq_pair_query *q;
    const cq_mesh *m;
    cq_proxy pa;
    cq_contact *out;
    int best;          /* triangle of the chosen contact, -1 for none */
    double best_key;   /* its depth - distance */
    int dropped;       /* a triangle overlapping without a normal, -1 for none */
    cq_fallback_reason dropped_reason;
    int np;
    cq_contact_point pts[MESH_POINT_BUF];
    int nface, ndefer;
    cq_vec3 face_normals[MESH_DEFER_MAX];
    mesh_deferred defer[MESH_DEFER_MAX];
} mesh_pair_ctx;

/* The world corner i of triangle k. */
static cq_vec3 mesh_corner(const cq_mesh *m, const cq_xform *x, int k, int i)
{
    return cq_xform_point(x, m->vertices[m->triangles[k][i]]);
}

/* Whether edge e of triangle k joins the surface smoothly or in a valley
 * as seen from the front (front) or back side: then no contact normal can
 * come from it. */
static bool mesh_edge_internal(const cq_mesh *m, int k, int e, bool front)
{
    int kind = m->edges[k][e];
    return kind == CQ_EDGE_COPLANAR || kind == (front ? CQ_EDGE_CONCAVE : CQ_EDGE_CONVEX);
}

/* Whether the contact normal n (A to B) of triangle k, which is not its
 * face normal, leans only towards internal edges: the edges whose outward
 * in-plane direction has a positive share of n's in-plane part (one edge,
 * or the two at a vertex). */
static bool mesh_from_internal_feature(const mesh_pair_ctx *c, int k, cq_vec3 n, cq_vec3 face_n, bool front)
{
    cq_vec3 lean = cq_mad(cq_neg(n), face_n, cq_dot(n, face_n));
    int facing = 0;
    for (int e = 0; e < 3; e++) {
        cq_vec3 a = mesh_corner(c->m, &c->q->xb, k, e), b = mesh_corner(c->m, &c->q->xb, k, (e + 1) % 3);
        cq_vec3 side = cq_cross(cq_sub(b, a), face_n); /* outward for the front winding */
        if (!(cq_dot(lean, side) > 0))
            continue;
        if (!mesh_edge_internal(c->m, k, e, front))
            return false;
        facing++;
    }
    return facing > 0;
}

/* How far A reaches beyond the plane through p0 along the unit dir. */
static double mesh_reach(const mesh_pair_ctx *c, cq_vec3 dir, cq_vec3 p0)
{
    int s = cq_proxy_support(&c->pa, cq_mul_mtv(&c->q->xa.r, dir));
    return cq_dot(dir, cq_sub(cq_xform_point(&c->q->xa, c->pa.points[s]), p0)) + c->pa.radius;
}

/* Replaces a contact from an internal feature by the face contact: normal
 * -outward, each point's A end projected onto the face plane, the depth of
 * A's deepest point below the plane (or its distance above it). */
static void mesh_to_face(const mesh_pair_ctx *c, int k, cq_vec3 nf, cq_contact *t)
{
    const cq_pair_query *q = c->q;
    cq_vec3 p0 = mesh_corner(c->m, &q->xb, k, 0);
    for (int i = 0; i < t->point_count; i++) {
        cq_contact_point *p = &t->points[i];
        cq_vec3 a = cq_mad(p->position, t->normal, p->depth);
        p->depth = cq_dot(nf, cq_sub(a, p0));
        p->position = cq_mad(a, nf, -p->depth);
    }
    int s = cq_proxy_support(&c->pa, cq_mul_mtv(&q->xa.r, nf));
    cq_vec3 deep = cq_mad(cq_xform_point(&q->xa, c->pa.points[s]), nf, c->pa.radius);
    double depth = cq_dot(nf, cq_sub(deep, p0));
    t->normal = nf;
    t->depth = depth > 0 ? depth : 0;
    t->distance = depth < 0 ? -depth : 0;
    t->has_distance = depth < 0;
    t->witness_a = depth < 0 ? deep : cq_v3(0, 0, 0);
    t->witness_b = depth < 0 ? cq_mad(deep, nf, -depth) : cq_v3(0, 0, 0);
    t->sat_axis = -1;
    t->normal_axis = -1;
}

static mesh_edge_outcome mesh_internal_edges(const mesh_pair_ctx *c, int k, cq_contact *t)
{
    cq_vec3 face_n = cq_mul_mv(&c->q->xb.r, c->m->normals[k]);
    if (1 - fabs(cq_dot(t->normal, face_n)) <= MESH_FACE_COS_TOL)
        return MESH_FACE;
    /* A's side is where more of it lies: an edge normal may be parallel
     * to the face and say nothing about the side. */
    cq_vec3 p0 = mesh_corner(c->m, &c->q->xb, k, 0);
    bool front = mesh_reach(c, face_n, p0) >= mesh_reach(c, cq_neg(face_n), p0);
    if (!mesh_from_internal_feature(c, k, t->normal, face_n, front))
        return MESH_KEPT;
    mesh_to_face(c, k, front ? cq_neg(face_n) : face_n, t);
    return MESH_SNAPPED;
}

/* Adds triangle k's contact: the best one by depth - distance (lower index
 * on ties), and its points reduced about the best normal so far. */
static void mesh_merge(mesh_pair_ctx *c, int k, const cq_contact *t)
{
    if (!t->has_normal) {
        if (c->dropped < 0 || k < c->dropped)
            c->dropped = k, c->dropped_reason = t->fallback_reason;
        return;
    }
    double key = t->depth - t->distance;
    if (c->best < 0 || key > c->best_key || (key == c->best_key && k < c->best)) {
        c->best = k, c->best_key = key;
        *c->out = *t; /* its points are copied from c->pts at the end */
    }
    for (int i = 0; i < t->point_count; i++)
        c->pts[c->np++] = t->points[i];
    if (c->np > CQ_MAX_POINTS)
        c->np = cq_reduce_manifold(c->pts, c->np, c->out->normal);
}

static bool mesh_has_face(const mesh_pair_ctx *c, cq_vec3 n)
{
    for (int i = 0; i < c->nface; i++)
        if (cq_dot(n, c->face_normals[i]) >= 1 - CQ_MESH_COPLANAR_TOL)
            return true;
    return false;
}

static bool mesh_visit(void *ctx, int k)
{
    mesh_pair_ctx *c = ctx;
    if (cq_len2(c->m->normals[k]) == 0)
        return true; /* degenerate: no contact */
    cq_shape tri = cq_mesh_triangle(c->m, k);
    cq_pair_query tq = *c->q;
    tq.b = &tri;
    tq.counters = NULL; /* one pair query is one test, counted by the caller */
    cq_contact t;
    if (cq_collide(&tq, &t) != CQ_OK || !t.overlap)
        return true;
    mesh_edge_outcome o = t.has_normal ? mesh_internal_edges(c, k, &t) : MESH_KEPT;
    if (o == MESH_SNAPPED && c->ndefer < MESH_DEFER_MAX) {
        c->defer[c->ndefer++] = (mesh_deferred){k, t};
        return true;
    }
    if (o == MESH_FACE && c->nface < MESH_DEFER_MAX && !mesh_has_face(c, t.normal))
        c->face_normals[c->nface++] = t.normal;
    mesh_merge(c, k, &t);
    return true;
}

/* The snapped contacts: one whose face normal some triangle's own face
 * contact already has adds nothing but a point beside that face's points
 * (the ghost's remains), so it is dropped; the others are merged. */
static void mesh_merge_deferred(mesh_pair_ctx *c)
{
    for (int i = 0; i < c->ndefer; i++)
        if (!mesh_has_face(c, c->defer[i].c.normal))
            mesh_merge(c, c->defer[i].k, &c->defer[i].c);
}

/* Nothing with a normal overlapped but some triangle did: the verdict
 * stands without a normal. */
static void mesh_dropped(const mesh_pair_ctx *c, cq_contact *out)
{
    out->overlap = true;
    out->fallback_reason = c->dropped_reason;
    out->fallback_action = CQ_FBA_DROPPED;
}

void cq_mesh_pair(const cq_pair_query *q, cq_contact *out)
{
    cq_algorithm alg = out->algorithm;
    cq_mesh_collide(q, q->b->mesh.mesh, out);
    out->algorithm = alg;
}

int cq_mesh_collide(const cq_pair_query *q, const cq_mesh *mesh, cq_contact *out)
{
    cq_vec3 store[CQ_PROXY_STORAGE];
    mesh_pair_ctx c = {.q = q, .m = mesh, .out = out, .best = -1, .dropped = -1};
    if (cq_shape_proxy(q->a, store, &c.pa) != CQ_OK)
        return CQ_EUNSUPPORTED; /* planes and meshes: not convex */
    *out = (cq_contact){.sat_axis = -1, .normal_axis = -1};
    cq_xform rel = cq_xform_relative(&q->xb, &q->xa);
    cq_aabb box = cq_aabb_fatten(cq_shape_aabb(q->a, &rel), q->skin);
    cq_bvh_query_aabb(mesh->bvh, &box, mesh_visit, &c);
    mesh_merge_deferred(&c);
    if (c.best < 0) {
        if (c.dropped >= 0)
            mesh_dropped(&c, out);
        return CQ_OK;
    }
    c.np = cq_reduce_manifold(c.pts, c.np, out->normal);
    out->sat_axis = -1; /* a triangle's SAT axis says nothing about the mesh */
    out->sat_gap = 0;
    out->point_count = c.np;
    for (int i = 0; i < c.np; i++)
        out->points[i] = c.pts[i];
    return CQ_OK;
}
