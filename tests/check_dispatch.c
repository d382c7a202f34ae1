/* The dispatch table: every pair reaches the algorithm meant for it, swaps
 * are mirrored centrally, and tests are counted per algorithm. */
#include <string.h>

#include "cq/mesh.h"
#include "testutil.h"

/* A tetrahedron for the convex slots and a two-triangle floor for the mesh
 * slots, built once per test. */
static cq_hull *tetra;
static cq_mesh *floor_mesh;

static void build_tetra(void)
{
    const cq_vec3 pts[4] = {{0.4, 0, 0}, {-0.2, 0.35, 0}, {-0.2, -0.35, 0}, {0, 0, 0.5}};
    ck_assert_int_eq(cq_hull_build(pts, 4, 0.05, &tetra), CQ_OK);
    const cq_vec3 v[4] = {{-1, 0, -1}, {-1, 0, 1}, {1, 0, 1}, {1, 0, -1}};
    const int t[2][3] = {{0, 1, 2}, {0, 2, 3}};
    ck_assert_int_eq(cq_mesh_build(v, 4, t, 2, &floor_mesh), CQ_OK);
}

static void free_tetra(void)
{
    cq_hull_free(tetra);
    cq_mesh_free(floor_mesh);
}

static cq_shape make(cq_shape_type t)
{
    switch (t) {
    case CQ_CONVEX:
        return (cq_shape){.type = t, .convex = {tetra}};
    case CQ_SPHERE:
        return (cq_shape){.type = t, .sphere = {0.5}};
    case CQ_CAPSULE:
        return (cq_shape){.type = t, .capsule = {0.3, 0.5}};
    case CQ_BOX:
        return (cq_shape){.type = t, .box = {{0.5, 0.4, 0.3}}};
    case CQ_TRIANGLE:
        return (cq_shape){.type = t, .triangle = {{{-1, 0, -1}, {1, 0, -1}, {0, 0, 1}}}};
    case CQ_PLANE:
        return (cq_shape){.type = t, .plane = {{0, 1, 0}, 0}};
    case CQ_MESH:
        return (cq_shape){.type = t, .mesh = {floor_mesh}};
    default:
        break;
    }
    ck_abort_msg("no such type");
    return (cq_shape){0};
}

/* The expected algorithm for every supported pair, by wire name. */
static const char *expected(cq_shape_type a, cq_shape_type b)
{
    static const char *table[CQ_SHAPE_TYPE_COUNT][CQ_SHAPE_TYPE_COUNT] = {
        [CQ_SPHERE] = {[CQ_SPHERE] = "sphere_sphere", [CQ_CAPSULE] = "sphere_capsule", [CQ_BOX] = "sphere_box",
                       [CQ_TRIANGLE] = "sphere_triangle", [CQ_CONVEX] = "gjk_epa", [CQ_PLANE] = "sphere_plane",
                       [CQ_MESH] = "mesh"},
        [CQ_CAPSULE] = {[CQ_CAPSULE] = "capsule_capsule", [CQ_BOX] = "gjk_epa", [CQ_TRIANGLE] = "gjk_epa",
                        [CQ_CONVEX] = "gjk_epa", [CQ_PLANE] = "capsule_plane", [CQ_MESH] = "mesh"},
        [CQ_BOX] = {[CQ_BOX] = "sat_box_box", [CQ_TRIANGLE] = "sat_triangle_box", [CQ_CONVEX] = "gjk_epa",
                    [CQ_PLANE] = "box_plane", [CQ_MESH] = "mesh"},
        [CQ_TRIANGLE] = {[CQ_TRIANGLE] = "triangle_triangle", [CQ_CONVEX] = "gjk_epa", [CQ_PLANE] = "triangle_plane",
                         [CQ_MESH] = "mesh"},
        /* Overlapping small solid hulls: GJK finds the cores overlap, the SAT answers. */
        [CQ_CONVEX] = {[CQ_CONVEX] = "sat_hull", [CQ_PLANE] = "convex_plane", [CQ_MESH] = "mesh"},
    };
    return a <= b ? table[a][b] : table[b][a];
}

