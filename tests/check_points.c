/* Where the manifold points lie, over every pair type in both orders:
 * random sizes and poses, degenerate shapes included (zero-size and
 * tiny-size boxes, segment and collinear hulls, flat hulls, level
 * capsules, planes). Each shape's signed distance is computed from its
 * own definition (centre and radius, axis, half extents, triangle, a
 * hull's face polygons, the plane), never by the narrow phase, and every
 * contact must satisfy docs/CORE.md's rule: each point lies on B's surface, moved by its depth along the normal
 * it lies on A's, no point is deeper than the contact, and a pair that
 * sampled points prove penetrating by s has depth >= s. All within the
 * stated tolerance CQ_POINT_TOL of the pair's size and position. */
#include <stdio.h>
#include <stdlib.h>

#include "cq/hull.h"
#include "mesh_gen.h"
#include "testutil.h"

/* A failed rule names the pair's shapes and poses before it stops. */
#define PT_ASSERT(ok, ...)                                                     \
    do {                                                                       \
        if (!(ok)) {                                                           \
            pt_describe(sa), pt_describe(sb), fflush(stdout);                  \
            ck_abort_msg(__VA_ARGS__);                                         \
        }                                                                      \
    } while (0)

/* One shape of the suite, posed, with what its oracle needs. */
typedef struct pt_shape {
    cq_shape s;
    cq_xform x;
    cq_hull *hull; /* owned, for convex shapes */
    cq_mesh *mesh; /* owned, for meshes */
    double size;   /* the largest half-size (radius included) */
} pt_shape;

/* The signed distance of world point p from a posed hull's core (its face
 * polygons; a flat or lower-dimensional hull is a sheet, a segment or a
 * point), minus its rounding radius. */
static double hull_sdf(const cq_hull *h, const cq_xform *x, cq_vec3 p)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    if (h->dim == 0)
        return cq_len(cq_sub(l, h->vertices[0])) - h->radius;
    if (h->dim == 1)
        return tu_dist_point_segment(l, h->vertices[0], h->vertices[1]) - h->radius;
    double inside = -INFINITY, outside = INFINITY;
    for (int f = 0; f < h->face_count; f++) {
        const cq_hull_face *face = &h->faces[f];
        inside = fmax(inside, cq_dot(face->normal, l) - face->offset);
        const uint16_t *loop = h->face_vertices + face->first;
        for (int k = 1; k + 1 < face->count; k++) {
            cq_vec3 t[3] = {h->vertices[loop[0]], h->vertices[loop[k]], h->vertices[loop[k + 1]]};
            outside = fmin(outside, tu_dist_point_triangle(l, t));
        }
    }
    return (h->dim == 3 && inside <= 0 ? inside : outside) - h->radius;
}

static double box_sdf(cq_vec3 l, cq_vec3 half)
{
    cq_vec3 q = cq_v3(fabs(l.x) - half.x, fabs(l.y) - half.y, fabs(l.z) - half.z);
    cq_vec3 o = cq_v3(fmax(q.x, 0), fmax(q.y, 0), fmax(q.z, 0));
    return cq_len(o) + fmin(fmax(q.x, fmax(q.y, q.z)), 0);
}

/* Oracle: the signed distance of p from the posed shape (a triangle is a
 * sheet: its distance, never negative). */
static double sdf(const pt_shape *s, cq_vec3 p)
{
    const cq_xform *x = &s->x;
    switch (s->s.type) {
    case CQ_SPHERE:
        return cq_len(cq_sub(p, x->p)) - s->s.sphere.radius;
    case CQ_CAPSULE: {
        cq_vec3 h = cq_scale(x->r.c[1], s->s.capsule.half_height);
        return tu_dist_point_segment(p, cq_sub(x->p, h), cq_add(x->p, h)) - s->s.capsule.radius;
    }
    case CQ_BOX:
        return box_sdf(cq_xform_inv_point(x, p), s->s.box.half);
    case CQ_TRIANGLE: {
        cq_vec3 t[3];
        for (int i = 0; i < 3; i++)
            t[i] = cq_xform_point(x, s->s.triangle.v[i]);
        return tu_dist_point_triangle(p, t);
    }
    case CQ_CONVEX:
        return hull_sdf(s->hull, x, p);
    case CQ_PLANE: {
        cq_vec3 n = cq_mul_mv(&x->r, s->s.plane.normal);
        return cq_dot(n, p) - s->s.plane.offset - cq_dot(n, x->p);
    }
    case CQ_MESH:
        return tm_distance(s->mesh, x, p);
    default:
        ck_abort_msg("no oracle for shape type %d", s->s.type);
    }
    return 0;
}

