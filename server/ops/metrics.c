/* Request metrics (recorded by each thread into its own slots) and the
 * Prometheus text exposition 0.0.4 of everything, summed at scrape time. */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/router.h"
#include "cq/algorithm.h"
#include "cq/counters.h"
#include "metrics_process.h"
#include "state/alloc.h"
#include "state/registry.h"
#include "state/server.h"
#include "state/thread.h"
#include "store/store.h"

static const int status_codes[CQD_STATUS_SLOTS - 1] = CQD_STATUS_CODES;
static const char *const methods[CQD_METHOD_SLOTS - 1] = CQD_METHODS;
static const double latency_bounds[CQD_LATENCY_BUCKETS - 1] = CQD_LATENCY_BOUNDS;
/* From 1 us to 2.5 s: a write that reaches only the page cache takes a
 * few microseconds, an fdatasync from a tenth of a millisecond (flash) to
 * tens of milliseconds (a disk), and seconds when the device stalls. */
static const uint64_t io_bounds_ns[CQD_IO_BUCKETS - 1] = CQD_IO_BOUNDS_NS;

/* The single writer may use load+store instead of a locked add. */
static void bump(_Atomic uint64_t *v, uint64_t n)
{
    uint64_t old = atomic_load_explicit(v, memory_order_relaxed);
    atomic_store_explicit(v, old + n, memory_order_relaxed);
}

static int status_slot(int status)
{
    for (int i = 0; i < CQD_STATUS_SLOTS - 1; i++)
        if (status_codes[i] == status)
            return i;
    return CQD_STATUS_SLOTS - 1;
}

static int method_slot(const char *method)
{
    for (int i = 0; method && i < CQD_METHOD_SLOTS - 1; i++)
        if (strcmp(methods[i], method) == 0)
            return i;
    return CQD_METHOD_SLOTS - 1;
}

void cqd_metrics_record(cqd_req_metrics *m, int route, const char *method, int status, uint64_t duration_ns)
{
    /* A route's row names its method; an index outside the table would
     * write out of bounds: count it as unmatched. */
    int row = route >= 0 && route < CQD_MAX_ROUTES ? route : CQD_MAX_ROUTES + method_slot(method);
    int s = status_slot(status);
    /* Compared in whole nanoseconds so a duration equal to a bound lands
     * in that bound's bucket (le is inclusive) whatever the rounding. */
    int b = 0;
    while (b < CQD_LATENCY_BUCKETS - 1 && duration_ns > (uint64_t)(latency_bounds[b] * 1e9 + 0.5))
        b++;
    bump(&m->bucket[row][s][b], 1);
    bump(&m->sum_ns[row][s], duration_ns);
}

void cqd_io_observe(cqd_io_histogram *h, uint64_t duration_ns)
{
    int b = 0;
    while (b < CQD_IO_BUCKETS - 1 && duration_ns > io_bounds_ns[b])
        b++;
    /* Many writers (the request threads, the store's): locked adds. */
    atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, duration_ns, memory_order_relaxed);
}

/* ---- the text format ---- */

void cqd_metrics_escape(cqp_buf *out, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
        if (esc) {
            cqp_buf_append(out, run, (size_t)(s - run));
            cqp_buf_puts(out, esc);
            run = s + 1;
        }
    }
    cqp_buf_append(out, run, (size_t)(s - run));
}

