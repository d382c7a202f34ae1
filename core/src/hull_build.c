/* The solid (3-D) hull: quickhull over at most CQ_HULL_MAX_POINTS grid
 * points in bounded stack scratch, then coplanar triangles merged into
 * convex polygon faces.
 * - Topology is exact: a triangle is replaced when the eye lies strictly
 *   above it (cq_hull_side), so the triangulation stays convex, the region
 *   an eye sees is a disk and no cone triangle is degenerate.
 * - The tolerance decides the rest, on heights that are accurate because
 *   plane normals are exact: a point joins the hull only when it lies more
 *   than tol above a triangle, and a triangle joins a polygon when its
 *   vertices lie within tol of the polygon's seed plane and the polygon
 *   stays convex (no vertex more than tol inside the chord of its
 *   neighbours). */
#include <limits.h>
#include <string.h>

#include "hull_build.h"

/* A triangulated hull of V <= 256 vertices has 2V - 4 triangles, and an
 * insertion frees its visible triangles before it builds the new cone. */
#define QH_CAP (2 * CQ_HULL_MAX_POINTS)
#define QH_NONE (-1)
/* Quickhull re-tests only the orphans of replaced triangles against the new
 * cone; a final sweep re-tests every point against every triangle and
 * inserts what that missed, at most this many times. */
#define QH_SWEEPS 8

typedef struct qh_face {
    cq_vec3 n;       /* unit outward normal */
    double area2;    /* twice the area: the largest triangles seed the merge */
    double far_dist; /* height of the farthest outside point */
    int16_t v[3];    /* counter-clockwise from outside; edge i runs v[i] -> v[(i + 1) % 3] */
    int16_t nb[3];   /* the triangle across edge i */
    int16_t head;    /* outside set, linked through qh.next_pt */
    int16_t far;     /* the farthest outside point */
    bool alive, queued, visible;
} qh_face;

typedef struct qh {
    const cq_vec3 *s; /* grid points */
    int n;
    double tol;
    int alive_count;
    qh_face f[QH_CAP];
    int16_t next_pt[CQ_HULL_MAX_POINTS];
    int16_t free_slots[QH_CAP];
    int free_count;
    int16_t pending[QH_CAP]; /* triangles that may hold outside points (queued) */
    int pending_count;
    /* One insertion: the visible triangles, the horizon (edge k runs
     * hz_from[k] -> hz_to[k] on a visible triangle, hz_outer[k] is the one
     * beyond), its cyclic order, and the triangles of the new cone. */
    int16_t visible[QH_CAP];
    int visible_count;
    int16_t hz_from[CQ_HULL_MAX_POINTS], hz_to[CQ_HULL_MAX_POINTS];
    int16_t hz_outer[CQ_HULL_MAX_POINTS], hz_order[CQ_HULL_MAX_POINTS];
    int16_t hz_at[CQ_HULL_MAX_POINTS]; /* horizon edge leaving a vertex */
    int16_t cone[CQ_HULL_MAX_POINTS];
    int16_t orphans[CQ_HULL_MAX_POINTS];
} qh;

/* The exact, unnormalised normal of the grid triangle (a, b, c). */
static cq_vec3 qh_cross(const qh *h, int a, int b, int c)
{
    return cq_cross(cq_sub(h->s[b], h->s[a]), cq_sub(h->s[c], h->s[a]));
}

static double qh_height(const qh *h, const qh_face *f, int p)
{
    return cq_dot(f->n, cq_sub(h->s[p], h->s[f->v[0]]));
}

/* Exactly whether p lies strictly above triangle f's plane. */
static bool qh_above(const qh *h, const qh_face *f, int p)
{
    return cq_hull_side(qh_cross(h, f->v[0], f->v[1], f->v[2]), h->s[f->v[0]], h->s[p]) > 0;
}

static int qh_new_face(qh *h, int a, int b, int c)
{
    int fi = h->free_slots[--h->free_count];
    qh_face *f = &h->f[fi];
    cq_vec3 cr = qh_cross(h, a, b, c);
    f->area2 = cq_len(cr); /* > 0: every new triangle has its apex strictly off its base's line */
    f->n = cq_scale(cr, 1.0 / f->area2);
    f->v[0] = (int16_t)a;
    f->v[1] = (int16_t)b;
    f->v[2] = (int16_t)c;
    f->head = f->far = QH_NONE;
    f->far_dist = 0;
    f->alive = true;
    f->visible = false;
    h->alive_count++;
    return fi;
}

