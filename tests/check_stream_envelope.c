/* The stream transport's envelopes (stream_envelope.c): a JSON line's and
 * a MessagePack frame's members, verbatim ids and bodies, headers, and
 * every refusal with its problem and pointer. Expected values are written
 * by hand from docs/API.md section 11. */
#include <check.h>
#include <jansson.h>
#include <msgpuck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/decode.h"
#include "cqp/scan.h"
#include "net/stream_internal.h"
#include "stream_keys.h"
#include "testutil.h"

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
    ck_assert_ptr_null(e.body_tree);
    ck_assert_ptr_null(e.authorization);
    ck_assert_ptr_null(e.request_id);
    cqd_envelope_free(&e);
}
END_TEST

/* True when tree is the JSON value text parses to (an independent parse). */
static bool tree_is(const json_t *tree, const char *text)
{
    json_t *want = json_loads(text, JSON_DECODE_ANY, NULL);
    bool same = want && tree && json_equal(tree, want);
    json_decref(want);
    return same;
}

START_TEST(envelope_keeps_only_the_body_tree)
{
    /* A successful parse frees the line's tree but the body's part, which
     * the pipeline decodes instead of parsing the body text again: the
     * texts are copies that outlive a scribbled-over line, the id and body
     * text point into the line. */
    char line[] = "{\"id\":\"t\",\"method\":\"PUT\",\"path\":\"/v1/worlds/w?q\",\"headers\":"
                  "{\"Authorization\":\"Bearer k\",\"X-Request-Id\":\"r9\"},\"body\":{\"a\":[1,2]}}";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_ptr_null(e.root);
    ck_assert_ptr_eq(e.id, line + 6);
    ck_assert_str_eq(span(e.body, e.body_len), "{\"a\":[1,2]}");
    ck_assert(tree_is(e.body_tree, "{\"a\":[1,2]}"));
    ck_assert_ptr_eq(e.body, strstr(line, "{\"a\""));
    memset(line, 'x', strlen(line));
    ck_assert_str_eq(e.method, "PUT");
    ck_assert_str_eq(e.path, "/v1/worlds/w");
    ck_assert_str_eq(e.query, "q");
    ck_assert_str_eq(e.authorization, "Bearer k");
    ck_assert_str_eq(e.request_id, "r9");
    cqd_envelope_free(&e);
}
END_TEST

/* A random JSON value, strings holding the bytes a scanner must not take
 * for structure (quotes, backslashes, braces, commas). */
