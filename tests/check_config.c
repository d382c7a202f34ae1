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
    ck_assert_str_eq(c.data_dir, "./var/collisiond");
    ck_assert_int_eq(c.fsync, CQD_FSYNC_EVERYSEC);
    ck_assert_int_eq(c.snapshot_every, 64LL * 1024 * 1024);
    ck_assert_int_eq(c.threads, (int)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_eq(c.max_body, 16u * 1024 * 1024);
    ck_assert_int_eq(c.max_connections, 1024);
    ck_assert_int_eq(c.timeout_s, 30);
    ck_assert_str_eq(c.token, "");
    ck_assert_int_eq(c.log_level, CQD_LOG_INFO);
    ck_assert_int_eq(c.limits.pairs, 100000);
    ck_assert_int_eq(c.limits.rays, 100000);
    ck_assert_int_eq(c.limits.hull_points, 256);
    ck_assert_int_eq(c.limits.mesh_triangles, 1000000);
    ck_assert_int_eq(c.limits.batch_items, 100000);
    ck_assert_int_eq(c.limits.world_capacity, 100000);
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
        {"--data-dir", "COLLISIOND_DATA_DIR", "./var/collisiond"},
        {"--fsync", "COLLISIOND_FSYNC", "everysec"},
        {"--snapshot-every", "COLLISIOND_SNAPSHOT_EVERY", "67108864"},
        {"--threads", "COLLISIOND_THREADS", "auto"},
        {"--max-body", "COLLISIOND_MAX_BODY", "16777216"},
        {"--max-connections", "COLLISIOND_MAX_CONNECTIONS", "1024"},
        {"--timeout", "COLLISIOND_TIMEOUT", "30"},
        {"--token", "COLLISIOND_TOKEN", ""},
        {"--log-level", "COLLISIOND_LOG_LEVEL", "info"},
        {"--max-pairs", "COLLISIOND_MAX_PAIRS", "100000"},
        {"--max-rays", "COLLISIOND_MAX_RAYS", "100000"},
        {"--max-hull-points", "COLLISIOND_MAX_HULL_POINTS", "256"},
        {"--max-mesh-triangles", "COLLISIOND_MAX_MESH_TRIANGLES", "1000000"},
        {"--max-batch", "COLLISIOND_MAX_BATCH", "100000"},
        {"--max-hits", "COLLISIOND_MAX_HITS", "1000000"},
        {"--max-world-capacity", "COLLISIOND_MAX_WORLD_CAPACITY", "100000"},
        {"--port-file", "COLLISIOND_PORT_FILE", ""},
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
    ck_assert_ptr_nonnull(strstr(out.text, "  --help "));
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

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, config_defaults);
    tcase_add_test(tc, config_precedence);
    tcase_add_test(tc, config_values);
    tcase_add_test(tc, config_rejects);
    tcase_add_test(tc, config_rejects_env_and_syntax);
    tcase_add_test(tc, config_help_lists_every_row);
    tcase_add_test(tc, config_version);
    tcase_add_test(tc, config_access_log);
    suite_add_tcase(s, tc);
    return s;
}