/* Points of the shape's core (world space) and the radius about them: a
 * sample is a ball inside the shape. A plane has none. */
static int core_samples(const pt_shape *s, cq_vec3 out[64], double *radius)
{
    const cq_xform *x = &s->x;
    cq_vec3 local[64];
    int n = 0;
    *radius = 0;
    switch (s->s.type) {
    case CQ_SPHERE:
        *radius = s->s.sphere.radius;
        local[n++] = cq_v3(0, 0, 0);
        break;
    case CQ_CAPSULE:
        *radius = s->s.capsule.radius;
        for (int k = 0; k <= 8; k++)
            local[n++] = cq_v3(0, s->s.capsule.half_height * (k / 4.0 - 1), 0);
        break;
    case CQ_BOX: /* a 3x3x3 lattice: corners, edge and face middles, centre */
        for (int i = 0; i < 27; i++)
            local[n++] = cq_v3(s->s.box.half.x * (i % 3 - 1), s->s.box.half.y * (i / 3 % 3 - 1),
                               s->s.box.half.z * (i / 9 - 1));
        break;
    case CQ_TRIANGLE:
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 4; k++)
                local[n++] = cq_lerp(s->s.triangle.v[i], s->s.triangle.v[(i + 1) % 3], k / 4.0);
        local[n++] = cq_scale(cq_add(s->s.triangle.v[0], cq_add(s->s.triangle.v[1], s->s.triangle.v[2])), 1 / 3.0);
        break;
    case CQ_CONVEX: {
        const cq_hull *h = s->hull;
        *radius = h->radius;
        for (int k = 0; k < h->vertex_count && n < 40; k++)
            local[n++] = h->vertices[k];
        for (int k = 0; k < h->vertex_count && n < 64; k++)
            local[n++] = cq_lerp(h->vertices[k], h->centroid, 0.5);
        break;
    }
    case CQ_MESH:
        return tm_samples(s->mesh, x, out, 64);
    default:
        break;
    }
    for (int k = 0; k < n; k++)
        out[k] = cq_xform_point(x, local[k]);
    return n;
}

/* Oracle: a lower bound on the pair's penetration depth. A ball of radius
 * r about a point of one core lying d inside the other shape's surface
 * (d = r - sdf) survives every translation shorter than d. */
static double penetration_bound(const pt_shape *a, const pt_shape *b)
{
    double best = -INFINITY;
    for (int side = 0; side < 2; side++) {
        const pt_shape *from = side ? b : a, *into = side ? a : b;
        cq_vec3 pts[64];
        double r;
        int n = core_samples(from, pts, &r);
        for (int k = 0; k < n; k++)
            best = fmax(best, r - sdf(into, pts[k]));
    }
    return best;
}

static cq_vec3 rand_vec(tu_rng *rng, double lo, double hi)
{
    return cq_v3(tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi), tu_uniform(rng, lo, hi));
}

/* The hull families: a box (its eight corners), a random cloud, a roof
 * (two sloped faces meeting at a ridge, as in the audit's case), a flat
 * polygon, a segment, three collinear points. */
static cq_hull *random_hull(tu_rng *rng, int family, double scale)
{
    cq_vec3 p[24];
    int n = 0;
    cq_vec3 h = cq_scale(rand_vec(rng, 0.1, 1), scale);
    switch (family) {
    case 0:
        for (int i = 0; i < 8; i++)
            p[n++] = cq_v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
        break;
    case 1:
        for (n = 0; n < 6 + (int)tu_uniform(rng, 0, 18); n++)
            p[n] = cq_v3(tu_uniform(rng, -h.x, h.x), tu_uniform(rng, -h.y, h.y), tu_uniform(rng, -h.z, h.z));
        break;
    case 2: {
        double eave = tu_uniform(rng, 0.05, 0.5) * h.y;
        p[n++] = cq_v3(-h.x, h.y, 0), p[n++] = cq_v3(h.x, h.y, 0);
        for (int i = 0; i < 8; i++)
            p[n++] = cq_v3(i & 1 ? h.x : -h.x, i & 4 ? -h.y : h.y - eave, i & 2 ? h.z : -h.z);
        break;
    }
    case 3:
        for (int i = 0; i < 5; i++) {
            double t = 2 * CQ_PI * i / 5;
            p[n++] = cq_v3(h.x * cos(t), 0, h.z * sin(t));
        }
        break;
    case 4:
        p[n++] = cq_scale(h, -1), p[n++] = h;
        break;
    default:
        p[n++] = cq_scale(h, -1), p[n++] = cq_scale(h, 0.25), p[n++] = h;
        break;
    }
    cq_hull *out = NULL;
    double radius = tu_uniform(rng, 0, 1) < 0.3 ? scale * tu_uniform(rng, 0.02, 0.3) : 0;
    ck_assert_int_eq(cq_hull_build(p, n, radius, &out), CQ_OK);
    return out;
}

