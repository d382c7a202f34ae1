/// @file server/store/store.h
/// Durability (docs/API.md, "Durability"): every world mutation is
/// appended to a journal in the data directory, under the lock that orders
/// it and before it is applied, as the request the client sent (method,
/// path, body); snapshots of every world compact the journal; start-up
/// recovers the worlds from the newest snapshot and the journal after it by
/// running those requests through the same handlers again.
///
/// The directory holds files with fixed names only (world names and ids
/// never become paths): LOCK, journal-<first seq>.log,
/// snapshot-<seq>.snap (records of cqp/journal.h), a snapshot's .tmp while
/// it is written, and what recovery keeps aside for inspection:
/// <file>.torn-<offset> and <file>.corrupt-<offset>.
#ifndef CQD_STORE_H
#define CQD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cqp/format.h"

struct cqd_server;
typedef struct cqd_store cqd_store;

/// Start-up, first half (before the listeners): creates and locks
/// srv->cfg.data_dir and reads its snapshot and journal files. A torn
/// journal tail is cut off and kept aside (logged at warn); corruption
/// refuses the start (logged at error with the file and offset) unless
/// srv->cfg.repair, which keeps the valid prefix and moves the rest aside.
/// Returns the store (set it as srv->store), or NULL when start-up must stop.
cqd_store *cqd_store_open(struct cqd_server *srv);

/// Start-up, second half (srv->state is still STARTING): applies the
/// snapshot and the journal to srv's worlds through the handlers (neither
/// counted nor logged per request, nor journaled again), then opens the
/// journal for appends and starts the store's thread (the once-a-second
/// sync of --fsync everysec, and snapshots). NULL is a no-op. 0, or -1
/// (logged) when start-up must stop.
int cqd_store_recover(cqd_store *st);

/// Shutdown, once no request runs: stops the store's thread, writes a
/// snapshot when snapshot is true and anything changed since the last one
/// (else syncs the journal), closes the files and frees st. NULL is ignored.
void cqd_store_close(cqd_store *st, bool snapshot);

/// Appends a mutation record (the request as the client sent it, its body
/// of format body_format kept as it came: the record's kind says which,
/// cqp/journal.h) and returns its sequence number in *seq. 0, or -1 when the journal cannot
/// take it (it failed before, or this write failed and it is failed from
/// now on); *why (size bytes) then says why. Thread-safe.
int cqd_store_append(cqd_store *st, const char *method, const char *path, const char *body, size_t body_len,
                     cqp_format body_format, uint64_t *seq, char *why, size_t why_size);
/// True when a handler must wait for its record to be on disk before it
/// answers (--fsync always).
bool cqd_store_waits(const cqd_store *st);
/// Waits until the record seq is on disk; concurrent waiters share one
/// fdatasync (group commit). 0, or -1 with *why when the sync failed (the
/// journal is failed from then on).
int cqd_store_wait(cqd_store *st, uint64_t seq, char *why, size_t why_size);
/// The snapshots' health for /metrics: failed attempts since start, and the
/// Unix time in seconds of the last snapshot written (by this process, or
/// the one it recovered from), 0 for none. Zeros for a NULL st. Never waits.
void cqd_store_snapshot_stats(const cqd_store *st, uint64_t *failures, double *last_ok_s);
/// Whether the journal has stopped for good (a write or sync failed; every
/// change is refused from then on until a restart). Never waits.
bool cqd_store_failed(const cqd_store *st);
/// A change the next snapshot keeps but the journal does not (a batch
/// that only moves the shapes of a world of durability "shapes") was
/// applied: the shutdown snapshot is then written even when the journal
/// has not grown. Thread-safe, never waits.
void cqd_store_unjournaled(cqd_store *st);
/// During recovery, the sequence number of the record being applied
/// again, and noted: its handler reached the journal, so a failure from
/// here on is the record's own, as when first sent. 0 otherwise (once the
/// store serves).
uint64_t cqd_store_replaying(cqd_store *st);

/// `collisiond inspect [--data-dir DIR]` (argv[0] is "inspect"): prints
/// what start-up would recover from the directory (worlds, shape counts,
/// the last sequence number, files read, torn tails and corruption found)
/// without modifying anything or listening. Returns the exit status: 0 when
/// start-up would succeed, 1 when it would refuse or the directory cannot
/// be read, 2 for a bad command line.
int cqd_inspect_main(int argc, char **argv, char **envp);

#endif
