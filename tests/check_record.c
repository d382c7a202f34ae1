/* Recording: the record line (writing and reading it back), the text
 * encodings under it, and the recorder driven through the real pipeline
 * from several threads (the replay's own pieces: check_replay.c).
 * Oracles are hand-written: expected lines typed out, RFC 4648's base64
 * vectors, UTF-8 sequences classified by hand, offsets counted by hand;
 * the recording is read back with jansson, not with the replay's reader. */
#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/request.h"
#include "config_util.h"
#include "record/record.h"
#include "record/record_line.h"
#include "replay/http_client.h"
#include "replay/replay.h"
#include "state/server.h"

/* ---- writing a record -------------------------------------------------- */

/* The tail of the record of one request, as a NUL-terminated string. */
static char *tail_of(const char *body, size_t body_len, const char *auth, int status, const char *content_type,
                     const char *resp_body, size_t resp_len)
{
    cqd_request req = {.transport = "http", .method = "POST", .path = "/v1/pair", .query = NULL,
                       .authorization = auth, .body = body, .body_len = body_len};
    cqd_response resp;
    cqd_response_init(&resp);
    resp.status = status;
    resp.content_type = content_type;
    snprintf(resp.request_id, sizeof resp.request_id, "r-1");
    cqp_buf_append(&resp.body, resp_body, resp_len);
    cqp_buf out = {0};
    cqd_record_format_tail(&out, &req, &resp);
    cqd_response_free(&resp);
    ck_assert(!out.oom);
    return out.data;
}

#define HEAD_ ",\"transport\":\"http\",\"method\":\"POST\",\"path\":\"/v1/pair\",\"query\":null,\"request_id\":\"r-1\","

START_TEST(record_line_written_by_hand)
{
    cqd_request req = {.transport = "http", .method = "POST", .path = "/v1/pair", .query = "pretty=1",
                       .authorization = "Bearer s3cret", .request_id = "ignored: the response's id is kept",
                       .body = "{\"a\": 1.50}", .body_len = 11};
    cqd_response resp;
    cqd_response_init(&resp);
    resp.status = 200;
    resp.duration_ns = 412999; /* written in whole microseconds, cut as an access line's are */
    resp.content_type = "application/json";
    snprintf(resp.request_id, sizeof resp.request_id, "r-1");
    cqp_buf_puts(&resp.body, "{\"x\":[1,2]}");
    cqp_buf out = {0};
    char head[CQD_RECORD_HEAD_MAX];
    size_t n = cqd_record_format_head(head, 42, 1700000000.25);
    cqp_buf_append(&out, head, n);
    cqd_record_format_tail(&out, &req, &resp);
    ck_assert_str_eq(out.data,
                     "{\"seq\":42,\"time\":1700000000.250000,\"transport\":\"http\",\"method\":\"POST\","
                     "\"path\":\"/v1/pair\",\"query\":\"pretty=1\",\"request_id\":\"r-1\",\"authorization\":\"redacted\","
                     "\"body\":{\"a\": 1.50},\"status\":200,\"duration_us\":412,\"response\":{\"x\":[1,2]}}\n");
    ck_assert_ptr_null(strstr(out.data, "s3cret"));
    cqp_buf_free(&out);
    cqd_response_free(&resp);
}
END_TEST