static void qh_claim(qh *h, int fi, int p, double height)
{
    qh_face *f = &h->f[fi];
    h->next_pt[p] = f->head;
    f->head = (int16_t)p;
    if (f->far == QH_NONE || height > f->far_dist) {
        f->far = (int16_t)p;
        f->far_dist = height;
    }
    if (!f->queued) {
        f->queued = true;
        h->pending[h->pending_count++] = (int16_t)fi;
    }
}

/* Gives p to the first of faces[0..count) it lies more than tol above. */
static void qh_assign(qh *h, int p, const int16_t *faces, int count)
{
    for (int k = 0; k < count; k++) {
        double height = qh_height(h, &h->f[faces[k]], p);
        if (height > h->tol) {
            qh_claim(h, faces[k], p, height);
            return;
        }
    }
}

/* Points face `to` across the edge a -> b of face `from`. */
static void qh_set_neighbour(qh *h, int from, int a, int b, int to)
{
    qh_face *f = &h->f[from];
    for (int i = 0; i < 3; i++)
        if (f->v[i] == a && f->v[(i + 1) % 3] == b)
            f->nb[i] = (int16_t)to;
}

static void qh_init(qh *h, const cq_vec3 *s, int n, const int init[4], double tol)
{
    h->s = s;
    h->n = n;
    h->tol = tol;
    h->alive_count = 0;
    h->pending_count = 0;
    h->free_count = 0;
    for (int i = QH_CAP - 1; i >= 0; i--) {
        h->f[i].alive = h->f[i].queued = h->f[i].visible = false;
        h->free_slots[h->free_count++] = (int16_t)i;
    }
    memset(h->hz_at, 0xFF, sizeof h->hz_at); /* all QH_NONE */

    int a = init[0], b = init[1], c = init[2], d = init[3];
    if (cq_hull_side(qh_cross(h, a, b, c), s[a], s[d]) > 0) { /* the base must face away from d */
        b = init[2];
        c = init[1];
    }
    int16_t tet[4] = {(int16_t)qh_new_face(h, a, b, c), (int16_t)qh_new_face(h, b, a, d),
                      (int16_t)qh_new_face(h, c, b, d), (int16_t)qh_new_face(h, a, c, d)};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int e = 0; e < 3; e++)
                if (i != j)
                    qh_set_neighbour(h, tet[i], h->f[tet[j]].v[(e + 1) % 3], h->f[tet[j]].v[e], tet[j]);
    for (int p = 0; p < n; p++)
        if (p != a && p != b && p != c && p != d)
            qh_assign(h, p, tet, 4);
}

static void qh_mark_visible(qh *h, int fi)
{
    h->f[fi].visible = true;
    h->visible[h->visible_count++] = (int16_t)fi;
}

/* Marks every triangle the eye lies strictly above, flooding from the
 * eye's own triangle (on a convex triangulation they form one disk). */
static void qh_find_visible(qh *h, int fi, int eye)
{
    h->visible_count = 0;
    qh_mark_visible(h, fi);
    for (int k = 0; k < h->visible_count; k++) {
        const qh_face *f = &h->f[h->visible[k]];
        for (int i = 0; i < 3; i++) {
            const qh_face *g = &h->f[f->nb[i]];
            if (!g->visible && qh_above(h, g, eye))
                qh_mark_visible(h, f->nb[i]);
        }
    }
}

static void qh_unmark_visible(qh *h)
{
    for (int k = 0; k < h->visible_count; k++)
        h->f[h->visible[k]].visible = false;
}

/* Orders the horizon edges into one cycle; false unless they form exactly
 * one simple loop. */
static bool qh_chain(qh *h, int count)
{
    int k = 0;
    for (int j = 0; j < count; j++) {
        if (k == QH_NONE || (j > 0 && k == 0))
            return false;
        h->hz_order[j] = (int16_t)k;
        k = h->hz_at[h->hz_to[k]];
    }
    return k == 0;
}

/* Collects and orders the horizon; its edge count, or -1 when it is not one
 * simple loop (exact orientation rules that out; the check keeps a broken
 * invariant from corrupting the mesh). */
