/* Helpers shared by the endpoint handlers. */
#include "h_common.h"

#include <stdint.h>
#include <stdlib.h>

#include "state/alloc.h"
#include "state/server.h"
#include "state/thread.h"

cqd_world *cqd_h_acquire(cqd_call *c, bool write)
{
    cqd_world *w = cqd_world_acquire(c->srv->worlds, c->world, write);
    if (!w)
        cqp_fail(&c->problem, CQP_P_NOT_FOUND, NULL, "no world '%s'", c->world);
    return w;
}

void cqd_h_release(cqd_call *c, cqd_world *w) { cqd_world_release(c->srv->worlds, w); }

int cqd_h_no_shape(cqd_call *c, const char *id, const char *pointer)
{
    return cqp_fail(&c->problem, CQP_P_NOT_FOUND, pointer, "no shape '%s' in world '%s'", id, c->world);
}

int cqd_fail_oom(cqd_call *c)
{
    c->resp->retry_after = 1;
    return cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory");
}

static bool draining(const cqd_call *c)
{
    return atomic_load_explicit(&c->srv->state, memory_order_acquire) == CQD_DRAINING;
}

/* The core's hook: wall time (CLOCK_MONOTONIC), as what is bounded is how
 * long the client waits and the world stays locked; and the drain, which
 * must not wait for a query of many seconds (a supervisor's stop timeout
 * is shorter than --request-timeout): it stops at the next check. */
static bool call_expired(void *ctx)
{
    const cqd_call *c = ctx;
    if (draining(c))
        return true;
    if (!c->deadline_ns)
        return false;
    return cqd_mono_ns() >= c->deadline_ns || cqd_failpoint_hit(&c->srv->fp, "deadline");
}

void cqd_h_start_deadline(cqd_call *c)
{
    int s = c->srv->cfg.request_timeout_s;
    c->deadline_ns = s > 0 ? cqd_mono_ns() + (uint64_t)s * 1000000000u : 0;
    c->deadline = (cq_deadline){call_expired, c};
}

// Always the hook, also without --request-timeout: the drain stops queries too.
const cq_deadline *cqd_h_deadline(cqd_call *c) { return &c->deadline; }

bool cqd_h_expired(cqd_call *c) { return call_expired(c); }

// Stopped by the drain, not the clock: not a timeout, and another
// instance (or this one, restarted) can answer it at once.
static int stopped_by_drain(cqd_call *c, const char *what)
{
    c->resp->retry_after = 1;
    return cqp_fail(&c->problem, CQP_P_BUSY, NULL,
                    "stopped computing %s: the server is shutting down; retry shortly", what);
}

int cqd_h_timed_out(cqd_call *c, const char *what)
{
    if (draining(c))
        return stopped_by_drain(c, what);
    cqd_thread *t = c->self;
    atomic_store_explicit(&t->timed_out, atomic_load_explicit(&t->timed_out, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    c->resp->retry_after = c->srv->cfg.request_timeout_s;
    return cqp_fail(&c->problem, CQP_P_TIMEOUT, NULL,
                    "stopped computing %s after %d s (the server's --request-timeout); ask for less: fewer "
                    "shapes, ids or rays, no \"all\"", what, c->srv->cfg.request_timeout_s);
}

int cqd_h_server_fail(cqd_call *c, int status, const char *what)
{
    if (status == CQ_ENO_MEMORY)
        return cqd_fail_oom(c);
    if (status == CQ_ECANCELED)
        return cqd_h_timed_out(c, what);
    return cqp_fail(&c->problem, CQP_P_INTERNAL, NULL, "%s: %s", what, cq_strerror(status));
}

int cqd_h_over_budget(cqd_call *c, const char *pointer)
{
    return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, pointer,
                    "the server's worlds would preallocate more than %d shape slots in all "
                    "(--max-shapes-total; %ld in use): delete a world or ask for a smaller capacity",
                    c->srv->cfg.max_shapes_total, cqd_registry_slots(c->srv->worlds));
}

int cqd_h_over_pairs(cqd_call *c, const char *pointer)
{
    return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, pointer,
                    "the change would leave the world more than %d broadphase pairs (--max-world-pairs): "
                    "spread the shapes, narrow the skin or use more worlds",
                    c->srv->cfg.max_world_pairs);
}

void *cqd_h_array(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    return cqd_calloc(n ? n : 1, size);
}

/* Not zeroed: the first impacts of a contacts query have room for every
 * shape, and zeroing that cost 720 KB a 10,000-box tick. */
void *cqd_h_out_array(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    return cqd_malloc((n ? n : 1) * (size ? size : 1));
}
