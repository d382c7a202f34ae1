/// @file server/net/stream_envelope.c
/// The stream's requests and replies (API.md section 11), JSON lines and
/// MessagePack frames alike: decoding the envelope {"id", "method",
/// "path", "headers", "body"} into a cqd_request and writing {"id",
/// "status", "request_id", "body"} back; a request refused before the
/// pipeline is counted and logged through cqd_refuse.
///
/// The "id" and "body" members are taken verbatim from the line or frame
/// (located by a scan of the already validated text, or by the span of a
/// checked MessagePack value) rather than re-serialised: the id echoes
/// byte for byte, and the body a recording keeps is exactly what the
/// client sent, within the same --max-body. The pipeline decodes the body
/// from the line's one parse, or from the frame's one check.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/router.h"
#include "cqp/scan.h"
#include "cqp/value.h"
#include "refuse.h"
#include "state/alloc.h"
#include "state/thread.h"
#include "stream_internal.h"

/* ---- locating members in validated JSON text -------------------------- */

static int take_id_and_body(const cqp_member *m, void *arg)
{
    cqd_envelope *env = arg;
    if (cqp_key_is(m->key, m->key_len, "id")) {
        env->id = m->value;
        env->id_len = m->value_len;
    } else if (cqp_key_is(m->key, m->key_len, "body")) {
        env->body = m->value;
        env->body_len = m->value_len;
    }
    return 0;
}

// Sets env->id and env->body to the text of those members of the object
// line (jansson accepted it, duplicate keys refused, so the scan cannot
// fail and the tree counts the line's members): a body sent last is not
// walked to find its end, which took 2.7 ms of a 10,000-box JSON tick.
static void find_members(const char *s, size_t n, const json_t *root, cqd_envelope *env)
{
    cqp_scan_object_counted(s, n, json_object_size(root), take_id_and_body, env, NULL);
}

/* ---- the envelope's members, through the value view ------------------- */

#define POINTER_SIZE sizeof ((cqp_problem *)0)->pointer

// A string member's bytes, not NUL-terminated until keep_texts copies them.
typedef struct span {
    const char *s; ///< NULL: absent
    size_t n;
} span;

// The texts a request keeps from its envelope.
typedef struct texts {
    span method, path, authorization, request_id;
} texts;

// True when key[0..n) is name, ASCII case ignored (header names).
static bool name_is(const char *key, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(key, name, n) == 0;
}

// Appends the pointer token of key[0..n) to ptr. A key is copied to be
// NUL-terminated; a pointer holds fewer bytes than the copy, so cutting
// the copy never shows.
static void append_key(char ptr[POINTER_SIZE], const char *key, size_t n)
{
    char name[POINTER_SIZE];
    n = n < sizeof name - 1 ? n : sizeof name - 1;
    memcpy(name, key, n);
    name[n] = '\0';
    cqp_pointer_append(ptr, POINTER_SIZE, name);
}

// How many bytes of a name a detail quotes.
static int quoted(size_t n) { return n < 64 ? (int)n : 64; }

// Refuses any member but the five the envelope has.
static int check_members(cqp_value root, cqp_problem *p)
{
    static const char *const known[] = {"id", "method", "path", "headers", "body"};
    enum { N = sizeof known / sizeof known[0] };
    cqp_iter it;
    const char *key;
    size_t n;
    cqp_value v;
    cqp_value_iter_init(&it, root);
    while (cqp_value_next_member(&it, &key, &n, &v)) {
        size_t k = 0;
        while (k < N && !cqp_value_key_is(key, n, known[k]))
            k++;
        if (k == N) {
            char ptr[sizeof p->pointer] = "";
            append_key(ptr, key, n);
            return cqp_fail(p, CQP_P_UNKNOWN_FIELD, ptr,
                            "unknown member %.*s (expected id, method, path, headers, body)", quoted(n), key);
        }
    }
    return 0;
}

