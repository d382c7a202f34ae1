/* The Euclidean distance of a separated pair whose verdict came from a SAT
 * (box-box, triangle-box): the SAT gap only bounds the distance from below,
 * so GJK on the two shapes' proxies measures it. And the one rule for the
 * noise in a GJK or EPA normal, which every GJK path applies. */
#include <math.h>

#include "cq/proxy.h"
#include "narrow.h"

/* GJK and EPA give a normal whose components are exact to about 1e-15 of
 * the pair's size near the origin (rounding in the support points'
 * differences), and to the rounding of the coordinates, relative to that
 * size, far from it: an axis-aligned box and capsule get [-2.2e-16, 1,
 * -1.1e-16]. Components below CQ_NORMAL_SNAP (1 + far / size), and never
 * above CQ_NORMAL_SNAP_MAX, are that noise, and the exact answer there is
 * zero: they are set to zero and the normal made unit again. Nothing
 * larger moves, so a normal slightly off an axis stays as it is, and one
 * computation gives one answer. */
#define CQ_NORMAL_SNAP 1e-12
#define CQ_NORMAL_SNAP_MAX 1e-9

cq_vec3 cq__gjk_snap_normal(const cq_pair_query *q, cq_vec3 n)
{
    /* A NaN or infinite component is no noise to remove: fmin skips a NaN
     * and a NaN is never <= tiny, so the snap below would make an axis of
     * it and hide it from cq_guard_normal. Left as it is, the guard drops it. */
    if (!cq_v3_finite(n))
        return n;
    double least = fmin(fabs(n.x), fmin(fabs(n.y), fabs(n.z)));
    if (least > CQ_NORMAL_SNAP_MAX) /* most normals: no component is near zero */
        return n;
    double size = cq_larger(cq__shape_extent(q->a), cq__shape_extent(q->b));
    double far = cq_larger(cq_max_abs(q->xa.p), cq_max_abs(q->xb.p));
    double tiny = fmin(CQ_NORMAL_SNAP * (1 + (size > 0 ? far / size : 0)), CQ_NORMAL_SNAP_MAX);
    cq_vec3 s = cq_v3(fabs(n.x) <= tiny ? 0 : n.x, fabs(n.y) <= tiny ? 0 : n.y, fabs(n.z) <= tiny ? 0 : n.z);
    int zeros = (s.x == 0) + (s.y == 0) + (s.z == 0);
    if (zeros == 2) /* an axis: its component is exactly +-1 */
        return cq_v3(s.x == 0 ? 0 : copysign(1, s.x), s.y == 0 ? 0 : copysign(1, s.y), s.z == 0 ? 0 : copysign(1, s.z));
    if (s.x == n.x && s.y == n.y && s.z == n.z)
        return n;
    return cq_scale(s, 1 / cq_len(s)); /* a unit n keeps a component near 1 */
}

cq_gjk_status cq__pair_distance(const cq_pair_query *q, cq_contact *out)
{
    cq_vec3 sa[CQ_PROXY_STORAGE], sb[CQ_PROXY_STORAGE];
    cq_proxy pa, pb;
    if (cq_shape_proxy(q->a, sa, &pa) != CQ_OK || cq_shape_proxy(q->b, sb, &pb) != CQ_OK)
        return CQ_GJK_TOUCHING; /* validated shapes always have a proxy */
    cq_gjk_options opt = {.max_iterations = q->gjk_max_iterations};
    cq_gjk_result g = cq_gjk_distance(&pa, &q->xa, &pb, &q->xb, &opt);
    cq_count_gjk(q->counters, g.iterations);
    if (g.status != CQ_GJK_SEPARATED)
        return g.status;
    cq_gjk_apply_radii(&g, &pa, &pb);
    out->has_distance = true;
    out->distance = g.distance;
    out->witness_a = g.point_a;
    out->witness_b = g.point_b;
    out->has_normal = true;
    out->normal = cq__gjk_snap_normal(q, g.normal);
    return CQ_GJK_SEPARATED;
}