START_TEST(record_bodies_that_are_not_raw_json)
{
    static const struct {
        const char *body;
        size_t len;
        const char *content_type, *resp;
        int status;
        const char *want;
    } cases[] = {
        /* a newline would split the line: the body becomes a string */
        {"{\"a\":\n1}", 8, "application/json", "{}", 200,
         HEAD_ "\"authorization\":null,\"body\":\"{\\\"a\\\":\\n1}\",\"status\":200,\"duration_us\":0,\"response\":{}}\n"},
        /* a JSON string body is written as a string of its bytes, quotes included */
        {"\"str\"", 5, "application/json", "[]", 200,
         HEAD_ "\"authorization\":null,\"body\":\"\\\"str\\\"\",\"status\":200,\"duration_us\":0,\"response\":[]}\n"},
        /* duplicate keys, a blank around, control characters */
        {"{\"a\":1,\"a\":2}", 13, NULL, "", 204,
         HEAD_ "\"authorization\":null,\"body\":\"{\\\"a\\\":1,\\\"a\\\":2}\",\"status\":204,\"duration_us\":0,\"response\":null}\n"},
        {" {}", 3, NULL, "", 204,
         HEAD_ "\"authorization\":null,\"body\":\" {}\",\"status\":204,\"duration_us\":0,\"response\":null}\n"},
        {"a\tb\x01\\", 5, NULL, "", 204,
         HEAD_ "\"authorization\":null,\"body\":\"a\\tb\\u0001\\\\\",\"status\":204,\"duration_us\":0,\"response\":null}\n"},
        /* not UTF-8: base64, and listed */
        {"\xff\xfe", 2, NULL, "", 204,
         HEAD_ "\"authorization\":null,\"body\":\"//4=\",\"status\":204,\"duration_us\":0,\"response\":null,\"base64\":[\"body\"]}\n"},
        /* an empty body is null; a text response stays text even when it looks like JSON */
        {"", 0, "text/plain; version=0.0.4", "{\"x\":1}", 200,
         HEAD_ "\"authorization\":null,\"body\":null,\"status\":200,\"duration_us\":0,\"response\":\"{\\\"x\\\":1}\"}\n"},
        /* UTF-8 passes through unescaped */
        {"{\"id\":\"caf\xc3\xa9\"}", 14, "application/problem+json", "{\"s\":\"\xe2\x82\xac\"}", 404,
         HEAD_ "\"authorization\":null,\"body\":{\"id\":\"caf\xc3\xa9\"},\"status\":404,\"duration_us\":0,"
               "\"response\":{\"s\":\"\xe2\x82\xac\"}}\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = tail_of(cases[i].body, cases[i].len, NULL, cases[i].status, cases[i].content_type,
                            cases[i].resp, strlen(cases[i].resp));
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu:\n got  %s want %s", i, got, cases[i].want);
        free(got);
    }
}
END_TEST

/* A MessagePack session: the formats are named, the bodies base64 (RFC
 * 4648 by hand: 81 a1 61 01 is 100000 011010 000101 100001 | 000000 01,
 * "gaFh" "AQ=="; 80 is 100000 00, "gA=="), even a body that is UTF-8. */
START_TEST(record_line_msgpack)
{
    static const struct {
        const char *body;
        size_t len;
        cqp_format body_format, accept;
        const char *content_type, *resp;
        size_t resp_len;
        const char *want;
    } cases[] = {
        {"\x81\xa1" "a\x01", 4, CQP_MSGPACK, CQP_MSGPACK, "application/msgpack", "\x80", 1,
         HEAD_ "\"authorization\":null,\"accept\":\"msgpack\",\"body\":\"gaFhAQ==\",\"body_format\":\"msgpack\","
               "\"status\":200,\"duration_us\":0,\"response\":\"gA==\",\"response_format\":\"msgpack\",\"base64\":[\"body\",\"response\"]}\n"},
        /* the fixint 1 alone is ASCII, and still binary */
        {"\x01", 1, CQP_MSGPACK, CQP_JSON, "application/problem+json", "{}", 2,
         HEAD_ "\"authorization\":null,\"body\":\"AQ==\",\"body_format\":\"msgpack\",\"status\":400,\"duration_us\":0,"
               "\"response\":{},\"base64\":[\"body\"]}\n"},
        /* a JSON body asking for MessagePack; the problem is MessagePack */
        {"{}", 2, CQP_JSON, CQP_MSGPACK, "application/problem+msgpack", "\x80", 1,
         HEAD_ "\"authorization\":null,\"accept\":\"msgpack\",\"body\":{},\"status\":400,\"duration_us\":0,"
               "\"response\":\"gA==\",\"response_format\":\"msgpack\",\"base64\":[\"response\"]}\n"},
        /* asked for MessagePack, answered text: the response is what it was */
        {"", 0, CQP_JSON, CQP_MSGPACK, "text/plain", "ok", 2,
         HEAD_ "\"authorization\":null,\"accept\":\"msgpack\",\"body\":null,\"status\":200,\"duration_us\":0,\"response\":\"ok\"}\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cqd_request req = {.transport = "http", .method = "POST", .path = "/v1/pair", .body = cases[i].body,
                           .body_len = cases[i].len, .body_format = cases[i].body_format, .accept = cases[i].accept};
        cqd_response resp;
        cqd_response_init(&resp);
        resp.status = i == 0 || i == 3 ? 200 : 400;
        resp.content_type = cases[i].content_type;
        snprintf(resp.request_id, sizeof resp.request_id, "r-1");
        cqp_buf_append(&resp.body, cases[i].resp, cases[i].resp_len);
        cqp_buf out = {0};
        cqd_record_format_tail(&out, &req, &resp);
        ck_assert_msg(strcmp(out.data, cases[i].want) == 0, "case %zu:\n got  %s want %s", i, out.data, cases[i].want);
        cqp_buf_free(&out);
        cqd_response_free(&resp);
    }
}
END_TEST

