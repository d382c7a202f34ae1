/* cq_hull_build: validation, the grid frame, the dimension test, the
 * point / segment / polygon hulls, and the one-block layout. The solid hull
 * is in hull_build.c.
 *
 * Grid frame: the points are centred on their bounding box's centre c,
 * scaled by 2^-e, the power of two just above the largest |p - c| (the
 * half-extent H), and snapped to multiples of 2^-24 of that (hull_build.h
 * says why): exact, size- and offset-independent geometry.
 *
 * Tolerance: tau = 1e-6 * 2^e + 64 * DBL_EPSILON * M in the caller's units,
 * M the largest absolute coordinate; so at most 2e-6 * H + 64 * DBL_EPSILON
 * * M. Decisions use tau / 2 less one grid step, which covers the snapping:
 * points within about tau / 2 of a point, line or plane count as on it (the
 * hull keeps no two vertices closer than that), and every face vertex lies
 * within that of its plane. The other half of tau is the room the planes,
 * fitted to the vertices alone, need to hold the points the hull dropped:
 * every input point lies at most tau in front of every face plane
 * (hull_solve sees to it). 1e-6 of the size is far below any collision skin
 * and far above double rounding; the ulp term keeps a small cloud far from
 * the origin honest.
 *
 * Rebuilding is exact: the hull is a function of its vertices alone (in
 * input order: their own frame, their own decisions), and they are a set
 * whose hull keeps every one of them, so cq_hull_build of a hull's vertices
 * and radius returns that hull bit for bit (hull_solve). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "hull_build.h"
#include "sat_hull.h"

#define HULL_NO_FACE 0xFFFF

static int hull_validate(const cq_vec3 *points, int count, double radius)
{
    if (!points || count < 1 || count > CQ_HULL_MAX_POINTS)
        return CQ_ERANGE;
    for (int i = 0; i < count; i++)
        if (!cq_v3_finite(points[i]))
            return CQ_ENOT_FINITE;
    if (!cq_finite(radius))
        return CQ_ENOT_FINITE;
    return radius < 0 ? CQ_ENEGATIVE : CQ_OK;
}

/* The grid frame (see the top of the file). */
typedef struct hull_frame {
    cq_vec3 centre;
    int e;
    double tol; /* in grid steps */
    double tau; /* the documented tolerance, in the caller's units */
} hull_frame;

static double hull_max3(cq_vec3 a) { return fmax(a.x, fmax(a.y, a.z)); }

/* The input points in unit coordinates, (p - centre) 2^-e. */
typedef struct hull_units {
    double x[CQ_HULL_MAX_POINTS], y[CQ_HULL_MAX_POINTS], z[CQ_HULL_MAX_POINTS];
    int n;
} hull_units;

static cq_vec3 hull_unit(const hull_units *u, int i) { return cq_v3(u->x[i], u->y[i], u->z[i]); }

/* Fills the unit coordinates (p - centre) 2^-e, in (-1, 1), and grid[i],
 * the unit point snapped to the grid, in grid steps. */
static hull_frame hull_frame_of(const cq_vec3 *points, int count, hull_units *unit, cq_vec3 *grid)
{
    cq_vec3 lo = points[0], hi = points[0];
    double largest = 0, half = 0;
    for (int i = 0; i < count; i++) {
        cq_vec3 p = points[i];
        lo = cq_v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = cq_v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
        largest = fmax(largest, hull_max3(cq_vabs(p)));
    }
    hull_frame f = {cq_add(cq_scale(lo, 0.5), cq_scale(hi, 0.5)), 0, 0, 0}; /* halves first: no overflow */
    for (int i = 0; i < count; i++)
        half = fmax(half, hull_max3(cq_vabs(cq_sub(points[i], f.centre))));
    frexp(half, &f.e);
    unit->n = count;
    for (int i = 0; i < count; i++) {
        cq_vec3 r = cq_sub(points[i], f.centre);
        unit->x[i] = ldexp(r.x, -f.e);
        unit->y[i] = ldexp(r.y, -f.e);
        unit->z[i] = ldexp(r.z, -f.e);
        cq_vec3 g = cq_scale(hull_unit(unit, i), ldexp(1.0, CQ_HULL_GRID_BITS));
        grid[i] = cq_v3(round(g.x), round(g.y), round(g.z));
    }
    /* Snapping moves a point by at most sqrt(3)/2 of a step: one step less
     * keeps the originals within the decision tolerance. */
    double tol = CQ_HULL_REL_TOL + CQ_HULL_ROUND_ULPS * DBL_EPSILON * ldexp(largest, -f.e);
    f.tol = ldexp(CQ_HULL_DECIDE * tol, CQ_HULL_GRID_BITS) - 1.0;
    f.tau = ldexp(tol, f.e);
    return f;
}

