/* Query hits to JSON: ray hits, sweep hits and CCD first impacts. The ids
 * come from the caller, which maps the core's handles to client ids. */
#include "cqp/encode.h"

void cqp_write_ray_hit(cqp_writer *w, const char *id, const cq_ray_hit *h)
{
    cqp_obj_begin(w);
    cqp_key(w, "id");
    cqp_str(w, id);
    cqp_key(w, "distance");
    cqp_num(w, h->distance);
    cqp_key(w, "point");
    cqp_vec3(w, h->point);
    cqp_key(w, "normal");
    cqp_vec3(w, h->normal);
    cqp_obj_end(w);
}

void cqp_write_sweep_hit(cqp_writer *w, const char *id, const cq_sweep_hit *h)
{
    cqp_obj_begin(w);
    cqp_key(w, "id");
    cqp_str(w, id);
    cqp_key(w, "time");
    cqp_num(w, h->time);
    cqp_key(w, "point");
    cqp_vec3(w, h->point);
    if (h->has_normal) {
        cqp_key(w, "normal");
        cqp_vec3(w, h->normal);
    }
    cqp_obj_end(w);
}

void cqp_write_toi(cqp_writer *w, const char *id, const char *other, const cq_world_toi *t)
{
    cqp_obj_begin(w);
    cqp_key(w, "id");
    cqp_str(w, id);
    cqp_key(w, "other");
    cqp_str(w, other);
    cqp_key(w, "time");
    cqp_num(w, t->time);
    cqp_key(w, "point");
    cqp_vec3(w, t->point);
    cqp_key(w, "normal");
    cqp_vec3(w, t->normal);
    cqp_obj_end(w);
}
