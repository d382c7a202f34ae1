/// @file server/net/http_internal.h
/// What the HTTP listener's files share: http.c (libmicrohttpd's
/// callbacks), http_body.c (a request's head and body as they arrive) and
/// http_work.c (answers, inline or from the handler pool).
#ifndef CQD_HTTP_INTERNAL_H
#define CQD_HTTP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "api/request.h"
#include "state/server.h"
#include "transport.h"
#include "work.h"

struct cqd_http {
    cqd_server *srv;
    struct MHD_Daemon *daemon;
    cqd_work *pool;      ///< runs every request but the CQD_ROUTE_INLINE ones
    atomic_bool closing; ///< draining: every new connection is closed at once
    char admitted; ///< its address marks an inline request without query or body that is in flight
};

/// One request's state, kept in MHD's per-request pointer. Inline requests
/// without a query string or a body never allocate one: their pointer is
/// set to the cqd_http itself once their headers were seen, then to
/// &http->admitted while they run and their answer is sent.
typedef struct http_req {
    bool started;      ///< the access handler saw the headers
    bool too_large;    ///< the body passed --max-body: the rest is discarded
    bool shed;         ///< the body passed --max-buffered: the rest is discarded
    bool admitted;     ///< in flight (admit.h) from the whole request's arrival until on_completed
    bool queued;       ///< handed to the pool: the connection is suspended until done
    bool done;         ///< the pool ran it: resp holds the answer (set before the resume, read after it)
    bool body_inline;  ///< body points into mem (a small declared length)
    size_t reserved;   ///< body bytes reserved with admission control until on_completed
    size_t limit;      ///< the body's most bytes: its declared length, or --max-body
    size_t got;        ///< body bytes received so far, kept or not (the rate's count)
    uint64_t head_ns;  ///< when the head was in: the body rate's clock
    const char *query; ///< the raw query string in mem, or NULL
    char *body;
    size_t len, cap;
    cqd_job job;       ///< the pool's hold on it (queued only)
    struct MHD_Connection *conn;
    struct cqd_http *http;
    cqd_request req;   ///< what the pool runs (its strings: MHD's, this struct's)
    cqd_response resp;
    char mem[];        ///< the query's text, then an inline body
} http_req;

/// Counts resp's body in srv->http_reply_bytes (--max-http-reply-total)
/// from the moment it is made until MHD frees it once sent.
void cqd_http_hold(cqd_server *srv, const cqd_response *resp);
/// Gives back what cqd_http_hold counted, for an answer never handed to MHD.
void cqd_http_unhold(cqd_server *srv, const cqd_response *resp);

/// A request's first call: the head is in. Refuses at once (400 framing,
/// 401 without the token, 413, 503) or sets up the body's buffer.
enum MHD_Result cqd_http_on_headers(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                    void **con_cls);
/// Takes n bytes of r's body; MHD_NO (the connection is closed) when the
/// body arrives slower than --min-body-rate allows.
enum MHD_Result cqd_http_on_data(cqd_http *h, http_req *r, const char *data, size_t n);
/// Frees r's body and gives back its reservation.
void cqd_http_body_free(cqd_http *h, http_req *r);

/// Runs a whole request: inline (CQD_ROUTE_INLINE routes) or on the pool,
/// suspending the connection until its answer is ready. r is NULL for a
/// request without query or body; *con_cls may be replaced.
enum MHD_Result cqd_http_run(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                             http_req *r, void **con_cls, uint64_t arrived);
/// Queues the answer the pool left in r (after the resume).
enum MHD_Result cqd_http_send_done(struct MHD_Connection *conn, http_req *r);

/// Answers a request that is not run: the body, if any, is left unread.
enum MHD_Result cqd_http_refuse(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                cqp_problem_kind kind, const char *detail);
enum MHD_Result cqd_http_refuse_too_large(cqd_http *h, struct MHD_Connection *conn, const char *url,
                                          const char *method, const char *what);
enum MHD_Result cqd_http_refuse_busy(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method);
/// Runs the pipeline on the head alone, inline (its 401, say), and queues the answer.
enum MHD_Result cqd_http_respond_head(cqd_http *h, struct MHD_Connection *conn, const char *url,
                                      const char *method, const http_req *r);

#endif
