/* The stream's refusals of bad lines and frames, and its answers within
 * a tighter limit (--max-stream-reply-total), answered and counted by a
 * real (socket-less) server. Expected values are written by hand from
 * docs/API.md section 11, lengths from the OpenAPI document. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <msgpuck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/openapi.h"
#include "config_util.h"
#include "cqp/decode.h"
#include "cqp/scan.h"
#include "net/stream_internal.h"
#include "ops/metrics.h"
#include "prom_oracle.h"
#include "stream_keys.h"
#include "stream_mp.h"
#include "testutil.h"

Suite *stream_server_suite(void);

static cqd_server srv;
static FILE *srv_log;

static void server_setup(void)
{
    cqd_config cfg = cu_default_config();
    cfg.log_level = CQD_LOG_INFO;
    cfg.access_log = CQD_ACCESS_ALL; /* the refusals' access lines are read back */
    ck_assert_int_eq(cqd_server_init(&srv, &cfg), 0);
    srv_log = tmpfile();
    ck_assert_ptr_nonnull(srv_log);
    srv.log.fd = fileno(srv_log);
    atomic_store(&srv.state, CQD_READY);
}

static void server_teardown(void)
{
    fclose(srv_log);
    cqd_server_destroy(&srv);
}

/* The reply line in out, parsed; checks it is one line. */
static json_t *reply_of(const cqp_buf *out)
{
    ck_assert_uint_gt(out->len, 0);
    ck_assert_int_eq(out->data[out->len - 1], '\n');
    ck_assert_ptr_null(memchr(out->data, '\n', out->len - 1));
    json_error_t err;
    json_t *v = json_loadb(out->data, out->len, 0, &err);
    ck_assert_msg(v != NULL, "reply is not JSON: %s", err.text);
    return v;
}

static void expect_problem(json_t *reply, int status, const char *slug, const char *pointer)
{
    ck_assert_int_eq(json_integer_value(json_object_get(reply, "status")), status);
    json_t *body = json_object_get(reply, "body");
    ck_assert_int_eq(json_integer_value(json_object_get(body, "status")), status);
    char type[96];
    snprintf(type, sizeof type, "urn:collisiond:problem:%s", slug);
    ck_assert_str_eq(json_string_value(json_object_get(body, "type")), type);
    if (pointer)
        ck_assert_str_eq(json_string_value(json_object_get(body, "pointer")), pointer);
    else
        ck_assert_ptr_null(json_object_get(body, "pointer"));
}

/* collisiond_requests_total{method, route, status} as /metrics shows it (0 when absent). */
static double requests_total(const char *method, const char *route, const char *status)
{
    cqp_buf text = {0};
    cqd_metrics_render(&srv, &text);
    ck_assert(!text.oom);
    prom pr;
    ck_assert_int_eq(prom_parse(&pr, text.data), 0);
    char labels[128];
    snprintf(labels, sizeof labels, "method=%s,route=%s,status=%s", method, route, status);
    double v = prom_value(&pr, "collisiond_requests_total", labels);
    prom_free(&pr);
    cqp_buf_free(&text);
    return isnan(v) ? 0 : v;
}

/* The text the server logged so far. */
static void log_text(char *out, size_t size)
{
    fflush(srv_log);
    long n = ftell(srv_log);
    ck_assert_int_ge(n, 0);
    rewind(srv_log);
    size_t got = fread(out, 1, size - 1, srv_log);
    out[got] = '\0';
    fseek(srv_log, 0, SEEK_END);
}

/* An answer limit tighter than --max-response: the OpenAPI document's
 * answer is its cqd_openapi_len bytes, so a limit of 4 KiB makes it a 503
 * with Retry-After naming that length, no limit lets it through, and past
 * --max-response itself it stays the 422 that never goes away. */
