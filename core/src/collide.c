/* The pair query: one dispatch table indexed by shape types, in canonical
 * order (lower type first; one type: see cq__b_first). Swapping A and B is
 * handled here, once, by mirroring the result, so no pair function is
 * written twice. */
#include <stddef.h>

#include "manifold.h"
#include "narrow.h"
#include "sat_hull.h"

typedef struct cq_pair_entry {
    cq_pair_fn fn;
    cq_algorithm alg;
    /* fn answers the query whole, in the caller's order: it runs
     * cq__b_first, begin and finish itself, so a pair it settles early
     * (box-box apart on a face axis) skips the canonical copy. */
    bool whole;
} cq_pair_entry;

/* Only a <= b is filled; a NULL fn means the pair is not supported. Planes
 * are static, so plane-plane never meets. */
static const cq_pair_entry cq_pairs[CQ_SHAPE_TYPE_COUNT][CQ_SHAPE_TYPE_COUNT] = {
    [CQ_SPHERE][CQ_SPHERE] = {cq__sphere_sphere, CQ_ALG_SPHERE_SPHERE},
    [CQ_SPHERE][CQ_CAPSULE] = {cq__sphere_capsule, CQ_ALG_SPHERE_CAPSULE},
    [CQ_SPHERE][CQ_BOX] = {cq__sphere_box, CQ_ALG_SPHERE_BOX},
    [CQ_SPHERE][CQ_TRIANGLE] = {cq__sphere_triangle, CQ_ALG_SPHERE_TRIANGLE},
    [CQ_SPHERE][CQ_PLANE] = {cq__sphere_plane, CQ_ALG_SPHERE_PLANE},
    [CQ_CAPSULE][CQ_CAPSULE] = {cq__capsule_capsule, CQ_ALG_CAPSULE_CAPSULE},
    [CQ_CAPSULE][CQ_PLANE] = {cq__capsule_plane, CQ_ALG_CAPSULE_PLANE},
    [CQ_BOX][CQ_BOX] = {cq__box_box, CQ_ALG_SAT_BOX_BOX, true},
    [CQ_BOX][CQ_TRIANGLE] = {cq__box_triangle, CQ_ALG_SAT_TRIANGLE_BOX},
    [CQ_BOX][CQ_PLANE] = {cq__box_plane, CQ_ALG_BOX_PLANE},
    [CQ_TRIANGLE][CQ_TRIANGLE] = {cq__triangle_triangle, CQ_ALG_TRIANGLE_TRIANGLE},
    [CQ_TRIANGLE][CQ_PLANE] = {cq__triangle_plane, CQ_ALG_TRIANGLE_PLANE},
    /* No closed form: the general convex path. */
    [CQ_SPHERE][CQ_CONVEX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_CAPSULE][CQ_BOX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_CAPSULE][CQ_TRIANGLE] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_CAPSULE][CQ_CONVEX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_BOX][CQ_CONVEX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_TRIANGLE][CQ_CONVEX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    /* Hull-hull: GJK on the cores; where they overlap, two solid hulls of at
     * most CQ_SAT_HULL_MAX_FACES faces each take the SAT (sat_hull.c; the
     * contact says "sat_hull"), every other hull pair EPA. Separated pairs
     * and the pairs within skin keep GJK's distance ("gjk_epa"). */
    [CQ_CONVEX][CQ_CONVEX] = {cq__convex_pair, CQ_ALG_GJK_EPA},
    [CQ_CONVEX][CQ_PLANE] = {cq__convex_plane, CQ_ALG_CONVEX_PLANE},
    /* A mesh is static and B for every convex type; never mesh-mesh or mesh-plane. */
    [CQ_SPHERE][CQ_MESH] = {cq__mesh_pair, CQ_ALG_MESH},
    [CQ_CAPSULE][CQ_MESH] = {cq__mesh_pair, CQ_ALG_MESH},
    [CQ_BOX][CQ_MESH] = {cq__mesh_pair, CQ_ALG_MESH},
    [CQ_TRIANGLE][CQ_MESH] = {cq__mesh_pair, CQ_ALG_MESH},
    [CQ_CONVEX][CQ_MESH] = {cq__mesh_pair, CQ_ALG_MESH},
};