/* Any bytes written come back the same through a whole line. */
START_TEST(record_bytes_round_trip)
{
#define BYTES_(s) {s, sizeof(s) - 1}
    static const struct {
        const char *bytes;
        size_t len;
    } bodies[] = {
        BYTES_("{\"a\": [1.0, 2e0, -0], \"s\": \"}\\\"{\"}"), BYTES_("a\0b\n\r\""), BYTES_("\x80"),
        BYTES_("{\"k\":\"\xed\xa0\x80\"}"), BYTES_("[]"), BYTES_("[1, 2]\n"), BYTES_("\t"),
        BYTES_("\xc3\xa9\xf0\x9f\x98\x80"),
    };
#undef BYTES_
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char *tail = tail_of(bodies[i].bytes, bodies[i].len, "Bearer t", 200, "application/json", bodies[i].bytes,
                             bodies[i].len);
        char line[512];
        int n = snprintf(line, sizeof line, "{\"seq\":%zu,\"time\":1.0%s", i + 1, tail);
        free(tail);
        ck_assert_int_lt(n, (int)sizeof line);
        ck_assert_int_eq(line[n - 1], '\n');
        ck_assert_ptr_null(memchr(line, '\n', (size_t)n - 1)); /* one line */
        json_t *whole = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
        ck_assert_msg(whole != NULL, "case %zu: the line is not JSON: %s", i, line);
        json_decref(whole);
        cqd_record_entry e;
        char err[200];
        ck_assert_msg(cqd_record_parse(line, (size_t)n - 1, &e, err, sizeof err) == 0, "case %zu: %s", i, err);
        ck_assert_int_eq(e.seq, (long long)i + 1);
        ck_assert(e.authorization);
        ck_assert_uint_eq(e.body.len, bodies[i].len);
        ck_assert(memcmp(e.body.data, bodies[i].bytes, bodies[i].len) == 0);
        ck_assert_uint_eq(e.response.len, bodies[i].len);
        ck_assert(memcmp(e.response.data, bodies[i].bytes, bodies[i].len) == 0);
        cqd_record_entry_free(&e);
    }
}
END_TEST

/* ---- reading a record -------------------------------------------------- */

static void parse_ok(const char *line, cqd_record_entry *e)
{
    char err[200];
    ck_assert_msg(cqd_record_parse(line, strlen(line), e, err, sizeof err) == 0, "%s: %s", line, err);
}

