/// @file server/ops/metrics.h
/// Request metrics per thread (counts and latency histograms by method,
/// route and status) and the Prometheus text exposition of everything:
/// requests, the core's counters summed over threads, world gauges (for at
/// most --metrics-worlds worlds), the process, build info.
#ifndef CQD_METRICS_H
#define CQD_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "cqp/write.h"

struct cqd_server;

/// Routes the metrics can hold (the route table's length must fit). A
/// route fixes its method; the requests that matched no route get one row
/// per method of CQD_METHODS after these.
#define CQD_MAX_ROUTES 32
/// The methods an unmatched request is counted under (RFC 9110 and PATCH,
/// case-sensitive as HTTP's are); any other, or none (a stream line refused
/// before its method was read), lands in the last slot ("other"), so a
/// client cannot grow the label's values.
#define CQD_METHODS {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
#define CQD_METHOD_SLOTS 10
/// Rows of the request metrics: the routes, then the unmatched methods.
#define CQD_METRIC_ROWS (CQD_MAX_ROUTES + CQD_METHOD_SLOTS)
/// Status codes tracked one by one; any other lands in the last slot ("other").
#define CQD_STATUS_CODES {200, 201, 204, 301, 400, 401, 404, 405, 409, 413, 422, 429, 500, 503}
#define CQD_STATUS_SLOTS 15
/// Upper bounds of the latency buckets in seconds (the last bucket is +Inf).
#define CQD_LATENCY_BOUNDS {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0}
#define CQD_LATENCY_BUCKETS 14

/// Upper bounds of the journal's time buckets in nanoseconds (the last
/// bucket is +Inf), 1 us to 2.5 s.
#define CQD_IO_BOUNDS_NS                                                                                      \
    {1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,   \
     25000000, 50000000, 100000000, 250000000, 500000000, 1000000000, 2500000000u}
#define CQD_IO_BUCKETS 21

/// A histogram of durations that any thread may add to (zero-initialise).
typedef struct cqd_io_histogram {
    _Atomic uint64_t bucket[CQD_IO_BUCKETS]; ///< not cumulative
    _Atomic uint64_t sum_ns;
} cqd_io_histogram;

/// The journal's disk cost, server-wide, with no world label (the store
/// adds to it, the scrape reads it).
typedef struct cqd_journal_metrics {
    cqd_io_histogram write;  ///< each record's write(2) (writev) to the journal
    cqd_io_histogram fsync;  ///< each fdatasync(2) of the journal
    _Atomic uint64_t bytes;  ///< bytes appended to the journal, records whole
} cqd_journal_metrics;

/// Counts one duration in h. Safe from any number of threads.
void cqd_io_observe(cqd_io_histogram *h, uint64_t duration_ns);

/// The world label of the series that sums the worlds past --metrics-worlds
/// in each per-world gauge: not a valid world name, so no world can own it.
#define CQD_OTHER_WORLDS "(other)"

/// One thread's request metrics (zero-initialise; one writer).
typedef struct cqd_req_metrics {
    _Atomic uint64_t bucket[CQD_METRIC_ROWS][CQD_STATUS_SLOTS][CQD_LATENCY_BUCKETS]; ///< not cumulative
    _Atomic uint64_t sum_ns[CQD_METRIC_ROWS][CQD_STATUS_SLOTS];
} cqd_req_metrics;

/// Counts one request on route with its status and duration; method (NULL
/// or any text) is read only when route is -1 (none matched).
void cqd_metrics_record(cqd_req_metrics *m, int route, const char *method, int status, uint64_t duration_ns);

/// Appends the whole exposition (text/plain; version=0.0.4) to out: the
/// threads' counters are summed under srv->threads_lock, the world gauges
/// read through the registry, the process_* families from /proc. A few
/// allocations per call besides out's growth; out->oom is set when memory
/// ran out (then nothing may be sent).
void cqd_metrics_render(struct cqd_server *srv, cqp_buf *out);

/// Appends s as the text of a label value (without the quotes): backslash,
/// double quote and newline escaped as \\, \" and \n.
void cqd_metrics_escape(cqp_buf *out, const char *s);

#endif