START_TEST(answers_within_a_tighter_limit)
{
    static const char line[] = "{\"id\":7,\"method\":\"GET\",\"path\":\"/v1/openapi.json\"}";
    char want[64];
    snprintf(want, sizeof want, "would be %zu bytes", (size_t)cqd_openapi_len);
    cqp_buf out = {0};
    cqd_stream_answer_within(&srv, CQP_JSON, line, sizeof line - 1, 0, 4096, &out);
    json_t *r = reply_of(&out);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 7);
    expect_problem(r, 503, "unavailable", NULL);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "headers"), "Retry-After")), "1");
    const char *detail = json_string_value(json_object_get(json_object_get(r, "body"), "detail"));
    ck_assert_ptr_nonnull(strstr(detail, want));
    ck_assert_ptr_nonnull(strstr(detail, "--max-stream-reply-total"));
    json_decref(r);

    cqp_buf_reset(&out);
    cqd_stream_answer_within(&srv, CQP_JSON, line, sizeof line - 1, 0, 0, &out);
    r = reply_of(&out);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "status")), 200);
    json_decref(r);

    srv.cfg.max_response = 8192; /* below what config allows, to reach the branch cheaply */
    cqp_buf_reset(&out);
    cqd_stream_answer_within(&srv, CQP_JSON, line, sizeof line - 1, 0, 4096, &out);
    r = reply_of(&out);
    expect_problem(r, 422, "over-limit", NULL);
    detail = json_string_value(json_object_get(json_object_get(r, "body"), "detail"));
    ck_assert_ptr_nonnull(strstr(detail, want));
    ck_assert_ptr_nonnull(strstr(detail, "at most 8192 (--max-response)"));
    json_decref(r);
    cqp_buf_free(&out);
}
END_TEST

/* A change is never answered "retry" once made: a mesh PUT whose answer
 * (the stored mesh: 400 vertices, counted by hand) is far past a 4 KiB
 * limit is answered whole, while the GET of the same shape is a 503. */
START_TEST(changes_answered_whole_within_a_tighter_limit)
{
    static const char world[] = "{\"id\":1,\"method\":\"PUT\",\"path\":\"/v1/worlds/w\",\"body\":{}}";
    cqp_buf line = {0}, out = {0};
    cqd_stream_answer_within(&srv, CQP_JSON, world, sizeof world - 1, 0, 4096, &out);
    json_t *r = reply_of(&out);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "status")), 201);
    json_decref(r);
    cqp_buf_puts(&line, "{\"id\":2,\"method\":\"PUT\",\"path\":\"/v1/worlds/w/shapes/m\",\"body\":"
                        "{\"shape\":{\"type\":\"mesh\",\"vertices\":[");
    char item[64];
    for (int i = 0; i < 200; i++) {
        snprintf(item, sizeof item, "%s[%d,0,0],[%d,1,0]", i ? "," : "", i, i);
        cqp_buf_puts(&line, item);
    }
    cqp_buf_puts(&line, "],\"triangles\":[");
    for (int i = 0; i < 199; i++) {
        snprintf(item, sizeof item, "%s[%d,%d,%d]", i ? "," : "", 2 * i, 2 * i + 2, 2 * i + 1);
        cqp_buf_puts(&line, item);
    }
    cqp_buf_puts(&line, "]}}}");
    ck_assert(!line.oom);
    cqp_buf_reset(&out);
    cqd_stream_answer_within(&srv, CQP_JSON, line.data, line.len, 0, 4096, &out);
    r = reply_of(&out);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "status")), 201);
    json_t *stored = json_object_get(json_object_get(r, "body"), "shape");
    ck_assert_uint_eq(json_array_size(json_object_get(stored, "vertices")), 400);
    json_decref(r);

    static const char get[] = "{\"id\":3,\"method\":\"GET\",\"path\":\"/v1/worlds/w/shapes/m\"}";
    cqp_buf_reset(&out);
    cqd_stream_answer_within(&srv, CQP_JSON, get, sizeof get - 1, 0, 4096, &out);
    r = reply_of(&out);
    expect_problem(r, 503, "unavailable", NULL);
    json_decref(r);
    cqp_buf_free(&line);
    cqp_buf_free(&out);
}
END_TEST