static json_t *random_json(tu_rng *r, int depth)
{
    static const char *const texts[] = {"", "}", "\"", "\\", "a,b", "]}", "x\"}\\"};
    int kind = (int)tu_uniform(r, 0, depth > 3 ? 4 : 6);
    switch (kind) {
    case 0: return json_integer((json_int_t)tu_uniform(r, -1e6, 1e6));
    case 1: return json_real(tu_uniform(r, -1e3, 1e3));
    case 2: return json_string(texts[(int)tu_uniform(r, 0, 7)]);
    case 3: return tu_uniform(r, 0, 1) < 0.5 ? json_null() : json_true();
    case 4: {
        json_t *a = json_array();
        for (int n = (int)tu_uniform(r, 0, 5); n > 0; n--)
            json_array_append_new(a, random_json(r, depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (int n = (int)tu_uniform(r, 0, 5); n > 0; n--) {
            char key[16];
            snprintf(key, sizeof key, "%s%d", texts[(int)tu_uniform(r, 0, 7)], n);
            json_object_set_new(o, key, random_json(r, depth + 1));
        }
        return o;
    }
    }
}

typedef struct scanned {
    int count;
    cqp_member m[8];
} scanned;

static int keep_member(const cqp_member *m, void *arg)
{
    scanned *s = arg;
    ck_assert_int_lt(s->count, 8);
    s->m[s->count++] = *m;
    return 0;
}

/* A counted scan finds what the walking scan finds in the text of random
 * objects, compact or indented, blanks after the closing brace too; and
 * in compact text every member's value is what jansson writes for that
 * value alone (the oracle: jansson's own serializer). */
START_TEST(scan_counted_random)
{
    tu_rng rng = {1207};
    for (int round = 0; round < 2000; round++) {
        json_t *obj = json_object();
        int members = 1 + (int)tu_uniform(&rng, 0, 7);
        for (int k = 0; k < members; k++) {
            char key[16];
            snprintf(key, sizeof key, "k%d", k);
            json_object_set_new(obj, key, random_json(&rng, 0));
        }
        bool compact = round % 2 == 0;
        size_t flags = JSON_PRESERVE_ORDER | (compact ? JSON_COMPACT : JSON_INDENT(2));
        char *text = json_dumps(obj, flags);
        char line[65536];
        int n = snprintf(line, sizeof line, "%s%s", text, round % 3 ? "" : " \r\n");
        ck_assert_int_lt(n, (int)sizeof line);
        scanned walked = {0}, counted = {0};
        ck_assert_int_eq(cqp_scan_object(line, (size_t)n, keep_member, &walked, NULL), 0);
        ck_assert_int_eq(cqp_scan_object_counted(line, (size_t)n, (size_t)members, keep_member, &counted, NULL), 0);
        ck_assert_int_eq(walked.count, members);
        ck_assert_int_eq(counted.count, members);
        for (int k = 0; k < members; k++) {
            ck_assert(counted.m[k].key == walked.m[k].key && counted.m[k].key_len == walked.m[k].key_len);
            ck_assert(counted.m[k].value == walked.m[k].value && counted.m[k].value_len == walked.m[k].value_len);
            if (!compact)
                continue;
            char key[16];
            snprintf(key, sizeof key, "k%d", k);
            char *want = json_dumps(json_object_get(obj, key), JSON_COMPACT | JSON_ENCODE_ANY);
            ck_assert_uint_eq(counted.m[k].value_len, strlen(want));
            ck_assert(memcmp(counted.m[k].value, want, strlen(want)) == 0);
            free(want);
        }
        free(text);
        json_decref(obj);
    }
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
    ck_assert(tree_is(e.body_tree, "12.5"));
    ck_assert_str_eq(span(e.id, e.id_len), "\"x,}\"");
    cqd_envelope_free(&e);

    /* "body": null is no body; no id is a null id. */
    line = "{\"method\":\"GET\",\"path\":\"/healthz\",\"body\":null}";
    ck_assert_int_eq(cqd_envelope_parse(line, strlen(line), &e, &p), 0);
    ck_assert_ptr_null(e.body);
    ck_assert_uint_eq(e.body_len, 0);
    ck_assert_ptr_null(e.body_tree);
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
    /* An unknown member's pointer is cut without splitting a UTF-8
     * character: 120 x "\u00e9" is 240 bytes, 1 + 2 x 127 = 255 fit. */
    char big[1024] = "{\"method\":\"GET\",\"path\":\"/\",\"";
    for (int i = 0; i < 130; i++)
        strcat(big, "\u00e9");
    strcat(big, "\":1}");
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse(big, strlen(big), &e, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_UNKNOWN_FIELD);
    ck_assert_uint_eq(strlen(p.pointer), 1 + 2 * 127);
    ck_assert_int_eq(p.pointer[0], '/');
    ck_assert_int_eq((unsigned char)p.pointer[253], 0xC3);
    ck_assert_int_eq((unsigned char)p.pointer[254], 0xA9);
    cqd_envelope_free(&e);

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
    ck_assert_int_eq(cqd_envelope_parse("[1,2]", 5, &e, &p), -1);
    ck_assert_int_eq(cqp_problem_status(p.kind), 400);
    ck_assert_ptr_null(e.id);
    cqd_envelope_free(&e);
}
END_TEST

/* ---- MessagePack envelope ------------------------------------------------ */


START_TEST(envelope_frame_basic)
{
    /* {"id": 7, "method": "GET", "path": "/v1/worlds/a?q=1", "body": {"a": [1, 2]}}:
     * the path is 16 bytes (0xb0). */
    static const char frame[] = "\x84" M_ID "\x07" M_METHOD M_GET M_PATH "\xb0/v1/worlds/a?q=1" M_BODY
                                "\x81\xa1" "a\x92\x01\x02";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse_frame(frame, sizeof frame - 1, &e, &p), 0);
    ck_assert_ptr_eq(e.id, frame + 4);
    ck_assert_uint_eq(e.id_len, 1);
    ck_assert_str_eq(e.method, "GET");
    ck_assert_str_eq(e.path, "/v1/worlds/a");
    ck_assert_str_eq(e.query, "q=1");
    ck_assert_ptr_eq(e.body, frame + sizeof frame - 1 - 6);
    ck_assert_uint_eq(e.body_len, 6);
    ck_assert_ptr_null(e.body_tree);
    ck_assert_ptr_null(e.root);
    ck_assert_int_eq(e.body_value.format, CQP_MSGPACK);
    ck_assert_ptr_eq(e.body_value.ref, e.body);
    ck_assert_int_eq(cqp_value_type(e.body_value), CQP_V_OBJECT);
    ck_assert_ptr_null(e.authorization);
    ck_assert_ptr_null(e.request_id);
    cqd_envelope_free(&e);
}
END_TEST

START_TEST(envelope_frame_members)
{
    cqd_envelope e;
    cqp_problem p;
    /* A map id and a str8 id span all their bytes; no id is NULL; a nil
     * body is none. */
    static const char map_id[] = "\x83" M_ID "\x81\xa1k\x92\x01\x02" M_METHOD M_GET M_PATH M_ROOT;
    ck_assert_int_eq(cqd_envelope_parse_frame(map_id, sizeof map_id - 1, &e, &p), 0);
    ck_assert_ptr_eq(e.id, map_id + 4);
    ck_assert_uint_eq(e.id_len, 6);
    cqd_envelope_free(&e);
    static const char str8_id[] = "\x84" M_METHOD M_GET M_PATH M_ROOT M_BODY "\xc0" M_ID "\xd9\x01x";
    ck_assert_int_eq(cqd_envelope_parse_frame(str8_id, sizeof str8_id - 1, &e, &p), 0);
    ck_assert_uint_eq(e.id_len, 3);
    ck_assert(memcmp(e.id, "\xd9\x01x", 3) == 0);
    ck_assert_ptr_null(e.body);
    ck_assert(!cqp_value_present(e.body_value));
    cqd_envelope_free(&e);
    /* A body spans its bytes wherever it stands: first (walked to its
     * end), or last (up to the frame's end). */
    static const char body_first[] = "\x83" M_BODY "\x81\xa1k\x92\x01\xc0" M_METHOD M_GET M_PATH M_ROOT;
    ck_assert_int_eq(cqd_envelope_parse_frame(body_first, sizeof body_first - 1, &e, &p), 0);
    ck_assert_ptr_eq(e.body, body_first + 6);
    ck_assert_uint_eq(e.body_len, 6);
    cqd_envelope_free(&e);
    static const char body_last[] = "\x83" M_METHOD M_GET M_PATH M_ROOT M_BODY "\x81\xa1k\x92\x01\xc0";
    ck_assert_int_eq(cqd_envelope_parse_frame(body_last, sizeof body_last - 1, &e, &p), 0);
    ck_assert_ptr_eq(e.body, body_last + sizeof body_last - 1 - 6);
    ck_assert_uint_eq(e.body_len, 6);
    cqd_envelope_free(&e);
    static const char bare[] = "\x82" M_METHOD M_GET M_PATH M_ROOT;
    ck_assert_int_eq(cqd_envelope_parse_frame(bare, sizeof bare - 1, &e, &p), 0);
    ck_assert_ptr_null(e.id);
    cqd_envelope_free(&e);

    /* Headers by any case; others ignored. */
    static const char headers[] = "\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x83\xad" "AUTHORIZATION\xa8"
                                  "Bearer t\xacx-request-ID\xa3r-1\xa6" "Accept\xa3" "a/b";
    ck_assert_int_eq(cqd_envelope_parse_frame(headers, sizeof headers - 1, &e, &p), 0);
    ck_assert_str_eq(e.authorization, "Bearer t");
    ck_assert_str_eq(e.request_id, "r-1");
    cqd_envelope_free(&e);
}
END_TEST

static void expect_frame_refusal(const char *frame, size_t len, cqp_problem_kind kind, const char *pointer,
                                 const char *id, size_t id_len)
{
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse_frame(frame, len, &e, &p), -1);
    ck_assert_int_eq(p.kind, kind);
    ck_assert_int_eq(cqp_problem_status(p.kind), 400);
    ck_assert_str_eq(p.pointer, pointer ? pointer : "");
    if (id) {
        ck_assert_uint_eq(e.id_len, id_len);
        ck_assert(memcmp(e.id, id, id_len) == 0);
    } else {
        ck_assert_ptr_null(e.id);
    }
    cqd_envelope_free(&e);
}

