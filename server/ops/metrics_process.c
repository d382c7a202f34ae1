/// @file server/ops/metrics_process.c
/// The process_* figures from /proc/self/stat, /proc/stat (boot time),
/// /proc/self/fd and the descriptor limit, converted to seconds and bytes
/// as client_golang's process collector converts them.
#include "metrics_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Fields 4 (ppid) to 24 (rss) of a stat line, the ones after the state. */
enum { FIRST_FIELD = 4, LAST_FIELD = 24 };

int cqd_proc_parse_stat(const char *text, cqd_proc_stat *out)
{
    /* The command name is the one field that may hold anything, ") " too,
     * and the kernel writes no ')' after it: the last one closes it. */
    const char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || p[2] == '\0' || p[2] == ' ')
        return -1;
    p += 3;
    uint64_t f[LAST_FIELD - FIRST_FIELD + 1];
    for (int i = 0; i <= LAST_FIELD - FIRST_FIELD; i++) {
        char *end;
        errno = 0;
        /* A few fields are signed (priority, nice); none of those is used. */
        f[i] = strtoull(p, &end, 10);
        if (end == p || errno == ERANGE || (*end != ' ' && *end != '\n' && *end != '\0'))
            return -1;
        p = end;
    }
    out->utime = f[14 - FIRST_FIELD];
    out->stime = f[15 - FIRST_FIELD];
    out->starttime = f[22 - FIRST_FIELD];
    out->vsize = f[23 - FIRST_FIELD];
    out->rss = f[24 - FIRST_FIELD];
    return 0;
}

/* The whole of a small file, NUL-terminated, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t got;
    while (n + 1 < size && (got = read(fd, buf + n, size - 1 - n)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            close(fd);
            return -1;
        }
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The "btime" line of /proc/stat: boot time in Unix seconds. The lines
 * before it (intr) can be longer than the buffer on a large machine, so a
 * line is matched only where one starts. */
static int boot_time(double *out)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    char line[256];
    int found = -1;
    for (bool at_start = true; found < 0 && fgets(line, sizeof line, f); at_start = strchr(line, '\n') != NULL)
        if (at_start && strncmp(line, "btime ", 6) == 0) {
            char *end;
            *out = strtod(line + 6, &end);
            found = end > line + 6 ? 0 : -1;
        }
    fclose(f);
    return found;
}

/* Entries of /proc/self/fd, less the descriptor that lists them. */
static int open_fds(uint64_t *out)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    uint64_t n = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    *out = n > 0 ? n - 1 : 0;
    return 0;
}

/* The figures /proc/self/stat gives, and the start time from it and the boot time. */
static void read_stat(cqd_process *out)
{
    char text[1024];
    cqd_proc_stat st;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    if (ticks <= 0 || page <= 0 || read_small("/proc/self/stat", text, sizeof text) < 0 ||
        cqd_proc_parse_stat(text, &st) < 0)
        return;
    out->has_stat = true;
    out->cpu_seconds = (double)(st.utime + st.stime) / (double)ticks;
    out->virtual_bytes = st.vsize;
    out->resident_bytes = st.rss * (uint64_t)page;
    double boot;
    if (boot_time(&boot) == 0) {
        out->has_start = true;
        out->start_time = boot + (double)st.starttime / (double)ticks;
    }
}

void cqd_process_read(cqd_process *out)
{
    memset(out, 0, sizeof *out);
    read_stat(out);
    out->has_fds = open_fds(&out->open_fds) == 0;
    /* The soft limit, which /proc/self/limits shows as "Max open files";
     * the system call gives it without parsing text. */
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
        out->has_max_fds = true;
        out->max_fds = (uint64_t)lim.rlim_cur;
    }
}
