/* The output half of proto/ except number formatting (check_proto_number.c):
 * the byte buffer, the JSON writer (compact and pretty, against hand-written
 * documents laid out as Python's json.dumps(indent=2) lays them out), string
 * escaping (RFC 8259's escapes written out by hand), problem+json, and the
 * encoders of contacts, shapes, poses, bodies, settings and hits against
 * hand-written JSON. Every document written is also parsed back with
 * jansson. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/hull.h"
#include "cq/mesh.h"
#include "cqp/encode.h"
#include "cqp/problem.h"
#include "number_util.h"
#include "testutil.h"

/* Oracle: jansson reads text as exactly one JSON value. */
static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
    ck_assert_msg(v != NULL, "jansson rejects %s: %s (line %d column %d)", text, err.text, err.line, err.column);
    return v;
}

static void assert_valid(const char *text) { json_decref(parse(text)); }

/* A writer over a fresh buffer. */
typedef struct doc {
    cqp_buf buf;
    cqp_writer w;
} doc;

static void doc_init(doc *d, bool pretty)
{
    d->buf = (cqp_buf){0};
    cqp_writer_init(&d->w, &d->buf, pretty);
}

/* The document equals expected, parses, and the buffer is released. */
static void doc_check(doc *d, const char *expected)
{
    ck_assert(!d->buf.oom);
    ck_assert_int_eq(d->w.depth, 0);
    ck_assert_ptr_nonnull(d->buf.data);
    ck_assert_str_eq(d->buf.data, expected);
    ck_assert_uint_eq(d->buf.len, strlen(expected));
    assert_valid(d->buf.data);
    cqp_buf_free(&d->buf);
}

/* ---- cqp_buf ---- */

