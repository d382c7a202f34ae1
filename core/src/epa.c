/* EPA: a polytope of points of A - B, kept convex and closed, grows toward
 * the boundary nearest the origin until the support point along the
 * closest face's normal lies on that face. Everything lives in one
 * fixed-capacity struct on the caller's stack. Faces visible from a new
 * point (coplanar ones included, so no sliver face is ever made) are found
 * by a depth-first walk over face adjacency that yields the horizon in
 * loop order: linear in the faces removed, never quadratic. */
#include "minkowski.h"

/* Build points closer than this fraction of the simplex size to the
 * previous points' line or plane do not make a solid. */
#define CQ_EPA_FLAT 1e-9
/* A face whose sine between edges is below this has no reliable normal. */
#define CQ_EPA_SLIVER 1e-12

typedef struct cq_pface {
    cq_vec3 n;          /* unit outward normal */
    int16_t v[3];       /* vertices, counter-clockwise seen from outside */
    int16_t adj[3];     /* face across edge k, which runs v[k] -> v[k+1] */
    int8_t adj_edge[3]; /* that edge's index in the neighbour */
} cq_pface;

typedef struct cq_polytope {
    int nv, nf, nfree; /* vertices, face slots used, free slots */
    cq_mvert v[CQ_EPA_MAX_VERTICES];
    /* Per vertex: the newest vertex whose fan already ends a horizon edge
     * here, so a horizon that is not a simple loop (two edges ending at one
     * vertex) is caught in one look. */
    int16_t mark[CQ_EPA_MAX_VERTICES];
    int16_t free_faces[CQ_EPA_MAX_FACES];
    /* n . vertex of each face slot: the plane's signed distance from the
     * origin, INFINITY for a removed face (so the nearest-face scan is one
     * compare per slot and needs no liveness test). */
    double d[CQ_EPA_MAX_FACES];
    cq_pface f[CQ_EPA_MAX_FACES];
} cq_polytope;

const char *cq_epa_status_name(cq_epa_status s)
{
    switch (s) {
    case CQ_EPA_OK:
        return "ok";
    case CQ_EPA_ITERATION_LIMIT:
        return "iteration_limit";
    case CQ_EPA_CAPACITY:
        return "capacity";
    case CQ_EPA_DEGENERATE:
        return "degenerate";
    }
    return "unknown";
}

/* ---- building the first tetrahedron ---- */

typedef struct cq_frame {
    cq_vec3 o, e, n; /* origin point, unit line direction, unit plane normal */
} cq_frame;

typedef double (*cq_metric)(const cq_frame *f, cq_vec3 p);

static double cq_from_point(const cq_frame *f, cq_vec3 p) { return cq_len(cq_sub(p, f->o)); }
static double cq_from_line(const cq_frame *f, cq_vec3 p) { return cq_len(cq_cross(cq_sub(p, f->o), f->e)); }
static double cq_from_plane(const cq_frame *f, cq_vec3 p) { return fabs(cq_dot(cq_sub(p, f->o), f->n)); }

/* The candidate farthest by m (first on ties); its distance in *dist. */
static int cq_farthest(const cq_mvert *c, int n, cq_metric m, const cq_frame *f, double *dist)
{
    int best = 0;
    *dist = -1;
    for (int i = 0; i < n; i++) {
        double d = m(f, c[i].w);
        if (d > *dist) {
            *dist = d;
            best = i;
        }
    }
    return best;
}

/* Appends the support points along dirs (and their negations) to c. */
static int cq_probe(const cq_pair_proxies *pp, const cq_vec3 *dirs, int ndirs, cq_mvert *c, int n)
{
    for (int i = 0; i < ndirs; i++) {
        c[n++] = cq_mink_support(pp, dirs[i]);
        c[n++] = cq_mink_support(pp, cq_neg(dirs[i]));
    }
    return n;
}