// A string that becomes a C string: a NUL byte (only MessagePack can hold
// one) would cut it, and the request would not be the one sent.
static int no_nul(const span *t, const char *ptr, const char *what, cqp_problem *p)
{
    if (memchr(t->s, '\0', t->n))
        return cqp_fail(p, CQP_P_BAD_VALUE, ptr, "%s must not hold a NUL byte", what);
    return 0;
}

static int get_string(cqp_value root, const char *name, span *out, cqp_problem *p)
{
    cqp_value v = cqp_value_get(root, name);
    char ptr[16] = "";
    cqp_pointer_append(ptr, sizeof ptr, name);
    if (!cqp_value_present(v))
        return cqp_fail(p, CQP_P_MISSING_FIELD, ptr, "%s is required", name);
    if (cqp_value_type(v) != CQP_V_STRING)
        return cqp_fail(p, CQP_P_BAD_TYPE, ptr, "%s must be a string", name);
    out->s = cqp_value_string(v, &out->n);
    return no_nul(out, ptr, name, p);
}

// "headers": {name: string}; Authorization and X-Request-Id are kept
// (names case-insensitive), other headers are accepted and ignored.
static int get_headers(cqp_value root, texts *t, cqp_problem *p)
{
    cqp_value h = cqp_value_get(root, "headers");
    cqp_vtype type = cqp_value_type(h);
    if (type == CQP_V_ABSENT || type == CQP_V_NULL)
        return 0;
    if (type != CQP_V_OBJECT)
        return cqp_fail(p, CQP_P_BAD_TYPE, "/headers", "headers must be an object of strings");
    cqp_iter it;
    const char *name;
    size_t n;
    cqp_value v;
    cqp_value_iter_init(&it, h);
    while (cqp_value_next_member(&it, &name, &n, &v)) {
        char ptr[sizeof p->pointer] = "/headers";
        append_key(ptr, name, n);
        if (cqp_value_type(v) != CQP_V_STRING)
            return cqp_fail(p, CQP_P_BAD_TYPE, ptr, "header %.*s must be a string", quoted(n), name);
        span *slot = name_is(name, n, "authorization")  ? &t->authorization
                     : name_is(name, n, "x-request-id") ? &t->request_id
                                                        : NULL;
        if (!slot)
            continue;
        if (slot->s)
            return cqp_fail(p, CQP_P_BAD_VALUE, ptr, "header %.*s is given twice", quoted(n), name);
        slot->s = cqp_value_string(v, &slot->n);
        if (no_nul(slot, ptr, "a header", p) != 0)
            return -1;
    }
    return 0;
}

// Copies the n spans into one allocation, each NUL-terminated; dst[i] is
// NULL for an absent one. NULL when out of memory.
static char *copy_spans(const span *const *src, int n, char **dst)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += src[i]->s ? src[i]->n + 1 : 0;
    char *copy = cqd_malloc(total), *at = copy;
    for (int i = 0; copy && i < n; i++) {
        dst[i] = src[i]->s ? at : NULL;
        if (!dst[i])
            continue;
        memcpy(at, src[i]->s, src[i]->n);
        at[src[i]->n] = '\0';
        at += src[i]->n + 1;
    }
    return copy;
}

// Copies the texts a request needs and frees the JSON tree: the handler
// then runs with nothing of the envelope alive but the line or frame.
static int keep_texts(cqd_envelope *env, const texts *t, cqp_problem *p)
{
    const span *src[] = {&t->method, &t->path, &t->authorization, &t->request_id};
    char *dst[4];
    env->copy = copy_spans(src, 4, dst);
    json_decref(env->root); // the spans pointed into it
    env->root = NULL;
    if (!env->copy)
        return cqp_fail(p, CQP_P_BUSY, NULL, "out of memory");
    env->method = dst[0];
    env->authorization = dst[2];
    env->request_id = dst[3];
    char *path = dst[1];
    env->path = path;
    char *q = path ? strchr(path, '?') : NULL;
    if (q) {
        *q = '\0';
        env->query = q + 1;
    }
    if (path)
        cqd_path_unescape(path); // as HTTP's path is: the same path, the same answer
    return 0;
}