/* A half-size in [0.1, 1], degenerate a quarter of the time (a flat box,
 * a segment box, a point box): zero, or so small that the box's corners
 * round together (1e-300, 1e-160, 1e-20) or lie an ulp or so apart
 * (1e-12 of the size), which only the computed corners can tell. */
static double box_half(tu_rng *rng, double scale)
{
    static const double tiny[4] = {1e-300, 1e-160, 1e-20, 1e-12};
    double u = tu_uniform(rng, 0, 1);
    if (u < 0.15)
        return 0;
    if (u < 0.25) {
        int i = (int)((u - 0.15) * 40);
        return i == 3 ? tiny[i] * scale : tiny[i];
    }
    return scale * tu_uniform(rng, 0.1, 1);
}

static pt_shape random_shape(tu_rng *rng, cq_shape_type type, cq_xform x, double scale)
{
    pt_shape s = {.s = {.type = type}, .x = x};
    switch (type) {
    case CQ_SPHERE:
        s.s.sphere.radius = scale * tu_uniform(rng, 0.1, 1);
        s.size = s.s.sphere.radius;
        break;
    case CQ_CAPSULE:
        s.s.capsule.radius = scale * tu_uniform(rng, 0.05, 0.6);
        s.s.capsule.half_height = tu_uniform(rng, 0, 1) < 0.1 ? 0 : scale * tu_uniform(rng, 0.1, 1);
        s.size = s.s.capsule.radius + s.s.capsule.half_height;
        break;
    case CQ_BOX:
        s.s.box.half = cq_v3(box_half(rng, scale), box_half(rng, scale), box_half(rng, scale));
        s.size = cq_len(s.s.box.half);
        break;
    case CQ_TRIANGLE:
        for (int i = 0; i < 3; i++) {
            s.s.triangle.v[i] = cq_scale(rand_vec(rng, -1, 1), scale);
            s.size = fmax(s.size, cq_len(s.s.triangle.v[i]));
        }
        break;
    case CQ_CONVEX:
        s.hull = random_hull(rng, (int)tu_uniform(rng, 0, 6), scale);
        s.s.convex.hull = s.hull;
        s.size = s.hull->radius;
        for (int k = 0; k < s.hull->vertex_count; k++)
            s.size = fmax(s.size, cq_len(s.hull->vertices[k]) + s.hull->radius);
        break;
    case CQ_PLANE: {
        cq_vec3 n;
        ck_assert(cq_normalize(rand_vec(rng, -1, 1), 1e-6, &n));
        s.s.plane.normal = n;
        s.s.plane.offset = scale * tu_uniform(rng, -0.3, 0.3);
        break;
    }
    case CQ_MESH:
        s.mesh = tm_random(rng, (tm_family)tu_uniform(rng, 0, TM_FAMILIES), scale);
        s.s.mesh.mesh = s.mesh;
        s.size = tm_extent(s.mesh);
        break;
    default:
        break;
    }
    return s;
}

/* Poses: near each other about a centre, with random rotations; a quarter
 * of them axis-aligned (where rounding ties are exact), some far away. */
static cq_xform random_pose(tu_rng *rng, cq_vec3 centre, double scale, bool aligned)
{
    cq_xform x = tu_pose(rng, 0.9);
    if (aligned)
        x.r = cq_mat3_identity();
    x.p = cq_add(cq_scale(x.p, scale), centre);
    return x;
}

typedef struct pt_stats {
    int runs, overlaps, points, penetrating, mesh_points;
    double worst_b, worst_a, worst_deeper, worst_missed; /* in units of the tolerance */
} pt_stats;

static void pt_worst(double *worst, double v) { *worst = fmax(*worst, v); }

