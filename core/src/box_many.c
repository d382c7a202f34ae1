/* Many pairs at once: box-box pairs gathered four at a time so their SAT
 * runs with a pair per vector lane (sat_simd.c), then each finished by
 * box_box.c inside cq_collide's own wrapper (collide.c: begin, canon,
 * finish), so the answers are one call's; check_box_many holds the two
 * to the same answers field for field. */
#include "box_many.h"
#include "manifold.h"
#include "narrow.h"
#include "sat_box.h"

static inline bool cq_is_box_pair(const cq_pair_query *q) { return q->a->type == CQ_BOX && q->b->type == CQ_BOX; }

#if CQ_HAVE_AVX2
/* Four box pairs, q[idx[0..3]]. */
static void cq_many_four(const cq_pair_query *q, const int idx[4], cq_contact *out)
{
    cq_pair_query canon[4];
    cq_pair_cache cache[4];
    const cq_pair_query *cq[4];
    bool swapped[4];
    cq_obb a[4], b[4];
    cq_box_ref ra[4], rb[4]; /* the kernel reads the caller's poses, not the copies */
    for (int k = 0; k < 4; k++) {
        const cq_pair_query *p = &q[idx[k]];
        swapped[k] = cq__b_first(p);
        cq[k] = swapped[k] ? cq__collide_canon(p, CQ_ALG_SAT_BOX_BOX, &canon[k], &cache[k]) : p;
        a[k] = cq_obb_from_box(cq[k]->a, &cq[k]->xa), b[k] = cq_obb_from_box(cq[k]->b, &cq[k]->xb);
        const cq_shape *sa = swapped[k] ? p->b : p->a, *sb = swapped[k] ? p->a : p->b;
        ra[k] = (cq_box_ref){swapped[k] ? &p->xb : &p->xa, &sa->box.half};
        rb[k] = (cq_box_ref){swapped[k] ? &p->xa : &p->xb, &sb->box.half};
    }
    cq_box_gaps g[4];
    cq__box_gaps_many_avx2(ra, rb, g);
    for (int k = 0; k < 4; k++) {
        cq_contact *o = &out[idx[k]];
        double stop = cq__box_box_stop(cq[k]);
        bool all = !(g[k].gap[0] > stop) & !(g[k].gap[1] > stop) & !(g[k].gap[2] > stop) & !(g[k].gap[3] > stop) &
                   !(g[k].gap[4] > stop) & !(g[k].gap[5] > stop);
        cq__collide_begin(o, CQ_ALG_SAT_BOX_BOX);
        cq__box_box_from_gaps(cq[k], &a[k], &b[k], &g[k], all, o);
        cq__collide_finish(&q[idx[k]], swapped[k], o);
    }
}
#endif

int cq__collide_many(const cq_pair_query *q, int n, cq_contact *out)
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
    for (int k = 0; k < held; k++) { /* at most three: one at a time */
        int st = cq_collide(&q[idx[k]], &out[idx[k]]);
        status = status == CQ_OK ? st : status;
    }
    return status;
}