START_TEST(record_lines_read_back)
{
    cqd_record_entry e;
    parse_ok("{\"seq\":7,\"time\":1.5,\"transport\":\"stream\",\"method\":\"PUT\",\"path\":\"/v1/worlds/a\","
             "\"query\":null,\"request_id\":\"x\",\"authorization\":\"redacted\","
             "\"body\":{\"b\": [1.0, 2e0], \"s\": \"}\"},\"status\":201,\"response\":\"a\\u0000b\\n\",\"later\":[1]}",
             &e);
    ck_assert_int_eq(e.seq, 7);
    ck_assert_int_eq(e.status, 201);
    ck_assert_str_eq(e.transport.data, "stream");
    ck_assert_str_eq(e.method.data, "PUT");
    ck_assert_str_eq(e.path.data, "/v1/worlds/a");
    ck_assert(!e.has_query);
    ck_assert_str_eq(e.request_id.data, "x");
    ck_assert(e.authorization);
    ck_assert_str_eq(e.body.data, "{\"b\": [1.0, 2e0], \"s\": \"}\"}");
    ck_assert_uint_eq(e.response.len, 4);
    ck_assert(memcmp(e.response.data, "a\0b\n", 4) == 0);
    cqd_record_entry_free(&e);

    parse_ok("{\"seq\":1,\"method\":\"POST\",\"path\":\"/p\\u00e9\",\"status\":400,\"body\":\"//4=\","
             "\"response\":null,\"authorization\":null,\"base64\":[\"body\"]}",
             &e);
    ck_assert_str_eq(e.path.data, "/p\xc3\xa9");
    ck_assert_uint_eq(e.body.len, 2);
    ck_assert(memcmp(e.body.data, "\xff\xfe", 2) == 0);
    ck_assert_uint_eq(e.response.len, 0);
    ck_assert(!e.authorization);
    cqd_record_entry_free(&e);

    parse_ok(" { \"seq\" : 2 , \"method\" : \"GET\" , \"path\" : \"/\" , \"status\" : 200 , \"query\" : \"\" } ", &e);
    ck_assert(e.has_query);
    ck_assert_str_eq(e.query.data, "");
    ck_assert_uint_eq(e.body.len, 0);
    cqd_record_entry_free(&e);
}
END_TEST

/* The formats read back; a line without them (every line written before
 * them) is JSON throughout. */
START_TEST(record_lines_msgpack_read_back)
{
    cqd_record_entry e;
    parse_ok("{\"seq\":3,\"method\":\"POST\",\"path\":\"/v1/pair\",\"accept\":\"msgpack\",\"body\":\"gaFhAQ==\","
             "\"body_format\":\"msgpack\",\"status\":200,\"response\":\"gA==\",\"response_format\":\"msgpack\","
             "\"base64\":[\"body\",\"response\"]}",
             &e);
    ck_assert_int_eq(e.body_format, CQP_MSGPACK);
    ck_assert_int_eq(e.accept, CQP_MSGPACK);
    ck_assert_int_eq(e.response_format, CQP_MSGPACK);
    ck_assert_uint_eq(e.body.len, 4);
    ck_assert(memcmp(e.body.data, "\x81\xa1" "a\x01", 4) == 0);
    ck_assert_uint_eq(e.response.len, 1);
    ck_assert_int_eq((unsigned char)e.response.data[0], 0x80);
    cqd_record_entry_free(&e);

    parse_ok("{\"seq\":4,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body_format\":\"json\",\"accept\":null}", &e);
    ck_assert_int_eq(e.body_format, CQP_JSON);
    ck_assert_int_eq(e.accept, CQP_JSON);
    ck_assert_int_eq(e.response_format, CQP_JSON);
    cqd_record_entry_free(&e);

    parse_ok("{\"seq\":5,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"response\":{\"a\":1}}", &e);
    ck_assert_int_eq(e.body_format, CQP_JSON);
    ck_assert_int_eq(e.accept, CQP_JSON);
    ck_assert_int_eq(e.response_format, CQP_JSON);
    cqd_record_entry_free(&e);

    static const char *const bad[] = {
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body_format\":\"xml\"}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"accept\":1}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"response_format\":\"MSGPACK\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[200] = "";
        ck_assert_msg(cqd_record_parse(bad[i], strlen(bad[i]), &e, err, sizeof err) == -1, "accepted: %s", bad[i]);
        ck_assert_ptr_nonnull(strstr(err, "wrong type"));
    }
}
END_TEST