START_TEST(buf_appends_and_grows)
{
    cqp_buf b = {0};
    cqp_buf_puts(&b, "");
    ck_assert_uint_eq(b.len, 0);
    cqp_buf_puts(&b, "abc");
    cqp_buf_append(&b, "defgh", 2);
    ck_assert_str_eq(b.data, "abcde");
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cqp_buf_printf(&b, "[%s|%d]", big, 42);
    ck_assert_uint_eq(b.len, 5 + 1 + 4999 + 4);
    ck_assert_uint_eq(strlen(b.data), b.len);
    ck_assert_int_eq(memcmp(b.data + b.len - 4, "|42]", 4), 0);
    ck_assert_int_eq(b.data[5], '[');
    ck_assert(b.cap > b.len);
    cqp_buf_printf(&b, "%s", "");
    ck_assert_uint_eq(strlen(b.data), b.len);

    size_t cap = b.cap;
    char *data = b.data;
    cqp_buf_reset(&b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_ptr_eq(b.data, data);
    ck_assert_uint_eq(b.cap, cap);
    ck_assert_str_eq(b.data, "");
    cqp_buf_printf(&b, "%d-%s", 7, "z");
    ck_assert_str_eq(b.data, "7-z");
    cqp_buf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_uint_eq(b.cap, 0);
}
END_TEST

/* A reserve makes exactly the room asked for (and the NUL's), once:
 * the appends that fill it move nothing; a reserve within the room is a
 * no-op; an oom buffer gets none and stays as it was. */
START_TEST(buf_reserve_exact)
{
    cqp_buf b = {0};
    ck_assert(cqp_buf_reserve(&b, 10));
    ck_assert_uint_eq(b.cap, 11);
    ck_assert_str_eq(b.data, "");
    char *data = b.data;
    cqp_buf_append(&b, "0123456789", 10);
    ck_assert_ptr_eq(b.data, data);
    ck_assert_str_eq(b.data, "0123456789");
    ck_assert(cqp_buf_reserve(&b, 0));
    ck_assert_uint_eq(b.cap, 11);
    ck_assert(cqp_buf_reserve(&b, 5));
    ck_assert_uint_eq(b.cap, 16);
    ck_assert_str_eq(b.data, "0123456789");
    ck_assert(!cqp_buf_reserve(&b, SIZE_MAX / 2));
    ck_assert(!b.oom);
    ck_assert_uint_eq(b.cap, 16);
    b.oom = true;
    ck_assert(!cqp_buf_reserve(&b, 100));
    ck_assert_uint_eq(b.cap, 16);
    cqp_buf_free(&b);
}
END_TEST

START_TEST(buf_oom_drops_appends)
{
    cqp_buf b = {0};
    cqp_buf_puts(&b, "ok");
    b.oom = true;
    cqp_buf_puts(&b, "lost");
    cqp_buf_printf(&b, "%d", 5);
    ck_assert_str_eq(b.data, "ok");
    ck_assert_uint_eq(b.len, 2);
    cqp_buf_free(&b);
}
END_TEST

/* ---- the writer ---- */

/* The same small document in both modes. */
static void write_small(cqp_writer *w)
{
    cqp_obj_begin(w);
    cqp_key(w, "name");
    cqp_str(w, "box");
    cqp_key(w, "n");
    cqp_int(w, 3);
    cqp_key(w, "list");
    cqp_arr_begin(w);
    cqp_num(w, 1.5);
    cqp_num(w, -2);
    cqp_bool(w, true);
    cqp_null(w);
    cqp_arr_end(w);
    cqp_key(w, "empty_obj");
    cqp_obj_begin(w);
    cqp_obj_end(w);
    cqp_key(w, "empty_arr");
    cqp_arr_begin(w);
    cqp_arr_end(w);
    cqp_key(w, "nested");
    cqp_obj_begin(w);
    cqp_key(w, "deep");
    cqp_arr_begin(w);
    cqp_arr_begin(w);
    cqp_uint(w, 7);
    cqp_arr_end(w);
    cqp_arr_end(w);
    cqp_obj_end(w);
    cqp_obj_end(w);
}

START_TEST(writer_compact)
{
    doc d;
    doc_init(&d, false);
    write_small(&d.w);
    doc_check(&d, "{\"name\":\"box\",\"n\":3,\"list\":[1.5,-2,true,null],\"empty_obj\":{},\"empty_arr\":[],"
                  "\"nested\":{\"deep\":[[7]]}}");
}
END_TEST

START_TEST(writer_pretty)
{
    doc d;
    doc_init(&d, true);
    write_small(&d.w);
    doc_check(&d, "{\n"
                  "  \"name\": \"box\",\n"
                  "  \"n\": 3,\n"
                  "  \"list\": [\n"
                  "    1.5,\n"
                  "    -2,\n"
                  "    true,\n"
                  "    null\n"
                  "  ],\n"
                  "  \"empty_obj\": {},\n"
                  "  \"empty_arr\": [],\n"
                  "  \"nested\": {\n"
                  "    \"deep\": [\n"
                  "      [\n"
                  "        7\n"
                  "      ]\n"
                  "    ]\n"
                  "  }\n"
                  "}");
}
END_TEST

START_TEST(writer_scalars_and_raw)
{
    doc d;
    doc_init(&d, false);
    cqp_num(&d.w, 0.25);
    doc_check(&d, "0.25");

    doc_init(&d, true);
    cqp_arr_begin(&d.w);
    cqp_arr_end(&d.w);
    doc_check(&d, "[]");

    doc_init(&d, false);
    cqp_arr_begin(&d.w);
    cqp_int(&d.w, INT64_MIN);
    cqp_int(&d.w, INT64_MAX);
    cqp_int(&d.w, 0);
    cqp_int(&d.w, -1);
    cqp_uint(&d.w, (uint64_t)1 << 63 >> 1);
    cqp_num(&d.w, INFINITY);
    cqp_num(&d.w, -INFINITY);
    cqp_num(&d.w, NAN);
    cqp_vec3(&d.w, cq_v3(-0.0, 1e-7, 1e21));
    cqp_arr_end(&d.w);
    doc_check(&d, "[-9223372036854775808,9223372036854775807,0,-1,4611686018427387904,null,null,null,"
                  "[0,1e-07,1e+21]]");

    /* An answer has one zero; an export keeps a stored -0 (the bytes are
     * the oracle: "-0" and "0" parse to equal numbers). */
    doc_init(&d, false);
    cqp_arr_begin(&d.w);
    cqp_num(&d.w, -0.0);
    cqp_num(&d.w, -(0.0 * 1.5));
    cqp_num(&d.w, -1e-300 * 1e-300); /* underflows to -0 */
    cqp_num(&d.w, -1e-300);         /* tiny, not zero: its sign stays */
    d.w.keep_negative_zero = true;
    cqp_num(&d.w, -0.0);
    cqp_num(&d.w, 0.0);
    d.w.keep_negative_zero = false;
    cqp_vec3(&d.w, cq_v3(-0.0, -1, -0.0));
    cqp_arr_end(&d.w);
    doc_check(&d, "[0,0,0,-1e-300,-0,0,[0,-1,0]]");

    /* Valid JSON past jansson's int64 integers: compared as text only. */
    doc_init(&d, false);
    cqp_uint(&d.w, UINT64_MAX);
    ck_assert_str_eq(d.buf.data, "18446744073709551615");
    cqp_buf_free(&d.buf);

    /* The stream transport's envelope around a handler's body. */
    const char *body = "{\"hit\":null}";
    doc_init(&d, false);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "id");
    cqp_int(&d.w, 7);
    cqp_key(&d.w, "status");
    cqp_int(&d.w, 200);
    cqp_key(&d.w, "body");
    cqp_raw(&d.w, body, strlen(body));
    cqp_key(&d.w, "after");
    cqp_raw(&d.w, "[1,2]", 5);
    cqp_obj_end(&d.w);
    doc_check(&d, "{\"id\":7,\"status\":200,\"body\":{\"hit\":null},\"after\":[1,2]}");

    doc_init(&d, true);
    cqp_arr_begin(&d.w);
    cqp_raw(&d.w, "{}", 2);
    cqp_raw(&d.w, "1", 1);
    cqp_arr_end(&d.w);
    doc_check(&d, "[\n  {},\n  1\n]");
}
END_TEST

