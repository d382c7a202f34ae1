/* Metrics suite: the exposition read back by the test's own parser
 * (prom_oracle.c) and compared with what was recorded by hand; the label
 * escaper; the fallback rings' merge; the operations handlers. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "api/handlers.h"
#include "api/openapi.h"
#include "api/router.h"
#include "ops/metrics.h"
#include "ops/metrics_process.h"
#include "prom_oracle.h"
#include "state/fallbacks.h"
#include "state/registry.h"
#include "state/server.h"
#include "state/thread.h"

Suite *metrics_suite(void);

static cqd_server srv;

static void setup(void)
{
    cqd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.metrics_worlds = 100;
    ck_assert_int_eq(cqd_server_init(&srv, &cfg), 0);
}

static void teardown(void)
{
    cqd_server_destroy(&srv);
}

/* The exposition of srv, parsed and checked against the format's rules. */
static void scrape(prom *p)
{
    cqp_buf out = {0};
    cqd_metrics_render(&srv, &out);
    ck_assert(!out.oom);
    ck_assert_ptr_nonnull(out.data);
    int rc = prom_parse(p, out.data);
    ck_assert_msg(rc == 0, "parse: %s", p->error);
    rc = prom_check(p);
    ck_assert_msg(rc == 0, "rules: %s", p->error);
    cqp_buf_free(&out);
}

/* ---- the oracle can fail ---- */

static int parse_and_check(prom *p, const char *text)
{
    int rc = prom_parse(p, text);
    if (rc == 0)
        rc = prom_check(p);
    prom_free(p);
    return rc;
}

START_TEST(oracle_rejects_broken_expositions)
{
    prom p;
    ck_assert_int_eq(parse_and_check(&p, "# HELP a_total x\n# TYPE a_total counter\na_total 1\n"), 0);
    /* two TYPE lines */
    ck_assert_int_eq(parse_and_check(&p, "# HELP a_total x\n# TYPE a_total counter\n# TYPE a_total counter\n"
                                         "a_total 1\n"), -1);
    /* a sample before its TYPE */
    ck_assert_int_eq(parse_and_check(&p, "a_total 1\n# HELP a_total x\n# TYPE a_total counter\n"), -1);
    /* no HELP */
    ck_assert_int_eq(parse_and_check(&p, "# TYPE g gauge\ng 1\n"), -1);
    /* buckets that go down, +Inf != _count, no +Inf */
    const char *head = "# HELP h x\n# TYPE h histogram\n";
    char text[512];
    snprintf(text, sizeof text, "%sh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", head);
    ck_assert_int_eq(parse_and_check(&p, text), -1);
    snprintf(text, sizeof text, "%sh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", head);
    ck_assert_int_eq(parse_and_check(&p, text), -1);
    snprintf(text, sizeof text, "%sh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", head);
    ck_assert_int_eq(parse_and_check(&p, text), -1);
    snprintf(text, sizeof text, "%sh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n", head);
    ck_assert_int_eq(parse_and_check(&p, text), 0);
    /* a family split in two runs */
    ck_assert_int_eq(parse_and_check(&p, "# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\n"
                                         "a{k=\"1\"} 1\nb 1\na{k=\"2\"} 1\n"), -1);
    /* the same name and labels twice, in any label order; a second le */
    ck_assert_int_eq(parse_and_check(&p, "# HELP a x\n# TYPE a gauge\na{k=\"1\",j=\"2\"} 1\na{j=\"2\",k=\"1\"} 1\n"), -1);
    snprintf(text, sizeof text, "%sh_bucket{le=\"1\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n"
             "h_count 1\n", head);
    ck_assert_int_eq(parse_and_check(&p, text), -1);
    ck_assert_int_eq(parse_and_check(&p, "# HELP a x\n# TYPE a gauge\na{k=\"1\",j=\"2\"} 1\na{j=\"1\",k=\"2\"} 1\n"), 0);
    /* an unknown escape */
    ck_assert_int_eq(parse_and_check(&p, "# HELP a x\n# TYPE a gauge\na{k=\"\\t\"} 1\n"), -1);
}
END_TEST

/* ---- the escaper ---- */

START_TEST(escape_label_values)
{
    cqp_buf out = {0};
    cqd_metrics_escape(&out, "a\\b\"c\nd");
    ck_assert_str_eq(out.data, "a\\\\b\\\"c\\nd");
    cqp_buf_reset(&out);
    cqd_metrics_escape(&out, "/v1/worlds/{world}");
    ck_assert_str_eq(out.data, "/v1/worlds/{world}");
    cqp_buf_reset(&out);
    cqd_metrics_escape(&out, "\"\"");
    ck_assert_str_eq(out.data, "\\\"\\\"");
    cqp_buf_free(&out);
}
END_TEST

/* ---- the exposition ---- */

/* Durations recorded on route 0 with status 200 (seconds; exact in ns). */
static const double ok_durations[] = {30e-6, 200e-6, 2.0, 500e-6};

