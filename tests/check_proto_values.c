/* The input half of proto (cqp/decode.h): good documents of every decoder,
 * each test run once from JSON and once from MessagePack written from the
 * same tree (decode_util.c), decoded to values worked out by hand (a
 * quarter turn about Z as a quaternion and as axes, a half turn about X, a
 * 3-4-5 direction, a cube's hull, defaults of absent fields, batch order
 * and pointers, integers as numbers, float32 widened as C widens it). Ids
 * are checked against API.md's id grammar (1-64 of [A-Za-z0-9._:-]).
 * Documents are written with ' for " for readability. The table of refused
 * documents: check_proto_read.c; a batch's moves read in one pass:
 * check_proto_moves.c. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "decode_util.h"
#include "testutil.h"

#define TOL 1e-15
#define ck_vec(v, ex, ey, ez)                                                                                         \
    do {                                                                                                              \
        cq_vec3 v_ = (v);                                                                                             \
        ck_assert_double_eq_tol(v_.x, (ex), TOL);                                                                     \
        ck_assert_double_eq_tol(v_.y, (ey), TOL);                                                                     \
        ck_assert_double_eq_tol(v_.z, (ez), TOL);                                                                     \
    } while (0)

START_TEST(test_pair_quarter_turn)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    /* A quarter turn about Z: q = (0, 0, sin 45, cos 45). Its matrix sends
     * x to y and y to -x: columns (0,1,0), (-1,0,0), (0,0,1). */
    du_decode_ok(D_PAIR,
              "{'a':{'shape':{'type':'box','half_extents':[1,2,3]},"
              "'pose':{'position':[1,2,3],'rotation':[0,0,0.7071067811865476,0.7071067811865476]}},"
              "'b':{'shape':{'type':'sphere','radius':0.25},'pose':null},'skin':0.5,'explain':true}",
              &du_small, &o);
    const cqp_pair_req *r = &o.pair;
    ck_assert_int_eq(r->a.shape.shape.type, CQ_BOX);
    ck_vec(r->a.shape.shape.box.half, 1, 2, 3);
    ck_vec(r->a.pose.p, 1, 2, 3);
    ck_vec(r->a.pose.r.c[0], 0, 1, 0);
    ck_vec(r->a.pose.r.c[1], -1, 0, 0);
    ck_vec(r->a.pose.r.c[2], 0, 0, 1);
    ck_assert_int_eq(r->b.shape.shape.type, CQ_SPHERE);
    ck_assert_double_eq(r->b.shape.shape.sphere.radius, 0.25);
    ck_vec(r->b.pose.p, 0, 0, 0);
    ck_vec(r->b.pose.r.c[0], 1, 0, 0);
    ck_vec(r->b.pose.r.c[1], 0, 1, 0);
    ck_vec(r->b.pose.r.c[2], 0, 0, 1);
    ck_assert_double_eq(r->skin, 0.5);
    ck_assert(r->explain);
    du_release(&o);

    /* Defaults: no skin, no explain, identity pose; a quaternion 5e-4 off
     * unit length is accepted and normalised; an integer is a number. */
    du_decode_ok(D_PAIR,
              "{'a':{'shape':{'type':'capsule','radius':1,'half_height':2},'pose':{'rotation':[0,0,0,1.0005]}},"
              "'b':{'shape':{'type':'triangle','vertices':[[0,0,0],[1,0,0],[0,1,5]]},'pose':{'position':[4,5,6]}}}",
              &du_small, &o);
    ck_assert_double_eq(o.pair.skin, 0);
    ck_assert(!o.pair.explain);
    ck_assert_double_eq(o.pair.a.shape.shape.capsule.radius, 1);
    ck_assert_double_eq(o.pair.a.shape.shape.capsule.half_height, 2);
    ck_vec(o.pair.a.pose.r.c[0], 1, 0, 0);
    ck_vec(o.pair.a.pose.r.c[1], 0, 1, 0);
    ck_vec(o.pair.a.pose.r.c[2], 0, 0, 1);
    ck_vec(o.pair.b.shape.shape.triangle.v[2], 0, 1, 5);
    ck_vec(o.pair.b.pose.p, 4, 5, 6);
    ck_vec(o.pair.b.pose.r.c[0], 1, 0, 0);
    du_release(&o);
}
END_TEST