START_TEST(writer_many_siblings)
{
    /* More siblings than the saturating uint8 count holds. */
    doc d;
    doc_init(&d, false);
    cqp_obj_begin(&d.w);
    char expected[8192] = "{";
    size_t n = 1;
    for (int i = 0; i < 600; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        cqp_key(&d.w, key);
        cqp_int(&d.w, i);
        n += (size_t)snprintf(expected + n, sizeof expected - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    }
    cqp_obj_end(&d.w);
    snprintf(expected + n, sizeof expected - n, "}");
    doc_check(&d, expected);
}
END_TEST

START_TEST(writer_depth_limit)
{
    /* Exactly the deepest supported nesting is fine. */
    doc d;
    doc_init(&d, true);
    for (int i = 0; i < CQP_WRITER_MAX_DEPTH; i++)
        cqp_arr_begin(&d.w);
    cqp_int(&d.w, 1);
    for (int i = 0; i < CQP_WRITER_MAX_DEPTH; i++)
        cqp_arr_end(&d.w);
    ck_assert(!d.buf.oom);
    json_t *root = parse(d.buf.data), *v = root;
    for (int i = 0; i < CQP_WRITER_MAX_DEPTH; i++) {
        ck_assert(json_is_array(v));
        v = json_array_get(v, 0);
    }
    ck_assert_int_eq(json_integer_value(v), 1);
    json_decref(root);
    cqp_buf_free(&d.buf);

    /* One more marks the buffer unusable, and nothing overflows (ASan). */
    for (int pretty = 0; pretty < 2; pretty++) {
        doc_init(&d, pretty);
        for (int i = 0; i < 3 * CQP_WRITER_MAX_DEPTH; i++) {
            cqp_obj_begin(&d.w);
            cqp_key(&d.w, "k");
            cqp_arr_begin(&d.w);
            cqp_num(&d.w, 1);
        }
        for (int i = 0; i < 3 * CQP_WRITER_MAX_DEPTH; i++) {
            cqp_arr_end(&d.w);
            cqp_obj_end(&d.w);
        }
        ck_assert(d.buf.oom);
        ck_assert_int_eq(d.w.depth, 0);
        cqp_buf_free(&d.buf);
    }

    /* An end without a begin is a caller bug: marked, not a crash. */
    doc_init(&d, false);
    cqp_arr_end(&d.w);
    ck_assert(d.buf.oom);
    ck_assert_int_eq(d.w.depth, 0);
    cqp_buf_free(&d.buf);
}
END_TEST

/* ---- escaping ---- */

/* RFC 8259's escapes for bytes 0..31, written out by hand. */
static const char *const control_escapes[32] = {
    NULL,      "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
    "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
    "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
    "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
};

START_TEST(escape_control_characters)
{
    for (int c = 1; c < 32; c++) {
        char in[4] = {'a', (char)c, 'b', 0};
        char expected[32];
        snprintf(expected, sizeof expected, "\"a%sb\"", control_escapes[c]);
        doc d;
        doc_init(&d, false);
        cqp_str(&d.w, in);
        ck_assert_str_eq(d.buf.data, expected);
        json_t *v = parse(d.buf.data);
        ck_assert_str_eq(json_string_value(v), in);
        json_decref(v);
        cqp_buf_free(&d.buf);
    }
}
END_TEST

START_TEST(escape_quote_backslash_utf8)
{
    /* Quote and backslash escaped; '/', DEL and UTF-8 (é, €, 𝄞) pass through. */
    const char *in = "q\"b\\s/\x7f\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
    doc d;
    doc_init(&d, false);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, in);
    cqp_str(&d.w, in);
    cqp_key(&d.w, "");
    cqp_str(&d.w, "");
    cqp_obj_end(&d.w);
    const char *expected = "{\"q\\\"b\\\\s/\x7f\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\":"
                           "\"q\\\"b\\\\s/\x7f\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\",\"\":\"\"}";
    ck_assert_str_eq(d.buf.data, expected);
    json_t *v = parse(d.buf.data);
    ck_assert_str_eq(json_string_value(json_object_get(v, in)), in);
    json_decref(v);
    cqp_buf_free(&d.buf);

    /* Every control character in one string, with a long plain run. */
    char all[64 + 32];
    int n = 0;
    for (int c = 31; c >= 1; c--)
        all[n++] = (char)c;
    memset(all + n, 'p', 40);
    all[n + 40] = 0;
    doc_init(&d, false);
    cqp_str(&d.w, all);
    v = parse(d.buf.data);
    ck_assert_str_eq(json_string_value(v), all);
    json_decref(v);
    cqp_buf_free(&d.buf);
}
END_TEST

