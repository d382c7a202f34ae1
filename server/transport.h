/// @file server/transport.h
/// The two listeners. Both feed cqd_handle; neither knows any endpoint.
#ifndef CQD_TRANSPORT_H
#define CQD_TRANSPORT_H

#include <uv.h>

#include "server.h"

typedef struct cqd_http cqd_http;
typedef struct cqd_stream cqd_stream;

/// Starts the HTTP listener on cfg.listen_host:listen_port (libmicrohttpd,
/// epoll, a pool of cfg.threads threads, the connection limit and timeout,
/// the body cap). *port receives the bound port. NULL on failure (logged).
cqd_http *cqd_http_start(cqd_server *srv, int *port);
/// Stops taking new connections: each is closed as soon as it is accepted
/// (the listen socket itself closes in cqd_http_stop); existing ones go on
/// being served until then.
void cqd_http_quiesce(cqd_http *h);
/// Waits for in-flight requests, closes everything and frees h.
void cqd_http_stop(cqd_http *h);

/// Starts the stream listener on loop at cfg.stream_host:stream_port;
/// handlers run on the loop's thread pool. *port receives the bound port.
/// NULL on failure (logged).
cqd_stream *cqd_stream_start(cqd_server *srv, uv_loop_t *loop, int *port);
/// Stops accepting; the lines already read are answered, then each
/// connection is closed. done(arg) runs on the loop once every connection
/// has closed, after which the stream may be freed with cqd_stream_free.
void cqd_stream_drain(cqd_stream *s, void (*done)(void *arg), void *arg);
void cqd_stream_free(cqd_stream *s);

#endif
