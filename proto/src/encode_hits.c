/* Query hits to JSON: ray hits, sweep hits and CCD first impacts. The ids
 * come from the caller, which maps the core's handles to client ids. */
#include "cqp/encode.h"

void cqp_write_ray_hit(cqp_writer *w, const char *id, const cq_ray_hit *h)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "id", id);
    cqp_kv_num(w, "distance", h->distance);
    cqp_kv_vec3(w, "point", h->point);
    cqp_kv_vec3(w, "normal", h->normal);
    cqp_obj_end(w);
}

void cqp_write_sweep_hit(cqp_writer *w, const char *id, const cq_sweep_hit *h)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "id", id);
    cqp_kv_num(w, "time", h->time);
    cqp_kv_vec3(w, "point", h->point);
    if (h->has_normal) {
        cqp_kv_vec3(w, "normal", h->normal);
    }
    cqp_obj_end(w);
}

void cqp_write_toi(cqp_writer *w, const char *id, const char *other, const cq_world_toi *t)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "id", id);
    cqp_kv_str(w, "other", other);
    cqp_kv_num(w, "time", t->time);
    cqp_kv_vec3(w, "point", t->point);
    cqp_kv_vec3(w, "normal", t->normal);
    cqp_obj_end(w);
}
