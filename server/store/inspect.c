/// @file server/store/inspect.c
/// `collisiond inspect`: runs recovery read-only into a private server
/// (no listener, no file opened for writing) and prints what it found.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/registry.h"
#include "state/alloc.h"
#include "state/server.h"
#include "store_internal.h"

/// The worlds recovered, with their shape counts, durability and last
/// sequence numbers.
static void print_worlds(cqd_server *srv)
{
    int n;
    cqd_world_info *info;
    if (cqd_registry_list(srv->worlds, &info, &n) != 0) {
        printf("worlds: out of memory listing them\n");
        return;
    }
    printf("worlds: %d (ephemeral worlds, durability none, are never in the data directory)\n", n);
    for (int i = 0; i < n; i++) {
        cqd_world *w = cqd_world_acquire(srv->worlds, info[i].name, false);
        unsigned long long seq = w ? (unsigned long long)w->seq : 0;
        if (w)
            cqd_world_release(srv->worlds, w);
        printf("  %s: %d shapes, durability %s, last sequence number %llu\n", info[i].name, info[i].shapes,
               cqp_durability_name(info[i].durability), seq);
    }
    cqd_free(info);
}

static int report(cqd_store *st, bool applied)
{
    const cqd_recovery *r = &st->rec;
    const cqd_config *cfg = &st->srv->cfg;
    printf("data directory: %s\n", st->dir);
    for (int i = 0; i < r->note_count; i++)
        printf("  %s\n", r->notes[i]);
    if (applied) {
        printf("journal records after the snapshot: %llu (%llu already in it, %llu rejected as when first sent)\n",
               (unsigned long long)r->records, (unsigned long long)r->skipped, (unsigned long long)r->rejected);
        printf("last sequence number: %llu\n", (unsigned long long)(r->next - 1));
        print_worlds(st->srv);
    }
    int status = r->failed || (r->corrupt && !cfg->repair) ? 1 : 0;
    if (r->failed)
        printf("start-up: would fail\n");
    else if (status)
        printf("start-up: would refuse (corruption); with --repair it would recover the state above\n");
    else
        printf("start-up: would recover the state above%s\n", r->corrupt ? " (with --repair)" : "");
    return status;
}

int cqd_inspect_main(int argc, char **argv, char **envp)
{
    cqd_config cfg;
    cqd_config_result loaded = cqd_config_load(argc, argv, envp, &cfg);
    if (loaded != CQD_CONFIG_RUN)
        return loaded;
    if (!cfg.data_dir[0]) {
        fprintf(stderr, "collisiond inspect: --data-dir is empty: there is nothing to inspect\n");
        return 2;
    }
    cqd_server srv;
    if (cqd_server_init(&srv, &cfg) < 0) {
        fprintf(stderr, "collisiond inspect: out of memory\n");
        return 1;
    }
    int status = 1;
    cqd_store *st = cqd_store_new(&srv, true);
    if (st) {
        srv.store = st;
        bool applied = cqd_store_scan(st) == 0 && cqd_store_recover(st) == 0;
        status = report(st, applied);
        srv.store = NULL;
        cqd_store_free(st);
    }
    cqd_server_destroy(&srv);
    return status;
}
