/// @file server/store/store_snapshot.c
/// Snapshots. The journal first moves on to a new file starting at seq S,
/// so every record before S is in the old files; then each world is read
/// under its shared lock just long enough to serialise it (with the last
/// sequence number applied to it, which covers every record of that world
/// before S), the lock is released and the record written. The file
/// (snapshot-S.snap: BEGIN, one WORLD per world but the ephemeral ones,
/// END) is written under a temporary name, synced, renamed into place and
/// the directory synced;
/// only then are the files before S deleted. A crash at any point leaves
/// either the old snapshot and journals or the new ones complete.
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/export.h"
#include "api/router.h"
#include "cqp/journal.h"
#include "state/alloc.h"
#include "state/registry.h"

/// After a failed snapshot none is tried for this long: a read-only or full
/// directory fails every attempt, and each write past --snapshot-every
/// would otherwise ask for one (and sync the journal for it).
#define SNAPSHOT_RETRY_NS 1000000000ull
/// Failed snapshots are logged at most once in this span; the next line
/// says how many it stands for.
#define SNAPSHOT_LOG_NS 60000000000ull

/// Counts a failed snapshot, holds the next one back, and logs why unless
/// a failure was logged less than a minute ago.
__attribute__((format(printf, 2, 3))) static void snap_failed(cqd_store *st, const char *fmt, ...)
{
    atomic_fetch_add_explicit(&st->snap_failures, 1, memory_order_relaxed);
    uint64_t now = cqd_mono_ns();
    st->snap_retry_ns = now + SNAPSHOT_RETRY_NS;
    if (st->snap_logged_ns && now - st->snap_logged_ns < SNAPSHOT_LOG_NS) {
        st->snap_unlogged++;
        return;
    }
    char msg[CQD_STORE_WHY_MAX + 160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (st->snap_unlogged)
        cqd_log(&st->srv->log, CQD_LOG_ERROR, "%s; %llu more snapshots failed since the last such line", msg,
                (unsigned long long)st->snap_unlogged);
    else
        cqd_log(&st->srv->log, CQD_LOG_ERROR, "%s", msg);
    st->snap_logged_ns = now;
    st->snap_unlogged = 0;
}

/// Notes a snapshot written: its time, and the failures before it start over.
static void snap_succeeded(cqd_store *st)
{
    atomic_store_explicit(&st->snap_last_ok_ms, cqd_store_unix_ms(), memory_order_relaxed);
    st->snap_logged_ns = 0;
    st->snap_unlogged = 0;
    st->snap_retry_ns = 0;
}

/// Writes one record (its payload: prefix, then body) to fd.
static int write_record(cqd_store *st, int fd, cqp_record_kind kind, uint64_t seq, const void *prefix, size_t plen,
                        const void *body, size_t blen)
{
    uint8_t header[CQP_RECORD_HEADER];
    uint32_t crc = cqp_crc32c(cqp_crc32c(0, prefix, plen), body, blen);
    if (cqp_record_header(header, kind, seq, plen + blen, crc) < 0) {
        errno = EFBIG;
        return -1;
    }
    if (cqd_failpoint_hit(&st->srv->fp, "snapshot_write")) {
        errno = EIO;
        return -1;
    }
    struct iovec iov[3] = {{header, sizeof header}, {(void *)prefix, plen}, {(void *)body, blen}};
    return cqd_store_writev(fd, iov, 3);
}

/// What writing the worlds needs to say when it fails.
typedef struct snap_error {
    int err;
    const char *what;
} snap_error;

/// Under --fsync everysec the snapshot runs on the thread that syncs the
/// journal once a second, so it syncs between worlds when one is due: the
/// changes a power cut can take stay about a second's (plus at most one
/// world's serialisation), however long the snapshot takes.
static void sync_if_due(cqd_store *st, uint64_t *due)
{
    if (st->srv->cfg.fsync != CQD_FSYNC_EVERYSEC || cqd_mono_ns() < *due)
        return;
    pthread_mutex_lock(&st->mu);
    cqd_store_sync_locked(st);
    pthread_mutex_unlock(&st->mu);
    *due = cqd_mono_ns() + 1000000000u;
}

/// Writes every world to fd; *count receives how many.
static int write_worlds(cqd_store *st, int fd, int *count, snap_error *e)
{
    cqd_registry *reg = st->srv->worlds;
    cqd_world **ws;
    int n;
    *count = 0;
    if (cqd_registry_refs(reg, &ws, &n) < 0) {
        *e = (snap_error){ENOMEM, "listing the worlds"};
        return -1;
    }
    cqp_buf buf = {0};
    int rc = 0;
    uint64_t due = cqd_mono_ns() + 1000000000u;
    for (int i = 0; i < n; i++) {
        cqd_world *w = ws[i];
        sync_if_due(st, &due);
        if (rc == 0) {
            cqp_buf_reset(&buf);
            cqp_writer out;
            cqp_writer_init(&out, &buf, false);
            pthread_rwlock_rdlock(&w->lock);
            /* an ephemeral world is never on disk, not even its name */
            bool live = !w->deleted && w->durability != CQP_DURABILITY_NONE;
            uint64_t seq = w->seq;
            int erc = live ? cqd_write_export(&out, w->world, w->durability) : CQ_OK;
            pthread_rwlock_unlock(&w->lock);
            /* the record replays as the import of the export, through
             * the route the table marks for it (PUT /v1/worlds/<name>) */
            const char *method = "";
            char path[16 + CQ_WORLD_ID_MAX];
            int path_len = cqd_route_snapshot(w->name, &method, path, sizeof path);
            uint8_t prefix[32 + sizeof path];
            size_t plen = path_len < 0 ? 0
                                       : cqp_mutation_prefix(prefix, sizeof prefix, method, strlen(method), path,
                                                             (size_t)path_len);
            if (erc != CQ_OK || buf.oom) {
                *e = (snap_error){ENOMEM, "serialising a world"};
                rc = -1;
            } else if (live && plen == 0) {
                *e = (snap_error){ENAMETOOLONG, "naming a world's record"};
                rc = -1;
            } else if (live && write_record(st, fd, CQP_REC_SNAP_WORLD, seq, prefix, plen, buf.data, buf.len) < 0) {
                *e = (snap_error){errno, "write"};
                rc = -1;
            } else if (live && ++*count == 1) {
                cqd_failpoint_crash(&st->srv->fp, "snapshot_partial");
            }
        }
        cqd_world_unref(reg, w);
    }
    cqd_free(ws);
    cqp_buf_free(&buf);
    return rc;
}

/// One snapshot (cqd_store_snapshot).
static int write_snapshot(cqd_store *st)
{
    uint64_t t0 = cqd_mono_ns();
    const cqd_logger *log = &st->srv->log;
    uint64_t first;
    char why[CQD_STORE_WHY_MAX];
    if (cqd_store_rotate(st, &first, why, sizeof why) < 0) {
        snap_failed(st, "snapshot skipped: the journal cannot move to a new file (%s); the journal is kept", why);
        return -1;
    }
    char name[CQD_STORE_NAME_MAX], tmp[CQD_STORE_NAME_MAX + 8];
    cqd_store_snapshot_name(first, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    snap_error e = {0, NULL};
    int worlds = 0;
    int fd = openat(st->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        e = (snap_error){errno, "create"};
    else if (write_record(st, fd, CQP_REC_SNAP_BEGIN, first, NULL, 0, NULL, 0) < 0)
        e = (snap_error){errno, "write"};
    else if (write_worlds(st, fd, &worlds, &e) < 0)
        ;
    else if (write_record(st, fd, CQP_REC_SNAP_END, (uint64_t)worlds, NULL, 0, NULL, 0) < 0)
        e = (snap_error){errno, "write"};
    else if (cqd_failpoint_hit(&st->srv->fp, "snapshot_fsync") ? (errno = EIO, 1) : fsync(fd) != 0)
        e = (snap_error){errno, "fsync"};
    if (fd >= 0 && close(fd) != 0 && !e.what)
        e = (snap_error){errno, "close"};
    if (!e.what) {
        cqd_failpoint_crash(&st->srv->fp, "snapshot_rename");
        if (renameat(st->dir_fd, tmp, st->dir_fd, name) != 0)
            e = (snap_error){errno, "rename"};
    }
    if (e.what) {
        snap_failed(st, "snapshot %s failed (%s: %s); the journal is kept", name, e.what, strerror(e.err));
        unlinkat(st->dir_fd, tmp, 0);
        return -1;
    }
    cqd_failpoint_crash(&st->srv->fp, "snapshot_dirsync");
    if (cqd_store_dirsync(st) != 0) {
        /* the rename may not be durable: keep what it would replace */
        snap_failed(st, "snapshot %s: fsync of %s failed (%s); the journal is kept", name, st->dir, strerror(errno));
        return -1;
    }
    cqd_failpoint_crash(&st->srv->fp, "snapshot_cleanup");
    cqd_store_cleanup(st, first);
    pthread_mutex_lock(&st->mu);
    st->snap_seq = first;
    pthread_mutex_unlock(&st->mu);
    snap_succeeded(st);
    cqd_log(log, CQD_LOG_INFO, "snapshot %s: %d worlds in %.1f ms", name, worlds, (double)(cqd_mono_ns() - t0) / 1e6);
    return 0;
}

int cqd_store_snapshot(cqd_store *st)
{
    /* what the worlds' serialisation misses is flagged again meanwhile;
     * a failed snapshot leaves the flag as it found it */
    bool pending = atomic_exchange(&st->unjournaled, false);
    int rc = write_snapshot(st);
    if (rc < 0 && pending)
        atomic_store(&st->unjournaled, true);
    return rc;
}
