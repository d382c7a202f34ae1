/* The stream transport's pure parts: the line splitter, the envelope
 * decoder and the reply writer. Expected values are written by hand from
 * API.md section 4. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

/* ---- line splitter ---------------------------------------------------- */

typedef struct seen {
    char lines[8][64];
    int count;
    int fail_at; /* emit fails on this line (-1: never) */
} seen;

static int collect(void *ctx, const char *line, size_t len)
{
    seen *s = ctx;
    if (s->count == s->fail_at)
        return -1;
    ck_assert_uint_lt(len, sizeof s->lines[0]);
    memcpy(s->lines[s->count], line, len);
    s->lines[s->count][len] = '\0';
    s->count++;
    return 0;
}

static const char *const stream_text = "a\nbc\r\n\n\r\n{\"x\":1}\nlast";

static void check_split(const seen *s)
{
    ck_assert_int_eq(s->count, 3);
    ck_assert_str_eq(s->lines[0], "a");
    ck_assert_str_eq(s->lines[1], "bc");
    ck_assert_str_eq(s->lines[2], "{\"x\":1}");
}

START_TEST(lines_whole_and_bytewise)
{
    /* The same lines whether the bytes arrive at once or one by one. */
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        cqd_lines l = {.max = 100};
        seen s = {.fail_at = -1};
        size_t n = strlen(stream_text);
        if (bytewise) {
            for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(cqd_lines_feed(&l, stream_text + i, 1, collect, &s), CQD_LINES_OK);
        } else {
            ck_assert_int_eq(cqd_lines_feed(&l, stream_text, n, collect, &s), CQD_LINES_OK);
        }
        check_split(&s);
        /* "last" has no newline yet: it is a line only at the end of input. */
        ck_assert_int_eq(cqd_lines_finish(&l, collect, &s), 0);
        ck_assert_int_eq(s.count, 4);
        ck_assert_str_eq(s.lines[3], "last");
        cqd_lines_free(&l);
    }
}
END_TEST

START_TEST(lines_cap)
{
    cqd_lines l = {.max = 5};
    seen s = {.fail_at = -1};
    /* Exactly max bytes is accepted; max + 1 is refused, after the lines before it. */
    ck_assert_int_eq(cqd_lines_feed(&l, "12345\nok\n123456\nnever\n", 22, collect, &s), CQD_LINES_TOO_LONG);
    ck_assert_int_eq(s.count, 2);
    ck_assert_str_eq(s.lines[0], "12345");
    ck_assert_str_eq(s.lines[1], "ok");
    cqd_lines_free(&l);

    /* Across reads, refused before more than max bytes are buffered. */
    cqd_lines m = {.max = 5};
    seen t = {.fail_at = -1};
    ck_assert_int_eq(cqd_lines_feed(&m, "123", 3, collect, &t), CQD_LINES_OK);
    ck_assert_int_eq(cqd_lines_feed(&m, "45", 2, collect, &t), CQD_LINES_OK);
    ck_assert_uint_eq(m.partial.len, 5);
    ck_assert_int_eq(cqd_lines_feed(&m, "6", 1, collect, &t), CQD_LINES_TOO_LONG);
    ck_assert_uint_le(m.partial.len, 5);
    ck_assert_int_eq(t.count, 0);
    cqd_lines_free(&m);
}
END_TEST

START_TEST(lines_emit_failure)
{
    cqd_lines l = {.max = 100};
    seen s = {.fail_at = 1};
    ck_assert_int_eq(cqd_lines_feed(&l, "a\nb\nc\n", 6, collect, &s), CQD_LINES_FAILED);
    ck_assert_int_eq(s.count, 1);
    cqd_lines_free(&l);
}
END_TEST

/* ---- envelope --------------------------------------------------------- */

