/// @file server/http.c
/// The HTTP listener: libmicrohttpd with an internal pool of epoll threads.
/// Each request is answered by cqd_handle; this file only moves bytes.
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
#include <unistd.h>

#include <microhttpd.h>

#include "http_framing.h"
#include "media.h"
#include "refuse.h"
#include "request.h"
#include "router.h"
#include "transport.h"

struct cqd_http {
    cqd_server *srv;
    struct MHD_Daemon *daemon;
    atomic_bool closing; ///< draining: every new connection is closed at once
    char admitted; ///< its address marks a request without query or body that is in flight
};

/// One request's state, kept in MHD's per-request pointer. Requests without
/// a query string or a body never allocate one: their pointer is set to the
/// cqd_http itself once their headers were seen, then to &http->admitted
/// while they run and their answer is sent.
typedef struct http_req {
    bool started;      ///< the access handler saw the headers
    bool too_large;    ///< the body passed --max-body: the rest is discarded
    bool shed;         ///< the body passed --max-buffered: the rest is discarded
    bool admitted;     ///< in flight (admit.h) from the whole request's arrival until on_completed
    size_t reserved;   ///< body bytes reserved with admission control until on_completed
    bool body_inline;  ///< body points into mem (the length was declared)
    const char *query; ///< the raw query string in mem, or NULL
    char *body;
    size_t len, cap;
    char mem[];        ///< the query's text, then an inline body
} http_req;

/// Chunked bodies start with this much room and double.
#define FIRST_CHUNK_CAP 4096

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
    http_req *r = calloc(1, sizeof *r + n + 1);
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
        cqd_admit_release(&h->srv->admit, r->reserved);
        if (r->admitted)
            cqd_admit_leave(&h->srv->admit);
        if (!r->body_inline)
            free(r->body);
        free(r);
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

/// Hands the response to MHD: the body buffer is given away, not copied.
static enum MHD_Result send_response(struct MHD_Connection *conn, cqd_response *resp)
{
    struct MHD_Response *m;
    if (resp->body.len) {
        m = MHD_create_response_from_buffer(resp->body.len, resp->body.data, MHD_RESPMEM_MUST_FREE);
        if (m)
            resp->body = (cqp_buf){0};
    } else {
        m = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    cqd_response_free(resp);
    if (!m)
        return MHD_NO;
    enum MHD_Result ok = MHD_YES;
    if (resp->status != 204 && resp->content_type)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    ok &= MHD_add_response_header(m, "X-Request-Id", resp->request_id);
    if (resp->allow[0])
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_ALLOW, resp->allow);
    if (resp->retry_after > 0) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", resp->retry_after);
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    if (resp->status == 401)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    // A cache must not hand a JSON answer to a client that asked for MessagePack.
    if (resp->negotiated)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT);
    for (const char *const *h = resp->headers; h && h[0]; h += 2)
        ok &= MHD_add_response_header(m, h[0], h[1]);
    if (ok)
        ok = MHD_queue_response(conn, (unsigned)resp->status, m);
    MHD_destroy_response(m);
    return ok;
}

/// The value of header name, or NULL.
static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/// The request as the pipeline takes it, arrived at `arrived`
/// (cqd_mono_ns); its body is read in the format its Content-Type names,
/// and every answer to it, refusals included, is written in the format its
/// Accept asks for.
static void request_of(struct MHD_Connection *conn, const char *url, const char *method, const http_req *r,
                       uint64_t arrived, cqd_request *req)
{
    *req = (cqd_request){
        .transport = "http",
        .method = method,
        .path = url,
        .query = r ? r->query : NULL,
        .authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .request_id = header(conn, "X-Request-Id"),
        .body = r && r->len ? r->body : NULL,
        .body_len = r ? r->len : 0,
        .body_format = cqd_media_body_format(header(conn, MHD_HTTP_HEADER_CONTENT_TYPE)),
        .accept = cqd_media_accept(header(conn, MHD_HTTP_HEADER_ACCEPT)),
        .allow_pretty = true,
        .arrived_ns = arrived,
    };
}

static enum MHD_Result respond(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                               const http_req *r, uint64_t arrived)
{
    cqd_request req;
    request_of(conn, url, method, r, arrived, &req);
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(h->srv, &req, &resp);
    return send_response(conn, &resp);
}

/// Answers a request that is not run: the body, if any, is left unread.
static enum MHD_Result refuse(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                              cqp_problem_kind kind, const char *detail)
{
    cqd_request req;
    request_of(conn, url, method, NULL, cqd_mono_ns(), &req);
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_refuse(h->srv, &req, kind, detail, &resp);
    return send_response(conn, &resp);
}

static enum MHD_Result refuse_too_large(cqd_http *h, struct MHD_Connection *conn, const char *url,
                                        const char *method, const char *what)
{
    char detail[160];
    snprintf(detail, sizeof detail, "%s is over the limit of %zu bytes (--max-body)", what, h->srv->cfg.max_body);
    return refuse(h, conn, url, method, CQP_P_TOO_LARGE, detail);
}