/* A unit vector orthogonal to the unit vector e. */
static cq_vec3 cq_orthogonal(cq_vec3 e)
{
    cq_vec3 a = cq_vabs(e);
    cq_vec3 axis = a.x <= a.y && a.x <= a.z ? cq_v3(1, 0, 0) : (a.y <= a.z ? cq_v3(0, 1, 0) : cq_v3(0, 0, 1));
    cq_vec3 u = cq_cross(e, axis);
    return cq_scale(u, 1.0 / cq_len(u));
}

/* Picks the candidate farthest by m; when none is farther than min_dist,
 * probes the support along dirs first. Returns -1 when still none is. */
static int cq_pick(const cq_pair_proxies *pp, cq_mvert *c, int *n, cq_metric m, const cq_frame *f,
                   double min_dist, const cq_vec3 *dirs, int ndirs)
{
    double dist;
    int k = cq_farthest(c, *n, m, f, &dist);
    if (dist > min_dist)
        return k;
    *n = cq_probe(pp, dirs, ndirs, c, *n);
    k = cq_farthest(c, *n, m, f, &dist);
    return dist > min_dist ? k : -1;
}

/* Swaps t[1] and t[2] when needed so the tetrahedron t has positive volume. */
static void cq_orient(cq_mvert t[4])
{
    cq_vec3 nrm = cq_cross(cq_sub(t[1].w, t[0].w), cq_sub(t[2].w, t[0].w));
    if (cq_dot(cq_sub(t[3].w, t[0].w), nrm) < 0) {
        cq_mvert tmp = t[1];
        t[1] = t[2];
        t[2] = tmp;
    }
}

/* True when four points pass cq_build's tests as given: each farther than
 * its threshold from the point, line and plane of those before it. GJK's
 * terminal simplex usually does, and then no farthest-point search is
 * needed. The distances are multiplied out: |nrm| / l1 from the line,
 * |(c3 - c0) . nrm| / |nrm| from the plane. */
static bool cq_solid_as_given(const cq_mvert c[4], double eps)
{
    cq_vec3 e1 = cq_sub(c[1].w, c[0].w), e2 = cq_sub(c[2].w, c[0].w);
    double l1 = cq_len(e1), l2 = cq_len(e2);
    cq_vec3 nrm = cq_cross(e1, e2);
    double ln = cq_len(nrm);
    return l1 > eps && ln > fmax(eps, CQ_EPA_FLAT * l1) * l1 &&
           fabs(cq_dot(cq_sub(c[3].w, c[0].w), nrm)) > fmax(eps, CQ_EPA_FLAT * fmax(l1, l2)) * ln;
}

/* Completes an oriented solid tetrahedron t (positive volume) from the
 * start points and support probes. Returns how many affinely independent
 * points exist: 4 for a solid, fewer when A - B is flat, a segment or a point. */
static int cq_build(const cq_pair_proxies *pp, const cq_mvert *start, int count, double eps, cq_mvert t[4])
{
    if (count >= 4 && cq_solid_as_given(start, eps)) {
        for (int i = 0; i < 4; i++)
            t[i] = start[i];
        cq_orient(t);
        return 4;
    }
    /* The world axes in A's frame (the rows of A's rotation). */
    const cq_mat3 *ra = &pp->xa->r;
    cq_vec3 axes[3] = {cq_v3(ra->c[0].x, ra->c[1].x, ra->c[2].x), cq_v3(ra->c[0].y, ra->c[1].y, ra->c[2].y),
                       cq_v3(ra->c[0].z, ra->c[1].z, ra->c[2].z)};
    cq_mvert c[4 + 6 + 4 + 2]; /* start, then probes along the axes, the line's normals, the plane's normal */
    int n = 0;
    for (int i = 0; i < count && i < 4; i++)
        c[n++] = start[i];
    if (n == 0)
        c[n++] = cq_mink_support(pp, axes[0]);
    cq_frame f = {.o = c[0].w};
    t[0] = c[0];

    int k = cq_pick(pp, c, &n, cq_from_point, &f, eps, axes, 3);
    if (k < 0)
        return 1;
    t[1] = c[k];
    cq_vec3 e1 = cq_sub(t[1].w, t[0].w);
    double l1 = cq_len(e1);
    f.e = cq_scale(e1, 1.0 / l1);
    cq_vec3 perp[2] = {cq_orthogonal(f.e)};
    perp[1] = cq_cross(f.e, perp[0]);
    k = cq_pick(pp, c, &n, cq_from_line, &f, fmax(eps, CQ_EPA_FLAT * l1), perp, 2);
    if (k < 0)
        return 2;
    t[2] = c[k];
    cq_vec3 e2 = cq_sub(t[2].w, t[0].w);
    cq_vec3 nrm = cq_cross(e1, e2);
    f.n = cq_scale(nrm, 1.0 / cq_len(nrm));
    k = cq_pick(pp, c, &n, cq_from_plane, &f, fmax(eps, CQ_EPA_FLAT * fmax(l1, cq_len(e2))), &f.n, 1);
    if (k < 0)
        return 3;
    t[3] = c[k];
    cq_orient(t);
    return 4;
}