START_TEST(test_pose_axes)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    /* The same quarter turn as axes, and a half turn about X as a
     * quaternion (1,0,0,0): y -> -y, z -> -z. */
    du_decode_ok(D_PAIR,
              "{'a':{'shape':" SPH ",'pose':{'axes':[[0,1,0],[-1,0,0],[0,0,1]]}},"
              "'b':{'shape':" SPH ",'pose':{'rotation':[1,0,0,0],'position':[0,0,-2]}}}",
              &du_small, &o);
    ck_vec(o.pair.a.pose.r.c[0], 0, 1, 0);
    ck_vec(o.pair.a.pose.r.c[1], -1, 0, 0);
    ck_vec(o.pair.a.pose.r.c[2], 0, 0, 1);
    ck_vec(o.pair.b.pose.r.c[0], 1, 0, 0);
    ck_vec(o.pair.b.pose.r.c[1], 0, -1, 0);
    ck_vec(o.pair.b.pose.r.c[2], 0, 0, -1);
    ck_vec(o.pair.b.pose.p, 0, 0, -2);
    du_release(&o);
}
END_TEST

START_TEST(test_shapes_built)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    /* A cube's corners plus its centre: the hull keeps the 8 corners. A
     * plane normal 5e-5 off unit length is normalised. */
    du_decode_ok(D_PAIR,
              "{'a':{'shape':{'type':'convex','points':[[0,0,0]," CUBE_POINTS "],'radius':0.1}},"
              "'b':{'shape':{'type':'plane','normal':[0,0,1.00005],'offset':-2}}}",
              &du_roomy, &o);
    const cq_shape *a = &o.pair.a.shape.shape;
    ck_assert_int_eq(a->type, CQ_CONVEX);
    ck_assert_ptr_eq(a->convex.hull, o.pair.a.shape.hull);
    ck_assert_int_eq(a->convex.hull->dim, 3);
    ck_assert_int_eq(a->convex.hull->vertex_count, 8);
    ck_assert_double_eq(a->convex.hull->radius, 0.1);
    ck_vec(a->convex.hull->aabb_min, -1, -1, -1);
    ck_vec(a->convex.hull->aabb_max, 1, 1, 1);
    ck_assert_int_eq(o.pair.b.shape.shape.type, CQ_PLANE);
    ck_vec(o.pair.b.shape.shape.plane.normal, 0, 0, 1);
    ck_assert_double_eq(o.pair.b.shape.shape.plane.offset, -2);
    du_release(&o);
    ck_assert_ptr_null(o.pair.a.shape.hull);

    /* A unit square as two triangles. */
    du_decode_ok(D_PAIR,
              "{'a':{'shape':" SPH "},'b':{'shape':{'type':'mesh','vertices':[[0,0,0],[1,0,0],[1,1,0],[0,1,0]],"
              "'triangles':[[0,1,2],[0,2,3]]}}}",
              &du_small, &o);
    const cq_mesh *m = o.pair.b.shape.shape.mesh.mesh;
    ck_assert_ptr_eq(m, o.pair.b.shape.mesh);
    ck_assert_int_eq(m->vertex_count, 4);
    ck_assert_int_eq(m->triangle_count, 2);
    ck_assert_int_eq(m->triangles[1][2], 3);
    ck_vec(m->vertices[2], 1, 1, 0);
    ck_vec(m->aabb_max, 1, 1, 0);
    du_release(&o);
}
END_TEST
/* cqp_decode_id of tree v (taken) viewed in du_format; fills *p on failure. */
static int decode_id(json_t *v, char id[CQ_WORLD_ID_MAX + 1], cqp_problem *p)
{
    cqp_decoder d;
    du_body b;
    cqp_decoder_init(&d, &du_small, p);
    du_wrap(&b, v);
    int rc = cqp_decode_id(&d, b.root, id);
    du_close(&b);
    return rc;
}

