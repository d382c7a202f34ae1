/* The world's registry, batches and broadphase. Oracles: the registry as
 * read back through the public accessors against what the ops said (a
 * model kept here), snapshots taken before a rejected batch, the allocator's
 * byte counter, and a brute-force broadphase over every pair of shapes
 * (world_oracle.c) after every frame of random motion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/hull.h"
#include "cq/mesh.h"
#include "world_oracle.h"

Suite *world_suite(void);

static cq_world *make_world(double skin, int capacity)
{
    cq_world *w = NULL;
    cq_world_settings s = {.skin = skin, .capacity = capacity};
    ck_assert_int_eq(cq_world_create(&s, &w), CQ_OK);
    return w;
}

static cq_world_handle find(const cq_world *w, const char *id)
{
    cq_world_handle h = {0, 0};
    ck_assert_int_eq(cq_world_find(w, id, &h), CQ_OK);
    return h;
}

START_TEST(test_registry)
{
    cq_world *w = make_world(0, 4);
    cq_world_op ops[] = {
        wo_upsert("b", wo_sphere(1), wo_at(0, 0, 0), cq_v3(1, 0, 0), 1, 3),
        wo_upsert("a", wo_box(1, 2, 3), wo_at(5, 0, 0), cq_v3(0, 0, 0), 2, 1),
        wo_upsert("c:1.x-_Z", wo_plane(cq_v3(0, 1, 0), -4), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
    };
    wo_apply(w, ops, 3);
    ck_assert_int_eq(cq_world_count(w), 3);
    cq_world_handle a = find(w, "a"), b = find(w, "b");
    cq_world_body body;
    ck_assert_int_eq(cq_world_get(w, a, &body), CQ_OK);
    ck_assert(body.shape.type == CQ_BOX && body.shape.box.half.z == 3 && body.pose.p.x == 5 && body.layer == 2);
    ck_assert_int_eq(cq_world_get(w, b, &body), CQ_OK);
    ck_assert(body.velocity.x == 1 && body.mask == 3);
    ck_assert_str_eq(cq_world_id(w, a), "a");
    cq_world_handle list[3];
    int n = 0;
    ck_assert_int_eq(cq_world_list(w, list, 2, &n), CQ_ERANGE);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(cq_world_list(w, list, 3, &n), CQ_OK);
    ck_assert_str_eq(cq_world_id(w, list[0]), "a");
    ck_assert_str_eq(cq_world_id(w, list[1]), "b");
    ck_assert_str_eq(cq_world_id(w, list[2]), "c:1.x-_Z");

    /* Replacing keeps the handle; a move by handle; removing makes it stale. */
    cq_world_op replace = wo_upsert("a", wo_sphere(2), wo_at(1, 1, 1), cq_v3(0, 0, 0), 1, 1);
    wo_apply(w, &replace, 1);
    cq_world_handle a2 = find(w, "a");
    ck_assert(a2.index == a.index && a2.generation == a.generation);
    cq_world_op by_handle = {.kind = CQ_WORLD_MOVE, .handle = a, .pose = wo_at(7, 0, 0), .keep_velocity = true};
    wo_apply(w, &by_handle, 1);
    ck_assert_int_eq(cq_world_get(w, a, &body), CQ_OK);
    ck_assert(body.pose.p.x == 7 && body.shape.type == CQ_SPHERE);
    cq_world_op gone[] = {wo_remove("a"), wo_upsert("a", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1)};
    wo_apply(w, gone, 2);
    cq_world_handle a3 = find(w, "a");
    ck_assert(a3.index != a.index || a3.generation != a.generation);
    ck_assert_int_eq(cq_world_get(w, a, &body), CQ_ENOT_FOUND);
    ck_assert_ptr_null(cq_world_id(w, a));
    cq_world_op stale = {.kind = CQ_WORLD_REMOVE, .handle = a};
    int bad = 0;
    ck_assert_int_eq(cq_world_apply(w, &stale, 1, &bad), CQ_ENOT_FOUND);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(cq_world_find(w, "zz", &a), CQ_ENOT_FOUND);
    ck_assert_int_eq(cq_world_get(w, (cq_world_handle){0, 0}, &body), CQ_ENOT_FOUND);
    cq_world_destroy(w);
}
END_TEST

/* A small world and a model of it: for each op kind and each bad op
 * anywhere in a batch, the batch is rejected at that index and nothing
 * changes. */