/* ---- problem+json ---- */

START_TEST(problem_table)
{
    ck_assert_int_eq(cqp_problem_status(CQP_P_BAD_JSON), 400);
    ck_assert_int_eq(cqp_problem_status(CQP_P_UNAUTHORIZED), 401);
    ck_assert_int_eq(cqp_problem_status(CQP_P_NOT_FOUND), 404);
    ck_assert_int_eq(cqp_problem_status(CQP_P_BAD_METHOD), 405);
    ck_assert_int_eq(cqp_problem_status(CQP_P_CONFLICT), 409);
    ck_assert_int_eq(cqp_problem_status(CQP_P_TOO_LARGE), 413);
    ck_assert_int_eq(cqp_problem_status(CQP_P_OVER_LIMIT), 422);
    ck_assert_int_eq(cqp_problem_status(CQP_P_INTERNAL), 500);
    ck_assert_int_eq(cqp_problem_status(CQP_P_BUSY), 503);
    ck_assert_str_eq(cqp_problem_slug(CQP_P_UNKNOWN_FIELD), "unknown-field");
    ck_assert_str_eq(cqp_problem_title(CQP_P_NO_ROUTE), "No such endpoint");
    ck_assert_str_eq(cqp_problem_title(CQP_P_BAD_TYPE), "Wrong type");
    /* A title goes out in either format: only the two malformed-body
     * kinds, each of one format, may name it. */
    for (int k = 0; k < CQP_P_COUNT; k++) {
        const char *t = cqp_problem_title((cqp_problem_kind)k);
        if (k != CQP_P_BAD_JSON && k != CQP_P_BAD_MSGPACK)
            ck_assert_msg(!strstr(t, "JSON") && !strstr(t, "MessagePack"), "title \"%s\" names a format", t);
    }
    /* Out of range is reported as internal, never read past the table. */
    ck_assert_int_eq(cqp_problem_status(CQP_P_COUNT), 500);
    ck_assert_int_eq(cqp_problem_status((cqp_problem_kind)-1), 500);
    ck_assert_str_eq(cqp_problem_slug((cqp_problem_kind)1000), "internal");
}
END_TEST

START_TEST(problem_write)
{
    cqp_problem p;
    ck_assert_int_eq(cqp_fail(&p, CQP_P_BAD_VALUE, "/a/shape/half_extents/1", "a.shape.half_extents[%d] must be >= 0", 1),
                     -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_VALUE);
    doc d;
    doc_init(&d, false);
    cqp_write_problem(&d.w, &p);
    doc_check(&d, "{\"type\":\"urn:collisiond:problem:invalid-value\",\"title\":\"Invalid value\",\"status\":400,"
                  "\"detail\":\"a.shape.half_extents[1] must be >= 0\",\"pointer\":\"/a/shape/half_extents/1\"}");

    ck_assert_int_eq(cqp_fail(&p, CQP_P_BAD_JSON, NULL, "line %d column %d: \"%s\"", 3, 14, "end of file expected"),
                     -1);
    ck_assert_str_eq(p.pointer, "");
    doc_init(&d, true);
    cqp_write_problem(&d.w, &p);
    doc_check(&d, "{\n"
                  "  \"type\": \"urn:collisiond:problem:malformed-json\",\n"
                  "  \"title\": \"Malformed JSON\",\n"
                  "  \"status\": 400,\n"
                  "  \"detail\": \"line 3 column 14: \\\"end of file expected\\\"\"\n"
                  "}");

    /* Long details and pointers are cut to the struct, NUL-terminated. */
    char longer[600];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    cqp_fail(&p, CQP_P_OVER_LIMIT, longer, "%s", longer);
    ck_assert_uint_eq(strlen(p.detail), sizeof p.detail - 1);
    ck_assert_uint_eq(strlen(p.pointer), sizeof p.pointer - 1);
    doc_init(&d, false);
    cqp_write_problem(&d.w, &p);
    json_t *v = parse(d.buf.data);
    ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), 422);
    ck_assert_str_eq(json_string_value(json_object_get(v, "type")), "urn:collisiond:problem:over-limit");
    json_decref(v);
    cqp_buf_free(&d.buf);
}
END_TEST

/* ---- contacts ---- */

