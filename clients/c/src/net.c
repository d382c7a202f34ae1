/* One TCP socket, non-blocking, every wait bounded by a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "cqc_int.h"

/* Bytes asked of each recv: a contacts answer at 100,000 boxes is about a
 * megabyte, so a few calls take it. */
#define RECV_CHUNK (256 * 1024)

uint64_t cqc__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The calling thread's CPU time: what the library's own work costs, free
 * of the time other processes take the CPU for (cqc_stats). */
uint64_t cqc__cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Waits for events on fd until deadline: 1 ready, 0 timed out, -1 failed. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = cqc__now_ns();
        if (now >= deadline)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int ms = (int)((deadline - now + 999999) / 1000000);
        int k = poll(&p, 1, ms);
        if (k > 0)
            return 1;
        if (k < 0 && errno != EINTR)
            return -1;
    }
}

static int try_addr(const struct addrinfo *a, uint64_t deadline)
{
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int err = 0;
    socklen_t len = sizeof err;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)) {
        /* A pipeline is written whole, so Nagle's wait would only delay its tail. */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return fd;
    }
    close(fd);
    return -1;
}

cqc_status cqc__net_open(cqc_conn *c)
{
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)c->opt.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list;
    if (getaddrinfo(c->host, port, &hints, &list) != 0)
        return CQC_ECONNECT;
    uint64_t deadline = cqc__now_ns() + (uint64_t)c->opt.connect_timeout_ms * 1000000u;
    for (const struct addrinfo *a = list; a && c->fd < 0; a = a->ai_next)
        c->fd = try_addr(a, deadline);
    freeaddrinfo(list);
    c->in.len = c->in_at = 0;
    return c->fd >= 0 ? CQC_OK : CQC_ECONNECT;
}

void cqc__net_close(cqc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->in.len = c->in_at = 0;
}

cqc_status cqc__net_send(cqc_conn *c, const char *p, size_t n)
{
    uint64_t deadline = cqc__now_ns() + (uint64_t)c->opt.io_timeout_ms * 1000000u;
    while (n > 0) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            c->stats.bytes_out += (uint64_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = wait_fd(c->fd, POLLOUT, deadline);
            if (w <= 0)
                return w == 0 ? CQC_ETIMEOUT : CQC_EIO;
            continue;
        }
        return CQC_EIO;
    }
    return CQC_OK;
}

cqc_status cqc__net_fill(cqc_conn *c, uint64_t deadline)
{
    /* Unread bytes move to the front, so the buffer holds at most a frame
     * and a chunk. */
    if (c->in_at > 0) {
        memmove(c->in.p, c->in.p + c->in_at, c->in.len - c->in_at);
        c->in.len -= c->in_at;
        c->in_at = 0;
    }
    char *at = cqc__reserve(&c->in, RECV_CHUNK);
    if (!at)
        return CQC_ENOMEM;
    for (;;) {
        ssize_t k = recv(c->fd, at, RECV_CHUNK, 0);
        if (k > 0) {
            c->in.len += (size_t)k;
            c->stats.bytes_in += (uint64_t)k;
            return CQC_OK;
        }
        if (k == 0)
            return CQC_EIO;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return CQC_EIO;
        int w = wait_fd(c->fd, POLLIN, deadline);
        if (w <= 0)
            return w == 0 ? CQC_ETIMEOUT : CQC_EIO;
    }
}