static const cq_pair_entry *cq_lookup(cq_shape_type a, cq_shape_type b)
{
    if ((unsigned)a >= CQ_SHAPE_TYPE_COUNT || (unsigned)b >= CQ_SHAPE_TYPE_COUNT)
        return NULL;
    const cq_pair_entry *e = a <= b ? &cq_pairs[a][b] : &cq_pairs[b][a];
    return e->fn ? e : NULL;
}

bool cq_collide_supported(cq_shape_type a, cq_shape_type b) { return cq_lookup(a, b) != NULL; }

/* A_i <-> B_i and AixBj -> AjxBi: the same axis seen with A and B swapped
 * (the cross product changes sign, which a gap does not see). A value
 * outside the table names no axis (a caller's cache is input, not trusted):
 * -1, never a read past the table. */
int cq__sat_axis_swap(int axis)
{
    static const int8_t swapped[CQ_SAT_AXIS_COUNT] = {3, 4, 5, 0, 1, 2, 6, 9, 12, 7, 10, 13, 8, 11, 14};
    return axis >= 0 && axis < CQ_SAT_AXIS_COUNT ? swapped[axis] : -1;
}

/* An axis identity named from the other shape: a box-box SAT axis, a hull
 * SAT axis (sat_hull.h), or none (every other path leaves -1). */
static int cq_axis_swap(cq_algorithm alg, int axis)
{
    return alg == CQ_ALG_SAT_HULL ? cq__hull_axis_swap(axis) : cq__sat_axis_swap(axis);
}

/* Mirrors a canonical result back into the caller's order. Points move
 * from the old B's surface to the old A's: depth along the old normal. */
static void cq_contact_swap(cq_contact *c)
{
    cq_vec3 n = c->normal;
    for (int k = 0; k < c->point_count; k++) {
        cq_contact_point *p = &c->points[k];
        if (c->has_normal)
            p->position = cq_mad(p->position, n, p->depth);
        p->feature = cq_feature_swap(p->feature);
    }
    c->normal = cq_neg(n);
    cq_vec3 w = c->witness_a;
    c->witness_a = c->witness_b;
    c->witness_b = w;
    c->sat_axis = cq__sat_axis_swap(c->sat_axis);
    c->normal_axis = cq_axis_swap(c->algorithm, c->normal_axis);
}

/* The last guard of the contract: a normal that is not unit (zero, NaN) is
 * never reported; the pair keeps its verdict and loses normal and points. */
static void cq_guard_normal(cq_contact *c, cq_counters *counters)
{
    if (!c->has_normal)
        return;
    double l2 = cq_len2(c->normal);
    if (l2 > 0.999 && l2 < 1.001)
        return;
    c->has_normal = false;
    c->normal = cq_v3(0, 0, 0);
    c->normal_axis = -1;
    c->point_count = 0;
    c->fallback_reason = CQ_FB_COINCIDENT;
    c->fallback_action = CQ_FBA_DROPPED;
    cq_count(counters, CQ_CTR_ZERO_NORMALS, 1);
}

/* Every field a pair function may leave alone, set to "nothing found". The
 * points array is left as it is: point_count says how much of it is valid
 * (and zeroing 160 bytes per query shows in the profile). */
void cq__collide_begin(cq_contact *c, cq_algorithm alg)
{
    c->overlap = c->has_normal = c->has_distance = false;
    c->distance = c->depth = 0;
    c->normal = c->witness_a = c->witness_b = cq_v3(0, 0, 0);
    c->point_count = 0;
    c->algorithm = alg;
    c->fallback_reason = CQ_FB_NONE;
    c->fallback_action = CQ_FBA_NONE;
    c->sat_axis = -1;
    c->sat_gap = 0;
    c->normal_axis = -1;
}

/* Numeric order of two numbers, then of vectors component by component
 * (x first), then of arrays of vectors: -1, 0 or 1. */
static inline int cq_cmp_number(double x, double y) { return x < y ? -1 : x > y; }

static inline int cq_cmp_vec3(cq_vec3 u, cq_vec3 w)
{
    int c = cq_cmp_number(u.x, w.x);
    if (!c)
        c = cq_cmp_number(u.y, w.y);
    return c ? c : cq_cmp_number(u.z, w.z);
}

static int cq_cmp_vec3s(const cq_vec3 *u, const cq_vec3 *w, int n)
{
    int c = 0;
    for (int k = 0; k < n && !c; k++)
        c = cq_cmp_vec3(u[k], w[k]);
    return c;
}

