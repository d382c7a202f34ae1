/// @file server/store/store_internal.h
/// What the parts of the store share (store.c: directory, files, thread,
/// life cycle; store_journal.c: appends, syncs, rotation;
/// store_snapshot.c; store_scan.c: reading the files at start-up;
/// store_recover.c: applying them; inspect.c).
#ifndef CQD_STORE_INTERNAL_H
#define CQD_STORE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cq/world.h"
#include "state/server.h"
#include "store.h"

/// Longest file name the store makes ("snapshot-<20 digits>.snap.tmp"
/// and the aside names fit).
#define CQD_STORE_NAME_MAX 96
/// Notes kept for `inspect` (files read, problems found).
#define CQD_STORE_NOTES 64

/// A snapshot or journal file found at start-up.
typedef struct cqd_sfile {
    char name[CQD_STORE_NAME_MAX];
    uint64_t first;    ///< the sequence number in the name
    bool snapshot;
    uint8_t *data;     ///< contents, read by the scan (owned)
    size_t len;
    size_t valid;      ///< bytes of whole valid records that recovery applies
    uint64_t records;  ///< records in those bytes
    uint64_t msgpack;  ///< journal: of those, mutations whose body is MessagePack
    bool used;         ///< recovery applies this file
} cqd_sfile;

/// A world of the snapshot loaded, with the sequence number it holds.
typedef struct cqd_snap_world {
    char name[CQ_WORLD_ID_MAX + 1];
    uint64_t seq;
} cqd_snap_world;

/// What recovery found and did (logged; printed by inspect).
typedef struct cqd_recovery {
    int snapshot;           ///< index in files of the snapshot loaded, -1 for none
    uint64_t base;          ///< the first sequence number the journals must provide
    uint64_t next;          ///< the sequence number after the last valid record
    uint64_t records;       ///< journal records read after the snapshot
    uint64_t skipped;       ///< of those, already in the snapshot
    uint64_t rejected;      ///< of those, rejected again as when first sent
    int snapshot_worlds;
    bool corrupt;           ///< corruption found (start-up refuses it without --repair)
    bool failed;            ///< recovery could not complete
    char notes[CQD_STORE_NOTES][256];
    int note_count;
} cqd_recovery;

struct cqd_store {
    cqd_server *srv;
    char dir[512];
    int dir_fd;
    int lock_fd;            ///< -1 when read-only
    bool read_only;         ///< inspect: nothing is modified, nothing is opened for writing

    /* start-up */
    cqd_sfile *files;       ///< snapshots newest first, then journals oldest first
    int file_count;
    cqd_recovery rec;
    cqd_snap_world *snap_worlds; ///< sorted by name
    int snap_world_count;
    uint64_t recover_seq;   ///< the record being applied again, 0 once serving
    bool recover_reached;   ///< the record's handler reached the journal (cqd_store_replaying)

    /* the journal, all guarded by mu */
    pthread_mutex_t mu;
    pthread_cond_t synced;  ///< a sync finished
    pthread_cond_t wake;    ///< the thread has work (snapshot wanted, stop)
    bool sync_ready;        ///< mu and the condition variables exist
    int fd;                 ///< the journal file appended to, -1 before recovery ends
    uint64_t file_first;    ///< its first sequence number (its name)
    uint64_t next_seq;      ///< the next record's
    uint64_t written;       ///< the last record written
    uint64_t durable;       ///< the last record known to be on disk
    bool syncing;           ///< an fdatasync of fd runs outside mu
    int error;              ///< errno of the failure that stopped the journal, 0 while healthy
    atomic_bool failed;     ///< error is set (written once, under mu; read without it)
    char error_what[160];
    uint64_t bytes;         ///< journal bytes since the last rotation
    uint64_t snap_seq;      ///< first sequence number after the newest snapshot, 0 for none
    atomic_bool unjournaled; ///< a change only a snapshot keeps was applied since the last one (cqd_store_unjournaled)
    bool snapshot_wanted;
    uint64_t snap_retry_ns; ///< cqd_mono_ns() before which no snapshot is tried again after a failure