static void pt_describe(const pt_shape *s)
{
    printf("  type %d pos [%.17g %.17g %.17g] rot [%.17g %.17g %.17g | %.17g %.17g %.17g | %.17g %.17g %.17g]", s->s.type,
           s->x.p.x, s->x.p.y, s->x.p.z, s->x.r.c[0].x, s->x.r.c[0].y, s->x.r.c[0].z, s->x.r.c[1].x, s->x.r.c[1].y,
           s->x.r.c[1].z, s->x.r.c[2].x, s->x.r.c[2].y, s->x.r.c[2].z);
    if (s->s.type == CQ_SPHERE)
        printf(" sphere r %.17g", s->s.sphere.radius);
    if (s->s.type == CQ_CAPSULE)
        printf(" capsule r %.17g h %.17g", s->s.capsule.radius, s->s.capsule.half_height);
    if (s->s.type == CQ_BOX)
        printf(" box [%.17g %.17g %.17g]", s->s.box.half.x, s->s.box.half.y, s->s.box.half.z);
    if (s->s.type == CQ_CONVEX) {
        printf(" hull dim %d r %g:", s->hull->dim, s->hull->radius);
        for (int k = 0; k < s->hull->vertex_count; k++)
            printf(" [%.17g %.17g %.17g]", s->hull->vertices[k].x, s->hull->vertices[k].y, s->hull->vertices[k].z);
    }
    if (s->s.type == CQ_MESH) {
        const cq_mesh *m = s->mesh;
        printf(" mesh:");
        for (int k = 0; k < m->vertex_count; k++)
            printf(" [%.17g %.17g %.17g]", m->vertices[k].x, m->vertices[k].y, m->vertices[k].z);
        for (int k = 0; k < m->triangle_count; k++)
            printf(" (%d %d %d)", m->triangles[k][0], m->triangles[k][1], m->triangles[k][2]);
    }
    printf("\n");
}

/* One pair, both orders: the contract's point rules with tolerance tol. */
static void check_pair(const pt_shape *a, const pt_shape *b, double skin, pt_stats *st, int run)
{
    double size = fmax(a->size, b->size), far = fmax(cq_max_abs(a->x.p), cq_max_abs(b->x.p));
    if (a->s.type == CQ_PLANE || b->s.type == CQ_PLANE)
        size = fmax(size, a->s.type == CQ_PLANE ? b->size : a->size);
    double tol = CQ_POINT_TOL(size, far);
    double pen = penetration_bound(a, b);
    for (int order = 0; order < 2; order++) {
        const pt_shape *sa = order ? b : a, *sb = order ? a : b;
        cq_pair_query q = {.a = &sa->s, .xa = sa->x, .b = &sb->s, .xb = sb->x, .skin = skin};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        tu_assert_contact_sane(c);
        st->runs++;
        if (pen > tol) {
            st->penetrating++;
            double missed = (pen - c.depth) / tol;
            pt_worst(&st->worst_missed, missed);
            PT_ASSERT(c.overlap && c.depth > 0 && missed <= 1,
                          "run %d order %d (%d-%d): penetrating by >= %g, overlap %d depth %g (fallback %d/%d)", run,
                          order, sa->s.type, sb->s.type, pen, c.overlap, c.depth, c.fallback_reason,
                          c.fallback_action);
        }
        if (!c.overlap || !c.has_normal)
            continue;
        st->overlaps++;
        /* A contact whose shapes penetrate has somewhere to push: a mesh's
         * once had none where a snapped ghost's points missed A. */
        if (pen > tol && (sa->s.type == CQ_MESH || sb->s.type == CQ_MESH))
            PT_ASSERT(c.point_count > 0, "run %d order %d (%d-%d): penetrating by >= %g, depth %g, no points", run,
                      order, sa->s.type, sb->s.type, pen, c.depth);
        for (int k = 0; k < c.point_count; k++) {
            cq_contact_point p = c.points[k];
            double on_b = fabs(sdf(sb, p.position)) / tol;
            double on_a = fabs(sdf(sa, cq_mad(p.position, c.normal, p.depth))) / tol;
            double deeper = (p.depth - c.depth) / tol;
            st->points++;
            st->mesh_points += sa->s.type == CQ_MESH || sb->s.type == CQ_MESH;
            pt_worst(&st->worst_b, on_b), pt_worst(&st->worst_a, on_a), pt_worst(&st->worst_deeper, deeper);
            PT_ASSERT(on_b <= 1 && on_a <= 1 && deeper <= 1 && p.depth >= -skin - tol,
                          "run %d order %d (%d-%d): point %d [%.17g %.17g %.17g] depth %.17g (contact %.17g, "
                          "normal [%.17g %.17g %.17g]): %g tol off B, %g tol off A, %g tol deeper", run, order,
                          sa->s.type, sb->s.type, k, p.position.x, p.position.y, p.position.z, p.depth, c.depth,
                          c.normal.x, c.normal.y, c.normal.z, on_b, on_a, deeper);
        }
    }
}

