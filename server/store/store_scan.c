/// @file server/store/store_scan.c
/// Start-up, first half: which files recovery reads, and how much of them.
/// The newest snapshot that checks out whole is loaded; the journals from
/// its sequence number on follow in order, every record carrying the next
/// sequence number. A torn tail (bytes after the last good record that
/// frame nothing valid) is an interrupted write: it is cut off and kept
/// aside. Anything else that does not check out is corruption: start-up
/// refuses, or with --repair keeps the valid prefix and moves the rest
/// aside. Read-only (inspect) reports the same without touching a file.
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cqp/journal.h"
#include "state/alloc.h"

/// Snapshots newest first, then journals oldest first.
static int by_role(const void *a, const void *b)
{
    const cqd_sfile *x = a, *y = b;
    if (x->snapshot != y->snapshot)
        return x->snapshot ? -1 : 1;
    if (x->first == y->first)
        return 0;
    return (x->first < y->first) == !x->snapshot ? -1 : 1;
}

static int list_files(cqd_store *st)
{
    DIR *d = opendir(st->dir);
    if (!d) {
        cqd_store_note(st, CQD_LOG_ERROR, "cannot list %s: %s", st->dir, strerror(errno));
        return -1;
    }
    int cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        uint64_t seq;
        cqd_store_kind kind = cqd_store_classify(e->d_name, &seq);
        if (kind == CQD_FILE_TEMP)
            cqd_store_note(st, CQD_LOG_INFO, "%s: an unfinished snapshot, ignored%s", e->d_name,
                           st->read_only ? "" : " (deleted once recovered)");
        size_t len = strlen(e->d_name); /* a classified name is 34 bytes at most */
        if ((kind != CQD_FILE_JOURNAL && kind != CQD_FILE_SNAPSHOT) || len >= sizeof st->files->name)
            continue;
        if (st->file_count == cap) {
            cap = cap ? 2 * cap : 16;
            cqd_sfile *grown = cqd_realloc(st->files, (size_t)cap * sizeof *grown);
            if (!grown) {
                closedir(d);
                cqd_store_note(st, CQD_LOG_ERROR, "out of memory listing %s", st->dir);
                return -1;
            }
            st->files = grown;
        }
        cqd_sfile *f = &st->files[st->file_count++];
        memset(f, 0, sizeof *f);
        memcpy(f->name, e->d_name, len + 1);
        f->first = seq;
        f->snapshot = kind == CQD_FILE_SNAPSHOT;
    }
    closedir(d);
    if (st->file_count > 1)
        qsort(st->files, (size_t)st->file_count, sizeof *st->files, by_role);
    return 0;
}

