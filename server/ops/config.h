/// @file server/ops/config.h
/// The daemon's settings. One table (config.c) drives the flags, the
/// COLLISIOND_* environment variables, the defaults and the --help text;
/// precedence is flag > environment > default.
#ifndef CQD_CONFIG_H
#define CQD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "cqp/decode.h"

/// fsync policy of the journal.
typedef enum cqd_fsync { CQD_FSYNC_ALWAYS, CQD_FSYNC_EVERYSEC, CQD_FSYNC_NO } cqd_fsync;

/// Log levels, least verbose first.
typedef enum cqd_log_level { CQD_LOG_ERROR, CQD_LOG_WARN, CQD_LOG_INFO, CQD_LOG_DEBUG } cqd_log_level;

/// Which finished requests get an access line (--access-log), fewest first.
typedef enum cqd_access_mode { CQD_ACCESS_OFF, CQD_ACCESS_ERRORS, CQD_ACCESS_SAMPLE, CQD_ACCESS_ALL } cqd_access_mode;

typedef struct cqd_config {
    char listen_host[64];     ///< --listen host part (default 127.0.0.1)
    int listen_port;          ///< --listen port (default 7878; 0 = ephemeral)
    char stream_host[64];     ///< --stream-listen (default 127.0.0.1:7879)
    int stream_port;
    char data_dir[512];       ///< --data-dir (default /var/lib/collisiond; "" = no durability)
    cqd_fsync fsync;          ///< --fsync always|everysec|no (default everysec)
    long long snapshot_every; ///< --snapshot-every BYTES of journal (default 64M; 0 = never)
    bool repair;              ///< --repair: start despite corruption, keeping the valid prefix
    int threads;              ///< --threads (default: online cores)
    int workers;              ///< --workers: the HTTP handler pool's most threads (0: auto, --max-inflight; cqd_config_workers)
    size_t max_body;          ///< --max-body BYTES (default 16M)
    int max_connections;      ///< --max-connections (default 1024)
    int max_connections_per_ip; ///< --max-connections-per-ip (default 0: no limit)
    int timeout_s;            ///< --timeout seconds an idle/slow HTTP client may take (default 30)
    int request_timeout_s;    ///< --request-timeout SECONDS a query may compute, from its handler's start; 503 beyond (default 30; 0: off)
    size_t min_body_rate;     ///< --min-body-rate BYTES a second an HTTP body must average after its grace, a stream request still arriving bring in each window (default 1K; 0: off)
    int min_body_grace_s;     ///< --min-body-grace SECONDS after the head before the rate counts (default 10)
    int max_inflight;         ///< --max-inflight requests run or answered at once; 503 beyond (default 256)
    size_t max_buffered;      ///< --max-buffered HTTP body bytes held while they arrive; 503 beyond (default 512M)
    size_t max_request_memory; ///< --max-request-memory: decoded JSON one request may hold; 413 beyond (default 256M)
    size_t max_response;      ///< --max-response BYTES: the largest response body; 422 beyond (default 64M)
    size_t max_stream_reply_buffered; ///< --max-stream-reply-buffered: unwritten reply bytes of one stream connection before it pauses (default 4M)
    size_t max_http_reply_total; ///< --max-http-reply-total: HTTP answer bytes made and not yet sent; past it answers are short (default 256M)
    size_t max_stream_reply_total; ///< --max-stream-reply-total: unwritten reply bytes of all stream connections; no request starts past it (default 128M)
    int max_world_pairs;      ///< --max-world-pairs broadphase pairs per world; 422 beyond (default 1000000)
    int max_worlds;           ///< --max-worlds held at once; 422 beyond (default 10000)
    int max_shapes_total;     ///< --max-shapes-total slots all worlds' storage may hold; 422 beyond (default 1M)
    int metrics_worlds;       ///< --metrics-worlds with per-world series in /metrics, the largest; the rest summed (default 100)
    char token[256];          ///< --token, or the first line of --token-file: bearer token, "" = no auth
    cqd_log_level log_level;  ///< --log-level error|warn|info|debug (default info); not the access lines
    cqd_access_mode access_log; ///< --access-log off|errors|sample|all (default sample)
    int access_log_sample;    ///< --access-log-sample N: 1 in N ordinary requests logged by sample (default 1000)
    int slow_request_ms;      ///< --slow-request MS: a request this long is logged in every mode but off (default 16)
    cqp_limits limits;        ///< --max-pairs, --max-rays, --max-hull-points, --max-mesh-triangles, --max-batch, --max-hits, --max-world-capacity
    char port_file[512];      ///< --port-file: after start-up write "http_port stream_port\n" (tests use ephemeral ports)
    char record[512];         ///< --record FILE: append every request and its response (record.h); "" = none
} cqd_config;

/// Outcome of cqd_config_load. Every outcome but RUN is the process's exit
/// status: `if (r != CQD_CONFIG_RUN) return r;`.
typedef enum cqd_config_result {
    CQD_CONFIG_RUN = -1,  ///< start the daemon
    CQD_CONFIG_EXIT = 0,  ///< --help or --version was printed: exit 0
    CQD_CONFIG_ERROR = 2, ///< the message was printed to stderr: exit 2
} cqd_config_result;

/// Fills cfg from the defaults, then the environment (envp, NULL-terminated
/// "NAME=value" strings), then argv; reads --token-file. --help (or -h)
/// and --version print to stdout; an error's message goes to stderr.
cqd_config_result cqd_config_load(int argc, char **argv, char **envp, cqd_config *cfg);

/// The HTTP handler pool's most threads: --workers, or for auto
/// --max-inflight (every request admitted can run at once).
int cqd_config_workers(const cqd_config *cfg);

/// The version string, "collisiond " and the VERSION file's text; static.
const char *cqd_version(void);

#endif