START_TEST(contact_sphere_sphere)
{
    cq_contact c = {
        .overlap = true,
        .has_normal = true,
        .depth = 0.25,
        .normal = {1, 0, 0},
        .point_count = 1,
        .points = {{.position = {0.75, 0, 0}, .depth = 0.25, .feature = {CQ_FEAT_FACE, CQ_FEAT_FACE, 0, 0}}},
        .algorithm = CQ_ALG_SPHERE_SPHERE,
        .sat_axis = -1,
    };
    doc d;
    doc_init(&d, false);
    cqp_write_contact(&d.w, &c, NULL);
    doc_check(&d, "{\"overlap\":true,\"distance\":0,\"depth\":0.25,\"normal\":[1,0,0],"
                  "\"points\":[{\"position\":[0.75,0,0],\"depth\":0.25,\"feature\":\"f0.f0\"}],"
                  "\"algorithm\":\"sphere_sphere\",\"fallback\":null}");

    doc_init(&d, true);
    cqp_write_contact(&d.w, &c, NULL);
    doc_check(&d, "{\n"
                  "  \"overlap\": true,\n"
                  "  \"distance\": 0,\n"
                  "  \"depth\": 0.25,\n"
                  "  \"normal\": [\n"
                  "    1,\n"
                  "    0,\n"
                  "    0\n"
                  "  ],\n"
                  "  \"points\": [\n"
                  "    {\n"
                  "      \"position\": [\n"
                  "        0.75,\n"
                  "        0,\n"
                  "        0\n"
                  "      ],\n"
                  "      \"depth\": 0.25,\n"
                  "      \"feature\": \"f0.f0\"\n"
                  "    }\n"
                  "  ],\n"
                  "  \"algorithm\": \"sphere_sphere\",\n"
                  "  \"fallback\": null\n"
                  "}");

    /* Separated: witness points, no manifold points. */
    cq_contact s = {
        .has_normal = true,
        .has_distance = true,
        .distance = 0.5,
        .normal = {0, 0, -1},
        .witness_a = {0, 0, -1},
        .witness_b = {0, 0, -1.5},
        .algorithm = CQ_ALG_SPHERE_SPHERE,
        .sat_axis = -1,
    };
    doc_init(&d, false);
    cqp_write_contact(&d.w, &s, NULL);
    doc_check(&d, "{\"overlap\":false,\"distance\":0.5,\"depth\":0,\"normal\":[0,0,-1],\"points\":[],"
                  "\"witness\":{\"a\":[0,0,-1],\"b\":[0,0,-1.5]},\"algorithm\":\"sphere_sphere\",\"fallback\":null}");
}
END_TEST

START_TEST(contact_box_box_explain)
{
    cq_contact c = {
        .overlap = true,
        .has_normal = true,
        .depth = 0.125,
        .normal = {0, 1, 0},
        .point_count = 2,
        .points =
            {
                {.position = {1, 2, 3}, .depth = 0.125, .feature = {CQ_FEAT_FACE, CQ_FEAT_EDGE, 2, 1}},
                {.position = {-1, 2, 3}, .depth = 0.0625, .feature = {CQ_FEAT_VERTEX, CQ_FEAT_FACE, 7, 3}},
            },
        .algorithm = CQ_ALG_SAT_BOX_BOX,
        .sat_axis = 11,
        .sat_gap = -0.125,
    };
    cq_sat_axis explain[CQ_SAT_AXIS_COUNT];
    for (int i = 0; i < CQ_SAT_AXIS_COUNT; i++)
        explain[i] = (cq_sat_axis){.gap = -i / 8.0, .skipped = i == 6 || i == 10};
    doc d;
    doc_init(&d, false);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "a");
    cqp_str(&d.w, "box1");
    cqp_write_contact_fields(&d.w, &c, explain);
    cqp_obj_end(&d.w);
    doc_check(&d, "{\"a\":\"box1\",\"overlap\":true,\"distance\":0,\"depth\":0.125,\"normal\":[0,1,0],\"points\":["
                  "{\"position\":[1,2,3],\"depth\":0.125,\"feature\":\"f2.e1\"},"
                  "{\"position\":[-1,2,3],\"depth\":0.0625,\"feature\":\"v7.f3\"}],"
                  "\"algorithm\":\"sat_box_box\",\"fallback\":null,\"sat\":{\"axis\":\"A1xB2\",\"gap\":-0.125},"
                  "\"axes\":["
                  "{\"name\":\"A0\",\"gap\":0},"
                  "{\"name\":\"A1\",\"gap\":-0.125},"
                  "{\"name\":\"A2\",\"gap\":-0.25},"
                  "{\"name\":\"B0\",\"gap\":-0.375},"
                  "{\"name\":\"B1\",\"gap\":-0.5},"
                  "{\"name\":\"B2\",\"gap\":-0.625},"
                  "{\"name\":\"A0xB0\",\"skipped\":true},"
                  "{\"name\":\"A0xB1\",\"gap\":-0.875},"
                  "{\"name\":\"A0xB2\",\"gap\":-1},"
                  "{\"name\":\"A1xB0\",\"gap\":-1.125},"
                  "{\"name\":\"A1xB1\",\"skipped\":true},"
                  "{\"name\":\"A1xB2\",\"gap\":-1.375},"
                  "{\"name\":\"A2xB0\",\"gap\":-1.5},"
                  "{\"name\":\"A2xB1\",\"gap\":-1.625},"
                  "{\"name\":\"A2xB2\",\"gap\":-1.75}]}");

    /* Box-box whose every axis was skipped still says so. */
    c.sat_axis = -1;
    c.point_count = 0;
    c.sat_gap = 0;
    doc_init(&d, false);
    cqp_write_contact(&d.w, &c, NULL);
    doc_check(&d, "{\"overlap\":true,\"distance\":0,\"depth\":0.125,\"normal\":[0,1,0],\"points\":[],"
                  "\"algorithm\":\"sat_box_box\",\"fallback\":null,\"sat\":{\"axis\":\"none\",\"gap\":0}}");
}
END_TEST

