/// @file server/ops/log.h
/// Structured logs: one JSON object per line on stderr with "time",
/// "level" and "msg", plus the request fields when given. The level (for
/// plain lines) or the access policy (for request lines) is checked before
/// anything is formatted; a line is written with one write(2) so lines
/// from different threads never interleave.
#ifndef CQD_LOG_H
#define CQD_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/// The logger: a level threshold and a file descriptor (2 by default).
typedef struct cqd_logger {
    cqd_log_level level;
    int fd;
} cqd_logger;

/// True when a line at level would be written (check before costly work).
static inline bool cqd_log_enabled(const cqd_logger *lg, cqd_log_level level) { return level <= lg->level; }

/// A plain line: {"time","level","msg"}.
void cqd_log(const cqd_logger *lg, cqd_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/// Which finished requests get an access line (--access-log,
/// --access-log-sample, --slow-request). Shared by every request thread.
typedef struct cqd_access {
    cqd_access_mode mode;
    uint64_t slow_ns;          ///< a request taking at least this long is slow
    unsigned long long sample; ///< sample mode logs 1 in this many ordinary requests
    /// Ordinary requests seen in sample mode: one counter for all threads
    /// (a relaxed fetch-add, no lock), so 1 in N holds however the
    /// requests spread over the threads.
    _Atomic unsigned long long ordinary;
} cqd_access;

/// Sets the policy: mode, 1 in sample (>= 1), slow from slow_ms milliseconds.
void cqd_access_init(cqd_access *a, cqd_access_mode mode, int sample, int slow_ms);

/// True when a finished request gets an access line. Off: never; all:
/// always. Errors and sample: a slow request, or one an operator acts on
/// (401, 413, 422, 5xx), on any route; sample adds the 1st, (N+1)th,
/// (2N+1)th... of the others ("ordinary"), except on quiet routes (probes
/// and scrapes), which are never sampled. No lock and nothing formatted.
bool cqd_access_wanted(cqd_access *a, bool quiet, int status, uint64_t duration_ns);

/// The access line of one request: {"time","level":"info","msg":"request",
/// "request_id","transport","method","route","path","status","duration_us"}.
/// Written whatever the level: cqd_access_wanted decides (API.md section 14).
void cqd_log_request(const cqd_logger *lg, const char *request_id, const char *transport, const char *method,
                     const char *route, const char *path, int status, long long duration_us);

#endif