/* HELP texts are constants without backslashes or newlines, so they need no escaping. */
static void family(cqp_buf *out, const char *name, const char *type, const char *help)
{
    cqp_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample is written as: name, then label() calls, then end_*(); the
 * first label opens the brace, the end closes it when one was opened. */
typedef struct sample {
    cqp_buf *out;
    int labels;
} sample;

static sample begin(cqp_buf *out, const char *name, const char *suffix)
{
    cqp_buf_puts(out, name);
    cqp_buf_puts(out, suffix);
    return (sample){out, 0};
}

static void label(sample *s, const char *key, const char *value)
{
    cqp_buf_puts(s->out, s->labels++ ? "," : "{");
    cqp_buf_puts(s->out, key);
    cqp_buf_puts(s->out, "=\"");
    cqd_metrics_escape(s->out, value);
    cqp_buf_puts(s->out, "\"");
}

static void close_labels(sample *s)
{
    cqp_buf_puts(s->out, s->labels ? "} " : " ");
}

static void end_uint(sample *s, uint64_t v)
{
    close_labels(s);
    cqp_buf_printf(s->out, "%" PRIu64 "\n", v);
}

static void end_double(sample *s, double v)
{
    char text[CQP_DOUBLE_CHARS];
    cqp_format_double(v, text);
    close_labels(s);
    cqp_buf_puts(s->out, text);
    cqp_buf_puts(s->out, "\n");
}

/* A family with one unlabelled sample. */
static void scalar_uint(cqp_buf *out, const char *name, const char *type, const char *help, uint64_t v)
{
    family(out, name, type, help);
    sample s = begin(out, name, "");
    end_uint(&s, v);
}

/* The buckets, _sum and _count of one histogram series. counts are per
 * bucket (not cumulative), the last one +Inf; up to three labels precede le. */
typedef struct series_labels {
    const char *key[3], *value[3];
    int n;
} series_labels;

static void histogram_series(cqp_buf *out, const char *name, const series_labels *lab, const double *bounds,
                             const uint64_t *counts, int buckets, double sum)
{
    uint64_t cumulative = 0;
    for (int b = 0; b < buckets; b++) {
        char le[CQP_DOUBLE_CHARS];
        if (b < buckets - 1)
            cqp_format_double(bounds[b], le);
        else
            strcpy(le, "+Inf");
        cumulative += counts[b];
        sample s = begin(out, name, "_bucket");
        for (int i = 0; i < lab->n; i++)
            label(&s, lab->key[i], lab->value[i]);
        label(&s, "le", le);
        end_uint(&s, cumulative);
    }
    sample s = begin(out, name, "_sum");
    for (int i = 0; i < lab->n; i++)
        label(&s, lab->key[i], lab->value[i]);
    end_double(&s, sum);
    /* _count is the +Inf bucket by construction, even while a writer is
     * between its increments of two slots. */
    s = begin(out, name, "_count");
    for (int i = 0; i < lab->n; i++)
        label(&s, lab->key[i], lab->value[i]);
    end_uint(&s, cumulative);
}

/* ---- the sums ---- */

typedef struct req_sums {
    uint64_t bucket[CQD_METRIC_ROWS][CQD_STATUS_SLOTS][CQD_LATENCY_BUCKETS];
    uint64_t sum_ns[CQD_METRIC_ROWS][CQD_STATUS_SLOTS];
} req_sums;

static void add_requests(req_sums *sum, const cqd_req_metrics *m)
{
    for (int r = 0; r < CQD_METRIC_ROWS; r++)
        for (int s = 0; s < CQD_STATUS_SLOTS; s++) {
            for (int b = 0; b < CQD_LATENCY_BUCKETS; b++)
                sum->bucket[r][s][b] += atomic_load_explicit(&m->bucket[r][s][b], memory_order_relaxed);
            sum->sum_ns[r][s] += atomic_load_explicit(&m->sum_ns[r][s], memory_order_relaxed);
        }
}

/* ---- the families ---- */

/* The labels of a row's series: rows 0..count-1 are the table's routes,
 * each with its one method; from CQD_MAX_ROUTES on, the requests that
 * matched no route, by method. No two rows share method and route (the
 * table has one row per method and pattern), so no two series collide. */
typedef struct row_labels {
    const char *method, *route;
} row_labels;

/* False for a row no route uses. */
static bool labels_of(const cqd_route *routes, int count, int r, row_labels *out)
{
    if (r < count) {
        *out = (row_labels){routes[r].method, routes[r].pattern};
        return true;
    }
    if (r < CQD_MAX_ROUTES)
        return false;
    int m = r - CQD_MAX_ROUTES;
    *out = (row_labels){m < CQD_METHOD_SLOTS - 1 ? methods[m] : "other", "unmatched"};
    return true;
}

static uint64_t series_count(const req_sums *sum, int r, int s)
{
    uint64_t n = 0;
    for (int b = 0; b < CQD_LATENCY_BUCKETS; b++)
        n += sum->bucket[r][s][b];
    return n;
}

/* The text of each status slot's label. */
typedef struct status_texts {
    char s[CQD_STATUS_SLOTS][8];
} status_texts;

static status_texts status_labels(void)
{
    status_texts t;
    for (int s = 0; s < CQD_STATUS_SLOTS - 1; s++)
        snprintf(t.s[s], sizeof t.s[s], "%d", status_codes[s]);
    strcpy(t.s[CQD_STATUS_SLOTS - 1], "other");
    return t;
}

/* One counter sample or one histogram series per row and status that
 * counted a request (the others would be zeros forever). */
static void render_request_rows(cqp_buf *out, const req_sums *sum, bool histogram)
{
    int count = 0;
    const cqd_route *routes = cqd_routes(&count);
    if (count > CQD_MAX_ROUTES)
        count = CQD_MAX_ROUTES;
    status_texts status = status_labels();
    static const char requests[] = "collisiond_requests_total", duration[] = "collisiond_request_duration_seconds";
    for (int r = 0; r < CQD_METRIC_ROWS; r++) {
        row_labels rl;
        if (!labels_of(routes, count, r, &rl))
            continue;
        for (int s = 0; s < CQD_STATUS_SLOTS; s++) {
            uint64_t n = series_count(sum, r, s);
            if (n == 0)
                continue;
            series_labels lab = {{"method", "route", "status"}, {rl.method, rl.route, status.s[s]}, 3};
            if (histogram) {
                histogram_series(out, duration, &lab, latency_bounds, sum->bucket[r][s], CQD_LATENCY_BUCKETS,
                                 (double)sum->sum_ns[r][s] * 1e-9);
                continue;
            }
            sample smp = begin(out, requests, "");
            for (int i = 0; i < lab.n; i++)
                label(&smp, lab.key[i], lab.value[i]);
            end_uint(&smp, n);
        }
    }
}

static void render_requests(cqp_buf *out, const req_sums *sum)
{
    family(out, "collisiond_requests_total", "counter",
           "Requests handled, by method, route pattern (\"unmatched\": none) and status code.");
    render_request_rows(out, sum, false);
    family(out, "collisiond_request_duration_seconds", "histogram",
           "Time from a request's arrival (its last byte read) to its response being complete, by method, route "
           "pattern and status code.");
    render_request_rows(out, sum, true);
}

static void render_core(cqp_buf *out, const uint64_t *ctr)
{
    static const char tests[] = "collisiond_narrowphase_tests_total";
    family(out, tests, "counter", "Narrow-phase pair tests, by the algorithm that answered.");
    for (int a = 0; a < CQ_ALG_COUNT; a++) {
        sample s = begin(out, tests, "");
        label(&s, "algorithm", cq_algorithm_name((cq_algorithm)a));
        end_uint(&s, ctr[CQ_CTR_TESTS + a]);
    }
    scalar_uint(out, "collisiond_sat_axes_skipped_total", "counter",
                "Degenerate SAT cross axes skipped (squared length below 1e-12).", ctr[CQ_CTR_SAT_AXES_SKIPPED]);
    scalar_uint(out, "collisiond_zero_normals_total", "counter",
                "Contact normals that could not be defined (contact dropped or previous normal used).",
                ctr[CQ_CTR_ZERO_NORMALS]);
    scalar_uint(out, "collisiond_gjk_calls_total", "counter", "GJK distance queries.", ctr[CQ_CTR_GJK_CALLS]);

    static const int gjk_bounds_int[CQ_GJK_BUCKETS - 1] = CQ_GJK_BUCKET_BOUNDS;
    double gjk_bounds[CQ_GJK_BUCKETS - 1];
    for (int b = 0; b < CQ_GJK_BUCKETS - 1; b++)
        gjk_bounds[b] = gjk_bounds_int[b];
    static const char gjk[] = "collisiond_gjk_iterations";
    family(out, gjk, "histogram", "Iterations per GJK query.");
    series_labels none = {{NULL, NULL}, {NULL, NULL}, 0};
    histogram_series(out, gjk, &none, gjk_bounds, &ctr[CQ_CTR_GJK_BUCKET], CQ_GJK_BUCKETS,
                     (double)ctr[CQ_CTR_GJK_ITERATIONS]);

    scalar_uint(out, "collisiond_gjk_iteration_limit_total", "counter",
                "GJK queries that hit the iteration limit.", ctr[CQ_CTR_REASONS + CQ_FB_GJK_ITERATION_LIMIT]);
    scalar_uint(out, "collisiond_epa_calls_total", "counter", "EPA penetration queries.", ctr[CQ_CTR_EPA_CALLS]);
    scalar_uint(out, "collisiond_epa_iterations_total", "counter", "EPA iterations, summed.",
                ctr[CQ_CTR_EPA_ITERATIONS]);

    /* Slot 0 of reasons and actions ("none") is never counted. */
    static const char reasons[] = "collisiond_fallback_reasons_total";
    family(out, reasons, "counter", "GJK/EPA failures answered by a fallback, by reason (epa_* are EPA failures).");
    for (int r = 1; r < CQ_FB_REASON_COUNT; r++) {
        sample s = begin(out, reasons, "");
        label(&s, "reason", cq_fallback_reason_name((cq_fallback_reason)r));
        end_uint(&s, ctr[CQ_CTR_REASONS + r]);
    }
    static const char actions[] = "collisiond_fallback_actions_total";
    family(out, actions, "counter", "Fallbacks taken, by what the query did instead.");
    for (int a = 1; a < CQ_FBA_COUNT; a++) {
        sample s = begin(out, actions, "");
        label(&s, "action", cq_fallback_action_name((cq_fallback_action)a));
        end_uint(&s, ctr[CQ_CTR_ACTIONS + a]);
    }
}

/* One journal time histogram, read bucket by bucket (a writer between two
 * slots may leave _sum a moment behind the count; _count is the +Inf
 * bucket all the same). */
static void io_histogram(cqp_buf *out, const char *name, const char *help, const cqd_io_histogram *h)
{
    double bounds[CQD_IO_BUCKETS - 1];
    uint64_t counts[CQD_IO_BUCKETS];
    for (int b = 0; b < CQD_IO_BUCKETS; b++) {
        if (b < CQD_IO_BUCKETS - 1)
            bounds[b] = (double)io_bounds_ns[b] / 1e9; /* divided: the nearest double to the bound */
        counts[b] = atomic_load_explicit(&h->bucket[b], memory_order_relaxed);
    }
    family(out, name, "histogram", help);
    series_labels none = {{NULL, NULL}, {NULL, NULL}, 0};
    histogram_series(out, name, &none, bounds, counts, CQD_IO_BUCKETS,
                     (double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) * 1e-9);
}

/* The journal's disk cost (zeros without a data directory). Server-wide:
 * a world label would need per-world storage that outlives the world, and
 * a record's cost is mostly the device's, not its world's. */
static void render_journal(cqp_buf *out, const cqd_journal_metrics *j)
{
    io_histogram(out, "collisiond_journal_write_seconds",
                 "Time of each journal record's write to the journal file (to the page cache unless the disk is slow).",
                 &j->write);
    io_histogram(out, "collisiond_journal_fsync_seconds",
                 "Time of each fdatasync of the journal (one makes every record written before it durable).",
                 &j->fsync);
    scalar_uint(out, "collisiond_journal_bytes_total", "counter",
                "Bytes appended to the journal, records whole (header, request line, body).",
                atomic_load_explicit(&j->bytes, memory_order_relaxed));
}

/* Most shapes first, then by name: the worlds that cost the most keep
 * series of their own. */
static int by_size(const void *a, const void *b)
{
    const cqd_world_info *x = a, *y = b;
    return x->shapes != y->shapes ? (x->shapes < y->shapes) - (x->shapes > y->shapes) : strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cqd_world_info *)a)->name, ((const cqd_world_info *)b)->name);
}

