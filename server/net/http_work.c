/// @file server/net/http_work.c
/// Answers. A libmicrohttpd thread owns many connections, so a handler it
/// ran itself would hold all of them: every request but the
/// CQD_ROUTE_INLINE ones (probes, static files) runs on the handler pool
/// instead (work.h). Its connection is suspended, the pool runs
/// cqd_handle and resumes it, and MHD's next call on it queues the answer.
/// A request whose pool is draining, or could start no thread, runs inline.
/// The answers handed to MHD and not yet sent are counted against
/// --max-http-reply-total; while they fill it, a new request gets a short
/// answer limit (a longer answer is a 503 to retry), as on the stream.
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/router.h"
#include "http_internal.h"
#include "media.h"
#include "refuse.h"
#include "state/alloc.h"

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/// While the answers made and not yet sent reach --max-http-reply-total,
/// a request's answer may be at most this long (a longer one is a 503):
/// probes, pair tests and small queries are still answered.
#define SHORT_ANSWER (64u << 10)

/// An answer's bytes counted in srv->http_reply_bytes until MHD frees them.
typedef struct held_reply {
    cqd_server *srv;
    size_t n;
    char *data;
} held_reply;

/// MHD's free callback, once the answer is sent or its connection gone.
static void release_reply(void *cls)
{
    held_reply *held = cls;
    atomic_fetch_sub_explicit(&held->srv->http_reply_bytes, held->n, memory_order_relaxed);
    // with the hook that made it, not free()
    cqd_free(held->data);
    cqd_free(held);
}

void cqd_http_hold(cqd_server *srv, const cqd_response *resp)
{
    atomic_fetch_add_explicit(&srv->http_reply_bytes, resp->body.len, memory_order_relaxed);
}

void cqd_http_unhold(cqd_server *srv, const cqd_response *resp)
{
    atomic_fetch_sub_explicit(&srv->http_reply_bytes, resp->body.len, memory_order_relaxed);
}

/// The answer limit of a request starting now: short while the answers
/// held fill --max-http-reply-total, else 0 (--max-response).
static size_t answer_limit(const cqd_server *srv)
{
    size_t held = atomic_load_explicit(&srv->http_reply_bytes, memory_order_relaxed);
    return held >= srv->cfg.max_http_reply_total ? SHORT_ANSWER : 0;
}

/// A response that owns body's bytes, held (cqd_http_hold) until MHD
/// frees them; body is emptied. NULL when out of memory (body is kept).
static struct MHD_Response *held_response(cqd_server *srv, cqp_buf *body)
{
    held_reply *held = cqd_malloc(sizeof *held);
    if (!held)
        return NULL;
    *held = (held_reply){srv, body->len, body->data};
    struct MHD_Response *m =
        MHD_create_response_from_buffer_with_free_callback_cls(body->len, body->data, release_reply, held);
    if (!m) {
        cqd_free(held);
        return NULL;
    }
    *body = (cqp_buf){0};
    return m;
}

/// Hands the response, held since it was made, to MHD: the body buffer is
/// given away, not copied.
static enum MHD_Result send_response(cqd_server *srv, struct MHD_Connection *conn, cqd_response *resp)
{
    struct MHD_Response *m;
    if (resp->body.len) {
        m = held_response(srv, &resp->body);
        if (!m)
            cqd_http_unhold(srv, resp);
    } else {
        m = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    cqd_response_free(resp);
    if (!m)
        return MHD_NO;
    enum MHD_Result ok = MHD_YES;
    if (resp->status != 204 && resp->content_type)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    ok &= MHD_add_response_header(m, "X-Request-Id", resp->request_id);
    if (resp->allow[0])
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_ALLOW, resp->allow);
    if (resp->retry_after > 0) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", resp->retry_after);
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    if (resp->status == 401)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    // A cache must not hand a JSON answer to a client that asked for MessagePack.
    if (resp->negotiated)
        ok &= MHD_add_response_header(m, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT);
    for (const char *const *h = resp->headers; h && h[0]; h += 2)
        ok &= MHD_add_response_header(m, h[0], h[1]);
    if (ok)
        ok = MHD_queue_response(conn, (unsigned)resp->status, m);
    MHD_destroy_response(m);
    return ok;
}

