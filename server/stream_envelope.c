/// @file server/stream_envelope.c
/// The stream's request and reply lines (API.md section 4): decoding the
/// envelope {"id", "method", "path", "headers", "body"} into a cqd_request
/// and writing {"id", "status", "request_id", "body"} back; a line refused
/// before the pipeline is counted and logged through cqd_refuse.
///
/// The "id" and "body" members are taken verbatim from the line (located by
/// a scan of the already validated text) rather than re-serialised: the id
/// echoes byte for byte, and the body a recording keeps is exactly what the
/// client sent, within the same --max-body as the line. The pipeline
/// decodes the body's tree from the line's one parse.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cqp/scan.h"
#include "refuse.h"
#include "router.h"
#include "stream_internal.h"
#include "thread.h"

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
// line (jansson accepted it, so the scan cannot fail).
static void find_members(const char *s, size_t n, cqd_envelope *env)
{
    cqp_scan_object(s, n, take_id_and_body, env, NULL);
}

static int get_string(const json_t *root, const char *name, const char **out, cqp_problem *p)
{
    const json_t *v = json_object_get(root, name);
    char ptr[16] = "";
    cqp_pointer_append(ptr, sizeof ptr, name);
    if (!v)
        return cqp_fail(p, CQP_P_MISSING_FIELD, ptr, "%s is required", name);
    if (!json_is_string(v))
        return cqp_fail(p, CQP_P_BAD_TYPE, ptr, "%s must be a string", name);
    *out = json_string_value(v);
    return 0;
}

// "headers": {name: string}; Authorization and X-Request-Id are kept
// (names case-insensitive), other headers are accepted and ignored.
static int get_headers(const json_t *root, cqd_envelope *env, cqp_problem *p)
{
    const json_t *h = json_object_get(root, "headers");
    if (!h || json_is_null(h))
        return 0;
    if (!json_is_object(h))
        return cqp_fail(p, CQP_P_BAD_TYPE, "/headers", "headers must be an object of strings");
    const char *name;
    const json_t *v;
    json_object_foreach ((json_t *)h, name, v) {
        char ptr[sizeof p->pointer] = "/headers";
        cqp_pointer_append(ptr, sizeof ptr, name);
        if (!json_is_string(v))
            return cqp_fail(p, CQP_P_BAD_TYPE, ptr, "header %.64s must be a string", name);
        const char **slot = strcasecmp(name, "authorization") == 0  ? &env->authorization
                            : strcasecmp(name, "x-request-id") == 0 ? &env->request_id
                                                                     : NULL;
        if (!slot)
            continue;
        if (*slot)
            return cqp_fail(p, CQP_P_BAD_VALUE, ptr, "header %.64s is given twice", name);
        *slot = json_string_value(v);
    }
    return 0;
}

// Copies the texts a request needs out of env->root and frees the tree:
// the handler then runs with nothing of the envelope alive but the line.
static int keep_texts(cqd_envelope *env, const char *path, cqp_problem *p)
{
    const char *src[] = {env->method, path, env->authorization, env->request_id};
    enum { N = sizeof src / sizeof src[0] };
    size_t len[N], total = 0;
    for (int i = 0; i < N; i++) {
        len[i] = src[i] ? strlen(src[i]) + 1 : 0;
        total += len[i];
    }
    env->copy = malloc(total);
    if (!env->copy)
        return cqp_fail(p, CQP_P_BUSY, NULL, "out of memory");
    char *dst[N];
    char *at = env->copy;
    for (int i = 0; i < N; i++) {
        dst[i] = src[i] ? memcpy(at, src[i], len[i]) : NULL;
        at += len[i];
    }
    env->method = dst[0];
    env->path = dst[1];
    env->authorization = dst[2];
    env->request_id = dst[3];
    char *q = strchr(dst[1], '?');
    if (q) {
        *q = '\0';
        env->query = q + 1;
    }
    cqd_path_unescape(dst[1]); // as HTTP's path is: the same path, the same answer
    json_decref(env->root);
    env->root = NULL;
    return 0;
}

int cqd_envelope_parse(const char *line, size_t len, cqd_envelope *env, cqp_problem *p)
{
    memset(env, 0, sizeof *env);
    env->root = cqp_parse(line, len, p);
    if (!env->root)
        return -1;
    if (!json_is_object(env->root))
        return cqp_fail(p, CQP_P_BAD_TYPE, NULL, "a request line must be a JSON object");
    find_members(line, len, env);
    json_t *body = json_object_get(env->root, "body");
    if (json_is_null(body)) {
        env->body = NULL; // "body": null is no body, as a GET sends none
        env->body_len = 0;
    } else if (body) {
        env->body_tree = json_incref(body);
    }
    // Out of the root, so the member check below sees only the others.
    json_object_del(env->root, "body");
    json_object_del(env->root, "id");

    static const char *const known[] = {"method", "path", "headers"};
    const char *name;
    json_t *v;
    json_object_foreach (env->root, name, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(name, known[k]) != 0)
            k++;
        if (k == sizeof known / sizeof known[0]) {
            char ptr[sizeof p->pointer] = "";
            cqp_pointer_append(ptr, sizeof ptr, name);
            return cqp_fail(p, CQP_P_UNKNOWN_FIELD, ptr, "unknown member %.64s (expected id, method, path, headers, body)",
                            name);
        }
    }
    const char *path;
    if (get_string(env->root, "method", &env->method, p) != 0 || get_string(env->root, "path", &path, p) != 0 ||
        get_headers(env->root, env, p) != 0)
        return -1;
    return keep_texts(env, path, p);
}

