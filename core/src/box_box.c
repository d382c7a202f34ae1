/* Box-box contact: the SAT of sat_box.c picks the axis, face clipping (or
 * the closest points of two edges) builds the manifold. */
#include <string.h>

#include "box.h"
#include "geom.h"
#include "narrow.h"
#include "sat_box.h"

/* An edge axis replaces the best face axis only when its gap is larger by
 * this fraction of the face gap: nearly equal axes resolve to the face, which
 * gives stable, multi-point manifolds (seed 002: prefer face axes). */
#define CQ_EDGE_PREFERENCE 0.05
/* The previous frame's face axis is kept while its penetration stays within
 * this factor of the best axis (seed 002: hysteresis), so a box sliding on a
 * box does not flip its normal to an edge axis or a neighbouring face
 * (check_box_box's jittering slide measures the band: 1.25 flips, 1.5 holds). */
#define CQ_FACE_HYSTERESIS 1.5

/* The face axis (0..5) the previous answer used, or -1: its identity from
 * the cache, never a face found near the previous normal, which could be a
 * neighbour of the one used (a 5-degree turn puts A0 and B0 within 8 degrees
 * of each other) and would then displace the best axis for no reason. */
static int cq_previous_face(const cq_pair_cache *cache)
{
    return cache && cache->has_axis && cache->axis >= 0 && cache->axis < 6 ? cache->axis : -1;
}

/* The contact axis: the best face axis, an edge axis if clearly better, and
 * the previous frame's face axis while it is still nearly as good. */
static int cq_choose_axis(const cq_box_gaps *g, cq_best face, cq_best edge, int prev)
{
    /* A skipped edge axis holds -INFINITY, so it never wins. */
    cq_best best = face;
    if (!(g->skipped >> edge.axis & 1) && edge.gap > face.gap + CQ_EDGE_PREFERENCE * fabs(face.gap) + CQ_SAT_TOLERANCE)
        best = edge;
    if (prev >= 0 && prev != best.axis &&
        -g->gap[prev] <= CQ_FACE_HYSTERESIS * fmax(-best.gap, 0) + CQ_SAT_TOLERANCE)
        return prev;
    return best.axis;
}

