/* Sending a pipeline and reading its replies in order. The reconnect rule
 * (docs/CLIENTS.md): nothing is ever sent twice. When the connection is
 * lost, every call not yet answered is answered by the loss itself (a
 * mutation by CQC_EUNKNOWN: it may have been applied), the socket is
 * closed, and the next cqc_pipe_send opens a new one. */
#include <stdio.h>

#include "cqc_int.h"

static void set_problem(cqc_conn *c, const char *detail)
{
    c->problem = (cqc_problem){0};
    snprintf(c->problem.detail, sizeof c->problem.detail, "%s", detail);
}

/* A lost reply's answer: a read gets the reason; a mutation that may have
 * reached the daemon CQC_EUNKNOWN. Nothing reached it when the pipeline
 * could not be connected or built (sent false). */
static cqc_status lost(const cqc_call *call, cqc_status why, bool sent)
{
    return sent && call->mutation ? CQC_EUNKNOWN : why;
}

/* Whether a failed send may have put some of the pipeline on the wire. */
static bool reached(cqc_status why)
{
    return why == CQC_EIO || why == CQC_ETIMEOUT;
}

static cqc_status reopen(cqc_conn *c)
{
    if (c->fd >= 0)
        return CQC_OK;
    if (!c->opt.reconnect)
        return CQC_EIO;
    cqc_status s = cqc__net_open(c);
    if (s == CQC_OK)
        c->stats.reconnects++;
    return s;
}

/* JSON mode sends each frame as the JSON line it stands for. */
static cqc_status json_lines(cqc_conn *c)
{
    c->line.len = 0;
    for (size_t i = 0; i < c->ncalls; i++) {
        const char *f = c->out.p + c->calls[i].frame;
        size_t n = (size_t)((unsigned char)f[1]) << 24 | (size_t)((unsigned char)f[2]) << 16 |
                   (size_t)((unsigned char)f[3]) << 8 | (unsigned char)f[4];
        cqc_status s = cqc__mp_to_json(f + 5, n, &c->line);
        if (s != CQC_OK)
            return s;
    }
    return CQC_OK;
}

cqc_status cqc_pipe_send(cqc_conn *c)
{
    if (c->sent)
        return CQC_ESTATE;
    c->sent = true;
    if (c->ncalls == 0)
        return CQC_OK;
    cqc_status s = reopen(c);
    if (s == CQC_OK && c->opt.encoding == CQC_JSON) {
        c->stats.encode_ns -= cqc__cpu_ns();
        s = json_lines(c);
        c->stats.encode_ns += cqc__cpu_ns();
    }
    if (s == CQC_OK) {
        const cqc_buf *b = c->opt.encoding == CQC_JSON ? &c->line : &c->out;
        s = cqc__net_send(c, b->p, b->len);
        if (s != CQC_OK)
            cqc__net_close(c);
    }
    c->send_status = s;
    if (s != CQC_OK)
        set_problem(c, s == CQC_ECONNECT ? "cannot connect"
                       : s == CQC_ENOMEM || s == CQC_EINVAL ? "the pipeline could not be written as JSON"
                                                            : "the pipeline could not be sent whole");
    return s;
}

/* The next reply's bytes: a frame's envelope, or (JSON) a line turned
 * into one. *env and *n point into c's buffers until the next read. */
static cqc_status read_frame(cqc_conn *c, const char **env, size_t *n)
{
    uint64_t deadline = cqc__now_ns() + (uint64_t)c->opt.io_timeout_ms * 1000000u;
    for (;;) {
        const unsigned char *p = (const unsigned char *)c->in.p + c->in_at;
        size_t have = c->in.len - c->in_at;
        if (c->opt.encoding == CQC_MSGPACK && have >= 5) {
            size_t len = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
            if (p[0] != 0xce || len == 0 || len > c->opt.max_reply)
                return CQC_EPROTO;
            if (have >= 5 + len) {
                *env = (const char *)p + 5;
                *n = len;
                c->in_at += 5 + len;
                return CQC_OK;
            }
        } else if (c->opt.encoding == CQC_JSON && have > 0) {
            const unsigned char *nl = memchr(p, '\n', have);
            if (nl) {
                c->in_at += (size_t)(nl - p) + 1;
                c->line.len = 0;
                cqc_status s = cqc__json_to_mp((const char *)p, (size_t)(nl - p), &c->line);
                *env = c->line.p;
                *n = c->line.len;
                return s;
            }
            if (have > c->opt.max_reply)
                return CQC_EPROTO;
        }
        cqc_status s = cqc__net_fill(c, deadline);
        if (s != CQC_OK)
            return s;
    }
}

