/// @file server/ops/failpoint.h
/// A TEST HOOK, not a feature: COLLISIOND_FAILPOINT=name[:n[+]] (read once
/// at start-up, into the server) makes the n-th pass (default the first)
/// through the named point fail, or with "+" every pass from the n-th on, so the tests can check what a disk error,
/// a crash or a failed allocation at that moment leaves behind. Unset,
/// every check is one string comparison against "". The points:
///   journal_write, journal_fsync, snapshot_write, snapshot_fsync: the call
///     returns an I/O error (EIO);
///   journal_create (a new journal file, at a snapshot's rotation): the
///     call fails with EROFS, as in a read-only data directory;
///   snapshot_partial (after the first world of a snapshot is written),
///   snapshot_rename (before the rename into place), snapshot_dirsync
///   (after the rename, before the directory fsync), snapshot_cleanup
///   (before older files are deleted): the process is killed (SIGKILL);
///   stream_reply: a stream reply just built counts as one that could not
///     be (out of memory);
///   deadline: a check of a request's --request-timeout (one every
///     CQ_DEADLINE_STRIDE units of a query's work, only while the option
///     is on) finds it passed, so a query the tests can afford is stopped
///     as a long one would be.
#ifndef CQD_FAILPOINT_H
#define CQD_FAILPOINT_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct cqd_failpoint {
    char name[32]; ///< "" when unset
    long at;       ///< the pass that fires (1-based)
    bool every;    ///< every pass from `at` on fires
    _Atomic long passes;
} cqd_failpoint;

/// Sets fp from spec ("name" or "name:n"; NULL or "" for none). Returns 0,
/// or -1 when the spec does not parse (fp is then unset).
int cqd_failpoint_init(cqd_failpoint *fp, const char *spec);
/// True when the named point fires on this pass.
bool cqd_failpoint_hit(cqd_failpoint *fp, const char *name);
/// Kills the process with SIGKILL, as a crash would, when the named point fires.
void cqd_failpoint_crash(cqd_failpoint *fp, const char *name);

#endif
