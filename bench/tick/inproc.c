/* The scene in a libcq world, ticked as the daemon ticks it: the batch's
 * moves by id through cq_world_apply, then cq_world_contacts with dt. */
#include <stdio.h>
#include <stdlib.h>

#include "tick.h"

static bool pose_of(const tk_box *b, cq_xform *out)
{
    cq_quat q = {b->q[0], b->q[1], b->q[2], b->q[3]};
    return cq_pose_from_quat(cq_v3(b->c[0], b->c[1], b->c[2]), q, out).status == CQ_OK;
}

/* Room for the touching pairs and first impacts of one tick. */
static bool size_out(tk_local *l, int pairs, int toi)
{
    free(l->out.pairs);
    free(l->out.toi);
    l->out = (cq_world_contacts_out){.pairs = malloc(sizeof *l->out.pairs * (size_t)pairs),
                                     .pair_capacity = pairs,
                                     .toi = malloc(sizeof *l->out.toi * (size_t)toi),
                                     .toi_capacity = toi};
    return l->out.pairs && l->out.toi;
}

bool tk_local_open(tk_local *l, const tk_scene *s, long max_pairs)
{
    *l = (tk_local){.dt = s->dt, .ops = calloc((size_t)s->n, sizeof *l->ops)};
    /* The daemon's defaults: skin 0 and every layer and mask bit. */
    cq_world_settings set = {.capacity = s->n, .max_pairs = max_pairs};
    if (!l->ops || cq_world_create(&set, &l->world) != CQ_OK)
        return false;
    for (int k = 0; k < s->n; k++) {
        const tk_box *b = &s->boxes[k];
        l->ops[k] = (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = s->ids[k],
                                  .shape = {.type = CQ_BOX, .box = {cq_v3(b->h[0], b->h[1], b->h[2])}},
                                  .velocity = cq_v3(b->v[0], b->v[1], b->v[2]),
                                  .layer = 0xffffffffu, .mask = 0xffffffffu};
        if (!pose_of(b, &l->ops[k].pose))
            return false;
    }
    int bad;
    if (cq_world_apply(l->world, l->ops, s->n, &bad) != CQ_OK)
        return false;
    for (int k = 0; k < s->n; k++)
        l->ops[k] = (cq_world_op){.kind = CQ_WORLD_MOVE, .id = s->ids[k]};
    return size_out(l, 4 * s->n + 16, s->n + 1);
}

void tk_local_stage(tk_local *l, const tk_scene *s)
{
    for (int k = 0; k < s->n; k++) {
        const tk_box *b = &s->boxes[k];
        pose_of(b, &l->ops[k].pose); /* the file's quaternions were accepted at open */
        l->ops[k].velocity = cq_v3(b->v[0], b->v[1], b->v[2]);
    }
}

bool tk_local_apply(tk_local *l)
{
    int bad;
    return cq_world_apply(l->world, l->ops, cq_world_count(l->world), &bad) == CQ_OK;
}

int tk_local_contacts(tk_local *l)
{
    cq_world_contacts_query q = {.dt = l->dt};
    int rc;
    /* Too small an array commits nothing: grow it and ask again. */
    while ((rc = cq_world_contacts(l->world, &q, &l->out)) == CQ_ERANGE)
        if (!size_out(l, 2 * l->out.pair_count + 16, 2 * l->out.toi_count + 16))
            return -1;
    return rc == CQ_OK ? l->out.pair_count : -1;
}

int tk_local_tick(tk_local *l)
{
    return tk_local_apply(l) ? tk_local_contacts(l) : -1;
}

void tk_local_close(tk_local *l)
{
    cq_world_destroy(l->world);
    free(l->ops);
    free(l->out.pairs);
    free(l->out.toi);
    *l = (tk_local){0};
}