    /* snapshot outcomes (written by whoever snapshots: the store's thread, then the close) */
    _Atomic uint64_t snap_failures;  ///< failed attempts since start (collisiond_snapshot_failures_total)
    _Atomic uint64_t snap_last_ok_ms; ///< Unix time (ms) of the last snapshot written, or of the one recovered; 0: none
    uint64_t snap_logged_ns;         ///< cqd_mono_ns() of the last failure logged, 0 for none since the last success
    uint64_t snap_unlogged;          ///< failures since then that were not logged
    bool stop;
    bool thread_running;
    pthread_t thread;
};

/// A new store for srv's data directory: read_only for inspect (the
/// directory must exist), else created and locked. NULL (logged) on failure.
cqd_store *cqd_store_new(cqd_server *srv, bool read_only);
/// Closes and frees everything (no snapshot, no sync).
void cqd_store_free(cqd_store *st);

/// Records a note for inspect and, unless read-only, logs it at level.
void cqd_store_note(cqd_store *st, cqd_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/// "journal-<20 digits>.log" / "snapshot-<20 digits>.snap" into out.
void cqd_store_journal_name(uint64_t first, char out[CQD_STORE_NAME_MAX]);
void cqd_store_snapshot_name(uint64_t seq, char out[CQD_STORE_NAME_MAX]);

/// Kinds of file in the data directory.
typedef enum cqd_store_kind {
    CQD_FILE_OTHER,
    CQD_FILE_JOURNAL,  ///< journal-<seq>.log
    CQD_FILE_SNAPSHOT, ///< snapshot-<seq>.snap
    CQD_FILE_TEMP,     ///< snapshot-<seq>.snap.tmp
} cqd_store_kind;
/// The kind of a file name, with its sequence number in *seq.
cqd_store_kind cqd_store_classify(const char *name, uint64_t *seq);
/// Deletes the journals and snapshots older than seq and every temporary
/// file (what a snapshot at seq made obsolete).
void cqd_store_cleanup(cqd_store *st, uint64_t seq);

/// Writes every byte of iov[0..n) (retrying short writes and EINTR).
/// 0, or -1 with errno set. iov is modified.
int cqd_store_writev(int fd, struct iovec *iov, int n);
/// fsync of the data directory. 0, or -1 with errno set.
int cqd_store_dirsync(cqd_store *st);

/// Start-up: lists and reads the files and decides what recovery applies
/// (store_scan.c). 0, or -1 when start-up must stop (corruption without
/// --repair, or an I/O error), st->rec saying why.
int cqd_store_scan(cqd_store *st);
/// Applies what the scan chose to st->srv's worlds (store_recover.c).
/// 0, or -1 when a snapshot world cannot be rebuilt (without --repair).
int cqd_store_apply(cqd_store *st);

/// Opens the journal for appends after recovery (store_journal.c).
int cqd_store_journal_open(cqd_store *st);
/// Makes what was written durable (one fdatasync shared by whoever waits).
/// Called and returns with mu held.
void cqd_store_sync_locked(cqd_store *st);
/// Stops the journal for good after an I/O error (logged once). mu held.
void cqd_store_fail_locked(cqd_store *st, int err, const char *what);
/// The wall clock in milliseconds since the Unix epoch.
uint64_t cqd_store_unix_ms(void);

/// Room for why a journal file or snapshot could not be made.
#define CQD_STORE_WHY_MAX 640

/// Syncs the journal and, when it has records, continues in a new file
/// named after the next sequence number; *first receives that number.
/// 0, or -1 when the journal failed or the new file cannot be made, with
/// why (size bytes) saying which (not logged: the snapshot's failure is,
/// at a bounded rate).
int cqd_store_rotate(cqd_store *st, uint64_t *first, char *why, size_t size);

/// Writes a snapshot of every world and deletes what it makes obsolete
/// (store_snapshot.c). One at a time: the store's thread, or close after
/// the thread stopped. 0, or -1 (logged; older files are kept).
int cqd_store_snapshot(cqd_store *st);

#endif