static enum MHD_Result refuse_busy(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method)
{
    return refuse(h, conn, url, method, CQP_P_BUSY,
                  "too many requests or request bytes in flight (--max-inflight, --max-buffered); retry shortly");
}

/// The declared Content-Length, or -1 when there is none (MHD has already
/// rejected a malformed one).
static long long declared_length(struct MHD_Connection *conn)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!v)
        return -1;
    unsigned long long n = strtoull(v, NULL, 10);
    return n > (unsigned long long)INT64_MAX ? INT64_MAX : (long long)n;
}

/// First call: the headers are in, no body yet. Answers at once when the
/// body is declared too large or its bytes would pass --max-buffered; else
/// reserves them and sets up the buffer for the body, if any.
static enum MHD_Result on_headers(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                  void **con_cls)
{
    http_req *r = *con_cls;
    char why[160];
    if (cqd_http_head_fault(conn, why, sizeof why))
        return refuse(h, conn, url, method, CQP_P_BAD_VALUE, why);
    long long declared = declared_length(conn);
    bool chunked = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
    if (declared > (long long)h->srv->cfg.max_body) {
        char what[64];
        snprintf(what, sizeof what, "a body of %lld bytes", declared);
        return refuse_too_large(h, conn, url, method, what);
    }
    // A chunked body reserves its bytes as it grows (on_data).
    size_t inline_len = chunked || declared <= 0 ? 0 : (size_t)declared;
    if (!cqd_admit_reserve(&h->srv->admit, inline_len))
        return refuse_busy(h, conn, url, method);
    if (!chunked && declared <= 0) {
        // Answering before MHD has the whole request would cost the
        // keep-alive: mark the request started and answer on the next call.
        if (r)
            r->started = true;
        else
            *con_cls = h;
        return MHD_YES;
    }
    size_t qlen = r && r->query ? strlen(r->query) + 1 : 0;
    http_req *grown = realloc(r, sizeof *r + qlen + inline_len);
    if (!grown) {
        cqd_admit_release(&h->srv->admit, inline_len);
        return MHD_NO; // out of memory: drop the connection (on_completed frees r)
    }
    if (!r)
        memset(grown, 0, sizeof *grown);
    r = grown;
    *con_cls = r;
    r->query = qlen ? r->mem : NULL;
    r->started = true;
    r->reserved = inline_len;
    if (!chunked) {
        r->body_inline = true;
        r->body = r->mem + qlen;
        r->cap = inline_len;
    }
    return MHD_YES;
}

/// Forgets the body received so far; the rest of it will be discarded.
static void drop_body(http_req *r)
{
    if (!r->body_inline)
        free(r->body);
    r->body = NULL;
    r->body_inline = false;
    r->len = r->cap = 0;
}

/// Appends a piece of the body; past --max-body or --max-buffered, drops
/// the buffer and notes why.
static enum MHD_Result on_data(cqd_http *h, http_req *r, const char *data, size_t n)
{
    if (r->too_large || r->shed)
        return MHD_YES;
    if (n > h->srv->cfg.max_body - r->len) {
        r->too_large = true;
        drop_body(r);
        return MHD_YES;
    }
    if (r->len + n > r->cap) {
        if (r->body_inline)
            return MHD_NO; // more than the declared length: MHD's framing prevents it
        size_t cap = r->cap ? r->cap : FIRST_CHUNK_CAP;
        while (cap < r->len + n)
            cap *= 2;
        if (cap > h->srv->cfg.max_body)
            cap = h->srv->cfg.max_body;
        if (cap > r->reserved) {
            if (!cqd_admit_reserve(&h->srv->admit, cap - r->reserved)) {
                r->shed = true;
                drop_body(r);
                return MHD_YES;
            }
            r->reserved = cap;
        }
        char *body = realloc(r->body, cap);
        if (!body)
            return MHD_NO;
        r->body = body;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    return MHD_YES;
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
            return refuse_busy(h, conn, url, method);
        if (r)
            r->admitted = true;
        else
            *con_cls = &h->admitted;
    }
    return respond(h, conn, url, method, r, arrived);
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
    if (!r || !r->started)
        return on_headers(h, conn, url, method, con_cls);
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return on_data(h, r, upload_data, n);
    }
    if (r->too_large)
        return refuse_too_large(h, conn, url, method, "the body");
    if (r->shed)
        return refuse_busy(h, conn, url, method);
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

cqd_http *cqd_http_start(cqd_server *srv, const cqd_listen_sock *sock)
{
    const cqd_config *cfg = &srv->cfg;
    cqd_http *h = calloc(1, sizeof *h);
    // libmicrohttpd 0.9.75 closes a given socket on some failures and not on
    // others: it gets a copy, which it owns once started and close_copy
    // closes if it failed; the caller's socket is always the caller's.
    int fd = h ? fcntl(sock->fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (fd < 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "http: %s", h ? strerror(errno) : "out of memory");
        free(h);
        return NULL;
    }
    h->srv = srv;
    atomic_init(&h->closing, false);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (sock->ipv6 ? MHD_USE_IPv6 : 0u);
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
        free(h);
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

void cqd_http_stop(cqd_http *h)
{
    MHD_stop_daemon(h->daemon);
    free(h);
}
