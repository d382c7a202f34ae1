/* Internal: contacts for many pairs at once (box_many.c). */
#ifndef CQ_BOX_MANY_H
#define CQ_BOX_MANY_H

#include "cq/collision.h"

/// cq_collide for each of q[0..n) into out[0..n) (caller-owned arrays,
/// borrowed for the call): the same contacts, field for field, as n calls
/// of cq_collide, which answers each (box_many.c says why box pairs are
/// not run several to a vector). Returns CQ_OK, or the first error cq_collide gave (the other pairs are
/// still answered).
int cq__collide_many(const cq_pair_query *q, int n, cq_contact *out);

#endif
