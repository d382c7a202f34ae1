/// @file server/state/server.c
/// The daemon's state: set-up, tear-down, and the two clocks.
#include "server.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "record/record.h"
#include "registry.h"
#include "thread.h"

/// splitmix64: spreads a weak seed over all 64 bits.
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/// A per-process random id; falls back to time, pid and an address when
/// the kernel has no entropy to give (the id only needs to be unlikely to
/// repeat, it protects nothing).
static uint64_t random_id(const void *salt)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v && v)
        return v;
    return mix64(cqd_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)salt) | 1;
}

int cqd_server_init(cqd_server *srv, const cqd_config *cfg)
{
    memset(srv, 0, sizeof *srv);
    srv->cfg = *cfg;
    srv->log = (cqd_logger){.level = cfg->log_level, .fd = 2};
    cqd_access_init(&srv->access, cfg->access_log, cfg->access_log_sample, cfg->slow_request_ms);
    srv->worlds = cqd_registry_create();
    if (!srv->worlds)
        return -1;
    if (pthread_mutex_init(&srv->threads_lock, NULL) != 0) {
        cqd_registry_destroy(srv->worlds);
        srv->worlds = NULL;
        return -1;
    }
    atomic_init(&srv->state, CQD_STARTING);
    atomic_init(&srv->fallback_clock, 0);
    atomic_init(&srv->request_seq, 0);
    atomic_init(&srv->stream_connections, 0);
    atomic_init(&srv->stream_reply_bytes, 0);
    atomic_init(&srv->http_reply_bytes, 0);
    cqd_admit_init(&srv->admit, cfg->max_inflight, cfg->max_buffered);
    srv->boot_id = random_id(srv);
    srv->started = cqd_now();
    // A recording that cannot be opened is logged; the daemon serves on without it.
    if (cfg->record[0])
        srv->recorder = cqd_record_open(cfg->record, &srv->log);
    return 0;
}

void cqd_server_destroy(cqd_server *srv)
{
    cqd_registry_destroy(srv->worlds);
    srv->worlds = NULL;
    for (cqd_thread *t = srv->threads, *next; t; t = next) {
        next = t->next;
        pthread_mutex_destroy(&t->label_lock);
        cqd_json_arena_free(&t->json);
        cqd_free(t->spare);
        cqd_free(t);
    }
    srv->threads = NULL;
    pthread_mutex_destroy(&srv->threads_lock);
    cqd_record_close(srv->recorder);
    srv->recorder = NULL;
}

double cqd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t cqd_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