START_TEST(every_pair_reaches_its_algorithm)
{
    cq_counters counters = {0};
    int supported = 0;
    for (int ta = 0; ta < CQ_SHAPE_TYPE_COUNT; ta++)
        for (int tb = 0; tb < CQ_SHAPE_TYPE_COUNT; tb++) {
            cq_shape a = make(ta), b = make(tb);
            cq_xform xa = cq_xform_identity(), xb = cq_xform_identity();
            xb.p = cq_v3(0.1, 0.2, 0.05);
            cq_pair_query q = {.a = &a, .xa = xa, .b = &b, .xb = xb, .counters = &counters};
            cq_contact c;
            int rc = cq_collide(&q, &c);
            const char *want = expected(ta, tb);
            ck_assert_msg((rc == CQ_OK) == (want != NULL), "%s-%s", cq_shape_type_name(ta), cq_shape_type_name(tb));
            ck_assert(cq_collide_supported(ta, tb) == (want != NULL));
            if (!want) {
                ck_assert_int_eq(rc, CQ_EUNSUPPORTED);
                continue;
            }
            supported++;
            ck_assert_str_eq(cq_algorithm_name(c.algorithm), want);
            tu_assert_contact_sane(c);
        }
    uint64_t sum[CQ_CTR_COUNT] = {0};
    cq_counters_snapshot(&counters, sum);
    uint64_t tests = 0;
    for (int k = 0; k < CQ_ALG_COUNT; k++)
        tests += sum[CQ_CTR_TESTS + k];
    ck_assert_int_eq((int)tests, supported);
    /* Only the gjk_epa and sat_hull pairs (and box-box, whose separated
     * pairs measure their distance with it) may have called GJK. */
    int general = (int)sum[CQ_CTR_TESTS + CQ_ALG_GJK_EPA] + (int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_HULL] +
                  (int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX] +
                  (int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_TRIANGLE_BOX];
    ck_assert_int_le((int)sum[CQ_CTR_GJK_CALLS], general);
    /* Sphere-sphere is tried once, in its closed form, never anywhere else. */
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_SPHERE_SPHERE], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_BOX_BOX], 1);
    ck_assert_int_eq((int)sum[CQ_CTR_TESTS + CQ_ALG_SAT_TRIANGLE_BOX], 2);
}
END_TEST

/* Closed-form pairs never reach the general solver. */
START_TEST(closed_forms_never_call_gjk)
{
    tu_rng rng = {17};
    for (int ta = 0; ta < CQ_SHAPE_TYPE_COUNT; ta++)
        for (int tb = 0; tb < CQ_SHAPE_TYPE_COUNT; tb++) {
            const char *want = expected(ta, tb);
            if (!want || strcmp(want, "gjk_epa") == 0 || strncmp(want, "sat_", 4) == 0)
                continue;
            cq_counters ctr = {0};
            for (int i = 0; i < 100; i++) {
                cq_shape a = make(ta), b = make(tb);
                cq_pair_query q = {.a = &a, .xa = tu_pose(&rng, 1), .b = &b, .xb = tu_pose(&rng, 1), .counters = &ctr};
                cq_contact c;
                ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
            }
            uint64_t sum[CQ_CTR_COUNT] = {0};
            cq_counters_snapshot(&ctr, sum);
            ck_assert_msg(sum[CQ_CTR_GJK_CALLS] == 0 && sum[CQ_CTR_EPA_CALLS] == 0, "%s reached GJK", want);
        }
}
END_TEST

START_TEST(swapped_pairs_mirror)
{
    tu_rng rng = {3};
    for (int ta = 0; ta < CQ_SHAPE_TYPE_COUNT; ta++)
        for (int tb = 0; tb < CQ_SHAPE_TYPE_COUNT; tb++) {
            if (!cq_collide_supported(ta, tb) || ta == CQ_PLANE || tb == CQ_PLANE)
                continue;
            for (int i = 0; i < 200; i++) {
                cq_shape a = make(ta), b = make(tb);
                cq_xform xa = tu_pose(&rng, 0.5), xb = tu_pose(&rng, 0.5);
                cq_pair_query q = {.a = &a, .xa = xa, .b = &b, .xb = xb};
                cq_pair_query s = {.a = &b, .xa = xb, .b = &a, .xb = xa};
                cq_contact c, d;
                ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
                ck_assert_int_eq(cq_collide(&s, &d), CQ_OK);
                /* One computation, mirrored: the numbers agree exactly. */
                ck_assert(c.overlap == d.overlap && c.has_normal == d.has_normal);
                ck_assert(c.depth == d.depth && c.distance == d.distance);
                if (c.has_normal)
                    ck_assert(c.normal.x == -d.normal.x && c.normal.y == -d.normal.y && c.normal.z == -d.normal.z);
                ck_assert_int_eq(c.point_count, d.point_count);
                for (int k = 0; k < c.point_count; k++) {
                    /* c's point is on B; d's matching point is on A, depth along the normal away. */
                    cq_vec3 back = cq_mad(d.points[k].position, d.normal, d.points[k].depth);
                    tu_assert_vec_eq_tol(back, c.points[k].position, 1e-9);
                    ck_assert(c.points[k].feature.index_a == d.points[k].feature.index_b &&
                              c.points[k].feature.kind_a == d.points[k].feature.kind_b);
                }
            }
        }
}
END_TEST

