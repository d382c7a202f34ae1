/* Core values to JSON (API.md section 1): contacts, shapes, poses, stored
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
    cqp_key(w, "position");
    cqp_vec3(w, pt->position);
    cqp_key(w, "depth");
    cqp_num(w, pt->depth);
    cqp_key(w, "feature");
    cqp_str(w, cq_feature_format(pt->feature, feature, (int)sizeof feature));
    cqp_obj_end(w);
}

static void write_fallback(cqp_writer *w, const cq_contact *c)
{
    if (c->fallback_reason == CQ_FB_NONE && c->fallback_action == CQ_FBA_NONE) {
        cqp_null(w);
        return;
    }
    cqp_obj_begin(w);
    cqp_key(w, "reason");
    cqp_str(w, cq_fallback_reason_name(c->fallback_reason));
    cqp_key(w, "action");
    cqp_str(w, cq_fallback_action_name(c->fallback_action));
    cqp_obj_end(w);
}

static void write_axes(cqp_writer *w, const cq_sat_axis *explain)
{
    cqp_arr_begin(w);
    for (int i = 0; i < CQ_SAT_AXIS_COUNT; i++) {
        cqp_obj_begin(w);
        cqp_key(w, "name");
        cqp_str(w, cq_sat_axis_name(i));
        if (explain[i].skipped) {
            cqp_key(w, "skipped");
            cqp_bool(w, true);
        } else {
            cqp_key(w, "gap");
            cqp_num(w, explain[i].gap);
        }
        cqp_obj_end(w);
    }
    cqp_arr_end(w);
}

void cqp_write_contact_fields(cqp_writer *w, const cq_contact *c, const cq_sat_axis *explain)
{
    if (!explain && cqp__mp_contact_fields(w, c))
        return;
    cqp_key(w, "overlap");
    cqp_bool(w, c->overlap);
    cqp_key(w, "distance");
    cqp_num(w, c->distance);
    cqp_key(w, "depth");
    cqp_num(w, c->depth);
    if (c->has_normal) {
        cqp_key(w, "normal");
        cqp_vec3(w, c->normal);
    }
    cqp_key(w, "points");
    cqp_arr_begin(w);
    int count = c->point_count < 0 ? 0 : c->point_count > CQ_MAX_POINTS ? CQ_MAX_POINTS : c->point_count;
    for (int i = 0; i < count; i++)
        write_point(w, &c->points[i]);
    cqp_arr_end(w);
    if (c->has_distance && c->distance > 0) {
        cqp_key(w, "witness");
        cqp_obj_begin(w);
        cqp_key(w, "a");
        cqp_vec3(w, c->witness_a);
        cqp_key(w, "b");
        cqp_vec3(w, c->witness_b);
        cqp_obj_end(w);
    }
    cqp_key(w, "algorithm");
    cqp_str(w, cq_algorithm_name(c->algorithm));
    cqp_key(w, "fallback");
    write_fallback(w, c);
    if (c->sat_axis >= 0 || c->algorithm == CQ_ALG_SAT_BOX_BOX) {
        cqp_key(w, "sat");
        cqp_obj_begin(w);
        cqp_key(w, "axis");
        cqp_str(w, cq_sat_axis_name(c->sat_axis));
        cqp_key(w, "gap");
        cqp_num(w, c->sat_gap);
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
    cqp_key(w, "triangles");
    cqp_arr_begin(w);
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
    cqp_key(w, "type");
    cqp_str(w, cq_shape_type_name(s->type));
    switch (s->type) {
    case CQ_SPHERE:
        cqp_key(w, "radius");
        cqp_num(w, s->sphere.radius);
        break;
    case CQ_CAPSULE:
        cqp_key(w, "radius");
        cqp_num(w, s->capsule.radius);
        cqp_key(w, "half_height");
        cqp_num(w, s->capsule.half_height);
        break;
    case CQ_BOX:
        cqp_key(w, "half_extents");
        cqp_vec3(w, s->box.half);
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
            cqp_key(w, "radius");
            cqp_num(w, h->radius);
        }
        break;
    }
    case CQ_MESH:
        write_mesh(w, s->mesh.mesh);
        break;
    case CQ_PLANE:
        cqp_key(w, "normal");
        cqp_vec3(w, s->plane.normal);
        cqp_key(w, "offset");
        cqp_num(w, s->plane.offset);
        break;
    default:
        break;
    }
    cqp_obj_end(w);
}

void cqp_write_pose(cqp_writer *w, const cq_xform *x)
{
    cqp_obj_begin(w);
    cqp_key(w, "position");
    cqp_vec3(w, x->p);
    cqp_key(w, "axes");
    write_points(w, x->r.c, 3);
    cqp_obj_end(w);
}

void cqp_write_body(cqp_writer *w, const char *id, const cq_world_body *b)
{
    cqp_obj_begin(w);
    cqp_key(w, "id");
    cqp_str(w, id);
    cqp_key(w, "shape");
    cqp_write_shape(w, &b->shape);
    cqp_key(w, "pose");
    cqp_write_pose(w, &b->pose);
    cqp_key(w, "velocity");
    cqp_vec3(w, b->velocity);
    cqp_key(w, "layer");
    cqp_uint(w, b->layer);
    cqp_key(w, "mask");
    cqp_uint(w, b->mask);
    cqp_obj_end(w);
}

void cqp_write_settings(cqp_writer *w, const cq_world_settings *s, cqp_durability durability)
{
    cqp_obj_begin(w);
    cqp_key(w, "skin");
    cqp_num(w, s->skin);
    cqp_key(w, "capacity");
    cqp_int(w, s->capacity);
    cqp_key(w, "gjk_max_iterations");
    cqp_int(w, s->gjk_max_iterations);
    cqp_key(w, "epa_max_iterations");
    cqp_int(w, s->epa_max_iterations);
    cqp_key(w, "sweep_max_iterations");
    cqp_int(w, s->sweep_max_iterations);
    cqp_key(w, "durability");
    cqp_str(w, cqp_durability_name(durability));
    cqp_obj_end(w);
}
