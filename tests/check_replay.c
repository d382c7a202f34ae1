/* The replay's pieces: its comparison of answers with its masks, of
 * MessagePack values, its value text, and its HTTP client's parsing and
 * formatting. Oracles are hand-written: the differing offsets counted by
 * hand, the request bytes typed out, RFC 9112's chunked example. The
 * record line and the recorder: check_record.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/http_client.h"
#include "replay/replay.h"

Suite *replay_suite(void);

/* ---- the replay's comparison -------------------------------------------- */

static void same(const char *a, const char *b, bool mask, bool want, size_t want_a, size_t want_b)
{
    size_t oa = 9999, ob = 9999;
    bool got = cqd_replay_same(a, strlen(a), b, strlen(b), mask, &oa, &ob);
    ck_assert_msg(got == want, "%s vs %s (mask %d): %d", a, b, mask, got);
    if (!want) {
        ck_assert_msg(oa == want_a && ob == want_b, "%s vs %s: offsets %zu, %zu, want %zu, %zu", a, b, oa, ob,
                      want_a, want_b);
    }
}

START_TEST(replay_compare_and_masks)
{
    /* 0         1         2         3
     * 0123456789012345678901234567890123456789
     * {"stats":{"tested":3,"duration_us":78}}   */
    same("{\"stats\":{\"tested\":3,\"duration_us\":78}}", "{\"stats\":{\"tested\":3,\"duration_us\":1234}}", true,
         true, 0, 0);
    same("{\"stats\":{\"tested\":3,\"duration_us\":78}}", "{\"stats\":{\"tested\":3,\"duration_us\":1234}}", false,
         false, 35, 35);
    /* a difference after the masked numbers is placed in each body */
    same("{\"duration_us\":78,\"x\":1}", "{\"duration_us\":9,\"x\":2}", true, false, 22, 21);
    /* pretty printing, and a negative or exponent number */
    same("{\n  \"duration_us\": 5,\n  \"a\": 1\n}", "{\n  \"duration_us\": -6e3,\n  \"a\": 1\n}", true, true, 0, 0);
    /* only numbers are masked, and only after the key */
    same("{\"duration_us\":null}", "{\"duration_us\":3}", true, false, 15, 15);
    same("{\"ids\":[\"duration_us\",\"a\"]}", "{\"ids\":[\"duration_us\",\"b\"]}", true, false, 23, 23);
    same("{\"duration_ms\":1}", "{\"duration_ms\":2}", true, false, 15, 15);
    /* one body a prefix of the other, and empty bodies */
    same("{\"a\":1}", "{\"a\":1}x", true, false, 7, 7);
    same("", "", true, true, 0, 0);
    same("", "{}", false, false, 0, 0);
}
END_TEST

/* cqd_replay_same_values on bytes typed out from the msgpack spec. */
static cqd_replay_values values(const char *a, size_t an, const char *b, size_t bn, bool mask, cqd_replay_where *w)
{
    *w = (cqd_replay_where){.exp_off = 9999, .got_off = 9999};
    return cqd_replay_same_values(a, an, b, bn, mask, w);
}
#define VALUES_(a, b, mask, w) values(a, sizeof(a) - 1, b, sizeof(b) - 1, mask, w)

