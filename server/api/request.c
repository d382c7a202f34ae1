/// @file server/api/request.c
/// The request pipeline: request id, route, auth, readiness, body, handler,
/// problem, metrics, access log. Every outcome, including the refusals
/// before a handler runs, goes through finish() so it is counted and logged.
#include "request.h"

#include <string.h>
#include <strings.h>

#include "h_common.h"
#include "net/refuse.h"
#include "record/record.h"
#include "router.h"
#include "state/alloc.h"
#include "state/server.h"
#include "state/thread.h"

void cqd_response_init(cqd_response *resp) { memset(resp, 0, sizeof *resp); }

void cqd_response_free(cqd_response *resp) { cqp_buf_free(&resp->body); }

/// "<16 hex digits of the boot id>-<seq in decimal>" (as "%016llx-%llu"
/// would write it) into out, which has room for it: formatted by hand, as
/// every request without an X-Request-Id gets one.
static void generated_id(uint64_t boot_id, unsigned long long seq, char out[CQD_REQUEST_ID_MAX + 1])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, boot_id >>= 4)
        out[i] = hex[boot_id & 15];
    out[16] = '-';
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + seq % 10);
        seq /= 10;
    } while (seq);
    for (size_t i = 0; i < n; i++)
        out[17 + i] = digits[n - 1 - i];
    out[17 + n] = '\0';
}

/// The client's X-Request-Id with every character that may not stand in
/// an id (cq_world_id_char) dropped, cut to CQD_REQUEST_ID_MAX; "<boot id>-<seq>" when nothing is left.
static void set_request_id(cqd_server *srv, const char *given, char out[CQD_REQUEST_ID_MAX + 1])
{
    size_t n = 0;
    for (const char *p = given; p && *p && n < CQD_REQUEST_ID_MAX; p++)
        if (cq_world_id_char(*p))
            out[n++] = *p;
    out[n] = '\0';
    if (n == 0) {
        unsigned long long seq = atomic_fetch_add_explicit(&srv->request_seq, 1, memory_order_relaxed) + 1;
        generated_id(srv->boot_id, seq, out);
    }
}

/// Copies what a client sent into a problem detail: printable ASCII kept,
/// anything else '?', cut to fit (a detail must stay valid UTF-8, in a
/// JSON string as in a MessagePack str).
static void printable(char *dst, size_t size, const char *src)
{
    size_t n = 0;
    for (; src[n] && n + 1 < size; n++)
        dst[n] = src[n] >= 0x20 && src[n] < 0x7f ? src[n] : '?';
    dst[n] = '\0';
}

/// True when the query string has pretty=1 or pretty=true.
static bool wants_pretty(const char *q)
{
    while (q && *q) {
        const char *end = strchr(q, '&');
        size_t n = end ? (size_t)(end - q) : strlen(q);
        if ((n == 8 && memcmp(q, "pretty=1", 8) == 0) || (n == 11 && memcmp(q, "pretty=true", 11) == 0))
            return true;
        q = end ? end + 1 : NULL;
    }
    return false;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/// "Bearer <token>" with the token compared in time that depends only on
/// the configured token's length (the scheme name is case-insensitive).
/// Blanks around the value (RFC 9110's OWS) and between scheme and token
/// are not part of the token, on either transport: libmicrohttpd strips
/// the leading ones and keeps the trailing, a stream header keeps both.
static bool authorized(const char *token, const char *header)
{
    while (header && is_blank(*header))
        header++;
    if (!header || strncasecmp(header, "Bearer", 6) != 0 || !is_blank(header[6]))
        return false;
    const char *given = header + 7;
    while (is_blank(*given))
        given++;
    size_t n = strlen(token), m = strlen(given);
    while (m && is_blank(given[m - 1]))
        m--;
    volatile unsigned diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)token[i] ^ (unsigned char)(i < m ? given[i] : 0);
    return diff == 0;
}

/// Whether a request matched as m (on route, when it did) lacks the token:
/// every route but the CQD_ROUTE_OPEN ones needs it, when one is set.
static bool refused(const cqd_server *srv, cqd_match m, int route, const char *authorization)
{
    int count;
    const cqd_route *routes = cqd_routes(&count);
    bool open = m == CQD_MATCH_OK && (routes[route].flags & CQD_ROUTE_OPEN);
    return srv->cfg.token[0] && !open && !authorized(srv->cfg.token, authorization);
}

