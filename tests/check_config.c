/* The server's config table (cqd_config_load): documented defaults,
 * precedence (flags over environment over defaults), accepted values and
 * sizes, rejected values whose message names the culprit, --help listing
 * every row of the brief's flag table with its variable and default, and
 * --version. Oracles are hand-written: the defaults and flag table of the
 * brief, and the expected values of each command line. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_util.h"

static char *no_env[] = {NULL};

START_TEST(config_defaults)
{
    cqd_config c = cu_default_config();
    ck_assert_str_eq(c.listen_host, "127.0.0.1");
    ck_assert_int_eq(c.listen_port, 7878);
    ck_assert_str_eq(c.stream_host, "127.0.0.1");
    ck_assert_int_eq(c.stream_port, 7879);
    ck_assert_str_eq(c.data_dir, "/var/lib/collisiond");
    ck_assert_int_eq(c.fsync, CQD_FSYNC_EVERYSEC);
    ck_assert_int_eq(c.snapshot_every, 64LL * 1024 * 1024);
    ck_assert_int_eq(c.threads, (int)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_eq(c.max_body, 16u * 1024 * 1024);
    ck_assert_uint_eq(c.max_buffered, 512u * 1024 * 1024);
    ck_assert_uint_eq(c.max_request_memory, 256u * 1024 * 1024);
    ck_assert_uint_eq(c.max_stream_reply_buffered, 4u * 1024 * 1024);
    ck_assert_uint_eq(c.max_stream_reply_total, 128u * 1024 * 1024);
    ck_assert_uint_eq(c.max_http_reply_total, 256u * 1024 * 1024);
    ck_assert_int_eq(c.max_connections, 1024);
    ck_assert_int_eq(c.timeout_s, 30);
    ck_assert_int_eq(c.request_timeout_s, 30);
    ck_assert_str_eq(c.token, "");
    ck_assert_int_eq(c.log_level, CQD_LOG_INFO);
    ck_assert_int_eq(c.limits.pairs, 100000);
    ck_assert_int_eq(c.limits.rays, 100000);
    ck_assert_int_eq(c.limits.hull_points, 256);
    ck_assert_int_eq(c.limits.mesh_triangles, 1000000);
    ck_assert_int_eq(c.limits.batch_items, 100000);
    ck_assert_int_eq(c.limits.world_capacity, 65536);
    ck_assert_int_eq(c.max_shapes_total, 1000000);
    ck_assert_int_eq(c.limits.hits, 1000000);
    ck_assert_str_eq(c.port_file, "");
}
END_TEST

START_TEST(config_precedence)
{
    char *env[] = {"PATH=/bin", "COLLISIOND_MAX_BODY=2M", "COLLISIOND_TOKEN=from-env", "COLLISIOND_THREADS=3",
                   "COLLISIOND_LOG_LEVEL=debug", "COLLISIOND_FSYNC=always", NULL};
    cqd_config c;
    char *only_env[] = {"collisiond", NULL};
    ck_assert_int_eq(cu_load(only_env, env, &c), CQD_CONFIG_RUN);
    ck_assert_uint_eq(c.max_body, 2u * 1024 * 1024);
    ck_assert_str_eq(c.token, "from-env");
    ck_assert_int_eq(c.threads, 3);
    ck_assert_int_eq(c.log_level, CQD_LOG_DEBUG);
    ck_assert_int_eq(c.fsync, CQD_FSYNC_ALWAYS);
    ck_assert_int_eq(c.timeout_s, 30); /* untouched: default */

    char *flags[] = {"collisiond", "--max-body", "3K", "--token=from-flag", "--threads=5", "--fsync", "no", NULL};
    ck_assert_int_eq(cu_load(flags, env, &c), CQD_CONFIG_RUN);
    ck_assert_uint_eq(c.max_body, 3072);
    ck_assert_str_eq(c.token, "from-flag");
    ck_assert_int_eq(c.threads, 5);
    ck_assert_int_eq(c.fsync, CQD_FSYNC_NO);
    ck_assert_int_eq(c.log_level, CQD_LOG_DEBUG); /* no flag: the environment's */
}
END_TEST