// Decodes the envelope's members but id and body, which the caller
// located: in either format the same checks in the same order, so a frame
// is refused where and as a line would be. A refusal still keeps the
// request id, when the headers named one before the fault.
static int decode_members(cqp_value root, cqd_envelope *env, cqp_problem *p)
{
    texts t = {0};
    int rc = check_members(root, p);
    if (rc == 0)
        rc = get_string(root, "method", &t.method, p);
    if (rc == 0)
        rc = get_string(root, "path", &t.path, p);
    if (rc == 0)
        rc = get_headers(root, &t, p);
    if (rc == 0)
        return keep_texts(env, &t, p);
    cqp_problem lost; // out of memory for the copy: the refusal generates an id
    keep_texts(env, &(texts){.request_id = t.request_id}, &lost);
    return -1;
}

/* ---- JSON lines --------------------------------------------------------- */

static size_t digits(const char *s, size_t i, size_t n)
{
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

// True when s[0..n) is a JSON number (RFC 8259 section 6), of any size.
static bool is_json_number(const char *s, size_t n)
{
    size_t i = n && s[0] == '-' ? 1 : 0, d;
    if (i < n && s[i] == '0')
        i++;
    else if ((d = digits(s, i, n)) > i)
        i = d;
    else
        return false;
    if (i < n && s[i] == '.' && (d = digits(s, i + 1, n)) > i + 1)
        i = d;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-') ? i + 2 : i + 1;
        if ((d = digits(s, e, n)) == e)
            return false;
        i = d;
    }
    return i == n;
}

// The line parsed with its id's text blanked to "0": jansson refuses an
// integer past int64 and a number past a double, yet an id is echoed, never
// read, so any JSON number is a valid one (API.md section 11). Only when
// the id is such a number and nothing else in the line is wrong; else NULL.
static json_t *parse_without_id(const char *line, size_t len)
{
    cqd_envelope probe = {0};
    if (cqp_scan_object(line, len, take_id_and_body, &probe, NULL) != 0 || !probe.id ||
        !is_json_number(probe.id, probe.id_len))
        return NULL;
    char *copy = cqd_malloc(len);
    if (!copy)
        return NULL;
    memcpy(copy, line, len);
    size_t at = (size_t)(probe.id - line);
    memset(copy + at, ' ', probe.id_len);
    copy[at] = '0';
    cqp_problem ignored;
    json_t *root = cqp_parse(copy, len, &ignored);
    cqd_free(copy);
    return root;
}


int cqd_envelope_parse(const char *line, size_t len, cqd_envelope *env, cqp_problem *p)
{
    memset(env, 0, sizeof *env);
    env->root = cqp_parse(line, len, p);
    if (!env->root && p->kind == CQP_P_BAD_JSON)
        env->root = parse_without_id(line, len);
    if (!env->root)
        return -1;
    if (!json_is_object(env->root))
        return cqp_fail(p, CQP_P_BAD_TYPE, NULL, "a request line must be a JSON object");
    find_members(line, len, env->root, env);
    json_t *body = json_object_get(env->root, "body");
    if (json_is_null(body)) {
        env->body = NULL; // "body": null is no body, as a GET sends none
        env->body_len = 0;
    } else if (body) {
        /* Kept so the pipeline decodes this tree instead of parsing the
         * body's text again: jansson's parse is most of a small request's
         * cost. */
        env->body_tree = json_incref(body);
        env->body_value = cqp_value_json(body);
    }
    return decode_members(cqp_value_json(env->root), env, p);
}

/* ---- MessagePack frames ------------------------------------------------- */

// Bytes taken by the member value v of the checked map that ends at end.
// The last member ends where the map does (the check admitted nothing
// after it), so a body sent last, as clients do, is not walked just to
// find its end: walking 1.4 MB of moves took 0.5 ms of a 10,000-box tick.
static size_t member_span(const cqp_iter *it, cqp_value v, const char *end)
{
    if (it->index == it->count)
        return (size_t)(end - (const char *)v.ref);
    return cqp_mp_span(v.ref);
}