START_TEST(test_ids)
{
    du_format = (cqp_format)_i;
    cqp_problem p;
    char id[CQ_WORLD_ID_MAX + 1];
    ck_assert_int_eq(decode_id(json_integer(42), id, &p), 0);
    ck_assert_str_eq(id, "42");
    ck_assert_int_eq(decode_id(json_integer(0), id, &p), 0);
    ck_assert_str_eq(id, "0");
    ck_assert_int_eq(decode_id(json_integer(INT64_MAX), id, &p), 0);
    ck_assert_str_eq(id, "9223372036854775807");
    ck_assert_int_eq(decode_id(json_string(ID64), id, &p), 0);
    ck_assert_str_eq(id, ID64);
    ck_assert_int_eq(decode_id(json_string("Az09._:-"), id, &p), 0);
    ck_assert_str_eq(id, "Az09._:-");
    ck_assert_int_eq(decode_id(json_stringn("a\0b", 3), id, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_VALUE);
    ck_assert_str_eq(p.pointer, "");
    ck_assert_int_eq(decode_id(json_stringn("ab\0", 3), id, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_VALUE);
    ck_assert_int_eq(decode_id(json_integer(-1), id, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_VALUE);
    ck_assert_int_eq(decode_id(json_real(2.0), id, &p), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_TYPE);

    ck_assert(cqp_valid_id("a"));
    ck_assert(cqp_valid_id(ID64));
    ck_assert(!cqp_valid_id(ID65));
    ck_assert(!cqp_valid_id(""));
    ck_assert(!cqp_valid_id("a b"));
    ck_assert(!cqp_valid_id("a/b"));
    ck_assert(!cqp_valid_id("a~b"));
    ck_assert(!cqp_valid_id("caf\xc3\xa9"));
}
END_TEST

START_TEST(test_raycast_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_RAYCAST,
              "{'rays':[{'origin':[1,2,3],'direction':[0,3,4]},"
              "{'origin':[0,0,0],'direction':[-2,0,0],'max_distance':5,'mask':6}],'all':true}",
              &du_small, &o);
    ck_assert_int_eq(o.raycast.count, 2);
    ck_assert(o.raycast.all);
    const cq_world_ray *r = o.raycast.rays;
    ck_vec(r[0].ray.origin, 1, 2, 3);
    ck_vec(r[0].ray.direction, 0, 0.6, 0.8);
    ck_assert_double_eq(r[0].ray.max_distance, 1e300);
    ck_assert_uint_eq(r[0].mask, 0xFFFFFFFFu);
    ck_vec(r[1].ray.direction, -1, 0, 0);
    ck_assert_double_eq(r[1].ray.max_distance, 5);
    ck_assert_uint_eq(r[1].mask, 6);
    du_release(&o);

    /* Lengths far from 1 still normalise: a denormal and a near-overflow. */
    du_decode_ok(D_RAYCAST,
              "{'rays':[{'origin':[0,0,0],'direction':[1e-310,0,0]},"
              "{'origin':[0,0,0],'direction':[1e308,-1e308,0]}]}",
              &du_small, &o);
    ck_vec(o.raycast.rays[0].ray.direction, 1, 0, 0);
    ck_vec(o.raycast.rays[1].ray.direction, sqrt(0.5), -sqrt(0.5), 0);
    ck_assert(!o.raycast.all);
    du_release(&o);

    du_decode_ok(D_RAYCAST, "{'rays':[]}", &du_small, &o);
    ck_assert_int_eq(o.raycast.count, 0);
    du_release(&o);
}
END_TEST

START_TEST(test_pairs_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_PAIRS, "{'pairs':[]}", &du_small, &o);
    ck_assert_int_eq(o.pairs.count, 0);
    du_release(&o);
    du_decode_ok(D_PAIRS,
              "{'pairs':[" PAIR_A(HULL) "," PAIR_A(BOX) ",{'a':{'shape':" SPH "},'b':{'shape':" MESH "},'skin':2}]}",
              &du_small, &o);
    ck_assert_int_eq(o.pairs.count, 3);
    ck_assert_int_eq(o.pairs.items[0].a.shape.shape.type, CQ_CONVEX);
    ck_assert_int_eq(o.pairs.items[1].a.shape.shape.type, CQ_BOX);
    ck_assert_int_eq(o.pairs.items[2].b.shape.shape.type, CQ_MESH);
    ck_assert_double_eq(o.pairs.items[2].skin, 2);
    du_release(&o);
    /* Zero limits are no limits. */
    du_decode_ok(D_PAIRS, "{'pairs':[" PAIR_A(SPH) "," PAIR_A(SPH) "," PAIR_A(SPH) "," PAIR_A(SPH) "]}",
              &(cqp_limits){0}, &o);
    ck_assert_int_eq(o.pairs.count, 4);
    du_release(&o);

    /* Multi-digit indices: item 107 lacks its B. */
    char *doc = malloc(120 * 128);
    size_t len = (size_t)sprintf(doc, "{'pairs':[");
    for (int i = 0; i < 120; i++)
        len += (size_t)sprintf(doc + len, "%s%s", i ? "," : "", i == 107 ? "{'a':{'shape':" SPH "}}" : PAIR_A(SPH));
    sprintf(doc + len, "]}");
    cqp_problem p = du_decode_bad(D_PAIRS, doc, &(cqp_limits){0});
    ck_assert_str_eq(p.pointer, "/pairs/107/b");
    ck_assert_str_eq(p.detail, "pairs[107].b is required");
    free(doc);
}
END_TEST

START_TEST(test_shape_put_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    cqp_problem p;
    cqp_decoder d;
    du_body body;
    ck_assert_int_eq(du_open(&body, "{'shape':" BOX "}", &p), 0);
    cqp_decoder_init(&d, &du_small, &p);
    ck_assert_int_eq(cqp_decode_shape_put(&d, body.root, "7", &o.batch), 0);
    ck_assert_int_eq(o.batch.count, 1);
    ck_assert_int_eq(o.batch.upserts, 1);
    const cq_world_op *op = &o.batch.ops[0];
    ck_assert_int_eq(op->kind, CQ_WORLD_UPSERT);
    ck_assert_str_eq(op->id, "7");
    ck_assert_ptr_eq(op->id, o.batch.ids[0]);
    ck_assert_int_eq(op->shape.type, CQ_BOX);
    ck_assert_uint_eq(op->layer, 0xFFFFFFFFu);
    ck_assert_uint_eq(op->mask, 0xFFFFFFFFu);
    ck_vec(op->velocity, 0, 0, 0);
    ck_vec(op->pose.p, 0, 0, 0);
    ck_vec(op->pose.r.c[1], 0, 1, 0);
    cqp_batch_release(&o.batch);
    /* An invalid path id is refused, not trusted. */
    ck_assert_int_eq(cqp_decode_shape_put(&d, body.root, "a/b", &o.batch), -1);
    ck_assert_int_eq(p.kind, CQP_P_BAD_VALUE);
    du_close(&body);

    memset(&o, 0, sizeof o);
    du_decode_ok(D_PUT,
              "{'shape':" HULL ",'pose':{'position':[1,2,3]},'velocity':[4,5,6],'layer':1,'mask':4294967295}",
              &du_small, &o);
    op = &o.batch.ops[0];
    ck_assert_str_eq(op->id, "s1");
    ck_assert_ptr_eq(op->shape.convex.hull, o.batch.shapes[0].hull);
    ck_vec(op->pose.p, 1, 2, 3);
    ck_vec(op->velocity, 4, 5, 6);
    ck_assert_uint_eq(op->layer, 1);
    ck_assert_uint_eq(op->mask, 4294967295u);
    du_release(&o);

    /* A static shape with a zero velocity is fine. */
    du_decode_ok(D_PUT, "{'shape':" PLANE ",'velocity':[0,0,0],'layer':0,'mask':0}", &du_small, &o);
    ck_assert_uint_eq(o.batch.ops[0].layer, 0);
    ck_assert_uint_eq(o.batch.ops[0].mask, 0);
    du_release(&o);
}
END_TEST

START_TEST(test_batch_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_BATCH,
              "{'remove':['r1',5],'move':[{'id':'m1','pose':{'position':[1,0,0]},'velocity':[0,0,1]},"
              "{'id':9,'pose':{}}],'upsert':[{'id':'u1','shape':" HULL ",'layer':2},{'id':12,'shape':" MESH "}]}",
              &(cqp_limits){.batch_items = 6}, &o);
    const cqp_batch *b = &o.batch;
    ck_assert_int_eq(b->count, 6);
    ck_assert_int_eq(b->upserts, 2);
    ck_assert_int_eq(b->moves, 2);
    ck_assert_int_eq(b->removes, 2);
    static const char *ids[6] = {"u1", "12", "m1", "9", "r1", "5"};
    static const cq_world_op_kind kinds[6] = {CQ_WORLD_UPSERT, CQ_WORLD_UPSERT, CQ_WORLD_MOVE,
                                              CQ_WORLD_MOVE,   CQ_WORLD_REMOVE, CQ_WORLD_REMOVE};
    static const char *pointers[6] = {"/upsert/0", "/upsert/1", "/move/0", "/move/1", "/remove/0", "/remove/1"};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(b->ops[i].kind, kinds[i]);
        ck_assert_str_eq(b->ops[i].id, ids[i]);
        char ptr[32];
        cqp_batch_pointer(b, false, i, ptr, sizeof ptr);
        ck_assert_str_eq(ptr, pointers[i]);
    }
    char ptr[32];
    cqp_batch_pointer(b, false, -1, ptr, sizeof ptr);
    ck_assert_str_eq(ptr, "");
    cqp_batch_pointer(b, false, 6, ptr, sizeof ptr);
    ck_assert_str_eq(ptr, "");
    ck_assert_uint_eq(b->ops[0].layer, 2);
    ck_assert_ptr_eq(b->ops[0].shape.convex.hull, b->shapes[0].hull);
    ck_assert_ptr_eq(b->ops[1].shape.mesh.mesh, b->shapes[1].mesh);
    ck_vec(b->ops[2].pose.p, 1, 0, 0);
    ck_vec(b->ops[2].velocity, 0, 0, 1);
    ck_assert(!b->ops[2].keep_velocity);
    ck_assert(b->ops[3].keep_velocity);
    ck_vec(b->ops[3].pose.r.c[2], 0, 0, 1);

    /* Disowned, the hull and mesh survive the release (a world owns them). */
    const cq_hull *hull = b->shapes[0].hull;
    const cq_mesh *mesh = b->shapes[1].mesh;
    size_t held = cq_alloc_bytes();
    cqp_batch_disown(&o.batch);
    cqp_batch_release(&o.batch);
    ck_assert(cq_alloc_bytes() == held);
    cq_hull_free((cq_hull *)hull);
    cq_mesh_free((cq_mesh *)mesh);

    du_decode_ok(D_BATCH, "{}", &du_small, &o);
    ck_assert_int_eq(o.batch.count, 0);
    du_release(&o);
}
END_TEST