static int qh_horizon(qh *h)
{
    int count = 0;
    bool simple = true;
    for (int k = 0; k < h->visible_count; k++) {
        const qh_face *f = &h->f[h->visible[k]];
        for (int i = 0; i < 3; i++) {
            if (h->f[f->nb[i]].visible)
                continue;
            int from = f->v[i];
            if (h->hz_at[from] != QH_NONE) { /* two horizon edges leave one vertex */
                simple = false;
                continue;
            }
            h->hz_at[from] = (int16_t)count;
            h->hz_from[count] = (int16_t)from;
            h->hz_to[count] = f->v[(i + 1) % 3];
            h->hz_outer[count] = f->nb[i];
            count++;
        }
    }
    simple = simple && count >= 3 && qh_chain(h, count);
    for (int k = 0; k < count; k++)
        h->hz_at[h->hz_from[k]] = QH_NONE;
    return simple ? count : -1;
}

/* Frees the visible triangles; their outside points (but the eye) become
 * orphans to re-assign. Returns the orphan count. */
static int qh_release_visible(qh *h, int eye)
{
    int orphans = 0;
    for (int k = 0; k < h->visible_count; k++) {
        qh_face *f = &h->f[h->visible[k]];
        for (int p = f->head; p != QH_NONE; p = h->next_pt[p])
            if (p != eye)
                h->orphans[orphans++] = (int16_t)p;
        f->alive = f->visible = false;
        h->free_slots[h->free_count++] = h->visible[k];
        h->alive_count--;
    }
    return orphans;
}

/* Joins every horizon edge to the eye, in horizon order, so consecutive
 * cone triangles are neighbours. */
static void qh_build_cone(qh *h, int eye, int count)
{
    for (int j = 0; j < count; j++) {
        int k = h->hz_order[j];
        h->cone[j] = (int16_t)qh_new_face(h, h->hz_from[k], h->hz_to[k], eye);
    }
    for (int j = 0; j < count; j++) {
        int k = h->hz_order[j];
        qh_face *f = &h->f[h->cone[j]];
        f->nb[0] = h->hz_outer[k];
        f->nb[1] = h->cone[(j + 1) % count];
        f->nb[2] = h->cone[(j + count - 1) % count];
        qh_set_neighbour(h, h->hz_outer[k], h->hz_to[k], h->hz_from[k], h->cone[j]);
    }
}

/* Adds the farthest outside point of triangle fi to the hull; false (and
 * nothing changed) when its horizon is broken. */
static bool qh_insert(qh *h, int fi)
{
    int eye = h->f[fi].far;
    qh_find_visible(h, fi, eye);
    int count = qh_horizon(h);
    if (count < 0 || h->alive_count - h->visible_count + count > QH_CAP) {
        qh_unmark_visible(h);
        return false;
    }
    int orphans = qh_release_visible(h, eye);
    qh_build_cone(h, eye, count);
    for (int k = 0; k < orphans; k++)
        qh_assign(h, h->orphans[k], h->cone, count);
    return true;
}

/* Gives up on the farthest point of fi (it could not be inserted): it is
 * dropped as if inside, and the next farthest becomes the eye. */
static void qh_drop_far(qh *h, int fi)
{
    qh_face *f = &h->f[fi];
    int16_t *link = &f->head;
    while (*link != f->far)
        link = &h->next_pt[*link];
    *link = h->next_pt[f->far];
    f->far = QH_NONE;
    int16_t p = f->head;
    f->head = QH_NONE;
    while (p != QH_NONE) { /* re-claim the rest to recompute the farthest */
        int16_t next = h->next_pt[p];
        qh_claim(h, fi, p, qh_height(h, f, p));
        p = next;
    }
}

static void qh_run(qh *h)
{
    while (h->pending_count > 0) {
        int fi = h->pending[--h->pending_count];
        qh_face *f = &h->f[fi];
        f->queued = false;
        if (f->alive && f->head != QH_NONE && !qh_insert(h, fi))
            qh_drop_far(h, fi);
    }
}

/* Re-tests every non-vertex point against every triangle; true when some
 * point was found outside (and queued for insertion). */
static bool qh_sweep(qh *h)
{
    bool vertex[CQ_HULL_MAX_POINTS] = {false};
    int16_t faces[QH_CAP];
    int count = 0;
    for (int fi = 0; fi < QH_CAP; fi++) {
        if (!h->f[fi].alive)
            continue;
        faces[count++] = (int16_t)fi;
        for (int i = 0; i < 3; i++)
            vertex[h->f[fi].v[i]] = true;
    }
    int before = h->pending_count;
    for (int p = 0; p < h->n; p++)
        if (!vertex[p])
            qh_assign(h, p, faces, count);
    return h->pending_count > before;
}

