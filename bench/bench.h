/* cq-bench: in-process benchmarks. Each mode prints `key value` lines. */
#ifndef CQ_BENCH_H
#define CQ_BENCH_H

#include "cq/collision.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* `cq-bench pairs FILE`: box-box figures on cq-gen's OBB pairs. */
int bench_pairs(int argc, char **argv);

/* One pass of the box-box contact query over n pairs (bench/pairs.c):
 * the contact points found. Its own function, for callgrind's counts. */
int bench_contacts_pass(const cq_obb *a, const cq_obb *b, int n);

/* `cq-bench world SCENE RAYS FRAMES [SKIN]`: world frames (moves, then
 * contacts) on cq-gen's scene, and closest-hit rays on cq-gen's rays. */
int bench_world(int argc, char **argv);

#endif
