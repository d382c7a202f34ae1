/// @file server/store/store.c
/// The store's life cycle: the data directory and its lock, the two halves
/// of start-up, the store's thread (the once-a-second sync of --fsync
/// everysec, and snapshots, one at a time, off the request path), and the
/// shutdown snapshot.
#include "store_internal.h"
#include "state/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cqd_store_journal_name(uint64_t first, char out[CQD_STORE_NAME_MAX])
{
    snprintf(out, CQD_STORE_NAME_MAX, "journal-%020llu.log", (unsigned long long)first);
}

void cqd_store_snapshot_name(uint64_t seq, char out[CQD_STORE_NAME_MAX])
{
    snprintf(out, CQD_STORE_NAME_MAX, "snapshot-%020llu.snap", (unsigned long long)seq);
}

/// The 20 digits at s, or false.
static bool digits20(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

cqd_store_kind cqd_store_classify(const char *name, uint64_t *seq)
{
    if (strncmp(name, "journal-", 8) == 0 && digits20(name + 8, seq) && strcmp(name + 28, ".log") == 0)
        return CQD_FILE_JOURNAL;
    if (strncmp(name, "snapshot-", 9) == 0 && digits20(name + 9, seq)) {
        if (strcmp(name + 29, ".snap") == 0)
            return CQD_FILE_SNAPSHOT;
        if (strcmp(name + 29, ".snap.tmp") == 0)
            return CQD_FILE_TEMP;
    }
    return CQD_FILE_OTHER;
}

void cqd_store_cleanup(cqd_store *st, uint64_t seq)
{
    DIR *d = opendir(st->dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        uint64_t s;
        cqd_store_kind kind = cqd_store_classify(e->d_name, &s);
        if (kind == CQD_FILE_TEMP || ((kind == CQD_FILE_JOURNAL || kind == CQD_FILE_SNAPSHOT) && s < seq)) {
            if (unlinkat(st->dir_fd, e->d_name, 0) != 0)
                cqd_log(&st->srv->log, CQD_LOG_WARN, "cannot delete %s/%s: %s", st->dir, e->d_name, strerror(errno));
        }
    }
    closedir(d);
}

void cqd_store_note(cqd_store *st, cqd_log_level level, const char *fmt, ...)
{
    char text[sizeof st->rec.notes[0]];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (st->rec.note_count < CQD_STORE_NOTES)
        memcpy(st->rec.notes[st->rec.note_count++], text, sizeof text);
    if (!st->read_only)
        cqd_log(&st->srv->log, level, "%s", text);
}

int cqd_store_writev(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        size_t done = (size_t)w;
        while (n > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

int cqd_store_dirsync(cqd_store *st) { return fsync(st->dir_fd); }

/// Creates the directory path unless it exists. A new directory's entry is
/// made durable (an fsync of its parent), or a power cut could take the
/// data directory, and every change acknowledged in it, with it.
static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0)
        return errno == EEXIST ? 0 : -1;
    char parent[sizeof ((cqd_config *)0)->data_dir];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else
        slash[slash == parent] = '\0'; /* "/top" keeps its root */
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) /* a parent we may search but not read cannot be synced; the directory is there */
        return errno == EACCES ? 0 : -1;
    int rc = fsync(fd), err = errno;
    close(fd);
    errno = err;
    return rc;
}

/// mkdir -p: every missing component of path is created.
static int make_dirs(const char *path)
{
    char buf[sizeof ((cqd_config *)0)->data_dir];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (make_dir(buf) < 0)
            return -1;
        *p = '/';
    }
    return make_dir(buf);
}

/// Takes the directory's lock file, so two daemons never share a journal.
static int lock_dir(cqd_store *st)
{
    st->lock_fd = openat(st->dir_fd, "LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (st->lock_fd < 0)
        return -1;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    return fcntl(st->lock_fd, F_SETLK, &fl);
}

static int init_sync(cqd_store *st)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    /* the store's thread waits with timeouts: immune to clock steps */
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0 && (rc = pthread_mutex_init(&st->mu, NULL)) == 0) {
        if ((rc = pthread_cond_init(&st->synced, &attr)) == 0) {
            if ((rc = pthread_cond_init(&st->wake, &attr)) != 0)
                pthread_cond_destroy(&st->synced);
        }
        if (rc != 0)
            pthread_mutex_destroy(&st->mu);
    }
    pthread_condattr_destroy(&attr);
    st->sync_ready = rc == 0;
    return rc == 0 ? 0 : -1;
}

cqd_store *cqd_store_new(cqd_server *srv, bool read_only)
{
    const cqd_logger *log = &srv->log;
    const char *dir = srv->cfg.data_dir;
    cqd_store *st = cqd_calloc(1, sizeof *st);
    if (!st || init_sync(st) < 0) {
        cqd_log(log, CQD_LOG_ERROR, "data directory %s: out of memory", dir);
        cqd_free(st);
        return NULL;
    }
    st->srv = srv;
    st->read_only = read_only;
    atomic_init(&st->failed, false);
    atomic_init(&st->unjournaled, false);
    st->dir_fd = st->lock_fd = st->fd = -1;
    st->rec.snapshot = -1;
    snprintf(st->dir, sizeof st->dir, "%s", dir);
    if (!read_only && make_dirs(dir) < 0) {
        cqd_log(log, CQD_LOG_ERROR,
                "cannot create the data directory %s: %s; pass --data-dir DIR for one this user may create, "
                "or --data-dir '' to keep nothing on disk", dir, strerror(errno));
        cqd_store_free(st);
        return NULL;
    }
    st->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->dir_fd < 0) {
        cqd_log(log, CQD_LOG_ERROR, "cannot open the data directory %s: %s", dir, strerror(errno));
        cqd_store_free(st);
        return NULL;
    }
    if (!read_only && lock_dir(st) < 0) {
        cqd_log(log, CQD_LOG_ERROR, "cannot lock the data directory %s (%s): is another collisiond using it?", dir,
                strerror(errno));
        cqd_store_free(st);
        return NULL;
    }
    return st;
}

