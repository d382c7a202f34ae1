/* A convex shape against a static mesh: the triangles the BVH finds near A
 * are tested one by one with the ordinary pair query, contacts from
 * internal edges are given their face normal (ghost collisions), and the
 * triangle contacts are merged into one: the deepest triangle's normal and
 * depth, and every triangle's points measured again along that normal. */
#include <string.h>

#include "bvh.h"
#include "cq/gjk.h"
#include "cq/mesh.h"
#include "cq/proxy.h"
#include "manifold.h"
#include "narrow.h"

/* A normal within this of the face normal (1 - |cos|) is the face normal. */
#define MESH_FACE_COS_TOL 1e-9

/* Candidate points held for measuring along the merged normal: 16
 * triangles' worth; past that they are measured and reduced early. */
#define MESH_POINT_BUF (16 * CQ_MAX_POINTS)

/* Snapped contacts held back until every face contact is known, and the
 * distinct face-contact normals kept to compare them with. */
#define MESH_DEFER_MAX 8

typedef struct mesh_deferred {
    int k;
    cq_vec3 along; /* the normal its points were measured along */
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
    double dropped_depth; /* the most such a triangle knew A to reach in */
    double tol;           /* rounding allowed a measured point over the depth */
    int np;
    cq_contact_point pts[MESH_POINT_BUF]; /* on the mesh: B's surface */
    cq_vec3 along[MESH_POINT_BUF];        /* the normal each depth is measured along */
    int tri[MESH_POINT_BUF];              /* the triangle each lies on */
    int nface, ndefer;
    cq_vec3 face_normals[MESH_DEFER_MAX];
    cq_vec3 face_points[MESH_DEFER_MAX]; /* a corner of each one's triangle */
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

/* Whether point x of triangle k's plane lies in the triangle (within a
 * 1e-9 part of each edge's length). */
static bool mesh_in_triangle(const mesh_pair_ctx *c, int k, cq_vec3 face_n, cq_vec3 x)
{
    for (int e = 0; e < 3; e++) {
        cq_vec3 a = mesh_corner(c->m, &c->q->xb, k, e), b = mesh_corner(c->m, &c->q->xb, k, (e + 1) % 3);
        cq_vec3 ab = cq_sub(b, a);
        if (cq_dot(cq_cross(ab, cq_sub(x, a)), face_n) < -1e-9 * cq_len2(ab))
            return false;
    }
    return true;
}

/* Where a line along n through p (on the mesh) meets A, from beyond A:
 * A's own ray cast. A line along one of A's faces (a box's corner lies in
 * two) grazes it, and rounding decides whether it hits: then the line a
 * tenth of the tolerance nearer A's centre is cast, which moves the
 * answer by no more. False where both miss A. */
static bool mesh_cast_line(const mesh_pair_ctx *c, cq_vec3 p, cq_vec3 n, cq_vec3 *a)
{
    cq_vec3 in = cq_sub(c->q->xa.p, p);
    in = cq_mad(in, n, -cq_dot(in, n));
    double l = cq_len(in);
    return cq__surface_on_line(c->q->a, &c->q->xa, p, cq_neg(n), a) ||
           (l > 0 && cq__surface_on_line(c->q->a, &c->q->xa, cq_mad(p, in, 0.1 * c->tol / l), cq_neg(n), a));
}

/* Whether a depth h measured along a line keeps its point: within the
 * skin (less the rounding of a depth measured twice: a level box's corner
 * carried along a normal 1e-8 off the face's is 4e-9 above it at skin 0)
 * and no deeper than most. */
static bool mesh_depth_ok(const mesh_pair_ctx *c, double h, double most)
{
    return h >= -c->q->skin - c->tol && h <= most;
}

/* The manifold of a snapped contact, built for its face normal nf: A's
 * feature facing nf clipped against triangle k (the reference, B's
 * surface). The triangle's own contact was found along another normal (an
 * internal edge's), and its points, carried along nf, may not lie on A at
 * all: a box standing in a flat floor near a coplanar edge got a normal
 * along the floor, points on that edge, and none after the snap. A clipped
 * point lies on the triangle and, moved by its depth along nf, on A's
 * feature; a rounded A's points are measured by its own cast instead (its
 * core moved by the radius is on its surface only where nf is the core's
 * normal there). False, the points left as they are, where none is kept:
 * A's feature lies past the triangle (a ball inside a closed box, beside
 * the top face, snapped from the back side to its normal), and the old
 * points, carried along nf by the merge, are all there is. */
static bool mesh_face_points(const mesh_pair_ctx *c, int k, cq_vec3 nf, cq_contact *t)
{
    cq_face inc, ref;
    if (c->q->skip_manifold || !cq__shape_face(c->q->a, &c->q->xa, nf, &inc))
        return false;
    cq_vec3 v[3] = {mesh_corner(c->m, &c->q->xb, k, 0), mesh_corner(c->m, &c->q->xb, k, 1),
                    mesh_corner(c->m, &c->q->xb, k, 2)};
    ref = cq__triangle_face(v, cq_neg(nf), false);
    cq_contact_point pts[CQ_CLIP_MAX];
    double r = c->pa.radius;
    int n = cq__clip_face(&ref, &inc, c->q->skin + r, true, pts), m = 0;
    for (int i = 0; i < n; i++) {
        cq_contact_point p = pts[i];
        p.feature = cq_feature_swap(p.feature); /* the clip names the reference (B) first */
        p.depth += r;
        cq_vec3 a;
        if (r > 0 && !(mesh_cast_line(c, p.position, nf, &a) && (p.depth = cq_dot(nf, cq_sub(a, p.position)), true)))
            continue;
        if (mesh_depth_ok(c, p.depth, t->depth + c->tol))
            pts[m++] = p;
    }
    if (m == 0)
        return false;
    t->point_count = cq__reduce_manifold_to(pts, m, nf, t->points);
    return true;
}

/* Replaces a contact from an internal feature by the face contact: normal
 * -outward, the depth of A's deepest point below the plane (or its
 * distance above it), and the points of A's feature facing the plane
 * where it has some. Returns the normal its points are measured along. */
static cq_vec3 mesh_to_face(const mesh_pair_ctx *c, int k, cq_vec3 nf, cq_contact *t)
{
    cq_vec3 along = t->normal;
    const cq_pair_query *q = c->q;
    cq_vec3 p0 = mesh_corner(c->m, &q->xb, k, 0);
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
    return mesh_face_points(c, k, nf, t) ? nf : along;
}

/* The internal-edge rule on triangle k's contact t; *along becomes the
 * normal t's points are measured along. */
static mesh_edge_outcome mesh_internal_edges(const mesh_pair_ctx *c, int k, cq_contact *t, cq_vec3 *along)
{
    *along = t->normal;
    cq_vec3 face_n = cq_mul_mv(&c->q->xb.r, c->m->normals[k]);
    if (1 - fabs(cq_dot(t->normal, face_n)) <= MESH_FACE_COS_TOL)
        return MESH_FACE;
    /* A's side is where more of it lies: an edge normal may be parallel
     * to the face and say nothing about the side. */
    cq_vec3 p0 = mesh_corner(c->m, &c->q->xb, k, 0);
    bool front = mesh_reach(c, face_n, p0) >= mesh_reach(c, cq_neg(face_n), p0);
    if (!mesh_from_internal_feature(c, k, t->normal, face_n, front))
        return MESH_KEPT;
    *along = mesh_to_face(c, k, front ? cq_neg(face_n) : face_n, t);
    return MESH_SNAPPED;
}

static bool mesh_same(cq_vec3 a, cq_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* Candidate i measured from its point: the point stays on the mesh and
 * its depth becomes how far A reaches past it along n (mesh_cast_line).
 * False where the line misses A, or the depth is out of [-skin, most]. */
static bool mesh_cast(mesh_pair_ctx *c, int i, cq_vec3 n, double most)
{
    cq_contact_point *p = &c->pts[i];
    cq_vec3 a;
    if (!mesh_cast_line(c, p->position, n, &a))
        return false;
    double h = cq_dot(n, cq_sub(a, p->position));
    if (!mesh_depth_ok(c, h, most))
        return false;
    p->depth = h;
    return true;
}

/* Candidate i measured from its A end (the point moved by its depth along
 * the normal it was measured along), which stays where it is: the point
 * moves along n to where that line meets its triangle. False where the
 * line is within about 6 degrees of the triangle's plane, misses the
 * triangle, or gives a depth out of [-skin, most]. A box's corner stays
 * its corner, where a cast grazes it. */
static bool mesh_carry(mesh_pair_ctx *c, int i, cq_vec3 n, double most)
{
    int k = c->tri[i];
    cq_vec3 fn = cq_mul_mv(&c->q->xb.r, c->m->normals[k]), p0 = mesh_corner(c->m, &c->q->xb, k, 0);
    double den = cq_dot(fn, n);
    if (fabs(den) < 0.1)
        return false;
    cq_contact_point *p = &c->pts[i];
    cq_vec3 a = cq_mad(p->position, c->along[i], p->depth);
    double h = cq_dot(fn, cq_sub(a, p0)) / den;
    cq_vec3 at = cq_mad(a, n, -h);
    if (!mesh_depth_ok(c, h, most) || !mesh_in_triangle(c, k, fn, at))
        return false;
    p->position = at, p->depth = h;
    return true;
}

/* Measures candidate i on a line along n (docs/CORE.md, the contact):
 * from its point on the mesh, else from its end on A; false when neither
 * line keeps it (it lies on no line along n within the skin and no deeper
 * than most). A depth measured along n already stands: a triangle's own
 * contact along the merged normal. */
static bool mesh_measure(mesh_pair_ctx *c, int i, cq_vec3 n, double most)
{
    if (mesh_same(c->along[i], n))
        return c->pts[i].depth <= most;
    if (!mesh_cast(c, i, n, most) && !mesh_carry(c, i, n, most))
        return false;
    c->along[i] = n;
    return true;
}

/* Whether candidate i is where a clip cut its triangle's edge to a
 * coplanar neighbour: a corner of the triangulation, not of the contact
 * (the neighbour's points go on past it). */
static bool mesh_coplanar_cut(const mesh_pair_ctx *c, int i)
{
    cq_feature f = c->pts[i].feature;
    return c->tri[i] >= 0 && f.kind_a == CQ_FEAT_EDGE && f.kind_b == CQ_FEAT_EDGE && f.index_b < 3 &&
           c->m->edges[c->tri[i]][f.index_b] == CQ_EDGE_COPLANAR;
}

/* Puts the coplanar cuts last, in order otherwise: the reduction keeps
 * the first of equally deep, far or wide points, so a box's corners win
 * over the cuts between them, and a cut stands only for what is missing
 * (a corner a triangle's own reduction left out). */
static void mesh_cuts_last(mesh_pair_ctx *c, int n)
{
    int first = 0;
    while (first < n && !mesh_coplanar_cut(c, first))
        first++;
    if (first == n)
        return; /* none: nothing moves */
    cq_contact_point pts[MESH_POINT_BUF];
    int tri[MESH_POINT_BUF], m = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (mesh_coplanar_cut(c, i) == (pass == 1))
                pts[m] = c->pts[i], tri[m] = c->tri[i], m++;
    memcpy(c->pts, pts, sizeof pts[0] * (size_t)n);
    memcpy(c->tri, tri, sizeof tri[0] * (size_t)n);
}

static bool mesh_same_point(const cq_contact_point *a, const cq_contact_point *b)
{
    return mesh_same(a->position, b->position) && a->depth == b->depth && a->feature.kind_a == b->feature.kind_a &&
           a->feature.kind_b == b->feature.kind_b && a->feature.index_a == b->feature.index_a &&
           a->feature.index_b == b->feature.index_b;
}

/* cq__reduce_manifold on the first n candidates, their triangles kept with
 * them (found again by value: the reduction copies the points it keeps). */
static void mesh_reduce(mesh_pair_ctx *c, int n)
{
    cq_contact_point out[CQ_MAX_POINTS];
    int tri[CQ_MAX_POINTS], m = cq__reduce_manifold_to(c->pts, n, c->out->normal, out);
    for (int i = 0; i < m; i++) {
        tri[i] = -1;
        for (int j = 0; j < n && tri[i] < 0; j++)
            if (mesh_same_point(&out[i], &c->pts[j]))
                tri[i] = c->tri[j];
    }
    for (int i = 0; i < m; i++)
        c->pts[i] = out[i], c->tri[i] = tri[i];
    c->np = m;
}

/* Measures every candidate along the chosen contact's normal and keeps
 * those that lie on A within the skin and no deeper than the contact: a
 * point deeper along that normal than the deepest triangle's depth is one
 * of another face, seen at a slant (a valley's other side, measured along
 * this side's normal, runs across A). Then at most CQ_MAX_POINTS remain. */
static void mesh_measure_all(mesh_pair_ctx *c)
{
    cq_vec3 n = c->out->normal;
    double most = c->out->depth + c->tol;
    int m = 0;
    for (int i = 0; i < c->np; i++) {
        if (!mesh_measure(c, i, n, most))
            continue;
        c->pts[m] = c->pts[i], c->along[m] = n, c->tri[m] = c->tri[i];
        m++;
    }
    if (m > CQ_MAX_POINTS)
        mesh_cuts_last(c, m);
    mesh_reduce(c, m);
}

/* Adds triangle k's contact: the best one by depth - distance (lower index
 * on ties), and its points as candidates, measured along `along` (the
 * triangle's own normal, before any snap). */
static void mesh_merge(mesh_pair_ctx *c, int k, const cq_contact *t, cq_vec3 along)
{
    if (!t->has_normal) {
        if (c->dropped < 0 || k < c->dropped)
            c->dropped = k, c->dropped_reason = t->fallback_reason;
        c->dropped_depth = cq_larger(c->dropped_depth, t->depth);
        return;
    }
    double key = t->depth - t->distance;
    if (c->best < 0 || key > c->best_key || (key == c->best_key && k < c->best)) {
        c->best = k, c->best_key = key;
        *c->out = *t; /* its points are copied from c->pts at the end */
    }
    if (c->np + t->point_count > MESH_POINT_BUF)
        mesh_measure_all(c); /* along the best normal so far */
    for (int i = 0; i < t->point_count; i++) {
        c->along[c->np] = along, c->tri[c->np] = k;
        c->pts[c->np++] = t->points[i];
    }
}

/* Two triangles met at one point (a ball over their shared edge) give it
 * twice: one is enough. */
static void mesh_drop_twins(mesh_pair_ctx *c)
{
    int m = 0;
    for (int i = 0; i < c->np; i++) {
        bool twin = false;
        for (int j = 0; j < m && !twin; j++)
            twin = cq_len2(cq_sub(c->pts[i].position, c->pts[j].position)) <= c->tol * c->tol;
        if (!twin)
            c->pts[m++] = c->pts[i];
    }
    c->np = m;
}

/* Whether a face contact on the plane of normal n through p is known:
 * parallel within CQ_MESH_COPLANAR_TOL, and through p within the slope
 * that angle allows over the distance between the two (2e-3: the opposite
 * face of a closed box is parallel, not the same plane). */
static bool mesh_has_face(const mesh_pair_ctx *c, cq_vec3 n, cq_vec3 p)
{
    for (int i = 0; i < c->nface; i++) {
        cq_vec3 d = cq_sub(p, c->face_points[i]);
        if (cq_dot(n, c->face_normals[i]) >= 1 - CQ_MESH_COPLANAR_TOL &&
            fabs(cq_dot(n, d)) <= 2e-3 * cq_len(d) + 1e-12 * cq_max_abs(p))
            return true;
    }
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
    cq_vec3 along = t.normal;
    mesh_edge_outcome o = t.has_normal ? mesh_internal_edges(c, k, &t, &along) : MESH_KEPT;
    if (o == MESH_SNAPPED && c->ndefer < MESH_DEFER_MAX) {
        c->defer[c->ndefer++] = (mesh_deferred){k, along, t};
        return true;
    }
    cq_vec3 p0 = mesh_corner(c->m, &c->q->xb, k, 0);
    if (o == MESH_FACE && c->nface < MESH_DEFER_MAX && !mesh_has_face(c, t.normal, p0)) {
        c->face_points[c->nface] = p0;
        c->face_normals[c->nface++] = t.normal;
    }
    mesh_merge(c, k, &t, along);
    return true;
}

/* The snapped contacts: one whose face normal some triangle's own face
 * contact already has adds nothing but a point beside that face's points
 * (the ghost's remains), so it is dropped; the others are merged. */
static void mesh_merge_deferred(mesh_pair_ctx *c)
{
    for (int i = 0; i < c->ndefer; i++)
        if (!mesh_has_face(c, c->defer[i].c.normal, mesh_corner(c->m, &c->q->xb, c->defer[i].k, 0)))
            mesh_merge(c, c->defer[i].k, &c->defer[i].c, c->defer[i].along);
}

/* Nothing with a normal overlapped but some triangle did: the verdict
 * stands without a normal. */
static void mesh_dropped(const mesh_pair_ctx *c, cq_contact *out)
{
    out->overlap = true;
    out->depth = c->dropped_depth;
    out->fallback_reason = c->dropped_reason;
    out->fallback_action = CQ_FBA_DROPPED;
}

void cq__mesh_pair(const cq_pair_query *q, cq_contact *out)
{
    cq_algorithm alg = out->algorithm;
    cq_mesh_collide(q, q->b->mesh.mesh, out);
    out->algorithm = alg;
}

int cq_mesh_collide(const cq_pair_query *q, const cq_mesh *mesh, cq_contact *out)
{
    cq_vec3 store[CQ_PROXY_STORAGE];
    /* Field by field: the candidate arrays are written before they are
     * read, and zeroing their 6 kB showed in the profile. */
    mesh_pair_ctx c;
    c.q = q, c.m = mesh, c.out = out, c.best = -1, c.best_key = 0, c.dropped = -1;
    c.dropped_reason = CQ_FB_NONE, c.dropped_depth = 0, c.np = c.nface = c.ndefer = 0;
    if (cq_shape_proxy(q->a, store, &c.pa) != CQ_OK)
        return CQ_EUNSUPPORTED; /* planes and meshes: not convex */
    /* Half the contract's tolerance (CQ_POINT_TOL) at A's size and place:
     * the rounding of a depth measured twice, never a real step. */
    c.tol = 0.5 * CQ_POINT_TOL(cq__shape_extent(q->a), cq_max_abs(q->xa.p));
    *out = (cq_contact){.sat_axis = -1, .normal_axis = -1};
    cq_xform rel = cq_xform_relative(&q->xb, &q->xa);
    cq_aabb box = cq_aabb_fatten(cq__shape_aabb(q->a, &rel), q->skin);
    cq__bvh_query_aabb(mesh->bvh, &box, mesh_visit, &c);
    mesh_merge_deferred(&c);
    if (c.best < 0) {
        if (c.dropped >= 0)
            mesh_dropped(&c, out);
        return CQ_OK;
    }
    mesh_measure_all(&c);
    mesh_drop_twins(&c);
    out->sat_axis = -1; /* a triangle's SAT axis says nothing about the mesh */
    out->sat_gap = 0;
    out->point_count = c.np;
    for (int i = 0; i < c.np; i++)
        out->points[i] = c.pts[i];
    return CQ_OK;
}