START_TEST(config_values)
{
    cqd_config c;
    char *a1[] = {"collisiond", "--listen", "[::1]:9000", "--stream-listen=0.0.0.0:0", "--snapshot-every", "1G",
                  "--max-body=5k", "--data-dir=", "--port-file", "/tmp/p", "--max-hull-points", "4", NULL};
    ck_assert_int_eq(cu_load(a1, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.listen_host, "::1");
    ck_assert_int_eq(c.listen_port, 9000);
    ck_assert_str_eq(c.stream_host, "0.0.0.0");
    ck_assert_int_eq(c.stream_port, 0);
    ck_assert_int_eq(c.snapshot_every, 1073741824LL);
    ck_assert_uint_eq(c.max_body, 5120);
    ck_assert_str_eq(c.data_dir, "");
    ck_assert_str_eq(c.port_file, "/tmp/p");
    ck_assert_int_eq(c.limits.hull_points, 4);
    /* The last of a repeated flag wins. */
    char *a2[] = {"collisiond", "--timeout", "5", "--timeout", "7", "--threads", "auto", NULL};
    ck_assert_int_eq(cu_load(a2, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_int_eq(c.timeout_s, 7);
    ck_assert_int_eq(c.threads, (int)sysconf(_SC_NPROCESSORS_ONLN));
}
END_TEST

/* Each bad command line is an error whose message names the culprit. */
START_TEST(config_rejects)
{
    static const struct {
        const char *arg, *value, *named;
    } bad[] = {
        {"--threads", "0", "--threads"},
        {"--threads", "-1", "--threads"},
        {"--threads", "1.5", "--threads"},
        {"--threads", "1025", "--threads"},
        {"--max-body", "12X", "--max-body"},
        {"--max-body", "0", "--max-body"},
        {"--max-body", "99999999999999999999", "--max-body"},
        {"--max-body", "9999999999G", "--max-body"},
        {"--snapshot-every", "", "--snapshot-every"},
        {"--fsync", "sometimes", "--fsync"},
        {"--log-level", "verbose", "--log-level"},
        {"--listen", "nohost", "--listen"},
        {"--listen", ":80", "--listen"},
        {"--listen", "1.2.3.4:65536", "--listen"},
        {"--listen", "1.2.3.4:-1", "--listen"},
        {"--stream-listen", "h:7x", "--stream-listen"},
        {"--max-hull-points", "257", "--max-hull-points"},
        {"--max-pairs", " 5", "--max-pairs"},
        {"--timeout", "0", "--timeout"},
        {"--request-timeout", "-1", "--request-timeout"},
        {"--request-timeout", "86401", "--request-timeout"},
        {"--max-connections", "+4", "--max-connections"},
        {"--max-world-capacity", "16777217", "--max-world-capacity"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"collisiond", (char *)bad[i].arg, (char *)bad[i].value, NULL};
        cqd_config c;
        cu_captured err;
        ck_assert_msg(cu_load_err(argv, no_env, &c, &err) == CQD_CONFIG_ERROR, "%s %s accepted", bad[i].arg,
                      bad[i].value);
        ck_assert_msg(strstr(err.text, bad[i].named), "message '%s' does not name %s", err.text, bad[i].named);
    }
}
END_TEST

START_TEST(config_rejects_env_and_syntax)
{
    cqd_config c;
    cu_captured err;
    char *plain[] = {"collisiond", NULL};
    char *env[] = {"COLLISIOND_TIMEOUT=0", NULL};
    ck_assert_int_eq(cu_load_err(plain, env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "COLLISIOND_TIMEOUT"));
    /* The environment is read before the flags and must be valid on its own. */
    char *env2[] = {"COLLISIOND_MAX_RAYS=lots", NULL};
    char *fixed[] = {"collisiond", "--max-rays", "10", NULL};
    ck_assert_int_eq(cu_load_err(fixed, env2, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "COLLISIOND_MAX_RAYS"));

    char *unknown[] = {"collisiond", "--bogus", NULL};
    ck_assert_int_eq(cu_load_err(unknown, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "--bogus"));
    char *missing[] = {"collisiond", "--token", NULL};
    ck_assert_int_eq(cu_load_err(missing, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "--token"));
    char *positional[] = {"collisiond", "serve", NULL};
    ck_assert_int_eq(cu_load_err(positional, no_env, &c, &err), CQD_CONFIG_ERROR);
    char *help_value[] = {"collisiond", "--help=yes", NULL};
    ck_assert_int_eq(cu_load_err(help_value, no_env, &c, &err), CQD_CONFIG_ERROR);
    char *prefix[] = {"collisiond", "--list", "1.2.3.4:5", NULL};
    ck_assert_int_eq(cu_load_err(prefix, no_env, &c, &err), CQD_CONFIG_ERROR);
}
END_TEST

START_TEST(config_help_lists_every_row)
{
    /* Every flag of the brief, with its environment variable and default. */
    static const char *rows[][3] = {
        {"--listen", "COLLISIOND_LISTEN", "127.0.0.1:7878"},
        {"--stream-listen", "COLLISIOND_STREAM_LISTEN", "127.0.0.1:7879"},
        {"--data-dir", "COLLISIOND_DATA_DIR", "/var/lib/collisiond"},
        {"--fsync", "COLLISIOND_FSYNC", "everysec"},
        {"--snapshot-every", "COLLISIOND_SNAPSHOT_EVERY", "64M"},
        {"--threads", "COLLISIOND_THREADS", "auto"},
        {"--max-body", "COLLISIOND_MAX_BODY", "16M"},
        {"--max-buffered", "COLLISIOND_MAX_BUFFERED", "512M"},
        {"--max-request-memory", "COLLISIOND_MAX_REQUEST_MEMORY", "256M"},
        {"--max-connections", "COLLISIOND_MAX_CONNECTIONS", "1024"},
        {"--timeout", "COLLISIOND_TIMEOUT", "30"},
        {"--request-timeout", "COLLISIOND_REQUEST_TIMEOUT", "30"},
        {"--token", "COLLISIOND_TOKEN", ""},
        {"--token-file", "COLLISIOND_TOKEN_FILE", ""},
        {"--log-level", "COLLISIOND_LOG_LEVEL", "info"},
        {"--max-pairs", "COLLISIOND_MAX_PAIRS", "100000"},
        {"--max-rays", "COLLISIOND_MAX_RAYS", "100000"},
        {"--max-hull-points", "COLLISIOND_MAX_HULL_POINTS", "256"},
        {"--max-mesh-triangles", "COLLISIOND_MAX_MESH_TRIANGLES", "1000000"},
        {"--max-batch", "COLLISIOND_MAX_BATCH", "100000"},
        {"--max-hits", "COLLISIOND_MAX_HITS", "1000000"},
        {"--max-world-capacity", "COLLISIOND_MAX_WORLD_CAPACITY", "65536"},
        {"--max-shapes-total", "COLLISIOND_MAX_SHAPES_TOTAL", "1000000"},
        {"--max-world-pairs", "COLLISIOND_MAX_WORLD_PAIRS", "1000000"},
        {"--port-file", "COLLISIOND_PORT_FILE", ""},
        {"--workers", "COLLISIOND_WORKERS", "auto"},
        {"--min-body-rate", "COLLISIOND_MIN_BODY_RATE", "1K"},
        {"--min-body-grace", "COLLISIOND_MIN_BODY_GRACE", "10"},
        {"--max-http-reply-total", "COLLISIOND_MAX_HTTP_REPLY_TOTAL", "256M"},
    };
    char *argv[] = {"collisiond", "--threads", "0", "--help", NULL}; /* --help wins over a bad value */
    cqd_config c;
    cu_load_args a = {argv, no_env, &c};
    cu_captured out;
    cu_capture(1, cu_run_load, &a, &out);
    ck_assert_int_eq(out.result, CQD_CONFIG_EXIT);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "  %s ", rows[i][0]);
        ck_assert_msg(strstr(out.text, want), "--help lacks %s", rows[i][0]);
        snprintf(want, sizeof want, "env %s, default '%s'", rows[i][1], rows[i][2]);
        ck_assert_msg(strstr(out.text, want), "--help lacks \"%s\"", want);
    }
    ck_assert_ptr_nonnull(strstr(out.text, "  -h, --help "));
    ck_assert_ptr_nonnull(strstr(out.text, "  --version "));
    /* Each default in the help text is accepted back through its variable. */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char var[128];
        snprintf(var, sizeof var, "%s=%s", rows[i][1], rows[i][2]);
        char *env[] = {var, NULL};
        char *plain[] = {"collisiond", NULL};
        ck_assert_msg(cu_load(plain, env, &c) == CQD_CONFIG_RUN, "%s rejected", var);
    }
}
END_TEST