/* ---- the polytope ---- */

static int cq_add_vertex(cq_polytope *P, const cq_mvert *m)
{
    int i = P->nv++;
    P->v[i] = *m;
    P->mark[i] = -1;
    return i;
}

static bool cq_has_vertex(const cq_polytope *P, const cq_mvert *m)
{
    for (int i = 0; i < P->nv; i++)
        if (P->v[i].ia == m->ia && P->v[i].ib == m->ib)
            return true;
    return false;
}

static bool cq_face_live(const cq_polytope *P, int fi) { return P->d[fi] != INFINITY; }

/* Frees face slot fi for reuse. */
static void cq_remove_face(cq_polytope *P, int fi)
{
    P->d[fi] = INFINITY;
    P->free_faces[P->nfree++] = (int16_t)fi;
}

/* A free face slot, or -1 when the polytope is full. */
static int cq_alloc_face(cq_polytope *P)
{
    if (P->nfree > 0)
        return P->free_faces[--P->nfree];
    return P->nf < CQ_EPA_MAX_FACES ? P->nf++ : -1;
}

/* Sets face fi to (a, b, c); false when its normal is not defined. Inline:
 * it runs for every face of every fan. */
static inline bool cq_set_face(cq_polytope *P, int fi, int a, int b, int c)
{
    cq_pface *f = &P->f[fi];
    cq_vec3 wa = P->v[a].w;
    cq_vec3 ab = cq_sub(P->v[b].w, wa), ac = cq_sub(P->v[c].w, wa);
    cq_vec3 n = cq_cross(ab, ac);
    double tiny = CQ_EPA_SLIVER * CQ_EPA_SLIVER * cq_len2(ab) * cq_len2(ac);
    if (!cq_normalize(n, tiny, &f->n))
        return false;
    P->d[fi] = cq_dot(f->n, wa);
    f->v[0] = (int16_t)a;
    f->v[1] = (int16_t)b;
    f->v[2] = (int16_t)c;
    return true;
}

static void cq_link(cq_polytope *P, int f, int k, int g, int j)
{
    P->f[f].adj[k] = (int16_t)g;
    P->f[f].adj_edge[k] = (int8_t)j;
    P->f[g].adj[j] = (int16_t)f;
    P->f[g].adj_edge[j] = (int8_t)k;
}

static bool cq_init_tetra(cq_polytope *P, const cq_mvert t[4])
{
    static const int faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
    /* Edge k of face f (faces[f][k] -> faces[f][k + 1]) is edge adj_edge[f][k]
     * of face adj[f][k], run the other way: the tetrahedron's fixed
     * adjacency, so no search is needed. */
    static const int8_t adj[4][3] = {{3, 2, 1}, {0, 2, 3}, {0, 3, 1}, {1, 2, 0}};
    static const int8_t adj_edge[4][3] = {{2, 0, 0}, {2, 2, 0}, {1, 1, 1}, {2, 1, 0}};
    P->nv = P->nf = P->nfree = 0; /* so the four faces take slots 0..3 */
    for (int i = 0; i < 4; i++)
        cq_add_vertex(P, &t[i]);
    for (int i = 0; i < 4; i++) {
        if (!cq_set_face(P, cq_alloc_face(P), faces[i][0], faces[i][1], faces[i][2]))
            return false;
        for (int k = 0; k < 3; k++) {
            P->f[i].adj[k] = adj[i][k];
            P->f[i].adj_edge[k] = adj_edge[i][k];
        }
    }
    return true;
}

