/// @file server/main.c
/// collisiond's entry point: configuration, the two listeners, the libuv
/// loop that owns the signals, and the drain on SIGTERM/SIGINT.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "net/json_arena.h"
#include "net/listen.h"
#include "net/transport.h"
#include "net/work.h"
#include "replay/replay.h"
#include "state/alloc.h"
#include "state/registry.h"
#include "state/server.h"
#include "store/store.h"

extern char **environ;

/// Exit statuses besides 0 and cqd_config_result's 2 (docs/API.md, "Exit
/// status"). 3, like 2, is final for the systemd unit: restarting cannot
/// free a port another process holds or give this host an address.
enum { CQD_EXIT_FAILED = 1, CQD_EXIT_LISTEN = 3 };

/// Everything main runs; lives on main's stack, reached through handle data.
typedef struct daemon_ctx {
    cqd_server srv;
    uv_loop_t *loop;
    uv_signal_t sigterm, sigint;
    cqd_http *http;
    cqd_stream *stream;
    cqd_work *pool; ///< both listeners' handler pool (NULL: handlers run inline)
    bool draining;
    int exit_code;
} daemon_ctx;

/// Writes "<http_port> <stream_port>\n" through a rename, so a reader
/// never sees a half-written file.
static int write_port_file(const char *path, int http_port, int stream_port)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    bool ok = fprintf(f, "%d %d\n", http_port, stream_port) > 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void close_signals(daemon_ctx *d)
{
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
}

/// Every stream connection has closed: stop HTTP (waits for its in-flight
/// requests) and let the loop end.
static void on_drained(void *arg)
{
    daemon_ctx *d = arg;
    cqd_http_stop(d->http);
    d->http = NULL;
    close_signals(d);
    uv_stop(d->loop);
}

static void begin_drain(daemon_ctx *d)
{
    d->draining = true;
    atomic_store_explicit(&d->srv.state, CQD_DRAINING, memory_order_release);
    cqd_http_quiesce(d->http);
    cqd_stream_drain(d->stream, on_drained, d);
}

static void on_signal(uv_signal_t *h, int signum)
{
    daemon_ctx *d = h->data;
    if (d->draining) {
        cqd_log(&d->srv.log, CQD_LOG_WARN, "signal %d during drain: exiting now", signum);
        _exit(1);
    }
    cqd_log(&d->srv.log, CQD_LOG_INFO, "signal %d: draining", signum);
    begin_drain(d);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/// Runs the loop until every handle has closed, then closes it.
static void close_loop(uv_loop_t *loop)
{
    uv_walk(loop, close_any, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
}

/// Each listener may hold --max-connections sockets; the usual soft limit
/// of 1024 descriptors would refuse a flood's connections long before that
/// (and with them every other client), so it is raised as far as allowed.
static void raise_fd_limit(cqd_server *srv)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t want = 2 * (rlim_t)srv->cfg.max_connections + 256;
    if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) {
        cqd_log(&srv->log, CQD_LOG_WARN, "only %llu file descriptors allowed for %d connections per listener",
                (unsigned long long)rl.rlim_max, srv->cfg.max_connections);
        want = rl.rlim_max;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        cqd_log(&srv->log, CQD_LOG_WARN, "cannot raise the file descriptor limit: %s", strerror(errno));
}

static int install_signals(daemon_ctx *d)
{
    d->sigterm.data = d->sigint.data = d;
    if (uv_signal_init(d->loop, &d->sigterm) != 0 || uv_signal_init(d->loop, &d->sigint) != 0 ||
        uv_signal_start(&d->sigterm, on_signal, SIGTERM) != 0 || uv_signal_start(&d->sigint, on_signal, SIGINT) != 0) {
        cqd_log(&d->srv.log, CQD_LOG_ERROR, "cannot install the signal handlers");
        return -1;
    }
    return 0;
}

/// The handler pool both listeners run their requests on, HTTP's (past
/// the CQD_ROUTE_INLINE ones) and every stream request: one thread more
/// than --workers. No more than --max-inflight requests are admitted at
/// once, both transports together, so with the default --workers a
/// thread is always left for a stream probe or a short request, however
/// many long ones run; and the requests that may each decode
/// --max-request-memory at once are --workers + 1, as DEPLOY.md counts.
static int pool_size(const cqd_config *cfg) { return cqd_config_workers(cfg) + 1; }

/// Both listening sockets, before either listener starts: a port in use
/// stops start-up before any thread runs. Returns 0 or -1 (logged).
static int open_sockets(daemon_ctx *d, cqd_listen_sock *http, cqd_listen_sock *stream)
{
    const cqd_config *cfg = &d->srv.cfg;
    if (cqd_listen_open(&d->srv.log, "http", cfg->listen_host, cfg->listen_port, http) < 0)
        return -1;
    if (cqd_listen_open(&d->srv.log, "stream", cfg->stream_host, cfg->stream_port, stream) == 0)
        return 0;
    close(http->fd);
    return -1;
}

/// Start-up: signals, sockets, HTTP, stream, port file. Returns 0 or the
/// exit status (logged); on failure after the stream started, the drain is
/// already under way.
static int start(daemon_ctx *d)
{
    if (install_signals(d) < 0)
        return CQD_EXIT_FAILED;
    raise_fd_limit(&d->srv);
    cqd_listen_sock http, stream;
    if (open_sockets(d, &http, &stream) < 0)
        return CQD_EXIT_LISTEN;
    d->http = cqd_http_start(&d->srv, &http, d->pool);
    close(http.fd); // the listener holds its own copy
    if (!d->http) {
        close(stream.fd);
        return CQD_EXIT_FAILED;
    }
    d->stream = cqd_stream_start(&d->srv, d->loop, stream.fd, d->pool);
    if (!d->stream) {
        cqd_http_stop(d->http);
        d->http = NULL;
        return CQD_EXIT_FAILED;
    }
    const char *port_file = d->srv.cfg.port_file;
    if (port_file[0] && write_port_file(port_file, http.port, stream.port) < 0) {
        cqd_log(&d->srv.log, CQD_LOG_ERROR, "cannot write the port file %s: %s", port_file, strerror(errno));
        begin_drain(d);
        return CQD_EXIT_FAILED;
    }
    cqd_log(&d->srv.log, CQD_LOG_INFO, "listening: http %s, stream %s", http.addr, stream.addr);
    return 0;
}

/// Shapes in all worlds (-1 when out of memory); *worlds gets their number.
static long long count_shapes(cqd_server *srv, int *worlds)
{
    cqd_world_info *info;
    if (cqd_registry_list(srv->worlds, &info, worlds) != 0)
        return -1;
    long long shapes = 0;
    for (int i = 0; i < *worlds; i++)
        shapes += info[i].shapes;
    cqd_free(info);
    return shapes;
}

/// Start-up's second half, while the probes answer: recovery, then ready
/// (/readyz 200), logged with what was recovered, as the line to wait for.
/// Returns 0 or -1 (logged).
static int recover(daemon_ctx *d)
{
    cqd_server *srv = &d->srv;
    uint64_t t0 = cqd_mono_ns();
    if (cqd_store_recover(srv->store) < 0)
        return -1;
    cqd_registry_limit(srv->worlds, srv->cfg.max_worlds); // after recovery: never drops an acknowledged world
    if (cqd_registry_cap_pairs(srv->worlds, srv->cfg.max_world_pairs) != 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "out of memory applying --max-world-pairs");
        return -1;
    }
    cqd_registry_limit_slots(srv->worlds, srv->cfg.max_shapes_total); // likewise: recovered storage is charged in full
    int worlds;
    long long shapes = count_shapes(srv, &worlds); // before READY: no request has changed them yet
    if (shapes < 0) {
        cqd_log(&srv->log, CQD_LOG_ERROR, "out of memory counting the recovered worlds");
        return -1;
    }
    double ms = (double)(cqd_mono_ns() - t0) / 1e6;
    atomic_store_explicit(&srv->state, CQD_READY, memory_order_release);
    cqd_log(&srv->log, CQD_LOG_INFO, "ready: %d worlds and %lld shapes recovered in %.1f ms%s", worlds, shapes, ms,
            srv->store ? "" : " (no data directory)");
    return 0;
}

