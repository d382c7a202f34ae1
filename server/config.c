/// @file server/config.c
/// The one settings table. Each row names a flag, its COLLISIOND_*
/// variable, its default (as text, parsed like any other value, so the
/// table is the single source of truth), its parser and its help line.
/// Loading applies the defaults, then the environment, then argv.
#include "config.h"

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
static int parse_bytes_ll(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_bytes_size(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_fsync(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_level(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);
static int parse_switch(const cfg_row *r, const char *text, cqd_config *cfg, char *err, size_t err_size);

#define OFF(field) offsetof(cqd_config, field)
#define STR(field) OFF(field), 0, sizeof(((cqd_config *)0)->field), 0, 0
#define NUM(field, lo, hi) OFF(field), 0, 0, lo, hi

static const cfg_row rows[] = {
    {"listen", "COLLISIOND_LISTEN", "127.0.0.1:7878", parse_addr, OFF(listen_host), OFF(listen_port),
     sizeof(((cqd_config *)0)->listen_host), 0, 0, "HOST:PORT", "HTTP listener (port 0: any free port)"},
    {"stream-listen", "COLLISIOND_STREAM_LISTEN", "127.0.0.1:7879", parse_addr, OFF(stream_host),
     OFF(stream_port), sizeof(((cqd_config *)0)->stream_host), 0, 0, "HOST:PORT",
     "JSON-lines stream listener (port 0: any free port)"},
    {"data-dir", "COLLISIOND_DATA_DIR", "./var/collisiond", parse_str, STR(data_dir), "DIR",
     "journal and snapshots (empty: keep nothing on disk)"},
    {"fsync", "COLLISIOND_FSYNC", "everysec", parse_fsync, OFF(fsync), 0, 0, 0, 0, "always|everysec|no",
     "when the journal is flushed to disk"},
    {"snapshot-every", "COLLISIOND_SNAPSHOT_EVERY", "67108864", parse_bytes_ll,
     NUM(snapshot_every, 0, 1LL << 50), "BYTES", "journal growth that triggers a snapshot (K/M/G suffixes; 0: never)"},
    {"repair", "COLLISIOND_REPAIR", "false", parse_switch, OFF(repair), 0, 0, 0, 0, NULL,
     "start despite a corrupt journal or snapshot: keep the valid prefix, move the rest aside"},
    {"threads", "COLLISIOND_THREADS", "auto", parse_threads, NUM(threads, 1, 1024), "N|auto",
     "request threads (auto: one per online core)"},
    {"max-body", "COLLISIOND_MAX_BODY", "16777216", parse_bytes_size, NUM(max_body, 1, 1LL << 40), "BYTES",
     "largest request body or stream line (K/M/G suffixes)"},
    {"max-connections", "COLLISIOND_MAX_CONNECTIONS", "1024", parse_int, NUM(max_connections, 1, 1000000), "N",
     "concurrent HTTP connections"},
    {"max-connections-per-ip", "COLLISIOND_MAX_CONNECTIONS_PER_IP", "0", parse_int,
     NUM(max_connections_per_ip, 0, 1000000), "N", "concurrent HTTP connections from one address (0: no limit)"},
    {"max-inflight", "COLLISIOND_MAX_INFLIGHT", "256", parse_int, NUM(max_inflight, 1, 1000000), "N",
     "requests run or answered at once, on both listeners (503 with Retry-After beyond)"},
    {"max-buffered", "COLLISIOND_MAX_BUFFERED", "512M", parse_bytes_size, NUM(max_buffered, 1, 1LL << 40), "BYTES",
     "request bytes held at once: HTTP bodies while they arrive, stream lines until run (503 with Retry-After beyond)"},
    {"max-request-memory", "COLLISIOND_MAX_REQUEST_MEMORY", "256M", parse_bytes_size,
     NUM(max_request_memory, 1 << 20, 1LL << 40), "BYTES", "memory one request's decoded JSON may take (413 beyond)"},
    {"max-worlds", "COLLISIOND_MAX_WORLDS", "10000", parse_int, NUM(max_worlds, 1, 1000000), "N",
     "worlds held at once (422 for a new one beyond)"},
    {"metrics-worlds", "COLLISIOND_METRICS_WORLDS", "100", parse_int, NUM(metrics_worlds, 0, 1000000), "N",
     "worlds with per-world series in /metrics, those with the most shapes; the rest are summed into world=\"(other)\""},
    {"timeout", "COLLISIOND_TIMEOUT", "30", parse_int, NUM(timeout_s, 1, 86400), "SECONDS",
     "idle or slow HTTP clients are cut off after this"},
    {"token", "COLLISIOND_TOKEN", "", parse_str, STR(token), "TOKEN",
     "bearer token required by all but /healthz and /readyz (empty: none)"},
    {"log-level", "COLLISIOND_LOG_LEVEL", "info", parse_level, OFF(log_level), 0, 0, 0, 0,
     "error|warn|info|debug", "least severe level logged"},
    {"max-pairs", "COLLISIOND_MAX_PAIRS", "100000", parse_int, NUM(limits.pairs, 1, INT_MAX), "N",
     "pairs in one POST /v1/pairs (422 beyond)"},
    {"max-rays", "COLLISIOND_MAX_RAYS", "100000", parse_int, NUM(limits.rays, 1, INT_MAX), "N",
     "rays in one raycast (422 beyond)"},
    {"max-hull-points", "COLLISIOND_MAX_HULL_POINTS", "256", parse_int,
     NUM(limits.hull_points, 1, CQ_HULL_MAX_POINTS), "N", "points of one convex shape (422 beyond)"},
    {"max-mesh-triangles", "COLLISIOND_MAX_MESH_TRIANGLES", "1000000", parse_int,
     NUM(limits.mesh_triangles, 1, INT_MAX), "N", "triangles of one mesh (422 beyond)"},
    {"max-batch", "COLLISIOND_MAX_BATCH", "100000", parse_int, NUM(limits.batch_items, 1, INT_MAX), "N",
     "items of one batch or import (422 beyond)"},
    {"max-hits", "COLLISIOND_MAX_HITS", "1000000", parse_int, NUM(limits.hits, 1, INT_MAX), "N",
     "ray hits one raycast with \"all\" may return (422 beyond)"},
    {"max-world-capacity", "COLLISIOND_MAX_WORLD_CAPACITY", "100000", parse_int,
     NUM(limits.world_capacity, 1, CQ_WORLD_MAX_SHAPES), "N",
     "largest \"capacity\" a world's settings may preallocate (422 beyond)"},
    {"port-file", "COLLISIOND_PORT_FILE", "", parse_str, STR(port_file), "PATH",
     "once listening, write \"HTTP_PORT STREAM_PORT\" here (empty: none)"},
    {"record", "COLLISIOND_RECORD", "", parse_str, STR(record), "FILE",
     "append every request and its response to FILE, for `collisiond replay` (empty: none)"},
    {"help", NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, "print this help and exit"},
    {"version", NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, "print the version and exit"},
};

#define ROW_COUNT ((int)(sizeof rows / sizeof rows[0]))

const char *cqd_version(void) { return PROGRAM " 0.1.0"; }

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
    if (v > (LLONG_MAX >> shift)) {
        snprintf(err, err_size, "'%s' is out of range [%lld, %lld]", text, r->min, r->max);
        return -1;
    }
    *out = v << shift;
    return in_range(r, *out, err, err_size);
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

/// Applies one value, printing "collisiond: <source>: <why>" on failure.
static int apply(const cfg_row *r, const char *source, const char *text, cqd_config *cfg)
{
    char err[200];
    if (r->parse(r, text, cfg, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, PROGRAM ": %s: %s\n", source, err);
    return -1;
}

static void print_help(void)
{
    printf("Usage: " PROGRAM " [OPTIONS]\n"
           "       " PROGRAM " inspect [--data-dir DIR]   print what start-up would recover, change nothing\n\n"
           "A collision-query daemon: HTTP/JSON on --listen, JSON lines on --stream-listen.\n"
           "Every option may be given as --name VALUE or --name=VALUE, or in its environment\n"
           "variable; a flag wins over the environment, which wins over the default.\n\n");
    for (int i = 0; i < ROW_COUNT; i++) {
        const cfg_row *r = &rows[i];
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", r->flag, r->arg ? " " : "", r->arg ? r->arg : "");
        printf("  %-36s %s\n", left, r->help);
        if (r->env)
            printf("  %-36s env %s, default '%s'\n", "", r->env, r->def);
    }
}

/// Finds --help or --version in argv (skipping the values of other flags)
/// and reports malformed command lines. Returns RUN, EXIT or ERROR.
static cqd_config_result scan_argv(int argc, char **argv)
{
    bool help = false, version = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, PROGRAM ": unexpected argument '%s' (see --help)\n", a);
            return CQD_CONFIG_ERROR;
        }
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        const cfg_row *r = find_flag(a + 2, len);
        if (!r) {
            fprintf(stderr, PROGRAM ": unknown option '%.*s' (see --help)\n", (int)(len + 2), a);
            return CQD_CONFIG_ERROR;
        }
        if (!r->arg) {
            if (eq) {
                fprintf(stderr, PROGRAM ": --%s takes no value\n", r->flag);
                return CQD_CONFIG_ERROR;
            }
            help |= strcmp(r->flag, "help") == 0;
            version |= strcmp(r->flag, "version") == 0;
        } else if (!eq && ++i >= argc) {
            fprintf(stderr, PROGRAM ": --%s needs a value (%s)\n", r->flag, r->arg);
            return CQD_CONFIG_ERROR;
        }
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

cqd_config_result cqd_config_load(int argc, char **argv, char **envp, cqd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cqd_config_result scanned = scan_argv(argc, argv);
    if (scanned != CQD_CONFIG_RUN)
        return scanned;
    for (int i = 0; i < ROW_COUNT; i++) {
        const cfg_row *r = &rows[i];
        if (!r->parse)
            continue;
        char source[80];
        snprintf(source, sizeof source, "default of --%s", r->flag);
        if (apply(r, source, r->def, cfg) < 0)
            return CQD_CONFIG_ERROR;
        const char *v = env_lookup(envp, r->env);
        if (v && apply(r, r->env, v, cfg) < 0)
            return CQD_CONFIG_ERROR;
    }
    // scan_argv vouched for the shape of argv: every flag is known and has its value.
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i] + 2;
        const char *eq = strchr(a, '=');
        const cfg_row *r = find_flag(a, eq ? (size_t)(eq - a) : strlen(a));
        if (!r->parse)
            continue;
        const char *v = !r->arg ? "true" : eq ? eq + 1 : argv[++i];
        char source[80];
        snprintf(source, sizeof source, "--%s", r->flag);
        if (apply(r, source, v, cfg) < 0)
            return CQD_CONFIG_ERROR;
    }
    return CQD_CONFIG_RUN;
}
