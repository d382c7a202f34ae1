/* Worlds: create or configure, import, list, describe, delete, export. */
#include <stdlib.h>

#include "cqp/encode.h"
#include "durable.h"
#include "export.h"
#include "fault.h"
#include "h_common.h"
#include "handlers.h"
#include "state/alloc.h"
#include "state/server.h"

/* The problem of a failed put: the registry's own refusals, an op to
 * blame (at its pointer in the import), else the core's refusal of the
 * settings or of the shapes as a whole (fault.c). */
static int put_fail(cqd_call *c, const cqp_world_req *req, int rc, int bad_op)
{
    if (rc == CQD_REGISTRY_FULL)
        return cqp_fail(&c->problem, CQP_P_OVER_LIMIT, NULL, "the server holds its limit of %d worlds (--max-worlds)",
                        c->srv->cfg.max_worlds);
    if (rc == CQD_REGISTRY_CONFLICT)
        return cqp_fail(&c->problem, CQP_P_CONFLICT, req->import ? "/settings/durability" : "/durability",
                        "world '%s' exists with another durability; a durability is chosen when the world is "
                        "created and never changes: DELETE the world and PUT it (or its export) again",
                        c->world);
    if (bad_op >= 0) {
        char ptr[64];
        cqp_batch_pointer(&req->batch, true, bad_op, ptr, sizeof ptr);
        return cqp_fail(&c->problem, CQP_P_BAD_VALUE, ptr, "%s", cq_strerror(rc));
    }
    cqd_refusal r = {.site = req->import ? CQD_SITE_IMPORT : CQD_SITE_WORLD, .status = rc,
                     .asked = &req->settings, .what = "creating the world"};
    return cqd_h_refused(c, &r);
}

/* The summary's view of state, the world named in the path. */
static cqp_world_view view_of(const cqd_call *c, const cqd_world_state *state)
{
    return (cqp_world_view){c->world, &state->settings, &state->stats, state->durability};
}

int cqd_h_world_put(cqd_call *c)
{
    cqp_world_req req;
    if (cqp_decode_world(&c->dec, c->body, &req) != 0)
        return -1;
    int bad_op;
    cqd_world_state state;
    cqd_journal_ticket ticket;
    cqd_registry_hook hook = cqd_journal_hook(&ticket, c);
    bool taken = false;
    cqd_world_put put = {.settings = &req.settings, .import = req.import, .ops = req.batch.ops,
                         .count = req.batch.count, .durability = req.durability,
                         .durability_given = req.durability_given, .ops_taken = &taken};
    int rc = cqd_registry_put(c->srv->worlds, c->world, &put, &bad_op, &state, &hook);
    if (taken) /* the registry keeps or has freed the import's hulls and meshes, whatever rc says */
        cqp_batch_disown(&req.batch);
    if (rc > 0) {
        cqp_world_view view = view_of(c, &state);
        cqp_write_world_summary(&c->out, &view);
        if (cqd_journal_commit(c, ticket.seq) < 0)
            rc = -1;
    } else if (rc != CQD_REGISTRY_REFUSED) { /* refused: the journal filled the problem */
        put_fail(c, &req, rc, bad_op);
    }
    cqp_world_req_release(&req);
    return rc > 0 ? rc : -1;
}

/* The listing's item i (ctx: the registry's list). */
static int write_info(void *ctx, cqp_writer *w, int i)
{
    const cqd_world_info *info = ctx;
    cqp_write_world_entry(w, info[i].name, info[i].shapes, info[i].durability);
    return 0;
}

int cqd_h_world_list(cqd_call *c)
{
    int n;
    cqd_world_info *info;
    if (cqd_registry_list(c->srv->worlds, &info, &n) != 0)
        return cqd_fail_oom(c); /* not an empty list: the worlds are there */
    cqp_write_list(&c->out, "worlds", n, write_info, info);
    cqd_free(info);
    return 200;
}

int cqd_h_world_get(cqd_call *c)
{
    cqd_world *w = cqd_h_acquire(c, false);
    if (!w)
        return -1;
    cqd_world_state state = {cq_world_get_settings(w->world), cq_world_get_stats(w->world), w->durability};
    cqd_h_release(c, w);
    cqp_world_view view = view_of(c, &state);
    cqp_write_world_detail(&c->out, &view);
    return 200;
}

int cqd_h_world_delete(cqd_call *c)
{
    cqd_journal_ticket ticket;
    cqd_registry_hook hook = cqd_journal_hook(&ticket, c);
    int rc = cqd_registry_delete_hooked(c->srv->worlds, c->world, &hook);
    if (rc == CQD_REGISTRY_REFUSED)
        return -1;
    if (rc != CQ_OK)
        return cqp_fail(&c->problem, CQP_P_NOT_FOUND, NULL, "no world '%s'", c->world);
    return cqd_journal_commit(c, ticket.seq) < 0 ? -1 : 204;
}

int cqd_h_world_export(cqd_call *c)
{
    cqd_world *w = cqd_h_acquire(c, false);
    if (!w)
        return -1;
    int rc = cqd_write_export(&c->out, w->world, w->durability);
    cqd_h_release(c, w);
    return rc == CQ_OK ? 200 : cqd_h_server_fail(c, rc, "listing the shapes");
}