// Points env's id and body at those members' bytes in the checked map
// that ends at end.
static void find_mp_members(cqp_value root, const char *end, cqd_envelope *env)
{
    cqp_iter it;
    const char *key;
    size_t n;
    cqp_value v;
    cqp_value_iter_init(&it, root);
    while (cqp_value_next_member(&it, &key, &n, &v)) {
        if (cqp_value_key_is(key, n, "id")) {
            env->id = v.ref;
            env->id_len = member_span(&it, v, end);
        } else if (cqp_value_key_is(key, n, "body") && cqp_value_type(v) != CQP_V_NULL) {
            env->body = v.ref; // nil is no body, as JSON's null
            env->body_len = member_span(&it, v, end);
            env->body_value = v;
        }
    }
}

int cqd_envelope_parse_frame(const char *frame, size_t len, cqd_envelope *env, cqp_problem *p)
{
    memset(env, 0, sizeof *env);
    // Checked once, whole: the body's view is then read where it lies, and
    // the pipeline does not check it again. The envelope counts as one of
    // the CQP_MP_MAX_DEPTH levels (value.h), so the body may nest one
    // level less than over HTTP: still far beyond any valid request.
    if (cqp_mp_check(frame, len, CQP_MP_MAX_DEPTH, p) != 0)
        return -1;
    cqp_value root = cqp_value_mp(frame);
    if (cqp_value_type(root) != CQP_V_OBJECT)
        return cqp_fail(p, CQP_P_BAD_TYPE, NULL, "a request frame must hold a MessagePack map");
    find_mp_members(root, frame + len, env);
    return decode_members(root, env, p);
}

void cqd_envelope_free(cqd_envelope *env)
{
    json_decref(env->root);
    json_decref(env->body_tree);
    cqd_free(env->copy);
    memset(env, 0, sizeof *env);
}

/* ---- replies ----------------------------------------------------------- */

// Turns every byte c of s[0..n) into a space. memchr, not a byte loop:
// a contacts reply is tens of kilobytes and, compact, holds no newline.
static void blank_out(char *s, size_t n, char c)
{
    for (char *p = s, *end = s + n; (p = memchr(p, c, (size_t)(end - p))) != NULL; p++)
        *p = ' ';
}

// Inserts JSON text; a raw newline there (only ever whitespace in valid
// JSON) would split the reply line, so it becomes a space.
static void put_raw(cqp_writer *w, const char *json, size_t n)
{
    size_t from = w->buf->len;
    cqp_raw(w, json, n);
    if (w->buf->oom)
        return;
    blank_out(w->buf->data + from, w->buf->len - from, '\n');
    blank_out(w->buf->data + from, w->buf->len - from, '\r');
}

// The id as the request had it: its text or bytes, verbatim.
static void put_id(cqp_writer *w, const char *id, size_t id_len)
{
    if (!id)
        cqp_null(w);
    else if (w->format == CQP_MSGPACK)
        cqp_raw(w, id, id_len);
    else
        put_raw(w, id, id_len);
}

// Starts a reply in out: a frame's prefix (its length patched in by
// end_reply), then the envelope map's id and status.
static void begin_reply(cqp_writer *w, cqp_buf *out, cqp_format f, const char *id, size_t id_len, int status)
{
    if (f == CQP_MSGPACK)
        cqp_buf_append(out, "\xce\0\0\0\0", CQD_FRAME_PREFIX);
    cqp_writer_init_format(w, out, f, false);
    cqp_obj_begin(w);
    cqp_key(w, "id");
    put_id(w, id, id_len);
    cqp_key(w, "status");
    cqp_int(w, status);
}

// Ends the reply that began at byte `at` of the buffer: a line's newline,
// or the frame's length. A frame past 4 GiB cannot be sent (oom).
static void end_reply(cqp_writer *w, size_t at)
{
    cqp_obj_end(w);
    cqp_buf *out = w->buf;
    if (w->format != CQP_MSGPACK) {
        cqp_buf_append(out, "\n", 1);
        return;
    }
    if (out->oom)
        return;
    size_t n = out->len - at - CQD_FRAME_PREFIX;
    if (n > UINT32_MAX) {
        out->oom = true;
        return;
    }
    unsigned char *len = (unsigned char *)out->data + at + 1;
    len[0] = (unsigned char)(n >> 24);
    len[1] = (unsigned char)(n >> 16);
    len[2] = (unsigned char)(n >> 8);
    len[3] = (unsigned char)n;
}

