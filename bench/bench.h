/* cq-bench: in-process benchmarks. Each mode prints `key value` lines. */
#ifndef CQ_BENCH_H
#define CQ_BENCH_H

#include "cq/collision.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* `cq-bench pairs FILE`: box-box figures on gen.py's OBB pairs. */
int bench_pairs(int argc, char **argv);

/* `cq-bench world SCENE RAYS FRAMES [SKIN]`: world frames (moves, then
 * contacts) on gen.py's scene, and closest-hit rays on gen.py's rays. */
int bench_world(int argc, char **argv);

#endif