/* ---- merging coplanar triangles into polygon faces ---- */

typedef struct qh_merge {
    int16_t group[QH_CAP];              /* polygon of each triangle, QH_NONE until merged */
    int16_t on_loop[CQ_HULL_MAX_POINTS]; /* polygon whose boundary holds the vertex */
    int16_t next[CQ_HULL_MAX_POINTS], prev[CQ_HULL_MAX_POINTS]; /* the growing boundary */
    int16_t pending[3 * QH_CAP];
    int pending_count;
    int loop_len, anchor;
    cq_vec3 n;
    double d; /* the seed triangle's plane */
} qh_merge;

/* True when b lies more than tol inside the chord a -> c of a loop that is
 * counter-clockwise about the seed normal. */
static bool qh_reflex(const qh *h, const qh_merge *m, int a, int b, int c)
{
    cq_vec3 ac = cq_sub(h->s[c], h->s[a]);
    return cq_dot(cq_cross(ac, cq_sub(h->s[b], h->s[a])), m->n) > h->tol * cq_len(ac);
}

static void qh_loop_link(qh_merge *m, int a, int b)
{
    m->next[a] = (int16_t)b;
    m->prev[b] = (int16_t)a;
}

/* Triangle t shares one edge x -> y of the boundary and brings a new vertex o. */
static bool qh_join_ear(const qh *h, qh_merge *m, int g, int x, int y, int o)
{
    if (m->next[x] != y || qh_reflex(h, m, m->prev[x], x, o) || qh_reflex(h, m, x, o, y) ||
        qh_reflex(h, m, o, y, m->next[y]))
        return false;
    qh_loop_link(m, x, o);
    qh_loop_link(m, o, y);
    m->on_loop[o] = (int16_t)g;
    m->loop_len++;
    return true;
}

/* Triangle t fills the notch x -> y -> z of the boundary; y becomes interior. */
static bool qh_join_notch(const qh *h, qh_merge *m, int x, int y, int z)
{
    if (m->loop_len <= 3 || m->next[x] != y || m->next[y] != z || qh_reflex(h, m, m->prev[x], x, z) ||
        qh_reflex(h, m, x, z, m->next[z]))
        return false;
    qh_loop_link(m, x, z);
    m->on_loop[y] = QH_NONE;
    if (m->anchor == y)
        m->anchor = x;
    m->loop_len--;
    return true;
}

/* Adds triangle t to polygon g when it is coplanar with the seed, keeps the
 * polygon a disk (one shared edge and a new vertex, or two shared edges) and
 * keeps it convex. */
static bool qh_try_join(const qh *h, qh_merge *m, int g, int t)
{
    const qh_face *f = &h->f[t];
    if (cq_dot(f->n, m->n) <= 0)
        return false;
    int shared = 0, edge = 0, free_edge = 0, on = 0;
    for (int i = 0; i < 3; i++) {
        if (fabs(cq_dot(m->n, h->s[f->v[i]]) - m->d) > h->tol)
            return false;
        if (m->group[f->nb[i]] == g) {
            shared++;
            edge = i;
        } else {
            free_edge = i;
        }
        on += m->on_loop[f->v[i]] == g;
    }
    if (shared == 1 && on == 2)
        return qh_join_ear(h, m, g, f->v[(edge + 1) % 3], f->v[edge], f->v[(edge + 2) % 3]);
    if (shared == 2)
        return qh_join_notch(h, m, f->v[free_edge], f->v[(free_edge + 2) % 3], f->v[(free_edge + 1) % 3]);
    return false;
}

static void qh_push_neighbours(const qh *h, qh_merge *m, int t)
{
    for (int i = 0; i < 3; i++)
        if (m->group[h->f[t].nb[i]] == QH_NONE)
            m->pending[m->pending_count++] = h->f[t].nb[i];
}

/* Grows polygon g from a seed triangle over its coplanar neighbours. A
 * triangle turned down now is pushed again when another neighbour joins. */