static bool is_json(const char *content_type) { return !content_type || strstr(content_type, "json"); }

static bool is_msgpack(const char *content_type) { return content_type && strstr(content_type, "msgpack"); }

// The handler's body: embedded when it is in the reply's format (a JSON
// line's newlines blanked), else a string of its bytes (metrics, a JSON
// document on a MessagePack connection), nothing as null.
static void put_body(cqp_writer *w, const cqd_response *resp)
{
    cqp_key(w, "body");
    if (resp->body.len == 0)
        cqp_null(w);
    else if (w->format == CQP_MSGPACK && is_msgpack(resp->content_type))
        cqp_raw(w, resp->body.data, resp->body.len);
    else if (w->format != CQP_MSGPACK && is_json(resp->content_type))
        put_raw(w, resp->body.data, resp->body.len);
    else
        cqp_strn(w, resp->body.data, resp->body.len);
}

// What HTTP carries in response headers, where it applies.
static void put_headers(cqp_writer *w, const cqd_response *resp)
{
    bool allow = resp->status == 405 && resp->allow[0];
    bool retry = (resp->status == 429 || resp->status == 503) && resp->retry_after > 0;
    if (!allow && !retry)
        return;
    cqp_key(w, "headers");
    cqp_obj_begin(w);
    if (allow) {
        cqp_key(w, "Allow");
        cqp_str(w, resp->allow);
    }
    if (retry) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", resp->retry_after);
        cqp_key(w, "Retry-After");
        cqp_str(w, secs);
    }
    cqp_obj_end(w);
}

// The reply to a request whose response could not be built.
static void reply_out_of_memory(cqp_buf *out, cqp_format f, const char *id, size_t id_len)
{
    cqp_writer w;
    size_t at = out->len;
    cqp_problem p;
    cqp_fail(&p, CQP_P_BUSY, NULL, "out of memory");
    begin_reply(&w, out, f, id, id_len, cqp_problem_status(p.kind));
    cqp_key(&w, "headers");
    cqp_obj_begin(&w);
    cqp_key(&w, "Retry-After");
    cqp_str(&w, "1");
    cqp_obj_end(&w);
    cqp_key(&w, "body");
    cqp_write_problem(&w, &p);
    end_reply(&w, at);
}

void cqd_stream_reply(cqp_buf *out, cqp_format f, const char *id, size_t id_len, const cqd_response *resp)
{
    if (resp->body.oom) {
        reply_out_of_memory(out, f, id, id_len);
        return;
    }
    cqp_writer w;
    size_t at = out->len;
    begin_reply(&w, out, f, id, id_len, resp->status);
    if (resp->request_id[0]) {
        cqp_key(&w, "request_id");
        cqp_str(&w, resp->request_id);
    }
    put_headers(&w, resp);
    put_body(&w, resp);
    end_reply(&w, at);
}

void cqd_stream_refuse(cqd_server *srv, cqp_format f, const char *id, size_t id_len, const char *request_id,
                       uint64_t arrived_ns, const cqp_problem *p, cqp_buf *out)
{
    // No method or path: a line the transport could not read as a request
    // is counted as "unmatched", whatever part of it did decode.
    cqd_request req = {.transport = "stream", .request_id = request_id, .arrived_ns = arrived_ns};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_refuse(srv, &req, p->kind, p->detail, &resp);
    // cqd_refuse's problem has no pointer; the envelope's may have one.
    cqp_buf_reset(&resp.body);
    cqp_writer w;
    cqp_writer_init_format(&w, &resp.body, f, false);
    cqp_write_problem(&w, p);
    resp.content_type = cqp_format_problem_type(f);
    cqd_stream_reply(out, f, id, id_len, &resp);
    cqd_response_free(&resp);
}