/* Distance of p from the point a, the line (a, unit u) or the plane (a, unit u). */
typedef double (*hull_measure)(cq_vec3 p, cq_vec3 a, cq_vec3 u);
static double hull_from_point(cq_vec3 p, cq_vec3 a, cq_vec3 u)
{
    (void)u;
    return cq_len(cq_sub(p, a));
}
static double hull_from_line(cq_vec3 p, cq_vec3 a, cq_vec3 u) { return cq_len(cq_cross(cq_sub(p, a), u)); }
static double hull_from_plane(cq_vec3 p, cq_vec3 a, cq_vec3 u) { return fabs(cq_dot(cq_sub(p, a), u)); }

/* The point farthest by `measure` (lowest index on ties); its distance in *dist. */
static int hull_farthest(const cq_vec3 *s, int n, hull_measure measure, cq_vec3 a, cq_vec3 u, double *dist)
{
    int best = 0;
    *dist = measure(s[0], a, u);
    for (int i = 1; i < n; i++) {
        double m = measure(s[i], a, u);
        if (m > *dist) {
            *dist = m;
            best = i;
        }
    }
    return best;
}

static void draft_point(cq_hull_draft *d)
{
    d->dim = 0;
    d->used[0] = true;
}

/* The two extreme points along the unit direction u, joined by one edge. */
static void draft_segment(cq_hull_draft *d, const cq_vec3 *s, int n, cq_vec3 u)
{
    int lo = 0, hi = 0;
    for (int i = 1; i < n; i++) {
        double t = cq_dot(u, s[i]);
        if (t < cq_dot(u, s[lo]))
            lo = i;
        if (t > cq_dot(u, s[hi]))
            hi = i;
    }
    d->dim = 1;
    d->face_count = d->loop_count = 0;
    d->edge_count = 1;
    d->edges[0] = (cq_hull_edge){(uint16_t)lo, (uint16_t)hi, HULL_NO_FACE, HULL_NO_FACE};
    d->used[lo] = d->used[hi] = true;
}

typedef struct hull_pt2 {
    double x, y;
    int index;
} hull_pt2;

static int hull_pt2_cmp(const void *pa, const void *pb)
{
    const hull_pt2 *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->index - b->index;
}

/* a is a strict left turn on the way o -> b: more than tol off the chord. */
static bool hull_left_turn(hull_pt2 o, hull_pt2 a, hull_pt2 b, double tol)
{
    double ax = a.x - o.x, ay = a.y - o.y, bx = b.x - o.x, by = b.y - o.y;
    return ax * by - ay * bx > tol * hypot(bx, by);
}

/* Andrew's monotone chain over sorted points: the counter-clockwise loop
 * (positions in p) without duplicate or within-tol collinear points. */
static int hull_chain(const hull_pt2 *p, int n, double tol, int *loop)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        while (k >= 2 && !hull_left_turn(p[loop[k - 2]], p[loop[k - 1]], p[i], tol))
            k--;
        loop[k++] = i;
    }
    for (int i = n - 2, lower = k + 1; i >= 0; i--) {
        while (k >= lower && !hull_left_turn(p[loop[k - 2]], p[loop[k - 1]], p[i], tol))
            k--;
        loop[k++] = i;
    }
    return k - 1; /* the last point repeats the first */
}

