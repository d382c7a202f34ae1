/* The journal's metrics (metrics.h: cqd_io_observe and the journal
 * families of the exposition, fed by store_journal.c). Oracles: durations
 * chosen on and beside the bucket bounds, counted by hand against the
 * bounds API.md lists (written out here in seconds); concurrent observers
 * whose total is known; and a real store on a scratch directory, whose
 * byte counter must equal the journal files' growth by stat(2), with one
 * write per record, one fdatasync per wait under --fsync always, and none
 * of either for a failpoint's simulated I/O error. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_util.h"
#include "ops/metrics.h"
#include "prom_oracle.h"
#include "state/server.h"
#include "store/store.h"

Suite *metrics_journal_suite(void);

/* API.md section 12: 1, 2.5, 5 µs ... 1 s, 2.5 s, then +Inf. */
static const double io_le[] = {1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
                               5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1.0, 2.5, INFINITY};
#define IO_LE (sizeof io_le / sizeof io_le[0])

static const char write_h[] = "collisiond_journal_write_seconds", fsync_h[] = "collisiond_journal_fsync_seconds",
                  bytes_c[] = "collisiond_journal_bytes_total";

static void scrape(cqd_server *srv, prom *p)
{
    cqp_buf out = {0};
    cqd_metrics_render(srv, &out);
    ck_assert(!out.oom);
    int rc = prom_parse(p, out.data);
    ck_assert_msg(rc == 0, "parse: %s", p->error);
    rc = prom_check(p);
    ck_assert_msg(rc == 0, "rules: %s", p->error);
    cqp_buf_free(&out);
}

static double count_of(const prom *p, const char *hist)
{
    char name[96];
    snprintf(name, sizeof name, "%s_count", hist);
    return prom_value(p, name, "");
}

static double sum_of(const prom *p, const char *hist)
{
    char name[96];
    snprintf(name, sizeof name, "%s_sum", hist);
    return prom_value(p, name, "");
}

static void server_up(cqd_server *srv, const char *dir, cqd_fsync fsync)
{
    cqd_config cfg = cu_default_config();
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", dir);
    cfg.fsync = fsync;
    cfg.snapshot_every = 0;
    ck_assert_int_eq(cqd_server_init(srv, &cfg), 0);
    srv->log.fd = -1;
}

START_TEST(io_buckets_by_hand)
{
    cqd_server srv;
    server_up(&srv, "", CQD_FSYNC_NO);
    prom p;
    scrape(&srv, &p);
    ck_assert_str_eq(prom_family_of(&p, write_h)->type, "histogram");
    ck_assert_str_eq(prom_family_of(&p, fsync_h)->type, "histogram");
    ck_assert_str_eq(prom_family_of(&p, bytes_c)->type, "counter");
    ck_assert_double_eq(count_of(&p, write_h), 0);
    ck_assert_double_eq(prom_value(&p, bytes_c, ""), 0);
    prom_free(&p);

    /* on the first bound, past it, on the last bound, past that */
    const uint64_t ns[] = {0, 1000, 1001, 2500000000u, 2500000001u};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        cqd_io_observe(&srv.journal.write, ns[i]);
    cqd_io_observe(&srv.journal.fsync, 5000000); /* exactly 5 ms */
    atomic_fetch_add(&srv.journal.bytes, 12345);
    scrape(&srv, &p);
    for (size_t b = 0; b < IO_LE; b++) {
        double le = io_le[b];
        double want = 2 + (le >= 2.5e-6) + (le >= 2.5) + isinf(le);
        ck_assert_msg(prom_bucket(&p, write_h, "", le) == want, "write le %g: %g, want %g", le,
                      prom_bucket(&p, write_h, "", le), want);
        ck_assert_msg(prom_bucket(&p, fsync_h, "", le) == (le >= 5e-3), "fsync le %g", le);
    }
    ck_assert_double_eq(count_of(&p, write_h), 5);
    ck_assert_double_eq_tol(sum_of(&p, write_h), 5.000002002, 1e-12);
    ck_assert_double_eq(count_of(&p, fsync_h), 1);
    ck_assert_double_eq_tol(sum_of(&p, fsync_h), 0.005, 1e-15);
    ck_assert_double_eq(prom_value(&p, bytes_c, ""), 12345);
    prom_free(&p);
    cqd_server_destroy(&srv);
}
END_TEST

#define OBSERVERS 4
#define OBSERVATIONS 50000