START_TEST(record_lines_rejected)
{
    static const char *const bad[] = {
        "[1]",
        "",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\"}",                              /* no status */
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body\":\"abc}", /* unterminated */
        "{\"seq\":\"1\",\"method\":\"GET\",\"path\":\"/\",\"status\":200}",           /* wrong type */
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":99}",                /* not a status */
        "{\"seq\":1,\"method\":7,\"path\":\"/\",\"status\":200}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body\":\"!!\",\"base64\":[\"body\"]}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"base64\":[\"nothing\"]}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200} x",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body\":{\"a\":[1}",
        "{\"seq\":1,\"method\":\"GET\",\"path\":\"/\",\"status\":200,\"body\":}",
        "{\"seq\":1 \"method\":\"GET\",\"path\":\"/\",\"status\":200}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cqd_record_entry e;
        char err[200] = "";
        ck_assert_msg(cqd_record_parse(bad[i], strlen(bad[i]), &e, err, sizeof err) == -1, "accepted: %s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no reason for %s", bad[i]);
    }
}
END_TEST

#define LINE_(extra) "{\"seq\":1,\"method\":\"GET\",\"path\":\"/healthz\",\"status\":200" extra "}"

/* What the recorder never writes is refused, each with its reason: a
 * request id outside the server's rule (the one recorded value that goes
 * into a header), a NUL in any text member, a member twice (however its
 * name is spelled). */