/* The live face nearest the origin plane-wise (lowest slot on ties). */
static int cq_closest_face(const cq_polytope *P)
{
    int best = 0;
    for (int i = 1; i < P->nf; i++)
        best = P->d[i] < P->d[best] ? i : best;
    return best;
}

typedef struct cq_hedge {
    int16_t face;
    int8_t edge;
} cq_hedge;

/* Edge k + 1 and k + 2 of a triangle, without a division. */
static const int8_t cq_next_edge[3] = {1, 2, 0}, cq_prev_edge[3] = {2, 0, 1};

/* Removes the faces that vertex vi sees (seed first; coplanar counts as
 * seen) and returns the horizon edges in loop order, or -1 when the walk
 * does not give a proper horizon. */
static int cq_horizon(cq_polytope *P, int seed, int vi, double eps, cq_hedge *horizon)
{
    cq_hedge stack[2 * CQ_EPA_MAX_FACES + 3];
    int sp = 0, nh = 0;
    cq_vec3 w = P->v[vi].w;
    cq_remove_face(P, seed);
    for (int k = 2; k >= 0; k--)
        stack[sp++] = (cq_hedge){P->f[seed].adj[k], P->f[seed].adj_edge[k]};
    while (sp > 0) {
        cq_hedge h = stack[--sp];
        if (!cq_face_live(P, h.face))
            continue;
        const cq_pface *g = &P->f[h.face];
        if (cq_dot(g->n, w) - P->d[h.face] > -eps) {
            cq_remove_face(P, h.face);
            /* Push so that the next edge around g is walked first. */
            int k2 = cq_prev_edge[h.edge], k1 = cq_next_edge[h.edge];
            stack[sp++] = (cq_hedge){g->adj[k2], g->adj_edge[k2]};
            stack[sp++] = (cq_hedge){g->adj[k1], g->adj_edge[k1]};
        } else {
            if (nh == CQ_EPA_MAX_VERTICES)
                return -1;
            horizon[nh++] = h;
        }
    }
    return nh >= 3 ? nh : -1;
}

/* Adds support point m (beyond face seed) and re-closes the polytope with
 * a fan of faces from the horizon to it. The walk gives the horizon in loop
 * order: edge i runs s_i -> t_i with t_(i+1) == s_i. New face i is
 * (t_i, s_i, w): its edge 0 meets the kept face across the horizon, its
 * edge 1 (s_i -> w) meets edge 2 (w -> t_(i+1)) of the next new face. A
 * horizon that is not one loop passing each vertex once means the polytope
 * broke. */
static cq_epa_status cq_expand_once(cq_polytope *P, int seed, const cq_mvert *m, double eps)
{
    if (P->nv == CQ_EPA_MAX_VERTICES)
        return CQ_EPA_CAPACITY;
    int vi = cq_add_vertex(P, m);
    cq_hedge horizon[CQ_EPA_MAX_VERTICES];
    int nh = cq_horizon(P, seed, vi, eps, horizon);
    if (nh < 0)
        return CQ_EPA_DEGENERATE;
    int16_t fan[CQ_EPA_MAX_VERTICES];
    int first_t = -1, prev_s = -1;
    bool chained = true;
    for (int i = 0; i < nh; i++) {
        cq_hedge h = horizon[i];
        const int16_t *hv = P->f[h.face].v;
        int s = hv[h.edge], t = hv[cq_next_edge[h.edge]];
        int fi = cq_alloc_face(P);
        if (fi < 0)
            return CQ_EPA_CAPACITY;
        if (P->mark[t] == vi || !cq_set_face(P, fi, t, s, vi))
            return CQ_EPA_DEGENERATE;
        P->mark[t] = (int16_t)vi;
        fan[i] = (int16_t)fi;
        cq_link(P, fi, 0, h.face, h.edge);
        if (i == 0) {
            first_t = t;
        } else {
            chained = chained && t == prev_s;
            cq_link(P, fan[i - 1], 1, fi, 2);
        }
        prev_s = s;
    }
    if (!chained || first_t != prev_s)
        return CQ_EPA_DEGENERATE;
    cq_link(P, fan[nh - 1], 1, fan[0], 2);
    return CQ_EPA_OK;
}

