/* Many pairs at once. Box-box pairs go through two vector stages, four
 * pairs to a vector (sat_simd.c): first the six face gaps of every pair,
 * which settle the pairs a face axis shows apart beyond their stop (44 %
 * of cq-bench's pairs; answered at once), then all 15 gaps of the rest,
 * gathered four at a time so no lane carries a settled pair. Each of those
 * is finished by box_box.c inside cq_collide's own wrapper (collide.c:
 * begin, canon, finish), so the answers are one call's; check_box_many
 * holds the two to the same answers field for field and the same
 * counters. Both kernels read the boxes where the caller keeps them
 * (cq_box_ref), not from copies just made (see sat_simd.c). */
#include "box_many.h"
#include "manifold.h"
#include "narrow.h"
#include "sat_box.h"

static inline bool cq_is_box_pair(const cq_pair_query *q) { return q->a->type == CQ_BOX && q->b->type == CQ_BOX; }

#if CQ_HAVE_AVX2
/* The boxes of pair p in cq_collide's order, where p keeps them. */
static inline void cq_many_refs(const cq_pair_query *p, bool b_first, cq_box_ref *ra, cq_box_ref *rb)
{
    const cq_shape *sa = b_first ? p->b : p->a, *sb = b_first ? p->a : p->b;
    *ra = (cq_box_ref){b_first ? &p->xb : &p->xa, &sa->box.half};
    *rb = (cq_box_ref){b_first ? &p->xa : &p->xb, &sb->box.half};
}

/* Pairs past the face stage, held until four fill the cross stage's
 * vector: where each answer goes and what its finish needs. */
typedef struct cq_many_held {
    int n;
    int idx[4];
    bool b_first[4];
    cq_box_ref ra[4], rb[4];
    cq_box_gaps g[4];
} cq_many_held;

/* All 15 gaps of the held pairs (the last one repeated in a short vector),
 * then each finished as cq__box_box would. */
static void cq_many_cross(const cq_pair_query *q, cq_many_held *h, cq_contact *out)
{
    for (int k = h->n; k < 4; k++)
        h->ra[k] = h->ra[h->n - 1], h->rb[k] = h->rb[h->n - 1];
    cq__box_gaps_many_avx2(h->ra, h->rb, h->g);
    for (int k = 0; k < h->n; k++) {
        const cq_pair_query *p = &q[h->idx[k]];
        cq_pair_query canon;
        cq_pair_cache cache;
        const cq_pair_query *c = h->b_first[k] ? cq__collide_canon(p, CQ_ALG_SAT_BOX_BOX, &canon, &cache) : p;
        cq_obb a = cq_obb_from_box(c->a, &c->xa), b = cq_obb_from_box(c->b, &c->xb);
        cq__collide_begin(&out[h->idx[k]], CQ_ALG_SAT_BOX_BOX);
        cq__box_box_from_gaps(c, &a, &b, &h->g[k], true, &out[h->idx[k]]);
        cq__collide_finish(p, h->b_first[k], &out[h->idx[k]]);
    }
    h->n = 0;
}

/* Four box pairs, q[idx[0..n)] (n <= 4; a short group repeats its last
 * pair): the face stage, the settled ones answered, the rest held. */
static void cq_many_faces(const cq_pair_query *q, const int *idx, int n, cq_many_held *h, cq_contact *out)
{
    cq_box_ref ra[4], rb[4];
    bool b_first[4];
    double stop[4];
    for (int k = 0; k < 4; k++) {
        const cq_pair_query *p = &q[idx[k < n ? k : n - 1]];
        b_first[k] = cq__b_first(p);
        cq_many_refs(p, b_first[k], &ra[k], &rb[k]);
        stop[k] = cq__box_box_stop(p);
    }
    cq_box_gaps g[4];
    unsigned beyond = cq__box_faces_many_avx2(ra, rb, stop, g);
    for (int k = 0; k < n; k++) {
        if (beyond >> k & 1) {
            cq__box_box_stopped(&q[idx[k]], b_first[k], &g[k], &out[idx[k]]);
            continue;
        }
        h->idx[h->n] = idx[k], h->b_first[h->n] = b_first[k], h->ra[h->n] = ra[k], h->rb[h->n] = rb[k];
        if (++h->n == 4)
            cq_many_cross(q, h, out);
    }
}

/* The batch on AVX2: other pairs answered as they come, box pairs four at
 * a time through the stages. */
static int cq_many_avx2(const cq_pair_query *q, int n, cq_contact *out)
{
    int status = CQ_OK, held = 0, idx[4];
    cq_many_held h = {.n = 0};
    for (int i = 0; i < n; i++) {
        if (!cq_is_box_pair(&q[i])) {
            int st = cq_collide(&q[i], &out[i]);
            status = status == CQ_OK ? st : status;
            continue;
        }
        idx[held++] = i;
        if (held == 4)
            cq_many_faces(q, idx, 4, &h, out), held = 0;
    }
    if (held > 0)
        cq_many_faces(q, idx, held, &h, out);
    if (h.n > 0)
        cq_many_cross(q, &h, out);
    return status;
}
#endif

int cq__collide_many(const cq_pair_query *q, int n, cq_contact *out)
{
#if CQ_HAVE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return cq_many_avx2(q, n, out);
#endif
    int status = CQ_OK;
    for (int i = 0; i < n; i++) {
        int st = cq_collide(&q[i], &out[i]);
        status = status == CQ_OK ? st : status;
    }
    return status;
}
