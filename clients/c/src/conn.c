/* Connections, and the request frames a pipeline queues. */
#include <stdlib.h>

#include "cqc_int.h"

void cqc_options_init(cqc_options *o)
{
    *o = (cqc_options){.host = "127.0.0.1", .port = 7879, .encoding = CQC_MSGPACK, .connect_timeout_ms = 2000,
                       .io_timeout_ms = 5000, .max_reply = 64u << 20, .reconnect = true};
}

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = cqc__realloc(NULL, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static bool options_ok(const cqc_options *o)
{
    return o && o->host && o->port && (o->encoding == CQC_MSGPACK || o->encoding == CQC_JSON) &&
           o->connect_timeout_ms > 0 && o->io_timeout_ms > 0 && o->max_reply >= 64 &&
           o->max_reply <= UINT32_MAX;
}

cqc_status cqc_connect(const cqc_options *o, cqc_conn **out)
{
    *out = NULL;
    if (!options_ok(o))
        return CQC_EINVAL;
    cqc_conn *c = cqc__realloc(NULL, sizeof *c);
    if (!c)
        return CQC_ENOMEM;
    *c = (cqc_conn){.opt = *o, .fd = -1, .seq = 1};
    c->host = dup_str(o->host);
    c->token = dup_str(o->token);
    if (!c->host || (o->token && !c->token)) {
        cqc_close(c);
        return CQC_ENOMEM;
    }
    c->opt.host = c->host; /* the caller's strings may go now */
    c->opt.token = c->token;
    cqc_status s = cqc__net_open(c);
    if (s != CQC_OK) {
        cqc_close(c);
        return s;
    }
    *out = c;
    return CQC_OK;
}

void cqc_close(cqc_conn *c)
{
    if (!c)
        return;
    cqc__net_close(c);
    cqc__buf_free(&c->out);
    cqc__buf_free(&c->in);
    cqc__buf_free(&c->line);
    cqc__free(c->calls);
    cqc__free(c->host);
    cqc__free(c->token);
    cqc__free(c);
}

bool cqc_connected(const cqc_conn *c)
{
    return c->fd >= 0;
}

cqc_stats cqc_get_stats(const cqc_conn *c)
{
    return c->stats;
}

const cqc_problem *cqc_last_problem(const cqc_conn *c)
{
    return &c->problem;
}

cqc_status cqc_pipe_begin(cqc_conn *c)
{
    if (c->sent && c->next < c->ncalls)
        return CQC_ESTATE;
    c->out.len = 0;
    c->ncalls = c->next = 0;
    c->sent = false;
    c->send_status = CQC_OK;
    c->first_id = c->seq;
    return CQC_OK;
}

size_t cqc_pipe_pending(const cqc_conn *c)
{
    return c->ncalls - c->next;
}

/* Characters of the id rule go into a path as they are; any other byte
 * is percent-encoded, so a name can never reach another route (the daemon
 * then refuses it as a bad name). */
static bool plain(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == ':' || ch == '-';
}

static size_t seg_len(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += plain((unsigned char)*s) ? 1 : 3;
    return n;
}

static char *seg_put(char *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (plain(ch)) {
            *p++ = (char)ch;
        } else {
            *p++ = '%';
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 15];
        }
    }
    return p;
}

/* path + world + tail + id, as one str. */
static void w_path(cqc_w *w, const char *path, const char *world, const char *tail, const char *id)
{
    size_t n = strlen(path) + seg_len(world) + (tail ? strlen(tail) : 0) + seg_len(id);
    char *at = n <= UINT32_MAX ? cqc__w_room(w, n + 5) : NULL;
    if (!at)
        return;
    char *p = mp_encode_strl(at, (uint32_t)n);
    memcpy(p, path, strlen(path));
    p = seg_put(p + strlen(path), world);
    if (tail) {
        memcpy(p, tail, strlen(tail));
        p += strlen(tail);
    }
    p = seg_put(p, id);
    w->b->len += (size_t)(p - at);
}

static void w_auth(cqc_w *w, const char *token)
{
    static const char bearer[] = "Bearer ";
    size_t n = strlen(token);
    cqc__w_str(w, "headers");
    cqc__w_map(w, 1);
    cqc__w_str(w, "Authorization");
    char *at = cqc__w_room(w, n + sizeof bearer + 5);
    if (!at)
        return;
    char *p = mp_encode_strl(at, (uint32_t)(n + sizeof bearer - 1));
    memcpy(p, bearer, sizeof bearer - 1);
    memcpy(p + sizeof bearer - 1, token, n);
    w->b->len += (size_t)(p + sizeof bearer - 1 + n - at);
}

/* Starts a frame at the end of c->out; cqc__end fills in its length. */
cqc_status cqc__begin(cqc_conn *c, cqc_w *w, const char *method, const char *path, const char *world,
                      const char *tail, const char *id, bool has_body)
{
    if (c->sent && c->next < c->ncalls)
        return CQC_ESTATE;
    if (c->sent)
        cqc_pipe_begin(c);
    if (c->ncalls == 0)
        c->first_id = c->seq; /* replies are matched to ids from here on */
    /* A path ending in '/' takes a name, a tail ending in '/' an id. */
    if ((path[strlen(path) - 1] == '/' && (!world || !*world)) ||
        (tail && tail[strlen(tail) - 1] == '/' && (!id || !*id)))
        return CQC_EINVAL;
    c->stats.encode_ns -= cqc__cpu_ns();  /* cqc__end adds the end time */
    *w = (cqc_w){.b = &c->out};
    c->frame_at = c->out.len;
    cqc__w_room(w, 5);
    c->out.len += w->oom ? 0 : 5;
    cqc__w_map(w, 3u + (c->token != NULL) + has_body);
    cqc__w_str(w, "id");
    cqc__w_uint(w, c->seq);
    cqc__w_str(w, "method");
    cqc__w_str(w, method);
    cqc__w_str(w, "path");
    w_path(w, path, world, tail, id);
    if (c->token)
        w_auth(w, c->token);
    if (has_body)
        cqc__w_str(w, "body");
    return CQC_OK;
}

cqc_status cqc__end(cqc_conn *c, cqc_w *w, uint8_t kind, bool mutation, void *out, size_t n)
{
    size_t at = c->frame_at;
    void *calls = c->calls;
    if (!w->oom && !cqc__grow(&calls, &c->cap_calls, c->ncalls + 1, sizeof *c->calls))
        w->oom = true;
    c->calls = calls;
    size_t len = c->out.len - at - 5;
    if (w->oom || len > UINT32_MAX) {
        c->out.len = at;
        c->stats.encode_ns += cqc__cpu_ns();
        return w->oom ? CQC_ENOMEM : CQC_EINVAL;
    }
    unsigned char *h = (unsigned char *)c->out.p + at;
    h[0] = 0xce;
    h[1] = (unsigned char)(len >> 24);
    h[2] = (unsigned char)(len >> 16);
    h[3] = (unsigned char)(len >> 8);
    h[4] = (unsigned char)len;
    c->calls[c->ncalls++] = (cqc_call){.kind = kind, .mutation = mutation, .out = out, .n = n, .frame = at};
    c->seq++;
    c->stats.requests++;
    c->stats.encode_ns += cqc__cpu_ns();
    return CQC_OK;
}
