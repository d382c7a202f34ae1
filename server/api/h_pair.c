/* POST /v1/pair and POST /v1/pairs: stateless pair tests. */
#include <stdio.h>

#include "cqp/encode.h"
#include "h_common.h"
#include "handlers.h"
#include "state/thread.h"

/* Every pair's types are checked before any is tested, so a rejected
 * request runs nothing (and counts nothing). prefix is "" or "/pairs/i". */
static int check_supported(cqd_call *c, const cqp_pair_req *r, const char *prefix)
{
    cq_shape_type a = r->a.shape.shape.type, b = r->b.shape.shape.type;
    if (cq_collide_supported(a, b))
        return 0;
    char ptr[64];
    snprintf(ptr, sizeof ptr, "%s/b/shape/type", prefix);
    return cqp_fail(&c->problem, CQP_P_BAD_VALUE, ptr, "no algorithm for a %s-%s pair", cq_shape_type_name(a),
                    cq_shape_type_name(b));
}

/* Tests one pair and writes its contact result (with the 15-axis table for
 * two boxes when explain is asked). Both fallback tags are the item's index
 * in the request (0 for /v1/pair), which /metrics/fallbacks reports. */
static int test_and_write(cqd_call *c, cqp_writer *w, const cqp_pair_req *r, int index)
{
    cq_pair_query q = {
        .a = &r->a.shape.shape,
        .xa = r->a.pose,
        .b = &r->b.shape.shape,
        .xb = r->b.pose,
        .skin = r->skin,
        .counters = &c->self->counters,
        .log = &c->self->fallbacks,
        .tag_a = (uint64_t)index,
        .tag_b = (uint64_t)index,
    };
    cq_contact contact;
    int rc = cq_collide(&q, &contact);
    if (rc != CQ_OK)
        return cqd_h_server_fail(c, rc, "pair test");
    cq_sat_axis axes[CQ_SAT_AXIS_COUNT];
    const cq_sat_axis *explain = NULL;
    if (r->explain && q.a->type == CQ_BOX && q.b->type == CQ_BOX) {
        cq_obb oa = cq_obb_from_box(q.a, &q.xa), ob = cq_obb_from_box(q.b, &q.xb);
        cq_obb_sat_explain(&oa, &ob, axes);
        explain = axes;
    }
    cqp_write_contact(w, &contact, explain);
    return 0;
}

int cqd_h_pair(cqd_call *c)
{
    cqp_pair_req r;
    if (cqp_decode_pair(&c->dec, c->body, &r) != 0)
        return -1;
    int status = check_supported(c, &r, "");
    if (status == 0) {
        uint64_t mark = cqd_thread_mark(c->self);
        status = test_and_write(c, &c->out, &r, 0);
        cqd_thread_label_fallbacks(c->self, mark, NULL, c->resp->request_id);
    }
    cqp_pair_req_release(&r);
    return status == 0 ? 200 : -1;
}

typedef struct pairs_ctx {
    cqd_call *c;
    const cqp_pairs_req *r;
} pairs_ctx;

/* Item i of /v1/pairs' results. The deadline is asked as the core asks
 * it: every so many tests. */
static int test_item(void *ctx, cqp_writer *w, int i)
{
    const pairs_ctx *p = ctx;
    bool late = (i + 1) % CQ_DEADLINE_STRIDE == 0 && cqd_h_expired(p->c);
    return late ? cqd_h_timed_out(p->c, "pair tests") : test_and_write(p->c, w, &p->r->items[i], i);
}

int cqd_h_pairs(cqd_call *c)
{
    cqp_pairs_req r;
    if (cqp_decode_pairs(&c->dec, c->body, &r) != 0)
        return -1;
    int status = 0;
    for (int i = 0; i < r.count && status == 0; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "/pairs/%d", i);
        status = check_supported(c, &r.items[i], prefix);
    }
    if (status == 0) {
        uint64_t mark = cqd_thread_mark(c->self);
        pairs_ctx ctx = {c, &r};
        status = cqp_write_list(&c->out, "results", r.count, test_item, &ctx);
        cqd_thread_label_fallbacks(c->self, mark, NULL, c->resp->request_id);
    }
    cqp_pairs_req_release(&r);
    return status == 0 ? 200 : -1;
}