int main(int argc, char **argv)
{
    cqd_json_install(); // before any jansson call
    // A subcommand, not the daemon: its options are not the daemon's.
    if (argc > 1 && strcmp(argv[1], "replay") == 0)
        return cqd_replay_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "inspect") == 0)
        return cqd_inspect_main(argc - 1, argv + 1, environ);
    daemon_ctx d = {0};
    cqd_config cfg;
    cqd_config_result loaded = cqd_config_load(argc, argv, environ, &cfg);
    if (loaded != CQD_CONFIG_RUN)
        return loaded;
    signal(SIGPIPE, SIG_IGN);
    if (cqd_server_init(&d.srv, &cfg) < 0) {
        fprintf(stderr, "collisiond: out of memory\n");
        return CQD_EXIT_FAILED;
    }
    const char *failpoint = getenv("COLLISIOND_FAILPOINT");
    if (cqd_failpoint_init(&d.srv.fp, failpoint) < 0) {
        fprintf(stderr, "collisiond: COLLISIOND_FAILPOINT '%s' is not name[:n[+]]\n", failpoint);
        cqd_server_destroy(&d.srv);
        return CQD_EXIT_FAILED;
    }
    // Corruption is found before listening; the long part of recovery runs
    // while the probes answer (/readyz 503 until it is done).
    if (cfg.data_dir[0] && !(d.srv.store = cqd_store_open(&d.srv))) {
        cqd_server_destroy(&d.srv);
        return CQD_EXIT_FAILED;
    }
    d.loop = uv_default_loop();
    // Without a data directory there is nothing to recover: ready before
    // listening, so a port file never names a daemon that answers 503.
    bool early = !d.srv.store, recovered = early && recover(&d) == 0;
    if (early && !recovered) {
        cqd_server_destroy(&d.srv);
        return CQD_EXIT_FAILED;
    }
    d.pool = cqd_work_new(pool_size(&cfg));
    d.exit_code = start(&d);
    if (d.exit_code == 0 && !early && !(recovered = recover(&d) == 0)) {
        d.exit_code = CQD_EXIT_FAILED;
        begin_drain(&d);
    }
    // A failed start runs the loop only to finish the drain it began.
    if (d.exit_code == 0 || d.draining)
        uv_run(d.loop, UV_RUN_DEFAULT);
    if (d.stream)
        cqd_stream_free(d.stream);
    close_loop(d.loop);
    if (d.pool) // drained by cqd_http_stop; again for a start that failed before HTTP did
        cqd_work_drain(d.pool);
    cqd_work_free(d.pool);
    // No request runs any more: the shutdown snapshot sees the final state.
    cqd_store_close(d.srv.store, recovered);
    d.srv.store = NULL;
    cqd_log(&d.srv.log, d.exit_code ? CQD_LOG_ERROR : CQD_LOG_INFO, "stopped");
    cqd_server_destroy(&d.srv);
    return d.exit_code;
}
