/// @file server/stream.c
/// The JSON-lines stream listener (API.md section 4): binds, accepts
/// (connections live in stream_conn.c) and drains.
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

static void on_connection(uv_stream_t *listener, int status)
{
    cqd_stream *s = listener->data;
    if (status < 0) {
        cqd_log(&s->srv->log, CQD_LOG_WARN, "stream: accept failed: %s", uv_strerror(status));
        return;
    }
    cqd_conn_accept(s);
}

static void free_on_close(uv_handle_t *h) { free(h->data); }

// The port the listener is bound to.
static int bound_port(uv_tcp_t *t, int *port)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    int rc = uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len);
    if (rc != 0)
        return rc;
    if (ss.ss_family == AF_INET6)
        *port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        *port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

cqd_stream *cqd_stream_start(cqd_server *srv, uv_loop_t *loop, int *port)
{
    const cqd_config *cfg = &srv->cfg;
    cqd_stream *s = calloc(1, sizeof *s);
    if (!s) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: out of memory");
        return NULL;
    }
    s->srv = srv;
    s->loop = loop;

    // Numeric hosts and names ("localhost") alike; synchronous at start-up.
    char service[16];
    snprintf(service, sizeof service, "%d", cfg->stream_port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    uv_getaddrinfo_t gai;
    int rc = uv_getaddrinfo(loop, &gai, NULL, cfg->stream_host, service, &hints);
    if (rc != 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: cannot resolve %s: %s", cfg->stream_host, uv_strerror(rc));
        free(s);
        return NULL;
    }
    rc = uv_tcp_init(loop, &s->listener);
    if (rc != 0) {
        uv_freeaddrinfo(gai.addrinfo);
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: %s", uv_strerror(rc));
        free(s);
        return NULL;
    }
    s->listener.data = s;
    s->listener_open = true;
    rc = uv_tcp_bind(&s->listener, gai.addrinfo->ai_addr, 0);
    uv_freeaddrinfo(gai.addrinfo);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection);
    if (rc == 0)
        rc = bound_port(&s->listener, port);
    if (rc != 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: cannot listen on %s:%d: %s", cfg->stream_host, cfg->stream_port,
                uv_strerror(rc));
        // The handle is registered with the loop: s is freed by its close callback.
        uv_close((uv_handle_t *)&s->listener, free_on_close);
        return NULL;
    }
    return s;
}

void cqd_stream_conn_gone(cqd_stream *s)
{
    if (!s->draining || s->conns > 0 || s->listener_open || !s->done)
        return;
    void (*done)(void *) = s->done;
    s->done = NULL;
    done(s->done_arg);
}

static void on_listener_closed(uv_handle_t *h)
{
    cqd_stream *s = h->data;
    s->listener_open = false;
    cqd_stream_conn_gone(s);
}

void cqd_stream_drain(cqd_stream *s, void (*done)(void *arg), void *arg)
{
    if (s->draining)
        return;
    s->draining = true;
    s->done = done;
    s->done_arg = arg;
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
    for (cqd_conn *c = s->first; c; c = cqd_conn_next(c))
        cqd_conn_drain(c);
}

void cqd_stream_free(cqd_stream *s) { free(s); }