static const char *span(const char *p, size_t n)
{
    static char out[256];
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(n, sizeof out);
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

START_TEST(envelope_basic)
{
    const char *line = "{\"id\":7,\"method\":\"GET\",\"path\":\"/v1/worlds/a?pretty=1&x=2\"}";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_str_eq(span(e.id, e.id_len), "7");
    ck_assert_str_eq(e.method, "GET");
    ck_assert_str_eq(e.path, "/v1/worlds/a");
    ck_assert_str_eq(e.query, "pretty=1&x=2");
    ck_assert_ptr_null(e.body);
    ck_assert_ptr_null(e.authorization);
    ck_assert_ptr_null(e.request_id);
    cqd_envelope_free(&e);
}
END_TEST

START_TEST(envelope_verbatim_members)
{
    /* Braces and quotes inside strings, nesting, blanks, an escaped key. */
    const char *line = " { \"\\u0069d\" : {\"a\":[1,\"}\"],\"b\":\"\\\"]\"} , \"method\":\"POST\","
                       "\"body\" : {\"k\":\"a\\\"b}\",\"n\":[0.10,{}]} ,\"path\":\"/v1/pair\" } ";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_str_eq(span(e.id, e.id_len), "{\"a\":[1,\"}\"],\"b\":\"\\\"]\"}");
    ck_assert_str_eq(span(e.body, e.body_len), "{\"k\":\"a\\\"b}\",\"n\":[0.10,{}]}");
    ck_assert_ptr_null(e.query);
    cqd_envelope_free(&e);

    /* A scalar body last, a string id, "id" after the body. */
    line = "{\"method\":\"POST\",\"path\":\"/\",\"body\":12.50 ,\"id\":\"x,}\"}";
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_str_eq(span(e.body, e.body_len), "12.50");
    ck_assert_str_eq(span(e.id, e.id_len), "\"x,}\"");
    cqd_envelope_free(&e);

    /* "body": null is no body; no id is a null id. */
    line = "{\"method\":\"GET\",\"path\":\"/healthz\",\"body\":null}";
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_ptr_null(e.body);
    ck_assert_uint_eq(e.body_len, 0);
    ck_assert_ptr_null(e.id);
    cqd_envelope_free(&e);
}
END_TEST

START_TEST(envelope_headers)
{
    const char *line = "{\"method\":\"GET\",\"path\":\"/\",\"headers\":{\"AUTHORIZATION\":\"Bearer t\","
                       "\"x-Request-ID\":\"r-1\",\"Accept\":\"text/plain\"}}";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_str_eq(e.authorization, "Bearer t");
    ck_assert_str_eq(e.request_id, "r-1");
    cqd_envelope_free(&e);
}
END_TEST

static void expect_refusal(const char *line, cqp_problem_kind kind, const char *pointer, const char *id)
{
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), -1);
    ck_assert_int_eq(p.kind, kind);
    ck_assert_int_eq(cqp_problem_status(p.kind), 400);
    if (pointer)
        ck_assert_str_eq(p.pointer, pointer);
    if (id)
        ck_assert_str_eq(span(e.id, e.id_len), id);
    else
        ck_assert_ptr_null(e.id);
    cqd_envelope_free(&e);
}

START_TEST(envelope_refusals)
{
    expect_refusal("not json", CQP_P_BAD_JSON, NULL, NULL);
    expect_refusal("{\"id\":1,\"id\":2,\"method\":\"GET\",\"path\":\"/\"}", CQP_P_BAD_JSON, NULL, NULL);
    expect_refusal("{\"id\":3,\"path\":\"/\"}", CQP_P_MISSING_FIELD, "/method", "3");
    expect_refusal("{\"id\":[4],\"method\":\"GET\",\"path\":5}", CQP_P_BAD_TYPE, "/path", "[4]");
    expect_refusal("{\"method\":\"GET\",\"path\":\"/\",\"a/b~\":1}", CQP_P_UNKNOWN_FIELD, "/a~1b~0", NULL);
    expect_refusal("{\"method\":\"GET\",\"path\":\"/\",\"headers\":[]}", CQP_P_BAD_TYPE, "/headers", NULL);
    expect_refusal("{\"method\":\"GET\",\"path\":\"/\",\"headers\":{\"X-Request-Id\":1}}", CQP_P_BAD_TYPE,
                   "/headers/X-Request-Id", NULL);
    expect_refusal("{\"method\":\"GET\",\"path\":\"/\",\"headers\":{\"authorization\":\"a\",\"Authorization\":\"b\"}}",
                   CQP_P_BAD_VALUE, NULL, NULL);

    /* Not an object: 400 whichever kind the parser picks, and no id. */
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse("[1,2]", 5, &e, &p), -1);
    ck_assert_int_eq(cqp_problem_status(p.kind), 400);
    ck_assert_ptr_null(e.id);
    cqd_envelope_free(&e);
}
END_TEST

/* ---- replies ---------------------------------------------------------- */

