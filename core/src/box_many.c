/* Many pairs at once: each through cq_collide, box-box pairs included.
 * Box pairs were once gathered four at a time so their SAT ran a pair per
 * AVX2 lane; measured against the one-pair path (whose SAT runs its lanes
 * over B's axes and stops after the face axes for a pair apart), every
 * lanes-over-pairs form lost, since what follows the gaps is one pair's
 * work and the lanes must be taken apart again (docs/PERFORMANCE.md, issue
 * 28's batch). check_box_many holds the batch to one call's answers field
 * for field and its counters. */
#include "box_many.h"

int cq__collide_many(const cq_pair_query *q, int n, cq_contact *out)
{
    int status = CQ_OK;
    for (int i = 0; i < n; i++) {
        int st = cq_collide(&q[i], &out[i]);
        status = status == CQ_OK ? st : status;
    }
    return status;
}
