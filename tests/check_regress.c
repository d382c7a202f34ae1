/* A regression corpus: configurations that have broken collision libraries
 * (touching stacked cubes, parallel faces, zero-area and sliver triangles,
 * flat hulls), stored at full precision, each with the answer derived by
 * hand in its comment. Every box case runs as boxes (SAT) and as 8-point
 * hulls (GJK/EPA); both must give the stored answer. */
#include "testutil.h"

typedef struct reg_shape {
    cq_shape_type type;
    double a, b, c;   /* sphere r; capsule r, half height; box half extents */
    cq_vec3 v[3];     /* triangle vertices */
} reg_shape;

typedef struct reg_case {
    const char *name;
    reg_shape sa, sb;
    cq_vec3 pa, pb;        /* positions */
    cq_vec3 axis_b;        /* B turned about this axis ... */
    double angle_b;        /* ... by this angle; A is never turned */
    bool overlap;
    double depth, distance;
    cq_vec3 normal;        /* expected when not zero */
    double tol;
} reg_case;

#define BOX(x, y, z) {.type = CQ_BOX, .a = x, .b = y, .c = z}
#define SPHERE(r) {.type = CQ_SPHERE, .a = r}
#define CAPSULE(r, h) {.type = CQ_CAPSULE, .a = r, .b = h}
#define TRI(...) {.type = CQ_TRIANGLE, .v = {__VA_ARGS__}}
#define V(x, y, z) {x, y, z}

static const reg_case cases[] = {
    /* Cubes stacked exactly face to face: touching, no depth, normal up. */
    {"stacked_cubes_touching", BOX(0.5, 0.5, 0.5), BOX(0.5, 0.5, 0.5), {0, 0, 0}, {0, 1, 0}, {0, 1, 0}, 0,
     true, 0, 0, {0, 1, 0}, 1e-9},
    /* The same, 1e-12 apart: within the touching band of every path. */
    {"stacked_cubes_1e-12_apart", BOX(0.5, 0.5, 0.5), BOX(0.5, 0.5, 0.5), {0, 0, 0}, {0, 1.000000000001, 0},
     {0, 1, 0}, 0, true, 0, 0, {0, 1, 0}, 1e-9},
    /* Stacked, sunk 0.01 and turned 1e-9 rad about the vertical: faces
     * parallel to rounding, the edge axes nearly degenerate. */
    {"parallel_faces_turned_1e-9", BOX(0.5, 0.5, 0.5), BOX(0.5, 0.5, 0.5), {0, 0, 0}, {0.2, 0.99, -0.1},
     {0, 1, 0}, 1e-9, true, 0.01, 0, {0, 1, 0}, 1e-8},
    /* A wide flat slab under a cube turned 45 degrees: the cube's face on
     * the slab, four corners off the slab's edges. */
    {"cube_turned_45_on_slab", BOX(2, 0.05, 2), BOX(0.5, 0.5, 0.5), {0, 0, 0}, {1.9, 0.549, 0}, {0, 1, 0},
     0.78539816339744828, true, 0.001, 0, {0, 1, 0}, 1e-9},
    /* A cube turned 45 degrees about z resting on its lower edge, 0.005
     * deep: centre height 0.5 + 0.5 sqrt 2 - 0.005. */
    {"cube_on_its_edge", BOX(0.5, 0.5, 0.5), BOX(0.5, 0.5, 0.5), {0, 0, 0}, {0.1, 1.2021067811865475, 0},
     {0, 0, 1}, 0.78539816339744828, true, 0.005, 0, {0, 1, 0}, 1e-9},
    /* A zero-area triangle (collinear points) 0.1 below a box's top face:
     * a segment inside the box leaves it fastest upward, by 0.1. */
    {"zero_area_triangle_in_box", BOX(1, 0.5, 1), TRI(V(-0.5, 0.4, 0), V(0, 0.4, 0), V(0.5, 0.4, 0)),
     {0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 0, true, 0.1, 0, {0, 1, 0}, 1e-9},
    /* A 100-long sliver triangle (apex 1e-7 high) under a sphere: the
     * closest point is the apex; depth 0.5 - |(0, 0.3 - 1e-7, 0.2)|, normal
     * along that vector. */
    {"sliver_triangle_sphere", TRI(V(0, 0, 0), V(100, 0, 0), V(50, 1e-7, 0)), SPHERE(0.5), {0, 0, 0},
     {50, 0.3, 0.2}, {0, 1, 0}, 0, true, 0.13944495565862625, 0, {0, 0.83205020899932236, 0.55470032423298976}, 1e-9},
    /* A sphere exactly at a box corner's diagonal, 1e-3 short of touching:
     * distance |(0.5,0.5,0.5)| - 0.866 = 0.866025.. - 0.865025.. */
    {"sphere_off_box_corner", BOX(0.5, 0.5, 0.5), SPHERE(0.8650254037844386), {0, 0, 0}, {1, 1, 1}, {0, 1, 0}, 0,
     false, 0, 0.001, {0.57735026918962573, 0.57735026918962573, 0.57735026918962573}, 1e-9},
    /* A capsule lying flat on a box, parallel to an edge, 0.02 deep: the
     * general path must find the face normal, not a rounding direction. */
    {"capsule_parallel_on_box", CAPSULE(0.25, 1), BOX(2, 0.5, 2), {0, 0.73, 0}, {0, 0, 0}, {0, 0, 1},
     0, true, 0.02, 0, {0, -1, 0}, 1e-9},
};

static cq_shape make(const reg_shape *r)
{
    switch (r->type) {
    case CQ_SPHERE:
        return (cq_shape){.type = CQ_SPHERE, .sphere = {r->a}};
    case CQ_CAPSULE:
        return (cq_shape){.type = CQ_CAPSULE, .capsule = {r->a, r->b}};
    case CQ_BOX:
        return (cq_shape){.type = CQ_BOX, .box = {{r->a, r->b, r->c}}};
    default:
        return (cq_shape){.type = CQ_TRIANGLE, .triangle = {{r->v[0], r->v[1], r->v[2]}}};
    }
}

/* The capsule case lies along x: turn A by 90 degrees about z. */
static cq_xform pose_a(const reg_case *c)
{
    cq_xform x = {c->pa, cq_mat3_identity()};
    if (c->sa.type == CQ_CAPSULE)
        x.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 2);
    return x;
}