static const cq_shape_type pt_types[] = {CQ_SPHERE, CQ_CAPSULE, CQ_BOX, CQ_TRIANGLE, CQ_CONVEX, CQ_PLANE, CQ_MESH};
#define PT_TYPES (int)(sizeof pt_types / sizeof pt_types[0])

static void pt_free(pt_shape *s)
{
    cq_hull_free(s->hull);
    cq_mesh_free(s->mesh);
}

static void sweep(uint64_t seed, int per_pair, cq_vec3 centre, double scale, pt_stats *st)
{
    tu_rng rng = {seed};
    for (int i = 0; i < PT_TYPES; i++)
        for (int j = i; j < PT_TYPES; j++) {
            if (!cq_collide_supported(pt_types[i], pt_types[j]))
                continue; /* plane-plane, and a mesh with a mesh or a plane */
            for (int k = 0; k < per_pair; k++) {
                bool aligned = k % 4 == 0;
                pt_shape a = random_shape(&rng, pt_types[i], random_pose(&rng, centre, scale, aligned), scale);
                pt_shape b = random_shape(&rng, pt_types[j], random_pose(&rng, centre, scale, aligned), scale);
                check_pair(&a, &b, k % 3 ? 0.02 * scale : 0, st, k);
                pt_free(&a), pt_free(&b);
            }
        }
    if (getenv("CQ_POINTS_STATS"))
        printf("points: %d runs, %d overlapping, %d points (%d of meshes), %d penetrating; worst off B %.3g, "
               "off A %.3g, deeper %.3g, depth missed %.3g (tolerances)\n", st->runs, st->overlaps, st->points,
               st->mesh_points, st->penetrating,
               st->worst_b, st->worst_a, st->worst_deeper, st->worst_missed);
}

START_TEST(points_lie_on_both_surfaces)
{
    pt_stats st = {0};
    sweep(20261201, 800, cq_v3(0, 0, 0), 1, &st);
    ck_assert_int_gt(st.points, 20000);
    ck_assert_int_gt(st.mesh_points, 5000);
}
END_TEST

/* The tolerance is relative: the same rules for shapes 1000 times smaller
 * and larger, and for a scene 1000 from the origin. */
START_TEST(points_lie_on_both_surfaces_at_any_scale)
{
    static const struct {
        double scale;
        cq_vec3 centre;
    } scenes[] = {{1e-3, {0, 0, 0}}, {1e3, {0, 0, 0}}, {1, {1000, -700, 300}}};
    for (int i = 0; i < 3; i++) {
        pt_stats st = {0};
        sweep(20261202 + (uint64_t)i, 200, scenes[i].centre, scenes[i].scale, &st);
        ck_assert_int_gt(st.points, 5000);
        ck_assert_int_gt(st.mesh_points, 1200);
    }
}
END_TEST

/* A flat box (zero thickness) whose face along the normal is a segment:
 * it has no sides to clip a triangle by, so the triangle kept its whole
 * width (0.07 off the box); or, the triangle steep, the clip found nothing
 * and the triangle's vertex deepest along the normal stood for the
 * contact, far off the box. The cases the mesh sweep found: a closed box's
 * side, a ridge's four triangles. */
START_TEST(flat_box_face_on_a_triangle)
{
    pt_shape box = {.s = {.type = CQ_BOX, .box = {{0.88740014277205947, 0.62547771942413022, 0}}},
                    .x = {{-0.48435918559966989, -0.18226522148956514, -0.66360082806260379}, cq_mat3_identity()}};
    box.size = cq_len(box.s.box.half);
    cq_vec3 h = {0.91850804116830687, 0.89115160566988239, 0.52035232138332499};
    pt_shape side = {.s = {.type = CQ_TRIANGLE, .triangle = {{{-h.x, -h.y, -h.z}, {-h.x, h.y, h.z}, {-h.x, h.y, -h.z}}}},
                     .x = {{-0.19489222234037007, -0.37869116208392639, -0.41632833510974482}, cq_mat3_identity()},
                     .size = cq_len(h)};
    pt_stats st = {0};
    check_pair(&box, &side, 0.02, &st, 0);
    pt_shape flat = {.s = {.type = CQ_BOX, .box = {{0.70678061703792372, 0.69511217795134816, 0}}},
                     .x = {{999.93833682075217, -700.20097216864963, 299.37465510353286}, cq_mat3_identity()}};
    flat.size = cq_len(flat.s.box.half);
    const cq_vec3 v[6] = {{-1, -1.2320986738447692, -1}, {-1, -1.2320986738447692, 1}, {0, 0, -1},
                          {0, 0, 1}, {1, -0.66220086861257221, -1}, {1, -0.66220086861257221, 1}};
    const int t[4][3] = {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}};
    for (int k = 0; k < 4; k++) {
        pt_shape ridge = {.s = {.type = CQ_TRIANGLE, .triangle = {{v[t[k][0]], v[t[k][1]], v[t[k][2]]}}},
                          .x = {{999.96246756693256, -700.76858559851132, 299.25383836344184}, cq_mat3_identity()},
                          .size = cq_len(v[0])};
        check_pair(&flat, &ridge, k % 2 ? 0.02 : 0, &st, 1 + k);
    }
    ck_assert_int_ge(st.points, 6);
}
END_TEST

