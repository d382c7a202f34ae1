/// @file server/ops/metrics_process.h
/// The figures behind the process_* families every Prometheus exporter
/// has, read from /proc the way the client libraries (client_golang,
/// prometheus_client) read them: CPU time, memory, descriptors, start time.
#ifndef CQD_METRICS_PROCESS_H
#define CQD_METRICS_PROCESS_H

#include <stdbool.h>
#include <stdint.h>

/// The fields of a /proc/PID/stat line the families need, in its units.
typedef struct cqd_proc_stat {
    uint64_t utime, stime; ///< CPU time in user and kernel mode, in clock ticks
    uint64_t starttime;    ///< clock ticks after boot when the process started
    uint64_t vsize;        ///< virtual memory, bytes
    uint64_t rss;          ///< resident set, pages
} cqd_proc_stat;

/// Reads a /proc/PID/stat line (the command name in parentheses may hold
/// anything, spaces and ')' included). Returns 0, or -1 when text is not one.
int cqd_proc_parse_stat(const char *text, cqd_proc_stat *out);

/// This process's figures; each has_* says whether its source could be read
/// (a family whose source could not be read is left out of the exposition).
typedef struct cqd_process {
    bool has_stat;            ///< cpu_seconds, virtual_bytes, resident_bytes
    double cpu_seconds;       ///< user + system
    uint64_t virtual_bytes, resident_bytes;
    bool has_start;
    double start_time;        ///< Unix time
    bool has_fds;
    uint64_t open_fds;
    bool has_max_fds;
    uint64_t max_fds;         ///< the soft limit of RLIMIT_NOFILE
} cqd_process;

/// Reads the figures of the calling process. Safe from any thread.
void cqd_process_read(cqd_process *out);

#endif