static void *second_thread(void *arg)
{
    cqd_thread *t = cqd_thread_self(arg);
    ck_assert_ptr_nonnull(t);
    cqd_metrics_record(&t->requests, 0, "GET", 200, 500000);
    cq_count(&t->counters, CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX, 2);
    cq_count_gjk(&t->counters, 100);
    cq_count(&t->counters, CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT, 1);
    cq_count(&t->counters, CQ_CTR_ACTIONS + CQ_FBA_DROPPED, 1);
    return NULL;
}

static void add_world(const char *name, int spheres)
{
    cq_world_settings settings;
    memset(&settings, 0, sizeof settings);
    int bad = -1;
    ck_assert_int_eq(cqd_registry_put(srv.worlds, name, &(cqd_world_put){.settings = &settings}, &bad, NULL, NULL), 201);
    cqd_world *w = cqd_world_acquire(srv.worlds, name, true);
    ck_assert_ptr_nonnull(w);
    for (int i = 0; i < spheres; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i + 1);
        cq_world_op op;
        memset(&op, 0, sizeof op);
        op.kind = CQ_WORLD_UPSERT;
        op.id = id;
        op.shape.type = CQ_SPHERE;
        op.shape.sphere.radius = 1;
        op.pose = cq_xform_identity(); /* all at the origin: every pair overlaps */
        op.layer = op.mask = 1;
        ck_assert_int_eq(cq_world_apply(w->world, &op, 1, &bad), CQ_OK);
    }
    cqd_world_release(srv.worlds, w);
}

