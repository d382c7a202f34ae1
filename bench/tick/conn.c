/* A blocking loopback TCP connection and its receive buffer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "conn.h"

/* Bytes asked of each recv: a contacts answer at 100,000 boxes is about
 * half a megabyte, so a few calls take it. */
#define RECV_CHUNK (256 * 1024)

bool tk_connect(tk_conn *c, int port)
{
    *c = (tk_conn){.fd = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "cq-tick: cannot connect to 127.0.0.1:%d: %s\n", port, strerror(errno));
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        return false;
    }
    /* A request is written whole, so Nagle's wait would only delay its tail. */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return true;
}

void tk_close(tk_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    tk_buf_free(&c->in);
    *c = (tk_conn){.fd = -1};
}

bool tk_send(tk_conn *c, const void *p, size_t n)
{
    for (const char *at = p; n > 0;) {
        ssize_t k = send(c->fd, at, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "cq-tick: send: %s\n", k < 0 ? strerror(errno) : "closed");
            return false;
        }
        at += k;
        n -= (size_t)k;
    }
    return true;
}

bool tk_fill(tk_conn *c)
{
    if (c->start > 0 && c->start == c->in.len)
        c->in.len = c->start = 0;
    else if (c->start > RECV_CHUNK && c->start > c->in.len / 2) { /* drop what was consumed */
        memmove(c->in.p, c->in.p + c->start, c->in.len - c->start);
        c->in.len -= c->start;
        c->start = 0;
    }
    for (;;) {
        ssize_t k = recv(c->fd, tk_buf_reserve(&c->in, RECV_CHUNK), RECV_CHUNK, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "cq-tick: recv: %s\n", k < 0 ? strerror(errno) : "the server closed the connection");
            return false;
        }
        c->in.len += (size_t)k;
        return true;
    }
}

bool tk_need(tk_conn *c, size_t n)
{
    while (c->in.len - c->start < n)
        if (!tk_fill(c))
            return false;
    return true;
}
