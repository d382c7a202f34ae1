/* cq-bench MODE ARGS...: the in-process benchmarks (see `make bench`). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "pairs") == 0)
        return bench_pairs(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "world") == 0)
        return bench_world(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "load") == 0)
        return bench_load(argc - 2, argv + 2);
    fprintf(stderr, "usage: cq-bench pairs FILE   (FILE from cq-gen pairs N SEED)\n"
                    "       cq-bench world SCENE RAYS FRAMES [SKIN]   (cq-gen scene N SEED, rays N SEED L)\n"
                    "       cq-bench load WHAT:SCENE[:COUNT]...   (WHAT: move, teleport, put; bench/load.c)\n");
    return 2;
}