START_TEST(contact_fallbacks)
{
    cq_contact c = {
        .overlap = true,
        .algorithm = CQ_ALG_GJK_EPA,
        .fallback_reason = CQ_FB_EPA_DEGENERATE,
        .fallback_action = CQ_FBA_DROPPED,
        .sat_axis = -1,
    };
    doc d;
    doc_init(&d, false);
    cqp_write_contact(&d.w, &c, NULL);
    doc_check(&d, "{\"overlap\":true,\"distance\":0,\"depth\":0,\"points\":[],\"algorithm\":\"gjk_epa\","
                  "\"fallback\":{\"reason\":\"epa_degenerate\",\"action\":\"dropped\"}}");

    c.has_normal = true;
    c.normal = cq_v3(0, 0, 1);
    c.depth = 0.5;
    c.fallback_reason = CQ_FB_EPA_ITERATION_LIMIT;
    c.fallback_action = CQ_FBA_PREVIOUS_NORMAL;
    doc_init(&d, false);
    cqp_write_contact(&d.w, &c, NULL);
    doc_check(&d, "{\"overlap\":true,\"distance\":0,\"depth\":0.5,\"normal\":[0,0,1],\"points\":[],"
                  "\"algorithm\":\"gjk_epa\","
                  "\"fallback\":{\"reason\":\"epa_iteration_limit\",\"action\":\"previous_normal\"}}");
}
END_TEST

/* The core's own answer for random box pairs, read back by jansson: every
 * number equals the struct's bit for bit. */
START_TEST(contact_core_round_trip)
{
    tu_rng rng = {99};
    cq_shape a = {.type = CQ_BOX}, b = {.type = CQ_BOX};
    for (int i = 0; i < 200; i++) {
        a.box.half = cq_v3(tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2));
        b.box.half = cq_v3(tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2), tu_uniform(&rng, 0.1, 2));
        cq_pair_query q = {.a = &a, .xa = tu_pose(&rng, 2), .b = &b, .xb = tu_pose(&rng, 2)};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        cq_obb oa = cq_obb_from_box(&a, &q.xa), ob = cq_obb_from_box(&b, &q.xb);
        cq_sat_axis explain[CQ_SAT_AXIS_COUNT];
        cq_obb_sat_explain(&oa, &ob, explain);
        doc d;
        doc_init(&d, i % 2);
        cqp_write_contact(&d.w, &c, explain);
        json_t *v = parse(d.buf.data);
        ck_assert(json_is_true(json_object_get(v, "overlap")) == c.overlap);
        ck_assert(nu_same_bits(json_number_value(json_object_get(v, "depth")), c.depth));
        ck_assert(nu_same_bits(json_number_value(json_object_get(v, "distance")), c.distance));
        json_t *points = json_object_get(v, "points");
        ck_assert_int_eq((int)json_array_size(points), c.point_count);
        for (int k = 0; k < c.point_count; k++) {
            json_t *pos = json_object_get(json_array_get(points, (size_t)k), "position");
            ck_assert(nu_same_bits(json_number_value(json_array_get(pos, 0)), c.points[k].position.x));
            ck_assert(nu_same_bits(json_number_value(json_array_get(pos, 2)), c.points[k].position.z));
        }
        ck_assert_ptr_nonnull(json_object_get(v, "sat"));
        json_t *axes = json_object_get(v, "axes");
        ck_assert_int_eq((int)json_array_size(axes), CQ_SAT_AXIS_COUNT);
        for (int k = 0; k < CQ_SAT_AXIS_COUNT; k++) {
            json_t *gap = json_object_get(json_array_get(axes, (size_t)k), "gap");
            if (!explain[k].skipped)
                ck_assert(nu_same_bits(json_number_value(gap), explain[k].gap));
        }
        ck_assert((json_object_get(v, "witness") != NULL) == (c.has_distance && c.distance > 0));
        json_decref(v);
        cqp_buf_free(&d.buf);
    }
}
END_TEST

/* ---- shapes, poses, bodies, settings ---- */

