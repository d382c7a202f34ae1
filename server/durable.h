/// @file server/durable.h
/// What the mutating handlers call so that every change they make is in
/// the journal (store.h) before it is applied, in the order it is applied:
/// cqd_journal_call under the lock that orders the mutation, just before
/// applying it; cqd_journal_commit after releasing the locks, before
/// answering. Without a data directory both do nothing.
#ifndef CQD_DURABLE_H
#define CQD_DURABLE_H

#include <stdint.h>

#include "registry.h"
#include "request.h"

/// Appends c's request to the journal and tags w (when not NULL) with its
/// sequence number; during recovery only tags w with the record being
/// applied. 0 with *seq set (0: nothing to wait for), or -1 with a 503
/// problem filled: the journal cannot take it, so nothing may change.
int cqd_journal_call(cqd_call *c, cqd_world *w, uint64_t *seq);

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
