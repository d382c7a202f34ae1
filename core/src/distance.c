/* The Euclidean distance of a separated pair whose verdict came from a SAT
 * (box-box, triangle-box): the SAT gap only bounds the distance from below,
 * so GJK on the two shapes' proxies measures it. */
#include "cq/proxy.h"
#include "narrow.h"

cq_gjk_status cq_pair_distance(const cq_pair_query *q, cq_contact *out)
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
    out->normal = g.normal;
    return CQ_GJK_SEPARATED;
}
