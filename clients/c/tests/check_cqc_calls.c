/* libcqc against a real daemon: each call's answer checked against an
 * analytic one (distances of spheres, a ray's hit, a sweep's time of
 * impact), the documented round trips (export then import), and the
 * error model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

static th_daemon daemon_, secured;

static void up(void)
{
    th_start(&daemon_, NULL);
    static const char *const flags[] = {"--token", "s3cret", NULL};
    th_start(&secured, flags);
}

static void down(void)
{
    th_stop(&daemon_);
    th_stop(&secured);
}

static cqc_shape sphere(double r)
{
    return (cqc_shape){.type = CQC_SPHERE, .radius = r};
}

static cqc_pose at(double x, double y, double z)
{
    cqc_pose p = cqc_pose_identity();
    p.position[0] = x, p.position[1] = y, p.position[2] = z;
    return p;
}

static cqc_body ball(const char *id, double r, double x)
{
    return (cqc_body){.id = id, .shape = sphere(r), .pose = at(x, 0, 0)};
}

static void fresh_world(cqc_conn *c, const char *name)
{
    cqc_world_delete(c, name);
    ck_assert_int_eq(cqc_world_create(c, name, NULL, NULL), CQC_OK);
}

START_TEST(world_lifecycle)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    cqc_world_settings s;
    cqc_world_settings_init(&s);
    s.skin = 0.02;
    s.capacity = 64;
    cqc_world_info w;
    cqc_world_delete(c, "life");
    ck_assert_int_eq(cqc_world_create(c, "life", &s, &w), CQC_OK);
    ck_assert(w.created);
    ck_assert_str_eq(w.name, "life");
    ck_assert_double_eq(w.settings.skin, 0.02);
    ck_assert_uint_eq(w.settings.capacity, 64);
    ck_assert_int_eq(cqc_world_create(c, "life", NULL, &w), CQC_OK);
    ck_assert(!w.created);
    ck_assert_int_eq(cqc_world_get(c, "life", &w), CQC_OK);
    ck_assert(w.has_stats);
    ck_assert_uint_eq(w.shapes, 0);
    ck_assert_int_eq(cqc_world_delete(c, "life"), CQC_OK);
    ck_assert_int_eq(cqc_world_get(c, "life", &w), CQC_ENOTFOUND);
    ck_assert_int_eq(cqc_last_problem(c)->status, 404);
    ck_assert_str_eq(cqc_last_problem(c)->type, "urn:collisiond:problem:not-found");
    /* Unset, the daemon's default is full; an ephemeral world says so, and
     * its durability cannot change afterwards (409 at /durability). */
    ck_assert_int_eq(cqc_world_create(c, "life", NULL, &w), CQC_OK);
    ck_assert_int_eq(w.settings.durability, CQC_DURABILITY_FULL);
    cqc_world_delete(c, "life");
    cqc_world_settings_init(&s);
    s.durability = CQC_DURABILITY_NONE;
    ck_assert_int_eq(cqc_world_create(c, "life", &s, &w), CQC_OK);
    ck_assert_int_eq(cqc_world_get(c, "life", &w), CQC_OK);
    ck_assert_int_eq(w.settings.durability, CQC_DURABILITY_NONE);
    s.durability = CQC_DURABILITY_FULL;
    ck_assert_int_ne(cqc_world_create(c, "life", &s, &w), CQC_OK);
    ck_assert_int_eq(cqc_last_problem(c)->status, 409);
    ck_assert_str_eq(cqc_last_problem(c)->pointer, "/durability");
    ck_assert_int_eq(cqc_world_delete(c, "life"), CQC_OK);
    cqc_close(c);
}
END_TEST