START_TEST(test_world_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_WORLD, NULL, &du_small, &o);
    ck_assert(!o.world.import);
    ck_assert_double_eq(o.world.settings.skin, 0);
    ck_assert_int_eq(o.world.settings.capacity, 0);
    du_release(&o);

    du_decode_ok(D_WORLD,
              "{'skin':0.02,'capacity':100,'gjk_max_iterations':5,'epa_max_iterations':6,"
              "'sweep_max_iterations':1000}",
              &du_small, &o);
    ck_assert(!o.world.import);
    ck_assert_double_eq(o.world.settings.skin, 0.02);
    ck_assert_int_eq(o.world.settings.capacity, 100);
    ck_assert_int_eq(o.world.settings.gjk_max_iterations, 5);
    ck_assert_int_eq(o.world.settings.epa_max_iterations, 6);
    ck_assert_int_eq(o.world.settings.sweep_max_iterations, 1000);
    du_release(&o);

    du_decode_ok(D_WORLD,
              "{'settings':{'skin':0.1,'capacity':8},'shapes':[{'id':'a','shape':" HULL ",'mask':3},"
              "{'id':2,'shape':" PLANE ",'pose':{'position':[0,0,1]},'velocity':[0,0,0]}]}",
              &du_small, &o);
    ck_assert(o.world.import);
    ck_assert_double_eq(o.world.settings.skin, 0.1);
    ck_assert_int_eq(o.world.settings.capacity, 8);
    ck_assert_int_eq(o.world.batch.count, 2);
    ck_assert_int_eq(o.world.batch.upserts, 2);
    ck_assert_str_eq(o.world.batch.ops[0].id, "a");
    ck_assert_uint_eq(o.world.batch.ops[0].mask, 3);
    ck_assert_str_eq(o.world.batch.ops[1].id, "2");
    ck_vec(o.world.batch.ops[1].pose.p, 0, 0, 1);
    char ptr[32];
    cqp_batch_pointer(&o.world.batch, true, 1, ptr, sizeof ptr);
    ck_assert_str_eq(ptr, "/shapes/1");
    du_release(&o);

    /* "settings" alone only sets them; "shapes" alone is an import. */
    du_decode_ok(D_WORLD, "{'settings':{'skin':3}}", &du_small, &o);
    ck_assert(!o.world.import);
    ck_assert_double_eq(o.world.settings.skin, 3);
    du_release(&o);
    du_decode_ok(D_WORLD, "{'shapes':[]}", &du_small, &o);
    ck_assert(o.world.import);
    ck_assert_int_eq(o.world.batch.count, 0);
    ck_assert(!o.world.durability_given);
    du_release(&o);
}
END_TEST

