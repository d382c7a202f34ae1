/// @file server/api/durable.c
/// The handlers' side of the journal (durable.h).
#include "durable.h"

#include "router.h"
#include "state/server.h"
#include "store/store.h"

int cqd_journal_call(cqd_call *c, cqd_world *w, uint64_t *seq)
{
    *seq = 0;
    cqd_store *st = c->srv->store;
    /* not even the creation or the deletion of an ephemeral world: the
     * journal never names it */
    if (!st || (w && w->durability == CQP_DURABILITY_NONE))
        return 0;
    uint64_t s = cqd_store_replaying(st);
    if (s == 0) {
        const cqd_request *req = c->req;
        /* A route without a body (the DELETEs) ignores whatever was sent
         * with it, garbage included: journaling those bytes would have
         * recovery judge a body the request never had. */
        bool body = req->body && cqd_route_takes_body(c->route);
        char why[200];
        if (cqd_store_append(st, req->method, req->path, body ? req->body : "", body ? req->body_len : 0,
                             body ? req->body_format : CQP_JSON, &s, why, sizeof why) < 0) {
            /* No Retry-After: a journal that failed stays failed until a
             * restart, and a record too large for it stays too large. */
            c->resp->retry_after = -1;
            return cqp_fail(&c->problem, CQP_P_BUSY, NULL, "the journal cannot take the change (%s); nothing changed",
                            why);
        }
        if (cqd_store_waits(st))
            *seq = s;
    }
    if (w)
        w->seq = s;
    return 0;
}

int cqd_journal_moves(cqd_call *c, cqd_world *w, uint64_t *seq)
{
    if (!w || w->durability != CQP_DURABILITY_SHAPES)
        return cqd_journal_call(c, w, seq);
    *seq = 0;
    cqd_store *st = c->srv->store;
    if (!st)
        return 0;
    /* Not journaled, but kept by the next snapshot, which a failed store
     * never writes: refused as every change is once the journal failed. */
    if (cqd_store_failed(st)) {
        c->resp->retry_after = -1;
        return cqp_fail(&c->problem, CQP_P_BUSY, NULL,
                        "the journal has failed: a world of durability shapes takes no change, moves "
                        "included; nothing changed");
    }
    cqd_store_unjournaled(st);
    return 0;
}

void cqd_journal_reached(cqd_call *c)
{
    if (c->srv->store)
        cqd_store_replaying(c->srv->store); /* notes the record's handler got this far */
}

int cqd_journal_commit(cqd_call *c, uint64_t seq)
{
    char why[200];
    if (seq == 0 || cqd_store_wait(c->srv->store, seq, why, sizeof why) == 0)
        return 0;
    c->resp->retry_after = -1; /* the journal has failed for good */
    return cqp_fail(&c->problem, CQP_P_BUSY, NULL,
                    "the change could not be made durable (%s): it is not acknowledged and may not survive a restart",
                    why);
}

/// The hook's body: the ticket is the argument.
static int journal_before(void *arg, cqd_world *w)
{
    cqd_journal_ticket *t = arg;
    return cqd_journal_call(t->call, w, &t->seq);
}

cqd_registry_hook cqd_journal_hook(cqd_journal_ticket *t, cqd_call *c)
{
    t->call = c;
    t->seq = 0;
    return (cqd_registry_hook){journal_before, t};
}