/// Answers a request that decoded, unless too many are in flight, with an
/// answer body of at most max_response bytes (0: --max-response); in
/// the connection's format, its body already opened (a JSON tree, or a
/// MessagePack view the frame's check covered).
static void answer_request(cqd_server *srv, cqp_format f, const cqd_envelope *env, uint64_t arrived_ns,
                           size_t max_response, cqp_buf *out)
{
    cqd_request req = {
        .transport = "stream",
        .method = env->method,
        .path = env->path,
        .query = env->query,
        .authorization = env->authorization,
        .request_id = env->request_id,
        .body = env->body,
        .body_len = env->body_len,
        .body_format = f,
        .body_value = env->body_value,
        .accept = f,
        .allow_pretty = false,
        .arrived_ns = arrived_ns,
        .max_response = max_response,
    };
    cqd_response resp;
    cqd_response_init(&resp);
    // The request is already read: admission bounds the work, not the bytes.
    if (req.method && req.path && cqd_route_always_admitted(req.method, req.path)) {
        cqd_handle(srv, &req, &resp);
    } else if (cqd_admit_enter(&srv->admit)) {
        cqd_handle(srv, &req, &resp);
        cqd_admit_leave(&srv->admit);
    } else {
        cqd_refuse(srv, &req, CQP_P_BUSY, "too many requests in flight; retry shortly", &resp);
    }
    if (req.method && strcmp(req.method, "HEAD") == 0) // GET's status and headers, as over HTTP
        cqp_buf_free(&resp.body);
    cqd_stream_reply(out, f, env->id, env->id_len, &resp);
    cqd_response_free(&resp);
}

// An envelope refused when the request's memory ran out: past
// --max-request-memory it is the request's size (413), else the machine's
// (503, retry). Anything else keeps its problem.
static void parse_refused(const cqd_thread *self, cqd_server *srv, cqp_format f, cqp_problem *p)
{
    bool mp = f == CQP_MSGPACK;
    if (self && self->json.over_budget && mp)
        cqp_fail(p, CQP_P_TOO_LARGE, NULL, "the frame needs more than %zu bytes to check (--max-request-memory)",
                 srv->cfg.max_request_memory);
    else if (self && self->json.over_budget)
        cqp_fail(p, CQP_P_TOO_LARGE, NULL, "the line decodes to more than %zu bytes of JSON values (--max-request-memory)",
                 srv->cfg.max_request_memory);
    else if (self && self->json.failed)
        cqp_fail(p, CQP_P_BUSY, NULL, "out of memory decoding the %s", mp ? "frame" : "line");
}

void cqd_stream_answer_within(cqd_server *srv, cqp_format f, const char *request, size_t len, uint64_t arrived_ns,
                              size_t max_response, cqp_buf *out)
{
    // The line's tree (or the frame check's scratch) is held to the request
    // memory budget, in the arena the pipeline then enters again (nested,
    // so the budget is shared and the body, decoded from this tree, is
    // charged once).
    cqd_thread *self = cqd_thread_self(srv);
    cqd_json_arena *previous = self ? cqd_json_arena_enter(&self->json, srv->cfg.max_request_memory) : NULL;
    cqd_envelope env;
    cqp_problem p;
    bool mp = f == CQP_MSGPACK;
    int rc = mp ? cqd_envelope_parse_frame(request, len, &env, &p) : cqd_envelope_parse(request, len, &env, &p);
    if (rc == 0) {
        answer_request(srv, f, &env, arrived_ns, max_response, out);
    } else {
        parse_refused(self, srv, f, &p);
        cqd_log(&srv->log, CQD_LOG_DEBUG, "stream: refused request %s: %s", mp ? "frame" : "line", p.detail);
        cqd_stream_refuse(srv, f, env.id, env.id_len, env.request_id, arrived_ns, &p, out);
    }
    cqd_envelope_free(&env);
    if (self)
        cqd_json_arena_leave(&self->json, previous);
}

void cqd_stream_answer(cqd_server *srv, cqp_format f, const char *request, size_t len, uint64_t arrived_ns,
                       cqp_buf *out)
{
    cqd_stream_answer_within(srv, f, request, len, arrived_ns, 0, out);
}