/* Points within tol of the plane (origin, unit nrm); u is a unit direction
 * in it. Two faces, +nrm with the loop counter-clockwise about nrm and -nrm
 * with it reversed; every rim edge lists face 0 as f0 and face 1 as f1. */
static void draft_polygon(cq_hull_draft *d, const cq_vec3 *s, int n, cq_vec3 origin, cq_vec3 u, cq_vec3 nrm,
                          double tol)
{
    hull_pt2 p[CQ_HULL_MAX_POINTS];
    int chain[2 * CQ_HULL_MAX_POINTS];
    cq_vec3 v = cq_cross(nrm, u);
    for (int i = 0; i < n; i++) {
        cq_vec3 r = cq_sub(s[i], origin);
        p[i] = (hull_pt2){cq_dot(r, u), cq_dot(r, v), i};
    }
    qsort(p, (size_t)n, sizeof *p, hull_pt2_cmp);
    int m = hull_chain(p, n, tol, chain);
    if (m < 3) { /* the chain's tolerance flattened it after all */
        draft_segment(d, s, n, u);
        return;
    }
    double offset = cq_dot(nrm, origin);
    d->dim = 2;
    d->face_count = 2;
    d->loop_count = 2 * m;
    d->edge_count = m;
    d->faces[0] = (cq_hull_face){nrm, offset, 0, (uint16_t)m};
    d->faces[1] = (cq_hull_face){cq_neg(nrm), -offset, (uint16_t)m, (uint16_t)m};
    for (int k = 0; k < m; k++) {
        int i = p[chain[k]].index;
        d->loop[k] = d->loop[2 * m - 1 - k] = (uint16_t)i;
        d->used[i] = true;
    }
    for (int k = 0; k < m; k++)
        d->edges[k] = (cq_hull_edge){d->loop[k], d->loop[(k + 1) % m], 0, 1};
}

/* The maximum of dot(n, grid point) over the solid's triangulation
 * vertices, climbing from `start`: on an exactly convex polytope a vertex
 * no neighbour beats is the top. */
static double hull_climb(const cq_hull_draft *d, const cq_vec3 *grid, cq_vec3 n, int start)
{
    int at = start;
    double top = cq_dot(n, grid[at]);
    for (;;) {
        int next = at;
        for (int k = d->adj_first[at]; k < d->adj_first[at + 1]; k++) {
            double t = cq_dot(n, grid[d->adj[k]]);
            if (t > top) {
                top = t;
                next = d->adj[k];
            }
        }
        if (next == at)
            return top;
        at = next;
    }
}

/* Refits face f to the original points: the grid plane is exact only to
 * the grid step (about 1e-7 of the size). The new plane has the Newell
 * (area-weighted) normal of the face's vertices in unit coordinates and
 * touches the highest of them; it is kept when the others lie within tol
 * below it and, for a solid, the other vertices within tol above it, which
 * the climb bounds to within two grid steps (snapping and rounding). Points
 * that are no vertex are hull_solve's concern. True when refitted. */
static bool hull_refit_face(cq_hull_draft *d, int f, const hull_units *u, const cq_vec3 *grid, double tol_grid)
{
    cq_hull_face *face = &d->faces[f];
    const uint16_t *loop = d->loop + face->first;
    double step = ldexp(1.0, -CQ_HULL_GRID_BITS), tol = tol_grid * step;
    cq_vec3 n = cq_v3(0, 0, 0);
    for (int k = 0; k < face->count; k++)
        n = cq_add(n, cq_cross(hull_unit(u, loop[k]), hull_unit(u, loop[(k + 1) % face->count])));
    if (!cq_normalize(n, 0.0, &n))
        return false;
    double top = -INFINITY, low = INFINITY, others = -INFINITY;
    for (int k = 0; k < face->count; k++) {
        double t = cq_dot(n, hull_unit(u, loop[k]));
        top = fmax(top, t);
        low = fmin(low, t);
    }
    if (d->dim == 3)
        others = (hull_climb(d, grid, n, loop[0]) + 2.0) * step;
    if (low < top - tol || others > top + tol)
        return false;
    face->normal = n;
    face->offset = top / step;
    return true;
}