/* Bits set in x: the skipped cross axes. */
static int cq_bit_count(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* The world-space unit axis k, oriented from A to B. */
static cq_vec3 cq_axis_normal(const cq_obb *a, const cq_obb *b, int k, const cq_pair_cache *cache)
{
    /* A face axis is read by index: A's or B's is a coin toss per pair. */
    const cq_vec3 *cols[2] = {a->axes.c, b->axes.c};
    cq_vec3 l = k < 6 ? cols[k >= 3][k - 3 * (k >= 3)] : cq_cross(a->axes.c[(k - 6) / 3], b->axes.c[(k - 6) % 3]);
    /* A unit axis is left as it is: scaling by 1 / sqrt(1) would not change
     * a bit, and the root and quotient sit on the path to every point. */
    if (cq_len2(l) != 1)
        cq_normalize(l, 0, &l);
    double s = cq_dot(l, cq_sub(b->center, a->center));
    if (s == 0 && cache && cache->has_normal)
        s = cq_dot(l, cache->normal);
    return cq_scale(l, cq_sign_of(s)); /* times -1 is the exact negation */
}

/* Face of A as reference (points stay on B's incident face), or face of B
 * as reference (points on A's face, projected onto B's). Either is as
 * likely, so the boxes and the direction are picked by arithmetic, not
 * branched on: the reference face faces along `away` (n for A, -n for B),
 * the incident face back against it. The incident face and its quad in
 * the reference face's frame are read off the SAT's frame g (R and the
 * centres), not rebuilt from world axes: 12 dot products fewer. */
static int cq_face_manifold(const cq_obb *a, const cq_obb *b, const cq_box_gaps *g, int axis, cq_vec3 n,
                            double skin, cq_contact_point out[CQ_CLIP_MAX])
{
    bool ref_is_b = axis >= 3;
    /* Indexed, not selected: the compiler branches on a ternary of
     * pointers, and which box is the reference is a coin toss. */
    const cq_obb *boxes[2] = {a, b}, *ref = boxes[ref_is_b], *inc = boxes[!ref_is_b];
    int k = axis - 3 * ref_is_b;
    cq_vec3 away = cq_scale(n, 1 - 2 * ref_is_b); /* times -1 is the exact negation */
    int ref_id = cq_box_face_id(k, cq_dot(ref->axes.c[k], away));
    /* Seen from A, B's axis m has coordinate c at r[c][m]; seen from B,
     * A's axis m has it at r[m][c]. */
    const double *centres[2] = {g->t, g->ta};
    cq_box_seen seen = {&g->r[0][0], 4 - 3 * ref_is_b, 1 + 3 * ref_is_b, centres[ref_is_b], inc->half};
    cq_box_clip_in in;
    cq__box_clip_setup_seen(ref, ref_id, &seen, cq__box_face_toward_seen(&seen, k, 1 - 2 * (ref_id & 1)), &in);
    return cq_box_clip_fast_in(&in, skin, ref_is_b, out);
}

/* Edges this close to parallel (squared sine of their angle) leave the
 * closest points to cq__closest_segments; an edge axis is never this close,
 * as the SAT skips cross axes with |Ai x Bj|^2 < CQ_SAT_DEGENERATE. */
#define CQ_EDGE_CROSSING_SIN2 1e-12

/* The point of B's edge [pb, qb] closest to A's edge [pa, qa]. For an edge
 * axis the two lines' closest points nearly always lie inside both edges,
 * and then they are the segments' closest points: both line parameters
 * come from the cross-product form (cq__closest_segments' own) with two
 * independent divisions, where the general routine chains three. Anything
 * else (an end reached, near-parallel edges) goes to cq__closest_segments. */
static cq_vec3 cq_edge_point(cq_vec3 pa, cq_vec3 qa, cq_vec3 pb, cq_vec3 qb)
{
    cq_vec3 d1 = cq_sub(qa, pa), d2 = cq_sub(qb, pb), r = cq_sub(pb, pa), n = cq_cross(d1, d2);
    double nn = cq_len2(n);
    double s = cq_dot(cq_cross(r, d2), n) / nn, t = cq_dot(cq_cross(r, d1), n) / nn;
    if (nn > CQ_EDGE_CROSSING_SIN2 * cq_len2(d1) * cq_len2(d2) && s >= 0 && s <= 1 && t >= 0 && t <= 1)
        return cq_mad(pb, d2, t);
    cq_vec3 ca, cb;
    cq__closest_segments(pa, qa, pb, qb, &s, &t, &ca, &cb);
    return cb;
}

/* Edge-edge from world axes: the supporting edges' ends, then their
 * closest points (the general form, for what the frame's form leaves). */
static int cq_edge_manifold_world(const cq_obb *a, const cq_obb *b, int i, int j, cq_vec3 n, double depth,
                                  cq_contact_point *out)
{
    cq_vec3 pa, qa, pb, qb;
    cq_vec3 back = cq_neg(n);
    uint16_t ea = cq__box_edge_toward(a, i, &n, &pa, &qa);
    uint16_t eb = cq__box_edge_toward(b, j, &back, &pb, &qb);
    out[0] = (cq_contact_point){cq_edge_point(pa, qa, pb, qb), depth, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, ea, eb}};
    return 1;
}

