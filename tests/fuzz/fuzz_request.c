/* Fuzz target: the request pipeline in process (docs/FUZZING.md).
 *
 * Input: byte 0 picks the method (the API's four, HEAD, and a bogus one);
 * then the target up to the first '\n' (split at '?' into path and query);
 * the rest is the body. The request runs through cqd_handle and, as an
 * envelope line, through the stream transport's cqd_stream_answer; the raw
 * input is also answered as a stream line. Whatever arrives, the answer
 * must be one the API documents: an allowed status, a JSON body (jansson
 * refuses NaN and Infinity, so a parse also proves there is none), and a
 * problem+json body with a urn:collisiond:problem: type for an error. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_TARGET "fuzz_request"
#include "api/router.h"
#include "fuzz_check.h"
#include "fuzz_server.h"
#include "net/stream_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "HEAD", "BREW"};
#define METHOD_COUNT ((int)(sizeof methods / sizeof methods[0]))

#define PROBLEM_PREFIX "urn:collisiond:problem:"

/* The arena's export with "worlds: N" after it: what a rejected request
 * must leave as it was. Owned by the caller (cqp_buf_free). */
static cqp_buf snapshot(cqd_server *srv)
{
    cqp_buf b = {0};
    cqd_request req = {.transport = "fuzz", .method = "GET", .path = "/v1/worlds/arena/export"};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(srv, &req, &resp);
    cqp_buf_printf(&b, "%d ", resp.status);
    cqp_buf_append(&b, resp.body.data, resp.body.len);
    cqd_response_free(&resp);
    int count = 0;
    cqd_world_info *worlds;
    check(cqd_registry_list(srv->worlds, &worlds, &count) == 0, "out of memory listing the worlds");
    free(worlds);
    cqp_buf_printf(&b, " worlds: %d", count);
    check(!b.oom, "out of memory");
    return b;
}

/* The one server every run uses (fuzz_server.h). Made on first use
 * (libFuzzer has no setup hook in C), when *initial gets the snapshot of
 * the state every run starts from. */
static cqd_server *server(const cqp_buf **initial)
{
    static cqd_server srv;
    static cqp_buf start;
    static int ready;
    *initial = &start;
    if (ready)
        return &srv;
    fuzz_server_init(&srv, NULL);
    start = snapshot(&srv);
    ready = 1;
    return &srv;
}

static int allowed_status(int status)
{
    static const int ok[] = {200, 201, 204, 301, 400, 401, 404, 405, 409, 413, 422, 429, 431, 503};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (status == ok[i])
            return 1;
    return 0;
}

static void check_response(const cqd_response *resp)
{
    check(allowed_status(resp->status), "status outside the API's set");
    check(resp->content_type != NULL || resp->body.len == 0, "a body without a content type");
    if (resp->status == 204) {
        check(resp->body.len == 0, "a 204 with a body");
        return;
    }
    if (resp->status == 503 || resp->status == 429)
        check(resp->retry_after > 0, "a 503/429 without Retry-After");
    if (resp->status == 405)
        check(resp->allow[0] != '\0', "a 405 without Allow");
    int problem = resp->status >= 400;
    if (problem)
        check(strcmp(resp->content_type, "application/problem+json") == 0, "an error that is not problem+json");
    if (strcmp(resp->content_type, "application/json") != 0 && !problem)
        return; // /metrics is Prometheus text
    check(resp->body.len > 0, "an empty JSON body");
    json_error_t err;
    json_t *v = json_loadb(resp->body.data, resp->body.len, 0, &err);
    if (!v)
        fprintf(stderr, "fuzz_request: %s in %.*s\n", err.text, (int)(resp->body.len > 400 ? 400 : resp->body.len),
                resp->body.data);
    check(v != NULL, "a body that is not JSON");
    check_finite(v, "non-finite number in a response");
    if (problem) {
        const char *type = json_string_value(json_object_get(v, "type"));
        check(type && strncmp(type, PROBLEM_PREFIX, strlen(PROBLEM_PREFIX)) == 0, "a problem without its type");
        check(json_integer_value(json_object_get(v, "status")) == resp->status, "a problem's status differs");
    }
    json_decref(v);
}

/* Asserts out holds exactly one line, a JSON object with an integer
 * status; returns that object (a new reference). */
static json_t *check_line(const cqp_buf *out)
{
    check(out->len > 1 && out->data[out->len - 1] == '\n', "a stream reply that is not one line");
    check(memchr(out->data, '\n', out->len - 1) == NULL, "a stream reply of several lines");
    json_error_t err;
    json_t *v = json_loadb(out->data, out->len - 1, 0, &err);
    check(json_is_object(v), "a stream reply that is not a JSON object");
    json_t *status = json_object_get(v, "status");
    check(json_is_integer(status) && allowed_status((int)json_integer_value(status)),
          "a stream reply without an allowed status");
    check_finite(v, "non-finite number in a response");
    return v;
}