START_TEST(refusals_counted_and_answered)
{
    cqp_buf out = {0};
    /* An envelope error: the id and the pointer survive, the request id is
     * the header's, and it is counted and logged as an unmatched 400. */
    const char *line = "{\"id\":[5],\"method\":\"GET\",\"path\":\"/healthz\","
                       "\"headers\":{\"X-Request-Id\":\"tick-1\",\"Accept\":2}}";
    cqd_stream_answer(&srv, CQP_JSON, line, strlen(line), 0, &out);
    json_t *r = reply_of(&out);
    json_t *id = json_object_get(r, "id");
    ck_assert(json_is_array(id) && json_array_size(id) == 1 &&
              json_integer_value(json_array_get(id, 0)) == 5);
    ck_assert_str_eq(json_string_value(json_object_get(r, "request_id")), "tick-1");
    expect_problem(r, 400, "wrong-type", "/headers/Accept");
    json_decref(r);
    ck_assert(requests_total("other", "unmatched", "400") == 1);
    ck_assert(requests_total("GET", "/healthz", "200") == 0);

    /* Not JSON: a null id and a generated request id. */
    cqp_buf_reset(&out);
    cqd_stream_answer(&srv, CQP_JSON, "{\"id\": 4,", 9, 0, &out);
    r = reply_of(&out);
    ck_assert(json_is_null(json_object_get(r, "id")));
    ck_assert_uint_gt(strlen(json_string_value(json_object_get(r, "request_id"))), 0);
    expect_problem(r, 400, "malformed-json", NULL);
    json_decref(r);
    ck_assert(requests_total("other", "unmatched", "400") == 2);

    /* The overlong line's 413, made without a line. */
    cqp_buf_reset(&out);
    cqp_problem p;
    cqp_fail(&p, CQP_P_TOO_LARGE, NULL, "too long");
    cqd_stream_refuse(&srv, CQP_JSON, NULL, 0, NULL, 0, &p, &out);
    r = reply_of(&out);
    ck_assert(json_is_null(json_object_get(r, "id")));
    expect_problem(r, 413, "body-too-large", NULL);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "body"), "detail")), "too long");
    json_decref(r);
    ck_assert(requests_total("other", "unmatched", "413") == 1);

    /* A good line is counted on its route, not as a refusal. */
    cqp_buf_reset(&out);
    line = "{\"id\":1,\"method\":\"GET\",\"path\":\"/healthz\"}";
    cqd_stream_answer(&srv, CQP_JSON, line, strlen(line), 0, &out);
    r = reply_of(&out);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "status")), 200);
    json_decref(r);
    ck_assert(requests_total("GET", "/healthz", "200") == 1);
    ck_assert(requests_total("other", "unmatched", "400") == 2);

    /* Every refusal has its access-log line. */
    char text[8192];
    log_text(text, sizeof text);
    int lines = 0;
    for (const char *at = text; (at = strstr(at, "\"transport\":\"stream\"")); at++)
        lines++;
    ck_assert_int_eq(lines, 4);
    ck_assert_ptr_nonnull(strstr(text, "\"status\":413"));
    ck_assert_ptr_nonnull(strstr(text, "\"request_id\":\"tick-1\""));
    cqp_buf_free(&out);
}
END_TEST

START_TEST(refusals_in_msgpack)
{
    /* A MessagePack connection's refusal is a frame, counted and logged as
     * a line's is; the problem's pointer is kept. */
    cqp_buf out = {0};
    cqp_problem p;
    cqp_fail(&p, CQP_P_BAD_MSGPACK, "/headers/x", "framing lost");
    cqd_stream_refuse(&srv, CQP_MSGPACK, "\xa1k", 2, "tick-2", 0, &p, &out);
    const char *env = smp_frame_of(&out, 0);
    ck_assert_str_eq(smp_text(smp_member(env, "id")), "k");
    ck_assert_int_eq(smp_integer(smp_member(env, "status")), 400);
    ck_assert_str_eq(smp_text(smp_member(env, "request_id")), "tick-2");
    const char *body = smp_member(env, "body");
    ck_assert_str_eq(smp_text(smp_member(body, "type")), "urn:collisiond:problem:malformed-msgpack");
    ck_assert_int_eq(smp_integer(smp_member(body, "status")), 400);
    ck_assert_str_eq(smp_text(smp_member(body, "detail")), "framing lost");
    ck_assert_str_eq(smp_text(smp_member(body, "pointer")), "/headers/x");
    ck_assert(requests_total("other", "unmatched", "400") == 1);
    cqp_buf_free(&out);
}
END_TEST