static const int8_t cq_cross_i[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2}, cq_cross_j[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
static const int8_t cq_next3[3] = {1, 2, 0}, cq_prev3[3] = {2, 0, 1};

/* Edge-edge: one point, at the closest points of the two supporting edges
 * (A's along axis i, B's along axis j), found in A's frame from the SAT's
 * R and t: A's edge is the line through (+-ha) along e_i, B's the line
 * through t + sum +-hb_m R_m along column R_j, so the edges' ends and the
 * world-space lines are never built. Each edge is picked as
 * cq__box_edge_toward picks it (the signs of the same dots with n), and
 * where the lines' closest points leave either edge, or the edges are
 * nearly parallel, the world-space form answers. */
static int cq_edge_manifold(const cq_obb *a, const cq_obb *b, const cq_box_gaps *g, int axis, cq_vec3 n,
                            double depth, cq_contact_point *out)
{
    int i = cq_cross_i[axis - 6], j = cq_cross_j[axis - 6], i1 = cq_next3[i], i2 = cq_prev3[i];
    int j1 = cq_next3[j], j2 = cq_prev3[j];
    double ha[3], hb[3];
    memcpy(ha, &a->half, sizeof ha), memcpy(hb, &b->half, sizeof hb);
    /* A's edge lies farthest along n, B's along -n. */
    double sa1 = cq_sign_of(cq_dot(a->axes.c[i1], n)), sa2 = cq_sign_of(cq_dot(a->axes.c[i2], n));
    double sb1 = cq_sign_of(-cq_dot(b->axes.c[j1], n)), sb2 = cq_sign_of(-cq_dot(b->axes.c[j2], n));
    double sa[3], sb[3];
    sa[i] = -1, sa[i1] = sa1, sa[i2] = sa2, sb[j] = -1, sb[j1] = sb1, sb[j2] = sb2;
    /* r0: A's edge middle minus B's, in A's frame. */
    double pa[3], r0[3], cj[3];
    pa[i] = 0, pa[i1] = sa1 * ha[i1], pa[i2] = sa2 * ha[i2];
    double u1 = sb1 * hb[j1], u2 = sb2 * hb[j2];
    for (int c = 0; c < 3; c++) {
        cj[c] = g->r[c][j];
        r0[c] = pa[c] - (g->t[c] + u1 * g->r[c][j1] + u2 * g->r[c][j2]);
    }
    double bb = cj[i], cc = cj[0] * cj[0] + cj[1] * cj[1] + cj[2] * cj[2], d = r0[i];
    double e = cj[0] * r0[0] + cj[1] * r0[1] + cj[2] * r0[2], den = cc - bb * bb;
    double ss = (bb * e - cc * d) / den, uu = (e - bb * d) / den;
    if (!(den > CQ_EDGE_CROSSING_SIN2 * cc && fabs(ss) <= ha[i] && fabs(uu) <= hb[j]))
        return cq_edge_manifold_world(a, b, i, j, n, depth, out);
    /* B's point, pa - r0 + uu cj, back in world space. */
    cq_vec3 p = cq_mad(a->center, a->axes.c[0], pa[0] - r0[0] + uu * cj[0]);
    p = cq_mad(p, a->axes.c[1], pa[1] - r0[1] + uu * cj[1]);
    p = cq_mad(p, a->axes.c[2], pa[2] - r0[2] + uu * cj[2]);
    out[0] = (cq_contact_point){p, depth, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, cq_box_edge_id(i, sa), cq_box_edge_id(j, sb)}};
    return 1;
}

/* GJK's distance is exact to its touching band; a SAT gap that close to it
 * is the same distance (the closest points lie along that axis: face-vertex,
 * face-face or edge-edge closest features) measured in closed form, so the
 * one double is reported as both. Otherwise (a corner or an edge's end
 * closest) the distance is larger than every gap: two quantities. */
static void cq_same_distance(double gap, cq_contact *out)
{
    if (out->has_distance && fabs(out->distance - gap) <= CQ_GJK_DEFAULT_TOLERANCE * fmax(1, out->distance))
        out->distance = gap;
}

/* Whether some extent of either box is so small (zero, or within rounding
 * of the pair's coordinates) that its corners may coincide: only then can
 * the clip repeat a point (a point box's face is four copies of one
 * corner), which a solver would weigh twice. Any other pair's clip is left
 * as it is, at the cost of this test alone: one pass over both boxes. */
static inline bool cq_pair_thin(const cq_obb *a, const cq_obb *b)
{
    /* Compares, not fmin: fmin is a libm call here, and halves are never NaN. */
    double ha = a->half.x < a->half.y ? a->half.x : a->half.y, hb = b->half.x < b->half.y ? b->half.x : b->half.y;
    ha = ha < a->half.z ? ha : a->half.z, hb = hb < b->half.z ? hb : b->half.z;
    double h = ha < hb ? ha : hb;
    double s = fabs(a->center.x) + fabs(a->center.y) + fabs(a->center.z) + fabs(b->center.x) + fabs(b->center.y) +
               fabs(b->center.z) + a->half.x + a->half.y + a->half.z + b->half.x + b->half.y + b->half.z;
    return h <= 8 * DBL_EPSILON * s;
}

/* Everything after the gaps, all 15 of them set, q in canonical order and
 * a, b its boxes. */