static void hull_refit(cq_hull_draft *d, const hull_units *u, const cq_vec3 *grid, double tol_grid)
{
    for (int f = 0; f < d->face_count; f++)
        hull_refit_face(d, f, u, grid, tol_grid);
}

/* Refits a polygon's two planes; true when both fit its loop and hold
 * every point within tol. Otherwise the points make a thin solid instead:
 * so a polygon's planes are a function of its loop alone (not of the
 * points that chose the grid plane) that holds every point it dropped. */
static bool draft_flat(cq_hull_draft *d, const hull_units *u, const cq_vec3 *grid, int n, double tol_grid)
{
    double step = ldexp(1.0, -CQ_HULL_GRID_BITS);
    if (!hull_refit_face(d, 0, u, grid, tol_grid) || !hull_refit_face(d, 1, u, grid, tol_grid))
        return false;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < n; i++)
            if (cq_dot(d->faces[f].normal, hull_unit(u, i)) > (d->faces[f].offset + tol_grid) * step)
                return false;
    return true;
}

/* Detects the dimension from extreme points (each within tol of the
 * previous ones' span or not) and builds the matching hull, its planes
 * refitted to the unit points. */
static void draft_build(cq_hull_draft *d, const hull_units *unit, const cq_vec3 *s, int n, double tol)
{
    memset(d->used, 0, sizeof d->used);
    d->face_count = d->loop_count = d->edge_count = 0;
    cq_vec3 zero = cq_v3(0, 0, 0);
    double dist;
    int a = hull_farthest(s, n, hull_from_point, s[0], zero, &dist);
    if (dist <= tol) {
        draft_point(d);
        return;
    }
    int b = hull_farthest(s, n, hull_from_point, s[a], zero, &dist);
    cq_vec3 u = cq_scale(cq_sub(s[b], s[a]), 1.0 / dist);
    int c = hull_farthest(s, n, hull_from_line, s[a], u, &dist);
    if (dist <= tol) {
        draft_segment(d, s, n, u);
        return;
    }
    cq_vec3 cross = cq_cross(cq_sub(s[b], s[a]), cq_sub(s[c], s[a])); /* exact on the grid */
    cq_vec3 nrm = cq_scale(cross, 1.0 / cq_len(cross));
    int e = hull_farthest(s, n, hull_from_plane, s[a], nrm, &dist);
    if (dist <= tol) {
        draft_polygon(d, s, n, s[a], u, nrm, tol);
        if (d->dim < 2 || draft_flat(d, unit, s, n, tol) || cq_hull_side(cross, s[a], s[e]) == 0)
            return;
        memset(d->used, 0, sizeof d->used);
    }
    cq__hull_build_solid(s, n, (const int[4]){a, b, c, e}, tol, d);
    hull_refit(d, unit, s, tol);
}

/* Byte offsets of the arrays behind the header in the hull's one block. */
typedef struct hull_layout {
    size_t vertices, faces, face_vertices, edges, sat, total;
} hull_layout;

static size_t hull_align(size_t x, size_t a) { return (x + a - 1) / a * a; }

static hull_layout hull_layout_of(int vertices, int faces, int face_vertices, int edges)
{
    hull_layout l;
    /* The vertices right after the header: convex_pair.c prefetches both
     * from the hull's address alone. */
    l.vertices = hull_align(sizeof(cq_hull), _Alignof(cq_vec3));
    l.faces = hull_align(l.vertices + (size_t)vertices * sizeof(cq_vec3), _Alignof(cq_hull_face));
    l.face_vertices = hull_align(l.faces + (size_t)faces * sizeof(cq_hull_face), _Alignof(uint16_t));
    l.edges = hull_align(l.face_vertices + (size_t)face_vertices * sizeof(uint16_t), _Alignof(cq_hull_edge));
    l.sat = hull_align(l.edges + (size_t)edges * sizeof(cq_hull_edge), _Alignof(double));
    l.total = l.sat;
    return l;
}

