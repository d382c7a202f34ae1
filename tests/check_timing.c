/* Where a request's clock starts (request.h): at the arrival stamp the
 * transport puts in the request, for cqd_handle, cqd_refuse and the
 * stream's cqd_stream_answer alike, and at the pipeline's own start
 * without one. The oracle is the stamp itself: a request stamped as
 * arrived two seconds ago (a healthz answers in microseconds) must be
 * logged, counted and returned with at least those two seconds, one
 * without a stamp with less; the access line, the latency histogram's sum
 * and the response all carry the same span. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/request.h"
#include "config_util.h"
#include "net/refuse.h"
#include "net/stream_internal.h"
#include "ops/metrics.h"
#include "state/server.h"
#include "state/thread.h"

Suite *timing_suite(void);

#define AGO 2000000000ull /* 2 s */

static cqd_server srv;
static FILE *srv_log;

static void setup(void)
{
    cqd_config cfg = cu_default_config();
    ck_assert_int_eq(cqd_server_init(&srv, &cfg), 0);
    srv_log = tmpfile();
    ck_assert_ptr_nonnull(srv_log);
    srv.log.fd = fileno(srv_log);
    cqd_access_init(&srv.access, CQD_ACCESS_ALL, 1, 16);
    atomic_store(&srv.state, CQD_READY);
}

static void teardown(void)
{
    cqd_server_destroy(&srv);
    fclose(srv_log);
}

/* duration_us of the last access line written, -1 if none. */
static long long last_logged_us(void)
{
    fflush(srv_log);
    rewind(srv_log);
    char line[4096];
    long long us = -1;
    while (fgets(line, sizeof line, srv_log)) {
        json_t *v = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(v);
        if (strcmp(json_string_value(json_object_get(v, "msg")), "request") == 0)
            us = json_integer_value(json_object_get(v, "duration_us"));
        json_decref(v);
    }
    fseek(srv_log, 0, SEEK_END);
    return us;
}

/* Every nanosecond the calling thread's latency histogram holds. */
static uint64_t histogram_ns(void)
{
    cqd_thread *t = cqd_thread_self(&srv);
    ck_assert_ptr_nonnull(t);
    uint64_t ns = 0;
    for (int r = 0; r < CQD_METRIC_ROWS; r++)
        for (int s = 0; s < CQD_STATUS_SLOTS; s++)
            ns += atomic_load(&t->requests.sum_ns[r][s]);
    return ns;
}

static uint64_t handled(uint64_t arrived)
{
    cqd_request req = {.transport = "test", .method = "GET", .path = "/healthz", .arrived_ns = arrived};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(&srv, &req, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    return resp.duration_ns;
}

START_TEST(handle_times_from_the_arrival_stamp)
{
    uint64_t before = histogram_ns();
    uint64_t d = handled(cqd_mono_ns() - AGO);
    ck_assert_uint_ge(d, AGO);
    ck_assert_int_eq(last_logged_us(), (long long)(d / 1000));
    ck_assert_uint_eq(histogram_ns() - before, d);
    /* no stamp: from the pipeline's start */
    before = histogram_ns();
    d = handled(0);
    ck_assert_uint_lt(d, AGO);
    ck_assert_int_eq(last_logged_us(), (long long)(d / 1000));
    ck_assert_uint_eq(histogram_ns() - before, d);
}
END_TEST

START_TEST(refuse_times_from_the_arrival_stamp)
{
    cqd_request req = {.transport = "test", .method = "POST", .path = "/v1/pairs", .arrived_ns = cqd_mono_ns() - AGO};
    cqd_response resp;
    cqd_response_init(&resp);
    uint64_t before = histogram_ns();
    cqd_refuse(&srv, &req, CQP_P_TOO_LARGE, "too big", &resp);
    ck_assert_int_eq(resp.status, 413);
    ck_assert_uint_ge(resp.duration_ns, AGO);
    ck_assert_int_eq(last_logged_us(), (long long)(resp.duration_ns / 1000));
    ck_assert_uint_eq(histogram_ns() - before, resp.duration_ns);
    cqd_response_free(&resp);
}
END_TEST

/* The stream hands its stamp through the envelope's decoding to the
 * pipeline, for a request that runs and for a line it refuses. */
START_TEST(stream_answer_times_from_the_arrival_stamp)
{
    static const char *const lines[] = {"{\"id\":1,\"method\":\"GET\",\"path\":\"/healthz\"}", "not json"};
    static const int status[] = {200, 400};
    for (int i = 0; i < 2; i++) {
        cqp_buf out = {0};
        uint64_t before = histogram_ns();
        cqd_stream_answer(&srv, CQP_JSON, lines[i], strlen(lines[i]), cqd_mono_ns() - AGO, &out);
        ck_assert(!out.oom);
        json_t *reply = json_loadb(out.data, out.len, 0, NULL);
        ck_assert_ptr_nonnull(reply);
        ck_assert_int_eq(json_integer_value(json_object_get(reply, "status")), status[i]);
        json_decref(reply);
        uint64_t d = histogram_ns() - before;
        ck_assert_uint_ge(d, AGO);
        ck_assert_int_eq(last_logged_us(), (long long)(d / 1000));
        cqp_buf_free(&out);
    }
}
END_TEST

Suite *timing_suite(void)
{
    Suite *s = suite_create("timing");
    TCase *tc = tcase_create("clock");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, handle_times_from_the_arrival_stamp);
    tcase_add_test(tc, refuse_times_from_the_arrival_stamp);
    tcase_add_test(tc, stream_answer_times_from_the_arrival_stamp);
    suite_add_tcase(s, tc);
    return s;
}
