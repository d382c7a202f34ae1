/// @file server/net/http_body.c
/// A request's head and body as they arrive. Nothing is reserved for a
/// client before its head has passed the framing checks and the bearer
/// token: a head without the token is answered 401 at once, before
/// libmicrohttpd would send "100 Continue" (it sends one only when the
/// first call queued no answer). A body's bytes are then charged against
/// --max-buffered as they arrive, not as declared: its buffer doubles up
/// to the declared length (or --max-body) and the reservation grows with
/// it. A body arriving slower than --min-body-rate, past its grace, has its
/// connection closed: libmicrohttpd 0.9.75 queues no answer while a body
/// is being read (MHD_queue_response refuses outside the head's end and
/// the whole request's), so there is no 408 to send. A request without a
/// body holds nothing, so its 401 comes from the pipeline as usual.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_framing.h"
#include "http_internal.h"
#include "state/alloc.h"

/// A declared body up to this size lives in the request's own block,
/// reserved with the head: it is no more than one read of the socket.
#define INLINE_BODY_MAX 16384
/// A larger or chunked body starts with this much room and doubles.
#define FIRST_BODY_CAP 65536

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/// The declared Content-Length, or -1 when there is none (MHD has already
/// rejected a malformed one).
static long long declared_length(struct MHD_Connection *conn)
{
    const char *v = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!v)
        return -1;
    unsigned long long n = strtoull(v, NULL, 10);
    return n > (unsigned long long)INT64_MAX ? INT64_MAX : (long long)n;
}

/// Gives r (NULL: none yet) room for its query and an inline body of
/// inline_len bytes; NULL when out of memory (r is then left as it was).
static http_req *with_room(http_req *r, size_t inline_len)
{
    size_t qlen = r && r->query ? strlen(r->query) + 1 : 0;
    http_req *grown = cqd_realloc(r, sizeof *r + qlen + inline_len);
    if (!grown)
        return NULL;
    if (!r)
        memset(grown, 0, sizeof *grown);
    grown->query = qlen ? grown->mem : NULL;
    return grown;
}

/// Marks a request without a body started; it runs on the next call
/// (answering before MHD has the whole request would cost the keep-alive).
static enum MHD_Result start_bodiless(cqd_http *h, http_req *r, void **con_cls)
{
    if (r)
        r->started = true;
    else
        *con_cls = h;
    return MHD_YES;
}

enum MHD_Result cqd_http_on_headers(cqd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                    void **con_cls)
{
    http_req *r = *con_cls;
    const cqd_config *cfg = &h->srv->cfg;
    char why[160];
    if (cqd_http_head_fault(conn, why, sizeof why))
        return cqd_http_refuse(h, conn, url, method, CQP_P_BAD_VALUE, why);
    long long declared = declared_length(conn);
    bool chunked = header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
    // Without a body nothing is held: the pipeline's 401 comes on the
    // last call, which keeps the connection alive.
    if (!chunked && declared <= 0)
        return start_bodiless(h, r, con_cls);
    if (cqd_auth_refused(h->srv, method, url, header(conn, MHD_HTTP_HEADER_AUTHORIZATION)))
        return cqd_http_respond_head(h, conn, url, method, r);
    if (declared > (long long)cfg->max_body) {
        char what[64];
        snprintf(what, sizeof what, "a body of %lld bytes", declared);
        return cqd_http_refuse_too_large(h, conn, url, method, what);
    }
    size_t inline_len = !chunked && declared <= INLINE_BODY_MAX ? (size_t)declared : 0;
    if (!cqd_admit_reserve(&h->srv->admit, inline_len))
        return cqd_http_refuse_busy(h, conn, url, method);
    http_req *grown = with_room(r, inline_len);
    if (!grown) {
        cqd_admit_release(&h->srv->admit, inline_len);
        return MHD_NO; // out of memory: drop the connection (on_completed frees r)
    }
    r = *con_cls = grown;
    r->started = true;
    r->reserved = inline_len;
    r->limit = chunked ? cfg->max_body : (size_t)declared;
    r->head_ns = cqd_mono_ns();
    if (inline_len) {
        r->body_inline = true;
        r->body = (char *)r->mem + (r->query ? strlen(r->query) + 1 : 0);
        r->cap = inline_len;
    }
    return MHD_YES;
}

/// Forgets the body received so far; the rest of it will be discarded.
static void drop_body(http_req *r)
{
    if (!r->body_inline)
        cqd_free(r->body);
    r->body = NULL;
    r->body_inline = false;
    r->len = r->cap = 0;
}

void cqd_http_body_free(cqd_http *h, http_req *r)
{
    cqd_admit_release(&h->srv->admit, r->reserved);
    r->reserved = 0;
    drop_body(r);
}

/// True when, past the grace period that follows the head, the body has
/// brought fewer bytes than --min-body-rate for each second after it.
static bool too_slow(const cqd_config *cfg, const http_req *r)
{
    if (cfg->min_body_rate == 0)
        return false;
    uint64_t elapsed = cqd_mono_ns() - r->head_ns, grace = (uint64_t)cfg->min_body_grace_s * 1000000000u;
    if (elapsed <= grace)
        return false;
    return (double)r->got < (double)cfg->min_body_rate * (double)(elapsed - grace) / 1e9;
}

/// Room for n more bytes: the buffer doubles, up to the body's limit, and
/// its reservation grows first. False (r->shed set) past --max-buffered.
static bool make_room(cqd_http *h, http_req *r, size_t n, bool *oom)
{
    size_t cap = r->cap ? r->cap : FIRST_BODY_CAP;
    while (cap < r->len + n)
        cap *= 2;
    if (cap > r->limit)
        cap = r->limit; // >= len + n: MHD's framing, or the --max-body check before
    if (cap > r->reserved) {
        if (!cqd_admit_reserve(&h->srv->admit, cap - r->reserved)) {
            r->shed = true;
            drop_body(r);
            return false;
        }
        r->reserved = cap;
    }
    char *body = cqd_realloc(r->body, cap);
    if (!body) {
        *oom = true;
        return false;
    }
    r->body = body;
    r->cap = cap;
    return true;
}

enum MHD_Result cqd_http_on_data(cqd_http *h, http_req *r, const char *data, size_t n)
{
    r->got += n;
    if (too_slow(&h->srv->cfg, r)) {
        cqd_log(&h->srv->log, CQD_LOG_INFO,
                "http: a body brought %zu bytes in %.1f s, below --min-body-rate: connection closed", r->got,
                (double)(cqd_mono_ns() - r->head_ns) / 1e9);
        return MHD_NO;
    }
    if (r->too_large || r->shed)
        return MHD_YES;
    if (n > h->srv->cfg.max_body - r->len) {
        r->too_large = true;
        drop_body(r);
        return MHD_YES;
    }
    bool oom = false;
    if (r->len + n > r->cap) {
        if (r->body_inline)
            return MHD_NO; // more than the declared length: MHD's framing prevents it
        if (!make_room(h, r, n, &oom))
            return oom ? MHD_NO : MHD_YES;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    return MHD_YES;
}
