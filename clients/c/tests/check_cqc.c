/* build/check_cqc: libcqc's suites, against a real daemon and a fake one. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "helpers.h"

size_t th_live_bytes, th_live_blocks, th_allocs, th_peak_bytes;
long th_fail_after = -1;

/* Each block carries its size in front, so a free knows what it returns. */
static void *count_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    size_t *h = p ? (size_t *)p - 2 : NULL;
    if (h) {
        th_live_bytes -= h[0];
        th_live_blocks--;
    }
    if (n == 0) {
        free(h);
        return NULL;
    }
    size_t *q = th_fail_after == 0 ? NULL : realloc(h, n + 2 * sizeof(size_t));
    if (th_fail_after > 0)
        th_fail_after--;
    if (!q) {
        if (h) {
            th_live_bytes += h[0];
            th_live_blocks++;
        }
        return NULL;
    }
    q[0] = n;
    th_live_bytes += n;
    if (th_live_bytes > th_peak_bytes)
        th_peak_bytes = th_live_bytes;
    th_live_blocks++;
    th_allocs++;
    return q + 2;
}

void th_install_allocator(void)
{
    cqc_set_allocator(count_realloc, NULL);
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

void th_start(th_daemon *d, const char *const *flags)
{
    const char *bin = getenv("CQC_DAEMON") ? getenv("CQC_DAEMON") : "build/collisiond";
    snprintf(d->dir, sizeof d->dir, "/tmp/cqc-check-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d->dir));
    char ports[96];
    snprintf(ports, sizeof ports, "%s/ports", d->dir);
    const char *argv[32] = {bin, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", "--port-file", ports,
                            "--data-dir", "", "--threads", "2", "--log-level", "error", "--access-log", "off"};
    int n = 15;
    for (int i = 0; flags && flags[i] && n < 31; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    d->pid = fork();
    ck_assert_int_ge(d->pid, 0);
    if (d->pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(ports, "r");
        if (f) {
            int k = fscanf(f, "%d %d", &d->http_port, &d->stream_port);
            fclose(f);
            if (k == 2 && d->stream_port > 0)
                return;
        }
        ck_assert_msg(waitpid(d->pid, NULL, WNOHANG) == 0, "%s exited at start-up", bin);
        sleep_ms(10);
    }
    ck_abort_msg("%s wrote no port file", bin);
}

void th_stop(th_daemon *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, NULL, 0);
    }
    char ports[96];
    snprintf(ports, sizeof ports, "%s/ports", d->dir);
    unlink(ports);
    rmdir(d->dir);
    d->pid = 0;
}

cqc_conn *th_connect(const th_daemon *d, cqc_encoding e, const char *token)
{
    cqc_options o;
    cqc_options_init(&o);
    o.port = (uint16_t)d->stream_port;
    o.encoding = e;
    o.token = token;
    cqc_conn *c;
    cqc_status s = cqc_connect(&o, &c);
    ck_assert_msg(s == CQC_OK, "connect: %s", cqc_strerror(s));
    return c;
}

int main(void)
{
    th_install_allocator();
    SRunner *sr = srunner_create(cqc_calls_suite());
    srunner_add_suite(sr, cqc_ring_suite());
    srunner_add_suite(sr, cqc_hostile_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