START_TEST(frames_answered_by_the_pipeline)
{
    /* A frame's request runs as a line's does, answered with a frame whose
     * id is the request's bytes; a frame failing its check is a counted
     * 400 with a nil id. */
    cqp_buf out = {0};
    static const char health[] = "\x83" M_ID "\xcd\x00\x07" M_METHOD M_GET M_PATH "\xa8/healthz";
    cqd_stream_answer(&srv, CQP_MSGPACK, health, sizeof health - 1, 0, &out);
    const char *env = smp_frame_of(&out, 0);
    ck_assert(memcmp(smp_member(env, "id"), "\xcd\x00\x07", 3) == 0);
    ck_assert_int_eq(smp_integer(smp_member(env, "status")), 200);
    ck_assert(requests_total("GET", "/healthz", "200") == 1);

    cqp_buf_reset(&out);
    static const char dup[] = "\x84" M_ID "\x01" M_ID "\x02" M_METHOD M_GET M_PATH "\xa8/healthz";
    cqd_stream_answer(&srv, CQP_MSGPACK, dup, sizeof dup - 1, 0, &out);
    env = smp_frame_of(&out, 0);
    ck_assert_int_eq(mp_typeof(*smp_member(env, "id")), MP_NIL);
    ck_assert_int_eq(smp_integer(smp_member(env, "status")), 400);
    ck_assert_str_eq(smp_text(smp_member(smp_member(env, "body"), "type")), "urn:collisiond:problem:malformed-msgpack");
    ck_assert(requests_total("other", "unmatched", "400") == 1);

    /* A pair's body, read where it lies: {"a": sphere 1, "b": sphere 1 at
     * [3, 0, 0]}, the answer's distance 1 a float64. */
    cqp_buf_reset(&out);
    static const char pair_frame[] =
        "\x84" M_ID "\x01" M_METHOD "\xa4POST" M_PATH "\xa8/v1/pair" M_BODY
        "\x82\xa1" "a\x81\xa5shape\x82\xa4type\xa6sphere\xa6radius\x01"
        "\xa1" "b\x82\xa5shape\x82\xa4type\xa6sphere\xa6radius\x01\xa4pose\x81\xa8position\x93\x03\x00\x00";
    ck_assert_uint_eq(sizeof pair_frame - 1, 116); /* API.md's example */
    cqd_stream_answer(&srv, CQP_MSGPACK, pair_frame, sizeof pair_frame - 1, 0, &out);
    env = smp_frame_of(&out, 0);
    ck_assert_int_eq(smp_integer(smp_member(env, "status")), 200);
    const char *d = smp_member(smp_member(env, "body"), "distance");
    ck_assert_int_eq((unsigned char)*d, 0xcb);
    ck_assert(mp_decode_double(&d) == 1.0);
    cqp_buf_free(&out);
}
END_TEST

Suite *stream_server_suite(void)
{
    Suite *s = suite_create("stream_server");
    TCase *t = tcase_create("refusals");
    tcase_add_checked_fixture(t, server_setup, server_teardown);
    tcase_add_test(t, refusals_counted_and_answered);
    tcase_add_test(t, answers_within_a_tighter_limit);
    tcase_add_test(t, changes_answered_whole_within_a_tighter_limit);
    tcase_add_test(t, refusals_in_msgpack);
    tcase_add_test(t, frames_answered_by_the_pipeline);
    suite_add_tcase(s, t);
    return s;
}