/* ---- meshes: scenes with analytic answers ------------------------------- */

/* A mesh of triangles front side up, posed at x, as the suite's B shape. */
static pt_shape pt_mesh(const cq_vec3 *v, int nv, const int (*t)[3], int nt, cq_xform x)
{
    pt_shape s = {.s = {.type = CQ_MESH}, .x = x};
    ck_assert_int_eq(cq_mesh_build(v, nv, t, nt, &s.mesh), CQ_OK);
    s.s.mesh.mesh = s.mesh;
    s.size = tm_extent(s.mesh);
    return s;
}

/* Whether the contact has a point at want (world) with that depth, both to
 * 1e-9; each expected point matches a different one. */
static void pt_expect_points(const cq_contact *c, const cq_vec3 *want, const double *depth, int n)
{
    ck_assert_int_eq(c->point_count, n);
    bool used[CQ_MAX_POINTS] = {false};
    for (int i = 0; i < n; i++) {
        int hit = -1;
        for (int k = 0; k < c->point_count && hit < 0; k++)
            if (!used[k] && cq_len(cq_sub(c->points[k].position, want[i])) < 1e-9 &&
                fabs(c->points[k].depth - depth[i]) < 1e-9)
                hit = k;
        if (hit < 0)
            for (int k = 0; k < c->point_count; k++)
                printf("  has [%.9g %.9g %.9g] depth %.9g\n", c->points[k].position.x, c->points[k].position.y,
                       c->points[k].position.z, c->points[k].depth);
        ck_assert_msg(hit >= 0, "no point at [%g %g %g] depth %g", want[i].x, want[i].y, want[i].z, depth[i]);
        used[hit] = true;
    }
}

/* The square [-2, 2]^2 at y = 0 as two triangles, split along x = z. */
static const cq_vec3 pt_floor_v[4] = {{-2, 0, -2}, {-2, 0, 2}, {2, 0, 2}, {2, 0, -2}};
static const int pt_floor_t[2][3] = {{0, 1, 2}, {0, 2, 3}};

/* A box resting 0.01 deep on the two-triangle floor, straddling the
 * diagonal with two corners on each triangle (square to the floor's
 * sides, within 0.1 of the diagonal; a corner cut off alone would make
 * five points on its triangle, which that triangle's own contact reduces
 * to four), the scene under a random rigid motion: the floor's normal,
 * depth 0.01, and the four bottom corners moved up onto the floor, each
 * 0.01 deep: the cuts along the diagonal give way to them. */
START_TEST(box_rests_on_two_triangles)
{
    tu_rng rng = {31};
    for (int rep = 0; rep < 50; rep++) {
        cq_xform world = tu_pose(&rng, 5);
        pt_shape sb = pt_mesh(pt_floor_v, 4, pt_floor_t, 2, world);
        double x = tu_uniform(&rng, -0.5, 0.5), z = x + tu_uniform(&rng, -0.099, 0.099);
        cq_xform local = {cq_v3(x, 0.24, z), tu_axis_angle(cq_v3(0, 1, 0), rep % 2 ? CQ_PI : 0)};
        pt_shape sa = {.s = {.type = CQ_BOX, .box = {{0.5, 0.25, 0.4}}}, .size = cq_len(cq_v3(0.5, 0.25, 0.4)),
                       .x = {cq_xform_point(&world, local.p), cq_mul_mm(&world.r, &local.r)}};
        cq_pair_query q = {.a = &sa.s, .xa = sa.x, .b = &sb.s, .xb = sb.x};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        ck_assert(c.overlap && c.has_normal);
        ck_assert_double_eq_tol(c.depth, 0.01, 1e-9);
        tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_v3(0, -1, 0)), 1e-9);
        cq_vec3 want[4];
        double depth[4] = {0.01, 0.01, 0.01, 0.01};
        for (int i = 0; i < 4; i++) {
            cq_vec3 corner = cq_xform_point(&local, cq_v3(i & 1 ? 0.5 : -0.5, -0.25, i & 2 ? 0.4 : -0.4));
            want[i] = cq_xform_point(&world, cq_v3(corner.x, 0, corner.z));
        }
        pt_expect_points(&c, want, depth, 4);
        pt_stats st = {0};
        check_pair(&sa, &sb, 0, &st, rep);
        pt_free(&sb);
    }
}
END_TEST

