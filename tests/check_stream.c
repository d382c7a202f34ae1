/* The stream transport's pure parts: the line splitter, the reply writer
 * and the progress timer's rules. The refusals through a real server
 * (check_stream_server.c), the frame splitter and the envelopes have
 * suites of their own (check_stream_frame.c, check_stream_envelope.c).
 * Expected values are written by hand from docs/API.md section 11. */
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

/* ---- line splitter ---------------------------------------------------- */

typedef struct seen {
    char lines[8][64];
    int count;
    int fail_at;        /* emit fails on this line (-1: never) */
    cqd_lines *charged; /* the splitter whose lines' charges collect takes and gives back */
} seen;

static int collect(void *ctx, const char *line, size_t len)
{
    seen *s = ctx;
    if (line && s->charged && s->charged->admit) /* taken with the line, given back at once */
        cqd_admit_release(s->charged->admit, cqd_lines_charge(s->charged, len));
    if (s->count == s->fail_at)
        return -1;
    if (!line) { /* a shed line */
        strcpy(s->lines[s->count++], "<shed>");
        return 0;
    }
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

/* Lines are charged to the --max-buffered budget as they arrive, past
 * their first `uncharged` bytes, and the charge passes to whoever takes the
 * line (collect gives it back at once); one that would pass the budget is
 * shed in its place (emit with NULL) and dropped to its end, still held to
 * max, and the lines after it are split as before. Budget 10 bytes. */
START_TEST(lines_charged_to_the_budget)
{
    cqd_admit a;
    cqd_admit_init(&a, 100, 10);
    cqd_lines l = {.max = 100, .admit = &a};
    seen s = {.fail_at = -1, .charged = &l};
    /* A whole line in one read is charged too, for as long as it is held. */
    ck_assert_int_eq(cqd_lines_feed(&l, "0123456789\n", 11, collect, &s), CQD_LINES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_int_eq(cqd_lines_feed(&l, "12345", 5, collect, &s), CQD_LINES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 5);
    ck_assert_int_eq(cqd_lines_feed(&l, "67\nab", 5, collect, &s), CQD_LINES_OK); /* "1234567" ends */
    ck_assert_uint_eq(atomic_load(&a.buffered), 2);
    ck_assert_int_eq(cqd_lines_feed(&l, "cdefghij", 8, collect, &s), CQD_LINES_OK); /* 2 + 8 = 10: at the bound */
    ck_assert_uint_eq(atomic_load(&a.buffered), 10);
    ck_assert_int_eq(cqd_lines_feed(&l, "k", 1, collect, &s), CQD_LINES_OK); /* 11: shed */
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_uint_eq(atomic_load(&a.shed), 1);
    ck_assert_int_eq(cqd_lines_feed(&l, "still the shed line", 19, collect, &s), CQD_LINES_OK);
    ck_assert_int_eq(cqd_lines_feed(&l, "...\nnext\nta", 11, collect, &s), CQD_LINES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 2);
    ck_assert_int_eq(cqd_lines_finish(&l, collect, &s), 0);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_int_eq(s.count, 5);
    const char *want[] = {"0123456789", "1234567", "<shed>", "next", "ta"};
    for (int i = 0; i < 5; i++)
        ck_assert_str_eq(s.lines[i], want[i]);
    /* A whole line over the budget is shed whole, nothing skipped; freeing
     * an unfinished line gives its charge back. */
    seen t = {.fail_at = -1, .charged = &l};
    ck_assert_int_eq(cqd_lines_feed(&l, "0123456789a\nok\n123", 18, collect, &t), CQD_LINES_OK);
    ck_assert_int_eq(t.count, 2);
    ck_assert_str_eq(t.lines[0], "<shed>");
    ck_assert_str_eq(t.lines[1], "ok");
    ck_assert_uint_eq(atomic_load(&a.buffered), 3);
    cqd_lines_free(&l);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);

    /* The first 4 bytes of every line free: short lines are never shed,
     * long ones are charged for the rest. */
    cqd_lines m = {.max = 30, .admit = &a, .uncharged = 4};
    seen u = {.fail_at = -1, .charged = &m};
    ck_assert_int_eq(cqd_lines_feed(&m, "abcd", 4, collect, &u), CQD_LINES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_int_eq(cqd_lines_feed(&m, "efghijkl", 8, collect, &u), CQD_LINES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 8);
    cqd_admit b;
    cqd_admit_init(&b, 100, 0); /* a spent budget */
    cqd_lines o = {.max = 30, .admit = &b, .uncharged = 4};
    seen v = {.fail_at = -1, .charged = &o};
    ck_assert_int_eq(cqd_lines_feed(&o, "ok\nfine\nlonger\n", 15, collect, &v), CQD_LINES_OK);
    ck_assert_int_eq(v.count, 3);
    ck_assert_str_eq(v.lines[0], "ok");
    ck_assert_str_eq(v.lines[1], "fine");
    ck_assert_str_eq(v.lines[2], "<shed>");
    /* A shed line is still held to max: past it, the line is refused. */
    ck_assert_int_eq(cqd_lines_feed(&o, "0123456789012345678901234", 25, collect, &v), CQD_LINES_OK);
    ck_assert_int_eq(v.count, 4);
    ck_assert_int_eq(cqd_lines_feed(&o, "0123456789", 10, collect, &v), CQD_LINES_TOO_LONG);
    cqd_lines_free(&o);
    cqd_lines_free(&m);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_uint_eq(atomic_load(&b.buffered), 0);
}
END_TEST

/* What record keeps: each line emitted (NULL for a shed one), in order. */
typedef struct record_log {
    int count;
    char items[64][64];
    bool shed[64];
    cqd_lines *from;
} record_log;

static int record(void *ctx, const char *line, size_t len)
{
    record_log *r = ctx;
    ck_assert_int_lt(r->count, 64);
    r->shed[r->count] = !line;
    if (line) {
        ck_assert_uint_lt(len, sizeof r->items[0]);
        memcpy(r->items[r->count], line, len);
        r->items[r->count][len] = '\0';
        cqd_admit_release(r->from->admit, cqd_lines_charge(r->from, len));
    }
    r->count++;
    return 0;
}

/* Random texts cut into random reads, with random budgets and free
 * prefixes. Oracle: the text split at '\n' by hand, a trailing '\r'
 * dropped, empty lines skipped; as the taker gives each line's charge back
 * at once, a line is shed exactly when its bytes past the free prefix
 * ('\r' included) exceed the budget, however the reads cut it. Every line
 * comes out once, in order, as itself or shed, and the budget is whole
 * again once the splitter is done. */
/* What take_line saw: each line, and whether its buffer was handed over. */
typedef struct taken_log {
    char lines[4][16];
    bool taken[4];
    int count;
    cqd_lines *from;
} taken_log;

static int take_line(void *ctx, const char *line, size_t len)
{
    taken_log *t = ctx;
    ck_assert_int_lt(t->count, 4);
    ck_assert_uint_lt(len, sizeof t->lines[0]);
    memcpy(t->lines[t->count], line, len);
    t->lines[t->count][len] = '\0';
    char *mine = cqd_lines_take(t->from, line);
    t->taken[t->count++] = mine != NULL;
    ck_assert(!mine || mine == line);
    free(mine);
    return 0;
}

/* A line that came in pieces is handed over in the splitter's buffer (the
 * taker frees it), a line whole in one read is not; the splitter goes on
 * with a buffer of its own, at the end too. */
START_TEST(lines_taken_when_buffered)
{
    cqd_lines l = {.max = 100};
    taken_log t = {.from = &l};
    ck_assert_int_eq(cqd_lines_feed(&l, "whole\npie", 9, take_line, &t), CQD_LINES_OK);
    ck_assert_int_eq(cqd_lines_feed(&l, "ces\r\nnext\nla", 12, take_line, &t), CQD_LINES_OK);
    ck_assert_int_eq(cqd_lines_feed(&l, "st", 2, take_line, &t), CQD_LINES_OK);
    ck_assert_int_eq(cqd_lines_finish(&l, take_line, &t), 0);
    ck_assert_int_eq(t.count, 4);
    ck_assert_str_eq(t.lines[0], "whole");
    ck_assert_str_eq(t.lines[1], "pieces");
    ck_assert_str_eq(t.lines[2], "next");
    ck_assert_str_eq(t.lines[3], "last");
    ck_assert(!t.taken[0] && t.taken[1] && !t.taken[2] && t.taken[3]);
    cqd_lines_free(&l);
}
END_TEST

START_TEST(lines_random_cuts_and_budgets)
{
    tu_rng rng = {77};
    for (int round = 0; round < 3000; round++) {
        char text[1024];
        size_t n = 0;
        int nlines = 1 + (int)tu_uniform(&rng, 0, 12);
        for (int k = 0; k < nlines; k++) {
            int len = (int)tu_uniform(&rng, 0, 40);
            for (int i = 0; i < len; i++)
                text[n++] = (char)('a' + (int)tu_uniform(&rng, 0, 26));
            if (tu_uniform(&rng, 0, 1) < 0.2)
                text[n++] = '\r';
            if (k + 1 < nlines || tu_uniform(&rng, 0, 1) < 0.5)
                text[n++] = '\n';
        }
        size_t budget = (size_t)tu_uniform(&rng, 0, 50), uncharged = (size_t)tu_uniform(&rng, 0, 20);
        cqd_admit a;
        cqd_admit_init(&a, 100, budget);
        cqd_lines l = {.max = 100, .admit = &a, .uncharged = uncharged};
        record_log r = {.from = &l};
        for (size_t at = 0; at < n;) {
            size_t piece = 1 + (size_t)tu_uniform(&rng, 0, 30);
            piece = piece < n - at ? piece : n - at;
            ck_assert_int_eq(cqd_lines_feed(&l, text + at, piece, record, &r), CQD_LINES_OK);
            at += piece;
        }
        ck_assert_int_eq(cqd_lines_finish(&l, record, &r), 0);
        ck_assert_uint_eq(atomic_load(&a.buffered), 0);
        int want = 0;
        for (size_t start = 0; start < n;) {
            size_t end = start;
            while (end < n && text[end] != '\n')
                end++;
            size_t raw = end - start, len = raw > 0 && text[end - 1] == '\r' ? raw - 1 : raw;
            if (len > 0) {
                ck_assert_int_lt(want, r.count);
                bool shed = raw > uncharged && raw - uncharged > budget;
                ck_assert_msg(r.shed[want] == shed, "round %d line %d: shed %d, expected %d", round, want,
                              r.shed[want], shed);
                if (!shed)
                    ck_assert(strlen(r.items[want]) == len && memcmp(r.items[want], text + start, len) == 0);
                want++;
            }
            start = end + 1;
        }
        ck_assert_int_eq(r.count, want);
    }
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
    cqd_stream_reply(&out, CQP_JSON, "{\"k\": 7}", 8, &r);
    ck_assert_str_eq(out.data, "{\"id\":{\"k\": 7},\"status\":200,\"request_id\":\"r-1\",\"body\":{\"a\":[1,2]}}\n");
    cqd_response_free(&r);

    /* A pretty JSON body stays on one line; a text body becomes a string. */
    cqp_buf_reset(&out);
    respond(&r, 200, "application/json", "{\n  \"a\": 1\r\n}");
    cqd_stream_reply(&out, CQP_JSON, NULL, 0, &r);
    ck_assert_str_eq(out.data, "{\"id\":null,\"status\":200,\"body\":{   \"a\": 1  }}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 200, "text/plain; version=0.0.4", "m 1\nn \"2\"\n");
    cqd_stream_reply(&out, CQP_JSON, "3", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":3,\"status\":200,\"body\":\"m 1\\nn \\\"2\\\"\\n\"}\n");
    cqd_response_free(&r);

    /* 204: no body; 405 and 503 carry what HTTP puts in headers. */
    cqp_buf_reset(&out);
    respond(&r, 204, "application/json", NULL);
    cqd_stream_reply(&out, CQP_JSON, "\"d\"", 3, &r);
    ck_assert_str_eq(out.data, "{\"id\":\"d\",\"status\":204,\"body\":null}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 405, "application/problem+json", "{\"status\":405}");
    strcpy(r.allow, "GET, PUT");
    cqd_stream_reply(&out, CQP_JSON, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":405,\"headers\":{\"Allow\":\"GET, PUT\"},"
                               "\"body\":{\"status\":405}}\n");
    cqd_response_free(&r);

    cqp_buf_reset(&out);
    respond(&r, 503, "application/problem+json", "{\"status\":503}");
    r.retry_after = 2;
    cqd_stream_reply(&out, CQP_JSON, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":503,\"headers\":{\"Retry-After\":\"2\"},"
                               "\"body\":{\"status\":503}}\n");
    cqd_response_free(&r);

    /* Allow with another status is not echoed. */
    cqp_buf_reset(&out);
    respond(&r, 200, "application/json", "{}");
    strcpy(r.allow, "GET");
    cqd_stream_reply(&out, CQP_JSON, "1", 1, &r);
    ck_assert_str_eq(out.data, "{\"id\":1,\"status\":200,\"body\":{}}\n");
    cqd_response_free(&r);
    cqp_buf_free(&out);
}
END_TEST

/* The bytes written as hex pairs ("ce 00 ..."), spaces ignored. */
static void expect_hex(const cqp_buf *out, size_t from, const char *hex)
{
    unsigned char want[512];
    size_t n = 0;
    for (const char *h = hex; *h;) {
        if (*h == ' ') {
            h++;
            continue;
        }
        unsigned v;
        ck_assert_int_eq(sscanf(h, "%2x", &v), 1);
        ck_assert_uint_lt(n, sizeof want);
        want[n++] = (unsigned char)v;
        h += 2;
    }
    ck_assert(!out->oom);
    ck_assert_uint_eq(out->len - from, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg((unsigned char)out->data[from + i] == want[i], "byte %zu: %02x, expected %02x", i,
                      (unsigned char)out->data[from + i], want[i]);
}

START_TEST(reply_msgpack_frames)
{
    /* Each frame written out by hand: 0xce, the map's length (4 bytes,
     * big-endian), then the map with its keys as fixstr (0xa0 + length). */
    cqd_response r;
    cqp_buf out = {0};

    /* The body (application/msgpack, {"a": [1, 2]}) and the id (7) are
     * copied as they are; 200 is a uint8 (cc c8). 40 bytes after the prefix. */
    respond(&r, 200, "application/msgpack", NULL);
    cqp_buf_append(&r.body, "\x81\xa1\x61\x92\x01\x02", 6);
    strcpy(r.request_id, "r-1");
    cqd_stream_reply(&out, CQP_MSGPACK, "\x07", 1, &r);
    expect_hex(&out, 0, "ce 00 00 00 28 84 a2 69 64 07 a6 73 74 61 74 75 73 cc c8"
                        " aa 72 65 71 75 65 73 74 5f 69 64 a3 72 2d 31 a4 62 6f 64 79 81 a1 61 92 01 02");
    cqd_response_free(&r);

    /* Appended behind it: a 204 without id, request id or body (nil, nil). */
    size_t second = out.len;
    respond(&r, 204, "application/msgpack", NULL);
    cqd_stream_reply(&out, CQP_MSGPACK, NULL, 0, &r);
    expect_hex(&out, second, "ce 00 00 00 14 83 a2 69 64 c0 a6 73 74 61 74 75 73 cc cc a4 62 6f 64 79 c0");
    cqd_response_free(&r);

    /* A text body is a str of its bytes; a str id ("d") is copied. */
    cqp_buf_reset(&out);
    respond(&r, 200, "text/plain; version=0.0.4", "m 1\n");
    cqd_stream_reply(&out, CQP_MSGPACK, "\xa1\x64", 2, &r);
    expect_hex(&out, 0, "ce 00 00 00 19 83 a2 69 64 a1 64 a6 73 74 61 74 75 73 cc c8 a4 62 6f 64 79 a4 6d 20 31 0a");
    cqd_response_free(&r);

    /* A JSON document (a handler that names its own type) is a str too. */
    cqp_buf_reset(&out);
    respond(&r, 200, "application/json", "{\"x\":1}");
    cqd_stream_reply(&out, CQP_MSGPACK, "\x02", 1, &r);
    expect_hex(&out, 0, "ce 00 00 00 1b 83 a2 69 64 02 a6 73 74 61 74 75 73 cc c8 a4 62 6f 64 79"
                        " a7 7b 22 78 22 3a 31 7d");
    cqd_response_free(&r);

    /* 405: "headers": {"Allow": "GET, PUT"}; 405 is a uint16 (cd 01 95). */
    cqp_buf_reset(&out);
    respond(&r, 405, "application/problem+msgpack", NULL);
    cqp_buf_append(&r.body, "\x81\xa6status\xcd\x01\x95", 11);
    strcpy(r.allow, "GET, PUT");
    cqd_stream_reply(&out, CQP_MSGPACK, "\x01", 1, &r);
    expect_hex(&out, 0, "ce 00 00 00 37 84 a2 69 64 01 a6 73 74 61 74 75 73 cd 01 95"
                        " a7 68 65 61 64 65 72 73 81 a5 41 6c 6c 6f 77 a8 47 45 54 2c 20 50 55 54"
                        " a4 62 6f 64 79 81 a6 73 74 61 74 75 73 cd 01 95");
    cqd_response_free(&r);

    /* 503: "headers": {"Retry-After": "2"}; 503 is cd 01 f7. */
    cqp_buf_reset(&out);
    respond(&r, 503, "application/problem+msgpack", NULL);
    cqp_buf_append(&r.body, "\x80", 1);
    r.retry_after = 2;
    cqd_stream_reply(&out, CQP_MSGPACK, "\x03", 1, &r);
    expect_hex(&out, 0, "ce 00 00 00 2c 84 a2 69 64 03 a6 73 74 61 74 75 73 cd 01 f7"
                        " a7 68 65 61 64 65 72 73 81 ab 52 65 74 72 79 2d 41 66 74 65 72 a1 32"
                        " a4 62 6f 64 79 80");
    cqd_response_free(&r);
    cqp_buf_free(&out);
}
END_TEST

START_TEST(reply_msgpack_out_of_memory)
{
    /* A response that could not be built: 503, Retry-After 1, the problem
     * as a map. */
    cqd_response r;
    respond(&r, 200, "application/msgpack", NULL);
    r.body.oom = true;
    cqp_buf out = {0};
    cqd_stream_reply(&out, CQP_MSGPACK, "\x05", 1, &r);
    const char *env = smp_frame_of(&out, 0);
    ck_assert_int_eq(smp_integer(smp_member(env, "id")), 5);
    ck_assert_int_eq(smp_integer(smp_member(env, "status")), 503);
    ck_assert_str_eq(smp_text(smp_member(smp_member(env, "headers"), "Retry-After")), "1");
    const char *body = smp_member(env, "body");
    ck_assert_str_eq(smp_text(smp_member(body, "type")), "urn:collisiond:problem:unavailable");
    ck_assert_int_eq(smp_integer(smp_member(body, "status")), 503);
    ck_assert_str_eq(smp_text(smp_member(body, "detail")), "out of memory");
    r.body.oom = false;
    cqd_response_free(&r);
    cqp_buf_free(&out);
}
END_TEST

/* ---- JSON pointers (cqp_pointer_append, shared with the decoder) ------- */

START_TEST(pointer_append)
{
    char buf[32] = "";
    ck_assert_uint_eq(cqp_pointer_append(buf, sizeof buf, "a/b~"), 7);
    ck_assert_str_eq(buf, "/a~1b~0");
    ck_assert_uint_eq(cqp_pointer_append(buf, sizeof buf, ""), 8);
    ck_assert_str_eq(buf, "/a~1b~0/");

    /* 6 bytes hold 5 characters: "/x" + "/~0", and the next escape does not fit. */
    char small[6] = "/x";
    ck_assert_uint_eq(cqp_pointer_append(small, sizeof small, "~~"), 5);
    ck_assert_str_eq(small, "/x/~0");
    /* Full: nothing more is appended. */
    ck_assert_uint_eq(cqp_pointer_append(small, sizeof small, "y"), 5);
    ck_assert_str_eq(small, "/x/~0");

    /* 5 bytes hold 4: "/ab" and half of "\xc3\xa9" would end mid-character. */
    char cut[5] = "";
    ck_assert_uint_eq(cqp_pointer_append(cut, sizeof cut, "ab\xc3\xa9"), 3);
    ck_assert_str_eq(cut, "/ab");
    /* A whole character that fits is kept. */
    char whole[5] = "";
    ck_assert_uint_eq(cqp_pointer_append(whole, sizeof whole, "a\xc3\xa9z"), 4);
    ck_assert_str_eq(whole, "/a\xc3\xa9");
}
END_TEST

/* ---- progress timer rules --------------------------------------------- */

START_TEST(watch_rules)
{
    uint64_t due = 0, look = 0;
    /* Idle: 10 x --timeout after the last progress (30 s -> 300 s). */
    cqd_watch w = {.reading = true, .active_at = 5000, .write_at = 1000, .now = 6000};
    ck_assert_int_eq(cqd_watch_due(&w, 30, &due, &look), CQD_WAIT_IDLE);
    ck_assert_uint_eq(due, 5000 + 300000);
    ck_assert_uint_eq(look, due);
    /* Half a line: --timeout after the last byte. */
    w.partial = true;
    ck_assert_int_eq(cqd_watch_due(&w, 30, &due, &look), CQD_WAIT_LINE);
    ck_assert_uint_eq(due, 5000 + 30000);
    ck_assert_uint_eq(look, due);
    /* The server's turn: no limit, whatever the client left half-sent. */
    w.busy = true;
    ck_assert_int_eq(cqd_watch_due(&w, 30, &due, &look), CQD_WAIT_NONE);
    w.busy = false;
    w.reading = false; /* input ended or paused */
    ck_assert_int_eq(cqd_watch_due(&w, 30, &due, &look), CQD_WAIT_NONE);
    /* Unwritten replies count from the last write progress, busy or not,
     * reading or not; the timer looks every quarter of --timeout (500 ms
     * for 2 s), but never past the deadline. */
    w.unwritten = true;
    w.busy = true;
    w.now = 1500;
    ck_assert_int_eq(cqd_watch_due(&w, 2, &due, &look), CQD_WAIT_WRITE);
    ck_assert_uint_eq(due, 1000 + 2000);
    ck_assert_uint_eq(look, 1500 + 500);
    w.busy = false;
    w.reading = true;
    w.now = 2800;
    ck_assert_int_eq(cqd_watch_due(&w, 2, &due, &look), CQD_WAIT_WRITE);
    ck_assert_uint_eq(due, 3000);
    ck_assert_uint_eq(look, 3000);
}
END_TEST

/* The pace of a request still arriving, at 1000 bytes a second with a
 * 10 s grace and 4096 free bytes: the expected answers are worked out by
 * hand from the rule (a window of at least the grace after the first must
 * bring rate x its length). */
START_TEST(pace_rules)
{
    cqd_pace p = {0};
    /* It begins: the grace window opens at its first read. */
    ck_assert(!cqd_pace_slow(&p, 0, 9000, 9000, 1000, 4096, 1000, 10));
    ck_assert_uint_eq(p.at, 1000);
    ck_assert(p.grace);
    /* Nothing for 9 s, then 10 s after the start: the grace ends, not slow,
     * and the first measured window starts at 11000 with 9001 bytes. */
    ck_assert(!cqd_pace_slow(&p, 9000, 1, 9001, 10000, 4096, 1000, 10));
    ck_assert(!cqd_pace_slow(&p, 9001, 1, 9002, 11000, 4096, 1000, 10));
    ck_assert(!p.grace);
    ck_assert_uint_eq(p.base, 9002);
    /* 10 s later 9,999 bytes more: below the 10,000 due, slow. */
    ck_assert(cqd_pace_slow(&p, 9002, 9999, 19001, 21000, 4096, 1000, 10));
    /* A window that brought its 10,000 is not slow. */
    cqd_pace q = {.at = 0, .base = 5000, .grace = false};
    ck_assert(!cqd_pace_slow(&q, 14000, 1000, 15000, 10000, 4096, 1000, 10));
    /* Within its free bytes, or with the rate off, never slow. */
    cqd_pace r = {.at = 0, .base = 10, .grace = false};
    ck_assert(!cqd_pace_slow(&r, 100, 1, 101, 60000, 4096, 1000, 10));
    ck_assert(!cqd_pace_slow(&r, 9000, 1, 9001, 60000, 4096, 0, 10));
    /* A request that began in this read (bytes != had + n) restarts the grace. */
    ck_assert(!cqd_pace_slow(&r, 9000, 50, 20, 70000, 4096, 1000, 10));
    ck_assert(r.grace);
    ck_assert_uint_eq(r.at, 70000);
}
END_TEST

Suite *stream_suite(void)
{
    Suite *s = suite_create("stream");
    TCase *t = tcase_create("lines");
    tcase_add_test(t, lines_whole_and_bytewise);
    tcase_add_test(t, lines_cap);
    tcase_add_test(t, lines_emit_failure);
    tcase_add_test(t, lines_charged_to_the_budget);
    tcase_add_test(t, lines_random_cuts_and_budgets);
    tcase_add_test(t, lines_taken_when_buffered);
    suite_add_tcase(s, t);

    t = tcase_create("reply");
    tcase_add_test(t, reply_json_and_text);
    tcase_add_test(t, reply_msgpack_frames);
    tcase_add_test(t, reply_msgpack_out_of_memory);
    suite_add_tcase(s, t);
    t = tcase_create("pointer");
    tcase_add_test(t, pointer_append);
    suite_add_tcase(s, t);
    t = tcase_create("watch");
    tcase_add_test(t, watch_rules);
    tcase_add_test(t, pace_rules);
    suite_add_tcase(s, t);
    return s;
}
