/// @file server/api/durable.h
/// What the mutating handlers call so that every change they make is in
/// the journal (store.h) before it is applied, in the order it is applied:
/// cqd_journal_call under the lock that orders the mutation, once the
/// change is checked and made room for (so that only a change that will be
/// applied is journaled, and applying it cannot fail), just before
/// applying it; cqd_journal_commit after releasing the locks, before
/// answering. Without a data directory both do nothing, and a world's
/// durability (cqp/durability.h) leaves some changes out.
#ifndef CQD_DURABLE_H
#define CQD_DURABLE_H

#include <stdint.h>

#include "request.h"
#include "state/registry.h"

/// Appends c's request to the journal and tags w (when not NULL) with its
/// sequence number; during recovery only tags w with the record being
/// applied. A change to an ephemeral world (durability none) is never
/// journaled. 0 with *seq set (0: nothing to wait for), or -1 with a 503
/// problem filled: the journal cannot take it, so nothing may change.
int cqd_journal_call(cqd_call *c, cqd_world *w, uint64_t *seq);

/// cqd_journal_call for a batch that only moves shapes: a world of
/// durability "shapes" does not journal it, and leaves it to the next
/// snapshot (the one at shutdown included) instead.
int cqd_journal_moves(cqd_call *c, cqd_world *w, uint64_t *seq);

/// Says that the handler has decoded its request and holds its world, so
/// that a refusal from here on is the world's verdict on the change. Only
/// recovery listens: a journal written before changes were checked ahead
/// of journaling holds records refused after they were written, and such
/// a record, refused again at this point, is skipped as it was then.
void cqd_journal_reached(cqd_call *c);

/// Under --fsync always, waits until the record seq is on disk. 0, or -1
/// with a 503 problem filled (the change is not acknowledged).
int cqd_journal_commit(cqd_call *c, uint64_t seq);

/// A journal ticket for the registry's hooked calls: the call, and the
/// sequence number to commit once the registry returns.
typedef struct cqd_journal_ticket {
    cqd_call *call;
    uint64_t seq;
} cqd_journal_ticket;

/// A registry hook that runs cqd_journal_call(t->call, w, &t->seq).
cqd_registry_hook cqd_journal_hook(cqd_journal_ticket *t, cqd_call *c);

#endif