START_TEST(test_all_or_nothing)
{
    cq_world *w = make_world(0.1, 8);
    cq_world_op base[] = {
        wo_upsert("p", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("q", wo_box(1, 1, 1), wo_at(1, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("r", wo_capsule(0.5, 1), wo_at(0, 1, 0), cq_v3(0, 0, 0), 1, 1),
    };
    wo_apply(w, base, 3);
    wo_item *before;
    int nb = wo_items(w, &before);
    cq_world_pair pairs_before[8];
    int np_before = 0;
    ck_assert_int_eq(cq_world_pairs(w, pairs_before, 8, &np_before), CQ_OK);

    cq_xform mirror = wo_at(0, 0, 0);
    mirror.r.c[2] = cq_v3(0, 0, -1);
    cq_xform skew = wo_at(0, 0, 0);
    skew.r.c[1] = cq_v3(0.1, 1, 0);
    cq_world_op bads[] = {
        wo_move("nobody", wo_at(0, 0, 0), cq_v3(0, 0, 0)),
        wo_remove("nobody"),
        wo_upsert("", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("has space", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("x", wo_sphere(-1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("x", wo_sphere(1), wo_at(NAN, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("x", wo_sphere(1), mirror, cq_v3(0, 0, 0), 1, 1),
        wo_move("p", skew, cq_v3(0, 0, 0)),
        wo_move("p", wo_at(0, 0, 0), cq_v3(INFINITY, 0, 0)),
        wo_upsert("x", wo_plane(cq_v3(0, 2, 0), 0), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        (cq_world_op){.kind = (cq_world_op_kind)7, .id = "p"},
        (cq_world_op){.kind = CQ_WORLD_UPSERT, .handle = {0, 1}, .shape = {.type = CQ_SPHERE},
                      .pose = {.r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}}},
    };
    const int expect[] = {CQ_ENOT_FOUND, CQ_ENOT_FOUND, CQ_ERANGE, CQ_ERANGE, CQ_ENEGATIVE, CQ_ENOT_FINITE,
                          CQ_EMIRROR, CQ_ENOT_ORTHOGONAL, CQ_ENOT_FINITE, CQ_ENOT_UNIT, CQ_ERANGE, CQ_ERANGE};
    char long_id[CQ_WORLD_ID_MAX + 2];
    memset(long_id, 'k', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    for (int k = 0; k < (int)(sizeof bads / sizeof bads[0]) + 1; k++) {
        cq_world_op bad_op = k < (int)(sizeof bads / sizeof bads[0])
                                 ? bads[k]
                                 : wo_upsert(long_id, wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1);
        int want = k < (int)(sizeof bads / sizeof bads[0]) ? expect[k] : CQ_ERANGE;
        for (int pos = 0; pos < 4; pos++) {
            cq_world_op batch[5];
            int n = 0;
            const cq_world_op good[] = {
                wo_move("p", wo_at(3, 3, 3), cq_v3(1, 1, 1)),
                wo_upsert("new", wo_sphere(2), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
                wo_remove("q"),
            };
            for (int g = 0; g < 3; g++) {
                if (g == pos)
                    batch[n++] = bad_op;
                batch[n++] = good[g];
            }
            if (pos == 3)
                batch[n++] = bad_op;
            int bad = -5;
            int rc = cq_world_apply(w, batch, n, &bad);
            if (rc != want)
                ck_abort_msg("bad op %d at %d: got %s, want %s", k, pos, cq_err_name(rc), cq_err_name(want));
            ck_assert_int_eq(bad, pos);
            wo_item *after;
            int na = wo_items(w, &after);
            ck_assert(wo_items_equal(before, nb, after, na));
            free(after);
            cq_world_pair pairs_after[8];
            int np = 0;
            ck_assert_int_eq(cq_world_pairs(w, pairs_after, 8, &np), CQ_OK);
            ck_assert(np == np_before && memcmp(pairs_after, pairs_before, (size_t)np * sizeof *pairs_after) == 0);
        }
    }
    free(before);
    cq_world_destroy(w);
}
END_TEST

/* The pose rules hold per entry of R^T R, each within 1e-9: a rotation
 * whose deviations are each inside that but add up beyond it is a pose,
 * and one entry just beyond it is not. */
START_TEST(test_pose_tolerance_per_entry)
{
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){0}, &w), CQ_OK);
    cq_xform near = wo_at(1, 2, 3);
    near.r.c[0] = cq_v3(1 + 4e-10, 0, 0); /* |c0|^2 - 1 = 8e-10 */
    near.r.c[1] = cq_v3(0, 1 + 4e-10, 0);
    near.r.c[2] = cq_v3(0, 0, 1 + 4e-10);
    cq_world_op op = wo_upsert("near", wo_sphere(1), near, cq_v3(0, 0, 0), 1, 1);
    int bad = -5;
    ck_assert_int_eq(cq_world_apply(w, &op, 1, &bad), CQ_OK);
    near.r.c[2] = cq_v3(0, 0, 1 + 6e-10); /* 1.2e-9 */
    op = wo_move("near", near, cq_v3(0, 0, 0));
    ck_assert_int_eq(cq_world_apply(w, &op, 1, &bad), CQ_ENOT_UNIT);
    ck_assert_int_eq(bad, 0);
    cq_world_destroy(w);
}
END_TEST

/* Ops see the state the earlier ops of their batch leave. */
START_TEST(test_ops_in_order)
{
    cq_world *w = make_world(0, 4);
    cq_world_op setup = wo_upsert("y", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1);
    wo_apply(w, &setup, 1);
    cq_world_handle y0 = find(w, "y");
    int bad;

    /* Created, moved, removed, created again, moved: one new shape at the last pose. */
    cq_world_op a[] = {
        wo_upsert("x", wo_sphere(1), wo_at(1, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_move("x", wo_at(2, 0, 0), cq_v3(5, 0, 0)),
        wo_remove("x"),
        wo_upsert("x", wo_box(1, 1, 1), wo_at(3, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_move("x", wo_at(4, 0, 0), cq_v3(0, 6, 0)),
    };
    wo_apply(w, a, 5);
    cq_world_body body;
    ck_assert_int_eq(cq_world_get(w, find(w, "x"), &body), CQ_OK);
    ck_assert(body.shape.type == CQ_BOX && body.pose.p.x == 4 && body.velocity.y == 6 && body.velocity.x == 0);
    ck_assert_int_eq(cq_world_count(w), 2);

    /* A move after a remove in the same batch fails at its index. */
    cq_world_op b[] = {wo_remove("x"), wo_move("x", wo_at(0, 0, 0), cq_v3(0, 0, 0))};
    ck_assert_int_eq(cq_world_apply(w, b, 2, &bad), CQ_ENOT_FOUND);
    ck_assert_int_eq(bad, 1);
    ck_assert_int_eq(cq_world_count(w), 2);

    /* Removing and upserting an existing id: a new registration, the old
     * handle stale already within the batch. */
    cq_world_op c[] = {
        wo_remove("y"),
        wo_upsert("y", wo_sphere(3), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        (cq_world_op){.kind = CQ_WORLD_MOVE, .handle = y0, .pose = wo_at(0, 0, 0)},
    };
    ck_assert_int_eq(cq_world_apply(w, c, 3, &bad), CQ_ENOT_FOUND);
    ck_assert_int_eq(bad, 2);
    wo_apply(w, c, 2);
    cq_world_handle y1 = find(w, "y");
    ck_assert(y1.index != y0.index || y1.generation != y0.generation);
    ck_assert_int_eq(cq_world_get(w, y0, &body), CQ_ENOT_FOUND);
    ck_assert_int_eq(cq_world_get(w, y1, &body), CQ_OK);
    ck_assert(body.shape.sphere.radius == 3);

    /* keep_velocity keeps it; an upsert after moves replaces everything. */
    cq_world_op d[] = {
        wo_move("y", wo_at(1, 0, 0), cq_v3(9, 9, 9)),
        (cq_world_op){.kind = CQ_WORLD_MOVE, .id = "y", .pose = wo_at(2, 0, 0), .keep_velocity = true},
    };
    wo_apply(w, d, 2);
    ck_assert_int_eq(cq_world_get(w, y1, &body), CQ_OK);
    ck_assert(body.pose.p.x == 2 && body.velocity.z == 9);
    cq_world_destroy(w);
}
END_TEST

/* Growth past the preallocated capacity happens in the batch, is counted,
 * and every shape stays reachable and in the broadphase. */
START_TEST(test_capacity_growth)
{
    cq_world *w = make_world(0, 4);
    cq_world_stats s0 = cq_world_get_stats(w);
    ck_assert_int_eq(s0.capacity, 4);
    ck_assert_int_eq((int)s0.grows, 0);
    char ids[100][8];
    for (int k = 0; k < 100; k++) {
        snprintf(ids[k], sizeof ids[k], "n%02d", k);
        cq_world_op op = wo_upsert(ids[k], wo_sphere(0.6), wo_at(k, 0, 0), cq_v3(0, 0, 0), 1, 1);
        wo_apply(w, &op, 1);
    }
    cq_world_stats s = cq_world_get_stats(w);
    ck_assert_int_ge(s.capacity, 100);
    ck_assert_int_ge((int)s.grows, 5); /* 4 -> 8 -> 16 -> 32 -> 64 -> 128 */
    ck_assert_int_eq(s.shapes, 100);
    ck_assert_int_eq(s.broadphase_pairs, 99); /* neighbours 1 apart, radius 0.6 */
    for (int k = 0; k < 100; k++) {
        cq_world_body body;
        ck_assert_int_eq(cq_world_get(w, find(w, ids[k]), &body), CQ_OK);
        ck_assert(body.pose.p.x == k);
    }
    /* A configure with a larger capacity grows at once; a smaller one is ignored. */
    uint64_t g = s.grows;
    ck_assert_int_eq(cq_world_configure(w, &(cq_world_settings){.capacity = 1000}), CQ_OK);
    ck_assert_int_ge(cq_world_get_stats(w).capacity, 1000);
    ck_assert_int_eq((int)cq_world_get_stats(w).grows, (int)g + 1);
    ck_assert_int_eq(cq_world_configure(w, &(cq_world_settings){.capacity = 2}), CQ_OK);
    ck_assert_int_ge(cq_world_get_stats(w).capacity, 1000);
    ck_assert_int_eq(cq_world_configure(w, &(cq_world_settings){.skin = -1}), CQ_ENEGATIVE);
    cq_world_destroy(w);
}
END_TEST

static cq_hull *cube_hull(double h)
{
    cq_vec3 p[8];
    for (int k = 0; k < 8; k++)
        p[k] = cq_v3(k & 1 ? -h : h, k & 2 ? -h : h, k & 4 ? -h : h);
    cq_hull *hull = NULL;
    ck_assert_int_eq(cq_hull_build(p, 8, 0, &hull), CQ_OK);
    return hull;
}

static cq_shape convex_of(const cq_hull *h) { return (cq_shape){.type = CQ_CONVEX, .convex = {h}}; }

/* An allocator that knows which blocks are live. */
typedef struct tracker {
    void *live[256];
    int n;
} tracker;

static void *track_alloc(size_t size, void *ctx)
{
    tracker *t = ctx;
    void *p = malloc(size);
    ck_assert(p && t->n < 256);
    t->live[t->n++] = p;
    return p;
}

static void track_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    tracker *t = ctx;
    for (int k = 0; k < t->n; k++)
        if (t->live[k] == ptr) {
            t->live[k] = t->live[--t->n];
            free(ptr);
            return;
        }
    ck_abort_msg("freed a block that is not live");
}

static bool is_live(const tracker *t, const void *p)
{
    for (int k = 0; k < t->n; k++)
        if (t->live[k] == p)
            return true;
    return false;
}

/* Hulls: the world owns them after a successful batch and frees each once
 * when replaced, removed or destroyed; a rejected batch leaves them to the
 * caller. A tracking allocator is the oracle (a double free aborts). */
START_TEST(test_hull_ownership)
{
    tracker t = {.n = 0};
    cq_set_allocator(&(cq_allocator){track_alloc, track_free, &t});
    size_t base = cq_alloc_bytes();
    cq_world *w = make_world(0, 4);
    cq_hull *h1 = cube_hull(1), *h2 = cube_hull(2), *h3 = cube_hull(3), *h4 = cube_hull(4);
    cq_xform o = wo_at(0, 0, 0);
    cq_vec3 z = cq_v3(0, 0, 0);

    /* Rejected: the caller keeps them. */
    cq_world_op rej[] = {wo_upsert("a", convex_of(h1), o, z, 1, 1), wo_upsert("b", convex_of(h2), o, z, 1, 1),
                         wo_remove("none")};
    int bad;
    ck_assert_int_eq(cq_world_apply(w, rej, 3, &bad), CQ_ENOT_FOUND);
    ck_assert(is_live(&t, h1) && is_live(&t, h2));

    /* One hull for two ids is refused (blamed on the later upsert). */
    cq_world_op twice[] = {wo_upsert("a", convex_of(h1), o, z, 1, 1), wo_upsert("b", convex_of(h1), o, z, 1, 1)};
    ck_assert_int_eq(cq_world_apply(w, twice, 2, &bad), CQ_ERANGE);
    ck_assert_int_eq(bad, 1);
    ck_assert(is_live(&t, h1));

    /* a takes h1, then h2 in the same batch: h1 is freed at once. */
    cq_world_op take[] = {wo_upsert("a", convex_of(h1), o, z, 1, 1), wo_upsert("a", convex_of(h2), o, z, 1, 1)};
    wo_apply(w, take, 2);
    ck_assert(!is_live(&t, h1) && is_live(&t, h2));
    /* Upserting a's own hull again keeps it. */
    cq_world_op same = wo_upsert("a", convex_of(h2), wo_at(1, 0, 0), z, 1, 1);
    wo_apply(w, &same, 1);
    ck_assert(is_live(&t, h2));
    /* Replacing a by a sphere frees h2; b takes h3 and is removed. */
    cq_world_op swap[] = {wo_upsert("a", wo_sphere(1), o, z, 1, 1), wo_upsert("b", convex_of(h3), o, z, 1, 1)};
    wo_apply(w, swap, 2);
    ck_assert(!is_live(&t, h2) && is_live(&t, h3));
    cq_world_op rm = wo_remove("b");
    wo_apply(w, &rm, 1);
    ck_assert(!is_live(&t, h3));
    /* Destroy frees what the world still owns. */
    cq_world_op last = wo_upsert("c", convex_of(h4), o, z, 1, 1);
    wo_apply(w, &last, 1);
    cq_world_destroy(w);
    ck_assert(!is_live(&t, h4));
    ck_assert_int_eq(cq_alloc_bytes(), base);
    ck_assert_int_eq(t.n, 0);
    cq_set_allocator(NULL);
}
END_TEST

/* A square of side 2 s in the z = 0 plane, as two triangles. */
static cq_mesh *square_mesh(double s)
{
    cq_vec3 v[4] = {cq_v3(-s, -s, 0), cq_v3(s, -s, 0), cq_v3(s, s, 0), cq_v3(-s, s, 0)};
    int t[2][3] = {{0, 1, 2}, {0, 2, 3}};
    cq_mesh *m = NULL;
    ck_assert_int_eq(cq_mesh_build(v, 4, (const int(*)[3])t, 2, &m), CQ_OK);
    return m;
}

static cq_shape mesh_of(const cq_mesh *m) { return (cq_shape){.type = CQ_MESH, .mesh = {m}}; }

/* Meshes follow the hulls' rules. Oracles: the tracking allocator says
 * which meshes are live (a mesh is the start of its block; a double free
 * aborts), and the allocator's byte counter must not move on a rejected
 * batch and must return to its baseline when the world is destroyed. */
START_TEST(test_mesh_ownership)
{
    tracker t = {.n = 0};
    cq_set_allocator(&(cq_allocator){track_alloc, track_free, &t});
    size_t base = cq_alloc_bytes();
    cq_world *w = make_world(0, 4);
    cq_mesh *m[4];
    for (int k = 0; k < 4; k++)
        m[k] = square_mesh(k + 1);
    cq_xform o = wo_at(0, 0, 0);
    cq_vec3 z = cq_v3(0, 0, 0);
    int bad;

    /* Rejected: nothing freed, the caller keeps the mesh. */
    size_t bytes = cq_alloc_bytes();
    cq_world_op rej[] = {wo_upsert("a", mesh_of(m[0]), o, z, 1, 1), wo_remove("none")};
    ck_assert_int_eq(cq_world_apply(w, rej, 2, &bad), CQ_ENOT_FOUND);
    ck_assert_int_eq(bad, 1);
    ck_assert_int_eq(cq_alloc_bytes(), bytes);
    ck_assert(is_live(&t, m[0]));

    /* One mesh for two ids, in one batch or against a stored one the batch
     * touches: refused, blamed on the later upsert, nothing freed. */
    cq_world_op twice[] = {wo_upsert("a", mesh_of(m[0]), o, z, 1, 1), wo_upsert("b", mesh_of(m[0]), o, z, 1, 1)};
    ck_assert_int_eq(cq_world_apply(w, twice, 2, &bad), CQ_ERANGE);
    ck_assert_int_eq(bad, 1);
    ck_assert_int_eq(cq_alloc_bytes(), bytes);
    wo_apply(w, twice, 1);
    bytes = cq_alloc_bytes();
    cq_world_op again[] = {wo_move("a", wo_at(1, 0, 0), z), wo_upsert("b", mesh_of(m[0]), o, z, 1, 1)};
    ck_assert_int_eq(cq_world_apply(w, again, 2, &bad), CQ_ERANGE);
    ck_assert_int_eq(bad, 1);
    ck_assert_int_eq(cq_alloc_bytes(), bytes);
    ck_assert_int_eq(cq_world_count(w), 1);

    /* Upserting a's own mesh again keeps it; replacing it frees it. */
    cq_world_op same = wo_upsert("a", mesh_of(m[0]), wo_at(2, 0, 0), z, 1, 1);
    wo_apply(w, &same, 1);
    ck_assert(is_live(&t, m[0]));
    cq_world_op replace = wo_upsert("a", mesh_of(m[1]), o, z, 1, 1);
    wo_apply(w, &replace, 1);
    ck_assert(!is_live(&t, m[0]) && is_live(&t, m[1]));
    /* A mesh replaced by a hull, and the hull by a mesh. */
    cq_hull *h = cube_hull(1);
    cq_world_op to_hull[] = {wo_upsert("a", convex_of(h), o, z, 1, 1), wo_upsert("b", mesh_of(m[2]), o, z, 1, 1)};
    wo_apply(w, to_hull, 2);
    ck_assert(!is_live(&t, m[1]) && is_live(&t, h) && is_live(&t, m[2]));
    cq_world_op to_mesh = wo_upsert("a", mesh_of(m[3]), o, z, 1, 1);
    wo_apply(w, &to_mesh, 1);
    ck_assert(!is_live(&t, h) && is_live(&t, m[3]));
    /* Removing b frees its mesh; destroying the world frees a's. */
    cq_world_op rm = wo_remove("b");
    wo_apply(w, &rm, 1);
    ck_assert(!is_live(&t, m[2]) && is_live(&t, m[3]));
    cq_world_destroy(w);
    ck_assert_int_eq(cq_alloc_bytes(), base);
    ck_assert_int_eq(t.n, 0);
    cq_set_allocator(NULL);
}
END_TEST

/* Every allocation a batch makes fails in turn: the batch then reports
 * CQ_ENO_MEMORY and the world is unchanged, or it succeeds completely
 * (derived structures may be stale until the next mutation). */
START_TEST(test_alloc_failure)
{
    wo_alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){wo_probe_alloc, wo_probe_free, &probe});
    size_t base = cq_alloc_bytes();
    for (long k = 1; k <= 6; k++) { /* creation fails at every allocation */
        probe = (wo_alloc_probe){0, k};
        cq_world *w = (cq_world *)1;
        int rc = cq_world_create(&(cq_world_settings){.capacity = 4}, &w);
        ck_assert(rc == CQ_ENO_MEMORY || rc == CQ_OK);
        if (rc == CQ_OK)
            cq_world_destroy(w);
        else
            ck_assert_ptr_null(w);
        ck_assert_int_eq(cq_alloc_bytes(), base);
    }
    int outcomes[2] = {0, 0};
    for (long k = 1; k <= 40; k++) {
        probe = (wo_alloc_probe){0, 0};
        cq_world *w = make_world(0.05, 4);
        cq_world_op setup[4];
        char ids[4][4];
        for (int i = 0; i < 4; i++) {
            snprintf(ids[i], sizeof ids[i], "s%d", i);
            setup[i] = wo_upsert(ids[i], wo_sphere(1), wo_at(i, 0, 0), cq_v3(0, 0, 0), 1, 1);
        }
        wo_apply(w, setup, 4);
        wo_item *before;
        int nb = wo_items(w, &before);

        /* Grows the world past its capacity, with 40 overlapping spheres. */
        cq_world_op batch[41];
        char more[40][6];
        for (int i = 0; i < 40; i++) {
            snprintf(more[i], sizeof more[i], "m%02d", i);
            batch[i] = wo_upsert(more[i], wo_sphere(1), wo_at(0.01 * i, 0, 0), cq_v3(0, 0, 0), 1, 1);
        }
        batch[40] = wo_remove("s0");
        probe = (wo_alloc_probe){0, k};
        int bad = 0;
        int rc = cq_world_apply(w, batch, 41, &bad);
        probe = (wo_alloc_probe){0, 0};
        wo_item *after;
        int na = wo_items(w, &after);
        if (rc == CQ_ENO_MEMORY) {
            outcomes[0]++;
            ck_assert_int_eq(bad, -1);
            ck_assert(wo_items_equal(before, nb, after, na));
        } else {
            outcomes[1]++;
            ck_assert_int_eq(rc, CQ_OK);
            ck_assert_int_eq(na, 43);
        }
        /* The next mutation brings the broadphase back, a refresh the ray tree. */
        wo_apply(w, NULL, 0);
        ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
        cq_world_stats st = cq_world_get_stats(w);
        ck_assert(!st.broadphase_stale && !st.bvh_stale);
        int (*want)[2];
        int nw = wo_brute_pairs(after, na, 0.05, &want);
        cq_world_pair got[1024];
        int ng = 0;
        ck_assert_int_eq(cq_world_pairs(w, got, 1024, &ng), CQ_OK);
        ck_assert_int_eq(ng, nw);
        for (int i = 0; i < ng; i++)
            ck_assert(wo_find(after, na, got[i].a) == want[i][0] && wo_find(after, na, got[i].b) == want[i][1]);
        free(want);
        free(before);
        free(after);
        cq_world_destroy(w);
        ck_assert_int_eq(cq_alloc_bytes(), base);
    }
    ck_assert(outcomes[0] > 0 && outcomes[1] > 0);
    cq_set_allocator(NULL);
}
END_TEST

/* ---- broadphase against brute force ---- */

typedef struct sim {
    int n;              /* id pool size */
    bool *alive;
    cq_vec3 *pos, *vel;
    char (*id)[12];
} sim;

/* Random worlds of spheres, boxes, capsules, triangles and a few planes,
 * moving for many frames with adds, removes, id reuse (new shapes under old
 * ids) and layer changes; the pairs must equal brute force every frame. */
static void run_random(uint64_t seed, int pool, int frames, double extent)
{
    tu_rng rng = {seed};
    double skin = 0.1;
    cq_world *w = make_world(skin, pool / 4);
    sim s = {pool, calloc((size_t)pool, sizeof(bool)), calloc((size_t)pool, sizeof(cq_vec3)),
             calloc((size_t)pool, sizeof(cq_vec3)), calloc((size_t)pool, 12)};
    cq_world_op *ops = malloc(sizeof *ops * (size_t)pool * 2);
    for (int k = 0; k < pool; k++)
        snprintf(s.id[k], 12, "id%04d", (k * 7919) % pool);
    for (int frame = 0; frame < frames; frame++) {
        int n = 0;
        bool churn = frame % 4 != 3; /* every fourth frame only moves (the BVH is refit) */
        for (int k = 0; k < pool; k++) {
            double u = churn ? tu_uniform(&rng, 0, 1) : tu_uniform(&rng, 0.05, 1);
            if (!s.alive[k] && u < 0.3 && churn) {
                bool plane = k % 37 == 0;
                cq_shape_type t = plane ? CQ_PLANE : wo_random_type(&rng, false);
                s.pos[k] = cq_v3(tu_uniform(&rng, -extent, extent), tu_uniform(&rng, -extent, extent),
                                 tu_uniform(&rng, -extent, extent));
                s.vel[k] = plane ? cq_v3(0, 0, 0)
                                 : cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
                cq_xform pose = {s.pos[k], plane ? cq_mat3_identity() : tu_rotation(&rng)};
                uint32_t layer = 1u << (int)tu_uniform(&rng, 0, 3), mask = 1u + (uint32_t)tu_uniform(&rng, 0, 7);
                ops[n++] = wo_upsert(s.id[k], wo_random_shape(&rng, t, 1), pose, s.vel[k], layer, mask);
                s.alive[k] = true;
            } else if (s.alive[k] && u < 0.03) {
                ops[n++] = wo_remove(s.id[k]);
                s.alive[k] = false;
            } else if (s.alive[k] && u < 0.05) { /* a new shape under the same id */
                cq_shape_type t = wo_random_type(&rng, false);
                ops[n++] = wo_upsert(s.id[k], wo_random_shape(&rng, t, 1), (cq_xform){s.pos[k], tu_rotation(&rng)},
                                     s.vel[k], 1u << (int)tu_uniform(&rng, 0, 3), 7);
            } else if (s.alive[k] && u < 0.8 && k % 37 != 0) {
                for (int i = 0; i < 3; i++) {
                    double p = cq_comp(s.pos[k], i) + 0.2 * cq_comp(s.vel[k], i);
                    if (fabs(p) > extent) {
                        double *v = i == 0 ? &s.vel[k].x : i == 1 ? &s.vel[k].y : &s.vel[k].z;
                        *v = -*v;
                        p = cq_comp(s.pos[k], i) + 0.2 * *v;
                    }
                    *(i == 0 ? &s.pos[k].x : i == 1 ? &s.pos[k].y : &s.pos[k].z) = p;
                }
                ops[n++] = wo_move(s.id[k], (cq_xform){s.pos[k], tu_rotation(&rng)}, s.vel[k]);
            }
        }
        wo_apply(w, ops, n);
        wo_check_pairs(w, skin);
    }
    /* Moves leave the ray tree behind until a refresh, which refits (or rebuilds) it. */
    cq_world_stats st = cq_world_get_stats(w);
    ck_assert(st.grows > 0 && st.bvh_stale);
    ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
    cq_world_stats after = cq_world_get_stats(w);
    ck_assert(!after.bvh_stale && after.bvh_refits + after.bvh_builds > st.bvh_refits + st.bvh_builds);
    cq_world_destroy(w);
    free(s.alive);
    free(s.pos);
    free(s.vel);
    free(s.id);
    free(ops);
}

START_TEST(test_broadphase_random_small) { run_random(101, 40, 3000, 4); }
END_TEST

START_TEST(test_broadphase_random_dense) { run_random(202, 150, 400, 5); }
END_TEST

/* Layer and mask: a pair needs each one's layer to meet the other's mask;
 * planes pair with dynamics but never with each other. */
START_TEST(test_layer_mask)
{
    cq_world *w = make_world(0, 8);
    cq_xform o = wo_at(0, 0, 0);
    cq_vec3 z = cq_v3(0, 0, 0);
    cq_world_op ops[] = {
        wo_upsert("a", wo_sphere(1), o, z, 1, 2),         /* a-b: 1&1, 2&2 */
        wo_upsert("b", wo_sphere(1), o, z, 2, 1),
        wo_upsert("c", wo_sphere(1), o, z, 4, 0xffffffffu), /* c-a: 4&2 = 0 */
        wo_upsert("d", wo_sphere(1), o, z, 1, 4),         /* d-c: 1&~0, 4&4; d-a: 1&2 = 0; d-b: 1&1, 2&4 = 0 */
        wo_upsert("e", wo_plane(cq_v3(0, 1, 0), 0), o, z, 7, 7),
        wo_upsert("f", wo_plane(cq_v3(1, 0, 0), 0), o, z, 7, 7),
    };
    wo_apply(w, ops, 6);
    cq_world_pair p[16];
    int n = 0;
    ck_assert_int_eq(cq_world_pairs(w, p, 16, &n), CQ_OK);
    const char *want[][2] = {{"a", "b"}, {"a", "e"}, {"a", "f"}, {"b", "e"}, {"b", "f"},
                             {"c", "d"}, {"c", "e"}, {"c", "f"}, {"d", "e"}, {"d", "f"}};
    ck_assert_int_eq(n, 10);
    for (int k = 0; k < n; k++) {
        ck_assert_str_eq(cq_world_id(w, p[k].a), want[k][0]);
        ck_assert_str_eq(cq_world_id(w, p[k].b), want[k][1]);
    }
    /* A layer change through an upsert takes effect. */
    cq_world_op relayer = wo_upsert("a", wo_sphere(1), o, z, 0, 0);
    wo_apply(w, &relayer, 1);
    ck_assert_int_eq(cq_world_pairs(w, p, 16, &n), CQ_OK);
    ck_assert_int_eq(n, 7);
    cq_world_destroy(w);
}
END_TEST

/* ---- the id order under single changes ---- */

static int str_cmp(const void *a, const void *b) { return strcmp(a, b); }

/* A large world changed a few ids at a time (the order takes them by
 * binary search, the ranks wait): cq_world_list stays sorted by strcmp
 * (wo_items checks it) and holds exactly the model's ids, the pairs equal
 * brute force, and a ray meeting two identical spheres at once reports
 * the smaller id, with the ranks stale and after a refresh. */
START_TEST(test_order_few_changes)
{
    enum { POOL = 700, ROUNDS = 240 };
    tu_rng rng = {4242};
    cq_world *w = make_world(0.1, 16);
    static char ids[POOL][12];
    bool alive[POOL] = {false};
    cq_world_op ops[POOL];
    int n = 0;
    for (int k = 0; k < POOL; k++) {
        snprintf(ids[k], sizeof ids[k], "%x", (unsigned)(tu_uniform(&rng, 0, 1) * 0xfffffff) * 16 + (unsigned)k % 16);
        if (k % 2 == 0) {
            ops[n++] = wo_upsert(ids[k], wo_sphere(0.5), wo_at(tu_uniform(&rng, -20, 20), 0, 0), cq_v3(0, 0, 0), 1, 1);
            alive[k] = true;
        }
    }
    wo_apply(w, ops, n);
    for (int round = 0; round < ROUNDS; round++) {
        n = 0;
        for (int c = 0; c < 1 + round % 3; c++) {
            int k = (int)tu_uniform(&rng, 0, POOL);
            bool dup = false;
            for (int i = 0; i < n; i++)
                dup |= ops[i].id == ids[k];
            if (dup)
                continue;
            ops[n++] = alive[k] ? wo_remove(ids[k])
                                : wo_upsert(ids[k], wo_sphere(0.5), wo_at(tu_uniform(&rng, -20, 20), 0, 0),
                                            cq_v3(0, 0, 0), 1, 1);
            alive[k] = !alive[k];
        }
        wo_apply(w, ops, n);
        wo_item *items;
        int ni = wo_items(w, &items), nm = 0;
        char(*model)[12] = malloc(sizeof *model * POOL);
        for (int k = 0; k < POOL; k++)
            if (alive[k])
                memcpy(model[nm++], ids[k], sizeof *model);
        qsort(model, (size_t)nm, sizeof *model, str_cmp);
        ck_assert_int_eq(ni, nm);
        for (int i = 0; i < ni; i++)
            ck_assert_str_eq(items[i].id, model[i]);
        free(model);
        free(items);
        if (round % 40 == 0)
            wo_check_pairs(w, 0.1);
    }
    cq_world_op twins[] = {wo_upsert("tie-b", wo_sphere(1), wo_at(0, 50, 0), cq_v3(0, 0, 0), 1, 1),
                           wo_upsert("tie-a", wo_sphere(1), wo_at(0, 50, 0), cq_v3(0, 0, 0), 1, 1)};
    wo_apply(w, twins, 2);
    cq_world_ray ray = {{cq_v3(0, 40, 0), cq_v3(0, 1, 0), 100}, 1};
    for (int pass = 0; pass < 2; pass++) {
        cq_world_ray_hit hit;
        ck_assert_int_eq(cq_world_raycast(w, &ray, 1, &hit, NULL), CQ_OK);
        ck_assert(hit.hit.hit);
        ck_assert_str_eq(cq_world_id(w, hit.id), "tie-a");
        ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
    }
    cq_world_destroy(w);
}
END_TEST

/* cq_world_id_valid, which tests eight bytes a word, against the rule
 * spelled out: 1..CQ_WORLD_ID_MAX bytes, each in the set. Every byte value
 * at every place of every length, in a buffer of exactly the id's bytes
 * (so that ASan sees a load past its end), the rest random id characters. */
START_TEST(test_id_valid_each_byte)
{
    static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-";
    unsigned seed = 20261204;
    long valid = 0, invalid = 0;
    for (size_t len = 0; len <= CQ_WORLD_ID_MAX + 2; len++) {
        char *s = malloc(len ? len : 1);
        ck_assert_ptr_nonnull(s);
        for (size_t at = 0; at < (len ? len : 1); at++)
            for (int c = 0; c < 256; c++) {
                for (size_t k = 0; k < len; k++) {
                    seed = seed * 1103515245u + 12345u;
                    s[k] = set[(seed >> 16) % (sizeof set - 1)];
                }
                if (len)
                    s[at] = (char)c;
                bool want = len >= 1 && len <= CQ_WORLD_ID_MAX && (c != 0 && strchr(set, c) != NULL);
                ck_assert_msg(cq_world_id_valid(s, len) == want, "length %zu, byte %d at %zu", len, c, at);
                *(want ? &valid : &invalid) += 1;
            }
        free(s);
    }
    ck_assert_int_gt(valid, 60000);
    ck_assert_int_gt(invalid, 60000);
}
END_TEST

Suite *world_suite(void)
{
    Suite *s = suite_create("world");
    TCase *batch = tcase_create("batch");
    tcase_add_test(batch, test_registry);
    tcase_add_test(batch, test_id_valid_each_byte);
    tcase_add_test(batch, test_all_or_nothing);
    tcase_add_test(batch, test_pose_tolerance_per_entry);
    tcase_add_test(batch, test_ops_in_order);
    tcase_add_test(batch, test_capacity_growth);
    tcase_add_test(batch, test_hull_ownership);
    tcase_add_test(batch, test_mesh_ownership);
    tcase_add_test(batch, test_alloc_failure);
    suite_add_tcase(s, batch);
    TCase *bp = tcase_create("broadphase");
    tcase_set_timeout(bp, 300);
    tcase_add_test(bp, test_broadphase_random_small);
    tcase_add_test(bp, test_broadphase_random_dense);
    tcase_add_test(bp, test_layer_mask);
    tcase_add_test(bp, test_order_few_changes);
    suite_add_tcase(s, bp);
    return s;
}