/* The envelope's members; body is a reader over the body's bytes. */
typedef struct envelope {
    bool has_status, id_nil;
    uint64_t id, status;
    cqc_rd body;
} envelope;

static bool envelope_member(cqc_rd *r, envelope *e, const char *k, uint32_t kn, bool last)
{
    if (CQC_KEY(k, kn, "id")) {
        e->id_nil = cqc__rd_nil(r);
        return e->id_nil || cqc__rd_uint(r, &e->id);
    }
    if (CQC_KEY(k, kn, "status"))
        return (e->has_status = cqc__rd_uint(r, &e->status));
    if (CQC_KEY(k, kn, "body") && last) {
        /* The daemon writes the body last: it runs to the frame's end, and
         * its decoder must end there, so it is walked once, not twice. */
        e->body.p = r->p;
        e->body.end = r->end;
        r->p = r->end;
        return r->p > e->body.p;
    }
    if (CQC_KEY(k, kn, "body")) {
        e->body.p = r->p;
        bool ok = cqc__rd_skip(r);
        e->body.end = r->p;
        return ok;
    }
    return cqc__rd_skip(r); /* request_id, headers, and members to come */
}

static bool read_envelope(const char *p, size_t n, envelope *e)
{
    cqc_rd r = {p, p + n, false, false};
    uint32_t members;
    *e = (envelope){.id_nil = true, .body = {0}};
    if (!cqc__rd_map(&r, &members))
        return false;
    for (uint32_t i = 0; i < members; i++) {
        const char *k;
        uint32_t kn;
        if (!cqc__rd_str(&r, &k, &kn) || !envelope_member(&r, e, k, kn, i + 1 == members))
            return false;
    }
    return r.p == r.end && e->has_status && e->status >= 100 && e->status <= 599;
}

/* A reply for call, its envelope read: the status, its body decoded. */
static cqc_status answer(cqc_conn *c, const cqc_call *call, const envelope *e)
{
    cqc_rd body = e->body;
    int http = (int)e->status;
    if (body.p && body.end == body.p + 1 && (unsigned char)*body.p == 0xc0)
        body.p = body.end = NULL; /* nil: no body (204) */
    if (http >= 300) {
        c->problem.status = http;
        return cqc__problem(c, &body, http);
    }
    cqc_status s = cqc__decode(&body, call, http);
    if (s == CQC_EPROTO)
        set_problem(c, "a reply body is not what the call expects");
    return s;
}

cqc_status cqc_pipe_next(cqc_conn *c, size_t *index)
{
    if (!c->sent || c->next >= c->ncalls)
        return CQC_ESTATE;
    size_t i = c->next++;
    const cqc_call *call = &c->calls[i];
    uint32_t want = c->first_id + (uint32_t)i;
    if (index)
        *index = i;
    c->problem = (cqc_problem){0};
    if (c->send_status != CQC_OK)
        return lost(call, c->send_status, reached(c->send_status));
    if (c->fd < 0)
        return lost(call, CQC_EIO, true);
    const char *env;
    size_t n;
    cqc_status s = read_frame(c, &env, &n);
    envelope e;
    c->stats.decode_ns -= cqc__cpu_ns();
    if (s == CQC_OK && (!read_envelope(env, n, &e) || (e.id_nil ? e.status < 400 : e.id != want)))
        s = CQC_EPROTO;
    if (s != CQC_OK) {
        c->stats.decode_ns += cqc__cpu_ns();
        cqc__net_close(c);
        set_problem(c, s == CQC_ETIMEOUT ? "no reply within io_timeout_ms"
                       : s == CQC_EPROTO ? "malformed reply frame: the connection was closed"
                                         : "the connection was lost before the reply");
        return lost(call, s, true);
    }
    c->stats.replies++;
    s = answer(c, call, &e);
    c->stats.decode_ns += cqc__cpu_ns();
    return s;
}

/* The blocking calls: the one call queued after a fresh begin. */
cqc_status cqc__one(cqc_conn *c, cqc_status queued)
{
    if (queued != CQC_OK)
        return queued;
    cqc_pipe_send(c);
    return cqc_pipe_next(c, NULL);
}

cqc_status cqc__prep(cqc_conn *c)
{
    if (c->next < c->ncalls)
        return CQC_ESTATE;
    return cqc_pipe_begin(c);
}
