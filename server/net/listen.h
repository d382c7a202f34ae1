/// @file server/net/listen.h
/// The listening sockets of both listeners, opened by the daemon itself
/// before either transport starts: a failure then names the address it
/// tried and the operating system's reason (libmicrohttpd only says that
/// binding failed, with the port it was given).
#ifndef CQD_LISTEN_H
#define CQD_LISTEN_H

#include <stdbool.h>

#include "ops/log.h"

/// A listening TCP socket and where it listens.
typedef struct cqd_listen_sock {
    int fd;         ///< non-blocking, close-on-exec; -1 when not open
    int port;       ///< the port bound (the kernel's choice for port 0)
    bool ipv6;      ///< an IPv6 socket (it takes IPv4 connections as well)
    char addr[64];  ///< "HOST:PORT" as bound, numeric, an IPv6 host in brackets
} cqd_listen_sock;

/// Resolves host, binds port on its first address and listens. Returns 0
/// with s filled (the caller owns s->fd), or -1 with s->fd = -1 after
/// logging "cannot listen on ADDR:PORT (what): REASON" (or that host does
/// not resolve). what names the listener ("http", "stream").
int cqd_listen_open(const cqd_logger *log, const char *what, const char *host, int port, cqd_listen_sock *s);

#endif