/* "durability" in either form of the body, each of the three names. */
START_TEST(test_world_durability)
{
    du_format = (cqp_format)_i;
    static const struct {
        const char *doc;
        bool given;
        cqp_durability want;
    } rows[] = {
        {"{}", false, CQP_DURABILITY_FULL},
        {"{'durability':'full'}", true, CQP_DURABILITY_FULL},
        {"{'durability':'shapes','skin':0.5}", true, CQP_DURABILITY_SHAPES},
        {"{'durability':'none'}", true, CQP_DURABILITY_NONE},
        {"{'settings':{'durability':'none','capacity':4},'shapes':[]}", true, CQP_DURABILITY_NONE},
        {"{'settings':{'durability':'shapes'}}", true, CQP_DURABILITY_SHAPES},
        {"{'settings':{'skin':1},'shapes':[]}", false, CQP_DURABILITY_FULL},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        du_decoded o;
        du_decode_ok(D_WORLD, rows[k].doc, &du_small, &o);
        ck_assert_msg(o.world.durability_given == rows[k].given, "%s", rows[k].doc);
        ck_assert_int_eq(o.world.durability, rows[k].want);
        du_release(&o);
    }
    /* the names and the table agree both ways */
    static const char *const names[] = {"full", "shapes", "none"};
    for (int d = 0; d < CQP_DURABILITY_COUNT; d++) {
        cqp_durability back;
        ck_assert_str_eq(cqp_durability_name((cqp_durability)d), names[d]);
        ck_assert(cqp_durability_named(names[d], strlen(names[d]), &back));
        ck_assert_int_eq(back, d);
        ck_assert(!cqp_durability_named(names[d], strlen(names[d]) - 1, &back));
    }
    ck_assert_str_eq(cqp_durability_name(CQP_DURABILITY_COUNT), "?");
    ck_assert_str_eq(cqp_durability_names(), "full, shapes, none");
}
END_TEST