START_TEST(exposition_counts_what_was_recorded)
{
    int nroutes = 0;
    const cqd_route *routes = cqd_routes(&nroutes);
    ck_assert_int_ge(nroutes, 1);
    ck_assert_int_le(nroutes, CQD_MAX_ROUTES);

    cqd_thread *t = cqd_thread_self(&srv);
    ck_assert_ptr_nonnull(t);
    cqd_metrics_record(&t->requests, 0, "GET", 200, 30000);
    cqd_metrics_record(&t->requests, 0, "GET", 200, 200000);
    cqd_metrics_record(&t->requests, 0, "GET", 200, 2000000000);
    cqd_metrics_record(&t->requests, 0, "GET", 418, 1000000); /* exactly on the 1 ms bound */
    cqd_metrics_record(&t->requests, -1, "GET", 404, 10000);
    cq_count(&t->counters, CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX, 3);
    cq_count(&t->counters, CQ_CTR_SAT_AXES_SKIPPED, 7);
    cq_count(&t->counters, CQ_CTR_ZERO_NORMALS, 1);
    cq_count_gjk(&t->counters, 1);
    cq_count_gjk(&t->counters, 5);
    cq_count(&t->counters, CQ_CTR_EPA_CALLS, 4);
    cq_count(&t->counters, CQ_CTR_EPA_ITERATIONS, 40);
    cq_count(&t->counters, CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT, 1);
    cq_count(&t->counters, CQ_CTR_REASONS + CQ_FB_EPA_DEGENERATE, 1);
    cq_count(&t->counters, CQ_CTR_ACTIONS + CQ_FBA_PREVIOUS_NORMAL, 2);
    pthread_t other;
    ck_assert_int_eq(pthread_create(&other, NULL, second_thread, &srv), 0);
    ck_assert_int_eq(pthread_join(other, NULL), 0);
    add_world("arena", 2);
    add_world("empty", 0);
    srv.started = 1234.5;

    prom p;
    scrape(&p);
    for (int f = 0; f < p.nfamilies; f++)
        ck_assert_msg(strncmp(p.families[f].name, "collisiond_", 11) == 0 ||
                          strncmp(p.families[f].name, "process_", 8) == 0,
                      "%s", p.families[f].name);

    /* requests: only the series that were recorded */
    char ok[256], other_status[256];
    snprintf(ok, sizeof ok, "method=%s,route=%s,status=200", routes[0].method, routes[0].pattern);
    snprintf(other_status, sizeof other_status, "method=%s,route=%s,status=other", routes[0].method,
             routes[0].pattern);
    ck_assert_double_eq(prom_value(&p, "collisiond_requests_total", ok), 4);
    ck_assert_double_eq(prom_value(&p, "collisiond_requests_total", other_status), 1);
    ck_assert_double_eq(prom_value(&p, "collisiond_requests_total", "method=GET,route=unmatched,status=404"), 1);
    ck_assert_int_eq(prom_count(&p, "collisiond_requests_total"), 3);
    ck_assert_str_eq(prom_family_of(&p, "collisiond_requests_total")->type, "counter");

    /* the latency histogram: every bucket against the recorded durations */
    const char *dur = "collisiond_request_duration_seconds";
    ck_assert_str_eq(prom_family_of(&p, dur)->type, "histogram");
    const double bounds[] = CQD_LATENCY_BOUNDS;
    for (size_t b = 0; b <= sizeof bounds / sizeof bounds[0]; b++) {
        double le = b < sizeof bounds / sizeof bounds[0] ? bounds[b] : INFINITY;
        double expect = 0;
        for (size_t i = 0; i < sizeof ok_durations / sizeof ok_durations[0]; i++)
            expect += ok_durations[i] <= le;
        ck_assert_msg(prom_bucket(&p, dur, ok, le) == expect, "le %g: %g != %g", le,
                      prom_bucket(&p, dur, ok, le), expect);
        ck_assert_double_eq(prom_bucket(&p, dur, other_status, le), 0.001 <= le);
    }
    char name[128];
    snprintf(name, sizeof name, "%s_sum", dur);
    ck_assert_double_eq_tol(prom_value(&p, name, ok), 30e-6 + 200e-6 + 2.0 + 500e-6, 1e-12);
    snprintf(name, sizeof name, "%s_count", dur);
    ck_assert_double_eq(prom_value(&p, name, ok), 4);
    ck_assert_double_eq(prom_value(&p, name, "method=GET,route=unmatched,status=404"), 1);

    /* the core's counters, summed over both threads; every label present */
    ck_assert_int_eq(prom_count(&p, "collisiond_narrowphase_tests_total"), CQ_ALG_COUNT);
    ck_assert_double_eq(prom_value(&p, "collisiond_narrowphase_tests_total", "algorithm=sat_box_box"), 5);
    ck_assert_double_eq(prom_value(&p, "collisiond_narrowphase_tests_total", "algorithm=sphere_sphere"), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_narrowphase_tests_total", "algorithm=gjk_epa"), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_sat_axes_skipped_total", ""), 7);
    ck_assert_double_eq(prom_value(&p, "collisiond_zero_normals_total", ""), 1);
    ck_assert_double_eq(prom_value(&p, "collisiond_gjk_calls_total", ""), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_epa_calls_total", ""), 4);
    ck_assert_double_eq(prom_value(&p, "collisiond_epa_iterations_total", ""), 40);
    ck_assert_double_eq(prom_value(&p, "collisiond_gjk_iteration_limit_total", ""), 2);
    /* GJK iterations 1, 5 and 100 against bounds 2, 4, 8, 16, 32 */
    const double gjk_le[] = {2, 4, 8, 16, 32, INFINITY}, gjk_cum[] = {1, 1, 2, 2, 2, 3};
    for (int b = 0; b < 6; b++)
        ck_assert_double_eq(prom_bucket(&p, "collisiond_gjk_iterations", "", gjk_le[b]), gjk_cum[b]);
    ck_assert_double_eq(prom_value(&p, "collisiond_gjk_iterations_sum", ""), 106);
    ck_assert_double_eq(prom_value(&p, "collisiond_gjk_iterations_count", ""), 3);
    const char *reasons[] = {"coincident_features", "gjk_iteration_limit", "epa_iteration_limit", "epa_capacity",
                             "epa_degenerate"};
    const double reason_counts[] = {0, 2, 0, 0, 1};
    ck_assert_int_eq(prom_count(&p, "collisiond_fallback_reasons_total"), 5);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "reason=%s", reasons[i]);
        ck_assert_double_eq(prom_value(&p, "collisiond_fallback_reasons_total", name), reason_counts[i]);
    }
    ck_assert_int_eq(prom_count(&p, "collisiond_fallback_actions_total"), 2);
    ck_assert_double_eq(prom_value(&p, "collisiond_fallback_actions_total", "action=previous_normal"), 2);
    ck_assert_double_eq(prom_value(&p, "collisiond_fallback_actions_total", "action=dropped"), 1);

    /* worlds: two spheres at the origin are one broadphase pair */
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds", ""), 2);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=arena"), 2);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=empty"), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=arena"), 1);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=empty"), 0);
    ck_assert_str_eq(prom_family_of(&p, "collisiond_worlds")->type, "gauge");

    /* the process */
    ck_assert_double_eq(prom_value(&p, "collisiond_threads", ""), 2);
    ck_assert_double_eq(prom_value(&p, "collisiond_ready", ""), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_start_time_seconds", ""), 1234.5);
    ck_assert_int_eq(prom_count(&p, "collisiond_build_info"), 1);
    const prom_sample *build = NULL;
    for (int i = 0; i < p.nsamples; i++)
        if (strcmp(p.samples[i].name, "collisiond_build_info") == 0)
            build = &p.samples[i];
    ck_assert_ptr_nonnull(build);
    ck_assert_double_eq(build->value, 1);
    ck_assert(strncmp(build->labels, "version=", 8) == 0 && build->labels[8] != '\0');
    ck_assert_ptr_nonnull(strstr(cqd_version(), build->labels + 8));
    prom_free(&p);

    atomic_store(&srv.state, CQD_READY);
    scrape(&p);
    ck_assert_double_eq(prom_value(&p, "collisiond_ready", ""), 1);
    prom_free(&p);
}
END_TEST

