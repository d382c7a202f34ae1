/* The in-process server the request targets (fuzz_request, fuzz_msgpack)
 * answer with: no data directory, no listeners, logs to /dev/null, and
 * before every run the same state, so a saved input replays on its own:
 * the world "arena" holding one shape of each type, and no other world.
 * Define FUZZ_TARGET and include fuzz_check.h first. */
#ifndef FUZZ_SERVER_H
#define FUZZ_SERVER_H

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"
#include "fuzz_check.h"
#include "ops/config.h"
#include "state/registry.h"
#include "state/server.h"

#define FUZZ_ARENA_IMPORT                                                                                      \
    "{\"settings\":{\"skin\":0.02,\"capacity\":64},\"shapes\":["                                       \
    "{\"id\":\"ground\",\"shape\":{\"type\":\"plane\",\"normal\":[0,1,0],\"offset\":0},\"layer\":4},"  \
    "{\"id\":\"crate\",\"shape\":{\"type\":\"box\",\"half_extents\":[0.5,0.5,0.5]},"                 \
    "\"pose\":{\"position\":[0.8,0.5,0],\"rotation\":[0,0.3826834,0,0.9238795]},\"layer\":2},"         \
    "{\"id\":\"player\",\"shape\":{\"type\":\"capsule\",\"radius\":0.4,\"half_height\":0.5},"     \
    "\"pose\":{\"position\":[0,0.9,0]},\"velocity\":[3,0,0],\"layer\":1,\"mask\":6},"                \
    "{\"id\":\"bullet\",\"shape\":{\"type\":\"sphere\",\"radius\":0.05},"                           \
    "\"pose\":{\"position\":[-6,1,0]},\"velocity\":[400,0,0],\"layer\":8},"                            \
    "{\"id\":\"rock\",\"shape\":{\"type\":\"convex\",\"points\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1]],"  \
    "\"radius\":0.05},\"pose\":{\"position\":[2,0.2,1]}},"                                              \
    "{\"id\":\"shard\",\"shape\":{\"type\":\"triangle\",\"vertices\":[[0,0,0],[1,0,0],[0,0,1]]},"      \
    "\"pose\":{\"position\":[-1,0.5,-1]}},"                                                                \
    "{\"id\":\"terrain\",\"shape\":{\"type\":\"mesh\",\"vertices\":[[0,0,0],[10,0,0],[0,0,10],[10,1,10]],"\
    "\"triangles\":[[0,2,1],[1,2,3]]},\"pose\":{\"position\":[-5,-0.1,-5]}}]}"

/* Puts the server back in the state every run starts from. */
static void fuzz_server_reset(cqd_server *srv)
{
    int count = 0;
    cqd_world_info *worlds;
    check(cqd_registry_list(srv->worlds, &worlds, &count) == 0, "out of memory listing the worlds");
    for (int i = 0; i < count; i++)
        if (strcmp(worlds[i].name, "arena") != 0)
            cqd_registry_delete(srv->worlds, worlds[i].name);
    free(worlds);
    static const char arena[] = FUZZ_ARENA_IMPORT;
    cqd_request req = {.transport = "fuzz", .method = "PUT", .path = "/v1/worlds/arena",
                       .body = arena, .body_len = sizeof arena - 1};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(srv, &req, &resp);
    if (resp.status != 200 && resp.status != 201) {
        fprintf(stderr, "%s: the arena import failed (%d): %s\n", FUZZ_TARGET, resp.status, resp.body.data);
        abort();
    }
    cqd_response_free(&resp);
}

/* Starts srv with the default configuration but for the request limits
 * (limits; NULL keeps the defaults), ready, in the starting state. */
static void fuzz_server_init(cqd_server *srv, const cqp_limits *limits)
{
    char *argv[] = {"collisiond", NULL};
    char *envp[] = {NULL};
    cqd_config cfg;
    if (cqd_config_load(1, argv, envp, &cfg) != CQD_CONFIG_RUN)
        abort();
    cfg.data_dir[0] = '\0';
    cfg.access_log = CQD_ACCESS_ALL; // every hostile path and method goes through the access line
    if (limits)
        cfg.limits = *limits;
    if (cqd_server_init(srv, &cfg) != 0)
        abort();
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0)
        abort();
    srv->log.fd = null_fd;
    atomic_store(&srv->state, CQD_READY);
    fuzz_server_reset(srv);
}

#endif