START_TEST(test_contacts_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_CONTACTS, NULL, &du_small, &o);
    ck_assert_ptr_null(o.contacts.ids);
    ck_assert_ptr_null(o.contacts.id_ptrs);
    ck_assert_double_eq(o.contacts.dt, 0);
    du_release(&o);
    /* An empty filter is still a filter: no pair involves no id. */
    du_decode_ok(D_CONTACTS, "{'ids':[]}", &du_small, &o);
    ck_assert_ptr_nonnull(o.contacts.id_ptrs);
    ck_assert_int_eq(o.contacts.id_count, 0);
    du_release(&o);
    du_decode_ok(D_CONTACTS, "{'ids':['a',3],'dt':0.0166}", &du_small, &o);
    ck_assert_int_eq(o.contacts.id_count, 2);
    ck_assert_str_eq(o.contacts.id_ptrs[0], "a");
    ck_assert_str_eq(o.contacts.id_ptrs[1], "3");
    ck_assert_double_eq(o.contacts.dt, 0.0166);
    du_release(&o);
}
END_TEST

/* The largest accepted magnitude is 1e50, either sign, in every kind of
 * number; a float's maximum (3.4e38) is a usable "no limit" ray length;
 * 5e-324 (the least subnormal) is a number like any other. */
START_TEST(test_number_bounds)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_PAIR,
                 "{'a':{'shape':{'type':'sphere','radius':1e50},'pose':{'position':[-1e50,1e50,5e-324]}},"
                 "'b':{'shape':{'type':'box','half_extents':[1e50,0,5e-324]}},'skin':1e50}",
                 &du_small, &o);
    ck_assert_double_eq(o.pair.a.shape.shape.sphere.radius, 1e50);
    ck_assert_double_eq(o.pair.a.pose.p.x, -1e50);
    ck_assert_double_eq(o.pair.a.pose.p.y, 1e50);
    ck_assert_double_eq(o.pair.a.pose.p.z, 5e-324);
    ck_assert_double_eq(o.pair.b.shape.shape.box.half.x, 1e50);
    ck_assert_double_eq(o.pair.b.shape.shape.box.half.z, 5e-324);
    ck_assert_double_eq(o.pair.skin, 1e50);
    du_release(&o);
    /* Integers are numbers too, exact up to 2^53 and rounded beyond. */
    du_decode_ok(D_PAIR, POSE_A("{'position':[1152921504606846976,-1152921504606846977,9007199254740993]}"),
                 &du_small, &o);
    ck_assert_double_eq(o.pair.a.pose.p.x, ldexp(1, 60));
    ck_assert_double_eq(o.pair.a.pose.p.y, -ldexp(1, 60));
    ck_assert_double_eq(o.pair.a.pose.p.z, ldexp(1, 53));
    du_release(&o);
    du_decode_ok(D_RAYCAST, "{'rays':[{'origin':[0,0,-1e50],'direction':[0,0,1],'max_distance':3.4028234663852886e38}]}",
                 &du_small, &o);
    ck_assert_int_eq(o.raycast.count, 1);
    ck_assert_double_eq(o.raycast.rays[0].ray.max_distance, 3.4028234663852886e38);
    ck_assert_double_eq(o.raycast.rays[0].ray.origin.z, -1e50);
    du_release(&o);
    /* A ray's length is only a clip: any larger one means "no limit", the
     * same as none (1e300). */
    du_decode_ok(D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[0,2e300,0],'max_distance':1.7e308}]}",
                 &du_small, &o);
    ck_assert_double_eq(o.raycast.rays[0].ray.max_distance, 1e300);
    ck_vec(o.raycast.rays[0].ray.direction, 0, 1, 0);
    du_release(&o);
}
END_TEST