/// The request as the pipeline takes it, arrived at `arrived`
/// (cqd_mono_ns); its body is read in the format its Content-Type names,
/// and every answer to it, refusals included, is written in the format its
/// Accept asks for. Its strings stay valid until the request completes.
static void request_of(const cqd_server *srv, struct MHD_Connection *conn, const char *url, const char *method,
                       const http_req *r, uint64_t arrived, cqd_request *req)
{
    *req = (cqd_request){
        .transport = "http",
        .method = method,
        .path = url,
        .query = r ? r->query : NULL,
        .authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .request_id = header(conn, "X-Request-Id"),
        .body = r && r->len ? r->body : NULL,
        .body_len = r ? r->len : 0,
        .body_format = cqd_media_body_format(header(conn, MHD_HTTP_HEADER_CONTENT_TYPE)),
        .accept = cqd_media_accept(header(conn, MHD_HTTP_HEADER_ACCEPT)),
        .allow_pretty = true,
        .arrived_ns = arrived,
        .max_response = answer_limit(srv),
        .short_by = "--max-http-reply-total",
    };
}

static enum MHD_Result respond(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                               const http_req *r, uint64_t arrived)
{
    cqd_request req;
    request_of(h->srv, conn, url, method, r, arrived, &req);
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(h->srv, &req, &resp);
    cqd_http_hold(h->srv, &resp);
    return send_response(h->srv, conn, &resp);
}

enum MHD_Result cqd_http_respond_head(cqd_http *h, struct MHD_Connection *conn, const char *url,
                                      const char *method, const http_req *r)
{
    // Only the query: no body was read, and none is (r->len is 0 before it).
    return respond(h, conn, url, method, r && r->len == 0 ? r : NULL, cqd_mono_ns());
}

enum MHD_Result cqd_http_refuse(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                cqp_problem_kind kind, const char *detail)
{
    cqd_request req;
    request_of(h->srv, conn, url, method, NULL, cqd_mono_ns(), &req);
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_refuse(h->srv, &req, kind, detail, &resp);
    cqd_http_hold(h->srv, &resp);
    return send_response(h->srv, conn, &resp);
}

enum MHD_Result cqd_http_refuse_too_large(cqd_http *h, struct MHD_Connection *conn, const char *url,
                                          const char *method, const char *what)
{
    char detail[160];
    snprintf(detail, sizeof detail, "%s is over the limit of %zu bytes (--max-body)", what, h->srv->cfg.max_body);
    return cqd_http_refuse(h, conn, url, method, CQP_P_TOO_LARGE, detail);
}

enum MHD_Result cqd_http_refuse_busy(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method)
{
    return cqd_http_refuse(h, conn, url, method, CQP_P_BUSY,
                           "too many requests or request bytes in flight (--max-inflight, --max-buffered); retry shortly");
}

/// On a pool thread (or inline when the pool took no job): runs the
/// request, then lets MHD's thread pick up the answer. MHD_resume_connection
/// takes the mutex the resuming thread takes too, so done and resp are
/// seen whole there.
static void run_job(cqd_job *job)
{
    http_req *r = (http_req *)((char *)job - offsetof(http_req, job));
    cqd_server *srv = r->http->srv;
    // the limit as the request starts, not as it was queued
    r->req.max_response = answer_limit(srv);
    cqd_handle(srv, &r->req, &r->resp);
    cqd_http_hold(srv, &r->resp);
    r->done = true;
    MHD_resume_connection(r->conn);
}

/// r, or a new one for a request that had none (NULL when out of memory).
static http_req *job_state(http_req *r, bool admitted)
{
    if (r)
        return r;
    r = cqd_calloc(1, sizeof *r);
    if (r)
        r->admitted = admitted;
    return r;
}

enum MHD_Result cqd_http_run(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                             http_req *r, void **con_cls, uint64_t arrived)
{
    if (!h->pool || cqd_route_inline(method, url))
        return respond(h, conn, url, method, r, arrived);
    http_req *job = job_state(r, *con_cls == &h->admitted);
    if (!job) // out of memory: still answered, inline
        return respond(h, conn, url, method, r, arrived);
    *con_cls = job;
    request_of(h->srv, conn, url, method, job, arrived, &job->req);
    cqd_response_init(&job->resp);
    job->conn = conn;
    job->http = h;
    job->job.run = run_job;
    job->queued = true;
    // Suspended before it is queued: a resume must never come first.
    MHD_suspend_connection(conn);
    if (!cqd_work_submit(h->pool, &job->job))
        run_job(&job->job);
    return MHD_YES;
}

enum MHD_Result cqd_http_send_done(struct MHD_Connection *conn, http_req *r)
{
    r->queued = false;
    return send_response(r->http->srv, conn, &r->resp);
}