/* Answers one stream line and checks the reply; returns the reply as a
 * JSON object (a new reference). */
static json_t *answer_line(cqd_server *srv, const char *line, size_t len)
{
    cqp_buf out = {0};
    cqd_stream_answer(srv, CQP_JSON, line, len, 0, &out);
    check(!out.oom, "out of memory");
    json_t *reply = check_line(&out);
    cqp_buf_free(&out);
    return reply;
}

/* True when the stream envelope built from this request asks the pipeline
 * exactly what the HTTP request asks: a body that is there, is JSON (a
 * line must be JSON as a whole, where HTTP ignores the body of a route
 * that takes none), has no newline (the envelope turns it into a space)
 * and is not null (the envelope's "no body"), and a target of
 * printable ASCII (over HTTP any bytes up to a NUL; in the envelope's JSON
 * string a NUL or invalid UTF-8 refuses the line). */
static bool same_request(const char *target, size_t target_len, const char *body, size_t body_len)
{
    if (!body || body_len == 0 || memchr(body, '\n', body_len))
        return false;
    for (size_t i = 0; i < target_len; i++)
        if (target[i] < 0x20 || target[i] > 0x7e)
            return false;
    json_t *v = json_loadb(body, body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    bool same = v && !json_is_null(v);
    json_decref(v);
    return same;
}

/* Appends s[0..n) to b as the contents of a JSON string. */
static void put_json_text(cqp_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            cqp_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            cqp_buf_printf(b, "\\u%04x", c);
        else
            cqp_buf_append(b, &s[i], 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const cqp_buf *initial;
    cqd_server *srv = server(&initial);
    fuzz_server_reset(srv);
    const char *method = methods[data[0] % METHOD_COUNT];
    const char *rest = (const char *)data + 1;
    size_t rest_len = size - 1;
    const char *nl = memchr(rest, '\n', rest_len);
    size_t target_len = nl ? (size_t)(nl - rest) : rest_len;
    const char *body = nl ? nl + 1 : NULL;
    size_t body_len = nl ? rest_len - target_len - 1 : 0;

    // The target as the transports give it: NUL-terminated, query split off.
    char *target = malloc(target_len + 1);
    if (!target)
        return 0;
    memcpy(target, rest, target_len);
    target[target_len] = '\0';
    char *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    cqd_path_unescape(target); // as MHD's callback and the stream envelope do

    cqd_request req = {
        .transport = "fuzz",
        .method = method,
        .path = target,
        .query = q,
        .body = body,
        .body_len = body_len,
        .allow_pretty = true,
    };
    bool comparable = same_request(rest, target_len, body, body_len);
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(srv, &req, &resp);
    check_response(&resp);
    if (resp.status >= 400) {
        // A rejected request changes nothing (docs/API.md, section 8).
        cqp_buf now = snapshot(srv);
        check(now.len == initial->len && memcmp(now.data, initial->data, now.len) == 0,
              "a rejected request changed the worlds");
        cqp_buf_free(&now);
    }
    int http_status = resp.status;
    // The stateless pair routes answer the same bytes over both transports.
    json_t *http_body = NULL;
    if (comparable && http_status == 200 && !q && (!strcmp(target, "/v1/pair") || !strcmp(target, "/v1/pairs")))
        http_body = json_loadb(resp.body.data, resp.body.len, 0, NULL);
    cqd_response_free(&resp);

    // The same request as a stream envelope; a newline cannot be in a line,
    // and outside strings it is only whitespace.
    cqp_buf line = {0};
    cqp_buf_printf(&line, "{\"id\":1,\"method\":\"%s\",\"path\":\"", method);
    put_json_text(&line, rest, target_len);
    cqp_buf_puts(&line, "\"");
    if (body) {
        cqp_buf_puts(&line, ",\"body\":");
        size_t at = line.len;
        cqp_buf_append(&line, body, body_len);
        for (size_t i = at; i < line.len; i++)
            if (line.data[i] == '\n')
                line.data[i] = ' ';
    }
    cqp_buf_puts(&line, "}");
    if (!line.oom) {
        // From the same state: the stream must answer as HTTP did.
        fuzz_server_reset(srv);
        json_t *reply = answer_line(srv, line.data, line.len);
        if (comparable)
            check(json_integer_value(json_object_get(reply, "status")) == http_status,
                  "the stream and HTTP answer the same request with different statuses");
        if (http_body)
            check(json_equal(json_object_get(reply, "body"), http_body),
                  "the stream and HTTP answer a pair request differently");
        json_decref(reply);
    }
    json_decref(http_body);
    cqp_buf_free(&line);

    // The raw input as a line, up to its first newline.
    const char *raw_nl = memchr(data, '\n', size);
    size_t raw_len = raw_nl ? (size_t)(raw_nl - (const char *)data) : size;
    if (raw_len > 0) // the transport skips empty lines
        json_decref(answer_line(srv, (const char *)data, raw_len));

    free(target);
    return 0;
}