static uint64_t shapes_of(const cqd_world_info *w) { return (uint64_t)w->shapes; }
static uint64_t pairs_of(const cqd_world_info *w) { return (uint64_t)w->broadphase_pairs; }

/* A per-world gauge: one series for each of the first kept worlds, the
 * rest summed into one (so sum() over the family stays the total). */
static void world_family(cqp_buf *out, const char *name, const char *help, const cqd_world_info *info, int count,
                         int kept, uint64_t (*value)(const cqd_world_info *))
{
    family(out, name, "gauge", help);
    uint64_t rest = 0;
    for (int i = 0; i < count; i++) {
        if (i >= kept) {
            rest += value(&info[i]);
            continue;
        }
        sample s = begin(out, name, "");
        label(&s, "world", info[i].name);
        end_uint(&s, value(&info[i]));
    }
    if (count > kept) {
        sample s = begin(out, name, "");
        label(&s, "world", CQD_OTHER_WORLDS);
        end_uint(&s, rest);
    }
}

/* The world label is bounded: at most cap worlds (the largest) have series
 * of their own, whatever clients create. */
static void render_worlds(cqp_buf *out, cqd_registry *registry, int cap)
{
    int count = 0;
    cqd_world_info *info = NULL;
    if (registry && cqd_registry_list(registry, &info, &count) != 0) {
        out->oom = true; /* a scrape without them would say there are no worlds */
        return;
    }
    int kept = count < cap ? count : cap;
    if (count > kept) {
        qsort(info, (size_t)count, sizeof *info, by_size);
        qsort(info, (size_t)kept, sizeof *info, by_name);
    }
    scalar_uint(out, "collisiond_worlds", "gauge", "Worlds held.", (uint64_t)count);
    scalar_uint(out, "collisiond_worlds_folded", "gauge",
                "Worlds past --metrics-worlds, summed into the per-world gauges' world=\"" CQD_OTHER_WORLDS "\".",
                (uint64_t)(count - kept));
    long slots = registry ? cqd_registry_slots(registry) : 0;
    scalar_uint(out, "collisiond_shape_slots_reserved", "gauge",
                "Shape slots the worlds' storage holds, charged to --max-shapes-total.",
                (uint64_t)(slots > 0 ? slots : 0));
    world_family(out, "collisiond_world_shapes", "Shapes in a world.", info, count, kept, shapes_of);
    world_family(out, "collisiond_world_broadphase_pairs", "Broadphase pairs of a world's last update.", info, count,
                 kept, pairs_of);
    cqd_free(info);
}