START_TEST(exposition_of_an_idle_server)
{
    prom p;
    scrape(&p);
    /* families without samples still have their HELP and TYPE */
    ck_assert_int_eq(prom_count(&p, "collisiond_requests_total"), 0);
    ck_assert_ptr_nonnull(prom_family_of(&p, "collisiond_requests_total"));
    ck_assert_ptr_nonnull(prom_family_of(&p, "collisiond_world_shapes"));
    ck_assert_double_eq(prom_value(&p, "collisiond_threads", ""), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds", ""), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_gjk_iterations_count", ""), 0);
    ck_assert_double_eq(prom_bucket(&p, "collisiond_gjk_iterations", "", INFINITY), 0);
    ck_assert_int_eq(prom_count(&p, "collisiond_narrowphase_tests_total"), CQ_ALG_COUNT);
    prom_free(&p);
}
END_TEST

/* The value of name{labels} where labels is formatted; 0 when absent. */
static double value_of(const prom *p, const char *name, const char *fmt, ...)
{
    char labels[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(labels, sizeof labels, fmt, ap);
    va_end(ap);
    double v = prom_value(p, name, labels);
    return isnan(v) ? 0 : v;
}

START_TEST(route_table_has_one_row_per_method_and_pattern)
{
    int n = 0;
    const cqd_route *routes = cqd_routes(&n);
    for (int i = 0; i < n; i++) {
        ck_assert_msg(routes[i].pattern[0] == '/', "%s: the label \"unmatched\" must stay apart", routes[i].pattern);
        for (int j = 0; j < i; j++)
            ck_assert_msg(strcmp(routes[i].method, routes[j].method) != 0 ||
                              strcmp(routes[i].pattern, routes[j].pattern) != 0,
                          "%s %s twice", routes[i].method, routes[i].pattern);
    }
}
END_TEST

/* Every route with every tracked status and one beyond, and the requests
 * that matched none with each known method, nonstandard ones and none:
 * no two series share their labels (prom_check), and each carries the
 * method its route fixes, or the one it came with ("other" past the list). */
START_TEST(request_series_never_collide)
{
    int n = 0;
    const cqd_route *routes = cqd_routes(&n);
    static const int codes[] = {200, 201, 204, 301, 400, 401, 404, 405, 409, 413, 422, 429, 500, 503, 418};
    const int ncodes = (int)(sizeof codes / sizeof codes[0]);
    cqd_thread *t = cqd_thread_self(&srv);
    ck_assert_ptr_nonnull(t);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < ncodes; c++)
            cqd_metrics_record(&t->requests, r, routes[r].method, codes[c], 1000);
    static const char *known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"};
    static const char *odd[] = {"BREW", "get", "", "GET ", "PROPFIND"};
    for (int c = 0; c < ncodes; c++) {
        for (size_t m = 0; m < sizeof known / sizeof known[0]; m++)
            cqd_metrics_record(&t->requests, -1, known[m], codes[c], 1000);
        for (size_t m = 0; m < sizeof odd / sizeof odd[0]; m++)
            cqd_metrics_record(&t->requests, -1, odd[m], codes[c], 1000);
        cqd_metrics_record(&t->requests, -1, NULL, codes[c], 1000);
        /* an index past the table is unmatched too, never out of bounds */
        cqd_metrics_record(&t->requests, CQD_MAX_ROUTES + 5, "PUT", codes[c], 1000);
    }

    prom p;
    scrape(&p);
    const char *total = "collisiond_requests_total", *count = "collisiond_request_duration_seconds_count";
    for (int c = 0; c < ncodes; c++) {
        char st[8];
        snprintf(st, sizeof st, c == ncodes - 1 ? "other" : "%d", codes[c]);
        for (int r = 0; r < n; r++) {
            /* two routes that share a pattern (PUT, GET, DELETE /v1/worlds/{world}) are two series */
            ck_assert_double_eq(value_of(&p, total, "method=%s,route=%s,status=%s", routes[r].method,
                                         routes[r].pattern, st), 1);
            ck_assert_double_eq(value_of(&p, count, "method=%s,route=%s,status=%s", routes[r].method,
                                         routes[r].pattern, st), 1);
        }
        for (size_t m = 0; m < sizeof known / sizeof known[0]; m++)
            ck_assert_double_eq(value_of(&p, total, "method=%s,route=unmatched,status=%s", known[m], st),
                                strcmp(known[m], "PUT") == 0 ? 2 : 1);
        ck_assert_double_eq(value_of(&p, total, "method=other,route=unmatched,status=%s", st), 6);
    }
    /* nothing else: every route's row, and one per known method and "other" */
    int want = ncodes * (n + (int)(sizeof known / sizeof known[0]) + 1);
    ck_assert_int_eq(prom_count(&p, total), want);
    ck_assert_int_eq(prom_count(&p, count), want);
    prom_free(&p);
}
END_TEST

/* Four worlds against a cap of two: the two with the most shapes (a tie
 * broken by name) keep their series, the others are summed into
 * world="(other)", and the sums over each family are still the totals. */