static void hull_bounds(cq_hull *h)
{
    cq_vec3 sum = cq_v3(0, 0, 0);
    h->aabb_min = h->aabb_max = h->vertices[0];
    for (int i = 0; i < h->vertex_count; i++) {
        cq_vec3 v = h->vertices[i];
        sum = cq_add(sum, v);
        h->aabb_min = cq_v3(fmin(h->aabb_min.x, v.x), fmin(h->aabb_min.y, v.y), fmin(h->aabb_min.z, v.z));
        h->aabb_max = cq_v3(fmax(h->aabb_max.x, v.x), fmax(h->aabb_max.y, v.y), fmax(h->aabb_max.z, v.z));
    }
    h->centroid = cq_scale(sum, 1.0 / h->vertex_count);
}

/* The plane offset of a draft face in the caller's units. */
static double hull_offset(hull_frame frame, const cq_hull_face *face)
{
    return cq_dot(face->normal, frame.centre) + ldexp(face->offset, frame.e - CQ_HULL_GRID_BITS);
}

/* Lays the draft into one block: vertices in input order, indices renumbered
 * to them, planes moved back from the grid frame. NULL when the allocator
 * fails. */
static cq_hull *hull_assemble(const cq_hull_draft *d, const cq_vec3 *points, int n, hull_frame frame, double radius)
{
    uint16_t index[CQ_HULL_MAX_POINTS];
    int vertices = 0;
    for (int i = 0; i < n; i++)
        if (d->used[i])
            index[i] = (uint16_t)vertices++;
    hull_layout l = hull_layout_of(vertices, d->face_count, d->loop_count, d->edge_count);
    cq_hull counts = {.dim = d->dim, .vertex_count = vertices, .face_count = d->face_count,
                      .edge_count = d->edge_count};
    size_t sat = cq__hull_sat_bytes(&counts); /* the SAT's data last, where it applies */
    unsigned char *block = cq_alloc(l.total + sat);
    if (!block)
        return NULL;
    cq_hull *h = (cq_hull *)block;
    *h = (cq_hull){.dim = d->dim,
                   .vertex_count = vertices,
                   .face_count = d->face_count,
                   .edge_count = d->edge_count,
                   .face_vertex_count = d->loop_count,
                   .radius = radius,
                   .vertices = (cq_vec3 *)(block + l.vertices),
                   .faces = d->face_count ? (cq_hull_face *)(block + l.faces) : NULL,
                   .face_vertices = d->loop_count ? (uint16_t *)(block + l.face_vertices) : NULL,
                   .edges = d->edge_count ? (cq_hull_edge *)(block + l.edges) : NULL};
    for (int i = 0; i < n; i++)
        if (d->used[i])
            h->vertices[index[i]] = points[i];
    for (int f = 0; f < d->face_count; f++) {
        h->faces[f] = d->faces[f];
        h->faces[f].offset = hull_offset(frame, &d->faces[f]);
    }
    for (int k = 0; k < d->loop_count; k++)
        h->face_vertices[k] = index[d->loop[k]];
    for (int k = 0; k < d->edge_count; k++) {
        h->edges[k] = d->edges[k];
        h->edges[k].v0 = index[d->edges[k].v0];
        h->edges[k].v1 = index[d->edges[k].v1];
    }
    hull_bounds(h);
    if (sat) {
        cq__hull_sat_prepare(h, block + l.sat);
        h->sat_data = block + l.sat;
    }
    return h;
}

/* The hull of the candidate vertices pts[0..n) (input points, in input
 * order; at[k] is the input index of pts[k]) in their own frame. */
typedef struct hull_work {
    cq_vec3 pts[CQ_HULL_MAX_POINTS];
    int16_t at[CQ_HULL_MAX_POINTS];
    int n;
    hull_units unit;
    cq_vec3 grid[CQ_HULL_MAX_POINTS];
    hull_frame frame;
    cq_hull_draft draft;
} hull_work;

/* Drafts the candidates until their hull keeps every one: each pass keeps
 * only the previous pass's vertices, in order, so at most n passes (two,
 * nearly always). The last pass is then what drafting its own vertices
 * repeats exactly: the same points in the same order, the same frame, the
 * same decisions. */
