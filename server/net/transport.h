/// @file server/net/transport.h
/// The two listeners. Both feed cqd_handle; neither knows any endpoint.
#ifndef CQD_TRANSPORT_H
#define CQD_TRANSPORT_H

#include <uv.h>

#include "listen.h"
#include "state/server.h"

typedef struct cqd_http cqd_http;
typedef struct cqd_stream cqd_stream;

/// Starts the HTTP listener on sock (listen.h; libmicrohttpd, epoll, a
/// pool of cfg.threads connection threads, a handler pool of up to
/// cqd_config_workers threads, the connection limit and timeout, the body
/// cap). sock->fd stays the caller's: the listener keeps a copy of it.
/// NULL on failure (logged).
cqd_http *cqd_http_start(cqd_server *srv, const cqd_listen_sock *sock);
/// Stops taking new connections: each is closed as soon as it is accepted
/// (the listen socket itself closes in cqd_http_stop); existing ones go on
/// being served until then.
void cqd_http_quiesce(cqd_http *h);
/// Runs the requests the handler pool holds, waits a few seconds for
/// in-flight answers to be sent, closes everything and frees h.
void cqd_http_stop(cqd_http *h);

/// Starts the stream listener on loop with the listening socket fd
/// (listen.h), which it takes over whatever happens: the stream closes it
/// when it drains, or at once on failure. Handlers run on a handler pool
/// of its own (work.h) of cqd_config_workers + 1 threads. NULL on failure
/// (logged).
cqd_stream *cqd_stream_start(cqd_server *srv, uv_loop_t *loop, int fd);
/// Stops accepting; the lines already read are answered, then each
/// connection is closed. done(arg) runs on the loop once every connection
/// has closed, after which the stream may be freed with cqd_stream_free.
void cqd_stream_drain(cqd_stream *s, void (*done)(void *arg), void *arg);
void cqd_stream_free(cqd_stream *s);

#endif