START_TEST(config_version)
{
    char *argv[] = {"collisiond", "--version", NULL};
    cqd_config c;
    cu_load_args a = {argv, no_env, &c};
    cu_captured out;
    cu_capture(1, cu_run_load, &a, &out);
    ck_assert_int_eq(out.result, CQD_CONFIG_EXIT);
    /* The oracle is the VERSION file itself (the suites run from the
       repository's root), not the macro the build made of it. */
    char want[64] = "collisiond ";
    FILE *f = fopen("VERSION", "r");
    ck_assert_msg(f != NULL, "run the suites from the repository's root (VERSION)");
    ck_assert_ptr_nonnull(fgets(want + strlen(want), (int)(sizeof want - strlen(want)), f));
    fclose(f);
    ck_assert_str_eq(out.text, want);
}
END_TEST

/* The handler pool and the body rate (issue 25): auto workers follow
 * --max-inflight wherever it was set, a number is taken as it is, 0 is
 * refused; a rate of 0 switches the check off. */
START_TEST(config_workers_and_body_rate)
{
    cqd_config c = cu_default_config();
    ck_assert_int_eq(cqd_config_workers(&c), 256);
    ck_assert_uint_eq(c.min_body_rate, 1024);
    ck_assert_int_eq(c.min_body_grace_s, 10);
    char *env[] = {"COLLISIOND_MAX_INFLIGHT=40", NULL};
    char *plain[] = {"collisiond", NULL};
    ck_assert_int_eq(cu_load(plain, env, &c), CQD_CONFIG_RUN);
    ck_assert_int_eq(cqd_config_workers(&c), 40);
    char *given[] = {"collisiond", "--workers", "3", "--min-body-rate", "0", "--min-body-grace=0", NULL};
    ck_assert_int_eq(cu_load(given, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_int_eq(cqd_config_workers(&c), 3);
    ck_assert_uint_eq(c.min_body_rate, 0);
    ck_assert_int_eq(c.min_body_grace_s, 0);
    char *zero[] = {"collisiond", "--workers", "0", NULL};
    ck_assert_int_eq(cu_load(zero, no_env, &c), CQD_CONFIG_ERROR);
    char *rate[] = {"collisiond", "--min-body-rate", "2G", NULL};
    ck_assert_int_eq(cu_load(rate, no_env, &c), CQD_CONFIG_ERROR);
}
END_TEST

/* The access-log rows: defaults, each mode through flag and environment,
 * the ranges, and their --help lines (API.md section 9). */
START_TEST(config_access_log)
{
    cqd_config c = cu_default_config();
    ck_assert_int_eq(c.access_log, CQD_ACCESS_SAMPLE);
    ck_assert_int_eq(c.access_log_sample, 1000);
    ck_assert_int_eq(c.slow_request_ms, 16);
    static const struct {
        const char *name;
        cqd_access_mode mode;
    } modes[] = {{"off", CQD_ACCESS_OFF}, {"errors", CQD_ACCESS_ERRORS}, {"sample", CQD_ACCESS_SAMPLE},
                 {"all", CQD_ACCESS_ALL}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char *argv[] = {"collisiond", "--access-log", (char *)modes[i].name, NULL};
        ck_assert_int_eq(cu_load(argv, no_env, &c), CQD_CONFIG_RUN);
        ck_assert_int_eq(c.access_log, modes[i].mode);
        char var[64];
        snprintf(var, sizeof var, "COLLISIOND_ACCESS_LOG=%s", modes[i].name);
        char *env[] = {var, "COLLISIOND_ACCESS_LOG_SAMPLE=7", "COLLISIOND_SLOW_REQUEST=0", NULL};
        char *plain[] = {"collisiond", NULL};
        ck_assert_int_eq(cu_load(plain, env, &c), CQD_CONFIG_RUN);
        ck_assert_int_eq(c.access_log, modes[i].mode);
        ck_assert_int_eq(c.access_log_sample, 7);
        ck_assert_int_eq(c.slow_request_ms, 0);
    }
    char *flags[] = {"collisiond", "--access-log-sample=1", "--slow-request", "3600000", NULL};
    ck_assert_int_eq(cu_load(flags, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_int_eq(c.access_log_sample, 1);
    ck_assert_int_eq(c.slow_request_ms, 3600000);

    static const char *bad[][2] = {
        {"--access-log", "some"},       {"--access-log", "ALL"},          {"--access-log", ""},
        {"--access-log-sample", "0"},   {"--access-log-sample", "-3"},    {"--access-log-sample", "1000000001"},
        {"--slow-request", "-1"},       {"--slow-request", "3600001"},    {"--slow-request", "1.5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"collisiond", (char *)bad[i][0], (char *)bad[i][1], NULL};
        cu_captured err;
        ck_assert_msg(cu_load_err(argv, no_env, &c, &err) == CQD_CONFIG_ERROR, "%s %s accepted", bad[i][0],
                      bad[i][1]);
        ck_assert_msg(strstr(err.text, bad[i][0]), "message '%s' does not name %s", err.text, bad[i][0]);
    }

    char *help[] = {"collisiond", "--help", NULL};
    cu_load_args a = {help, no_env, &c};
    cu_captured out;
    cu_capture(1, cu_run_load, &a, &out);
    ck_assert_ptr_nonnull(strstr(out.text, "  --access-log off|errors|sample|all "));
    ck_assert_ptr_nonnull(strstr(out.text, "env COLLISIOND_ACCESS_LOG, default 'sample'"));
    ck_assert_ptr_nonnull(strstr(out.text, "  --access-log-sample N "));
    ck_assert_ptr_nonnull(strstr(out.text, "env COLLISIOND_ACCESS_LOG_SAMPLE, default '1000'"));
    ck_assert_ptr_nonnull(strstr(out.text, "  --slow-request MS "));
    ck_assert_ptr_nonnull(strstr(out.text, "env COLLISIOND_SLOW_REQUEST, default '16'"));
}
END_TEST

/* Help printed for argv, which must exit 0. */
static void help_of(char **argv, cu_captured *out)
{
    cqd_config c;
    cu_load_args a = {argv, no_env, &c};
    cu_capture(1, cu_run_load, &a, out);
    ck_assert_int_eq(out->result, CQD_CONFIG_EXIT);
}

START_TEST(config_help_short_form_and_usage)
{
    static cu_captured longer, shorter;
    char *a1[] = {"collisiond", "--help", NULL};
    char *a2[] = {"collisiond", "--threads", "0", "-h", NULL}; /* -h wins over a bad value, as --help does */
    help_of(a1, &longer);
    help_of(a2, &shorter);
    ck_assert_str_eq(shorter.text, longer.text);
    /* After a flag that takes a value, "-h" is that value. */
    char *a3[] = {"collisiond", "--token", "-h", NULL};
    cqd_config c;
    cu_captured err;
    ck_assert_int_eq(cu_load_err(a3, no_env, &c, &err), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "-h");
    /* The usage names the daemon and both subcommands, one line each. */
    static const char *const usage[] = {"Usage: collisiond [OPTIONS] ", "\n       collisiond inspect [OPTIONS] ",
                                        "\n       collisiond replay FILE --against URL "};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++)
        ck_assert_msg(strstr(longer.text, usage[i]), "the usage lacks \"%s\"", usage[i]);
    /* -h takes no value and is no prefix of anything. */
    char *bad1[] = {"collisiond", "-h=1", NULL};
    char *bad2[] = {"collisiond", "-hh", NULL};
    ck_assert_int_eq(cu_load_err(bad1, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_int_eq(cu_load_err(bad2, no_env, &c, &err), CQD_CONFIG_ERROR);
}
END_TEST

/* A default "NUMBER[KMG]" with a number of digits only and no leading zero. */
static int is_suffix_form(const char *text, size_t n)
{
    if (n < 2 || text[0] < '1' || text[0] > '9' || !strchr("KMG", text[n - 1]))
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (text[i] < '0' || text[i] > '9')
            return 0;
    return 1;
}

/* Every BYTES row of --help shows its default in the suffix form, and the
 * byte counts read back are the documented ones (the hand-written oracle:
 * K, M and G are powers of 1024). */
START_TEST(config_byte_sizes_one_form)
{
    static cu_captured out;
    char *argv[] = {"collisiond", "--help", NULL};
    help_of(argv, &out);
    int rows = 0;
    for (const char *p = strstr(out.text, " BYTES "); p; p = strstr(p + 1, " BYTES ")) {
        const char *def = strstr(p, "default '");
        ck_assert_ptr_nonnull(def);
        def += strlen("default '");
        size_t n = strcspn(def, "'");
        ck_assert_msg(is_suffix_form(def, n), "byte default '%.*s' is not in the K/M/G form", (int)n, def);
        rows++;
    }
    /* snapshot-every, max-body, max-buffered, max-request-memory, max-response,
     * max-http-reply-total, max-stream-reply-buffered, max-stream-reply-total,
     * min-body-rate */
    ck_assert_int_eq(rows, 9);
    static const struct {
        const char *text;
        long long bytes;
    } sizes[] = {{"7", 7}, {"1k", 1024}, {"3K", 3072}, {"5m", 5LL << 20}, {"64M", 67108864LL}, {"2G", 2LL << 30},
                 {"1024G", 1LL << 40}, {"0", 0}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *a[] = {"collisiond", "--snapshot-every", (char *)sizes[i].text, NULL};
        cqd_config c;
        ck_assert_int_eq(cu_load(a, no_env, &c), CQD_CONFIG_RUN);
        ck_assert_int_eq(c.snapshot_every, sizes[i].bytes);
    }
    /* --max-response: 64 MiB by default, never below 1 MiB (the largest
     * document the daemon serves of its own must fit). */
    char *none[] = {"collisiond", NULL}, *small[] = {"collisiond", "--max-response", "1023K", NULL};
    cqd_config c;
    ck_assert_int_eq(cu_load(none, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_uint_eq(c.max_response, 64u << 20);
    static cu_captured err;
    ck_assert_int_eq(cu_load_err(small, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "max-response"));
}
END_TEST

/* A byte range error prints its bounds the way the defaults are shown. */
START_TEST(config_byte_range_messages)
{
    static const struct {
        const char *flag, *value, *bounds;
    } bad[] = {
        {"--max-request-memory", "512K", "[1M, 1024G]"},
        {"--max-request-memory", "1048575", "[1M, 1024G]"},
        {"--max-body", "2000G", "[1, 1024G]"},
        {"--max-buffered", "0", "[1, 1024G]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"collisiond", (char *)bad[i].flag, (char *)bad[i].value, NULL};
        cqd_config c;
        cu_captured err;
        ck_assert_int_eq(cu_load_err(argv, no_env, &c, &err), CQD_CONFIG_ERROR);
        ck_assert_msg(strstr(err.text, bad[i].bounds) && strstr(err.text, bad[i].flag), "%s %s: '%s'",
                      bad[i].flag, bad[i].value, err.text);
    }
    char *edge[] = {"collisiond", "--max-request-memory", "1M", "--max-body", "1024G", NULL};
    cqd_config c;
    ck_assert_int_eq(cu_load(edge, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_uint_eq(c.max_request_memory, 1u << 20);
}
END_TEST

/* A temporary file holding text; its path in path (size 64). */
static void temp_file(const char *text, size_t n, char *path)
{
    snprintf(path, 64, "/tmp/check-config-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

START_TEST(config_token_file_reads_the_first_line)
{
    static const struct {
        const char *content, *token;
    } ok[] = {
        {"s3cret\n", "s3cret"},
        {"s3cret", "s3cret"},
        {"s3cret \t\r\n", "s3cret"},
        {"first line\nsecond\n", "first line"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char path[64];
        temp_file(ok[i].content, strlen(ok[i].content), path);
        char *argv[] = {"collisiond", "--token-file", path, NULL};
        cqd_config c;
        ck_assert_int_eq(cu_load(argv, no_env, &c), CQD_CONFIG_RUN);
        ck_assert_str_eq(c.token, ok[i].token);
        char var[96];
        snprintf(var, sizeof var, "COLLISIOND_TOKEN_FILE=%s", path);
        char *env[] = {var, NULL};
        char *plain[] = {"collisiond", NULL};
        ck_assert_int_eq(cu_load(plain, env, &c), CQD_CONFIG_RUN);
        ck_assert_str_eq(c.token, ok[i].token);
        unlink(path);
    }
    /* The longest token the field holds (255 characters) and one more. */
    char line[258], path[64];
    memset(line, 'x', 255);
    line[255] = '\n';
    temp_file(line, 256, path);
    char *argv[] = {"collisiond", "--token-file", path, NULL};
    cqd_config c;
    ck_assert_int_eq(cu_load(argv, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_uint_eq(strlen(c.token), 255);
    unlink(path);
    line[255] = 'x';
    line[256] = '\n';
    temp_file(line, 257, path);
    cu_captured err;
    ck_assert_int_eq(cu_load_err(argv, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "longer than 255"));
    unlink(path);
}
END_TEST

START_TEST(config_token_file_errors)
{
    char empty[64], blank[64];
    temp_file("", 0, empty);
    temp_file(" \n\nsecond\n", 10, blank);
    /* Each case: the file, and what the message must name besides it. */
    static const char *const missing = "/nonexistent/token";
    const struct {
        const char *path, *named;
    } bad[] = {
        {empty, "empty"},
        {blank, "empty"},
        {missing, "No such file or directory"},
        {"/tmp", "Is a directory"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"collisiond", "--token-file", (char *)bad[i].path, NULL};
        cqd_config c;
        cu_captured err;
        ck_assert_int_eq(cu_load_err(argv, no_env, &c, &err), CQD_CONFIG_ERROR);
        ck_assert_msg(strstr(err.text, "--token-file") && strstr(err.text, bad[i].path) &&
                          strstr(err.text, bad[i].named),
                      "%s: '%s'", bad[i].path, err.text);
    }
    unlink(empty);
    unlink(blank);
}
END_TEST

/* --token and --token-file are one setting: both at one level is an error
 * naming both; across levels the flag wins. */
START_TEST(config_token_sources)
{
    char path[64], var[96];
    temp_file("from-file\n", 10, path);
    snprintf(var, sizeof var, "COLLISIOND_TOKEN_FILE=%s", path);
    cqd_config c;
    cu_captured err;
    char *both_flags[] = {"collisiond", "--token=t", "--token-file", path, NULL};
    ck_assert_int_eq(cu_load_err(both_flags, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "--token and --token-file"));
    ck_assert_ptr_null(strstr(err.text, "--token=t")); /* the token itself is not repeated */
    char *env_both[] = {"COLLISIOND_TOKEN=t", var, NULL};
    char *plain[] = {"collisiond", NULL};
    ck_assert_int_eq(cu_load_err(plain, env_both, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "COLLISIOND_TOKEN and COLLISIOND_TOKEN_FILE"));

    char *env_token[] = {"COLLISIOND_TOKEN=from-env", NULL};
    char *file_flag[] = {"collisiond", "--token-file", path, NULL};
    ck_assert_int_eq(cu_load(file_flag, env_token, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-file");
    char *env_file[] = {var, NULL};
    char *token_flag[] = {"collisiond", "--token", "from-flag", NULL};
    ck_assert_int_eq(cu_load(token_flag, env_file, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-flag");
    /* An empty value is none: it conflicts with nothing. */
    char *empty_token[] = {"collisiond", "--token=", "--token-file", path, NULL};
    ck_assert_int_eq(cu_load(empty_token, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-file");
    /* A later empty --token-file does not take back an earlier file. */
    char *taken_back[] = {"collisiond", "--token", "t", "--token-file", path, "--token-file=", NULL};
    ck_assert_int_eq(cu_load_err(taken_back, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "--token and --token-file"));
    /* ... nor takes back the file's token, in either order (an empty flag
     * after the file used to turn authentication off). */
    char *file_then_empty[] = {"collisiond", "--token-file", path, "--token=", NULL};
    ck_assert_int_eq(cu_load(file_then_empty, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-file");
    char *empty_flag_env[] = {"COLLISIOND_TOKEN=from-env", NULL};
    char *only_empty[] = {"collisiond", "--token=", NULL};
    ck_assert_int_eq(cu_load(only_empty, empty_flag_env, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-env");
    char *env_empty[] = {"COLLISIOND_TOKEN_FILE=", "COLLISIOND_TOKEN=from-env", NULL};
    ck_assert_int_eq(cu_load(plain, env_empty, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-env");
    unlink(path);
}
END_TEST

/* A token value given, all of them empty: start-up says authentication is
 * off; without any token value it says nothing. */
START_TEST(config_token_empty_warns)
{
    cqd_config c;
    cu_captured err;
    char *empty_flag[] = {"collisiond", "--token=", NULL};
    ck_assert_int_eq(cu_load_err(empty_flag, no_env, &c, &err), CQD_CONFIG_RUN);
    ck_assert_ptr_nonnull(strstr(err.text, "authentication is off"));
    char *empty_env[] = {"COLLISIOND_TOKEN_FILE=", NULL};
    char *plain[] = {"collisiond", NULL};
    ck_assert_int_eq(cu_load_err(plain, empty_env, &c, &err), CQD_CONFIG_RUN);
    ck_assert_ptr_nonnull(strstr(err.text, "authentication is off"));
    ck_assert_int_eq(cu_load_err(plain, no_env, &c, &err), CQD_CONFIG_RUN);
    ck_assert_str_eq(err.text, "");
    char *env_token[] = {"COLLISIOND_TOKEN=t", NULL};
    ck_assert_int_eq(cu_load_err(empty_flag, env_token, &c, &err), CQD_CONFIG_RUN);
    ck_assert_str_eq(err.text, "");
}
END_TEST

/* A flag of either form wins over both variables: a variable it
 * overrides is not read (a missing file) nor judged (a conflict). */
START_TEST(config_token_flag_hides_variables)
{
    char path[64];
    temp_file("from-file\n", 10, path);
    cqd_config c;
    char *missing_file[] = {"COLLISIOND_TOKEN_FILE=/nonexistent/token", NULL};
    char *token_flag[] = {"collisiond", "--token", "X", NULL};
    ck_assert_int_eq(cu_load(token_flag, missing_file, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "X");
    char *file_flag[] = {"collisiond", "--token-file", path, NULL};
    ck_assert_int_eq(cu_load(file_flag, missing_file, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "from-file");
    char *env_both[] = {"COLLISIOND_TOKEN=t", "COLLISIOND_TOKEN_FILE=/nonexistent/token", NULL};
    ck_assert_int_eq(cu_load(token_flag, env_both, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "X");
    /* An empty flag overrides nothing: the variable is read as ever. */
    char *empty_flag[] = {"collisiond", "--token=", NULL};
    cu_captured err;
    ck_assert_int_eq(cu_load_err(empty_flag, missing_file, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "/nonexistent/token"));
    unlink(path);
}
END_TEST

/* The first line is read whole, then checked: a byte no header can carry
 * is refused (a NUL used to cut the token short), trailing white space
 * is cut before the length is judged. */
START_TEST(config_token_file_bytes)
{
    static const struct {
        const char *content;
        size_t len;
    } bad[] = {
        {"a\0SECRET\n", 9},
        {"a\tb\n", 4},
        {"a\x1b[0mb\n", 7},
        {"ab\x7f\n", 4},
        {"\0\n", 2},
    };
    cqd_config c;
    cu_captured err;
    char path[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        temp_file(bad[i].content, bad[i].len, path);
        char *argv[] = {"collisiond", "--token-file", path, NULL};
        ck_assert_int_eq(cu_load_err(argv, no_env, &c, &err), CQD_CONFIG_ERROR);
        ck_assert_msg(strstr(err.text, path) && strstr(err.text, "control character"), "case %zu: '%s'", i,
                      err.text);
        unlink(path);
    }
    /* A token, then 2000 spaces: the token. */
    static char line[8200];
    memset(line, ' ', sizeof line);
    memcpy(line, "tok", 3);
    line[2003] = '\n';
    temp_file(line, 2004, path);
    char *argv[] = {"collisiond", "--token-file", path, NULL};
    ck_assert_int_eq(cu_load(argv, no_env, &c), CQD_CONFIG_RUN);
    ck_assert_str_eq(c.token, "tok");
    unlink(path);
    /* A first line past the bound is refused however it ends. */
    line[2003] = ' ';
    line[8199] = '\n';
    temp_file(line, sizeof line, path);
    ck_assert_int_eq(cu_load_err(argv, no_env, &c, &err), CQD_CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err.text, "longer than"));
    unlink(path);
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, config_defaults);
    tcase_add_test(tc, config_workers_and_body_rate);
    tcase_add_test(tc, config_precedence);
    tcase_add_test(tc, config_values);
    tcase_add_test(tc, config_rejects);
    tcase_add_test(tc, config_rejects_env_and_syntax);
    tcase_add_test(tc, config_help_lists_every_row);
    tcase_add_test(tc, config_version);
    tcase_add_test(tc, config_access_log);
    tcase_add_test(tc, config_help_short_form_and_usage);
    tcase_add_test(tc, config_byte_sizes_one_form);
    tcase_add_test(tc, config_byte_range_messages);
    tcase_add_test(tc, config_token_file_reads_the_first_line);
    tcase_add_test(tc, config_token_file_errors);
    tcase_add_test(tc, config_token_sources);
    tcase_add_test(tc, config_token_flag_hides_variables);
    tcase_add_test(tc, config_token_empty_warns);
    tcase_add_test(tc, config_token_file_bytes);
    suite_add_tcase(s, tc);
    return s;
}