bool cqd_auth_refused(struct cqd_server *srv, const char *method, const char *path, const char *authorization)
{
    if (!srv->cfg.token[0])
        return false;
    cqd_call c = {.srv = srv};
    int route;
    cqd_match m = cqd_route_match(method ? method : "", path ? path : "", &c, &route, NULL, 0);
    return refused(srv, m, route, authorization);
}

/// Writes c->problem into a fresh response body; false when memory ran out.
static bool write_problem(cqd_call *c, bool pretty)
{
    cqp_writer_init_format(&c->out, &c->resp->body, c->req->accept, pretty);
    cqp_write_problem(&c->out, &c->problem);
    return !c->resp->body.oom;
}

/// Replaces whatever the response holds by c->problem, in the format the
/// client asked for (so a binary client never needs a JSON parser, even
/// for a 401 or a 404); returns its status.
static int fail(cqd_call *c)
{
    cqd_response *resp = c->resp;
    bool pretty = c->out.pretty;
    cqp_buf_free(&resp->body);
    // Out of memory the problem goes into the thread's spare block, so a
    // 503 still says why (a new spare is set aside at the next request).
    if (!write_problem(c, pretty) && c->self && c->self->spare) {
        cqp_buf_adopt(&resp->body, c->self->spare, CQD_SPARE_ANSWER);
        c->self->spare = NULL;
        write_problem(c, pretty);
    }
    resp->content_type = cqp_format_problem_type(c->req->accept);
    resp->negotiated = true;
    // Shed load and exhausted memory pass: the client should come back
    // (unless the handler said there is no point: retry_after < 0).
    if (c->problem.kind == CQP_P_BUSY && resp->retry_after == 0)
        resp->retry_after = 1;
    return cqp_problem_status(c->problem.kind);
}

void cqd_call_init(cqd_call *c, cqd_server *srv, const cqd_request *req, cqd_response *resp, bool pretty)
{
    c->srv = srv;
    c->self = cqd_thread_self(srv);
    c->req = req;
    c->route = -1;
    c->world[0] = c->id[0] = '\0';
    c->body = cqp_value_absent();
    c->problem.kind = CQP_P_INTERNAL;
    c->problem.detail[0] = c->problem.pointer[0] = '\0';
    c->resp = resp;
    c->deadline_ns = 0;
    bool tighter = req->max_response && req->max_response < srv->cfg.max_response;
    resp->body.limit = tighter ? req->max_response : srv->cfg.max_response;
    cqp_writer_init_format(&c->out, &resp->body, req->accept, pretty);
}

/// Where a request's clock starts: the transport's stamp of its arrival
/// (request.h), or now for a caller that has none.
static uint64_t clock_start(const cqd_request *req) { return req->arrived_ns ? req->arrived_ns : cqd_mono_ns(); }

/// Stops the request's clock (its response is complete: what follows is
/// bookkeeping and the hand-back), then counts and logs it.
static void finish(const cqd_call *c, uint64_t t0)
{
    cqd_server *srv = c->srv;
    uint64_t now = cqd_mono_ns();
    uint64_t ns = now > t0 ? now - t0 : 0;
    c->resp->duration_ns = ns;
    if (c->self)
        cqd_metrics_record(&c->self->requests, c->route, c->req->method, c->resp->status, ns);
    int count;
    const cqd_route *routes = cqd_routes(&count);
    bool quiet = c->route >= 0 && (routes[c->route].flags & CQD_ROUTE_QUIET);
    if (cqd_access_wanted(&srv->access, quiet, c->resp->status, ns)) {
        cqd_log_request(&srv->log, c->resp->request_id, c->req->transport, c->req->method,
                        c->route >= 0 ? routes[c->route].pattern : NULL, c->req->path, c->resp->status,
                        (long long)(ns / 1000));
    }
}

const char *cqd_request_short_by(const cqd_request *req)
{
    return req->short_by ? req->short_by : "--max-stream-reply-total";
}

/// The problem for an answer past its limit: over --max-response a 422
/// (it will never be sent), else past the request's own tighter limit a
/// 503 (it can be sent once the stream's replies drain).
static void too_long(cqd_call *c)
{
    size_t want = cqp_buf_size(&c->resp->body), most = c->srv->cfg.max_response;
    if (want > most)
        cqp_fail(&c->problem, CQP_P_OVER_LIMIT, NULL,
                 "the answer would be %zu bytes; this server sends at most %zu (--max-response)", want, most);
    else
        cqp_fail(&c->problem, CQP_P_BUSY, NULL,
                 "the answer would be %zu bytes; at most %zu are sent while unsent replies fill %s; "
                 "retry shortly", want, c->resp->body.limit, cqd_request_short_by(c->req));
}

