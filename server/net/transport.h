/// @file server/net/transport.h
/// The two listeners. Both feed cqd_handle; neither knows any endpoint.
#ifndef CQD_TRANSPORT_H
#define CQD_TRANSPORT_H

#include <uv.h>

#include "listen.h"
#include "work.h"
#include "state/server.h"

typedef struct cqd_http cqd_http;
typedef struct cqd_stream cqd_stream;

/// Starts the HTTP listener on sock (listen.h; libmicrohttpd, epoll, a
/// pool of cfg.threads connection threads, the connection limit and
/// timeout, the body cap), running its handlers on pool (work.h; shared
/// with the stream, the caller's to free; NULL: inline). sock->fd stays
/// the caller's: the listener keeps a copy of it. NULL on failure (logged).
cqd_http *cqd_http_start(cqd_server *srv, const cqd_listen_sock *sock, cqd_work *pool);
/// Stops taking new connections: each is closed as soon as it is accepted
/// (the listen socket itself closes in cqd_http_stop); existing ones go on
/// being served until then.
void cqd_http_quiesce(cqd_http *h);
/// Drains the handler pool (after the stream's drain: no stream request
/// is left in it), waits a few seconds for in-flight answers to be sent,
/// closes everything and frees h.
void cqd_http_stop(cqd_http *h);

/// Starts the stream listener on loop with the listening socket fd
/// (listen.h), which it takes over whatever happens: the stream closes it
/// when it drains, or at once on failure. Handlers run on pool (work.h,
/// HTTP's too; NULL: on the loop), which the stream never drains. NULL on
/// failure (logged).
cqd_stream *cqd_stream_start(cqd_server *srv, uv_loop_t *loop, int fd, cqd_work *pool);
/// Stops accepting; the lines already read are answered, then each
/// connection is closed. done(arg) runs on the loop once every connection
/// has closed, after which the stream may be freed with cqd_stream_free.
void cqd_stream_drain(cqd_stream *s, void (*done)(void *arg), void *arg);
void cqd_stream_free(cqd_stream *s);

#endif
