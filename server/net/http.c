/// @file server/net/http.c
/// The HTTP listener: libmicrohttpd with an internal pool of epoll threads
/// that only move bytes; the handlers run on the handler pool
/// (http_work.c), a request's head and body are taken in http_body.c.
/// Body cap: a declared Content-Length over --max-body is refused before a
/// byte of the body is read; a chunked body is buffered only up to the cap,
/// the rest is discarded and the request answered 413.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api/router.h"
#include "http_internal.h"
#include "state/alloc.h"
#include "transport.h"

/// MHD's accept policy: while draining, a new connection is closed as soon
/// as it is accepted (see cqd_http_quiesce).
static enum MHD_Result on_connect(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    cqd_http *h = cls;
    return atomic_load_explicit(&h->closing, memory_order_acquire) ? MHD_NO : MHD_YES;
}

/// Called with the raw URI before it is parsed: keeps the query string,
/// which MHD would otherwise only hand out decoded and split, and then
/// empties it in MHD's buffer. libmicrohttpd 0.9.75 calls this before it
/// splits the query into its connection pool (parse_initial_message_line),
/// one record per parameter: 3,000 of them filled the 16 KiB pool, and
/// the 431 it then meant to send found no room and was never sent. Nothing
/// here reads MHD's copy of the parameters.
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    char *q = uri ? strchr(uri, '?') : NULL; // uri points into MHD's writable read buffer
    if (!q)
        return NULL;
    size_t n = strlen(q + 1);
    http_req *r = cqd_calloc(1, sizeof *r + n + 1);
    if (r) { // else the query is lost, not the request
        memcpy(r->mem, q + 1, n + 1);
        r->query = r->mem;
    }
    q[1] = '\0';
    return r;
}

/// The path decoded as on the stream (router.h), in place of MHD's own
/// decoding, which cut the path at a %00 and split a segment at a %2F.
static size_t on_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    return cqd_path_unescape(s);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    (void)toe;
    cqd_http *h = cls;
    http_req *r = *con_cls;
    if (*con_cls == &h->admitted) {
        cqd_admit_leave(&h->srv->admit);
    } else if (r && *con_cls != cls) {
        cqd_http_body_free(h, r);
        if (r->admitted)
            cqd_admit_leave(&h->srv->admit);
        cqd_http_unhold(h->srv, &r->resp); // an answer the pool left that was never sent
        cqd_response_free(&r->resp);
        cqd_free(r);
    }
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const cqd_http *h = cls;
    if (!cqd_log_enabled(&h->srv->log, CQD_LOG_WARN))
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    cqd_log(&h->srv->log, CQD_LOG_WARN, "http: %s", msg);
}

/// The whole request is in: it runs if admission control lets it in (the
/// health probes always do). r is NULL for a request without query or body.
/// Its clock starts here: MHD makes this last call in the same pass as it
/// parsed the request's end (its last body byte, or for a request without
/// a body the end of its headers, right after the call that saw them).
static enum MHD_Result admit(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                             http_req *r, void **con_cls)
{
    uint64_t arrived = cqd_mono_ns();
    if (!cqd_route_always_admitted(method, url)) {
        if (!cqd_admit_enter(&h->srv->admit))
            return cqd_http_refuse_busy(h, conn, url, method);
        if (r)
            r->admitted = true;
        else
            *con_cls = &h->admitted;
    }
    return cqd_http_run(h, conn, url, method, r, con_cls, arrived);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    (void)version;
    cqd_http *h = cls;
    if (*con_cls == h) // started, no body and no query
        return admit(h, conn, url, method, NULL, con_cls);
    http_req *r = *con_cls;
    if (r && r->queued) // resumed: the pool left its answer
        return r->done ? cqd_http_send_done(conn, r) : MHD_YES;
    if (!r || !r->started)
        return cqd_http_on_headers(h, conn, url, method, con_cls);
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return cqd_http_on_data(h, r, upload_data, n);
    }
    if (r->too_large)
        return cqd_http_refuse_too_large(h, conn, url, method, "the body");
    if (r->shed)
        return cqd_http_refuse_busy(h, conn, url, method);
    return admit(h, conn, url, method, r, con_cls);
}

