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
    cq_world_settings settings = cq_world_get_settings(world);
    /* Stored values, read back bit for bit by an import or a recovery: a
     * client's -0 stays -0 here, unlike in answers. */
    bool keep = out->keep_negative_zero;
    out->keep_negative_zero = true;
    cqp_obj_begin(out);
    cqp_key(out, "settings");
    cqp_write_settings(out, &settings, durability);
    cqp_key(out, "shapes");
    cqp_arr_begin(out);
    for (int i = 0; i < n; i++) {
        cq_world_body body;
        if (cq_world_get(world, h[i], &body) == CQ_OK)
            cqp_write_body(out, cq_world_id(world, h[i]), &body);
    }
    cqp_arr_end(out);
    cqp_obj_end(out);
    out->keep_negative_zero = keep;
    cqd_free(h);
    return CQ_OK;
}
