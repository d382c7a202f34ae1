/// @file server/api/export.c
/// The export format of a world (export.h).
#include "export.h"

#include <stdlib.h>

#include "cqp/encode.h"
#include "h_common.h"
#include "state/alloc.h"

int cqd_write_export(cqp_writer *out, const cq_world *world, cqp_durability durability)
{
    int n = cq_world_count(world);
    cq_world_handle *h = cqd_h_array((size_t)n, sizeof *h);
    /* the count cannot change under the lock, so the list fits */
    int rc = h ? cq_world_list(world, h, n, &n) : CQ_ENO_MEMORY;
    if (rc != CQ_OK) {
        cqd_free(h);
        return rc;
    }
    cqp_write_export(out, world, h, n, durability);
    cqd_free(h);
    return CQ_OK;
}