static void check_shape(const cq_shape *s, const char *expected)
{
    doc d;
    doc_init(&d, false);
    cqp_write_shape(&d.w, s);
    doc_check(&d, expected);
}

START_TEST(shapes_closed_form)
{
    check_shape(&(cq_shape){.type = CQ_SPHERE, .sphere.radius = 0.5}, "{\"type\":\"sphere\",\"radius\":0.5}");
    check_shape(&(cq_shape){.type = CQ_CAPSULE, .capsule = {0.25, 1.5}},
                "{\"type\":\"capsule\",\"radius\":0.25,\"half_height\":1.5}");
    check_shape(&(cq_shape){.type = CQ_BOX, .box.half = {1, 0, 0.1}},
                "{\"type\":\"box\",\"half_extents\":[1,0,0.1]}");
    check_shape(&(cq_shape){.type = CQ_TRIANGLE, .triangle.v = {{0, 0, 0}, {1, 0, 0}, {0, 1, -2.5}}},
                "{\"type\":\"triangle\",\"vertices\":[[0,0,0],[1,0,0],[0,1,-2.5]]}");
    check_shape(&(cq_shape){.type = CQ_PLANE, .plane = {{0, 1, 0}, -3}},
                "{\"type\":\"plane\",\"normal\":[0,1,0],\"offset\":-3}");
}
END_TEST

START_TEST(shapes_mesh)
{
    cq_vec3 v[4] = {{0, 0, 0}, {2, 0, 0}, {2, 0, 2}, {0, 0.5, 2}};
    int t[2][3] = {{0, 1, 2}, {0, 2, 3}};
    cq_mesh *mesh;
    ck_assert_int_eq(cq_mesh_build(v, 4, (const int(*)[3])t, 2, &mesh), CQ_OK);
    check_shape(&(cq_shape){.type = CQ_MESH, .mesh.mesh = mesh},
                "{\"type\":\"mesh\",\"vertices\":[[0,0,0],[2,0,0],[2,0,2],[0,0.5,2]],"
                "\"triangles\":[[0,1,2],[0,2,3]]}");
    cq_mesh_free(mesh);
}
END_TEST

START_TEST(shapes_convex)
{
    /* A tetrahedron plus an interior point: the hull's four vertices come
     * back (in the hull's order), the radius only when not zero. */
    cq_vec3 pts[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}};
    for (int rounded = 0; rounded < 2; rounded++) {
        cq_hull *hull;
        ck_assert_int_eq(cq_hull_build(pts, 5, rounded ? 0.25 : 0, &hull), CQ_OK);
        cq_shape s = {.type = CQ_CONVEX, .convex.hull = hull};
        doc d;
        doc_init(&d, rounded);
        cqp_write_shape(&d.w, &s);
        json_t *j = parse(d.buf.data);
        ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "convex");
        ck_assert_int_eq((int)json_object_size(j), rounded ? 3 : 2);
        if (rounded)
            ck_assert(json_real_value(json_object_get(j, "radius")) == 0.25);
        json_t *out = json_object_get(j, "points");
        ck_assert_int_eq((int)json_array_size(out), 4);
        int seen = 0;
        for (size_t i = 0; i < 4; i++) {
            json_t *p = json_array_get(out, i);
            cq_vec3 q = cq_v3(json_number_value(json_array_get(p, 0)), json_number_value(json_array_get(p, 1)),
                              json_number_value(json_array_get(p, 2)));
            for (int k = 0; k < 4; k++)
                if (q.x == pts[k].x && q.y == pts[k].y && q.z == pts[k].z)
                    seen |= 1 << k;
        }
        ck_assert_int_eq(seen, 15);
        json_decref(j);
        cqp_buf_free(&d.buf);
        cq_hull_free(hull);
    }
}
END_TEST

START_TEST(pose_body_settings)
{
    /* A quarter turn about z: axes[k] is column k (local axis k in world). */
    cq_world_body b = {
        .shape = {.type = CQ_SPHERE, .sphere.radius = 1},
        .pose = {{1, 2, 3}, {{{0, 1, 0}, {-1, 0, 0}, {0, 0, 1}}}},
        .velocity = {0, 0, -9.5},
        .layer = 1,
        .mask = UINT32_MAX,
    };
    doc d;
    doc_init(&d, false);
    cqp_write_pose(&d.w, &b.pose);
    doc_check(&d, "{\"position\":[1,2,3],\"axes\":[[0,1,0],[-1,0,0],[0,0,1]]}");

    doc_init(&d, false);
    cqp_write_body(&d.w, "b1", &b);
    doc_check(&d, "{\"id\":\"b1\",\"shape\":{\"type\":\"sphere\",\"radius\":1},"
                  "\"pose\":{\"position\":[1,2,3],\"axes\":[[0,1,0],[-1,0,0],[0,0,1]]},"
                  "\"velocity\":[0,0,-9.5],\"layer\":1,\"mask\":4294967295}");

    cq_world_settings s = {.skin = 0.02, .capacity = 1024, .gjk_max_iterations = 64, .epa_max_iterations = 128,
                           .sweep_max_iterations = 32};
    doc_init(&d, true);
    cqp_write_settings(&d.w, &s, CQP_DURABILITY_SHAPES);
    doc_check(&d, "{\n"
                  "  \"skin\": 0.02,\n"
                  "  \"capacity\": 1024,\n"
                  "  \"gjk_max_iterations\": 64,\n"
                  "  \"epa_max_iterations\": 128,\n"
                  "  \"sweep_max_iterations\": 32,\n"
                  "  \"durability\": \"shapes\"\n"
                  "}");
}
END_TEST

