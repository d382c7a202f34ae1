/* Many pairs at once: box-box pairs gathered four at a time so their SAT
 * runs with a pair per vector lane (sat_simd.c), then each finished by
 * box_box.c as one call would. The wrapper cq_collide puts around a pair
 * function (collide.c: reset, one order, the normal's guard, the mirror
 * back) is repeated here for box pairs, step for step; check_box_many
 * holds the two to the same answers field for field. */
#include "box_many.h"
#include "manifold.h"
#include "narrow.h"
#include "sat_box.h"

/* A box pair swapped into cq_collide's order: the query (and cache) as
 * the pair function sees it. Pairs already in order are used as given. */
typedef struct cq_canon {
    cq_pair_query q;
    cq_pair_cache cache;
} cq_canon;

static const cq_pair_query *cq_canon_make(const cq_pair_query *q, cq_canon *c)
{
    c->q = *q;
    c->q.a = q->b, c->q.xa = q->xb, c->q.b = q->a, c->q.xb = q->xa;
    c->q.tag_a = q->tag_b, c->q.tag_b = q->tag_a;
    if (q->cache) {
        c->cache = *q->cache;
        c->cache.normal = cq_neg(c->cache.normal);
        if (c->cache.has_axis)
            c->cache.axis = cq_sat_axis_swap(c->cache.axis);
        c->q.cache = &c->cache;
    }
    return &c->q;
}

/* collide.c's cq_contact_reset for the box-box algorithm. */
static void cq_many_reset(cq_contact *c)
{
    c->overlap = c->has_normal = c->has_distance = false;
    c->distance = c->depth = 0;
    c->normal = c->witness_a = c->witness_b = cq_v3(0, 0, 0);
    c->point_count = 0;
    c->algorithm = CQ_ALG_SAT_BOX_BOX;
    c->fallback_reason = CQ_FB_NONE;
    c->fallback_action = CQ_FBA_NONE;
    c->sat_axis = -1;
    c->sat_gap = 0;
    c->normal_axis = -1;
}

/* collide.c's guard and mirror, in its order. */
static void cq_many_finish(const cq_pair_query *q, bool swapped, cq_contact *c)
{
    if (c->has_normal) {
        double l2 = cq_len2(c->normal);
        if (!(l2 > 0.999 && l2 < 1.001)) {
            c->has_normal = false, c->normal = cq_v3(0, 0, 0), c->normal_axis = -1, c->point_count = 0;
            c->fallback_reason = CQ_FB_COINCIDENT, c->fallback_action = CQ_FBA_DROPPED;
            cq_count(q->counters, CQ_CTR_ZERO_NORMALS, 1);
        }
    }
    if (q->skip_manifold)
        c->point_count = 0;
    if (swapped) {
        cq_vec3 n = c->normal;
        for (int k = 0; k < c->point_count; k++) {
            if (c->has_normal)
                c->points[k].position = cq_mad(c->points[k].position, n, c->points[k].depth);
            c->points[k].feature = cq_feature_swap(c->points[k].feature);
        }
        c->normal = cq_neg(n);
        cq_vec3 w = c->witness_a;
        c->witness_a = c->witness_b, c->witness_b = w;
        c->sat_axis = cq_sat_axis_swap(c->sat_axis);
        c->normal_axis = cq_sat_axis_swap(c->normal_axis);
    }
    cq_count(q->counters, CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX, 1);
}

static inline bool cq_is_box_pair(const cq_pair_query *q) { return q->a->type == CQ_BOX && q->b->type == CQ_BOX; }

#if CQ_HAVE_AVX2
/* Four box pairs, q[idx[0..3]]. */
static void cq_many_four(const cq_pair_query *q, const int idx[4], cq_contact *out)
{
    cq_canon c[4];
    const cq_pair_query *cq[4];
    bool swapped[4];
    cq_obb a[5], b[5]; /* the fifth: what the vector load reads past the fourth */
    for (int k = 0; k < 4; k++) {
        const cq_pair_query *p = &q[idx[k]];
        swapped[k] = cq_b_first(p);
        cq[k] = swapped[k] ? cq_canon_make(p, &c[k]) : p;
        a[k] = cq_obb_from_box(cq[k]->a, &cq[k]->xa), b[k] = cq_obb_from_box(cq[k]->b, &cq[k]->xb);
    }
    a[4] = a[3], b[4] = b[3];
    cq_box_gaps g[4];
    cq_box_gaps_many_avx2(a, b, g);
    for (int k = 0; k < 4; k++) {
        cq_contact *o = &out[idx[k]];
        double stop = cq_box_box_stop(cq[k]);
        bool all = !(g[k].gap[0] > stop) & !(g[k].gap[1] > stop) & !(g[k].gap[2] > stop) & !(g[k].gap[3] > stop) &
                   !(g[k].gap[4] > stop) & !(g[k].gap[5] > stop);
        cq_many_reset(o);
        cq_box_box_from_gaps(cq[k], &a[k], &b[k], &g[k], all, o);
        cq_many_finish(&q[idx[k]], swapped[k], o);
    }
}
#endif

int cq_collide_many(const cq_pair_query *q, int n, cq_contact *out)
{
    int status = CQ_OK, held = 0, idx[4];
#if CQ_HAVE_AVX2
    bool vector = __builtin_cpu_supports("avx2");
#else
    bool vector = false;
#endif
    for (int i = 0; i < n; i++) {
        if (!vector || !cq_is_box_pair(&q[i])) {
            int st = cq_collide(&q[i], &out[i]);
            status = status == CQ_OK ? st : status;
            continue;
        }
        idx[held++] = i;
#if CQ_HAVE_AVX2
        if (held == 4)
            cq_many_four(q, idx, out), held = 0;
#endif
    }
    for (int k = 0; k < held; k++) /* at most three: one at a time */
        cq_collide(&q[idx[k]], &out[idx[k]]);
    return status;
}
