/* Operations endpoints: metrics, the fallback log, probes, the OpenAPI
 * document. */
#include <stdlib.h>
#include <string.h>

#include "h_common.h"
#include "handlers.h"
#include "openapi.h"
#include "ops/metrics.h"
#include "state/alloc.h"
#include "state/fallbacks.h"
#include "state/registry.h"
#include "state/server.h"

#define FALLBACKS_DEFAULT 100
#define FALLBACKS_MAX 1000

int cqd_h_metrics(cqd_call *c)
{
    cqd_metrics_render(c->srv, c->out.buf);
    c->resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    return 200;
}

/* limit=N among the &-separated query parameters (others are ignored; the
 * last limit wins). N is plain decimal digits: no sign, no percent-encoding. */
static int parse_limit(const char *query, int *limit, cqp_problem *p)
{
    *limit = FALLBACKS_DEFAULT;
    for (const char *q = query; q && *q;) {
        size_t len = strcspn(q, "&");
        if (len >= 5 && strncmp(q, "limit", 5) == 0 && (len == 5 || q[5] == '=')) {
            long v = 0;
            size_t i = 6;
            if (len <= 6)
                v = -1;
            for (; i < len && v >= 0; i++)
                v = q[i] >= '0' && q[i] <= '9' && v <= FALLBACKS_MAX ? v * 10 + (q[i] - '0') : -1;
            if (v < 1 || v > FALLBACKS_MAX)
                return cqp_fail(p, CQP_P_BAD_VALUE, NULL,
                                "query parameter limit must be an integer from 1 to %d", FALLBACKS_MAX);
            *limit = (int)v;
        }
        q += len;
        if (*q == '&')
            q++;
    }
    return 0;
}

/* A shape tag as the client knows it: in a world, the packed handle's id
 * (null once the shape or the world is gone); for the stateless
 * endpoints, the tag itself (the item's index in the request). */
static void write_tag(cqp_writer *w, const cqd_fallback_entry *e, const cqd_world *world, uint64_t tag)
{
    if (e->world[0] == '\0') {
        cqp_uint(w, tag);
        return;
    }
    cq_world_handle h = {(uint32_t)tag, (uint32_t)(tag >> 32)};
    const char *id = world ? cq_world_id(world->world, h) : NULL;
    if (id)
        cqp_str(w, id);
    else
        cqp_null(w);
}

static void write_entry(cqp_writer *w, const cqd_fallback_entry *e, const cqd_world *world)
{
    cqp_obj_begin(w);
    cqp_key(w, "seq");
    cqp_uint(w, e->rec.seq);
    cqp_key(w, "time");
    if (e->labelled)
        cqp_num(w, e->time);
    else
        cqp_null(w);
    cqp_key(w, "world"); /* null for the stateless endpoints */
    if (e->labelled && e->world[0])
        cqp_str(w, e->world);
    else
        cqp_null(w);
    /* Without a label it is unknown whether the tags are handles or indices. */
    cqp_key(w, "a");
    if (e->labelled)
        write_tag(w, e, world, e->rec.tag_a);
    else
        cqp_null(w);
    cqp_key(w, "b");
    if (e->labelled)
        write_tag(w, e, world, e->rec.tag_b);
    else
        cqp_null(w);
    cqp_key(w, "shapes");
    cqp_arr_begin(w);
    cqp_str(w, cq_shape_type_name((cq_shape_type)e->rec.shape_a));
    cqp_str(w, cq_shape_type_name((cq_shape_type)e->rec.shape_b));
    cqp_arr_end(w);
    cqp_key(w, "iterations");
    cqp_uint(w, e->rec.iterations);
    cqp_key(w, "reason");
    cqp_str(w, cq_fallback_reason_name((cq_fallback_reason)e->rec.reason));
    cqp_key(w, "action");
    cqp_str(w, cq_fallback_action_name((cq_fallback_action)e->rec.action));
    cqp_key(w, "request_id");
    if (e->labelled && e->request_id[0])
        cqp_str(w, e->request_id);
    else
        cqp_null(w);
    cqp_obj_end(w);
}

int cqd_h_fallbacks(cqd_call *c)
{
    int limit;
    if (parse_limit(c->req->query, &limit, &c->problem) < 0)
        return -1;
    cqd_fallback_entry *entries = cqd_malloc((size_t)limit * sizeof *entries);
    if (!entries)
        return cqd_fail_oom(c);
    pthread_mutex_lock(&c->srv->threads_lock);
    int n = cqd_fallbacks_collect(c->srv->threads, entries, limit);
    pthread_mutex_unlock(&c->srv->threads_lock);

    cqp_obj_begin(&c->out);
    cqp_key(&c->out, "fallbacks");
    cqp_arr_begin(&c->out);
    /* Records of one world tend to come in runs: keep its shared lock
     * across the run instead of taking it per record. */
    cqd_world *world = NULL;
    for (int i = 0; i < n; i++) {
        const cqd_fallback_entry *e = &entries[i];
        bool in_world = e->labelled && e->world[0];
        if (world && (!in_world || strcmp(world->name, e->world) != 0)) {
            cqd_world_release(c->srv->worlds, world);
            world = NULL;
        }
        if (in_world && !world)
            world = cqd_world_acquire(c->srv->worlds, e->world, false);
        write_entry(&c->out, e, world);
    }
    if (world)
        cqd_world_release(c->srv->worlds, world);
    cqp_arr_end(&c->out);
    cqp_obj_end(&c->out);
    cqd_free(entries);
    return 200;
}

static int status_body(cqd_call *c, const char *status)
{
    cqp_obj_begin(&c->out);
    cqp_key(&c->out, "status");
    cqp_str(&c->out, status);
    cqp_obj_end(&c->out);
    return 200;
}

int cqd_h_healthz(cqd_call *c)
{
    return status_body(c, "ok");
}

int cqd_h_readyz(cqd_call *c)
{
    int state = atomic_load(&c->srv->state);
    if (state == CQD_READY)
        return status_body(c, "ready");
    c->resp->retry_after = 1;
    return cqp_fail(&c->problem, CQP_P_BUSY, NULL, "%s", state == CQD_STARTING ? "starting" : "draining");
}

int cqd_h_openapi(cqd_call *c)
{
    cqp_buf_append(c->out.buf, cqd_openapi_json, cqd_openapi_len);
    c->resp->content_type = "application/json";
    return 200;
}
