/* Internal: the 15 box-box SAT gaps, shared by the verdict, the
 * explanation and the contact. */
#ifndef CQ_SAT_BOX_H
#define CQ_SAT_BOX_H

#include "cq/collision.h"

/* Gaps in world units of the first count axes (6 = faces only, 15 = all).
 * A skipped (degenerate) axis gets -INFINITY and skipped[k] = true. */
void cq_obb_gaps(const cq_obb *a, const cq_obb *b, int count, double gap[CQ_SAT_AXIS_COUNT],
                 bool skipped[CQ_SAT_AXIS_COUNT]);

#endif