#define REFUSED(frame, kind, pointer) expect_frame_refusal(frame, sizeof frame - 1, kind, pointer, NULL, 0)
#define REFUSED_ID(frame, kind, pointer, id) \
    expect_frame_refusal(frame, sizeof frame - 1, kind, pointer, id, sizeof id - 1)

START_TEST(envelope_frame_refusals)
{
    /* Refused by the check: nothing of the frame is trusted, not even its id. */
    REFUSED("\x84" M_ID "\x01" M_ID "\x02" M_METHOD M_GET M_PATH M_ROOT, CQP_P_BAD_MSGPACK, NULL);
    REFUSED("\x83" M_ID "\xc4\x01\x00" M_METHOD M_GET M_PATH M_ROOT, CQP_P_BAD_MSGPACK, NULL);
    REFUSED("\x82" M_METHOD M_GET M_PATH M_ROOT "\xc0", CQP_P_BAD_MSGPACK, NULL); /* trailing nil */
    /* Not a map. */
    REFUSED("\x92\x01\x02", CQP_P_BAD_TYPE, NULL);
    /* The JSON envelope's refusals, with their pointers and the id. */
    REFUSED_ID("\x82" M_ID "\x03" M_METHOD M_GET, CQP_P_MISSING_FIELD, "/path", "\x03");
    REFUSED_ID("\x82" M_ID "\x03" M_PATH M_ROOT, CQP_P_MISSING_FIELD, "/method", "\x03");
    REFUSED_ID("\x83" M_ID "\x91\x04" M_METHOD M_GET M_PATH "\x05", CQP_P_BAD_TYPE, "/path", "\x91\x04");
    REFUSED("\x83" M_METHOD M_GET M_PATH M_ROOT "\xa4" "a/b~\x01", CQP_P_UNKNOWN_FIELD, "/a~1b~0");
    REFUSED("\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x91\x01", CQP_P_BAD_TYPE, "/headers");
    REFUSED("\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x81\xacX-Request-Id\x01", CQP_P_BAD_TYPE,
            "/headers/X-Request-Id");
    REFUSED("\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x82\xad" "authorization\xa1" "a\xad" "Authorization\xa1" "b",
            CQP_P_BAD_VALUE, "/headers/Authorization");
    /* A NUL byte, which a str may hold, would cut the C string. */
    REFUSED("\x82" M_METHOD M_GET M_PATH "\xa3/\x00x", CQP_P_BAD_VALUE, "/path");
    REFUSED("\x82" M_METHOD "\xa3G\x00T" M_PATH M_ROOT, CQP_P_BAD_VALUE, "/method");
    REFUSED("\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x81\xacX-Request-Id\xa2r\x00", CQP_P_BAD_VALUE,
            "/headers/X-Request-Id");

    /* A refusal keeps the request id the headers named before the fault. */
    static const char late[] = "\x83" M_METHOD M_GET M_PATH M_ROOT M_HEADERS "\x82\xacX-Request-Id\xa2r9\xa6"
                               "Accept\x02";
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse_frame(late, sizeof late - 1, &e, &p), -1);
    ck_assert_str_eq(p.pointer, "/headers/Accept");
    ck_assert_str_eq(e.request_id, "r9");
    cqd_envelope_free(&e);
}
END_TEST