START_TEST(shapes_round_trip)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    fresh_world(c, "shapes");
    /* A quarter turn about z takes local x to world y: axes row 0 is (0, 1, 0). */
    cqc_body box = {.id = "crate", .shape = {.type = CQC_BOX, .half_extents = {1, 2, 3}}, .pose = at(1, 2, 3),
                    .velocity = {4, 0, 0}, .layer = 2, .mask = 6};
    double z[3] = {0, 0, 1};
    cqc_quat_axis_angle(z, 1.5707963267948966, box.pose.rotation);
    bool created = false;
    ck_assert_int_eq(cqc_shape_put(c, "shapes", &box, &created), CQC_OK);
    ck_assert(created);
    ck_assert_int_eq(cqc_shape_put(c, "shapes", &box, &created), CQC_OK);
    ck_assert(!created);
    cqc_stored s;
    ck_assert_int_eq(cqc_shape_get(c, "shapes", "crate", &s), CQC_OK);
    ck_assert_str_eq(s.id, "crate");
    ck_assert_int_eq(s.shape.type, CQC_BOX);
    ck_assert_double_eq(s.shape.half_extents[2], 3);
    static const double axes[9] = {0, 1, 0, -1, 0, 0, 0, 0, 1};
    for (int k = 0; k < 9; k++)
        ck_assert_double_eq_tol(s.axes[k], axes[k], 1e-12);
    ck_assert_double_eq(s.position[1], 2);
    ck_assert_double_eq(s.velocity[0], 4);
    ck_assert_uint_eq(s.layer, 2);
    ck_assert_uint_eq(s.mask, 6);
    cqc_stored_release(&s);
    /* A tetrahedron's hull is its four points, in some order. */
    static const double pts[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    cqc_body hull = {.id = "tet", .shape = {.type = CQC_CONVEX, .points = pts, .point_count = 4},
                     .pose = cqc_pose_identity()};
    ck_assert_int_eq(cqc_shape_put(c, "shapes", &hull, NULL), CQC_OK);
    ck_assert_int_eq(cqc_shape_get(c, "shapes", "tet", &s), CQC_OK);
    ck_assert_uint_eq(s.shape.point_count, 4);
    double sum = 0;
    for (int k = 0; k < 12; k++)
        sum += s.shape.points[k];
    ck_assert_double_eq(sum, 3);
    cqc_stored_release(&s);
    ck_assert_int_eq(cqc_shape_delete(c, "shapes", "crate"), CQC_OK);
    ck_assert_int_eq(cqc_shape_delete(c, "shapes", "crate"), CQC_ENOTFOUND);
    cqc_close(c);
}
END_TEST

START_TEST(pair_tests)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    /* Two unit spheres whose centres are d apart are d - 2 apart. */
    cqc_pair p[3];
    cqc_contact out[3];
    for (int i = 0; i < 3; i++)
        p[i] = (cqc_pair){.a = sphere(1), .b = sphere(1), .pose_a = at(0, 0, 0), .pose_b = at(2.5 + i, 0, 0)};
    ck_assert_int_eq(cqc_pair_test(c, &p[0], &out[0]), CQC_OK);
    ck_assert(!out[0].overlap);
    ck_assert_double_eq_tol(out[0].distance, 0.5, 1e-12);
    ck_assert_str_eq(out[0].algorithm, "sphere_sphere");
    ck_assert_int_eq(cqc_pairs_test(c, p, 3, out), CQC_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(out[i].distance, 0.5 + i, 1e-12);
    p[0].pose_b = at(0, 1.5, 0); /* 0.5 deep, normal +y from a to b */
    ck_assert_int_eq(cqc_pair_test(c, &p[0], &out[0]), CQC_OK);
    ck_assert(out[0].overlap && out[0].has_normal);
    ck_assert_double_eq_tol(out[0].depth, 0.5, 1e-12);
    ck_assert_double_eq_tol(out[0].normal[1], 1, 1e-12);
    ck_assert_int_ge(out[0].point_count, 1);
    cqc_close(c);
}
END_TEST

/* The tick's shape: a batch and the queries after it in one pipeline,
 * answered in order, each seeing the batch. */