/* The sizes of two shapes of one type, in order (a hull's points). */
static int cq_cmp_sizes(const cq_shape *a, const cq_shape *b)
{
    switch (a->type) {
    case CQ_SPHERE:
        return cq_cmp_number(a->sphere.radius, b->sphere.radius);
    case CQ_CAPSULE: {
        int c = cq_cmp_number(a->capsule.radius, b->capsule.radius);
        return c ? c : cq_cmp_number(a->capsule.half_height, b->capsule.half_height);
    }
    case CQ_BOX:
        return cq_cmp_vec3(a->box.half, b->box.half);
    case CQ_TRIANGLE:
        return cq_cmp_vec3s(a->triangle.v, b->triangle.v, 3);
    case CQ_CONVEX: {
        const cq_hull *h = a->convex.hull, *g = b->convex.hull;
        if (h == g)
            return 0;
        int c = cq_cmp_number(h->vertex_count, g->vertex_count);
        if (!c)
            c = cq_cmp_number(h->radius, g->radius);
        return c ? c : cq_cmp_vec3s(h->vertices, g->vertices, h->vertex_count);
    }
    case CQ_MESH: /* meshes and planes never meet their own type */
    case CQ_PLANE:
    case CQ_SHAPE_TYPE_COUNT:
        break;
    }
    return 0;
}

/* Whether the pair is computed B first. Across types the lower type goes
 * first (the table's order). Two shapes of one type go in the order of
 * their poses (position, then rotation), then their sizes, so swapping A
 * and B mirrors the result exactly: a verdict on the edge of rounding (a
 * distance equal to the skin, a GJK cap, an orientation test at extreme
 * scales) cannot depend on which shape the caller named first. Positions
 * almost always differ in x, which decides at the first comparison. */
bool cq__b_first(const cq_pair_query *q)
{
    if (q->a->type != q->b->type)
        return q->a->type > q->b->type;
    int c = cq_cmp_vec3(q->xa.p, q->xb.p);
    if (!c)
        c = cq_cmp_vec3s(q->xa.r.c, q->xb.r.c, 3);
    return (c ? c : cq_cmp_sizes(q->a, q->b)) > 0;
}

const cq_pair_query *cq__collide_canon(const cq_pair_query *q, cq_algorithm alg, cq_pair_query *canon,
                                       cq_pair_cache *cache)
{
    /* Field by field: a whole-struct copy compiles to a slow string move. */
    *canon = (cq_pair_query){.a = q->b, .xa = q->xb, .b = q->a, .xb = q->xa, .skin = q->skin, .cache = q->cache,
                             .counters = q->counters, .log = q->log, .tag_a = q->tag_b, .tag_b = q->tag_a,
                             .gjk_max_iterations = q->gjk_max_iterations,
                             .epa_max_iterations = q->epa_max_iterations, .skip_distance = q->skip_distance,
                             .skip_manifold = q->skip_manifold};
    if (q->cache) {
        *cache = *q->cache;
        cache->normal = cq_neg(cache->normal);
        if (cache->has_axis) /* the axis is only meaningful when set */
            cache->axis = cq_axis_swap(alg == CQ_ALG_GJK_EPA && q->a->type == CQ_CONVEX &&
                                               q->b->type == CQ_CONVEX ? CQ_ALG_SAT_HULL : alg,
                                       cache->axis); /* the same axis, named from the other shape */
        canon->cache = cache;
    }
    return canon;
}


void cq__collide_finish(const cq_pair_query *q, bool b_first, cq_contact *out)
{
    cq_guard_normal(out, q->counters);
    if (q->skip_manifold) /* the cheap closed-form points too: one contract */
        out->point_count = 0;
    if (b_first)
        cq_contact_swap(out);
    cq_count(q->counters, CQ_CTR_TESTS + out->algorithm, 1); /* the path that answered */
}

int cq_collide(const cq_pair_query *q, cq_contact *out)
{
    const cq_pair_entry *e = cq_lookup(q->a->type, q->b->type);
    if (!e)
        return CQ_EUNSUPPORTED;
    if (e->whole) {
        e->fn(q, out);
        return CQ_OK;
    }
    cq__collide_begin(out, e->alg);
    bool b_first = cq__b_first(q);
    cq_pair_query canon;
    cq_pair_cache cache;
    e->fn(b_first ? cq__collide_canon(q, e->alg, &canon, &cache) : q, out);
    cq__collide_finish(q, b_first, out);
    return CQ_OK;
}