/* skip_manifold leaves out the points and nothing else: every other field
 * and every counter as the full query gives them, for every pair type,
 * poses that overlap and poses that do not, with and without a skin,
 * skip_distance, a previous normal and a GJK cap low enough to force
 * fallbacks. The full query must have built points for each pair type
 * that overlapped, or the comparison would prove nothing. (That the
 * clipping paths skip their work is a matter of speed, which no
 * assertion sees: cq-bench's gjk_epa_ns against gjk_epa_manifold_ns.) */
START_TEST(skip_manifold_changes_only_the_points)
{
    tu_rng rng = {29};
    for (int ta = 0; ta < CQ_SHAPE_TYPE_COUNT; ta++)
        for (int tb = 0; tb < CQ_SHAPE_TYPE_COUNT; tb++) {
            if (!cq_collide_supported(ta, tb) || (ta == CQ_PLANE && tb == CQ_PLANE))
                continue;
            int with_points = 0;
            for (int i = 0; i < 300; i++) {
                cq_shape a = make(ta), b = make(tb);
                cq_counters ca, cb;
                memset(&ca, 0, sizeof ca);
                memset(&cb, 0, sizeof cb);
                /* A previous normal in some runs: hysteresis and the previous-normal fallbacks. */
                cq_pair_cache prev = {.has_normal = true, .normal = cq_v3(0, 1, 0)};
                cq_pair_query q = {.a = &a, .xa = tu_pose(&rng, 0.6), .b = &b, .xb = tu_pose(&rng, 0.6),
                                   .skin = i % 3 ? 0 : 0.05, .skip_distance = i % 4 == 1, .counters = &ca,
                                   .cache = i % 5 < 2 ? &prev : NULL, .gjk_max_iterations = i % 7 == 3 ? 2 : 0};
                cq_pair_query s = q;
                s.skip_manifold = true;
                s.counters = &cb;
                cq_contact c, d;
                ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
                ck_assert_int_eq(cq_collide(&s, &d), CQ_OK);
                ck_assert_int_eq(d.point_count, 0);
                with_points += c.point_count > 0;
                ck_assert(c.overlap == d.overlap && c.has_normal == d.has_normal && c.has_distance == d.has_distance);
                ck_assert(c.depth == d.depth && c.distance == d.distance && c.sat_gap == d.sat_gap);
                ck_assert(memcmp(&c.normal, &d.normal, sizeof c.normal) == 0);
                ck_assert(memcmp(&c.witness_a, &d.witness_a, sizeof c.witness_a) == 0);
                ck_assert(memcmp(&c.witness_b, &d.witness_b, sizeof c.witness_b) == 0);
                ck_assert(c.algorithm == d.algorithm && c.sat_axis == d.sat_axis);
                ck_assert(c.fallback_reason == d.fallback_reason && c.fallback_action == d.fallback_action);
                for (int k = 0; k < CQ_CTR_COUNT; k++)
                    ck_assert_uint_eq(ca.v[k], cb.v[k]);
            }
            ck_assert_msg(with_points > 0, "%s-%s: no pair had points", cq_shape_type_name(ta), cq_shape_type_name(tb));
        }
}
END_TEST

START_TEST(names_and_features)
{
    char buf[16];
    ck_assert_str_eq(cq_feature_format((cq_feature){CQ_FEAT_FACE, CQ_FEAT_EDGE, 2, 1}, buf, sizeof buf), "f2.e1");
    ck_assert_str_eq(cq_sat_axis_name(11), "A1xB2");
    ck_assert_str_eq(cq_sat_axis_name(-1), "none");
    ck_assert_str_eq(cq_counter_name(CQ_CTR_SAT_AXES_SKIPPED), "sat_axes_skipped");
    ck_assert_str_eq(cq_counter_name(CQ_CTR_TESTS + CQ_ALG_SPHERE_SPHERE), "sphere_sphere");
    ck_assert_str_eq(cq_fallback_action_name(CQ_FBA_PREVIOUS_NORMAL), "previous_normal");
    ck_assert_str_eq(cq_shape_type_name(CQ_CAPSULE), "capsule");
}
END_TEST

Suite *dispatch_suite(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("dispatch");
    tcase_set_timeout(tc, 60); /* seconds a test under the sanitizers */
    tcase_add_checked_fixture(tc, build_tetra, free_tetra);
    tcase_add_test(tc, every_pair_reaches_its_algorithm);
    tcase_add_test(tc, closed_forms_never_call_gjk);
    tcase_add_test(tc, swapped_pairs_mirror);
    tcase_add_test(tc, skip_manifold_changes_only_the_points);
    tcase_add_test(tc, names_and_features);
    suite_add_tcase(s, tc);
    return s;
}