START_TEST(pipelined_tick)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    fresh_world(c, "tick");
    cqc_body bodies[3] = {ball("a", 1, 0), ball("b", 1, 5), ball("c", 1, 20)};
    cqc_batch up_ = {.upserts = bodies, .upsert_count = 3};
    cqc_batch_result br;
    ck_assert_int_eq(cqc_batch_apply(c, "tick", &up_, &br), CQC_OK);
    ck_assert_uint_eq(br.upserted, 3);
    const char *ids[1] = {"b"};
    double pos[3] = {1.5, 0, 0};
    cqc_batch mv = {.move_ids = ids, .move_positions = pos, .move_count = 1};
    cqc_contacts ct = {0};
    cqc_id_pairs bp = {0};
    cqc_ray ray = {.origin = {-5, 0, 0}, .direction = {1, 0, 0}};
    cqc_ray_hit hit;
    ck_assert_int_eq(cqc_pipe_begin(c), CQC_OK);
    ck_assert_int_eq(cqc_q_batch(c, "tick", &mv, &br), CQC_OK);
    ck_assert_int_eq(cqc_q_contacts(c, "tick", NULL, &ct), CQC_OK);
    ck_assert_int_eq(cqc_q_broadphase(c, "tick", &bp), CQC_OK);
    ck_assert_int_eq(cqc_q_raycast(c, "tick", &ray, 1, &hit), CQC_OK);
    ck_assert_int_eq(cqc_pipe_pending(c), 4);
    ck_assert_int_eq(cqc_pipe_send(c), CQC_OK);
    for (size_t i = 0, k; i < 4; i++) {
        ck_assert_int_eq(cqc_pipe_next(c, &k), CQC_OK);
        ck_assert_uint_eq(k, i);
    }
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_ESTATE);
    ck_assert_uint_eq(br.moved, 1);
    ck_assert_uint_eq(ct.pair_count, 1);
    ck_assert_str_eq(ct.pairs[0].a, "a");
    ck_assert_str_eq(ct.pairs[0].b, "b");
    ck_assert_double_eq_tol(ct.pairs[0].contact.depth, 0.5, 1e-12);
    ck_assert_double_eq_tol(ct.pairs[0].contact.normal[0], 1, 1e-12);
    ck_assert_uint_eq(bp.count, 1);
    ck_assert(hit.hit);
    ck_assert_str_eq(hit.id, "a");
    ck_assert_double_eq_tol(hit.distance, 4, 1e-9);
    ck_assert_double_eq_tol(hit.normal[0], -1, 1e-9);
    cqc_contacts_release(&ct);
    cqc_id_pairs_release(&bp);
    cqc_close(c);
}
END_TEST

START_TEST(queries)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    fresh_world(c, "q");
    cqc_body bodies[3] = {ball("a", 1, 0), ball("b", 1, 3.5), ball("c", 1, 10)};
    cqc_batch up_ = {.upserts = bodies, .upsert_count = 3};
    ck_assert_int_eq(cqc_batch_apply(c, "q", &up_, NULL), CQC_OK);
    cqc_ray rays[3] = {{.origin = {-5, 3, 0}, .direction = {1, 0, 0}},
                       {.origin = {-5, 0, 0}, .direction = {2, 0, 0}, .max_distance = 3},
                       {.origin = {0, 10, 0}, .direction = {0, -1, 0}}};
    cqc_ray_hit hits[3];
    ck_assert_int_eq(cqc_raycast(c, "q", rays, 3, hits), CQC_OK);
    ck_assert(!hits[0].hit && !hits[1].hit && hits[2].hit);
    ck_assert_double_eq_tol(hits[2].distance, 9, 1e-9);
    /* A 0.5 sphere from x = -5 along +10 x touches a (radius 1) when its
     * centre is at -1.5: after 3.5 of 10, time 0.35. */
    cqc_sweep sw = {.shape = sphere(0.5), .pose = at(-5, 0, 0), .translation = {10, 0, 0}};
    cqc_sweep_hit sh;
    ck_assert_int_eq(cqc_sweep_test(c, "q", &sw, &sh), CQC_OK);
    ck_assert(sh.hit);
    ck_assert_str_eq(sh.id, "a");
    ck_assert_double_eq_tol(sh.time, 0.35, 1e-6);
    /* A radius-3 sphere at the origin reaches a and b (b's surface at 2.5). */
    cqc_overlap ov = {.shape = sphere(3), .pose = at(0, 0, 0)};
    cqc_ids ids = {0};
    ck_assert_int_eq(cqc_overlap_test(c, "q", &ov, &ids), CQC_OK);
    ck_assert_uint_eq(ids.count, 2);
    ck_assert_str_eq(ids.items[0], "a");
    ck_assert_str_eq(ids.items[1], "b");
    cqc_ids_release(&ids);
    char one[1][CQC_ID_MAX + 1];
    cqc_ids small = {.items = one, .cap = 1};
    ck_assert_int_eq(cqc_overlap_test(c, "q", &ov, &small), CQC_ETRUNCATED);
    ck_assert_uint_eq(small.count, 2);
    ck_assert_str_eq(one[0], "a");
    ck_assert_int_eq(cqc_health(c, false), CQC_OK);
    ck_assert_int_eq(cqc_health(c, true), CQC_OK);
    cqc_close(c);
}
END_TEST