/* A level box over a shallow valley (faces y = -s x and y = t x meeting
 * along z), its bottom corners in both faces, the left ones deeper: the
 * left face's normal and depth; its corners moved onto it along that
 * normal; the right ones' points where the right face's own contact put
 * them (moved along the right face's normal), measured along the left
 * normal down to the box's bottom. */
START_TEST(box_straddles_a_valley)
{
    const double s = 0.5, t = 0.4, yb = 0.4;
    const cq_vec3 v[6] = {{-2, 2 * s, -2}, {-2, 2 * s, 2}, {0, 0, -2}, {0, 0, 2}, {2, 2 * t, -2}, {2, 2 * t, 2}};
    const int tri[4][3] = {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}};
    tu_rng rng = {32};
    cq_vec3 nl = cq_scale(cq_v3(s, 1, 0), 1 / sqrt(1 + s * s)), nr = cq_scale(cq_v3(-t, 1, 0), 1 / sqrt(1 + t * t));
    for (int rep = 0; rep < 20; rep++) {
        cq_xform world = rep ? tu_pose(&rng, 5) : cq_xform_identity();
        pt_shape sb = pt_mesh(v, 6, tri, 4, world);
        cq_xform local = {cq_v3(0.1, yb + 0.25, 0), cq_mat3_identity()};
        pt_shape sa = {.s = {.type = CQ_BOX, .box = {{1, 0.25, 0.5}}}, .size = cq_len(cq_v3(1, 0.25, 0.5)),
                       .x = {cq_xform_point(&world, local.p), world.r}};
        cq_pair_query q = {.a = &sa.s, .xa = sa.x, .b = &sb.s, .xb = sb.x};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        ck_assert(c.overlap && c.has_normal);
        double d1 = (s * 0.9 - yb) / sqrt(1 + s * s), d2 = (t * 1.1 - yb) / sqrt(1 + t * t);
        ck_assert_double_eq_tol(c.depth, d1, 1e-9);
        tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_neg(nl)), 1e-9);
        cq_vec3 want[4];
        double depth[4];
        for (int i = 0; i < 4; i++) {
            bool right = i & 1;
            cq_vec3 corner = cq_v3(right ? 1.1 : -0.9, yb, i & 2 ? 0.5 : -0.5);
            cq_vec3 p = right ? cq_mad(corner, nr, d2) : cq_mad(corner, nl, d1);
            want[i] = cq_xform_point(&world, p);
            depth[i] = right ? (p.y - yb) / nl.y : d1;
        }
        pt_expect_points(&c, want, depth, 4);
        pt_stats st = {0};
        check_pair(&sa, &sb, 0, &st, rep);
        pt_free(&sb);
    }
}
END_TEST

/* A ball over the floor's shared diagonal: both triangles find the same
 * point below its centre; the contact has it once. */
START_TEST(ball_over_a_shared_edge)
{
    tu_rng rng = {33};
    for (int rep = 0; rep < 20; rep++) {
        cq_xform world = rep ? tu_pose(&rng, 5) : cq_xform_identity();
        pt_shape sb = pt_mesh(pt_floor_v, 4, pt_floor_t, 2, world);
        double x = tu_uniform(&rng, -1, 1);
        pt_shape sa = {.s = {.type = CQ_SPHERE, .sphere = {0.5}}, .size = 0.5,
                       .x = {cq_xform_point(&world, cq_v3(x, 0.45, x)), cq_mat3_identity()}};
        cq_pair_query q = {.a = &sa.s, .xa = sa.x, .b = &sb.s, .xb = sb.x};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        ck_assert(c.overlap && c.has_normal);
        ck_assert_double_eq_tol(c.depth, 0.05, 1e-9);
        tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_v3(0, -1, 0)), 1e-9);
        cq_vec3 want = cq_xform_point(&world, cq_v3(x, 0, x));
        double depth = 0.05;
        pt_expect_points(&c, &want, &depth, 1);
        pt_stats st = {0};
        check_pair(&sa, &sb, 0, &st, rep);
        pt_free(&sb);
    }
}
END_TEST