void cqd_envelope_free(cqd_envelope *env)
{
    json_decref(env->root);
    json_decref(env->body_tree);
    free(env->copy);
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

static void begin_reply(cqp_writer *w, cqp_buf *out, const char *id, size_t id_len, int status)
{
    cqp_writer_init(w, out, false);
    cqp_obj_begin(w);
    cqp_key(w, "id");
    if (id)
        put_raw(w, id, id_len);
    else
        cqp_null(w);
    cqp_key(w, "status");
    cqp_int(w, status);
}

static void end_reply(cqp_writer *w)
{
    cqp_obj_end(w);
    cqp_buf_append(w->buf, "\n", 1);
}

static bool is_json(const char *content_type) { return !content_type || strstr(content_type, "json"); }

void cqd_stream_reply(cqp_buf *out, const char *id, size_t id_len, const cqd_response *resp)
{
    cqp_writer w;
    if (resp->body.oom) {
        cqp_problem p;
        cqp_fail(&p, CQP_P_BUSY, NULL, "out of memory");
        begin_reply(&w, out, id, id_len, cqp_problem_status(p.kind));
        cqp_key(&w, "headers");
        cqp_obj_begin(&w);
        cqp_key(&w, "Retry-After");
        cqp_str(&w, "1");
        cqp_obj_end(&w);
        cqp_key(&w, "body");
        cqp_write_problem(&w, &p);
        end_reply(&w);
        return;
    }
    begin_reply(&w, out, id, id_len, resp->status);
    if (resp->request_id[0]) {
        cqp_key(&w, "request_id");
        cqp_str(&w, resp->request_id);
    }
    // What HTTP carries in response headers, where it applies.
    bool allow = resp->status == 405 && resp->allow[0];
    bool retry = (resp->status == 429 || resp->status == 503) && resp->retry_after > 0;
    if (allow || retry) {
        cqp_key(&w, "headers");
        cqp_obj_begin(&w);
        if (allow) {
            cqp_key(&w, "Allow");
            cqp_str(&w, resp->allow);
        }
        if (retry) {
            char secs[16];
            snprintf(secs, sizeof secs, "%d", resp->retry_after);
            cqp_key(&w, "Retry-After");
            cqp_str(&w, secs);
        }
        cqp_obj_end(&w);
    }
    cqp_key(&w, "body");
    if (resp->body.len == 0)
        cqp_null(&w);
    else if (is_json(resp->content_type))
        put_raw(&w, resp->body.data, resp->body.len);
    else
        cqp_str(&w, resp->body.data);
    end_reply(&w);
}

void cqd_stream_refuse(cqd_server *srv, const char *id, size_t id_len, const char *request_id,
                       const cqp_problem *p, cqp_buf *out)
{
    // No method or path: a line the transport could not read as a request
    // is counted as "unmatched", whatever part of it did decode.
    cqd_request req = {.transport = "stream", .request_id = request_id};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_refuse(srv, &req, p->kind, p->detail, &resp);
    // cqd_refuse's problem has no pointer; the envelope's may have one.
    cqp_buf_reset(&resp.body);
    cqp_writer w;
    cqp_writer_init(&w, &resp.body, false);
    cqp_write_problem(&w, p);
    cqd_stream_reply(out, id, id_len, &resp);
    cqd_response_free(&resp);
}

/// Answers a line that decoded as a request, unless too many are in flight.
static void answer_request(cqd_server *srv, const cqd_envelope *env, cqp_buf *out)
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
        .body_value = cqp_value_json(env->body_tree),
        .allow_pretty = false,
    };
    cqd_response resp;
    cqd_response_init(&resp);
    // The line is already read: admission bounds the work, not the bytes.
    if (req.method && req.path && cqd_route_always_admitted(req.method, req.path)) {
        cqd_handle(srv, &req, &resp);
    } else if (cqd_admit_enter(&srv->admit)) {
        cqd_handle(srv, &req, &resp);
        cqd_admit_leave(&srv->admit);
    } else {
        cqd_refuse(srv, &req, CQP_P_BUSY, "too many requests in flight; retry shortly", &resp);
    }
    cqd_stream_reply(out, env->id, env->id_len, &resp);
    cqd_response_free(&resp);
}

void cqd_stream_answer(cqd_server *srv, const char *line, size_t len, cqp_buf *out)
{
    // The line's tree is held to the request memory budget, in the arena
    // the pipeline then enters again (nested, so the budget is shared and
    // the body, decoded from this tree, is charged once).
    cqd_thread *self = cqd_thread_self(srv);
    cqd_json_arena *previous = self ? cqd_json_arena_enter(&self->json, srv->cfg.max_request_memory) : NULL;
    cqd_envelope env;
    cqp_problem p;
    if (cqd_envelope_parse(line, len, &env, &p) == 0) {
        answer_request(srv, &env, out);
        cqd_envelope_free(&env);
        if (self)
            cqd_json_arena_leave(&self->json, previous);
        return;
    }
    if (self && self->json.over_budget)
        cqp_fail(&p, CQP_P_TOO_LARGE, NULL, "the line decodes to more than %zu bytes of JSON values (--max-request-memory)",
                 srv->cfg.max_request_memory);
    else if (self && self->json.failed)
        cqp_fail(&p, CQP_P_BUSY, NULL, "out of memory decoding the line");
    cqd_log(&srv->log, CQD_LOG_DEBUG, "stream: refused request line: %s", p.detail);
    cqd_stream_refuse(srv, env.id, env.id_len, env.request_id, &p, out);
    cqd_envelope_free(&env);
    if (self)
        cqd_json_arena_leave(&self->json, previous);
}