START_TEST(record_lines_refused_fields)
{
    static const struct {
        const char *line, *why;
    } bad[] = {
        {LINE_(",\"request_id\":\"a\\r\\nX-Injected: yes\\r\\nContent-Length: 0\""),
         "the request id \"a\\x0d\\x0aX-Injected: yes\\x0d\\x0aContent-Length: 0\" has the byte 0x0D at offset 1"},
        {LINE_(",\"request_id\":\"tick 1\""), "has the byte 0x20 at offset 4"},
        {LINE_(",\"request_id\":\"caf\\u00e9\""), "has the byte 0xC3 at offset 3"},
        {LINE_(",\"request_id\":\"a\\tb\""), "has the byte 0x09 at offset 1"},
        {LINE_(",\"request_id\":\"YQ0K\",\"base64\":[\"request_id\"]"), "has the byte 0x0D at offset 1"},
        {LINE_(",\"request_id\":\"0123456789012345678901234567890123456789012345678901234567890123x\""),
         "is 65 bytes long (at most 64)"},
        {LINE_(",\"request_id\":\"a\\u0000b\""), "\"request_id\" holds a NUL byte at offset 1"},
        {"{\"seq\":1,\"method\":\"GET\",\"path\":\"/v1/worlds/a\\u0000/shapes/b\",\"status\":200}",
         "\"path\" holds a NUL byte at offset 12"},
        {LINE_(",\"query\":\"pretty=1\\u0000&x=2\""), "\"query\" holds a NUL byte at offset 8"},
        {"{\"seq\":1,\"method\":\"GET\\u0000X\",\"path\":\"/\",\"status\":200}", "\"method\" holds a NUL byte"},
        {LINE_(",\"transport\":\"\\u0000\""), "\"transport\" holds a NUL byte at offset 0"},
        {LINE_(",\"path\":\"/v1/worlds\""), "member \"path\" appears twice"},
        {LINE_(",\"\\u0070ath\":\"/v1/worlds\""), "member \"path\" appears twice"},
        {LINE_(",\"request_id\":\"a\",\"request_id\":\"b\""), "member \"request_id\" appears twice"},
        {LINE_(",\"later\":1,\"later\":2"), "member \"later\" appears twice"},
        {LINE_(",\"base64\":null,\"base64\":[\"path\"]"), "member \"base64\" appears twice"},
        {LINE_(",\"a\\u0000b\":1"), "the member name \"a\\x00b\" holds a NUL byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cqd_record_entry e;
        char err[300] = "";
        ck_assert_msg(cqd_record_parse(bad[i].line, strlen(bad[i].line), &e, err, sizeof err) == -1, "accepted: %s",
                      bad[i].line);
        ck_assert_msg(strstr(err, bad[i].why) != NULL, "%s: said \"%s\", not \"%s\"", bad[i].line, err, bad[i].why);
    }
    /* what the server writes reads back: its own ids, generated ones, none */
    static const char *const good[] = {
        LINE_(",\"request_id\":\"0123456789012345678901234567890123456789012345678901234567890123\""),
        LINE_(",\"request_id\":\"2f9c4e1a00b3d5e7-42\""),
        LINE_(",\"request_id\":\"Az09._:-\""),
        LINE_(",\"request_id\":\"\""),
        LINE_(",\"request_id\":null"),
        LINE_(",\"later\":{\"later\":1}"), /* a name may repeat inside a value */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cqd_record_entry e;
        parse_ok(good[i], &e);
        cqd_record_entry_free(&e);
    }
}
END_TEST

#undef LINE_

/* ---- encodings ---------------------------------------------------------- */

START_TEST(record_utf8_classes)
{
    static const struct {
        const char *s;
        size_t n;
        bool valid;
    } cases[] = {
        {"plain ascii", 11, true},     {"\0", 1, true},          {"\xc3\xa9", 2, true},     /* é */
        {"\xe2\x82\xac", 3, true},     /* € */                   {"\xf0\x9f\x98\x80", 4, true}, /* U+1F600 */
        {"\xf4\x8f\xbf\xbf", 4, true}, /* U+10FFFF */            {"\xc0\xaf", 2, false},    /* overlong '/' */
        {"\xe0\x80\xaf", 3, false},    /* overlong */            {"\xed\xa0\x80", 3, false}, /* U+D800 */
        {"\xf4\x90\x80\x80", 4, false}, /* past U+10FFFF */       {"\xe2\x82", 2, false},    /* cut short */
        {"\x80", 1, false},            /* stray continuation */  {"\xff", 1, false},
        {"\xc3\x28", 2, false},        /* bad continuation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(cqd_utf8_valid(cases[i].s, cases[i].n) == cases[i].valid, "case %zu", i);
}
END_TEST

START_TEST(record_base64_rfc4648_vectors)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        cqp_buf b = {0};
        cqd_base64_encode(&b, plain[i], strlen(plain[i]));
        cqp_buf_append(&b, "", 0);
        ck_assert_str_eq(b.data, coded[i]);
        cqp_buf_reset(&b);
        ck_assert_int_eq(cqd_base64_decode(&b, coded[i], strlen(coded[i])), 0);
        cqp_buf_append(&b, "", 0);
        ck_assert_str_eq(b.data, plain[i]);
        cqp_buf_free(&b);
    }
    static const char *const bad[] = {"Zm9", "Zm=v", "Z!==", "====", "Zg==Zg==", "Zm9v\n"};
    for (int i = 0; i < 6; i++) {
        cqp_buf b = {0};
        ck_assert_msg(cqd_base64_decode(&b, bad[i], strlen(bad[i])) == -1, "accepted %s", bad[i]);
        cqp_buf_free(&b);
    }
}
END_TEST

/* ---- the recorder in the pipeline ---------------------------------------- */

typedef struct init_args {
    cqd_server *srv;
    cqd_config cfg;
} init_args;

static int init_server(void *arg)
{
    init_args *a = arg;
    return cqd_server_init(a->srv, &a->cfg);
}

/* cqd_server_init with what it logs kept off the test's output. */
static void quiet_init(cqd_server *srv, const cqd_config *cfg)
{
    init_args a = {srv, *cfg};
    cu_captured out;
    cu_capture(2, init_server, &a, &out);
    ck_assert_int_eq(out.result, 0);
}

#define REC_THREADS 4
#define REC_EACH 60

typedef struct rec_worker {
    cqd_server *srv;
    int index;
} rec_worker;

static void *rec_work(void *arg)
{
    rec_worker *w = arg;
    for (int k = 0; k < REC_EACH; k++) {
        char path[64], body[64];
        snprintf(path, sizeof path, "/v1/worlds/w%d-%d", w->index, k);
        snprintf(body, sizeof body, "{\"skin\": 0.%02d1}", k);
        bool healthz = k % 3 == 0;
        cqd_request req = {.transport = "test", .method = healthz ? "GET" : "PUT", .path = healthz ? "/healthz" : path,
                           .authorization = "Bearer s3cret", .body = healthz ? NULL : body,
                           .body_len = healthz ? 0 : strlen(body)};
        cqd_response resp;
        cqd_response_init(&resp);
        cqd_handle(w->srv, &req, &resp);
        ck_assert_int_eq(resp.status, healthz ? 200 : 201);
        cqd_response_free(&resp);
    }
    return NULL;
}

START_TEST(recorder_lines_from_many_threads)
{
    char path[] = "/tmp/check-record-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    cqd_config cfg = cu_default_config();
    snprintf(cfg.token, sizeof cfg.token, "s3cret");
    snprintf(cfg.record, sizeof cfg.record, "%s", path);
    cqd_server srv;
    quiet_init(&srv, &cfg);
    ck_assert_ptr_nonnull(srv.recorder);
    FILE *log = tmpfile();
    srv.log.fd = fileno(log);
    atomic_store(&srv.state, CQD_READY);
    pthread_t t[REC_THREADS];
    rec_worker w[REC_THREADS];
    for (int i = 0; i < REC_THREADS; i++) {
        w[i] = (rec_worker){&srv, i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, rec_work, &w[i]), 0);
    }
    for (int i = 0; i < REC_THREADS; i++)
        pthread_join(t[i], NULL);
    cqd_server_destroy(&srv);
    fclose(log);

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lines = 0, put_count = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lines++;
        ck_assert_ptr_null(strstr(line, "s3cret"));
        json_error_t e;
        json_t *v = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES, &e);
        ck_assert_msg(v != NULL, "line %d is not JSON (%s): %s", lines, e.text, line);
        ck_assert_int_eq(json_integer_value(json_object_get(v, "seq")), lines);
        ck_assert_str_eq(json_string_value(json_object_get(v, "transport")), "test");
        ck_assert_str_eq(json_string_value(json_object_get(v, "authorization")), "redacted");
        const char *method = json_string_value(json_object_get(v, "method"));
        int status = (int)json_integer_value(json_object_get(v, "status"));
        if (strcmp(method, "PUT") == 0) {
            put_count++;
            ck_assert_int_eq(status, 201);
            ck_assert(json_is_object(json_object_get(v, "body")));
            ck_assert(json_is_object(json_object_get(json_object_get(v, "response"), "settings")));
        } else {
            ck_assert_int_eq(status, 200);
            ck_assert(json_is_null(json_object_get(v, "body")));
            ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "response"), "status")), "ok");
        }
        json_decref(v);
    }
    free(line);
    fclose(f);
    unlink(path);
    ck_assert_int_eq(lines, REC_THREADS * REC_EACH);
    ck_assert_int_eq(put_count, REC_THREADS * (REC_EACH - REC_EACH / 3));
}
END_TEST

