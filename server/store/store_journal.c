/// @file server/store/store_journal.c
/// The journal: appends (one writev per record under the store's mutex,
/// which also hands out the sequence numbers), group commit (whoever needs
/// a sync while none runs does one fdatasync for everything written so
/// far; the others wait for it), the failed state, and rotation. Every
/// write and fdatasync is timed, and the bytes appended counted, into
/// srv->journal (metrics.h), so a world's disk cost shows in /metrics.
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cqp/journal.h"

void cqd_store_fail_locked(cqd_store *st, int err, const char *what)
{
    if (st->error)
        return;
    st->error = err ? err : EIO;
    snprintf(st->error_what, sizeof st->error_what, "%s: %s", what, strerror(st->error));
    atomic_store_explicit(&st->failed, true, memory_order_release);
    cqd_log(&st->srv->log, CQD_LOG_ERROR, "journal failed (%s): every mutation is refused until a restart",
            st->error_what);
    pthread_cond_broadcast(&st->synced);
}

/// fdatasync, timed (a failed one too: its time was spent), or the
/// failpoint's EIO (no disk touched: not timed).
static int sync_fd(cqd_store *st, int fd)
{
    if (cqd_failpoint_hit(&st->srv->fp, "journal_fsync")) {
        errno = EIO;
        return -1;
    }
    uint64_t t0 = cqd_mono_ns();
    int rc = fdatasync(fd);
    int err = errno;
    cqd_io_observe(&st->srv->journal.fsync, cqd_mono_ns() - t0);
    errno = err;
    return rc;
}

/// Writes a record's pieces, timed as sync_fd is; 0, or -1 with errno.
static int timed_writev(cqd_store *st, struct iovec *iov, int n)
{
    if (cqd_failpoint_hit(&st->srv->fp, "journal_write")) {
        errno = EIO;
        return -1;
    }
    uint64_t t0 = cqd_mono_ns();
    int rc = cqd_store_writev(st->fd, iov, n);
    int err = errno;
    cqd_io_observe(&st->srv->journal.write, cqd_mono_ns() - t0);
    errno = err;
    return rc;
}

void cqd_store_sync_locked(cqd_store *st)
{
    while (st->syncing)
        pthread_cond_wait(&st->synced, &st->mu);
    if (st->fd < 0 || st->error || st->durable >= st->written)
        return;
    st->syncing = true;
    uint64_t target = st->written;
    int fd = st->fd; /* rotation waits for syncing to clear before it closes fd */
    pthread_mutex_unlock(&st->mu);
    int rc = sync_fd(st, fd);
    int err = errno;
    pthread_mutex_lock(&st->mu);
    st->syncing = false;
    if (rc != 0)
        cqd_store_fail_locked(st, err, "fdatasync");
    else if (target > st->durable)
        st->durable = target;
    pthread_cond_broadcast(&st->synced);
}

static void set_why(char *why, size_t size, const cqd_store *st) { snprintf(why, size, "%s", st->error_what); }

int cqd_store_append(cqd_store *st, const char *method, const char *path, const char *body, size_t body_len,
                     cqp_format body_format, uint64_t *seq, char *why, size_t why_size)
{
    uint8_t prefix[512];
    size_t plen = cqp_mutation_prefix(prefix, sizeof prefix, method, strlen(method), path, strlen(path));
    if (plen == 0 || body_len > CQP_RECORD_MAX_PAYLOAD - plen) {
        snprintf(why, why_size, "the request is too large for a journal record");
        return -1;
    }
    /* the checksum of the body is taken before the lock: only the header's waits */
    uint32_t crc = cqp_crc32c(cqp_crc32c(0, prefix, plen), body, body_len);
    uint8_t header[CQP_RECORD_HEADER];
    pthread_mutex_lock(&st->mu);
    if (st->error) {
        set_why(why, why_size, st);
        pthread_mutex_unlock(&st->mu);
        return -1;
    }
    cqp_record_header(header, cqp_mutation_kind(body_format), st->next_seq, plen + body_len, crc);
    struct iovec iov[3] = {
        {header, sizeof header},
        {prefix, plen},
        {(void *)body, body_len},
    };
    int rc = timed_writev(st, iov, body_len ? 3 : 2);
    if (rc < 0) {
        cqd_store_fail_locked(st, errno, "write");
        set_why(why, why_size, st);
        pthread_mutex_unlock(&st->mu);
        return -1;
    }
    *seq = st->written = st->next_seq++;
    st->bytes += sizeof header + plen + body_len;
    atomic_fetch_add_explicit(&st->srv->journal.bytes, sizeof header + plen + body_len, memory_order_relaxed);
    long long every = st->srv->cfg.snapshot_every;
    if (every > 0 && st->bytes >= (uint64_t)every && !st->snapshot_wanted) {
        st->snapshot_wanted = true;
        pthread_cond_signal(&st->wake);
    }
    pthread_mutex_unlock(&st->mu);
    return 0;
}