void cqd_store_free(cqd_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->file_count; i++)
        cqd_free(st->files[i].data);
    cqd_free(st->files);
    cqd_free(st->snap_worlds);
    if (st->fd >= 0)
        close(st->fd);
    if (st->lock_fd >= 0)
        close(st->lock_fd);
    if (st->dir_fd >= 0)
        close(st->dir_fd);
    if (st->sync_ready) {
        pthread_cond_destroy(&st->wake);
        pthread_cond_destroy(&st->synced);
        pthread_mutex_destroy(&st->mu);
    }
    cqd_free(st);
}

cqd_store *cqd_store_open(cqd_server *srv)
{
    cqd_store *st = cqd_store_new(srv, false);
    if (st && cqd_store_scan(st) < 0) {
        cqd_store_free(st);
        st = NULL;
    }
    return st;
}

uint64_t cqd_store_unix_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

void cqd_store_snapshot_stats(const cqd_store *st, uint64_t *failures, double *last_ok_s)
{
    *failures = st ? atomic_load_explicit(&st->snap_failures, memory_order_relaxed) : 0;
    *last_ok_s = st ? (double)atomic_load_explicit(&st->snap_last_ok_ms, memory_order_relaxed) / 1000.0 : 0;
}

/// A snapshot is wanted and no failure holds it back (under mu).
static bool snapshot_due(const cqd_store *st)
{
    return st->snapshot_wanted && (st->snap_retry_ns == 0 || cqd_mono_ns() >= st->snap_retry_ns);
}

/// The store's thread: snapshots when the journal asks for one, and under
/// --fsync everysec one sync a second.
static void *store_thread(void *arg)
{
    cqd_store *st = arg;
    bool everysec = st->srv->cfg.fsync == CQD_FSYNC_EVERYSEC;
    pthread_mutex_lock(&st->mu);
    while (!st->stop) {
        if (snapshot_due(st)) {
            st->snapshot_wanted = false;
            pthread_mutex_unlock(&st->mu);
            cqd_store_snapshot(st);
            pthread_mutex_lock(&st->mu);
            continue;
        }
        if (everysec)
            cqd_store_sync_locked(st);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        while (!st->stop && !snapshot_due(st) && pthread_cond_timedwait(&st->wake, &st->mu, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/// Frees the files' contents: recovery is over.
static void drop_files(cqd_store *st)
{
    for (int i = 0; i < st->file_count; i++) {
        cqd_free(st->files[i].data);
        st->files[i].data = NULL;
    }
}

int cqd_store_recover(cqd_store *st)
{
    if (!st)
        return 0;
    uint64_t t0 = cqd_mono_ns();
    int rc = cqd_store_apply(st);
    drop_files(st);
    if (rc < 0 || st->read_only)
        return rc;
    if (cqd_store_journal_open(st) < 0)
        return -1;
    /* a long journal left by crashes is compacted at once */
    long long every = st->srv->cfg.snapshot_every;
    st->snapshot_wanted = every > 0 && st->bytes >= (uint64_t)every;
    if (pthread_create(&st->thread, NULL, store_thread, st) != 0) {
        cqd_log(&st->srv->log, CQD_LOG_ERROR, "cannot start the store's thread");
        return -1;
    }
    st->thread_running = true;
    const cqd_recovery *r = &st->rec;
    struct stat sb; // the snapshot recovered was the last one written
    if (r->snapshot >= 0 && fstatat(st->dir_fd, st->files[r->snapshot].name, &sb, 0) == 0) {
        uint64_t ms = (uint64_t)sb.st_mtim.tv_sec * 1000u + (uint64_t)sb.st_mtim.tv_nsec / 1000000u;
        atomic_store(&st->snap_last_ok_ms, ms);
    }
    cqd_log(&st->srv->log, CQD_LOG_INFO,
            "recovered: %d worlds from %s, then %llu journal records (%llu already in the snapshot, %llu rejected "
            "as when first sent) in %.1f ms; next sequence number %llu",
            r->snapshot_worlds, r->snapshot >= 0 ? st->files[r->snapshot].name : "no snapshot",
            (unsigned long long)r->records, (unsigned long long)r->skipped, (unsigned long long)r->rejected,
            (double)(cqd_mono_ns() - t0) / 1e6, (unsigned long long)st->next_seq);
    return 0;
}

void cqd_store_unjournaled(cqd_store *st) { atomic_store_explicit(&st->unjournaled, true, memory_order_relaxed); }

void cqd_store_close(cqd_store *st, bool snapshot)
{
    if (!st)
        return;
    if (st->thread_running) {
        pthread_mutex_lock(&st->mu);
        st->stop = true;
        pthread_cond_broadcast(&st->wake);
        pthread_mutex_unlock(&st->mu);
        pthread_join(st->thread, NULL);
        st->thread_running = false;
    }
    if (st->fd >= 0) {
        pthread_mutex_lock(&st->mu);
        bool changed = st->next_seq != st->snap_seq || atomic_load(&st->unjournaled), healthy = st->error == 0;
        pthread_mutex_unlock(&st->mu);
        if (snapshot && changed && healthy) {
            cqd_store_snapshot(st);
        } else {
            pthread_mutex_lock(&st->mu);
            cqd_store_sync_locked(st);
            pthread_mutex_unlock(&st->mu);
        }
    }
    cqd_store_free(st);
}
