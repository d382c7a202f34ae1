/* libcqc's check runner (build/check_cqc): a real daemon on ephemeral
 * ports, a counting allocator, and the suites. */
#ifndef CQC_TEST_HELPERS_H
#define CQC_TEST_HELPERS_H

#include <check.h>
#include <stddef.h>
#include <sys/types.h>

#include "cqc.h"

/* A collisiond started on 127.0.0.1:0 with --data-dir ''. */
typedef struct th_daemon {
    pid_t pid;
    int http_port, stream_port;
    char dir[64];
} th_daemon;

/* Starts $CQC_DAEMON (default build/collisiond) with extra flags (NULL-ended). */
void th_start(th_daemon *d, const char *const *flags);
void th_stop(th_daemon *d);

/* The counting allocator, installed for the whole run: bytes and blocks
 * live, allocations made, and the most bytes ever live at once. */
extern size_t th_live_bytes, th_live_blocks, th_allocs, th_peak_bytes;
/* When >= 0: the allocations that succeed before every later one fails. */
extern long th_fail_after;
void th_install_allocator(void);

/* A connection to d's stream port in the given encoding (fails the test
 * when it cannot connect). */
cqc_conn *th_connect(const th_daemon *d, cqc_encoding e, const char *token);

Suite *cqc_calls_suite(void);
Suite *cqc_ring_suite(void);
Suite *cqc_hostile_suite(void);

#endif
