/* The world, shape and batch calls (docs/CLIENTS.md's table). Mutations
 * are marked so: their lost replies are CQC_EUNKNOWN. */
#include "cqc_int.h"

void cqc_world_settings_init(cqc_world_settings *s)
{
    *s = (cqc_world_settings){.skin = -1};
}

cqc_pose cqc_pose_identity(void)
{
    return (cqc_pose){.rotation = {0, 0, 0, 1}};
}

cqc_status cqc_q_health(cqc_conn *c, bool ready)
{
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "GET", ready ? "/readyz" : "/healthz", NULL, NULL, NULL, false);
    return s ? s : cqc__end(c, &w, CQC_K_NONE, false, NULL, 0);
}

const char *cqc__durability_name(cqc_durability d)
{
    static const char *const names[] = {NULL, "full", "shapes", "none"};
    return d > CQC_DURABILITY_UNSET && d <= CQC_DURABILITY_NONE ? names[d] : NULL;
}

static void w_settings(cqc_w *w, const cqc_world_settings *s)
{
    const uint32_t *it[3] = {&s->gjk_max_iterations, &s->epa_max_iterations, &s->sweep_max_iterations};
    static const char *const names[3] = {"gjk_max_iterations", "epa_max_iterations", "sweep_max_iterations"};
    const char *durability = cqc__durability_name(s->durability);
    uint32_t n = (s->skin >= 0) + (s->capacity > 0) + (durability != NULL);
    for (int i = 0; i < 3; i++)
        n += *it[i] > 0;
    cqc__w_map(w, n);
    if (durability) {
        cqc__w_str(w, "durability");
        cqc__w_str(w, durability);
    }
    if (s->skin >= 0) {
        cqc__w_str(w, "skin");
        cqc__w_dbl(w, s->skin);
    }
    if (s->capacity > 0) {
        cqc__w_str(w, "capacity");
        cqc__w_uint(w, s->capacity);
    }
    for (int i = 0; i < 3; i++)
        if (*it[i] > 0) {
            cqc__w_str(w, names[i]);
            cqc__w_uint(w, *it[i]);
        }
}

cqc_status cqc_q_world_create(cqc_conn *c, const char *world, const cqc_world_settings *settings,
                              cqc_world_info *out)
{
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "PUT", "/v1/worlds/", world, NULL, NULL, settings != NULL);
    if (s)
        return s;
    if (settings)
        w_settings(&w, settings);
    return cqc__end(c, &w, CQC_K_WORLD, true, out, 0);
}

cqc_status cqc_q_world_get(cqc_conn *c, const char *world, cqc_world_info *out)
{
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "GET", "/v1/worlds/", world, NULL, NULL, false);
    return s ? s : cqc__end(c, &w, CQC_K_WORLD, false, out, 0);
}

cqc_status cqc_q_world_delete(cqc_conn *c, const char *world)
{
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "DELETE", "/v1/worlds/", world, NULL, NULL, false);
    return s ? s : cqc__end(c, &w, CQC_K_NONE, true, NULL, 0);
}

cqc_status cqc_q_world_export(cqc_conn *c, const char *world, cqc_blob *out)
{
    if (!out)
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "GET", "/v1/worlds/", world, "/export", NULL, false);
    return s ? s : cqc__end(c, &w, CQC_K_BLOB, false, out, 0);
}

/* An import document must be one whole MessagePack value, or the frame
 * around it would not be one envelope. */
cqc_status cqc_q_world_import(cqc_conn *c, const char *world, const void *doc, size_t len, cqc_world_info *out)
{
    cqc_rd r = {doc, (const char *)doc + len, false, false};
    if (!doc || len == 0 || !cqc__rd_skip(&r) || r.p != r.end)
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "PUT", "/v1/worlds/", world, NULL, NULL, true);
    if (s)
        return s;
    cqc__w_raw(&w, doc, len);
    return cqc__end(c, &w, CQC_K_WORLD, true, out, 0);
}

cqc_status cqc_q_shape_put(cqc_conn *c, const char *world, const cqc_body *body, bool *created)
{
    if (!body || !cqc__shape_ok(&body->shape))
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "PUT", "/v1/worlds/", world, "/shapes/", body->id, true);
    if (s)
        return s;
    cqc__w_body(&w, body, false);
    return cqc__end(c, &w, CQC_K_PUT, true, created, 0);
}

