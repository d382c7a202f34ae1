/// @file server/log.h
/// Structured logs: one JSON object per line on stderr with "time",
/// "level" and "msg", plus the request fields when given. The level is
/// checked before anything is formatted; a line is written with one
/// write(2) so lines from different threads never interleave.
#ifndef CQD_LOG_H
#define CQD_LOG_H

#include <stdbool.h>

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

/// The access line of one request: {"time","level":"info","msg":"request",
/// "request_id","transport","method","route","path","status","duration_us"}.
void cqd_log_request(const cqd_logger *lg, const char *request_id, const char *transport, const char *method,
                     const char *route, const char *path, int status, long long duration_us);

#endif