/// Worlds may be half-recovered while the server starts: their routes wait.
static bool needs_recovery(const cqd_route *r) { return strncmp(r->pattern, "/v1/worlds", 10) == 0; }

/// Why a body could not be opened when an allocation failed: past the
/// request's budget it is the body's size (413, by format, as the JSON
/// tree and the MessagePack check's scratch are different costs), else
/// the machine's (503, retry).
static void open_refused(cqd_call *c)
{
    const cqd_json_arena *a = &c->self->json;
    size_t budget = c->srv->cfg.max_request_memory;
    if (a->over_budget && c->req->body_format == CQP_MSGPACK)
        cqp_fail(&c->problem, CQP_P_TOO_LARGE, NULL,
                 "the body needs more than %zu bytes to check (--max-request-memory)", budget);
    else if (a->over_budget)
        cqp_fail(&c->problem, CQP_P_TOO_LARGE, NULL,
                 "the body decodes to more than %zu bytes of JSON values (--max-request-memory)", budget);
    else if (a->failed)
        cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory decoding the body");
}

/// Points c->body at the request's body: the view the transport opened,
/// else req->body's bytes opened in req->body_format into *b (closed by
/// the caller); an empty body stays absent. A present body must be an
/// object. Returns 0, or -1 with c->problem filled.
static int open_body(cqd_call *c, cqp_body *b)
{
    const cqd_request *req = c->req;
    if (cqp_value_present(req->body_value)) {
        c->body = req->body_value;
    } else if (req->body_len > 0) {
        if (cqp_body_open(b, req->body_format, req->body, req->body_len, &c->problem) != 0) {
            open_refused(c);
            return -1;
        }
        c->body = b->root;
    }
    if (cqp_value_present(c->body) && cqp_value_type(c->body) != CQP_V_OBJECT) {
        bool mp = c->body.format == CQP_MSGPACK;
        c->body = cqp_value_absent();
        return cqp_fail(&c->problem, CQP_P_BAD_TYPE, "", "the request body must be %s",
                        mp ? "a MessagePack map" : "a JSON object");
    }
    return 0;
}

int cqd_call_open(cqd_call *c, cqp_body *b, const cqp_limits *limits)
{
    if (cqd_route_takes_body(c->route) && open_body(c, b) != 0)
        return -1;
    cqp_decoder_init(&c->dec, limits, &c->problem);
    return 0;
}

/// A handler refused memory for the budget failed for the body's size, not
/// for want of memory (the decoders' arrays come from the request arena):
/// 413, not a 503 to come back from.
static void over_budget(cqd_call *c)
{
    if (c->problem.kind != CQP_P_BUSY || !c->self->json.over_budget)
        return;
    c->resp->retry_after = 0;
    cqp_fail(&c->problem, CQP_P_TOO_LARGE, NULL, "the body decodes to more than %zu bytes (--max-request-memory)",
             c->srv->cfg.max_request_memory);
}

/// The room set aside for a change's answer before the change is made, as
/// a change made is never answered "retry": what it answers (a summary, a
/// shape as stored) fits unless it is a large mesh or hull.
#define CHANGE_ANSWER_ROOM 4096

/// Sets a change's answer up: only --max-response holds, and its first
/// CHANGE_ANSWER_ROOM bytes are there before the change. False with
/// c->problem filled when they are not.
static bool change_answer_room(cqd_call *c)
{
    cqp_buf *body = &c->resp->body;
    body->limit = c->srv->cfg.max_response;
    size_t room = body->limit && body->limit < CHANGE_ANSWER_ROOM ? body->limit : CHANGE_ANSWER_ROOM;
    if (cqp_buf_reserve(body, room))
        return true;
    cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory");
    return false;
}