static void qh_grow(const qh *h, qh_merge *m, int g, int seed)
{
    const qh_face *f = &h->f[seed];
    m->n = f->n;
    m->d = cq_dot(f->n, h->s[f->v[0]]);
    m->group[seed] = (int16_t)g;
    for (int i = 0; i < 3; i++) {
        qh_loop_link(m, f->v[i], f->v[(i + 1) % 3]);
        m->on_loop[f->v[i]] = (int16_t)g;
    }
    m->loop_len = 3;
    m->anchor = f->v[0];
    m->pending_count = 0;
    qh_push_neighbours(h, m, seed);
    while (m->pending_count > 0) {
        int t = m->pending[--m->pending_count];
        if (m->group[t] == QH_NONE && qh_try_join(h, m, g, t)) {
            m->group[t] = (int16_t)g;
            qh_push_neighbours(h, m, t);
        }
    }
}

/* Writes polygon g's loop, starting at its lowest vertex index. */
static void qh_emit_face(const qh_merge *m, cq_hull_draft *out)
{
    int start = m->anchor;
    for (int v = m->next[start], k = 1; k < m->loop_len; v = m->next[v], k++)
        if (v < start)
            start = v;
    cq_hull_face *face = &out->faces[out->face_count++];
    face->normal = m->n;
    face->offset = m->d;
    face->first = (uint16_t)out->loop_count;
    face->count = (uint16_t)m->loop_len;
    for (int v = start, k = 0; k < m->loop_len; v = m->next[v], k++) {
        out->loop[out->loop_count++] = (uint16_t)v;
        out->used[v] = true;
    }
}

/* One edge per pair of triangles in different polygons, listed from the
 * lower polygon's side: v0 -> v1 runs counter-clockwise around f0. */
static void qh_emit_edges(const qh *h, const qh_merge *m, cq_hull_draft *out)
{
    out->edge_count = 0;
    for (int t = 0; t < QH_CAP; t++) {
        const qh_face *f = &h->f[t];
        for (int i = 0; f->alive && i < 3; i++) {
            int g0 = m->group[t], g1 = m->group[f->nb[i]];
            if (g0 < g1)
                out->edges[out->edge_count++] =
                    (cq_hull_edge){(uint16_t)f->v[i], (uint16_t)f->v[(i + 1) % 3], (uint16_t)g0, (uint16_t)g1};
        }
    }
}

/* Orders the triangles largest first, to within a factor of two (by the
 * binary exponent of their area, stable in slot order): a counting sort
 * instead of a comparison sort, the merge needing no finer order. */
#define QH_AREA_BUCKETS 64
static int qh_largest_first(const qh *h, int16_t *order)
{
    int bucket[QH_CAP], start[QH_AREA_BUCKETS + 1] = {0}, top = INT_MIN, count = 0;
    for (int t = 0; t < QH_CAP; t++)
        if (h->f[t].alive) {
            frexp(h->f[t].area2, &bucket[t]);
            top = bucket[t] > top ? bucket[t] : top;
        }
    for (int t = 0; t < QH_CAP; t++)
        if (h->f[t].alive) {
            bucket[t] = top - bucket[t] < QH_AREA_BUCKETS - 1 ? top - bucket[t] : QH_AREA_BUCKETS - 1;
            start[bucket[t] + 1]++;
            count++;
        }
    for (int k = 0; k < QH_AREA_BUCKETS; k++)
        start[k + 1] += start[k];
    for (int t = 0; t < QH_CAP; t++)
        if (h->f[t].alive)
            order[start[bucket[t]]++] = (int16_t)t;
    return count;
}

/* Seeds polygons from the largest triangles first: a small seed's plane
 * might not hold its bigger neighbours within tol. */
static void qh_merge_faces(const qh *h, cq_hull_draft *out)
{
    int16_t order[QH_CAP];
    int count = qh_largest_first(h, order);
    qh_merge m;
    memset(m.group, 0xFF, sizeof m.group); /* all QH_NONE */
    memset(m.on_loop, 0xFF, sizeof m.on_loop);
    out->face_count = out->loop_count = 0;
    for (int k = 0; k < count; k++) {
        if (m.group[order[k]] != QH_NONE)
            continue;
        qh_grow(h, &m, out->face_count, order[k]);
        qh_emit_face(&m, out);
    }
    qh_emit_edges(h, &m, out);
}