START_TEST(test_sweep_overlap_values)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    du_decode_ok(D_SWEEP, "{'shape':" HULL ",'translation':[0,-5,0]}", &du_small, &o);
    ck_assert_int_eq(o.shape.shape.shape.type, CQ_CONVEX);
    ck_vec(o.shape.translation, 0, -5, 0);
    ck_assert_uint_eq(o.shape.mask, 0xFFFFFFFFu);
    ck_vec(o.shape.pose.r.c[0], 1, 0, 0);
    du_release(&o);
    du_decode_ok(D_SWEEP, "{'shape':" SPH ",'pose':{'position':[1,1,1]},'translation':[1,0,0],'mask':9}", &du_small, &o);
    ck_vec(o.shape.pose.p, 1, 1, 1);
    ck_assert_uint_eq(o.shape.mask, 9);
    du_release(&o);
    /* An overlap query may use a plane. */
    du_decode_ok(D_OVERLAP, "{'shape':" PLANE ",'mask':1}", &du_small, &o);
    ck_assert_int_eq(o.shape.shape.shape.type, CQ_PLANE);
    ck_assert_uint_eq(o.shape.mask, 1);
    ck_vec(o.shape.translation, 0, 0, 0);
    du_release(&o);
}
END_TEST

/* Numbers only MessagePack spells: a float32 is widened exactly, so it is
 * (double)(float)x, not x; float's maximum is a usable ray length; the
 * extreme integers are numbers like any other (finite, below 1e50), a
 * uint64 above INT64_MAX its own value (2^64 for the largest), never the
 * INT64_MAX an integer field sees; an id up to INT64_MAX is its digits. */
