/// @file server/replay/http_client.h
/// A small blocking HTTP/1.1 client for `collisiond replay`: one keep-alive
/// connection, one request at a time, Content-Length or chunked responses.
/// The parsing and formatting functions are pure, for the unit tests.
#ifndef CQD_HTTP_CLIENT_H
#define CQD_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "cqp/write.h"

/// Longest response head (status line and headers) accepted.
#define CQD_HC_HEAD_MAX 65536

/// What a response head says about the response.
typedef struct cqd_hc_head {
    int status;
    long long content_length; ///< -1 when absent
    bool chunked;             ///< Transfer-Encoding: chunked
    bool close;               ///< the server closes after it (Connection: close, or HTTP/1.0 without keep-alive)
    size_t size;              ///< bytes of the head, the blank line included
} cqd_hc_head;

/// Parses the head at the start of buf. Returns 1 (complete: *h filled),
/// 0 (the blank line has not arrived yet), or -1 (not an HTTP/1.x
/// response head, or longer than CQD_HC_HEAD_MAX).
int cqd_hc_parse_head(const char *buf, size_t len, cqd_hc_head *h);

/// Decodes a chunked body at the start of buf into out (reset first).
/// Returns 1 (complete: *used is the bytes it took, trailers included),
/// 0 (more is needed), or -1 (malformed).
int cqd_hc_dechunk(const char *buf, size_t len, cqp_buf *out, size_t *used);

/// Splits "http://HOST[:PORT][/]" (HOST may be [IPv6]; PORT defaults to
/// 80). Returns 0, or -1 when url has another form or a part is too long.
int cqd_hc_parse_url(const char *url, char *host, size_t host_size, char *port, size_t port_size);

/// One request to send. query is NULL for none; authorization,
/// content_type and accept are whole header values or NULL for none.
typedef struct cqd_hc_request {
    const char *method, *path, *query, *request_id, *authorization;
    const char *content_type, *accept;
    const char *body;
    size_t body_len;
} cqd_hc_request;

/// True when method is an RFC 9110 token, as a request line needs (never
/// empty, no blank or control character).
bool cqd_hc_is_token(const char *method);

/// Appends the request as it goes on the wire: the path percent-encoded
/// (the server decodes it back), bytes of the query that cannot stand in a
/// request line encoded, then Host, Content-Length (always), Connection:
/// keep-alive, X-Request-Id (when non-empty), Authorization, Content-Type,
/// Accept (each when set) and the body. Returns 0, or -1 with nothing
/// appended when the method is not an RFC 9110 token or a header value
/// holds a control character (a CR or LF would start a header of its own).
int cqd_hc_format_request(cqp_buf *out, const char *host_header, const cqd_hc_request *rq);

/// A connection to one server (reconnected when the server closed it).
typedef struct cqd_hc {
    int fd;                 ///< -1 when not connected
    bool reused;            ///< the connection has carried a response already
    char host[256], port[16];
    char host_header[300];  ///< HOST:PORT as in the URL
    int timeout_s;          ///< for each send and receive
    cqp_buf in;             ///< received bytes not consumed yet
    cqp_buf out;            ///< the request being sent
} cqd_hc;

/// Sets c up for url (nothing is connected yet). Returns 0, or -1 with why in err.
int cqd_hc_init(cqd_hc *c, const char *url, int timeout_s, char *err, size_t err_size);

/// Sends rq and reads its response: the status and the decoded body (reset
/// first; empty for HEAD, 1xx, 204 and 304). A request whose reused
/// connection turns out closed before any answer is sent once more on a
/// new one. Returns 0, or -1 with why in err.
int cqd_hc_exchange(cqd_hc *c, const cqd_hc_request *rq, int *status, cqp_buf *body, char *err, size_t err_size);

/// Closes the connection and frees the buffers.
void cqd_hc_free(cqd_hc *c);

#endif