/* A thin box (half z 0.01) standing 0.585 deep in a flat floor, beside
 * the floor's coplanar internal edge at z = -2.5, turned 1e-8 rad: the
 * triangle it stands in pushes it out across that edge (normal +z, depth
 * 0.47), the ghost rule snaps that to the floor's normal, and the points
 * found along +z, carried down, missed the box: the contact had none
 * (the reviewer's case). The floor's contact: normal -y, the depth of the
 * box's lowest corner, and its four bottom corners on the floor, each at
 * its own depth below it, as a plane gives them. */
START_TEST(box_stands_in_a_floor_by_a_coplanar_edge)
{
    const cq_vec3 v[6] = {{-4, 0, -4}, {4, 0, -4}, {-4, 0, -2.5}, {4, 0, -2.5}, {-4, 0, 4}, {4, 0, 4}};
    const int tri[4][3] = {{0, 2, 1}, {1, 2, 3}, {2, 4, 3}, {3, 4, 5}};
    const cq_vec3 half = {1.2019538062463777, 0.98805149906467415, 0.01};
    const cq_xform local = {{-0.83159833151215157, 0.40335805532815366, -2.0378658542184245},
                            {{{0.99999999999999944, -3.0171018262800302e-08, 1.2801245663083006e-08},
                              {3.0171018384575112e-08, 0.99999999999999956, -9.5127309191279304e-09},
                              {-1.2801245376074223e-08, 9.5127313053545445e-09, 0.99999999999999989}}}};
    tu_rng rng = {34};
    for (int rep = 0; rep < 20; rep++) {
        cq_xform world = rep ? tu_pose(&rng, 5) : cq_xform_identity();
        pt_shape sb = pt_mesh(v, 6, tri, 4, world);
        pt_shape sa = {.s = {.type = CQ_BOX, .box = {half}}, .size = cq_len(half),
                       .x = {cq_xform_point(&world, local.p), cq_mul_mm(&world.r, &local.r)}};
        cq_pair_query q = {.a = &sa.s, .xa = sa.x, .b = &sb.s, .xb = sb.x};
        cq_contact c;
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        ck_assert(c.overlap && c.has_normal);
        tu_assert_vec_eq_tol(c.normal, cq_mul_mv(&world.r, cq_v3(0, -1, 0)), 1e-9);
        cq_vec3 want[4];
        double depth[4], deepest = 0;
        for (int i = 0; i < 4; i++) {
            cq_vec3 corner = cq_xform_point(&local, cq_v3(i & 1 ? half.x : -half.x, -half.y, i & 2 ? half.z : -half.z));
            want[i] = cq_xform_point(&world, cq_v3(corner.x, 0, corner.z));
            depth[i] = -corner.y;
            deepest = fmax(deepest, depth[i]);
        }
        ck_assert_double_eq_tol(c.depth, deepest, 1e-9);
        ck_assert_double_eq_tol(deepest, 0.5846934801, 1e-9);
        pt_expect_points(&c, want, depth, 4);
        pt_stats st = {0};
        check_pair(&sa, &sb, 0, &st, rep);
        pt_free(&sb);
    }
}
END_TEST

Suite *points_suite(void)
{
    Suite *s = suite_create("points");
    TCase *tc = tcase_create("contact_points");
    tcase_set_timeout(tc, 60); /* seconds under the sanitizers */
    tcase_add_test(tc, points_lie_on_both_surfaces);
    tcase_add_test(tc, points_lie_on_both_surfaces_at_any_scale);
    tcase_add_test(tc, flat_box_face_on_a_triangle);
    suite_add_tcase(s, tc);
    TCase *mesh = tcase_create("mesh_scenes");
    tcase_set_timeout(mesh, 60);
    tcase_add_test(mesh, box_rests_on_two_triangles);
    tcase_add_test(mesh, box_straddles_a_valley);
    tcase_add_test(mesh, ball_over_a_shared_edge);
    tcase_add_test(mesh, box_stands_in_a_floor_by_a_coplanar_edge);
    suite_add_tcase(s, mesh);
    return s;
}
