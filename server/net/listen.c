/// @file server/net/listen.c
/// Opening a listening socket, each failure logged with the address tried
/// and errno's text.
#include "listen.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/// "HOST:PORT" of a socket address, numeric, an IPv6 host in brackets.
static void format_addr(const struct sockaddr *sa, socklen_t len, char *out, size_t size)
{
    char host[INET6_ADDRSTRLEN], port[8];
    if (getnameinfo(sa, len, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(out, size, "(unknown address)");
        return;
    }
    snprintf(out, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/// Why a bind failed, with what usually helps (the most common reason a
/// first-time setup fails is a port below 1024 without privileges).
static void log_failure(const cqd_logger *log, const char *what, const char *addr, int err)
{
    const char *hint = err == EACCES ? " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" : "";
    cqd_log(log, CQD_LOG_ERROR, "cannot listen on %s (%s): %s%s", addr, what, strerror(err), hint);
}

/// socket, options, bind, listen on ai; 0 or the errno of the step that failed.
static int bind_listen(const struct addrinfo *ai, int *fd)
{
    *fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return errno;
    int on = 1, off = 0;
    // SO_REUSEADDR: a restart binds at once despite the old connections in
    // TIME_WAIT. Dual stack: "[::]" takes IPv4 clients too, whatever the
    // system's default, as the container's health check expects.
    int rc = setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (rc == 0 && ai->ai_family == AF_INET6)
        rc = setsockopt(*fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    if (rc == 0)
        rc = bind(*fd, ai->ai_addr, ai->ai_addrlen);
    if (rc == 0)
        rc = listen(*fd, SOMAXCONN);
    if (rc == 0)
        return 0;
    int err = errno;
    close(*fd);
    *fd = -1;
    return err;
}

/// The bound address and port of s->fd into s.
static int read_bound(cqd_listen_sock *s)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(s->fd, (struct sockaddr *)&ss, &len) != 0)
        return errno;
    s->ipv6 = ss.ss_family == AF_INET6;
    s->port = ntohs(s->ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    format_addr((struct sockaddr *)&ss, len, s->addr, sizeof s->addr);
    return 0;
}

int cqd_listen_open(const cqd_logger *log, const char *what, const char *host, int port, cqd_listen_sock *s)
{
    *s = (cqd_listen_sock){.fd = -1};
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0 || !res) {
        cqd_log(log, CQD_LOG_ERROR, "cannot listen on %s:%d (%s): the host does not resolve: %s", host, port, what,
                rc != 0 ? gai_strerror(rc) : "no address");
        return -1;
    }
    char tried[sizeof s->addr];
    format_addr(res->ai_addr, res->ai_addrlen, tried, sizeof tried);
    int err = bind_listen(res, &s->fd);
    freeaddrinfo(res);
    if (err == 0 && (err = read_bound(s)) != 0) {
        close(s->fd);
        s->fd = -1;
    }
    if (err != 0) {
        log_failure(log, what, tried, err);
        return -1;
    }
    return 0;
}
