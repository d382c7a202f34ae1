/// @file server/record/record.c
/// The recorder behind --record (record.h). The bulk of a line (bodies
/// checked and escaped) is formatted outside the lock; under it only the
/// sequence number and time are formatted and the line goes out in one
/// writev(2), so the numbers follow the file order.
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "record_line.h"
#include "state/alloc.h"
#include "state/server.h"

struct cqd_recorder {
    pthread_mutex_t lock;
    int fd;               ///< guarded by lock; -1 once stopped
    uint64_t seq;         ///< records written, guarded by lock
    off_t size;           ///< bytes in the file, guarded by lock: a torn line is cut back to it
    atomic_bool stopped;  ///< read without the lock to skip the formatting
    char path[512];
};

cqd_recorder *cqd_record_open(const char *path, const cqd_logger *lg)
{
    cqd_recorder *r = cqd_calloc(1, sizeof *r);
    if (!r || pthread_mutex_init(&r->lock, NULL) != 0) {
        cqd_free(r);
        cqd_log(lg, CQD_LOG_ERROR, "cannot record to %s: out of memory; serving without a recording", path);
        return NULL;
    }
    r->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (r->fd < 0) {
        cqd_log(lg, CQD_LOG_ERROR, "cannot record to %s: %s; serving without a recording", path, strerror(errno));
        pthread_mutex_destroy(&r->lock);
        cqd_free(r);
        return NULL;
    }
    r->size = lseek(r->fd, 0, SEEK_END);
    atomic_init(&r->stopped, false);
    snprintf(r->path, sizeof r->path, "%s", path);
    cqd_log(lg, CQD_LOG_INFO, "recording every request to %s", path);
    return r;
}

void cqd_record_close(cqd_recorder *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    pthread_mutex_destroy(&r->lock);
    cqd_free(r);
}

/// Stops recording for good (lock held) and logs why, once.
static void stop(cqd_recorder *r, const cqd_logger *lg, const char *why)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    atomic_store(&r->stopped, true);
    cqd_log(lg, CQD_LOG_ERROR, "recording to %s stopped after %llu records: %s", r->path,
            (unsigned long long)r->seq, why);
}

/// Writes every byte of iov (short writes resumed); returns the bytes
/// written, or -1 with errno.
static ssize_t write_all(int fd, struct iovec *iov, int count)
{
    ssize_t total = 0;
    while (count > 0) {
        ssize_t n = writev(fd, iov, count);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        total += n;
        while (count > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            count--;
        }
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    return total;
}

void cqd_record_request(struct cqd_server *srv, const cqd_request *req, const cqd_response *resp)
{
    cqd_recorder *r = srv->recorder;
    if (!r || atomic_load_explicit(&r->stopped, memory_order_relaxed))
        return;
    cqp_buf tail = {0};
    cqd_record_format_tail(&tail, req, resp);
    pthread_mutex_lock(&r->lock);
    if (r->fd >= 0) {
        // A record missing from the middle would make a replay lie: stop instead.
        if (tail.oom) {
            stop(r, &srv->log, "out of memory formatting a record");
        } else {
            char head[CQD_RECORD_HEAD_MAX];
            struct iovec iov[2] = {{head, cqd_record_format_head(head, r->seq + 1, cqd_now())},
                                   {tail.data, tail.len}};
            ssize_t n = write_all(r->fd, iov, 2);
            if (n < 0) {
                int err = errno;
                // Cut a torn line off, so the recording stays readable to its end.
                if (ftruncate(r->fd, r->size) != 0)
                    cqd_log(&srv->log, CQD_LOG_ERROR, "cannot cut the torn last line of %s", r->path);
                stop(r, &srv->log, strerror(err));
            } else {
                r->size += n;
                r->seq++;
            }
        }
    }
    pthread_mutex_unlock(&r->lock);
    cqp_buf_free(&tail);
}
