/* The daemon's CPU time, read from outside. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tick.h"

/* utime + stime of /proc/PID/stat: every thread's, in clock ticks. */
static double stat_seconds(pid_t pid)
{
    char path[64], text[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    /* The name in parentheses may hold spaces: count fields after its ')'. */
    const char *at = strrchr(text, ')');
    unsigned long long utime, stime;
    if (!at || sscanf(at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* The same total from the kernel's per-process CPU clock, in nanoseconds:
 * at 100 ticks a second, /proc's figure is too coarse for a short run. */
static double clock_seconds(pid_t pid)
{
    clockid_t id;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &id) != 0 || clock_gettime(id, &ts) != 0)
        return -1;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tk_cpu tk_cpu_sample(pid_t pid)
{
    return (tk_cpu){stat_seconds(pid), clock_seconds(pid)};
}