/// After MHD_start_daemon failed: closes fd, our copy of the socket orig,
/// unless MHD already did. libmicrohttpd 0.9.75 closes a given listen
/// socket on some failures (mutex, thread start) and not on others
/// (options, ITC, epoll set-up), and says nothing of which it was. fd
/// still names orig's socket only if it is still ours: a number MHD
/// closed and something else reopened names another file, left alone.
static void close_copy(int fd, int orig)
{
    struct stat a, b;
    if (fstat(fd, &a) == 0 && fstat(orig, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        close(fd);
}

cqd_http *cqd_http_start(cqd_server *srv, const cqd_listen_sock *sock, cqd_work *pool)
{
    const cqd_config *cfg = &srv->cfg;
    cqd_http *h = cqd_calloc(1, sizeof *h);
    // libmicrohttpd 0.9.75 closes a given socket on some failures and not on
    // others: it gets a copy, which it owns once started and close_copy
    // closes if it failed; the caller's socket is always the caller's.
    int fd = h ? fcntl(sock->fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (fd < 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "http: %s", h ? strerror(errno) : "out of memory");
        cqd_free(h);
        return NULL;
    }
    h->srv = srv;
    atomic_init(&h->closing, false);
    // Without a pool (out of memory) every request runs inline, as before there was one.
    h->pool = pool;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME | (sock->ipv6 ? MHD_USE_IPv6 : 0u);
    // A pool of one thread is no pool (MHD warns about one): then the option is left out.
    struct MHD_OptionItem numbers[] = {
        {MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip, NULL},
        // MHD zeroes each connection's pool per request: 16 KiB holds any
        // sane request head (bodies live in our own buffer) and halves the
        // default's cost.
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 16384, NULL},
        {cfg->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, cfg->threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    h->daemon = MHD_start_daemon(flags, 0, on_connect, h, on_access, h,
                                 MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h, // first, to catch every message
                                 MHD_OPTION_ARRAY, numbers,
                                 MHD_OPTION_LISTEN_SOCKET, fd,
                                 MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
                                 MHD_OPTION_UNESCAPE_CALLBACK, on_unescape, h,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        close_copy(fd, sock->fd);
        cqd_log(&srv->log, CQD_LOG_ERROR, "http: cannot start on %s", sock->addr);
        cqd_free(h);
        return NULL;
    }
    return h;
}

/// Not MHD_quiesce_daemon: with epoll worker threads (libmicrohttpd 0.9.75)
/// it removes the listen socket from each worker's epoll set while the
/// worker, seeing the quiesce flag, may remove it too, and the loser of that
/// race aborts the process ("Failed to remove listen FD from epoll set").
/// The accept policy refuses instead, with no shared state but one flag.
void cqd_http_quiesce(cqd_http *h) { atomic_store_explicit(&h->closing, true, memory_order_release); }

/// How long the stop waits for the answers of requests that have run.
#define SEND_GRACE_MS 5000

/// Waits, up to SEND_GRACE_MS, for every admitted request to be answered
/// (the stream has drained before: what is in flight is HTTP's).
static void await_answers(cqd_http *h)
{
    const struct timespec tick = {0, 10 * 1000000};
    for (int ms = 0; ms < SEND_GRACE_MS && atomic_load(&h->srv->admit.inflight) > 0; ms += 10)
        nanosleep(&tick, NULL);
}

/// MHD_stop_daemon aborts the process while a connection is suspended, so
/// the pool runs what it holds first: each job resumes its connection.
/// Until the daemon stops, a request that arrives meanwhile on a kept-alive
/// connection runs inline (the drained pool takes no job).
void cqd_http_stop(cqd_http *h)
{
    if (h->pool)
        cqd_work_drain(h->pool);
    await_answers(h);
    MHD_stop_daemon(h->daemon);
    cqd_free(h);
}