START_TEST(world_series_are_capped)
{
    add_world("a", 0);
    add_world("b", 3); /* spheres at the origin: 3 pairs */
    add_world("c", 2); /* 1 pair */
    add_world("d", 3);
    srv.cfg.metrics_worlds = 2;
    prom p;
    scrape(&p);
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds", ""), 4);
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds_folded", ""), 2);
    ck_assert_int_eq(prom_count(&p, "collisiond_world_shapes"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=b"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=d"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=(other)"), 2);
    ck_assert_int_eq(prom_count(&p, "collisiond_world_broadphase_pairs"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=b"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=d"), 3);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=(other)"), 1);
    prom_free(&p);

    /* a cap of 0: only the sum; a cap that holds them all: no sum */
    srv.cfg.metrics_worlds = 0;
    scrape(&p);
    ck_assert_int_eq(prom_count(&p, "collisiond_world_shapes"), 1);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=(other)"), 8);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_broadphase_pairs", "world=(other)"), 7);
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds_folded", ""), 4);
    prom_free(&p);
    srv.cfg.metrics_worlds = 4;
    scrape(&p);
    ck_assert_int_eq(prom_count(&p, "collisiond_world_shapes"), 4);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=a"), 0);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=c"), 2);
    ck_assert(isnan(prom_value(&p, "collisiond_world_shapes", "world=(other)")));
    ck_assert_double_eq(prom_value(&p, "collisiond_worlds_folded", ""), 0);
    prom_free(&p);

    /* a world deleted and created again is one series */
    ck_assert_int_eq(cqd_registry_delete(srv.worlds, "a"), CQ_OK);
    add_world("a", 1);
    scrape(&p);
    ck_assert_int_eq(prom_count(&p, "collisiond_world_shapes"), 4);
    ck_assert_double_eq(prom_value(&p, "collisiond_world_shapes", "world=a"), 1);
    prom_free(&p);
}
END_TEST

/* ---- the process ---- */