START_TEST(envelope_frame_depth)
{
    /* 32 levels with the envelope's: the body's map and 30 arrays pass,
     * one more array is refused. */
    char frame[128] = "\x83" M_METHOD "\xa4POST" M_PATH M_ROOT M_BODY "\x81\xa1" "a";
    size_t n = strlen(frame);
    memset(frame + n, 0x91, 30);
    frame[n + 30] = 0x01;
    cqd_envelope e;
    cqp_problem p;
    ck_assert_int_eq(cqd_envelope_parse_frame(frame, n + 31, &e, &p), 0);
    ck_assert_uint_eq(e.body_len, 3 + 30 + 1);
    cqd_envelope_free(&e);
    memset(frame + n, 0x91, 31);
    frame[n + 31] = 0x01;
    ck_assert_int_eq(cqd_envelope_parse_frame(frame, n + 32, &e, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_ptr_nonnull(strstr(p.detail, "nesting deeper than 32"));
    cqd_envelope_free(&e);
}
END_TEST

Suite *stream_envelope_suite(void)
{
    Suite *s = suite_create("stream_envelope");
    TCase *t = tcase_create("envelope");
    tcase_add_test(t, envelope_basic);
    tcase_add_test(t, envelope_keeps_only_the_body_tree);
    tcase_add_test(t, envelope_verbatim_members);
    tcase_add_test(t, scan_counted_random);
    tcase_add_test(t, envelope_headers);
    tcase_add_test(t, envelope_refusals);
    tcase_add_test(t, envelope_frame_basic);
    tcase_add_test(t, envelope_frame_members);
    tcase_add_test(t, envelope_frame_refusals);
    tcase_add_test(t, envelope_frame_depth);
    suite_add_tcase(s, t);
    return s;
}