START_TEST(test_msgpack_numbers)
{
    du_decoded o;
    du_decode_marked(D_PAIR,
                  "{'a':{'shape':{'type':'sphere','radius':'!f32:0.1'},"
                  "'pose':{'position':['!f32:1.1','!f32:-2.5','!f32:3e-5']}},"
                  "'b':{'shape':" SPH ",'pose':{'position':[1152921504606846976,'!u64max',-9223372036854775808]}},"
                  "'skin':'!f32:0.3'}",
                  &o);
    ck_assert_double_eq(o.pair.a.shape.shape.sphere.radius, (double)0.1f);
    ck_assert_double_ne(o.pair.a.shape.shape.sphere.radius, 0.1);
    ck_assert_double_eq(o.pair.a.pose.p.x, (double)1.1f);
    ck_assert_double_eq(o.pair.a.pose.p.y, -2.5);
    ck_assert_double_eq(o.pair.a.pose.p.z, (double)3e-5f);
    ck_assert_double_eq(o.pair.skin, (double)0.3f);
    ck_assert_double_eq(o.pair.b.pose.p.x, ldexp(1, 60));
    ck_assert_double_eq(o.pair.b.pose.p.y, ldexp(1, 64));
    ck_assert_double_eq(o.pair.b.pose.p.z, -ldexp(1, 63));
    du_release(&o);

    du_decode_marked(D_RAYCAST,
                  "{'rays':[{'origin':[0,0,0],'direction':['!f32:0.6','!f32:0.8',0],"
                  "'max_distance':'!f32:3.4028234663852886e38','mask':4294967295}]}",
                  &o);
    ck_assert_double_eq(o.raycast.rays[0].ray.max_distance, (double)FLT_MAX);
    double len = hypot((double)0.6f, (double)0.8f);
    ck_vec(o.raycast.rays[0].ray.direction, (double)0.6f / len, (double)0.8f / len, 0);
    ck_assert_uint_eq(o.raycast.rays[0].mask, 0xFFFFFFFFu);
    du_release(&o);

    du_decode_marked(D_BATCH, "{'remove':[9223372036854775807]}", &o);
    ck_assert_str_eq(o.batch.ops[0].id, "9223372036854775807");
    du_release(&o);
}
END_TEST


END_TEST

Suite *proto_values_suite(void)
{
    Suite *s = suite_create("proto_values");
    TCase *tc = tcase_create("values");
    tcase_add_loop_test(tc, test_pair_quarter_turn, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_pose_axes, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_shapes_built, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_ids, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_raycast_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_pairs_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_shape_put_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_batch_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_world_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_world_durability, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_contacts_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_sweep_overlap_values, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_number_bounds, 0, DU_FORMATS);
    tcase_add_test(tc, test_msgpack_numbers);
    suite_add_tcase(s, tc);
    return s;
}