START_TEST(recorder_failures_keep_serving)
{
    /* a file that cannot be opened: logged at start, no recording */
    cqd_server srv;
    init_args a = {&srv, cu_default_config()};
    snprintf(a.cfg.record, sizeof a.cfg.record, "/nonexistent-dir-for-check/rec.jsonl");
    cu_captured out;
    cu_capture(2, init_server, &a, &out);
    ck_assert_int_eq(out.result, 0);
    ck_assert_ptr_null(srv.recorder);
    ck_assert_ptr_nonnull(strstr(out.text, "cannot record to /nonexistent-dir-for-check/rec.jsonl"));
    cqd_server_destroy(&srv);

    /* a file whose writes fail (ENOSPC): logged once, recording stops, requests are served */
    if (access("/dev/full", W_OK) != 0)
        return;
    cqd_config cfg = cu_default_config();
    snprintf(cfg.record, sizeof cfg.record, "/dev/full");
    quiet_init(&srv, &cfg);
    ck_assert_ptr_nonnull(srv.recorder);
    FILE *log = tmpfile();
    srv.log.fd = fileno(log);
    for (int i = 0; i < 3; i++) {
        cqd_request req = {.transport = "test", .method = "GET", .path = "/healthz"};
        cqd_response resp;
        cqd_response_init(&resp);
        cqd_handle(&srv, &req, &resp);
        ck_assert_int_eq(resp.status, 200);
        cqd_response_free(&resp);
    }
    cqd_server_destroy(&srv);
    char text[8192];
    rewind(log);
    size_t len = fread(text, 1, sizeof text - 1, log);
    text[len] = '\0';
    fclose(log);
    const char *first = strstr(text, "recording to /dev/full stopped after 0 records");
    ck_assert_msg(first != NULL, "no stop message in: %s", text);
    ck_assert_ptr_null(strstr(first + 1, "recording to /dev/full stopped"));
}
END_TEST