static void check(const reg_case *c, const cq_shape *a, const cq_shape *b, const char *path)
{
    cq_vec3 axis = c->axis_b;
    cq_normalize(axis, 0, &axis);
    cq_pair_query q = {.a = a, .xa = pose_a(c), .b = b, .xb = {c->pb, tu_axis_angle(axis, c->angle_b)}};
    cq_contact r;
    ck_assert_int_eq(cq_collide(&q, &r), CQ_OK);
    tu_assert_contact_sane(r);
    ck_assert_msg(r.overlap == c->overlap, "%s (%s): overlap %d", c->name, path, r.overlap);
    ck_assert_msg(fabs(r.depth - c->depth) <= c->tol, "%s (%s): depth %.17g", c->name, path, r.depth);
    if (c->distance > 0)
        ck_assert_msg(fabs(r.distance - c->distance) <= c->tol, "%s (%s): distance %.17g", c->name, path, r.distance);
    if (cq_len2(c->normal) > 0 && (c->overlap || c->distance > 0)) {
        ck_assert_msg(r.has_normal, "%s (%s): no normal", c->name, path);
        tu_assert_vec_eq_tol(r.normal, c->normal, c->tol * 10);
    }
}

START_TEST(corpus)
{
    const reg_case *c = &cases[_i];
    cq_shape a = make(&c->sa), b = make(&c->sb);
    check(c, &a, &b, cq_shape_type_name(a.type));
    if (a.type != CQ_BOX || b.type != CQ_BOX)
        return;
    cq_hull *h[2];
    const reg_shape *s[2] = {&c->sa, &c->sb};
    for (int k = 0; k < 2; k++) {
        cq_vec3 corners[8];
        cq_obb o = {cq_v3(0, 0, 0), cq_v3(s[k]->a, s[k]->b, s[k]->c), cq_mat3_identity()};
        tu_obb_corners(&o, corners);
        ck_assert_int_eq(cq_hull_build(corners, 8, 0, &h[k]), CQ_OK);
    }
    cq_shape ha = {.type = CQ_CONVEX, .convex = {h[0]}}, hb = {.type = CQ_CONVEX, .convex = {h[1]}};
    check(c, &ha, &hb, "hulls");
    cq_hull_free(h[0]), cq_hull_free(h[1]);
}
END_TEST

Suite *regress_suite(void)
{
    Suite *s = suite_create("regress");
    TCase *tc = tcase_create("corpus");
    tcase_add_loop_test(tc, corpus, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    return s;
}
