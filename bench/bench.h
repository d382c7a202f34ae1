/* cq-bench: in-process benchmarks. Each mode prints `key value` lines. */
#ifndef CQ_BENCH_H
#define CQ_BENCH_H

#include "cq/collision.h"
#include "cq/world.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* A cq-gen scene: one upsert per box (ops, ids NULL until
 * bench_scene_point_ids) and the motion state (pos, vel). */
typedef struct bench_scene {
    double L, dt;
    int n;
    cq_world_op *ops;
    cq_vec3 *pos, *vel;
    char (*ids)[16]; /* "box<k>" */
} bench_scene;

/* Reads a scene file into *s (owned by *s: bench_scene_free); false on a
 * bad file or no memory. */
bool bench_scene_read(const char *path, bench_scene *s);
void bench_scene_free(bench_scene *s);
/* Points every op's id at its box's id (once the arrays stop moving). */
void bench_scene_point_ids(bench_scene *s);
/* One frame of cq-gen's motion rule: pos, vel and the ops' poses and velocities. */
void bench_scene_advance(bench_scene *s);

/* `cq-bench pairs FILE`: box-box figures on cq-gen's OBB pairs. */
int bench_pairs(int argc, char **argv);

/* One pass of the box-box contact query over n pairs (bench/pairs.c):
 * the contact points found. Its own function, for callgrind's counts. */
int bench_contacts_pass(const cq_obb *a, const cq_obb *b, int n);

/* `cq-bench world SCENE RAYS FRAMES [SKIN]`: world frames (moves, then
 * contacts) on cq-gen's scene, and closest-hit rays on cq-gen's rays. */
int bench_world(int argc, char **argv);

/* `cq-bench load WHAT:SCENE...`: a world under game load (load.c). */
int bench_load(int argc, char **argv);

#endif
