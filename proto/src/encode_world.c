/* Worlds' answers (API.md): a put's summary, GET's detail, the listing,
 * a batch's counts, the export, and the ops endpoints' bodies. Handlers
 * hand over values; the keys and their order live here alone. */
#include "cqp/encode.h"

/* {"name", "settings", "shapes", "broadphase_pairs"}, left open. */
static void summary_open(cqp_writer *w, const cqp_world_view *v)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "name", v->name);
    cqp_key(w, "settings");
    cqp_write_settings(w, v->settings, v->durability);
    cqp_kv_int(w, "shapes", v->stats->shapes);
    cqp_kv_int(w, "broadphase_pairs", v->stats->broadphase_pairs);
}

void cqp_write_world_summary(cqp_writer *w, const cqp_world_view *v)
{
    summary_open(w, v);
    cqp_obj_end(w);
}

void cqp_write_world_detail(cqp_writer *w, const cqp_world_view *v)
{
    const cq_world_stats *st = v->stats;
    summary_open(w, v);
    cqp_kv_obj(w, "stats");
    cqp_kv_int(w, "shapes", st->shapes);
    cqp_kv_int(w, "capacity", st->capacity);
    cqp_kv_int(w, "broadphase_pairs", st->broadphase_pairs);
    cqp_kv_uint(w, "grows", st->grows);
    cqp_kv_uint(w, "sap_grows", st->sap_grows);
    cqp_kv_uint(w, "bvh_builds", st->bvh_builds);
    cqp_kv_uint(w, "bvh_refits", st->bvh_refits);
    cqp_kv_bool(w, "broadphase_stale", st->broadphase_stale);
    cqp_kv_bool(w, "bvh_stale", st->bvh_stale);
    cqp_obj_end(w);
    cqp_obj_end(w);
}

void cqp_write_world_entry(cqp_writer *w, const char *name, int shapes, cqp_durability durability)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "name", name);
    cqp_kv_int(w, "shapes", shapes);
    cqp_kv_str(w, "durability", cqp_durability_name(durability));
    cqp_obj_end(w);
}

int cqp_write_list(cqp_writer *w, const char *key, int n, cqp_item_writer item, void *ctx)
{
    int rc = 0;
    cqp_obj_begin(w);
    cqp_kv_arr(w, key);
    for (int i = 0; i < n && rc == 0; i++)
        rc = item(ctx, w, i);
    cqp_arr_end(w);
    cqp_obj_end(w);
    return rc;
}

void cqp_write_batch_counts(cqp_writer *w, int upserted, int moved, int removed, int shapes)
{
    cqp_obj_begin(w);
    cqp_kv_int(w, "upserted", upserted);
    cqp_kv_int(w, "moved", moved);
    cqp_kv_int(w, "removed", removed);
    cqp_kv_int(w, "shapes", shapes);
    cqp_obj_end(w);
}

void cqp_write_export(cqp_writer *w, const cq_world *world, const cq_world_handle *h, int n,
                      cqp_durability durability)
{
    cq_world_settings settings = cq_world_get_settings(world);
    /* Stored values, read back bit for bit by an import or a recovery: a
     * client's -0 stays -0 here, unlike in answers. */
    bool keep = w->keep_negative_zero;
    w->keep_negative_zero = true;
    cqp_obj_begin(w);
    cqp_key(w, "settings");
    cqp_write_settings(w, &settings, durability);
    cqp_kv_arr(w, "shapes");
    for (int i = 0; i < n; i++) {
        cq_world_body body;
        if (cq_world_get(world, h[i], &body) == CQ_OK)
            cqp_write_body(w, cq_world_id(world, h[i]), &body);
    }
    cqp_arr_end(w);
    cqp_obj_end(w);
    w->keep_negative_zero = keep;
}

void cqp_write_status(cqp_writer *w, const char *status)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "status", status);
    cqp_obj_end(w);
}

/* A shape tag as the client knows it: in a world its id (null once gone),
 * for the stateless endpoints the item's index in the request. */
static void fallback_tag(cqp_writer *w, const char *key, const cqp_fallback_view *v, const char *id, uint64_t tag)
{
    if (!v->labelled)
        cqp_kv_null(w, key); /* unknown whether the tag is a handle or an index */
    else if (!v->world)
        cqp_kv_uint(w, key, tag);
    else
        cqp_kv_str_or_null(w, key, id);
}

void cqp_write_fallback(cqp_writer *w, const cqp_fallback_view *v)
{
    const cq_fallback_record *r = v->rec;
    cqp_obj_begin(w);
    cqp_kv_uint(w, "seq", r->seq);
    if (v->labelled)
        cqp_kv_num(w, "time", v->time);
    else
        cqp_kv_null(w, "time");
    cqp_kv_str_or_null(w, "world", v->labelled ? v->world : NULL);
    fallback_tag(w, "a", v, v->id_a, r->tag_a);
    fallback_tag(w, "b", v, v->id_b, r->tag_b);
    cqp_kv_arr(w, "shapes");
    cqp_str(w, cq_shape_type_name((cq_shape_type)r->shape_a));
    cqp_str(w, cq_shape_type_name((cq_shape_type)r->shape_b));
    cqp_arr_end(w);
    cqp_kv_uint(w, "iterations", r->iterations);
    cqp_kv_str(w, "reason", cq_fallback_reason_name((cq_fallback_reason)r->reason));
    cqp_kv_str(w, "action", cq_fallback_action_name((cq_fallback_action)r->action));
    cqp_kv_str_or_null(w, "request_id", v->labelled ? v->request_id : NULL);
    cqp_obj_end(w);
}
