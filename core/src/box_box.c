/* Box-box contact: the SAT of sat_box.c picks the axis, face clipping (or
 * the closest points of two edges) builds the manifold. */
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
 * box does not flip its normal to an edge axis or a neighbouring face. */
#define CQ_FACE_HYSTERESIS 1.5

/* A previous normal within about 8 degrees of a face axis came from it. */
#define CQ_SAME_AXIS_COS 0.99

/* The face axis (0..5) the previous frame's normal came from, or -1. */
static int cq_previous_face(const cq_obb *a, const cq_obb *b, const cq_pair_cache *cache)
{
    if (!cache || !cache->has_normal)
        return -1;
    for (int k = 0; k < 6; k++) {
        cq_vec3 axis = k < 3 ? a->axes.c[k] : b->axes.c[k - 3];
        if (fabs(cq_dot(axis, cache->normal)) >= CQ_SAME_AXIS_COS)
            return k;
    }
    return -1;
}

/* The first index of the largest of gap[lo..hi). The running maximum is
 * kept in a register (not reloaded through the index), and both updates
 * are selects, not branches: which axis wins is unpredictable. */
static int cq_argmax(const double *gap, int lo, int hi)
{
    int best = lo;
    double top = gap[lo];
    for (int k = lo + 1; k < hi; k++) {
        bool more = gap[k] > top;
        best = more ? k : best;
        top = more ? gap[k] : top;
    }
    return best;
}

/* The contact axis: the best face axis, an edge axis if clearly better, and
 * the previous frame's face axis while it is still nearly as good. */
static int cq_choose_axis(const double gap[CQ_SAT_AXIS_COUNT], const bool skipped[CQ_SAT_AXIS_COUNT], int prev)
{
    /* Skipped axes hold -INFINITY, so they never win. */
    int face = cq_argmax(gap, 0, 6), edge = cq_argmax(gap, 6, CQ_SAT_AXIS_COUNT);
    int best = face;
    if (!skipped[edge] && gap[edge] > gap[face] + CQ_EDGE_PREFERENCE * fabs(gap[face]) + CQ_SAT_TOLERANCE)
        best = edge;
    if (prev >= 0 && prev != best &&
        -gap[prev] <= CQ_FACE_HYSTERESIS * fmax(-gap[best], 0) + CQ_SAT_TOLERANCE)
        best = prev;
    return best;
}

/* The world-space unit axis k, oriented from A to B. */
static cq_vec3 cq_axis_normal(const cq_obb *a, const cq_obb *b, int k, const cq_pair_cache *cache)
{
    cq_vec3 l = k < 3 ? a->axes.c[k] : k < 6 ? b->axes.c[k - 3] : cq_cross(a->axes.c[(k - 6) / 3], b->axes.c[(k - 6) % 3]);
    cq_normalize(l, 0, &l);
    double s = cq_dot(l, cq_sub(b->center, a->center));
    if (s == 0 && cache && cache->has_normal)
        s = cq_dot(l, cache->normal);
    return s < 0 ? cq_neg(l) : l;
}

/* Face of A as reference (points stay on B's incident face), or face of B
 * as reference (points on A's face, projected onto B's). */
static int cq_face_manifold(const cq_obb *a, const cq_obb *b, int axis, cq_vec3 n, double skin,
                            cq_contact_point out[CQ_CLIP_MAX])
{
    if (axis < 3)
        return cq_box_clip_box(a, cq_box_face_id(axis, cq_dot(a->axes.c[axis], n)), b,
                               cq_box_face_toward(b, cq_neg(n)), skin, false, out);
    int m = cq_box_clip_box(b, cq_box_face_id(axis - 3, -cq_dot(b->axes.c[axis - 3], n)), a,
                            cq_box_face_toward(a, n), skin, true, out);
    for (int k = 0; k < m; k++)
        out[k].feature = cq_feature_swap(out[k].feature);
    return m;
}

/* Edge-edge: one point, at the closest points of the two supporting edges. */
static int cq_edge_manifold(const cq_obb *a, const cq_obb *b, int axis, cq_vec3 n, double depth,
                            cq_contact_point *out)
{
    cq_vec3 pa, qa, pb, qb, ca, cb;
    double s, t;
    uint16_t ea = cq_box_edge_toward(a, (axis - 6) / 3, n, &pa, &qa);
    uint16_t eb = cq_box_edge_toward(b, (axis - 6) % 3, cq_neg(n), &pb, &qb);
    cq_closest_segments(pa, qa, pb, qb, &s, &t, &ca, &cb);
    out[0] = (cq_contact_point){cb, depth, {CQ_FEAT_EDGE, CQ_FEAT_EDGE, ea, eb}};
    return 1;
}

void cq_box_box(const cq_pair_query *q, cq_contact *out)
{
    cq_obb a = cq_obb_from_box(q->a, &q->xa), b = cq_obb_from_box(q->b, &q->xb);
    double gap[CQ_SAT_AXIS_COUNT];
    bool skipped[CQ_SAT_AXIS_COUNT];
    cq_obb_gaps(&a, &b, CQ_SAT_AXIS_COUNT, gap, skipped);
    int largest = cq_argmax(gap, 0, CQ_SAT_AXIS_COUNT), nskipped = 0;
    for (int k = 6; k < CQ_SAT_AXIS_COUNT; k++)
        nskipped += skipped[k];
    cq_count(q->counters, CQ_CTR_SAT_AXES_SKIPPED, (uint64_t)nskipped);
    out->sat_axis = largest;
    out->sat_gap = gap[largest];
    /* The SAT gap bounds the Euclidean distance from below: a gap beyond the
     * skin is a certain miss, and within it GJK decides. */
    if (gap[largest] > CQ_SAT_TOLERANCE) {
        if (gap[largest] > q->skin && q->skip_distance)
            return;
        if (!cq_pair_distance(q, out) || out->distance > q->skin)
            return;
    }
    out->overlap = true;
    int axis = cq_choose_axis(gap, skipped, cq_previous_face(&a, &b, q->cache));
    out->normal = cq_axis_normal(&a, &b, axis, q->cache);
    out->has_normal = true;
    out->depth = fmax(-gap[axis], 0);
    cq_contact_point pts[CQ_CLIP_MAX];
    int n = axis < 6 ? cq_face_manifold(&a, &b, axis, out->normal, q->skin, pts)
                     : cq_edge_manifold(&a, &b, axis, out->normal, -gap[axis], pts);
    if (n == 0 && out->has_distance) /* within skin, the closest points are off both faces */
        pts[n++] = (cq_contact_point){out->witness_b, -out->distance, {CQ_FEAT_NONE, CQ_FEAT_NONE, 0, 0}};
    n = cq_reduce_manifold(pts, n, out->normal);
    for (int k = 0; k < n; k++)
        out->points[k] = pts[k];
    out->point_count = n;
}