static void respond(cqd_response *r, int status, const char *type, const char *body)
{
    cqd_response_init(r);
    r->status = status;
    r->content_type = type;
    if (body)
        cqp_buf_puts(&r->body, body);
}

START_TEST(reply_json_and_text)
{
    cqd_response r;
    cqp_buf out = {0};

    respond(&r, 200, "application/json", "{\"a\":[1,2]}");
    strcpy(r.request_id, "r-1");
    cqd_stream_reply(&out, "{\"k\": 7}", 8, &r);
    ck_assert_str_eq(out.data, "{\"id\":{\"k\": 7},\"status\":200,\"request_id\":\"r-1\",\"body\":{\"a\":[1,2]}}\n");
    cqd_response_free(&r);

    /* A pretty JSON body stays on one line; a text body becomes a string. */
    cqp_buf_reset(&out);
    respond(&r, 200, "application/json", "{\n  \"a\": 1\r\n}");
    cqd_stream_reply(&out, NULL, 0, &r);
    ck_assert_str_eq(out.data, "{\"id\":null,\"status\":200,\"body\":{   \"a\": 1  }}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 200, "text/plain; version=0.0.4", "m 1\nn \"2\"\n");
    cqd_stream_reply(&out, "3", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":3,\"status\":200,\"body\":\"m 1\\nn \\\"2\\\"\\n\"}\n");
    cqd_response_free(&r);

    /* 204: no body; 405 and 503 carry what HTTP puts in headers. */
    cqp_buf_reset(&out);
    respond(&r, 204, "application/json", NULL);
    cqd_stream_reply(&out, "\"d\"", 3, &r);
    ck_assert_str_eq(out.data, "{\"id\":\"d\",\"status\":204,\"body\":null}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 405, "application/problem+json", "{\"status\":405}");
    strcpy(r.allow, "GET, PUT");
    cqd_stream_reply(&out, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":405,\"headers\":{\"Allow\":\"GET, PUT\"},"
                               "\"body\":{\"status\":405}}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 503, "application/problem+json", "{\"status\":503}");
    r.retry_after = 2;
    cqd_stream_reply(&out, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":503,\"headers\":{\"Retry-After\":\"2\"},"
                               "\"body\":{\"status\":503}}\n");
    cqd_response_free(&r);

    /* Allow with another status is not echoed. */
    cqp_buf_reset(&out);
    respond(&r, 200, "application/json", "{}");
    strcpy(r.allow, "GET");
    cqd_stream_reply(&out, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":200,\"body\":{}}\n");
    cqd_response_free(&r);
    cqp_buf_free(&out);
}
END_TEST

START_TEST(reply_problem)
{
    cqp_problem p;
    cqp_fail(&p, CQP_P_TOO_LARGE, NULL, "too long");
    cqp_buf out = {0};
    cqd_stream_reply_problem(&out, NULL, 0, &p);
    ck_assert_uint_gt(out.len, 0);
    ck_assert_int_eq(out.data[out.len - 1], '\n');
    ck_assert_ptr_null(memchr(out.data, '\n', out.len - 1));
    json_error_t err;
    json_t *v = json_loadb(out.data, out.len, 0, &err);
    ck_assert_ptr_nonnull(v);
    ck_assert(json_is_null(json_object_get(v, "id")));
    ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), 413);
    json_t *body = json_object_get(v, "body");
    ck_assert_int_eq(json_integer_value(json_object_get(body, "status")), 413);
    ck_assert_str_eq(json_string_value(json_object_get(body, "type")), "urn:collisiond:problem:body-too-large");
    ck_assert_str_eq(json_string_value(json_object_get(body, "detail")), "too long");
    json_decref(v);
    cqp_buf_free(&out);
}
END_TEST

Suite *stream_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *t = tcase_create("lines");
    tcase_add_test(t, lines_whole_and_bytewise);
    tcase_add_test(t, lines_cap);
    tcase_add_test(t, lines_emit_failure);
    suite_add_tcase(s, t);
    t = tcase_create("envelope");
    tcase_add_test(t, envelope_basic);
    tcase_add_test(t, envelope_verbatim_members);
    tcase_add_test(t, envelope_headers);
    tcase_add_test(t, envelope_refusals);
    suite_add_tcase(s, t);
    t = tcase_create("reply");
    tcase_add_test(t, reply_json_and_text);
    tcase_add_test(t, reply_problem);
    suite_add_tcase(s, t);
    return s;
}