static int read_file(cqd_store *st, cqd_sfile *f)
{
    int fd = openat(st->dir_fd, f->name, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        cqd_store_note(st, CQD_LOG_ERROR, "cannot read %s/%s: %s", st->dir, f->name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)sb.st_size;
    f->data = cqd_malloc(size ? size : 1);
    size_t got = 0;
    while (f->data && got < size) {
        ssize_t n = read(fd, f->data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int err = errno;
    close(fd);
    if (!f->data || got < size) {
        cqd_store_note(st, CQD_LOG_ERROR, "cannot read %s/%s: %s", st->dir, f->name,
                       f->data ? (got < size ? "short read" : strerror(err)) : "out of memory");
        return -1;
    }
    f->len = size;
    return 0;
}

/// Writes f's bytes from offset on to "<name>.<what>-<offset>" and cuts f
/// there (both synced). Read-only: nothing.
static int cut_aside(cqd_store *st, cqd_sfile *f, size_t offset, const char *what)
{
    if (st->read_only)
        return 0;
    char aside[CQD_STORE_NAME_MAX + 32];
    snprintf(aside, sizeof aside, "%s.%s-%zu", f->name, what, offset);
    int fd = openat(st->dir_fd, aside, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    struct iovec iov = {f->data + offset, f->len - offset};
    bool ok = fd >= 0 && cqd_store_writev(fd, &iov, 1) == 0 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    if (ok) {
        fd = openat(st->dir_fd, f->name, O_WRONLY | O_CLOEXEC);
        ok = fd >= 0 && ftruncate(fd, (off_t)offset) == 0 && fsync(fd) == 0;
        if (fd >= 0)
            close(fd);
    }
    if (!ok || cqd_store_dirsync(st) != 0) {
        cqd_store_note(st, CQD_LOG_ERROR, "cannot cut %s/%s at offset %zu: %s", st->dir, f->name, offset,
                       strerror(errno));
        return -1;
    }
    return 0;
}

/// Renames the whole of f aside ("<name>.corrupt-0"). Read-only: nothing.
static int move_aside(cqd_store *st, cqd_sfile *f, size_t offset)
{
    if (st->read_only)
        return 0;
    char aside[CQD_STORE_NAME_MAX + 32];
    snprintf(aside, sizeof aside, "%s.corrupt-%zu", f->name, offset);
    if (renameat(st->dir_fd, f->name, st->dir_fd, aside) != 0 || cqd_store_dirsync(st) != 0) {
        cqd_store_note(st, CQD_LOG_ERROR, "cannot move %s/%s aside: %s", st->dir, f->name, strerror(errno));
        return -1;
    }
    cqd_store_note(st, CQD_LOG_WARN, "moved %s aside as %s", f->name, aside);
    return 0;
}

/// Reports corruption in f at offset. Returns 0 when recovery goes on
/// with what came before it (--repair, or inspect), -1 when start-up stops.
static int corruption(cqd_store *st, const cqd_sfile *f, size_t offset, const char *why, const char *kept)
{
    st->rec.corrupt = true;
    cqd_store_note(st, CQD_LOG_ERROR, "corruption in %s/%s at offset %zu: %s", st->dir, f->name, offset, why);
    if (st->read_only)
        return 0;
    if (!st->srv->cfg.repair) {
        cqd_store_note(st, CQD_LOG_ERROR,
                       "refusing to start: %s/%s is corrupt at offset %zu; --repair keeps %s and moves the rest aside",
                       st->dir, f->name, offset, kept);
        return -1;
    }
    cqd_store_note(st, CQD_LOG_WARN, "--repair: keeping %s, dropping the rest", kept);
    return 0;
}

/// Checks that f is a whole snapshot; -1 with the offset and why not.
static int check_snapshot(cqd_sfile *f, size_t *bad, const char **why)
{
    size_t pos = 0, at = 0;
    cqp_record r;
    uint64_t worlds = 0;
    if (cqp_record_next(f->data, f->len, &pos, &r, NULL) != CQP_SCAN_RECORD || r.kind != CQP_REC_SNAP_BEGIN ||
        r.seq != f->first || r.len != 0) {
        *bad = 0;
        *why = "no valid snapshot header";
        return -1;
    }
    for (;;) {
        at = pos;
        cqp_scan s = cqp_record_next(f->data, f->len, &pos, &r, NULL);
        cqp_mutation m;
        if (s == CQP_SCAN_RECORD && r.kind == CQP_REC_SNAP_WORLD && cqp_mutation_parse(r.payload, r.len, &m)) {
            worlds++;
            continue;
        }
        if (s == CQP_SCAN_RECORD && r.kind == CQP_REC_SNAP_END && r.seq == worlds && pos == f->len) {
            f->valid = pos;
            f->records = worlds;
            return 0;
        }
        *bad = at;
        *why = s == CQP_SCAN_RECORD ? "unexpected record"
               : s == CQP_SCAN_END  ? "ends before its last record"
               : s == CQP_SCAN_TORN ? "truncated"
                                    : "bad checksum";
        return -1;
    }
}

/// Picks the newest whole snapshot (moving damaged ones aside under --repair).
static int choose_snapshot(cqd_store *st)
{
    for (int i = 0; i < st->file_count && st->files[i].snapshot; i++) {
        cqd_sfile *f = &st->files[i];
        if (read_file(st, f) < 0)
            return -1;
        size_t bad;
        const char *why;
        if (check_snapshot(f, &bad, &why) == 0) {
            f->used = true;
            st->rec.snapshot = i;
            cqd_store_note(st, CQD_LOG_INFO, "%s: %llu worlds, the journal from sequence number %llu", f->name,
                           (unsigned long long)f->records, (unsigned long long)f->first);
            return 0;
        }
        if (corruption(st, f, bad, why, "the older snapshots and journals") < 0 || move_aside(st, f, bad) < 0)
            return -1;
        cqd_free(f->data);
        f->data = NULL;
    }
    return 0;
}

/// The note of a journal's records from..to; how many bodies are
/// MessagePack only when some are (a journal of JSON bodies reads as it
/// always did).
static void note_records(cqd_store *st, const cqd_sfile *f, uint64_t from, uint64_t to)
{
    char kinds[64] = "";
    if (f->msgpack)
        snprintf(kinds, sizeof kinds, "; %llu JSON, %llu MessagePack", (unsigned long long)(f->records - f->msgpack),
                 (unsigned long long)f->msgpack);
    cqd_store_note(st, CQD_LOG_INFO, "%s: records %llu..%llu (%zu bytes%s)", f->name, (unsigned long long)from,
                   (unsigned long long)to, f->valid, kinds);
}

/// Scans journal f from sequence number *expected on; *stop is set when
/// what follows f must be dropped (corruption under --repair).
static int scan_journal(cqd_store *st, cqd_sfile *f, uint64_t *expected, bool *stop)
{
    if (read_file(st, f) < 0)
        return -1;
    f->used = true;
    uint64_t from = *expected;
    size_t pos = 0, at, resume = 0;
    cqp_record r;
    cqp_scan s;
    for (;;) {
        at = pos;
        cqp_mutation m;
        cqp_format body;
        s = cqp_record_next(f->data, f->len, &pos, &r, &resume);
        if (s != CQP_SCAN_RECORD || !cqp_record_is_mutation(r.kind, &body) || r.seq != *expected ||
            !cqp_mutation_parse(r.payload, r.len, &m))
            break;
        ++*expected;
        f->records++;
        f->msgpack += body == CQP_MSGPACK;
    }
    f->valid = at;
    if (f->records)
        note_records(st, f, from, *expected - 1);
    else
        cqd_store_note(st, CQD_LOG_INFO, "%s: no records", f->name);
    if (s == CQP_SCAN_END)
        return 0;
    if (s == CQP_SCAN_TORN) {
        cqd_store_note(st, CQD_LOG_WARN,
                       "torn tail in %s at offset %zu (%zu bytes, an interrupted write): %s %s.torn-%zu", f->name, at,
                       f->len - at, st->read_only ? "start-up would cut it off and keep it as" : "cut off and kept as",
                       f->name, at);
        return cut_aside(st, f, at, "torn");
    }
    char why[160], kept[96];
    if (s == CQP_SCAN_CORRUPT)
        snprintf(why, sizeof why, "bad checksum (a valid record follows at offset %zu)", resume);
    else if (!cqp_record_is_mutation(r.kind, NULL))
        snprintf(why, sizeof why, "a record of kind %d in a journal", (int)r.kind);
    else if (r.seq != *expected)
        snprintf(why, sizeof why, "sequence number %llu where %llu was expected", (unsigned long long)r.seq,
                 (unsigned long long)*expected);
    else
        snprintf(why, sizeof why, "a record that is not a request");
    snprintf(kept, sizeof kept, "the %llu records before it", (unsigned long long)f->records);
    if (corruption(st, f, at, why, kept) < 0 || cut_aside(st, f, at, "corrupt") < 0)
        return -1;
    *stop = true;
    return 0;
}

int cqd_store_scan(cqd_store *st)
{
    cqd_recovery *rec = &st->rec;
    if (list_files(st) < 0 || choose_snapshot(st) < 0) {
        rec->failed = true;
        return -1;
    }
    rec->base = rec->snapshot >= 0 ? st->files[rec->snapshot].first : 1;
    uint64_t expected = rec->base;
    bool stop = false;
    for (int i = 0; i < st->file_count; i++) {
        cqd_sfile *f = &st->files[i];
        if (f->snapshot || f->first < rec->base)
            continue; /* older snapshots and journals: obsolete, deleted once recovered */
        if (stop) {
            if (move_aside(st, f, 0) < 0) {
                rec->failed = true;
                return -1;
            }
            continue;
        }
        if (f->first != expected) {
            char why[160];
            snprintf(why, sizeof why,
                     "it starts at sequence number %llu where %llu was expected (a journal is missing)",
                     (unsigned long long)f->first, (unsigned long long)expected);
            if (corruption(st, f, 0, why, "the records before this file") < 0 || move_aside(st, f, 0) < 0) {
                rec->failed = true;
                return -1;
            }
            stop = true;
            continue;
        }
        if (scan_journal(st, f, &expected, &stop) < 0) {
            rec->failed = true;
            return -1;
        }
    }
    rec->next = expected;
    return 0;
}
