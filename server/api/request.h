/// @file server/api/request.h
/// The transport-independent request pipeline shared by HTTP and the
/// stream: auth -> route -> limits -> parse -> handler -> counters -> log
/// -> reply. A transport fills a cqd_request, calls cqd_handle and sends
/// the cqd_response; it never looks inside a handler.
///
/// Timing, one rule for both transports: a request's duration (its access
/// line's duration_us, collisiond_request_duration_seconds, its --record
/// line) runs from arrived_ns, which the transport stamps the moment the
/// whole request is in its hands and before it parses any of it, to the
/// moment the pipeline hands the finished response back. So body decoding
/// counts on both, and so does the stream's envelope.
#ifndef CQD_REQUEST_H
#define CQD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cq/deadline.h"
#include "cqp/decode.h"
#include "cqp/format.h"
#include "cqp/value.h"
#include "cqp/write.h"

struct cqd_server;
struct cqd_thread;

/// Longest request id kept (longer ids are cut, bad characters dropped).
#define CQD_REQUEST_ID_MAX 64

/// A request as a transport received it. Every pointer is borrowed for the
/// duration of cqd_handle.
typedef struct cqd_request {
    const char *transport;     ///< "http" or "stream" (for logs)
    const char *method;        ///< "GET", "POST", ...
    const char *path;          ///< without the query string
    const char *query;         ///< the raw query string after '?', or NULL
    const char *authorization; ///< the Authorization header, or NULL
    const char *request_id;    ///< the X-Request-Id header, or NULL
    const char *body;          ///< NULL or body_len bytes (not NUL-terminated)
    size_t body_len;
    cqp_format body_format;    ///< how body is encoded (HTTP: its Content-Type; stream: the connection's)
    cqp_value body_value;      ///< the body already opened from those bytes (borrowed), or absent: the pipeline opens them
    cqp_format accept;         ///< the format the response body is written in (HTTP: Accept; stream: the connection's)
    bool allow_pretty;         ///< the transport may pretty-print (not the stream: one line per reply)
    uint64_t arrived_ns;       ///< cqd_mono_ns() when the whole request had arrived (HTTP: its last body byte, or its headers' end; stream: its line's or frame's end found); 0: when the pipeline starts
    /// The longest answer body sent now, below --max-response (0: that):
    /// the stream's while its replies fill --max-stream-reply-total. An
    /// answer past it that --max-response would let through is a 503
    /// (retry), not a 422. Not for a route that changes a world
    /// (CQD_ROUTE_WRITE), whose answer only --max-response limits.
    size_t max_response;
    /// The bound whose fill set max_response, named in the 503 (NULL:
    /// "--max-stream-reply-total"; HTTP's is "--max-http-reply-total").
    const char *short_by;
} cqd_request;

/// The flag a short answer limit of req is named by (cqd_request.short_by).
const char *cqd_request_short_by(const cqd_request *req);

/// A response for the transport to send. Owns its body.
typedef struct cqd_response {
    int status;
    const char *content_type;  ///< static string
    cqp_buf body;              ///< empty for 204
    char allow[64];            ///< "GET, PUT, DELETE" with a 405, else ""
    int retry_after;           ///< seconds for Retry-After with a 429/503; 0: 1 for a 503, < 0: none
    bool negotiated;           ///< the body is in the request's accept format (HTTP: Vary: Accept)
    const char *const *headers; ///< more headers (name, value, ..., NULL; static storage), or NULL
    char request_id[CQD_REQUEST_ID_MAX + 1]; ///< sanitised or generated; echo it as X-Request-Id
    uint64_t duration_ns;      ///< set by the pipeline: from the request's arrived_ns to this response being complete
} cqd_response;

/// Runs one request through the pipeline and fills *resp (initialise it
/// with cqd_response_init; free its body with cqd_response_free). Safe to
/// call from any number of threads at once.
void cqd_handle(struct cqd_server *srv, const cqd_request *req, cqd_response *resp);

/// True when cqd_handle would answer the request 401 for its
/// Authorization header (NULL: none) before anything else: a transport asks
/// as soon as a head is in, so nothing is reserved for, or read from, a
/// client without the token. The same check as the pipeline's own.
bool cqd_auth_refused(struct cqd_server *srv, const char *method, const char *path, const char *authorization);

void cqd_response_init(cqd_response *resp);
void cqd_response_free(cqd_response *resp);

/// One handler invocation: what the handler reads and where it writes.
typedef struct cqd_call {
    struct cqd_server *srv;
    struct cqd_thread *self;  ///< the calling thread's counters and fallback log
    const cqd_request *req;
    int route;                ///< index in the route table
    char world[CQ_WORLD_ID_MAX + 1]; ///< path parameter {world}, validated, or ""
    char id[CQ_WORLD_ID_MAX + 1];    ///< path parameter {id}, validated, or ""
    const char *file;                ///< path parameter {file} (in req->path, unvalidated), or NULL
    cqp_value body;           ///< the body's view (borrowed; absent when empty or the route takes none)
    cqp_decoder dec;          ///< ready at the body's root, with the configured limits
    cqp_problem problem;      ///< filled by a handler that fails
    cqp_writer out;           ///< the response body, in req->accept's format (JSON: pretty when asked)
    cqd_response *resp;       ///< for content_type (bodies of one type whatever Accept says) and retry_after
    uint64_t deadline_ns;     ///< cqd_mono_ns() past which the handler's queries stop (--request-timeout); 0: none
    cq_deadline deadline;     ///< the core's hook reading deadline_ns (cqd_h_deadline gives it to the queries)
} cqd_call;

/// A handler: writes its body through c->out and returns the HTTP
/// status (200, 201, 204 with no body), or fills c->problem and returns -1.
/// Nothing a client sends may crash it, and a rejected request changes nothing.
typedef int (*cqd_handler)(cqd_call *c);

/// Sets up c to run req on srv, its answer going to resp (initialised) in
/// req->accept's format, pretty when asked, held to the request's answer
/// limit; c->route is -1 until cqd_route_match sets it. The one set-up of
/// a live request (cqd_handle) and of a journaled one (recovery).
void cqd_call_init(cqd_call *c, struct cqd_server *srv, const cqd_request *req, cqd_response *resp, bool pretty);

/// Once c->route is set: when the route takes a body, points c->body at
/// the request's (req->body_value, else req->body opened into *b), absent
/// when empty; then readies c->dec with limits (NULL: none). 0, or -1
/// with c->problem filled (a body that is not an object, or that could
/// not be opened). Close *b (zeroed by the caller) with cqp_body_close
/// after the handler, whatever this returned.
int cqd_call_open(cqd_call *c, cqp_body *b, const cqp_limits *limits);

#endif