START_TEST(proc_stat_lines)
{
    /* fields 14, 15, 22, 23, 24: utime, stime, starttime, vsize, rss; the
     * name holds ") (" and spaces, nice (19) is negative */
    const char *line = "4242 (we ird) (x) S 1 4242 4242 0 -1 4194560 180 0 0 0 "
                       "37 12 0 0 20 -5 3 0 98765 123456789 4321 18446744073709551615 1 1 0 0 0 0 0 4096\n";
    cqd_proc_stat st;
    ck_assert_int_eq(cqd_proc_parse_stat(line, &st), 0);
    ck_assert_uint_eq(st.utime, 37);
    ck_assert_uint_eq(st.stime, 12);
    ck_assert_uint_eq(st.starttime, 98765);
    ck_assert_uint_eq(st.vsize, 123456789);
    ck_assert_uint_eq(st.rss, 4321);
    /* cut short, no name, garbage in a field */
    ck_assert_int_eq(cqd_proc_parse_stat("4242 (x) S 1 2 3\n", &st), -1);
    ck_assert_int_eq(cqd_proc_parse_stat("4242 x S 1 2 3\n", &st), -1);
    ck_assert_int_eq(cqd_proc_parse_stat("4242 (x) S 1 4242 4242 0 -1 4194560 180 0 0 0 "
                                         "3x 12 0 0 20 0 3 0 98765 123456789 4321\n", &st), -1);
    ck_assert_int_eq(cqd_proc_parse_stat("", &st), -1);
}
END_TEST

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Descriptors open in this process, found one by one. */
static int fds_open(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

/* The process_* families against what the test measures itself: a
 * descriptor limit it sets, descriptors it opens, memory it touches, CPU
 * time from the clock of the process. */
START_TEST(process_families)
{
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    struct rlimit lim = {1000, old.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
    int extra[3];
    for (int i = 0; i < 3; i++)
        extra[i] = open("/dev/null", O_RDONLY);
    volatile double x = 0;
    for (double start = cpu_now(); cpu_now() - start < 0.1;)
        x += 1;

    prom p;
    scrape(&p);
    double cpu = cpu_now();
    ck_assert_str_eq(prom_family_of(&p, "process_cpu_seconds_total")->type, "counter");
    ck_assert_double_eq_tol(prom_value(&p, "process_cpu_seconds_total", ""), cpu, 0.05);
    ck_assert_double_eq(prom_value(&p, "process_max_fds", ""), 1000);
    ck_assert_double_eq(prom_value(&p, "process_open_fds", ""), fds_open());
    double rss = prom_value(&p, "process_resident_memory_bytes", ""),
           vm = prom_value(&p, "process_virtual_memory_bytes", "");
    ck_assert_double_gt(rss, 0);
    ck_assert_double_ge(vm, rss);
    double start = prom_value(&p, "process_start_time_seconds", "");
    ck_assert_double_le(start, (double)time(NULL) + 1);
    ck_assert_double_gt(start, 1e9);
    prom_free(&p);

    /* 64 MiB touched: resident and virtual memory grow by about that much */
    enum { BIG = 64 << 20 };
    char *mem = malloc(BIG);
    ck_assert_ptr_nonnull(mem);
    volatile char *big = mem;
    for (size_t i = 0; i < BIG; i += 1024) /* volatile: the stores stay */
        big[i] = 1;
    for (int i = 0; i < 3; i++)
        close(extra[i]);
    scrape(&p);
    ck_assert_double_ge(prom_value(&p, "process_resident_memory_bytes", "") - rss, BIG * 0.9);
    ck_assert_double_ge(prom_value(&p, "process_virtual_memory_bytes", "") - vm, BIG * 0.9);
    ck_assert_double_eq(prom_value(&p, "process_open_fds", ""), fds_open());
    free(mem);
    prom_free(&p);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
}
END_TEST

/* ---- the fallback rings' merge ---- */

static cqd_thread *ring_thread(_Atomic uint64_t *clock)
{
    cqd_thread *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(cq_fallback_log_init(&t->fallbacks, t->slots, CQD_FALLBACK_RING, clock), CQ_OK);
    pthread_mutex_init(&t->label_lock, NULL);
    return t;
}

/* Pushes a record whose iterations carry `mark`, labelled unless label is NULL. */
static uint64_t push(cqd_thread *t, int mark, const char *label)
{
    cq_fallback_record rec;
    memset(&rec, 0, sizeof rec);
    rec.reason = CQ_FB_EPA_DEGENERATE;
    rec.action = CQ_FBA_DROPPED;
    rec.iterations = (uint16_t)mark;
    uint64_t seq = cq_fallback_log_push(&t->fallbacks, &rec);
    if (label) {
        cqd_fallback_label *lab = &t->labels[seq % CQD_FALLBACK_RING];
        lab->time = mark;
        snprintf(lab->world, sizeof lab->world, "w");
        snprintf(lab->request_id, sizeof lab->request_id, "%s", label);
        atomic_store(&lab->seq, seq);
    }
    return seq;
}

START_TEST(fallbacks_merge_newest_first)
{
    _Atomic uint64_t clock = 0;
    cqd_thread *a = ring_thread(&clock), *b = ring_thread(&clock);
    a->next = b;
    /* push order (the oracle): a a a b a b b -> marks 1..7 */
    push(a, 1, "r1");
    push(a, 2, "r2");
    push(a, 3, "r3");
    push(b, 4, "r4");
    push(a, 5, NULL);
    push(b, 6, "r6");
    push(b, 7, "r7");

    cqd_fallback_entry out[16];
    int n = cqd_fallbacks_collect(a, out, 16);
    ck_assert_int_eq(n, 7);
    for (int i = 0; i < 7; i++) {
        int mark = 7 - i;
        ck_assert_int_eq(out[i].rec.iterations, mark);
        ck_assert_int_eq(out[i].rec.seq, mark); /* the shared clock numbers them in push order */
        ck_assert(out[i].labelled == (mark != 5));
        if (mark != 5) {
            char id[8];
            snprintf(id, sizeof id, "r%d", mark);
            ck_assert_str_eq(out[i].request_id, id);
            ck_assert_str_eq(out[i].world, "w");
            ck_assert_double_eq(out[i].time, mark);
        }
    }
    /* the limit keeps the newest; the other list order gives the same */
    ck_assert_int_eq(cqd_fallbacks_collect(a, out, 3), 3);
    ck_assert_int_eq(out[0].rec.iterations, 7);
    ck_assert_int_eq(out[1].rec.iterations, 6);
    ck_assert_int_eq(out[2].rec.iterations, 5);
    a->next = NULL;
    b->next = a;
    ck_assert_int_eq(cqd_fallbacks_collect(b, out, 2), 2);
    ck_assert_int_eq(out[0].rec.iterations, 7);
    ck_assert_int_eq(out[1].rec.iterations, 6);
    ck_assert_int_eq(cqd_fallbacks_collect(b, out, 0), 0);
    pthread_mutex_destroy(&a->label_lock);
    pthread_mutex_destroy(&b->label_lock);
    free(a);
    free(b);
}
END_TEST

START_TEST(fallbacks_merge_wrapped_rings)
{
    _Atomic uint64_t clock = 0;
    cqd_thread *a = ring_thread(&clock), *b = ring_thread(&clock);
    a->next = b;
    /* b gets every third record: 300 + 150 pushes, more than a ring holds */
    int marks = 450;
    for (int m = 1; m <= marks; m++)
        push(m % 3 == 0 ? b : a, m, "r");
    enum { CAP = 1000 };
    cqd_fallback_entry *out = malloc(CAP * sizeof *out);
    ck_assert_ptr_nonnull(out);
    int n = cqd_fallbacks_collect(a, out, CAP);
    /* a keeps its newest 256 of 300, b all 150 */
    ck_assert_int_eq(n, CQD_FALLBACK_RING + 150);
    int seen_a = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            ck_assert_uint_lt(out[i].rec.seq, out[i - 1].rec.seq);
        seen_a += out[i].rec.iterations % 3 != 0;
    }
    ck_assert_int_eq(seen_a, CQD_FALLBACK_RING);
    ck_assert_int_eq(out[0].rec.iterations, 450);
    /* a's oldest kept record is its 45th push (300 - 256 + 1): mark 67 */
    int oldest_a = 0;
    for (int i = 0; i < n; i++)
        if (out[i].rec.iterations % 3 != 0)
            oldest_a = out[i].rec.iterations;
    ck_assert_int_eq(oldest_a, 67);
    /* a limit below one ring: the newest 100 overall */
    ck_assert_int_eq(cqd_fallbacks_collect(a, out, 100), 100);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(out[i].rec.iterations, marks - i);
    free(out);
    pthread_mutex_destroy(&a->label_lock);
    pthread_mutex_destroy(&b->label_lock);
    free(a);
    free(b);
}
END_TEST

/* ---- the handlers ---- */

typedef struct call {
    cqd_call c;
    cqd_request req;
    cqd_response resp;
} call;

static void call_init(call *k, const char *query)
{
    memset(k, 0, sizeof *k);
    k->req.method = "GET";
    k->req.path = "/";
    k->req.query = query;
    k->c.srv = &srv;
    k->c.req = &k->req;
    k->c.resp = &k->resp;
    k->resp.content_type = "application/json";
    cqp_writer_init(&k->c.out, &k->resp.body, false);
}

/* The JSON body of a 200 answer. */
static json_t *run_json(call *k, cqd_handler h)
{
    ck_assert_int_eq(h(&k->c), 200);
    ck_assert_ptr_nonnull(k->resp.body.data);
    json_error_t err;
    json_t *j = json_loadb(k->resp.body.data, k->resp.body.len, 0, &err);
    ck_assert_msg(j != NULL, "%s: %s", err.text, k->resp.body.data);
    return j;
}

static cq_world_handle handle_of(const char *world, const char *id)
{
    cqd_world *w = cqd_world_acquire(srv.worlds, world, false);
    ck_assert_ptr_nonnull(w);
    cq_world_handle h;
    ck_assert_int_eq(cq_world_find(w->world, id, &h), CQ_OK);
    cqd_world_release(srv.worlds, w);
    return h;
}

static void push_labelled(cqd_thread *t, const char *world, uint64_t tag_a, uint64_t tag_b, const char *rid)
{
    cq_fallback_record rec;
    memset(&rec, 0, sizeof rec);
    rec.reason = CQ_FB_GJK_ITERATION_LIMIT;
    rec.action = CQ_FBA_PREVIOUS_NORMAL;
    rec.shape_a = CQ_BOX;
    rec.shape_b = CQ_CONVEX;
    rec.iterations = 64;
    rec.tag_a = tag_a;
    rec.tag_b = tag_b;
    uint64_t seq = cq_fallback_log_push(&t->fallbacks, &rec);
    cqd_fallback_label *lab = &t->labels[seq % CQD_FALLBACK_RING];
    pthread_mutex_lock(&t->label_lock);
    lab->time = 1700000000.25;
    snprintf(lab->world, sizeof lab->world, "%s", world);
    snprintf(lab->request_id, sizeof lab->request_id, "%s", rid);
    atomic_store(&lab->seq, seq);
    pthread_mutex_unlock(&t->label_lock);
}

START_TEST(fallbacks_endpoint)
{
    add_world("arena", 2);
    cqd_thread *t = cqd_thread_self(&srv);
    ck_assert_ptr_nonnull(t);
    push_labelled(t, "arena", cq_world_handle_pack(handle_of("arena", "s1")),
                  cq_world_handle_pack(handle_of("arena", "s2")), "req-1");
    push_labelled(t, "", 3, 3, "req-2");

    call k;
    call_init(&k, "pretty=0&limit=5");
    json_t *got = run_json(&k, cqd_h_fallbacks);
    json_error_t err;
    json_t *want = json_loads(
        "{\"fallbacks\":["
        "{\"seq\":2,\"time\":1700000000.25,\"world\":null,\"a\":3,\"b\":3,\"shapes\":[\"box\",\"convex\"],"
        "\"iterations\":64,\"reason\":\"gjk_iteration_limit\",\"action\":\"previous_normal\",\"request_id\":\"req-2\"},"
        "{\"seq\":1,\"time\":1700000000.25,\"world\":\"arena\",\"a\":\"s1\",\"b\":\"s2\",\"shapes\":[\"box\",\"convex\"],"
        "\"iterations\":64,\"reason\":\"gjk_iteration_limit\",\"action\":\"previous_normal\",\"request_id\":\"req-1\"}"
        "]}",
        0, &err);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(json_equal(got, want), "got %s", k.resp.body.data);
    json_decref(got);
    json_decref(want);
    cqp_buf_free(&k.resp.body);

    /* limit=1: only the newest; a removed shape becomes null */
    cqd_world *w = cqd_world_acquire(srv.worlds, "arena", true);
    cq_world_op op;
    memset(&op, 0, sizeof op);
    op.kind = CQ_WORLD_REMOVE;
    op.id = "s2";
    int bad;
    ck_assert_int_eq(cq_world_apply(w->world, &op, 1, &bad), CQ_OK);
    cqd_world_release(srv.worlds, w);
    call_init(&k, "limit=1");
    got = run_json(&k, cqd_h_fallbacks);
    ck_assert_int_eq(json_array_size(json_object_get(got, "fallbacks")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(got, "fallbacks"), 0), "seq")), 2);
    json_decref(got);
    cqp_buf_free(&k.resp.body);
    call_init(&k, NULL);
    got = run_json(&k, cqd_h_fallbacks);
    json_t *older = json_array_get(json_object_get(got, "fallbacks"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(older, "a")), "s1");
    ck_assert(json_is_null(json_object_get(older, "b")));
    json_decref(got);
    cqp_buf_free(&k.resp.body);

    /* bad limits */
    const char *bad_queries[] = {"limit=0", "limit=1001", "limit=abc", "limit=", "limit", "limit=-1",
                                 "limit=99999999999999999999", "a=1&limit=1x"};
    for (size_t i = 0; i < sizeof bad_queries / sizeof bad_queries[0]; i++) {
        call_init(&k, bad_queries[i]);
        ck_assert_int_eq(cqd_h_fallbacks(&k.c), -1);
        ck_assert_int_eq(k.c.problem.kind, CQP_P_BAD_VALUE);
        ck_assert_str_eq(k.c.problem.pointer, "");
        ck_assert_ptr_nonnull(strstr(k.c.problem.detail, "limit"));
        cqp_buf_free(&k.resp.body);
    }
    /* limit=1000 and other parameters are fine */
    call_init(&k, "limit=1000&x=limit");
    got = run_json(&k, cqd_h_fallbacks);
    ck_assert_int_eq(json_array_size(json_object_get(got, "fallbacks")), 2);
    json_decref(got);
    cqp_buf_free(&k.resp.body);
}
END_TEST