/// Everything between the request id and the bookkeeping; returns the status.
static int run(cqd_call *c)
{
    cqd_server *srv = c->srv;
    const cqd_request *req = c->req;
    cqd_response *resp = c->resp;
    if (!c->self) {
        cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory");
        return fail(c);
    }

    int count;
    const cqd_route *routes = cqd_routes(&count);
    cqd_match m = cqd_route_match(req->method, req->path, c, &c->route, resp->allow, sizeof resp->allow);
    // Auth before any 404/405, so without the token nothing about the paths can be learnt.
    if (refused(srv, m, c->route, req->authorization)) {
        resp->allow[0] = '\0';
        cqp_fail(&c->problem, CQP_P_UNAUTHORIZED, NULL, "%s",
                 req->authorization ? "wrong bearer token" : "an Authorization: Bearer header is required");
        return fail(c);
    }
    char path[160], method[24];
    switch (m) {
    case CQD_MATCH_OK:
        break;
    case CQD_MATCH_NO_PATH:
        printable(path, sizeof path, req->path);
        cqp_fail(&c->problem, CQP_P_NO_ROUTE, NULL, "no endpoint at %s", path);
        return fail(c);
    case CQD_MATCH_NO_METHOD:
        printable(path, sizeof path, req->path);
        printable(method, sizeof method, req->method);
        cqp_fail(&c->problem, CQP_P_BAD_METHOD, NULL, "%s is not allowed on %s (allowed: %s)", method, path,
                 resp->allow);
        return fail(c);
    case CQD_MATCH_BAD_PARAM:
        return fail(c);
    }
    const cqd_route *r = &routes[c->route];
    if (atomic_load_explicit(&srv->state, memory_order_acquire) == CQD_STARTING && needs_recovery(r)) {
        resp->retry_after = 1;
        cqp_fail(&c->problem, CQP_P_BUSY, NULL, "the server is recovering its worlds; retry shortly");
        return fail(c);
    }
    cqp_body body = {0};
    if (cqd_call_open(c, &body, &srv->cfg.limits) != 0) {
        cqp_body_close(&body);
        return fail(c);
    }
    resp->content_type = NULL;
    cqd_h_start_deadline(c);
    if ((r->flags & CQD_ROUTE_WRITE) && !change_answer_room(c)) {
        cqp_body_close(&body);
        return fail(c);
    }
    int status = r->handler(c);
    c->body = cqp_value_absent();
    cqp_body_close(&body);
    if (status < 0) {
        over_budget(c);
        return fail(c);
    }
    if (resp->body.over) {
        too_long(c);
        return fail(c);
    }
    if (resp->body.oom) {
        cqp_fail(&c->problem, CQP_P_BUSY, NULL, "out of memory writing the response");
        return fail(c);
    }
    if (status == 204)
        cqp_buf_free(&resp->body);
    // A handler that names its type (metrics text, the OpenAPI document,
    // inspector files) sends the same bytes whatever Accept says.
    if (!resp->content_type && status != 204) {
        resp->content_type = cqp_format_media_type(req->accept);
        resp->negotiated = true;
    }
    return status;
}

/// req itself, or a copy in *fixed with an absent method or path made ""
/// (a transport may pass on what a client left out; "" matches no route).
static const cqd_request *complete(const cqd_request *req, cqd_request *fixed)
{
    if (req->method && req->path)
        return req;
    *fixed = *req;
    fixed->method = req->method ? req->method : "";
    fixed->path = req->path ? req->path : "";
    return fixed;
}

void cqd_handle(struct cqd_server *srv, const cqd_request *req, cqd_response *resp)
{
    uint64_t t0 = clock_start(req);
    cqd_request fixed;
    req = complete(req, &fixed);
    set_request_id(srv, req->request_id, resp->request_id);
    cqd_call c;
    cqd_call_init(&c, srv, req, resp, req->allow_pretty && wants_pretty(req->query));
    if (c.self && !c.self->spare) // none yet, or a problem took it: as a request begins, not when it fails
        c.self->spare = cqd_malloc(CQD_SPARE_ANSWER);
    cqd_json_arena *previous = c.self ? cqd_json_arena_enter(&c.self->json, srv->cfg.max_request_memory) : NULL;
    resp->status = run(&c);
    finish(&c, t0);
    cqd_record_request(srv, req, resp);
    if (c.self)
        cqd_json_arena_leave(&c.self->json, previous);
}

void cqd_refuse(struct cqd_server *srv, const cqd_request *req, cqp_problem_kind kind, const char *detail,
                cqd_response *resp)
{
    uint64_t t0 = clock_start(req);
    cqd_request fixed;
    req = complete(req, &fixed);
    set_request_id(srv, req->request_id, resp->request_id);
    cqd_call c;
    cqd_call_init(&c, srv, req, resp, false);
    cqd_match m = cqd_route_match(req->method, req->path, &c, &c.route, resp->allow, sizeof resp->allow);
    if (m != CQD_MATCH_OK)
        c.route = -1;
    resp->allow[0] = '\0';
    cqp_fail(&c.problem, kind, NULL, "%s", detail);
    resp->status = fail(&c);
    finish(&c, t0);
}