cqc_status cqc_q_shape_get(cqc_conn *c, const char *world, const char *id, cqc_stored *out)
{
    if (!out)
        return CQC_EINVAL;
    *out = (cqc_stored){0}; /* holds nothing until its reply: releasing it is safe whatever happens */
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "GET", "/v1/worlds/", world, "/shapes/", id, false);
    return s ? s : cqc__end(c, &w, CQC_K_STORED, false, out, 0);
}

cqc_status cqc_q_shape_delete(cqc_conn *c, const char *world, const char *id)
{
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "DELETE", "/v1/worlds/", world, "/shapes/", id, false);
    return s ? s : cqc__end(c, &w, CQC_K_NONE, true, NULL, 0);
}

static bool batch_ok(const cqc_batch *b)
{
    if (b->upsert_count > UINT32_MAX || b->move_count > UINT32_MAX || b->remove_count > UINT32_MAX)
        return false;
    if ((b->upsert_count && !b->upserts) || (b->remove_count && !b->remove_ids) ||
        (b->move_count && (!b->move_ids || !b->move_positions)))
        return false;
    for (size_t i = 0; i < b->upsert_count; i++)
        if (!b->upserts[i].id || !cqc__shape_ok(&b->upserts[i].shape))
            return false;
    for (size_t i = 0; i < b->move_count; i++)
        if (!b->move_ids[i])
            return false;
    for (size_t i = 0; i < b->remove_count; i++)
        if (!b->remove_ids[i])
            return false;
    return true;
}

cqc_status cqc_q_batch(cqc_conn *c, const char *world, const cqc_batch *b, cqc_batch_result *out)
{
    if (!b || !batch_ok(b))
        return CQC_EINVAL;
    cqc_w w;
    cqc_status s = cqc__begin(c, &w, "POST", "/v1/worlds/", world, "/batch", NULL, true);
    if (s)
        return s;
    cqc__w_map(&w, (b->upsert_count > 0) + (b->move_count > 0) + (b->remove_count > 0));
    if (b->upsert_count) {
        cqc__w_str(&w, "upsert");
        cqc__w_arr(&w, (uint32_t)b->upsert_count);
        for (size_t i = 0; i < b->upsert_count; i++)
            cqc__w_body(&w, &b->upserts[i], true);
    }
    if (b->move_count)
        cqc__w_moves(&w, b);
    if (b->remove_count) {
        cqc__w_str(&w, "remove");
        cqc__w_arr(&w, (uint32_t)b->remove_count);
        for (size_t i = 0; i < b->remove_count; i++)
            cqc__w_str(&w, b->remove_ids[i]);
    }
    return cqc__end(c, &w, CQC_K_BATCH, true, out, 0);
}

cqc_status cqc_health(cqc_conn *c, bool ready) { CQC_BLOCK(c, cqc_q_health(c, ready)); }
cqc_status cqc_world_create(cqc_conn *c, const char *world, const cqc_world_settings *settings, cqc_world_info *out)
{
    CQC_BLOCK(c, cqc_q_world_create(c, world, settings, out));
}
cqc_status cqc_world_get(cqc_conn *c, const char *world, cqc_world_info *out)
{
    CQC_BLOCK(c, cqc_q_world_get(c, world, out));
}
cqc_status cqc_world_delete(cqc_conn *c, const char *world) { CQC_BLOCK(c, cqc_q_world_delete(c, world)); }
cqc_status cqc_world_export(cqc_conn *c, const char *world, cqc_blob *out)
{
    CQC_BLOCK(c, cqc_q_world_export(c, world, out));
}
cqc_status cqc_world_import(cqc_conn *c, const char *world, const void *doc, size_t len, cqc_world_info *out)
{
    CQC_BLOCK(c, cqc_q_world_import(c, world, doc, len, out));
}
cqc_status cqc_shape_put(cqc_conn *c, const char *world, const cqc_body *body, bool *created)
{
    CQC_BLOCK(c, cqc_q_shape_put(c, world, body, created));
}
cqc_status cqc_shape_get(cqc_conn *c, const char *world, const char *id, cqc_stored *out)
{
    CQC_BLOCK(c, cqc_q_shape_get(c, world, id, out));
}
cqc_status cqc_shape_delete(cqc_conn *c, const char *world, const char *id)
{
    CQC_BLOCK(c, cqc_q_shape_delete(c, world, id));
}
cqc_status cqc_batch_apply(cqc_conn *c, const char *world, const cqc_batch *b, cqc_batch_result *out)
{
    CQC_BLOCK(c, cqc_q_batch(c, world, b, out));
}