START_TEST(hits)
{
    cq_ray_hit r = {.hit = true, .distance = 2.5, .point = {2.5, 0, 0}, .normal = {-1, 0, 0}};
    doc d;
    doc_init(&d, false);
    cqp_write_ray_hit(&d.w, "wall", &r);
    doc_check(&d, "{\"id\":\"wall\",\"distance\":2.5,\"point\":[2.5,0,0],\"normal\":[-1,0,0]}");

    cq_sweep_hit s = {.hit = true, .has_normal = true, .time = 0.75, .point = {0, -1, 0}, .normal = {0, -1, 0}};
    doc_init(&d, false);
    cqp_write_sweep_hit(&d.w, "floor", &s);
    doc_check(&d, "{\"id\":\"floor\",\"time\":0.75,\"point\":[0,-1,0],\"normal\":[0,-1,0]}");
    s = (cq_sweep_hit){.hit = true, .initially_overlapping = true, .point = {0.5, 0, 0}};
    doc_init(&d, false);
    cqp_write_sweep_hit(&d.w, "x", &s);
    doc_check(&d, "{\"id\":\"x\",\"time\":0,\"point\":[0.5,0,0]}");

    cq_world_toi t = {.time = 0.5, .point = {1, 1, 0}, .normal = {1, 0, 0}};
    doc_init(&d, false);
    cqp_write_toi(&d.w, "bullet", "target", &t);
    doc_check(&d, "{\"id\":\"bullet\",\"other\":\"target\",\"time\":0.5,\"point\":[1,1,0],\"normal\":[1,0,0]}");
}
END_TEST

/* ---- a large document ---- */

START_TEST(large_document)
{
    enum { N = 100000 };
    double *values = malloc(N * sizeof *values);
    ck_assert_ptr_nonnull(values);
    tu_rng rng = {123};
    doc d;
    doc_init(&d, false);
    cqp_obj_begin(&d.w);
    cqp_key(&d.w, "values");
    cqp_arr_begin(&d.w);
    for (int i = 0; i < N; i++) {
        values[i] = tu_uniform(&rng, -1e3, 1e3);
        cqp_num(&d.w, values[i]);
    }
    cqp_arr_end(&d.w);
    cqp_obj_end(&d.w);
    ck_assert(!d.buf.oom);
    ck_assert_uint_eq(strlen(d.buf.data), d.buf.len);
    json_t *v = parse(d.buf.data);
    json_t *arr = json_object_get(v, "values");
    ck_assert_int_eq((int)json_array_size(arr), N);
    for (int i = 0; i < N; i++)
        nu_require(nu_same_bits(json_number_value(json_array_get(arr, (size_t)i)), values[i]), "value %d", i);
    json_decref(v);
    cqp_buf_free(&d.buf);
    free(values);
}
END_TEST

Suite *proto_write_suite(void)
{
    Suite *s = suite_create("proto_write");
    TCase *tc = tcase_create("write");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, buf_appends_and_grows);
    tcase_add_test(tc, buf_oom_drops_appends);
    tcase_add_test(tc, buf_reserve_exact);
    tcase_add_test(tc, writer_compact);
    tcase_add_test(tc, writer_pretty);
    tcase_add_test(tc, writer_scalars_and_raw);
    tcase_add_test(tc, writer_many_siblings);
    tcase_add_test(tc, writer_depth_limit);
    tcase_add_test(tc, escape_control_characters);
    tcase_add_test(tc, escape_quote_backslash_utf8);
    tcase_add_test(tc, problem_table);
    tcase_add_test(tc, problem_write);
    tcase_add_test(tc, contact_sphere_sphere);
    tcase_add_test(tc, contact_box_box_explain);
    tcase_add_test(tc, contact_fallbacks);
    tcase_add_test(tc, contact_core_round_trip);
    tcase_add_test(tc, shapes_closed_form);
    tcase_add_test(tc, shapes_mesh);
    tcase_add_test(tc, shapes_convex);
    tcase_add_test(tc, pose_body_settings);
    tcase_add_test(tc, hits);
    tcase_add_test(tc, large_document);
    suite_add_tcase(s, tc);
    return s;
}