static void cq_box_box_from_gaps(const cq_pair_query *q, const cq_obb *a, const cq_obb *b, const cq_box_gaps *g,
                                 cq_contact *out)
{
    cq_best face = cq_gaps_best_face(g), edge = cq_gaps_best_edge(g);
    cq_best largest = cq_better(face, edge);
    cq_count(q->counters, CQ_CTR_SAT_AXES_SKIPPED, (uint64_t)cq_bit_count(g->skipped));
    out->sat_axis = largest.axis;
    out->sat_gap = largest.gap;
    /* The SAT gap bounds the Euclidean distance from below: a gap beyond the
     * skin is a certain miss, and within it GJK decides. */
    if (largest.gap > CQ_SAT_TOLERANCE) {
        if (largest.gap > q->skin && q->skip_distance)
            return;
        cq_gjk_status st = cq__pair_distance(q, out);
        cq_same_distance(largest.gap, out);
        if (st == CQ_GJK_ITERATION_LIMIT) {
            /* GJK gave up on a pair the SAT could not settle: the general
             * convex path answers it with its counted, logged fallback
             * (the caller's previous normal, or the contact dropped). */
            cq__convex_pair(q, out);
            return;
        }
        if (st != CQ_GJK_SEPARATED || out->distance > q->skin)
            return;
    }
    out->overlap = true;
    int axis = cq_choose_axis(g, face, edge, cq_previous_face(q->cache));
    out->normal = cq_axis_normal(a, b, axis, q->cache);
    out->has_normal = true;
    out->normal_axis = axis;
    /* As fmax(-gap, 0) gives it (NaN to 0), without its libm call. */
    out->depth = -g->gap[axis] > 0 ? -g->gap[axis] : 0;
    if (q->skip_manifold)
        return;
    cq_contact_point pts[CQ_CLIP_MAX];
    int n = axis < 6 ? cq_face_manifold(a, b, g, axis, out->normal, q->skin, pts)
                     : cq_edge_manifold(a, b, g, axis, out->normal, -g->gap[axis], pts);
    if (n > 1 && cq_pair_thin(a, b))
        n = cq__drop_coincident(pts, n);
    if (n == 0 && out->has_distance) /* within skin, the closest points are off both faces */
        pts[n++] = (cq_contact_point){out->witness_b, -out->distance, {CQ_FEAT_NONE, CQ_FEAT_NONE, 0, 0}};
    out->point_count = cq__reduce_manifold_to(pts, n, out->normal, out->points);
}

/* The stop cq__box_gaps_compute is given for query q. */
static double cq_box_box_stop(const cq_pair_query *q)
{
    /* A caller that skips distances wants nothing from a pair apart by more
     * than the skin: the first face axis that shows it ends the test, as
     * the SAT's early-out (sat_axis then names that face, not the largest
     * gap), and the nine cross axes and their roots are never computed. */
    return !q->skip_distance ? INFINITY : q->skin > CQ_SAT_TOLERANCE ? q->skin : CQ_SAT_TOLERANCE;
}

/* A pair a face axis shows apart beyond the stop (gap[0..5] of g set, in
 * cq_collide's order), answered whole: as cq__collide_finish would leave
 * it after cq_box_box_from_gaps, the SAT axis named back when the pair
 * ran B first, the normal (zero) negated as cq_contact_swap negates it,
 * the test counted. */
static void cq_box_box_stopped(const cq_pair_query *q, bool b_first, const cq_box_gaps *g, cq_contact *out)
{
    cq__collide_begin(out, CQ_ALG_SAT_BOX_BOX);
    cq_best face = cq_gaps_best_face(g);
    out->sat_axis = b_first ? cq__sat_axis_swap(face.axis) : face.axis;
    out->sat_gap = face.gap;
    if (b_first)
        out->normal = cq_neg(out->normal);
    cq_count(q->counters, CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX, 1);
}

void cq__box_box(const cq_pair_query *q, cq_contact *out)
{
    bool b_first = cq__b_first(q);
    /* The boxes in cq_collide's order straight from q, where they lie: only
     * a pair that goes on past the face axes copies them, and only such a
     * pair needs the canonical query itself. */
    const cq_xform *xa = b_first ? &q->xb : &q->xa, *xb = b_first ? &q->xa : &q->xb;
    const cq_shape *sa = b_first ? q->b : q->a, *sb = b_first ? q->a : q->b;
    cq_box_gaps g;
    bool all = cq__box_gaps_pose(xa, &sa->box.half, xb, &sb->box.half, cq_box_box_stop(q), &g); /* the stop is the same either way */
    if (!all) {
        cq_box_box_stopped(q, b_first, &g, out);
        return;
    }
    cq_obb a = cq_obb_from_box(sa, xa), b = cq_obb_from_box(sb, xb);
    cq__collide_begin(out, CQ_ALG_SAT_BOX_BOX);
    cq_pair_query canon;
    cq_pair_cache cache;
    cq_box_box_from_gaps(b_first ? cq__collide_canon(q, CQ_ALG_SAT_BOX_BOX, &canon, &cache) : q, &a, &b, &g, out);
    cq__collide_finish(q, b_first, out);
}