START_TEST(probes)
{
    call k;
    call_init(&k, NULL);
    json_t *j = run_json(&k, cqd_h_healthz);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
    json_decref(j);
    cqp_buf_free(&k.resp.body);

    call_init(&k, NULL);
    ck_assert_int_eq(cqd_h_readyz(&k.c), -1);
    ck_assert_int_eq(k.c.problem.kind, CQP_P_BUSY);
    ck_assert_str_eq(k.c.problem.detail, "starting");
    ck_assert_int_eq(k.resp.retry_after, 1);
    cqp_buf_free(&k.resp.body);

    atomic_store(&srv.state, CQD_READY);
    call_init(&k, NULL);
    j = run_json(&k, cqd_h_readyz);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ready");
    ck_assert_int_eq(k.resp.retry_after, 0);
    json_decref(j);
    cqp_buf_free(&k.resp.body);

    atomic_store(&srv.state, CQD_DRAINING);
    call_init(&k, NULL);
    ck_assert_int_eq(cqd_h_readyz(&k.c), -1);
    ck_assert_int_eq(k.c.problem.kind, CQP_P_BUSY);
    ck_assert_str_eq(k.c.problem.detail, "draining");
    ck_assert_int_eq(k.resp.retry_after, 1);
    cqp_buf_free(&k.resp.body);
}
END_TEST