/* The families every exporter has, as the client libraries name them. */
static void render_os_process(cqp_buf *out)
{
    cqd_process p;
    cqd_process_read(&p);
    sample s;
    if (p.has_stat) {
        family(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
        s = begin(out, "process_cpu_seconds_total", "");
        end_double(&s, p.cpu_seconds);
        scalar_uint(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", p.virtual_bytes);
        scalar_uint(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                    p.resident_bytes);
    }
    if (p.has_start) {
        family(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
        s = begin(out, "process_start_time_seconds", "");
        end_double(&s, p.start_time);
    }
    if (p.has_fds)
        scalar_uint(out, "process_open_fds", "gauge", "Number of open file descriptors.", p.open_fds);
    if (p.has_max_fds)
        scalar_uint(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", p.max_fds);
}

static void render_process(cqp_buf *out, cqd_server *srv, int threads)
{
    /* cqd_version() reads "collisiond 0.1.0": the label holds the number. */
    const char *version = cqd_version();
    const char *space = strrchr(version, ' ');
    static const char build[] = "collisiond_build_info";
    family(out, build, "gauge", "Build information; the value is always 1.");
    sample s = begin(out, build, "");
    label(&s, "version", space ? space + 1 : version);
    end_uint(&s, 1);

    static const char start[] = "collisiond_start_time_seconds";
    family(out, start, "gauge", "Start time of the process since the Unix epoch in seconds.");
    s = begin(out, start, "");
    end_double(&s, srv->started);

    scalar_uint(out, "collisiond_ready", "gauge", "1 when the server is ready (as /readyz), else 0.",
                atomic_load(&srv->state) == CQD_READY);
    scalar_uint(out, "collisiond_threads", "gauge", "Threads that have handled requests.", (uint64_t)threads);
    // The scrape itself is in flight: it counts itself.
    long inflight = atomic_load_explicit(&srv->admit.inflight, memory_order_relaxed);
    scalar_uint(out, "collisiond_requests_in_flight", "gauge", "Requests admitted and not yet answered.",
                (uint64_t)(inflight > 0 ? inflight : 0));
    scalar_uint(out, "collisiond_request_bytes_buffered", "gauge",
                "Request bytes held against --max-buffered (HTTP bodies arriving, stream lines not yet run).",
                (uint64_t)atomic_load_explicit(&srv->admit.buffered, memory_order_relaxed));
    int streams = atomic_load_explicit(&srv->stream_connections, memory_order_relaxed);
    scalar_uint(out, "collisiond_stream_connections", "gauge",
                "Open connections to the stream listener (each freed once its last reply is written or dropped).",
                (uint64_t)(streams > 0 ? streams : 0));
    scalar_uint(out, "collisiond_stream_reply_bytes_buffered", "gauge",
                "Stream reply bytes made and not yet written, held against --max-stream-reply-total.",
                (uint64_t)atomic_load_explicit(&srv->stream_reply_bytes, memory_order_relaxed));
    scalar_uint(out, "collisiond_http_reply_bytes_buffered", "gauge",
                "HTTP answer bytes made and not yet sent, held against --max-http-reply-total.",
                (uint64_t)atomic_load_explicit(&srv->http_reply_bytes, memory_order_relaxed));
    scalar_uint(out, "collisiond_journal_failed", "gauge",
                "1 once a journal write or sync has failed: every change is refused until a restart.",
                srv->store && cqd_store_failed(srv->store) ? 1 : 0);
    uint64_t snap_failures;
    double snap_ok;
    cqd_store_snapshot_stats(srv->store, &snap_failures, &snap_ok);
    scalar_uint(out, "collisiond_snapshot_failures_total", "counter",
                "Snapshots that failed (a read-only or full data directory); the journal is kept and grows.",
                snap_failures);
    static const char snap_last[] = "collisiond_snapshot_last_success_timestamp_seconds";
    family(out, snap_last, "gauge",
           "Unix time of the last snapshot written (or recovered at start); 0 for none or no data directory.");
    sample snap = begin(out, snap_last, "");
    end_double(&snap, snap_ok);
    scalar_uint(out, "collisiond_requests_shed_total", "counter",
                "Requests answered 503 at once by admission control (--max-inflight, --max-buffered).",
                atomic_load_explicit(&srv->admit.shed, memory_order_relaxed));
}

void cqd_metrics_render(cqd_server *srv, cqp_buf *out)
{
    req_sums *sum = cqd_calloc(1, sizeof *sum);
    if (!sum) {
        out->oom = true;
        return;
    }
    uint64_t ctr[CQ_CTR_COUNT] = {0};
    int threads = 0;
    uint64_t timed_out = 0;
    pthread_mutex_lock(&srv->threads_lock);
    for (const cqd_thread *t = srv->threads; t; t = t->next) {
        threads++;
        timed_out += atomic_load_explicit(&t->timed_out, memory_order_relaxed);
        cq_counters_snapshot(&t->counters, ctr);
        add_requests(sum, &t->requests);
    }
    pthread_mutex_unlock(&srv->threads_lock);

    render_process(out, srv, threads);
    render_journal(out, &srv->journal);
    render_os_process(out);
    render_requests(out, sum);
    scalar_uint(out, "collisiond_requests_timed_out_total", "counter",
                "Requests whose query was stopped at --request-timeout (answered 503 timeout).", timed_out);
    render_core(out, ctr);
    render_worlds(out, srv->worlds, srv->cfg.metrics_worlds);
    cqd_free(sum);
}