/* The closest point of face g to the foot of the origin on its plane, as a
 * solved simplex of its vertices; returns the foot's distance to it. */
static double cq_foot_on_face(const cq_polytope *P, int g, cq_simplex *s)
{
    const cq_pface *f = &P->f[g];
    cq_vec3 foot = cq_scale(f->n, P->d[g]);
    s->count = 3;
    for (int i = 0; i < 3; i++) {
        s->v[i] = P->v[f->v[i]];
        s->v[i].w = cq_sub(s->v[i].w, foot);
    }
    return cq_len(cq__simplex_solve(s));
}

/* Depth, normal and witnesses of the converged face fi. A facet of A - B
 * may be split into coplanar triangles and the origin's foot can lie in a
 * neighbour of fi: the witnesses come from the coplanar face that holds it. */
static void cq_face_result(const cq_pair_proxies *pp, const cq_polytope *P, int fi, double eps,
                           cq_expand_result *r)
{
    const cq_pface *f = &P->f[fi];
    int best = fi;
    cq_simplex s, cand;
    double best_gap = cq_foot_on_face(P, fi, &s);
    for (int g = 0; g < P->nf && best_gap > 0; g++) {
        const cq_pface *h = &P->f[g];
        if (!cq_face_live(P, g) || g == fi || fabs(P->d[g] - P->d[fi]) > eps || cq_dot(h->n, f->n) < 1 - CQ_EPA_SLIVER)
            continue;
        double gap = cq_foot_on_face(P, g, &cand);
        if (gap < best_gap) {
            best_gap = gap;
            best = g;
            s = cand;
        }
    }
    r->depth = P->d[best];
    r->normal = cq_mul_mv(&pp->xa->r, P->f[best].n);
    cq__mink_witnesses(pp, s.v, s.bc, s.count, &r->point_a, &r->point_b);
}

