/// @file server/replay/http_client.c
/// The replay's HTTP/1.1 connection (http_client.h): blocking sockets with
/// send and receive timeouts, one request in flight; the parsing and
/// formatting it relies on are in http_client_wire.c.
#include "http_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* ---- the connection ---------------------------------------------------- */

int cqd_hc_init(cqd_hc *c, const char *url, int timeout_s, char *err, size_t err_size)
{
    *c = (cqd_hc){.fd = -1, .timeout_s = timeout_s};
    if (cqd_hc_parse_url(url, c->host, sizeof c->host, c->port, sizeof c->port) < 0) {
        snprintf(err, err_size, "'%s' is not http://HOST:PORT", url);
        return -1;
    }
    const char *authority = url + 7;
    size_t n = strcspn(authority, "/");
    snprintf(c->host_header, sizeof c->host_header, "%.*s", (int)n, authority);
    return 0;
}

static void disconnect(cqd_hc *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->reused = false;
    cqp_buf_reset(&c->in);
}

void cqd_hc_free(cqd_hc *c)
{
    disconnect(c);
    cqp_buf_free(&c->in);
    cqp_buf_free(&c->out);
}

static int connect_to(cqd_hc *c, char *err, size_t err_size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(c->host, c->port, &hints, &res);
    if (rc != 0) {
        snprintf(err, err_size, "cannot resolve %s: %s", c->host, gai_strerror(rc));
        return -1;
    }
    int saved = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        struct timeval tv = {.tv_sec = c->timeout_s};
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            freeaddrinfo(res);
            c->fd = fd;
            c->reused = false;
            cqp_buf_reset(&c->in);
            return 0;
        }
        saved = errno;
        close(fd);
    }
    freeaddrinfo(res);
    snprintf(err, err_size, "cannot connect to %s: %s", c->host_header, strerror(saved));
    return -1;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/// Receives more bytes into c->in: the count, 0 at end of stream, -1 on error.
static ssize_t receive(cqd_hc *c)
{
    char chunk[65536];
    for (;;) {
        ssize_t k = recv(c->fd, chunk, sizeof chunk, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k > 0) {
            cqp_buf_append(&c->in, chunk, (size_t)k);
            if (c->in.oom)
                return errno = ENOMEM, -1;
        }
        return k;
    }
}

/// Drops the first n received bytes (what the response took).
static void consume(cqd_hc *c, size_t n)
{
    if (n == 0)
        return;
    memmove(c->in.data, c->in.data + n, c->in.len - n);
    c->in.len -= n;
    c->in.data[c->in.len] = '\0';
}

/// Reads one whole response off the connection. Returns 0, -1 with err,
/// or -2 when the connection ended before a single byte came back.
static int read_response(cqd_hc *c, bool head_request, int *status, cqp_buf *body, char *err, size_t err_size)
{
    cqd_hc_head h;
    for (;;) { // the head, skipping interim 1xx responses
        int rc = cqd_hc_parse_head(c->in.data ? c->in.data : "", c->in.len, &h);
        if (rc < 0) {
            snprintf(err, err_size, "the server's response head is malformed");
            return -1;
        }
        if (rc == 1 && h.status >= 200) {
            consume(c, h.size);
            break;
        }
        if (rc == 1) {
            consume(c, h.size);
            continue;
        }
        bool nothing_yet = c->in.len == 0;
        ssize_t k = receive(c);
        if (nothing_yet && (k == 0 || (k < 0 && errno == ECONNRESET)))
            return -2;
        if (k <= 0) {
            snprintf(err, err_size, "the connection %s in a response head",
                     k == 0 ? "closed" : strerror(errno));
            return -1;
        }
    }
    *status = h.status;
    cqp_buf_reset(body);
    bool no_body = head_request || h.status == 204 || h.status == 304;
    bool until_close = !no_body && !h.chunked && h.content_length < 0;
    for (;;) {
        size_t used = 0;
        int rc = 1;
        if (no_body) {
            used = 0;
        } else if (h.chunked) {
            rc = cqd_hc_dechunk(c->in.data ? c->in.data : "", c->in.len, body, &used);
        } else if (!until_close) {
            rc = c->in.len >= (unsigned long long)h.content_length;
            used = rc ? (size_t)h.content_length : 0;
        } else {
            rc = 0;
        }
        if (rc < 0) {
            snprintf(err, err_size, "the server's chunked body is malformed");
            return -1;
        }
        if (rc == 1) {
            if (!no_body && !h.chunked)
                cqp_buf_append(body, c->in.data, used);
            consume(c, used);
            break;
        }
        ssize_t k = receive(c);
        if (k == 0 && until_close) {
            cqp_buf_append(body, c->in.data ? c->in.data : "", c->in.len);
            c->in.len = 0;
            h.close = true;
            break;
        }
        if (k <= 0) {
            snprintf(err, err_size, "the connection %s in a response body", k == 0 ? "closed" : strerror(errno));
            return -1;
        }
    }
    if (body->oom) {
        snprintf(err, err_size, "out of memory reading a response");
        return -1;
    }
    if (h.close)
        disconnect(c);
    else
        c->reused = true;
    return 0;
}

int cqd_hc_exchange(cqd_hc *c, const cqd_hc_request *rq, int *status, cqp_buf *body, char *err, size_t err_size)
{
    cqp_buf_reset(&c->out);
    if (cqd_hc_format_request(&c->out, c->host_header, rq) < 0) {
        snprintf(err, err_size, "the request cannot be sent: its method is no token or a header value holds a "
                                "control character");
        return -1;
    }
    if (c->out.oom) {
        snprintf(err, err_size, "out of memory formatting a request");
        return -1;
    }
    bool head_request = strcmp(rq->method, "HEAD") == 0;
    for (int attempt = 0;; attempt++) {
        if (c->fd < 0 && connect_to(c, err, err_size) < 0)
            return -1;
        // A keep-alive connection the server closed meanwhile fails here
        // (or answers nothing): that request was never seen, send it anew.
        bool stale_ok = c->reused && attempt == 0;
        if (send_all(c->fd, c->out.data, c->out.len) < 0) {
            int e = errno;
            disconnect(c);
            if (stale_ok)
                continue;
            snprintf(err, err_size, "cannot send to %s: %s", c->host_header, strerror(e));
            return -1;
        }
        int rc = read_response(c, head_request, status, body, err, err_size);
        if (rc == -2) {
            disconnect(c);
            if (stale_ok)
                continue;
            snprintf(err, err_size, "%s closed the connection without answering", c->host_header);
            return -1;
        }
        if (rc < 0)
            disconnect(c);
        return rc;
    }
}