bool cqd_store_waits(const cqd_store *st) { return st->srv->cfg.fsync == CQD_FSYNC_ALWAYS; }

bool cqd_store_failed(const cqd_store *st)
{
    /* Not under mu: a scrape must not wait for a sync or a rotation. */
    return atomic_load_explicit(&st->failed, memory_order_acquire);
}

uint64_t cqd_store_replaying(cqd_store *st)
{
    /* Written only during recovery: once serving, handlers on many threads
     * call this and only read. */
    if (st->recover_seq != 0)
        st->recover_reached = true;
    return st->recover_seq;
}

int cqd_store_wait(cqd_store *st, uint64_t seq, char *why, size_t why_size)
{
    pthread_mutex_lock(&st->mu);
    while (st->durable < seq && !st->error)
        cqd_store_sync_locked(st);
    /* synced before a later failure is still on disk */
    int rc = st->durable >= seq ? 0 : -1;
    if (rc < 0)
        set_why(why, why_size, st);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/// Creates journal-<first>.log (empty) and makes its name durable.
/// The journal file starting at first, or -1 with why (size bytes) saying why.
static int create_journal(cqd_store *st, uint64_t first, char *why, size_t size)
{
    char name[CQD_STORE_NAME_MAX];
    cqd_store_journal_name(first, name);
    int fd = cqd_failpoint_hit(&st->srv->fp, "journal_create")
                 ? (errno = EROFS, -1)
                 : openat(st->dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || cqd_store_dirsync(st) < 0) {
        snprintf(why, size, "cannot create %s/%s: %s", st->dir, name, strerror(errno));
        if (fd >= 0) {
            close(fd);
            /* an empty file starting at a sequence number the old file
             * goes on to use would read as a gap */
            unlinkat(st->dir_fd, name, 0);
        }
        return -1;
    }
    return fd;
}

int cqd_store_journal_open(cqd_store *st)
{
    /* go on appending to the newest journal recovery read, else start one */
    const cqd_sfile *last = NULL;
    for (int i = 0; i < st->file_count; i++)
        if (st->files[i].used && !st->files[i].snapshot)
            last = &st->files[i];
    int fd;
    if (last) {
        fd = openat(st->dir_fd, last->name, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
            cqd_log(&st->srv->log, CQD_LOG_ERROR, "cannot open %s/%s: %s", st->dir, last->name, strerror(errno));
    } else {
        char why[CQD_STORE_WHY_MAX];
        fd = create_journal(st, st->rec.next, why, sizeof why);
        if (fd < 0)
            cqd_log(&st->srv->log, CQD_LOG_ERROR, "%s", why);
    }
    if (fd < 0)
        return -1;
    pthread_mutex_lock(&st->mu);
    st->fd = fd;
    st->file_first = last ? last->first : st->rec.next;
    st->next_seq = st->rec.next;
    st->written = st->durable = st->next_seq - 1;
    for (int i = 0; i < st->file_count; i++)
        if (st->files[i].used && !st->files[i].snapshot)
            st->bytes += st->files[i].valid;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

int cqd_store_rotate(cqd_store *st, uint64_t *first, char *why, size_t size)
{
    pthread_mutex_lock(&st->mu);
    while (st->syncing)
        pthread_cond_wait(&st->synced, &st->mu);
    /* what the old file holds must be on disk before the snapshot
     * replaces it (and waiters under --fsync always are answered) */
    if (!st->error && st->durable < st->written) {
        if (sync_fd(st, st->fd) != 0)
            cqd_store_fail_locked(st, errno, "fdatasync");
        else
            st->durable = st->written;
        pthread_cond_broadcast(&st->synced);
    }
    int rc = st->error ? -1 : 0;
    if (rc != 0)
        snprintf(why, size, "the journal has failed");
    if (rc == 0 && st->file_first != st->next_seq) {
        int fd = create_journal(st, st->next_seq, why, size);
        if (fd < 0) {
            rc = -1;
        } else {
            close(st->fd);
            st->fd = fd;
            st->file_first = st->next_seq;
        }
    }
    if (rc == 0) {
        st->bytes = 0;
        *first = st->next_seq;
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}
