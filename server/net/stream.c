/// @file server/net/stream.c
/// The stream listener (API.md section 11: JSON lines or MessagePack
/// frames, by each connection's first byte): listens on the socket
/// main opened (listen.h), accepts (connections live in stream_conn.c),
/// hands the batches' answers back to the loop, and drains.
#include <stdlib.h>
#include <unistd.h>

#include "stream_internal.h"
#include "state/alloc.h"

static void on_connection(uv_stream_t *listener, int status)
{
    cqd_stream *s = listener->data;
    if (status < 0) {
        cqd_log(&s->srv->log, CQD_LOG_WARN, "stream: accept failed: %s", uv_strerror(status));
        return;
    }
    cqd_conn_accept(s);
}

/// The last of s's handles to close frees s (a stream that failed to start).
static void free_on_close(uv_handle_t *h)
{
    cqd_stream *s = h->data;
    if (--s->handles > 0)
        return;
    pthread_mutex_destroy(&s->lock);
    cqd_free(s);
}

/// The loop's wake-up for the batches the pool has run.
static int start_answers(cqd_stream *s)
{
    int rc = uv_async_init(s->loop, &s->answered, cqd_conn_answered);
    if (rc != 0)
        return rc;
    s->answered.data = s;
    s->answered_open = true;
    s->handles++;
    return 0;
}

/// Opens, binds and listens; also starts the wake-up. 0 or a libuv error.
static int listen_on(cqd_stream *s, int fd)
{
    int rc = uv_tcp_open(&s->listener, fd);
    if (rc != 0) {
        close(fd); // not the handle's yet
        return rc;
    }
    rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection);
    return rc != 0 ? rc : start_answers(s);
}

cqd_stream *cqd_stream_start(cqd_server *srv, uv_loop_t *loop, int fd, cqd_work *pool)
{
    cqd_stream *s = cqd_calloc(1, sizeof *s);
    int rc = s ? uv_tcp_init(loop, &s->listener) : UV_ENOMEM;
    if (rc != 0) {
        close(fd);
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: %s", uv_strerror(rc));
        cqd_free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->srv = srv;
    s->loop = loop;
    s->pool = pool;
    s->listener.data = s;
    s->listener_open = true;
    s->handles = 1;
    rc = listen_on(s, fd);
    if (rc != 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "stream: cannot listen: %s", uv_strerror(rc));
        // The handles are registered with the loop: s is freed by their close callbacks.
        uv_close((uv_handle_t *)&s->listener, free_on_close);
        if (s->answered_open)
            uv_close((uv_handle_t *)&s->answered, free_on_close);
        return NULL;
    }
    return s;
}

static void on_answered_closed(uv_handle_t *h)
{
    cqd_stream *s = h->data;
    s->answered_open = false;
    cqd_stream_conn_gone(s);
}

void cqd_stream_conn_gone(cqd_stream *s)
{
    if (!s->draining || s->conns > 0 || s->listener_open || !s->done)
        return;
    if (s->answered_open) {
        // No batch runs (each holds its connection): nothing is left to hand back.
        if (!uv_is_closing((uv_handle_t *)&s->answered))
            uv_close((uv_handle_t *)&s->answered, on_answered_closed);
        return;
    }
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

void cqd_stream_free(cqd_stream *s)
{
    pthread_mutex_destroy(&s->lock);
    cqd_free(s);
}