/* cqd_request_id_valid against the pipeline itself: an id the server
 * answers with unchanged is valid, and one it changes (drops a byte, cuts
 * it) is not, for every byte and around the length limit. */
START_TEST(request_id_rule_is_the_servers)
{
    cqd_config cfg = cu_default_config();
    cqd_server srv;
    quiet_init(&srv, &cfg);
    FILE *log = tmpfile();
    srv.log.fd = fileno(log);
    atomic_store(&srv.state, CQD_READY);
    char id[CQD_REQUEST_ID_MAX + 8], why[96];
    for (int c = 1; c < 256; c++) {
        snprintf(id, sizeof id, "a%cb", c);
        cqd_request req = {.transport = "test", .method = "GET", .path = "/healthz", .request_id = id};
        cqd_response resp;
        cqd_response_init(&resp);
        cqd_handle(&srv, &req, &resp);
        bool kept = strcmp(resp.request_id, id) == 0;
        ck_assert_msg(cqd_request_id_valid(id, strlen(id), why, sizeof why) == kept, "byte 0x%02X: the server %s it",
                      c, kept ? "keeps" : "changes");
        cqd_response_free(&resp);
    }
    for (size_t n = CQD_REQUEST_ID_MAX - 1; n <= CQD_REQUEST_ID_MAX + 2; n++) {
        memset(id, 'x', n);
        id[n] = '\0';
        cqd_request req = {.transport = "test", .method = "GET", .path = "/healthz", .request_id = id};
        cqd_response resp;
        cqd_response_init(&resp);
        cqd_handle(&srv, &req, &resp);
        bool kept = strcmp(resp.request_id, id) == 0;
        ck_assert_msg(cqd_request_id_valid(id, n, why, sizeof why) == kept, "length %zu", n);
        ck_assert(kept == (n <= CQD_REQUEST_ID_MAX));
        cqd_response_free(&resp);
    }
    cqd_server_destroy(&srv);
    fclose(log);
}
END_TEST

Suite *record_suite(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("line");
    tcase_add_test(tc, record_line_written_by_hand);
    tcase_add_test(tc, record_bodies_that_are_not_raw_json);
    tcase_add_test(tc, record_bytes_round_trip);
    tcase_add_test(tc, record_line_msgpack);
    tcase_add_test(tc, record_lines_msgpack_read_back);
    tcase_add_test(tc, record_lines_read_back);
    tcase_add_test(tc, record_lines_rejected);
    tcase_add_test(tc, record_lines_refused_fields);
    tcase_add_test(tc, record_utf8_classes);
    tcase_add_test(tc, record_base64_rfc4648_vectors);
    suite_add_tcase(s, tc);
    tc = tcase_create("recorder");
    tcase_add_test(tc, request_id_rule_is_the_servers);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, recorder_lines_from_many_threads);
    tcase_add_test(tc, recorder_failures_keep_serving);
    suite_add_tcase(s, tc);
    return s;
}
