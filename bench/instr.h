/* Instructions retired by this thread in user space, read around a bench
 * loop: a figure the load of a shared host moves far less than time. A C
 * and C++ header (cq-bench and cq-peers). Linux only; elsewhere, or where
 * perf events are not allowed, every reading is -1. */
#ifndef CQ_BENCH_INSTR_H
#define CQ_BENCH_INSTR_H

#if defined(__linux__)
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* syscall(2) is declared only with _DEFAULT_SOURCE, which the strict
 * POSIX build leaves off. */
long syscall(long number, ...);

/* A counter of this thread's user-space instructions, or -1. The caller
 * closes it (close). */
static inline int bench_instr_open(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* The counter's value so far, or -1. */
static inline long long bench_instr_read(int fd)
{
    long long v;
    return fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v ? v : -1;
}
#else
static inline int bench_instr_open(void) { return -1; }
static inline long long bench_instr_read(int fd) { (void)fd; return -1; }
#endif

#endif