cq_expand_result cq__polytope_expand(const cq_pair_proxies *pp, const cq_mvert *start, int count,
                                     cq_expand_goal goal, double threshold, int max_iterations,
                                     double tolerance)
{
    /* Field by field: a zeroing initialiser of the whole struct compiles to
     * a block store whose start-up costs more than these few moves. */
    cq_expand_result r;
    r.status = CQ_EPA_OK;
    r.deeper = false;
    r.depth = 0;
    r.normal = r.point_a = r.point_b = cq_v3(0, 0, 0);
    r.iterations = 0;
    double noise = pp->noise;
    cq_mvert t[4];
    if (cq_build(pp, start, count, 8 * noise, t) < 4) {
        /* Flat: the depth is at most the (negligible) thickness. */
        if (goal == CQ_EXPAND_DEPTH)
            r.status = CQ_EPA_DEGENERATE;
        return r;
    }
    cq_polytope P;
    if (!cq_init_tetra(&P, t)) {
        r.status = CQ_EPA_DEGENERATE;
        return r;
    }
    double upper = INFINITY; /* smallest support height seen: bounds the depth from above */
    /* A face counts as seen from a new point that lies within `seen` of
     * its plane: the rounding noise, or a sliver's width if larger. A new
     * face (t, s, w) on a horizon edge t-s is a sliver when the sine of its
     * angle at t is below CQ_EPA_SLIVER, so w lies within CQ_EPA_SLIVER
     * |w - t| of the line t-s, and so of the plane of the kept face across
     * it; |w - t| < 4 size, size the largest coordinate of the points. A
     * face that close is removed with the seen ones instead of making the
     * sliver. Nearly aligned shapes (a stack turned by 1e-12 rad) make such
     * points, and EPA used to give up on them (a degenerate fallback). */
    double size = 0;
    for (int i = 0; i < 4; i++)
        size = cq_larger(size, cq_max_abs(t[i].w));
    for (;;) {
        int fi = cq_closest_face(&P);
        const cq_pface *f = &P.f[fi];
        double fd = P.d[fi];
        /* With the origin inside, the nearest face bounds the depth from below. */
        if (goal == CQ_EXPAND_CLASSIFY && fd > threshold) {
            r.deeper = true;
            return r;
        }
        if (r.iterations >= max_iterations) {
            r.status = CQ_EPA_ITERATION_LIMIT;
            return r;
        }
        cq_mvert m = cq_mink_support(pp, f->n);
        r.iterations++;
        double h = cq_dot(m.w, f->n);
        upper = h < upper ? h : upper;
        if (goal == CQ_EXPAND_CLASSIFY && upper <= threshold)
            return r;
        size = cq_larger(size, cq_max_abs(m.w));
        double seen = cq_larger(4 * noise, 4 * CQ_EPA_SLIVER * size);
        /* A support point within `seen` of the face is on it: where a face
         * within `seen` was removed as seen, the polytope may stand that
         * far inside A - B, and a finer test would chase the difference
         * into a vertex it already has. */
        double conv = cq_larger(tolerance * fabs(fd) + 4 * noise, seen);
        if (h - fd <= conv) {
            if (goal == CQ_EXPAND_DEPTH)
                cq_face_result(pp, &P, fi, conv, &r);
            return r;
        }
        /* A vertex beyond a face it belongs to: the polytope lost convexity. */
        r.status = cq_has_vertex(&P, &m) ? CQ_EPA_DEGENERATE : cq_expand_once(&P, fi, &m, seen);
        if (r.status != CQ_EPA_OK)
            return r;
    }
}

cq_epa_result cq__epa_run(const cq_pair_proxies *pp, const cq_mvert *start, int count, const cq_epa_options *opt)
{
    int max_it = opt && opt->max_iterations > 0 ? opt->max_iterations : CQ_EPA_DEFAULT_MAX_ITERATIONS;
    double tol = opt && opt->tolerance > 0 ? opt->tolerance : CQ_EPA_DEFAULT_TOLERANCE;
    cq_expand_result e = cq__polytope_expand(pp, start, count, CQ_EXPAND_DEPTH, 0, max_it, tol);
    cq_epa_result r = {.status = e.status, .iterations = e.iterations};
    if (e.status == CQ_EPA_OK) {
        r.depth = e.depth;
        r.normal = e.normal;
        r.point_a = e.point_a;
        r.point_b = e.point_b;
    }
    return r;
}

cq_epa_result cq_epa_penetration(const cq_proxy *a, const cq_xform *xa, const cq_proxy *b,
                                 const cq_xform *xb, const cq_simplex_cache *start,
                                 const cq_epa_options *opt)
{
    cq_pair_proxies pp;
    cq__pair_proxies_init(&pp, a, xa, b, xb);
    cq_mvert sv[4];
    int n = 0;
    for (int k = 0; start && k < start->count && k < 4; k++)
        if (start->index_a[k] < a->count && start->index_b[k] < b->count)
            sv[n++] = cq_mink_vertex(&pp, start->index_a[k], start->index_b[k]);
    return cq__epa_run(&pp, sv, n, opt);
}

void cq_epa_apply_radii(cq_epa_result *r, const cq_proxy *a, const cq_proxy *b)
{
    if (r->status != CQ_EPA_OK)
        return;
    r->depth += a->radius + b->radius;
    r->point_a = cq_mad(r->point_a, r->normal, a->radius);
    r->point_b = cq_mad(r->point_b, r->normal, -b->radius);
}
