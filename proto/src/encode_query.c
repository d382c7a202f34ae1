/* World queries' answers (API.md): broadphase pairs, contacts, ray hits,
 * a sweep's hit, an overlap's ids. The world is still locked by the
 * caller: the ids written are the world's own strings. */
#include "cqp/encode.h"

void cqp_write_broadphase(cqp_writer *w, const cq_world *world, const cq_world_pair *p, int n)
{
    cqp_obj_begin(w);
    cqp_kv_arr(w, "pairs");
    for (int i = 0; i < n; i++) {
        cqp_arr_begin(w);
        cqp_str(w, cq_world_id(world, p[i].a));
        cqp_str(w, cq_world_id(world, p[i].b));
        cqp_arr_end(w);
    }
    cqp_arr_end(w);
    cqp_obj_end(w);
}

static void write_pair_contact(cqp_writer *w, const cq_world *world, const cq_world_contact *k)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "a", cq_world_id(world, k->a));
    cqp_kv_str(w, "b", cq_world_id(world, k->b));
    cqp_write_contact_fields(w, &k->contact, NULL);
    cqp_obj_end(w);
}

void cqp_write_contacts(cqp_writer *w, const cq_world *world, const cq_world_contacts_out *out)
{
    cqp_obj_begin(w);
    cqp_kv_arr(w, "pairs");
    for (int i = 0; i < out->pair_count; i++)
        write_pair_contact(w, world, &out->pairs[i]);
    cqp_arr_end(w);
    cqp_kv_arr(w, "toi");
    for (int i = 0; i < out->toi_count; i++) {
        const cq_world_toi *t = &out->toi[i];
        cqp_write_toi(w, cq_world_id(world, t->id), cq_world_id(world, t->other), t);
    }
    cqp_arr_end(w);
    cqp_kv_obj(w, "stats");
    cqp_kv_int(w, "broadphase_pairs", cq_world_get_stats(world).broadphase_pairs);
    cqp_kv_int(w, "tested", out->tested);
    cqp_kv_int(w, "touching", out->pair_count);
    cqp_kv_int(w, "swept", out->swept);
    cqp_obj_end(w);
    cqp_obj_end(w);
}

/* A ray's hit, or null for a miss. */
static void write_world_ray_hit(cqp_writer *w, const cq_world *world, const cq_world_ray_hit *h)
{
    if (h->hit.hit)
        cqp_write_ray_hit(w, cq_world_id(world, h->id), &h->hit);
    else
        cqp_null(w);
}

void cqp_write_ray_hits(cqp_writer *w, const cq_world *world, const cq_world_ray_hit *hits, int rays)
{
    cqp_obj_begin(w);
    cqp_kv_arr(w, "hits");
    for (int i = 0; i < rays; i++)
        write_world_ray_hit(w, world, &hits[i]);
    cqp_arr_end(w);
    cqp_obj_end(w);
}

void cqp_write_ray_hits_all(cqp_writer *w, const cq_world *world, const cq_world_ray_hit *hits, const int *first,
                            int rays)
{
    cqp_obj_begin(w);
    cqp_kv_arr(w, "hits");
    for (int i = 0; i < rays; i++) {
        cqp_arr_begin(w);
        for (int k = first[i]; k < first[i + 1]; k++)
            write_world_ray_hit(w, world, &hits[k]);
        cqp_arr_end(w);
    }
    cqp_arr_end(w);
    cqp_obj_end(w);
}

void cqp_write_sweep(cqp_writer *w, const cq_world *world, const cq_world_sweep_hit *h)
{
    cqp_obj_begin(w);
    cqp_key(w, "hit");
    if (h->hit.hit)
        cqp_write_sweep_hit(w, cq_world_id(world, h->id), &h->hit);
    else
        cqp_null(w);
    cqp_obj_end(w);
}

void cqp_write_overlap(cqp_writer *w, const cq_world *world, const cq_world_handle *ids, int n)
{
    cqp_obj_begin(w);
    cqp_kv_arr(w, "ids");
    for (int i = 0; i < n; i++)
        cqp_str(w, cq_world_id(world, ids[i]));
    cqp_arr_end(w);
    cqp_obj_end(w);
}
