/* Internal: box-box contacts for many pairs at once, their SAT four pairs
 * to a vector (box_many.c). */
#ifndef CQ_BOX_MANY_H
#define CQ_BOX_MANY_H

#include "cq/collision.h"

/// cq_collide for each of q[0..n) into out[0..n) (caller-owned arrays,
/// borrowed for the call): the same contacts, field for field, as n calls
/// of cq_collide. Box-box pairs have their 15 SAT gaps computed four pairs
/// at a time (AVX2 where the CPU has it); any other pair, and the last
/// pairs of a group short of four, go through cq_collide as they are.
/// Returns CQ_OK, or the first error cq_collide gave (the other pairs are
/// still answered).
int cq__collide_many(const cq_pair_query *q, int n, cq_contact *out);

#endif
