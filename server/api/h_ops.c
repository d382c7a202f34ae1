/* Operations endpoints: metrics, the fallback log, probes, the OpenAPI
 * document. */
#include <stdlib.h>
#include <string.h>

#include "cqp/encode.h"
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

/* A tag's id in world (NULL once the shape or the world is gone). */
static const char *tag_id(const cqd_world *world, uint64_t tag)
{
    cq_world_handle h = {(uint32_t)tag, (uint32_t)(tag >> 32)};
    return world ? cq_world_id(world->world, h) : NULL;
}

/* The records, each written with its world's shared lock taken to read
 * its tags' ids. Records of one world tend to come in runs: the lock is
 * kept across the run instead of taken per record. */
typedef struct fallbacks_ctx {
    cqd_server *srv;
    const cqd_fallback_entry *entries;
    cqd_world *world; /* the run's world, locked shared; NULL for none */
} fallbacks_ctx;

static int write_entry(void *ctx, cqp_writer *w, int i)
{
    fallbacks_ctx *f = ctx;
    const cqd_fallback_entry *e = &f->entries[i];
    bool in_world = e->labelled && e->world[0];
    if (f->world && (!in_world || strcmp(f->world->name, e->world) != 0)) {
        cqd_world_release(f->srv->worlds, f->world);
        f->world = NULL;
    }
    if (in_world && !f->world)
        f->world = cqd_world_acquire(f->srv->worlds, e->world, false);
    cqp_fallback_view v = {.rec = &e->rec, .labelled = e->labelled, .time = e->time};
    if (in_world) {
        v.world = e->world;
        v.id_a = tag_id(f->world, e->rec.tag_a);
        v.id_b = tag_id(f->world, e->rec.tag_b);
    }
    v.request_id = e->request_id[0] ? e->request_id : NULL;
    cqp_write_fallback(w, &v);
    return 0;
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

    fallbacks_ctx ctx = {c->srv, entries, NULL};
    cqp_write_list(&c->out, "fallbacks", n, write_entry, &ctx);
    if (ctx.world)
        cqd_world_release(c->srv->worlds, ctx.world);
    cqd_free(entries);
    return 200;
}

static int status_body(cqd_call *c, const char *status)
{
    cqp_write_status(&c->out, status);
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