static void *observer(void *arg)
{
    cqd_io_histogram *h = arg;
    for (int i = 0; i < OBSERVATIONS; i++)
        cqd_io_observe(h, 3000);
    return NULL;
}

/* The store's thread and every request thread add to the same histogram. */
START_TEST(concurrent_observers_lose_nothing)
{
    cqd_server srv;
    server_up(&srv, "", CQD_FSYNC_NO);
    pthread_t t[OBSERVERS];
    for (int i = 0; i < OBSERVERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, observer, &srv.journal.fsync), 0);
    for (int i = 0; i < OBSERVERS; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    prom p;
    scrape(&srv, &p);
    double n = OBSERVERS * OBSERVATIONS;
    ck_assert_double_eq(count_of(&p, fsync_h), n);
    ck_assert_double_eq(prom_bucket(&p, fsync_h, "", 2.5e-6), 0);
    ck_assert_double_eq(prom_bucket(&p, fsync_h, "", 5e-6), n);
    ck_assert_double_eq_tol(sum_of(&p, fsync_h), n * 3e-6, 1e-9);
    prom_free(&p);
    cqd_server_destroy(&srv);
}
END_TEST

/* Bytes of the journal files in dir, by stat(2). */
static long long journal_size(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    long long total = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, "journal-", 8) != 0)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        total += st.st_size;
    }
    closedir(d);
    return total;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ck_assert_int_eq(unlink(path), 0);
    }
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
}

static uint64_t load(_Atomic uint64_t *v) { return atomic_load(v); }

static uint64_t io_count(cqd_io_histogram *h)
{
    uint64_t n = 0;
    for (int b = 0; b < CQD_IO_BUCKETS; b++)
        n += load(&h->bucket[b]);
    return n;
}

START_TEST(a_store_counts_its_journal)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/check_metrics_journal.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    cqd_server srv;
    server_up(&srv, dir, CQD_FSYNC_ALWAYS);
    srv.store = cqd_store_open(&srv);
    ck_assert_ptr_nonnull(srv.store);
    ck_assert_int_eq(cqd_store_recover(srv.store), 0);
    long long size0 = journal_size(dir);
    uint64_t bytes0 = load(&srv.journal.bytes), writes0 = io_count(&srv.journal.write),
             syncs0 = io_count(&srv.journal.fsync);

    static const char *const bodies[] = {"{}", "{\"shapes\":[]}", ""};
    char why[160];
    for (int i = 0; i < 3; i++) {
        uint64_t seq = 0;
        ck_assert_int_eq(cqd_store_append(srv.store, "PUT", "/v1/worlds/a", bodies[i], strlen(bodies[i]), CQP_JSON,
                                          &seq, why, sizeof why), 0);
        ck_assert_int_eq(cqd_store_wait(srv.store, seq, why, sizeof why), 0);
    }
    long long grown = journal_size(dir) - size0;
    ck_assert_int_gt(grown, 0);
    ck_assert_uint_eq(load(&srv.journal.bytes) - bytes0, (uint64_t)grown);
    ck_assert_uint_eq(io_count(&srv.journal.write) - writes0, 3);
    ck_assert_uint_eq(io_count(&srv.journal.fsync) - syncs0, 3); /* one after another: one sync each */

    /* a simulated write error touched no disk: neither timed nor counted */
    ck_assert_int_eq(cqd_failpoint_init(&srv.fp, "journal_write"), 0);
    uint64_t seq = 0;
    ck_assert_int_eq(cqd_store_append(srv.store, "PUT", "/v1/worlds/b", "{}", 2, CQP_JSON, &seq, why, sizeof why),
                     -1);
    ck_assert_uint_eq(io_count(&srv.journal.write) - writes0, 3);
    ck_assert_uint_eq(load(&srv.journal.bytes) - bytes0, (uint64_t)grown);
    ck_assert_int_eq(journal_size(dir) - size0, grown);

    cqd_store_close(srv.store, false);
    srv.store = NULL;
    cqd_server_destroy(&srv);
    remove_dir(dir);
}
END_TEST

Suite *metrics_journal_suite(void)
{
    Suite *s = suite_create("metrics_journal");
    TCase *tc = tcase_create("journal");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, io_buckets_by_hand);
    tcase_add_test(tc, concurrent_observers_lose_nothing);
    tcase_add_test(tc, a_store_counts_its_journal);
    suite_add_tcase(s, tc);
    return s;
}