static void hull_settle(hull_work *w)
{
    for (;;) {
        w->frame = hull_frame_of(w->pts, w->n, &w->unit, w->grid);
        draft_build(&w->draft, &w->unit, w->grid, w->n, w->frame.tol);
        int kept = 0;
        for (int k = 0; k < w->n; k++)
            if (w->draft.used[k]) {
                w->pts[kept] = w->pts[k];
                w->at[kept++] = w->at[k];
            }
        if (kept == w->n)
            return;
        w->n = kept;
    }
}

/* Marks as candidates the input points left out that lie more than tau in
 * front of a face plane of the settled hull; false when there is none. */
static bool hull_outliers(const hull_work *w, const cq_vec3 *points, int count, double tau, bool *candidate)
{
    uint16_t out[CQ_HULL_MAX_POINTS];
    int out_count = 0;
    for (int i = 0; i < count; i++)
        if (!candidate[i])
            out[out_count++] = (uint16_t)i;
    bool any = false;
    for (int f = 0; f < w->draft.face_count && out_count > 0; f++) {
        const cq_hull_face *face = &w->draft.faces[f];
        double offset = hull_offset(w->frame, face) + tau;
        for (int k = 0; k < out_count; k++)
            if (cq_dot(face->normal, points[out[k]]) > offset)
                candidate[out[k]] = any = true;
    }
    return any;
}

/* Rounds in which dropped points found outside are put back. Decisions
 * keep half of tau in reserve, so a dropped point lies outside only when
 * the settled hull differs from the one that dropped it (another frame,
 * another triangulation); it then lies well above the settled hull and the
 * next draft keeps it. Measured on 1e5 clouds made to sit at the
 * tolerance: one needed a round, none two. */
#define HULL_REPAIRS 4

/* The candidates settle from all the input points; dropped points that the
 * settled hull leaves more than tau outside join them again and they settle
 * anew. The answer is a function of the settled set alone, which drafts to
 * itself and has no point to put back: building from it repeats the last
 * round bit for bit. (Should the rounds run out, the last settled hull is
 * still kept: exact to rebuild, only the bound on dropped points is lost.) */
static void hull_solve(hull_work *w, const cq_vec3 *points, int count)
{
    double tau = hull_frame_of(points, count, &w->unit, w->grid).tau;
    bool candidate[CQ_HULL_MAX_POINTS];
    for (int i = 0; i < count; i++)
        candidate[i] = true;
    for (int round = 0;; round++) {
        w->n = 0;
        for (int i = 0; i < count; i++)
            if (candidate[i]) {
                w->pts[w->n] = points[i];
                w->at[w->n++] = (int16_t)i;
            }
        hull_settle(w);
        for (int i = 0; i < count; i++)
            candidate[i] = false;
        for (int k = 0; k < w->n; k++)
            candidate[w->at[k]] = true;
        if (round == HULL_REPAIRS || !hull_outliers(w, points, count, tau, candidate))
            return;
    }
}

int cq_hull_build(const cq_vec3 *points, int count, double radius, cq_hull **out)
{
    *out = NULL;
    int status = hull_validate(points, count, radius);
    if (status != CQ_OK)
        return status;
    hull_work work;
    hull_solve(&work, points, count);
    cq_hull *hull = hull_assemble(&work.draft, work.pts, work.n, work.frame, radius);
    if (!hull)
        return CQ_ENO_MEMORY;
    *out = hull;
    return CQ_OK;
}

void cq_hull_free(cq_hull *hull)
{
    if (!hull)
        return;
    hull_layout l = hull_layout_of(hull->vertex_count, hull->face_count, hull->face_vertex_count, hull->edge_count);
    cq_free(hull, l.total + cq__hull_sat_bytes(hull)); /* the size cq_alloc was asked for */
}

int cq_hull_support(const cq_hull *hull, cq_vec3 dir)
{
    int best = 0;
    double best_dot = cq_dot(dir, hull->vertices[0]);
    for (int i = 1; i < hull->vertex_count; i++) {
        double t = cq_dot(dir, hull->vertices[i]);
        if (t > best_dot) {
            best_dot = t;
            best = i;
        }
    }
    return best;
}