START_TEST(metrics_and_openapi_endpoints)
{
    call k;
    call_init(&k, NULL);
    ck_assert_int_eq(cqd_h_metrics(&k.c), 200);
    ck_assert_str_eq(k.resp.content_type, "text/plain; version=0.0.4; charset=utf-8");
    prom p;
    ck_assert_int_eq(prom_parse(&p, k.resp.body.data), 0);
    ck_assert_int_eq(prom_check(&p), 0);
    ck_assert_ptr_nonnull(prom_family_of(&p, "collisiond_build_info"));
    prom_free(&p);
    cqp_buf_free(&k.resp.body);

    call_init(&k, NULL);
    ck_assert_int_eq(cqd_h_openapi(&k.c), 200);
    ck_assert_str_eq(k.resp.content_type, "application/json");
    ck_assert_uint_eq(k.resp.body.len, cqd_openapi_len);
    ck_assert_int_eq(memcmp(k.resp.body.data, cqd_openapi_json, cqd_openapi_len), 0);
    json_error_t err;
    json_t *doc = json_loadb(k.resp.body.data, k.resp.body.len, 0, &err);
    ck_assert_msg(doc != NULL, "%s", err.text);
    json_decref(doc);
    cqp_buf_free(&k.resp.body);
}
END_TEST

Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("exposition");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, oracle_rejects_broken_expositions);
    tcase_add_test(tc, escape_label_values);
    tcase_add_test(tc, exposition_counts_what_was_recorded);
    tcase_add_test(tc, exposition_of_an_idle_server);
    tcase_add_test(tc, route_table_has_one_row_per_method_and_pattern);
    tcase_add_test(tc, request_series_never_collide);
    tcase_add_test(tc, world_series_are_capped);
    tcase_add_test(tc, proc_stat_lines);
    tcase_add_test(tc, process_families);
    suite_add_tcase(s, tc);
    tc = tcase_create("fallbacks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fallbacks_merge_newest_first);
    tcase_add_test(tc, fallbacks_merge_wrapped_rings);
    tcase_add_test(tc, fallbacks_endpoint);
    suite_add_tcase(s, tc);
    tc = tcase_create("handlers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, probes);
    tcase_add_test(tc, metrics_and_openapi_endpoints);
    suite_add_tcase(s, tc);
    return s;
}