/* docs/API.md: PUT an export to another name and its export is the same document. */
START_TEST(export_import)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    fresh_world(c, "ex1");
    cqc_body bodies[2] = {ball("a", 1, 0), ball("b", 0.25, 7)};
    cqc_batch up_ = {.upserts = bodies, .upsert_count = 2};
    ck_assert_int_eq(cqc_batch_apply(c, "ex1", &up_, NULL), CQC_OK);
    cqc_blob one = {0}, two = {0};
    ck_assert_int_eq(cqc_world_export(c, "ex1", &one), CQC_OK);
    cqc_world_delete(c, "ex2");
    cqc_world_info w;
    ck_assert_int_eq(cqc_world_import(c, "ex2", one.data, one.len, &w), CQC_OK);
    ck_assert(w.created);
    ck_assert_uint_eq(w.shapes, 2);
    ck_assert_int_eq(cqc_world_export(c, "ex2", &two), CQC_OK);
    ck_assert_uint_eq(one.len, two.len);
    ck_assert_mem_eq(one.data, two.data, one.len);
    ck_assert_int_eq(cqc_world_import(c, "ex2", "\xdd\xff\xff\xff\xff", 5, NULL), CQC_EINVAL);
    cqc_blob_release(&one);
    cqc_blob_release(&two);
    cqc_close(c);
}
END_TEST

