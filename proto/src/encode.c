/* Core values to JSON or MessagePack (API.md section 1): contacts, shapes, poses, stored
 * bodies and world settings. Key order follows API.md, so responses are
 * byte-identical for identical results. */
#include "cqp/encode.h"

#include "encode_internal.h"

#include "cq/hull.h"
#include "cq/mesh.h"

static void write_point(cqp_writer *w, const cq_contact_point *pt)
{
    char feature[32];
    cqp_obj_begin(w);
    cqp_kv_vec3(w, "position", pt->position);
    cqp_kv_num(w, "depth", pt->depth);
    cqp_kv_str(w, "feature", cq_feature_format(pt->feature, feature, (int)sizeof feature));
    cqp_obj_end(w);
}

static void write_fallback(cqp_writer *w, const cq_contact *c)
{
    if (c->fallback_reason == CQ_FB_NONE && c->fallback_action == CQ_FBA_NONE) {
        cqp_null(w);
        return;
    }
    cqp_obj_begin(w);
    cqp_kv_str(w, "reason", cq_fallback_reason_name(c->fallback_reason));
    cqp_kv_str(w, "action", cq_fallback_action_name(c->fallback_action));
    cqp_obj_end(w);
}

static void write_axes(cqp_writer *w, const cq_sat_axis *explain)
{
    cqp_arr_begin(w);
    for (int i = 0; i < CQ_SAT_AXIS_COUNT; i++) {
        cqp_obj_begin(w);
        cqp_kv_str(w, "name", cq_sat_axis_name(i));
        if (explain[i].skipped) {
            cqp_kv_bool(w, "skipped", true);
        } else {
            cqp_kv_num(w, "gap", explain[i].gap);
        }
        cqp_obj_end(w);
    }
    cqp_arr_end(w);
}

void cqp_write_contact_fields(cqp_writer *w, const cq_contact *c, const cq_sat_axis *explain)
{
    if (!explain && cqp__mp_contact_fields(w, c))
        return;
    cqp_kv_bool(w, "overlap", c->overlap);
    cqp_kv_num(w, "distance", c->distance);
    cqp_kv_num(w, "depth", c->depth);
    if (c->has_normal) {
        cqp_kv_vec3(w, "normal", c->normal);
    }
    cqp_kv_arr(w, "points");
    int count = c->point_count < 0 ? 0 : c->point_count > CQ_MAX_POINTS ? CQ_MAX_POINTS : c->point_count;
    for (int i = 0; i < count; i++)
        write_point(w, &c->points[i]);
    cqp_arr_end(w);
    if (c->has_distance && c->distance > 0) {
        cqp_kv_obj(w, "witness");
        cqp_kv_vec3(w, "a", c->witness_a);
        cqp_kv_vec3(w, "b", c->witness_b);
        cqp_obj_end(w);
    }
    cqp_kv_str(w, "algorithm", cq_algorithm_name(c->algorithm));
    cqp_key(w, "fallback");
    write_fallback(w, c);
    if (c->sat_axis >= 0 || c->algorithm == CQ_ALG_SAT_BOX_BOX) {
        cqp_kv_obj(w, "sat");
        cqp_kv_str(w, "axis", cq_sat_axis_name(c->sat_axis));
        cqp_kv_num(w, "gap", c->sat_gap);
        cqp_obj_end(w);
    }
    if (explain) {
        cqp_key(w, "axes");
        write_axes(w, explain);
    }
}

void cqp_write_contact(cqp_writer *w, const cq_contact *c, const cq_sat_axis *explain)
{
    cqp_obj_begin(w);
    cqp_write_contact_fields(w, c, explain);
    cqp_obj_end(w);
}

static void write_points(cqp_writer *w, const cq_vec3 *v, int count)
{
    cqp_arr_begin(w);
    for (int i = 0; i < count; i++)
        cqp_vec3(w, v[i]);
    cqp_arr_end(w);
}

static void write_mesh(cqp_writer *w, const cq_mesh *m)
{
    cqp_key(w, "vertices");
    write_points(w, m ? m->vertices : NULL, m ? m->vertex_count : 0);
    cqp_kv_arr(w, "triangles");
    for (int i = 0; m && i < m->triangle_count; i++) {
        cqp_arr_begin(w);
        for (int k = 0; k < 3; k++)
            cqp_int(w, m->triangles[i][k]);
        cqp_arr_end(w);
    }
    cqp_arr_end(w);
}

void cqp_write_shape(cqp_writer *w, const cq_shape *s)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "type", cq_shape_type_name(s->type));
    switch (s->type) {
    case CQ_SPHERE:
        cqp_kv_num(w, "radius", s->sphere.radius);
        break;
    case CQ_CAPSULE:
        cqp_kv_num(w, "radius", s->capsule.radius);
        cqp_kv_num(w, "half_height", s->capsule.half_height);
        break;
    case CQ_BOX:
        cqp_kv_vec3(w, "half_extents", s->box.half);
        break;
    case CQ_TRIANGLE:
        cqp_key(w, "vertices");
        write_points(w, s->triangle.v, 3);
        break;
    case CQ_CONVEX: {
        const cq_hull *h = s->convex.hull;
        cqp_key(w, "points");
        write_points(w, h ? h->vertices : NULL, h ? h->vertex_count : 0);
        if (h && h->radius > 0) {
            cqp_kv_num(w, "radius", h->radius);
        }
        break;
    }
    case CQ_MESH:
        write_mesh(w, s->mesh.mesh);
        break;
    case CQ_PLANE:
        cqp_kv_vec3(w, "normal", s->plane.normal);
        cqp_kv_num(w, "offset", s->plane.offset);
        break;
    case CQ_SHAPE_TYPE_COUNT: /* no shape has it: the type alone is written */
        break;
    }
    cqp_obj_end(w);
}

void cqp_write_pose(cqp_writer *w, const cq_xform *x)
{
    cqp_obj_begin(w);
    cqp_kv_vec3(w, "position", x->p);
    cqp_key(w, "axes");
    write_points(w, x->r.c, 3);
    cqp_obj_end(w);
}

void cqp_write_body(cqp_writer *w, const char *id, const cq_world_body *b)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "id", id);
    cqp_key(w, "shape");
    cqp_write_shape(w, &b->shape);
    cqp_key(w, "pose");
    cqp_write_pose(w, &b->pose);
    cqp_kv_vec3(w, "velocity", b->velocity);
    cqp_kv_uint(w, "layer", b->layer);
    cqp_kv_uint(w, "mask", b->mask);
    cqp_obj_end(w);
}

void cqp_write_settings(cqp_writer *w, const cq_world_settings *s, cqp_durability durability)
{
    cqp_obj_begin(w);
    cqp_kv_num(w, "skin", s->skin);
    cqp_kv_int(w, "capacity", s->capacity);
    cqp_kv_int(w, "gjk_max_iterations", s->gjk_max_iterations);
    cqp_kv_int(w, "epa_max_iterations", s->epa_max_iterations);
    cqp_kv_int(w, "sweep_max_iterations", s->sweep_max_iterations);
    cqp_kv_str(w, "durability", cqp_durability_name(durability));
    cqp_obj_end(w);
}
