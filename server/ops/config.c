/// @file server/ops/config.c
/// The one settings table. Each row names a flag, its COLLISIOND_*
/// variable, its default (as text, parsed like any other value, so the
/// table is the single source of truth), its parser and its help line.
/// Loading applies the defaults, then the environment, then argv.
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cq/hull.h"
#include "cq/world.h"

#define PROGRAM "collisiond"

typedef struct cfg_row cfg_row;

/// Parses text into cfg; on failure writes why into err and returns -1.
typedef int (*cfg_parser)(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);

struct cfg_row {
    const char *flag;    ///< without the leading "--"
    const char *env;     ///< COLLISIOND_<FLAG>, or NULL (--help, --version)
    const char *def;     ///< default as text, or NULL (no value)
    cfg_parser parse;    ///< NULL for the flags without a value
    size_t off, off2;    ///< where the value goes (off2: the port of an address)
    size_t size;         ///< capacity of a string field
    long long min, max;  ///< range of a number
    const char *arg;     ///< placeholder shown in --help; NULL: the flag takes no value
    const char *help;
};

static int parse_addr(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_str(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_int(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_threads(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_auto(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_bytes_ll(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_bytes_size(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_fsync(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_level(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_switch(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_access(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_token_file(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);

#define OFF(field) offsetof(cqd_config, field)
#define STR(field) OFF(field), 0, sizeof(((cqd_config *)0)->field), 0, 0
#define NUM(field, lo, hi) OFF(field), 0, 0, lo, hi

static const cfg_row rows[] = {
    {"listen", "COLLISIOND_LISTEN", "127.0.0.1:7878", parse_addr, OFF(listen_host), OFF(listen_port),
     sizeof(((cqd_config *)0)->listen_host), 0, 0, "HOST:PORT", "HTTP listener (port 0: any free port)"},
    {"stream-listen", "COLLISIOND_STREAM_LISTEN", "127.0.0.1:7879", parse_addr, OFF(stream_host),
     OFF(stream_port), sizeof(((cqd_config *)0)->stream_host), 0, 0, "HOST:PORT",
     "JSON-lines stream listener (port 0: any free port)"},
    {"data-dir", "COLLISIOND_DATA_DIR", "/var/lib/collisiond", parse_str, STR(data_dir), "DIR",
     "journal and snapshots (empty: keep nothing on disk)"},
    {"fsync", "COLLISIOND_FSYNC", "everysec", parse_fsync, OFF(fsync), 0, 0, 0, 0, "always|everysec|no",
     "when the journal is flushed to disk"},
    {"snapshot-every", "COLLISIOND_SNAPSHOT_EVERY", "64M", parse_bytes_ll,
     NUM(snapshot_every, 0, 1LL << 50), "BYTES", "journal growth that triggers a snapshot (0: never)"},
    {"repair", "COLLISIOND_REPAIR", "false", parse_switch, OFF(repair), 0, 0, 0, 0, NULL,
     "start despite a corrupt journal or snapshot: keep the valid prefix, move the rest aside"},
    {"threads", "COLLISIOND_THREADS", "auto", parse_threads, NUM(threads, 1, 1024), "N|auto",
     "HTTP connection threads (auto: one per online core)"},
    {"workers", "COLLISIOND_WORKERS", "auto", parse_auto, NUM(workers, 1, 100000), "N|auto",
     "handler threads for HTTP and the stream, plus one, started as requests need them (auto: --max-inflight, so every admitted request runs at once)"},
    {"max-body", "COLLISIOND_MAX_BODY", "16M", parse_bytes_size, NUM(max_body, 1, 1LL << 40), "BYTES",
     "largest request body or stream line"},
    {"max-connections", "COLLISIOND_MAX_CONNECTIONS", "1024", parse_int, NUM(max_connections, 1, 1000000), "N",
     "concurrent connections per listener: HTTP and the stream each hold at most this many"},
    {"max-connections-per-ip", "COLLISIOND_MAX_CONNECTIONS_PER_IP", "0", parse_int,
     NUM(max_connections_per_ip, 0, 1000000), "N", "concurrent HTTP connections from one address (0: no limit)"},
    {"max-inflight", "COLLISIOND_MAX_INFLIGHT", "256", parse_int, NUM(max_inflight, 1, 1000000), "N",
     "requests run or answered at once, on both listeners (503 with Retry-After beyond)"},
    {"max-buffered", "COLLISIOND_MAX_BUFFERED", "512M", parse_bytes_size, NUM(max_buffered, 1, 1LL << 40), "BYTES",
     "request bytes held at once: HTTP bodies while they arrive, stream lines until run (503 with Retry-After beyond)"},
    {"max-request-memory", "COLLISIOND_MAX_REQUEST_MEMORY", "256M", parse_bytes_size,
     NUM(max_request_memory, 1 << 20, 1LL << 40), "BYTES", "memory one request's decoded JSON may take (413 beyond)"},
    {"max-response", "COLLISIOND_MAX_RESPONSE", "64M", parse_bytes_size, NUM(max_response, 1 << 20, 1LL << 40),
     "BYTES", "largest response body: an answer that would be longer is refused (422 with the size it would have had)"},
    {"max-http-reply-total", "COLLISIOND_MAX_HTTP_REPLY_TOTAL", "256M", parse_bytes_size,
     NUM(max_http_reply_total, 1, 1LL << 40), "BYTES",
     "HTTP answer bytes all connections may hold unsent; past it an answer may be at most 64K (503 with Retry-After beyond)"},
    {"max-stream-reply-buffered", "COLLISIOND_MAX_STREAM_REPLY_BUFFERED", "4M", parse_bytes_size,
     NUM(max_stream_reply_buffered, 1, 1LL << 40), "BYTES",
     "reply bytes one stream connection may hold unwritten before it starts no request and reads no more"},
    {"max-stream-reply-total", "COLLISIOND_MAX_STREAM_REPLY_TOTAL", "128M", parse_bytes_size,
     NUM(max_stream_reply_total, 1, 1LL << 40), "BYTES",
     "reply bytes all stream connections may hold unwritten; past it only connections with none get answers, of up to 64K (503 beyond)"},
    {"max-worlds", "COLLISIOND_MAX_WORLDS", "10000", parse_int, NUM(max_worlds, 1, 1000000), "N",
     "worlds held at once (422 for a new one beyond)"},
    {"metrics-worlds", "COLLISIOND_METRICS_WORLDS", "100", parse_int, NUM(metrics_worlds, 0, 1000000), "N",
     "worlds with per-world series in /metrics, those with the most shapes; the rest are summed into world=\"(other)\""},
    {"timeout", "COLLISIOND_TIMEOUT", "30", parse_int, NUM(timeout_s, 1, 86400), "SECONDS",
     "idle or slow HTTP clients are cut off after this"},
    {"request-timeout", "COLLISIOND_REQUEST_TIMEOUT", "30", parse_int, NUM(request_timeout_s, 0, 86400), "SECONDS",
     "a query still computing this long after its handler started is stopped: 503 timeout (0: off)"},
    {"min-body-rate", "COLLISIOND_MIN_BODY_RATE", "1K", parse_bytes_size, NUM(min_body_rate, 0, 1LL << 30),
     "BYTES", "an HTTP body must average this many bytes a second after its grace, a stream line or frame still arriving bring them in every grace-long window after it, or its connection is closed (0: off)"},
    {"min-body-grace", "COLLISIOND_MIN_BODY_GRACE", "10", parse_int, NUM(min_body_grace_s, 0, 86400), "SECONDS",
     "time after a request's head (stream: first byte) before --min-body-rate counts"},
    {"token", "COLLISIOND_TOKEN", "", parse_str, STR(token), "TOKEN",
     "bearer token required by all but /healthz and /readyz (empty: none); ps shows it: prefer --token-file"},
    // Writes the same field as --token: the two are one setting (check_alternatives).
    {"token-file", "COLLISIOND_TOKEN_FILE", "", parse_token_file, STR(token), "PATH",
     "read the bearer token from the first line of PATH (empty: none; not shown by ps)"},
    {"log-level", "COLLISIOND_LOG_LEVEL", "info", parse_level, OFF(log_level), 0, 0, 0, 0,
     "error|warn|info|debug", "least severe level logged"},
    {"access-log", "COLLISIOND_ACCESS_LOG", "sample", parse_access, OFF(access_log), 0, 0, 0, 0,
     "off|errors|sample|all",
     "requests logged: none; 401, 413, 422, 5xx and slow ones; those and 1 in N others; every one"},
    {"access-log-sample", "COLLISIOND_ACCESS_LOG_SAMPLE", "1000", parse_int, NUM(access_log_sample, 1, 1000000000),
     "N", "sample logs 1 in N of the requests it would not log otherwise (never a probe or a scrape)"},
    {"slow-request", "COLLISIOND_SLOW_REQUEST", "16", parse_int, NUM(slow_request_ms, 0, 3600000), "MS",
     "a request taking this many milliseconds or more is logged, in every --access-log mode but off"},
    {"max-pairs", "COLLISIOND_MAX_PAIRS", "100000", parse_int, NUM(limits.pairs, 1, INT_MAX), "N",
     "pairs in one POST /v1/pairs (422 beyond)"},
    {"max-rays", "COLLISIOND_MAX_RAYS", "100000", parse_int, NUM(limits.rays, 1, INT_MAX), "N",
     "rays in one raycast (422 beyond)"},
    {"max-hull-points", "COLLISIOND_MAX_HULL_POINTS", "256", parse_int,
     NUM(limits.hull_points, 1, CQ_HULL_MAX_POINTS), "N", "points of one convex shape (422 beyond)"},
    {"max-mesh-triangles", "COLLISIOND_MAX_MESH_TRIANGLES", "1000000", parse_int,
     NUM(limits.mesh_triangles, 1, INT_MAX), "N", "triangles of one mesh (422 beyond)"},
    {"max-batch", "COLLISIOND_MAX_BATCH", "100000", parse_int, NUM(limits.batch_items, 1, INT_MAX), "N",
     "items of one batch or import, ids of one contacts filter (422 beyond)"},
    {"max-hits", "COLLISIOND_MAX_HITS", "1000000", parse_int, NUM(limits.hits, 1, INT_MAX), "N",
     "ray hits one raycast with \"all\" may return (422 beyond)"},
    {"max-world-capacity", "COLLISIOND_MAX_WORLD_CAPACITY", "65536", parse_int,
     NUM(limits.world_capacity, 1, CQ_WORLD_MAX_SHAPES), "N",
     "largest \"capacity\" a world's settings may preallocate (422 beyond)"},
    // A slot costs about 1.4 KiB of storage (entry, id, hash, broadphase,
    // batch scratch, pair cache): 1M slots is about 1.4 GB, and 15 worlds
    // of the largest capacity.
    {"max-shapes-total", "COLLISIOND_MAX_SHAPES_TOTAL", "1000000", parse_int, NUM(max_shapes_total, 1, INT_MAX),
     "N",
     "shape slots all worlds together may preallocate, ~1.4 KiB each (422 for a world, capacity or batch beyond)"},
    {"max-world-pairs", "COLLISIOND_MAX_WORLD_PAIRS", "1000000", parse_int, NUM(max_world_pairs, 1, 1000000000), "N",
     "broadphase pairs one world may hold, filtered or not (422 for a batch, import, shape PUT or skin that would make more)"},
    {"port-file", "COLLISIOND_PORT_FILE", "", parse_str, STR(port_file), "PATH",
     "once listening, write \"HTTP_PORT STREAM_PORT\" here (empty: none)"},
    {"record", "COLLISIOND_RECORD", "", parse_str, STR(record), "FILE",
     "append every request and its response to FILE, for `collisiond replay` (empty: none)"},
    {"help", NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, "print this help and exit"},
    {"version", NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, "print the version and exit"},
};

#define ROW_COUNT ((int)(sizeof rows / sizeof rows[0]))

/* The Makefile compiles in the VERSION file's text, the version's one home. */
#ifndef CQD_VERSION
#error "CQD_VERSION comes from the VERSION file (see the Makefile)"
#endif
const char *cqd_version(void) { return PROGRAM " " CQD_VERSION; }

static void *field(cqd_config *cfg, size_t off) { return (char *)cfg + off; }

static int parse_str(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    size_t n = strlen(text);
    if (n >= r->size) {
        snprintf(err, err_size, "longer than %zu characters", r->size - 1);
        return -1;
    }
    memcpy(field(cfg, r->off), text, n + 1);
    return 0;
}

/// A decimal integer of digits only (no sign, no spaces) into *out.
static int parse_digits(const char *text, const char **end, long long *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *e;
    long long v = strtoll(text, &e, 10);
    if (errno == ERANGE)
        return -1;
    *end = e;
    *out = v;
    return 0;
}

/// Checks v against the row's range; writes the message when outside.
static int in_range(const cfg_row *r, long long v, char *err, size_t err_size)
{
    if (v < r->min || v > r->max) {
        snprintf(err, err_size, "%lld is out of range [%lld, %lld]", v, r->min, r->max);
        return -1;
    }
    return 0;
}

static int read_int(const cfg_row *r, const char *text, long long *out, char *err, size_t err_size)
{
    const char *end;
    if (parse_digits(text, &end, out) < 0 || *end) {
        snprintf(err, err_size, "'%s' is not a whole number in [%lld, %lld]", text, r->min, r->max);
        return -1;
    }
    return in_range(r, *out, err, err_size);
}

static int parse_int(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    long long v;
    if (read_int(r, text, &v, err, err_size) < 0)
        return -1;
    *(int *)field(cfg, r->off) = (int)v;
    return 0;
}

static int parse_threads(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    if (strcmp(text, "auto") == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        *(int *)field(cfg, r->off) = n < 1 ? 1 : n > r->max ? (int)r->max : (int)n;
        return 0;
    }
    return parse_int(r, text, cfg, err, err_size);
}

/// N, or "auto" stored as 0 (resolved where other settings are known).
static int parse_auto(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    if (strcmp(text, "auto") == 0) {
        *(int *)field(cfg, r->off) = 0;
        return 0;
    }
    return parse_int(r, text, cfg, err, err_size);
}

int cqd_config_workers(const cqd_config *cfg) { return cfg->workers > 0 ? cfg->workers : cfg->max_inflight; }

/// A byte count as --help shows the defaults and read_bytes reads it back:
/// with the largest of G, M and K that divides it, else digits alone.
static void format_bytes(long long v, char *out, size_t size)
{
    static const struct { int shift; char suffix; } units[] = {{30, 'G'}, {20, 'M'}, {10, 'K'}};
    for (size_t i = 0; v > 0 && i < sizeof units / sizeof units[0]; i++)
        if (v % (1LL << units[i].shift) == 0) {
            snprintf(out, size, "%lld%c", v >> units[i].shift, units[i].suffix);
            return;
        }
    snprintf(out, size, "%lld", v);
}

/// The range message of a byte count, its bounds in format_bytes's form.
static int bytes_out_of_range(const cfg_row *r, const char *text, char *err, size_t err_size)
{
    char lo[32], hi[32];
    format_bytes(r->min, lo, sizeof lo);
    format_bytes(r->max, hi, sizeof hi);
    snprintf(err, err_size, "'%s' is out of range [%s, %s]", text, lo, hi);
    return -1;
}

/// A byte count: digits with an optional K, M or G (powers of 1024).
static int read_bytes(const cfg_row *r, const char *text, long long *out, char *err, size_t err_size)
{
    const char *end;
    long long v;
    int shift = -1;
    if (parse_digits(text, &end, &v) == 0) {
        switch (*end) {
        case '\0': shift = 0; break;
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: break;
        }
        if (shift > 0 && end[1])
            shift = -1;
    }
    if (shift < 0) {
        snprintf(err, err_size, "'%s' is not a byte size (a whole number, optionally with K, M or G)", text);
        return -1;
    }
    if (v > (LLONG_MAX >> shift) || (v << shift) < r->min || (v << shift) > r->max)
        return bytes_out_of_range(r, text, err, err_size);
    *out = v << shift;
    return 0;
}

static int parse_bytes_ll(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    long long v;
    if (read_bytes(r, text, &v, err, err_size) < 0)
        return -1;
    *(long long *)field(cfg, r->off) = v;
    return 0;
}

static int parse_bytes_size(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    long long v;
    if (read_bytes(r, text, &v, err, err_size) < 0)
        return -1;
    *(size_t *)field(cfg, r->off) = (size_t)v;
    return 0;
}

/// Index of text in the NULL-terminated names, or -1 with the message.
static int choose(const char *text, const char *const *names, const char *what, char *err, size_t err_size)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    snprintf(err, err_size, "'%s' is not one of %s", text, what);
    return -1;
}

static int parse_fsync(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    static const char *const names[] = {"always", "everysec", "no", NULL}; // cqd_fsync order
    int i = choose(text, names, r->arg, err, err_size);
    if (i < 0)
        return -1;
    *(cqd_fsync *)field(cfg, r->off) = (cqd_fsync)i;
    return 0;
}

static int parse_level(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    static const char *const names[] = {"error", "warn", "info", "debug", NULL}; // cqd_log_level order
    int i = choose(text, names, r->arg, err, err_size);
    if (i < 0)
        return -1;
    *(cqd_log_level *)field(cfg, r->off) = (cqd_log_level)i;
    return 0;
}

static int parse_access(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    static const char *const names[] = {"off", "errors", "sample", "all", NULL}; // cqd_access_mode order
    int i = choose(text, names, r->arg, err, err_size);
    if (i < 0)
        return -1;
    *(cqd_access_mode *)field(cfg, r->off) = (cqd_access_mode)i;
    return 0;
}

/// A flag without a value: given is "true"; its variable may say true/false, 1/0, yes/no.
static int parse_switch(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    static const char *const names[] = {"false", "true", "0", "1", "no", "yes", NULL};
    int i = choose(text, names, "true, false, 1, 0, yes, no", err, err_size);
    if (i < 0)
        return -1;
    *(bool *)field(cfg, r->off) = i % 2 == 1;
    return 0;
}

/// The longest first line a token file may have, trailing white space
/// included: far past any token, yet a bound on what is read.
enum { TOKEN_LINE_MAX = 4096 };

/// Reads the first line of path, without its newline, into line (at
/// least TOKEN_LINE_MAX + 1 bytes); *len is its length (NUL bytes count:
/// line is not a C string). Returns 0, 1 when the line is longer than
/// TOKEN_LINE_MAX, or -1 with errno.
static int read_first_line(const char *path, char *line, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    errno = 0;
    size_t n = fread(line, 1, TOKEN_LINE_MAX + 1, f);
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    const char *nl = memchr(line, '\n', n);
    *len = nl ? (size_t)(nl - line) : n;
    errno = err;
    return err ? -1 : *len > TOKEN_LINE_MAX ? 1 : 0;
}

/// The first byte of text[0, n) that a header value cannot carry (a
/// control character: NUL, tab, ESC, DEL, ...), or -1.
static long first_control(const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return (long)i;
    return -1;
}

/// The first line of the file at text, trailing white space cut, as the
/// token: a secret given this way shows neither in ps nor in the
/// environment of the process. An empty path leaves the field alone.
/// Refused, never cut: a line too long, or with a byte no Authorization
/// header can carry (a NUL would silently shorten the token).
static int parse_token_file(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    if (!text[0])
        return 0;
    char line[TOKEN_LINE_MAX + 1];
    size_t n;
    int rc = read_first_line(text, line, &n);
    if (rc < 0) {
        snprintf(err, err_size, "cannot read '%s': %s", text, strerror(errno));
        return -1;
    }
    if (rc > 0) {
        snprintf(err, err_size, "the first line of '%s' is longer than %d bytes", text, TOKEN_LINE_MAX);
        return -1;
    }
    while (n > 0 && isspace((unsigned char)line[n - 1]))
        n--;
    long bad = first_control(line, n);
    if (bad >= 0) {
        snprintf(err, err_size, "the first line of '%s' has a control character (byte 0x%02x at %ld): a token cannot",
                 text, (unsigned char)line[bad], bad);
        return -1;
    }
    if (n == 0) {
        snprintf(err, err_size, "'%s' is empty: its first line must hold the token", text);
        return -1;
    }
    if (n >= r->size) {
        snprintf(err, err_size, "the first line of '%s' is longer than %zu characters", text, r->size - 1);
        return -1;
    }
    memcpy(field(cfg, r->off), line, n);
    ((char *)field(cfg, r->off))[n] = '\0';
    return 0;
}

/// HOST:PORT, the port after the last colon; an IPv6 host in brackets.
static int parse_addr(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size)
{
    const char *colon = strrchr(text, ':');
    const char *host = text;
    size_t host_len = colon ? (size_t)(colon - text) : 0;
    if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
        host++;
        host_len -= 2;
    }
    long long port;
    const char *end;
    if (!colon || host_len == 0 || parse_digits(colon + 1, &end, &port) < 0 || *end || port > 65535) {
        snprintf(err, err_size, "'%s' is not HOST:PORT with a port in [0, 65535]", text);
        return -1;
    }
    if (host_len >= r->size) {
        snprintf(err, err_size, "host longer than %zu characters", r->size - 1);
        return -1;
    }
    char *dst = field(cfg, r->off);
    memcpy(dst, host, host_len);
    dst[host_len] = '\0';
    *(int *)field(cfg, r->off2) = (int)port;
    return 0;
}

static const cfg_row *find_flag(const char *name, size_t len)
{
    for (int i = 0; i < ROW_COUNT; i++)
        if (strlen(rows[i].flag) == len && memcmp(rows[i].flag, name, len) == 0)
            return &rows[i];
    return NULL;
}

/// Short forms of flags without a value: -h, as every tool has it.
static const struct {
    const char *short_form, *flag;
} aliases[] = {{"-h", "help"}};

#define ALIAS_COUNT (sizeof aliases / sizeof aliases[0])

/// The short form of r's flag, or NULL.
static const char *alias_of(const cfg_row *r)
{
    for (size_t i = 0; i < ALIAS_COUNT; i++)
        if (strcmp(aliases[i].flag, r->flag) == 0)
            return aliases[i].short_form;
    return NULL;
}

/// The row of a short form ("-h"), or NULL.
static const cfg_row *find_alias(const char *arg)
{
    for (size_t i = 0; i < ALIAS_COUNT; i++)
        if (strcmp(aliases[i].short_form, arg) == 0)
            return find_flag(aliases[i].flag, strlen(aliases[i].flag));
    return NULL;
}

/// Applies one value, printing "collisiond: <source>: <why>" on failure.
static int apply(const cfg_row *r, const char *source, const char *text, cqd_config *cfg)
{
    char err[700];
    if (r->parse(r, text, cfg, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, PROGRAM ": %s: %s\n", source, err);
    return -1;
}

static void print_help(void)
{
    printf("Usage: " PROGRAM " [OPTIONS]                       run the daemon, as the options below say\n"
           "       " PROGRAM " inspect [OPTIONS]               print what start-up would recover from --data-dir; change nothing\n"
           "       " PROGRAM " replay FILE --against URL ...   re-send a --record FILE, report the responses that differ (replay -h)\n\n"
           "A collision-query daemon: HTTP/JSON on --listen, JSON lines on --stream-listen.\n"
           "Every option may be given as --name VALUE or --name=VALUE, or in its environment\n"
           "variable; a flag wins over the environment, which wins over the default.\n"
           "BYTES take a K, M or G suffix (powers of 1024).\n\n");
    for (int i = 0; i < ROW_COUNT; i++) {
        const cfg_row *r = &rows[i];
        const char *alias = alias_of(r);
        char left[64];
        snprintf(left, sizeof left, "%s%s--%s%s%s", alias ? alias : "", alias ? ", " : "", r->flag,
                 r->arg ? " " : "", r->arg ? r->arg : "");
        printf("  %-36s %s\n", left, r->help);
        if (r->env)
            printf("  %-36s env %s, default '%s'\n", "", r->env, r->def);
    }
}

/// One command-line option at argv[*i]: its row (NULL: unknown) and, for a
/// row with a value, where the value is (--name=VALUE or the next
/// argument, then *i moves past it; NULL when missing). *has_eq tells
/// whether the option had "=".
static const cfg_row *next_option(int argc, char **argv, int *i, const char **value, bool *has_eq)
{
    const char *a = argv[*i];
    *value = NULL;
    *has_eq = false;
    const cfg_row *r = find_alias(a);
    if (!r && strncmp(a, "--", 2) == 0) {
        const char *eq = strchr(a + 2, '=');
        r = find_flag(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
        *has_eq = eq != NULL;
        *value = eq ? eq + 1 : NULL;
    }
    if (r && r->arg && !*has_eq && *i + 1 < argc)
        *value = argv[++*i];
    return r;
}

/// Finds --help or --version in argv (skipping the values of other flags)
/// and reports malformed command lines. Returns RUN, EXIT or ERROR.
static cqd_config_result scan_argv(int argc, char **argv)
{
    bool help = false, version = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool has_eq;
        const cfg_row *r = next_option(argc, argv, &i, &v, &has_eq);
        if (!r && strncmp(a, "-", 1) != 0) {
            fprintf(stderr, PROGRAM ": unexpected argument '%s' (see --help)\n", a);
            return CQD_CONFIG_ERROR;
        }
        if (!r) {
            fprintf(stderr, PROGRAM ": unknown option '%.*s' (see --help)\n", (int)strcspn(a, "="), a);
            return CQD_CONFIG_ERROR;
        }
        if (!r->arg && has_eq) {
            fprintf(stderr, PROGRAM ": --%s takes no value\n", r->flag);
            return CQD_CONFIG_ERROR;
        }
        if (r->arg && !v) {
            fprintf(stderr, PROGRAM ": --%s needs a value (%s)\n", r->flag, r->arg);
            return CQD_CONFIG_ERROR;
        }
        help |= strcmp(r->flag, "help") == 0;
        version |= strcmp(r->flag, "version") == 0;
    }
    if (help)
        print_help();
    else if (version)
        printf("%s\n", cqd_version());
    return help || version ? CQD_CONFIG_EXIT : CQD_CONFIG_RUN;
}

static const char *env_lookup(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/// How row r is named at one level: its variable or its flag.
static void source_name(const cfg_row *r, bool by_env, char *out, size_t size)
{
    snprintf(out, size, by_env ? "%s" : "--%s", by_env ? r->env : r->flag);
}

/// Rows that write the same field are two forms of one setting (--token
/// and --token-file): two flags, or two variables, giving it non-empty
/// values at once is an error; across levels the flag wins as usual.
/// given[i]: row i has a non-empty value at this level.
static int check_alternatives(const bool given[], bool by_env)
{
    for (int i = 0; i < ROW_COUNT; i++)
        for (int j = i + 1; given[i] && j < ROW_COUNT; j++)
            if (given[j] && rows[i].parse && rows[j].parse && rows[i].off == rows[j].off) {
                char a[64], b[64];
                source_name(&rows[i], by_env, a, sizeof a);
                source_name(&rows[j], by_env, b, sizeof b);
                fprintf(stderr, PROGRAM ": %s and %s both set the %s: give only one\n", a, b, rows[i].flag);
                return -1;
            }
    return 0;
}

/// Whether another row writes r's field (r is one form of a setting with
/// two: --token and --token-file).
static bool has_alternative(const cfg_row *r)
{
    for (int i = 0; i < ROW_COUNT; i++)
        if (&rows[i] != r && rows[i].parse && r->parse && rows[i].off == r->off)
            return true;
    return false;
}

/// Whether a flag of r's setting (r's own or an alternative's) has a
/// non-empty value: then r's variable is overridden, so never read.
static bool flag_sets(const cfg_row *r, const bool by_flag[])
{
    for (int i = 0; i < ROW_COUNT; i++)
        if (by_flag[i] && rows[i].parse && rows[i].off == r->off)
            return true;
    return false;
}

/// Where the settings of two forms look at a value: an empty one is none,
/// whatever the level or the order. It conflicts with nothing and unsets
/// nothing, so `--token-file F --token=` keeps the file's token.
static bool skipped(const cfg_row *r, const char *v) { return has_alternative(r) && !v[0]; }

/// check_alternatives for the environment and for argv (whose shape
/// scan_argv vouched for), before any value is applied. by_flag[i]: row
/// i has a non-empty flag; named[i]: row i is given at all, maybe empty.
static int check_sources(int argc, char **argv, char **envp, bool by_flag[], bool named[])
{
    bool by_env[ROW_COUNT] = {0};
    for (int i = 0; i < ROW_COUNT; i++) {
        const char *v = rows[i].env ? env_lookup(envp, rows[i].env) : NULL;
        by_env[i] = v && v[0];
        named[i] = v != NULL;
    }
    for (int i = 1; i < argc; i++) {
        const char *v;
        bool has_eq;
        const cfg_row *r = next_option(argc, argv, &i, &v, &has_eq);
        if (r->arg) {
            by_flag[r - rows] |= v[0] != '\0'; // any occurrence: a later empty one unsets nothing
            named[r - rows] = true;
        }
    }
    // A variable that a flag overrides is not judged: the flag wins.
    for (int i = 0; i < ROW_COUNT; i++)
        by_env[i] &= !flag_sets(&rows[i], by_flag);
    return check_alternatives(by_env, true) < 0 || check_alternatives(by_flag, false) < 0 ? -1 : 0;
}

/// A token source given, yet no token: say so, since every request is
/// then served without one (say, a variable left empty by a template).
static void warn_no_token(const bool named[], const cqd_config *cfg)
{
    if (cfg->token[0])
        return;
    for (int i = 0; i < ROW_COUNT; i++)
        if (named[i] && rows[i].parse && rows[i].off == OFF(token)) {
            fprintf(stderr, PROGRAM ": warning: --token and --token-file are empty: no token, so "
                            "authentication is off\n");
            return;
        }
}

/// Defaults, then the variables, row by row; a variable that a flag of
/// its setting overrides is neither read nor judged.
static int apply_env(char **envp, const bool by_flag[], cqd_config *cfg)
{
    for (int i = 0; i < ROW_COUNT; i++) {
        const cfg_row *r = &rows[i];
        if (!r->parse)
            continue;
        char source[80];
        snprintf(source, sizeof source, "default of --%s", r->flag);
        if (apply(r, source, r->def, cfg) < 0)
            return -1;
        const char *v = env_lookup(envp, r->env);
        if (!v || skipped(r, v) || (has_alternative(r) && flag_sets(r, by_flag)))
            continue;
        if (apply(r, r->env, v, cfg) < 0)
            return -1;
    }
    return 0;
}

/// The flags in argv order (scan_argv vouched for the shape of argv:
/// every flag is known and has its value).
static int apply_argv(int argc, char **argv, cqd_config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        bool has_eq;
        const cfg_row *r = next_option(argc, argv, &i, &v, &has_eq);
        if (!r->parse || (r->arg && skipped(r, v)))
            continue;
        char source[80];
        snprintf(source, sizeof source, "--%s", r->flag);
        if (apply(r, source, r->arg ? v : "true", cfg) < 0)
            return -1;
    }
    return 0;
}

cqd_config_result cqd_config_load(int argc, char **argv, char **envp, cqd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cqd_config_result scanned = scan_argv(argc, argv);
    if (scanned != CQD_CONFIG_RUN)
        return scanned;
    bool by_flag[ROW_COUNT] = {0}, named[ROW_COUNT] = {0};
    if (check_sources(argc, argv, envp, by_flag, named) < 0)
        return CQD_CONFIG_ERROR;
    if (apply_env(envp, by_flag, cfg) < 0 || apply_argv(argc, argv, cfg) < 0)
        return CQD_CONFIG_ERROR;
    warn_no_token(named, cfg);
    return CQD_CONFIG_RUN;
}