START_TEST(errors)
{
    cqc_conn *c = th_connect(&daemon_, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    fresh_world(c, "err");
    cqc_body bad = ball("x", -1, 0);
    ck_assert_int_eq(cqc_shape_put(c, "err", &bad, NULL), CQC_EBADREQUEST);
    ck_assert_str_eq(cqc_last_problem(c)->type, "urn:collisiond:problem:invalid-value");
    ck_assert_str_eq(cqc_last_problem(c)->pointer, "/shape/radius");
    /* A name with a '/' is percent-encoded: refused as a name, never another route. */
    ck_assert_int_eq(cqc_world_get(c, "a/b", NULL), CQC_EBADREQUEST);
    ck_assert_int_eq(cqc_world_get(c, "", NULL), CQC_EINVAL);
    const char *ids[1] = {"ghost"};
    double pos[3] = {0};
    cqc_batch mv = {.move_ids = ids, .move_positions = pos, .move_count = 1};
    ck_assert_int_eq(cqc_batch_apply(c, "err", &mv, NULL), CQC_EBADREQUEST);
    ck_assert_str_eq(cqc_last_problem(c)->pointer, "/move/0");
    /* An id with a quote and a control character reaches the daemon as a
     * string in both encodings (escaped in JSON) and is refused there. */
    cqc_body odd = ball("a\"b\x01", 1, 0);
    cqc_batch up_ = {.upserts = &odd, .upsert_count = 1};
    ck_assert_int_eq(cqc_batch_apply(c, "err", &up_, NULL), CQC_EBADREQUEST);
    ck_assert_str_eq(cqc_last_problem(c)->type, "urn:collisiond:problem:invalid-value");
    ck_assert_str_eq(cqc_last_problem(c)->pointer, "/upsert/0/id");
    for (int s = 0; s <= CQC_STATUS_COUNT; s++)
        ck_assert_ptr_nonnull(cqc_strerror((cqc_status)s));
    ck_assert_str_eq(cqc_strerror(CQC_STATUS_COUNT), "unknown status");
    cqc_close(c);
}
END_TEST

START_TEST(token)
{
    cqc_conn *c = th_connect(&secured, _i ? CQC_JSON : CQC_MSGPACK, NULL);
    ck_assert_int_eq(cqc_world_create(c, "t", NULL, NULL), CQC_EUNAUTHORIZED);
    ck_assert_int_eq(cqc_health(c, false), CQC_OK); /* no token needed */
    cqc_close(c);
    c = th_connect(&secured, _i ? CQC_JSON : CQC_MSGPACK, "s3cret");
    ck_assert_int_eq(cqc_world_create(c, "t", NULL, NULL), CQC_OK);
    cqc_close(c);
    c = th_connect(&secured, _i ? CQC_JSON : CQC_MSGPACK, "wrong");
    ck_assert_int_eq(cqc_world_get(c, "t", NULL), CQC_EUNAUTHORIZED);
    cqc_close(c);
}
END_TEST

/* A tick's 10,000 moves encode into the pipeline's buffer: once it has
 * grown, a tick allocates nothing. And a closed connection leaves nothing. */
START_TEST(moves_allocate_nothing)
{
    size_t live = th_live_bytes;
    cqc_conn *c = th_connect(&daemon_, CQC_MSGPACK, NULL);
    enum { N = 10000 };
    static char names[N][12];
    static const char *ids[N];
    static double pos[3 * N], rot[4 * N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        ids[i] = names[i];
        rot[4 * i + 3] = 1;
    }
    cqc_batch mv = {.move_ids = ids, .move_positions = pos, .move_rotations = rot, .move_count = N};
    for (int round = 0; round < 2; round++) {
        size_t before = th_allocs;
        ck_assert_int_eq(cqc_pipe_begin(c), CQC_OK);
        ck_assert_int_eq(cqc_q_batch(c, "nowhere", &mv, NULL), CQC_OK);
        if (round == 1)
            ck_assert_uint_eq(th_allocs, before);
    }
    cqc_close(c);
    ck_assert_uint_eq(th_live_bytes, live);
}
END_TEST

/* Whichever allocation fails, every call answers a status (CQC_ENOMEM
 * where it was the library's) and nothing leaks. The nth allocation
 * fails for n = 0, 1, ... until a whole session gets through. */
START_TEST(allocation_failure)
{
    size_t live = th_live_bytes;
    bool whole = false;
    for (long n = 0; n < 400 && !whole; n++) {
        th_fail_after = n;
        cqc_options o;
        cqc_options_init(&o);
        o.port = (uint16_t)daemon_.stream_port;
        o.encoding = _i ? CQC_JSON : CQC_MSGPACK;
        cqc_conn *c;
        cqc_status s = cqc_connect(&o, &c);
        if (s != CQC_OK) {
            ck_assert_int_eq(s, CQC_ENOMEM);
            ck_assert_uint_eq(th_live_bytes, live);
            continue;
        }
        cqc_body bodies[2] = {ball("a", 1, 0), ball("b", 1, 1.5)};
        cqc_batch up_ = {.upserts = bodies, .upsert_count = 2};
        cqc_contacts ct = {0};
        cqc_status st[3] = {cqc_world_create(c, "oom", NULL, NULL), cqc_batch_apply(c, "oom", &up_, NULL),
                            cqc_contacts_get(c, "oom", NULL, &ct)};
        whole = true;
        for (int k = 0; k < 3; k++) {
            ck_assert_msg(st[k] == CQC_OK || st[k] == CQC_ENOMEM || st[k] == CQC_EUNKNOWN,
                          "n %ld call %d: %s", n, k, cqc_strerror(st[k]));
            whole = whole && st[k] == CQC_OK;
        }
        if (whole)
            ck_assert_uint_eq(ct.pair_count, 1);
        cqc_contacts_release(&ct);
        cqc_close(c);
        ck_assert_uint_eq(th_live_bytes, live);
    }
    th_fail_after = -1;
    ck_assert(whole);
}
END_TEST

Suite *cqc_calls_suite(void)
{
    Suite *s = suite_create("cqc_calls");
    TCase *tc = tcase_create("daemon");
    tcase_add_unchecked_fixture(tc, up, down);
    tcase_set_timeout(tc, 60);
    /* Each test twice: _i 0 in MessagePack, 1 in JSON. */
    tcase_add_loop_test(tc, world_lifecycle, 0, 2);
    tcase_add_loop_test(tc, shapes_round_trip, 0, 2);
    tcase_add_loop_test(tc, pair_tests, 0, 2);
    tcase_add_loop_test(tc, pipelined_tick, 0, 2);
    tcase_add_loop_test(tc, queries, 0, 2);
    tcase_add_loop_test(tc, export_import, 0, 2);
    tcase_add_loop_test(tc, errors, 0, 2);
    tcase_add_loop_test(tc, token, 0, 2);
    tcase_add_test(tc, moves_allocate_nothing);
    tcase_add_loop_test(tc, allocation_failure, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