START_TEST(replay_compare_msgpack_values)
{
    cqd_replay_where w;
    /* {"a": 1, "b": 0.5}: fixmap, fixint, float32 0x3f000000 / map16,
     * uint8, float64 0x3fe0000000000000: the same values */
    ck_assert_int_eq(VALUES_("\x82\xa1" "a\x01\xa1" "b\xca\x3f\x00\x00\x00",
                             "\xde\x00\x02\xa1" "a\xcc\x01\xa1" "b\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00", true, &w),
                     CQD_REPLAY_SAME_VALUES);
    /* 1 and 1.0, -1 as a fixint and as an int8, int64 and uint64 forms of 5 */
    ck_assert_int_eq(VALUES_("\x93\x01\xff\xd3\x00\x00\x00\x00\x00\x00\x00\x05",
                             "\x93\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00\xd0\xff\xcf\x00\x00\x00\x00\x00\x00\x00\x05",
                             false, &w),
                     CQD_REPLAY_SAME_VALUES);
    /* {"pairs": [{"depth": 0.5}]} against a map16 root and depth 0.25 as a
     * float32 (0x3e800000): the depths start at byte 15 and at byte 17 */
    ck_assert_int_eq(VALUES_("\x81\xa5pairs\x91\x81\xa5" "depth\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00",
                             "\xde\x00\x01\xa5pairs\x91\x81\xa5" "depth\xca\x3e\x80\x00\x00", true, &w),
                     CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_str_eq(w.pointer, "/pairs/0/depth");
    ck_assert_uint_eq(w.exp_off, 15);
    ck_assert_uint_eq(w.got_off, 17);
    /* the key differs: placed at the key, in the map's place */
    ck_assert_int_eq(VALUES_("\x81\xa1" "a\x01", "\x81\xa1" "b\x01", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_str_eq(w.pointer, "");
    ck_assert_uint_eq(w.exp_off, 1);
    /* a count: the whole array is the difference */
    ck_assert_int_eq(VALUES_("\x92\x01\x02", "\x93\x01\x02\x03", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_str_eq(w.pointer, "");
    ck_assert_uint_eq(w.got_off, 0);
    /* types: nil is not false, a string is not a number, UINT64_MAX is not -1 */
    ck_assert_int_eq(VALUES_("\xc0", "\xc2", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_int_eq(VALUES_("\xa1" "1", "\x31", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_int_eq(VALUES_("\xcf\xff\xff\xff\xff\xff\xff\xff\xff", "\xff", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    /* duration_us masked only when asked; RFC 6901 escapes in the pointer */
    ck_assert_int_eq(VALUES_("\x81\xa5" "stats\x81\xab" "duration_us\x05",
                             "\x81\xa5" "stats\x81\xab" "duration_us\xcd\x03\x84", true, &w),
                     CQD_REPLAY_SAME_VALUES);
    ck_assert_int_eq(VALUES_("\x81\xa5" "stats\x81\xab" "duration_us\x05",
                             "\x81\xa5" "stats\x81\xab" "duration_us\xcd\x03\x84", false, &w),
                     CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_str_eq(w.pointer, "/stats/duration_us");
    ck_assert_int_eq(VALUES_("\x81\xa5" "a/b~c\xc2", "\x81\xa5" "a/b~c\xc3", true, &w), CQD_REPLAY_DIFFERENT_VALUES);
    ck_assert_str_eq(w.pointer, "/a~1b~0c");
    /* not one well-formed value: left to the byte comparison */
    ck_assert_int_eq(VALUES_("\x80", "{}", true, &w), CQD_REPLAY_NOT_MSGPACK); /* two fixints */
    ck_assert_int_eq(VALUES_("\x81", "\x80", true, &w), CQD_REPLAY_NOT_MSGPACK);
    ck_assert_int_eq(VALUES_("", "", true, &w), CQD_REPLAY_NOT_MSGPACK);
    /* counts beyond the bytes left (msgpuck's mp_check takes these as
     * valid), a bin, a duplicate key: never walked */
    ck_assert_int_eq(VALUES_("\xdd\xff\xff\xff\xff", "\x90", true, &w), CQD_REPLAY_NOT_MSGPACK);
    ck_assert_int_eq(VALUES_("\x90", "\xdf\xff\xff\xff\xff", true, &w), CQD_REPLAY_NOT_MSGPACK);
    ck_assert_int_eq(VALUES_("\x92\xdd\xff\xff\xff\xff", "\x92\x90\x90", true, &w), CQD_REPLAY_NOT_MSGPACK);
    ck_assert_int_eq(VALUES_("\xc4\x01x", "\xc4\x01y", true, &w), CQD_REPLAY_NOT_MSGPACK);
    ck_assert_int_eq(VALUES_("\x82\xa1" "a\x01\xa1" "a\x02", "\x81\xa1" "a\x01", true, &w), CQD_REPLAY_NOT_MSGPACK);
}
END_TEST

/* A differing value as a human reads it: compact JSON, cut at max. */
START_TEST(replay_value_text)
{
    /* {"a": [1, -0.0, "x\n", nil, true, -2], "b": 1.5 (float32 0x3fc00000)} */
    static const char v[] = "\x82\xa1" "a\x96\x01\xcb\x80\x00\x00\x00\x00\x00\x00\x00\xa2x\n\xc0\xc3\xfe"
                            "\xa1" "b\xca\x3f\xc0\x00\x00";
    cqp_buf out = {0};
    cqd_replay_value_text(&out, v, 100);
    ck_assert_str_eq(out.data, "{\"a\":[1,-0,\"x\\n\",null,true,-2],\"b\":1.5}");
    cqp_buf_reset(&out);
    cqd_replay_value_text(&out, v, 6);
    ck_assert_str_eq(out.data, "{\"a\":[...");
    cqp_buf_free(&out);
}
END_TEST

START_TEST(replay_skipped_bodies_and_pretty)
{
    ck_assert(cqd_replay_body_varies("GET", "/metrics"));
    ck_assert(cqd_replay_body_varies("GET", "/metrics/fallbacks"));
    ck_assert(!cqd_replay_body_varies("POST", "/metrics"));
    ck_assert(!cqd_replay_body_varies("GET", "/metrics/"));
    ck_assert(!cqd_replay_body_varies("GET", "/v1/worlds"));
    static const char *const in[] = {"pretty=1", "a=1&pretty=true&b=2", "pretty=10&limit=5", "limit=5&pretty=1", ""};
    static const char *const out[] = {"", "a=1&b=2", "pretty=10&limit=5", "limit=5", ""};
    for (int i = 0; i < 5; i++) {
        char q[64];
        snprintf(q, sizeof q, "%s", in[i]);
        ck_assert_str_eq(cqd_replay_drop_pretty(q), out[i]);
    }
}
END_TEST

/* ---- the replay's HTTP client -------------------------------------------- */

START_TEST(http_client_heads)
{
    cqd_hc_head h;
    const char *r1 = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\ncontent-length: 12\r\n\r\n{\"a\":1}";
    ck_assert_int_eq(cqd_hc_parse_head(r1, strlen(r1), &h), 1);
    ck_assert_int_eq(h.status, 201);
    ck_assert_int_eq(h.content_length, 12);
    ck_assert(!h.chunked && !h.close);
    ck_assert_uint_eq(h.size, strlen(r1) - 7);

    const char *r2 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nConnection: Close\r\n\r\n";
    ck_assert_int_eq(cqd_hc_parse_head(r2, strlen(r2), &h), 1);
    ck_assert(h.chunked && h.close);
    ck_assert_int_eq(h.content_length, -1);

    const char *r3 = "HTTP/1.0 204\r\n\r\n";
    ck_assert_int_eq(cqd_hc_parse_head(r3, strlen(r3), &h), 1);
    ck_assert_int_eq(h.status, 204);
    ck_assert(h.close); /* HTTP/1.0 without keep-alive */
    const char *r4 = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n";
    ck_assert_int_eq(cqd_hc_parse_head(r4, strlen(r4), &h), 1);
    ck_assert(!h.close);

    /* incomplete heads, then malformed ones */
    ck_assert_int_eq(cqd_hc_parse_head(r1, 30, &h), 0);
    ck_assert_int_eq(cqd_hc_parse_head("HTTP/1.1 200 OK\r\n", 17, &h), 0);
    static const char *const bad[] = {
        "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 099 X\r\n\r\n", "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(cqd_hc_parse_head(bad[i], strlen(bad[i]), &h) == -1, "accepted %s", bad[i]);
}
END_TEST

START_TEST(http_client_chunks)
{
    cqp_buf out = {0};
    size_t used = 0;
    /* RFC 9112's kind of example, with an extension and a trailer, and bytes after it */
    const char *c = "4\r\nWiki\r\n5;name=v\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\nNEXT";
    ck_assert_int_eq(cqd_hc_dechunk(c, strlen(c), &out, &used), 1);
    ck_assert_uint_eq(out.len, 23);
    ck_assert(memcmp(out.data, "Wikipedia in\r\n\r\nchunks.", 23) == 0);
    ck_assert_uint_eq(used, strlen(c) - 4);
    for (size_t cut = 0; cut < strlen(c) - 4; cut++)
        ck_assert_msg(cqd_hc_dechunk(c, cut, &out, &used) == 0, "complete after %zu bytes", cut);
    ck_assert_int_eq(cqd_hc_dechunk("0\r\n\r\n", 5, &out, &used), 1);
    ck_assert_uint_eq(out.len, 0);
    ck_assert_uint_eq(used, 5);
    ck_assert_int_eq(cqd_hc_dechunk("g\r\nx\r\n0\r\n\r\n", 11, &out, &used), -1);
    ck_assert_int_eq(cqd_hc_dechunk("2\r\nabc\r\n0\r\n\r\n", 13, &out, &used), -1);
    ck_assert_int_eq(cqd_hc_dechunk("\r\n", 2, &out, &used), -1);
    cqp_buf_free(&out);
}
END_TEST

START_TEST(http_client_urls)
{
    char host[64], port[8];
    ck_assert_int_eq(cqd_hc_parse_url("http://127.0.0.1:7878", host, sizeof host, port, sizeof port), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_str_eq(port, "7878");
    ck_assert_int_eq(cqd_hc_parse_url("http://[::1]:80/", host, sizeof host, port, sizeof port), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_str_eq(port, "80");
    ck_assert_int_eq(cqd_hc_parse_url("http://localhost", host, sizeof host, port, sizeof port), 0);
    ck_assert_str_eq(host, "localhost");
    ck_assert_str_eq(port, "80");
    static const char *const bad[] = {"https://h:1", "h:1", "http://", "http://h:99999", "http://h:1/x",
                                      "http://h:", "http://[::1", "http://h:1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(cqd_hc_parse_url(bad[i], host, sizeof host, port, sizeof port) == -1, "accepted %s", bad[i]);
}
END_TEST

START_TEST(http_client_request_bytes)
{
    cqd_hc_request rq = {.method = "PUT", .path = "/v1/worlds/a b%?\xc3\xa9", .query = "x=1 #",
                         .request_id = "tick-1", .authorization = "Bearer t", .body = "{}", .body_len = 2};
    cqp_buf out = {0};
    cqd_hc_format_request(&out, "127.0.0.1:7878", &rq);
    ck_assert_str_eq(out.data, "PUT /v1/worlds/a%20b%25%3F%C3%A9?x=1%20%23 HTTP/1.1\r\n"
                               "Host: 127.0.0.1:7878\r\nContent-Length: 2\r\nConnection: keep-alive\r\n"
                               "X-Request-Id: tick-1\r\nAuthorization: Bearer t\r\n\r\n{}");
    cqp_buf_reset(&out);
    cqd_hc_request bare = {.method = "GET", .path = "/healthz", .request_id = "", .body = "", .body_len = 0};
    cqd_hc_format_request(&out, "h", &bare);
    ck_assert_str_eq(out.data, "GET /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
    cqp_buf_reset(&out);
    cqd_hc_request mp = {.method = "POST", .path = "/v1/pair", .content_type = "application/msgpack",
                         .accept = "application/msgpack", .body = "\x80", .body_len = 1};
    cqd_hc_format_request(&out, "h", &mp);
    ck_assert_str_eq(out.data, "POST /v1/pair HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nConnection: keep-alive\r\n"
                               "Content-Type: application/msgpack\r\nAccept: application/msgpack\r\n\r\n\x80");
    cqp_buf_free(&out);
}
END_TEST

/* A control character in any header value, or a method that is no token,
 * is refused and nothing is written: a CR or LF would start a header of
 * its own (the reviewer's "a\r\nX-Injected: yes\r\nContent-Length: 0"). */
START_TEST(http_client_refuses_header_injection)
{
    const cqd_hc_request ok = {.method = "GET", .path = "/healthz", .request_id = "r-1", .authorization = "Bearer t",
                               .content_type = "application/json", .accept = "application/json", .body = ""};
    static const char *const values[] = {"a\r\nX-Injected: yes\r\nContent-Length: 0", "a\nb", "a\rb", "\t",
                                         "a\x01", "\x7f"};
    cqp_buf out = {0};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (int field = 0; field < 5; field++) {
            cqd_hc_request rq = ok;
            const char *host = field == 4 ? values[i] : "h";
            if (field == 0)
                rq.request_id = values[i];
            else if (field == 1)
                rq.authorization = values[i];
            else if (field == 2)
                rq.content_type = values[i];
            else if (field == 3)
                rq.accept = values[i];
            cqp_buf_reset(&out);
            ck_assert_msg(cqd_hc_format_request(&out, host, &rq) == -1, "value %zu in field %d", i, field);
            ck_assert_uint_eq(out.len, 0);
        }
    }
    static const char *const methods[] = {"", "GET /x", "GE\tT", "GET\r\nX: y", "G(T"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        cqd_hc_request rq = ok;
        rq.method = methods[i];
        cqp_buf_reset(&out);
        ck_assert_msg(cqd_hc_format_request(&out, "h", &rq) == -1, "method %zu", i);
        ck_assert_uint_eq(out.len, 0);
        ck_assert(!cqd_hc_is_token(methods[i]));
    }
    ck_assert(cqd_hc_is_token("PATCH") && cqd_hc_is_token("M-SEARCH") && cqd_hc_is_token("!#$%&'*+-.^_`|~09az"));
    cqp_buf_reset(&out);
    ck_assert_int_eq(cqd_hc_format_request(&out, "h", &ok), 0);
    ck_assert_ptr_nonnull(strstr(out.data, "\r\nX-Request-Id: r-1\r\n"));
    cqp_buf_free(&out);
}
END_TEST

Suite *replay_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, replay_compare_and_masks);
    tcase_add_test(tc, replay_compare_msgpack_values);
    tcase_add_test(tc, replay_value_text);
    tcase_add_test(tc, replay_skipped_bodies_and_pretty);
    tcase_add_test(tc, http_client_heads);
    tcase_add_test(tc, http_client_chunks);
    tcase_add_test(tc, http_client_urls);
    tcase_add_test(tc, http_client_request_bytes);
    tcase_add_test(tc, http_client_refuses_header_injection);
    suite_add_tcase(s, tc);
    return s;
}