/* Distance of point p from the line through a and c. */
static double qh_line_dist(const qh *h, int a, int c, int p)
{
    cq_vec3 ac = cq_sub(h->s[c], h->s[a]);
    return cq_len(cq_cross(ac, cq_sub(h->s[p], h->s[a]))) / cq_len(ac);
}

/* Position of vertex v in face f's loop. */
static int qh_loop_find(const cq_hull_draft *out, int f, int v)
{
    int k = 0;
    while (out->loop[out->faces[f].first + k] != v)
        k++;
    return k;
}

/* A vertex on just two polygons lies on their common edge, within their
 * tolerance bands: it was inserted before the points that later covered it.
 * It goes when it lies within tol of the chord of its loop neighbours (and
 * every polygon keeps three vertices), the two edges through it becoming
 * one. Further out (up to sqrt(2) tol, where two bands meet at a right
 * angle) it stays, so that the vertices still reach every point. */
static void qh_drop_edge_points(const qh *h, cq_hull_draft *out)
{
    int faces_at[CQ_HULL_MAX_POINTS] = {0};
    bool drop[CQ_HULL_MAX_POINTS] = {false};
    for (int k = 0; k < out->loop_count; k++)
        faces_at[out->loop[k]]++;
    for (int f = 0; f < out->face_count; f++) {
        const uint16_t *loop = out->loop + out->faces[f].first;
        int count = out->faces[f].count;
        for (int k = 0; k < count; k++) {
            int before = loop[(k + count - 1) % count], after = loop[(k + 1) % count];
            if (faces_at[loop[k]] == 2)
                drop[loop[k]] = qh_line_dist(h, before, after, loop[k]) <= h->tol;
        }
    }
    for (int f = 0; f < out->face_count; f++) {
        const uint16_t *loop = out->loop + out->faces[f].first;
        int kept = 0;
        for (int k = 0; k < out->faces[f].count; k++)
            kept += !drop[loop[k]];
        if (kept < 3)
            for (int k = 0; k < out->faces[f].count; k++)
                drop[loop[k]] = false;
    }
    int write = 0;
    for (int f = 0; f < out->face_count; f++) {
        cq_hull_face *face = &out->faces[f];
        int first = face->first, count = face->count;
        face->first = (uint16_t)write;
        for (int k = 0; k < count; k++)
            if (!drop[out->loop[first + k]])
                out->loop[write++] = out->loop[first + k];
        face->count = (uint16_t)(write - face->first);
    }
    out->loop_count = write;
    int edges = 0;
    for (int e = 0; e < out->edge_count; e++) {
        cq_hull_edge ed = out->edges[e];
        if (drop[ed.v0])
            continue;
        const cq_hull_face *f0 = &out->faces[ed.f0];
        ed.v1 = out->loop[f0->first + (qh_loop_find(out, ed.f0, ed.v0) + 1) % f0->count];
        out->edges[edges++] = ed;
    }
    out->edge_count = edges;
    for (int v = 0; v < h->n; v++)
        out->used[v] = out->used[v] && !drop[v];
}

/* The vertex graph of the triangulation: each triangle lists each of its
 * edges once in each direction across the two triangles sharing it. */
static void qh_emit_adjacency(const qh *h, cq_hull_draft *out)
{
    int degree[CQ_HULL_MAX_POINTS] = {0};
    for (int t = 0; t < QH_CAP; t++)
        for (int i = 0; h->f[t].alive && i < 3; i++)
            degree[h->f[t].v[i]]++;
    out->adj_first[0] = 0;
    for (int p = 0; p < h->n; p++)
        out->adj_first[p + 1] = (uint16_t)(out->adj_first[p] + degree[p]);
    for (int t = 0; t < QH_CAP; t++)
        for (int i = 0; h->f[t].alive && i < 3; i++) {
            int from = h->f[t].v[i];
            out->adj[out->adj_first[from + 1] - degree[from]--] = (uint16_t)h->f[t].v[(i + 1) % 3];
        }
}

void cq__hull_build_solid(const cq_vec3 *s, int n, const int init[4], double tol, cq_hull_draft *out)
{
    qh h;
    qh_init(&h, s, n, init, tol);
    qh_run(&h);
    for (int k = 0; k < QH_SWEEPS && qh_sweep(&h); k++)
        qh_run(&h);
    out->dim = 3;
    qh_merge_faces(&h, out);
    qh_drop_edge_points(&h, out);
    qh_emit_adjacency(&h, out);
}
