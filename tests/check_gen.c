/* The input generator (bench/gen): its SplitMix64 against the published
 * vector, each file's records against independent checks (libc's strtod
 * reads them back; rotations rebuilt as products of three axis turns;
 * ranges from the formats), determinism, and a few records the reference
 * generator the benchmark figures were first measured with wrote. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "testutil.h"

typedef enum { PAIRS, SCENE, RAYS } kind;

/* What the generator writes for one file, as a NUL-terminated string the
 * caller frees. */
static char *generate(kind k, long n, uint64_t seed, double half)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    int rc = k == PAIRS ? gen_pairs(f, n, seed) : k == SCENE ? gen_scene(f, n, seed) : gen_rays(f, n, seed, half);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

/* One line of numbers read with strtod, *at moved past its newline: the
 * count, or -1 unless the line is numbers split by single spaces. */
static int read_line(const char **at, double *v, int max)
{
    const char *p = *at;
    for (int n = 0; n < max;) {
        char *end;
        if (isspace((unsigned char)*p))
            return -1;
        v[n++] = strtod(p, &end);
        if (end == p)
            return -1;
        p = end;
        if (*p == '\n') {
            *at = p + 1;
            return n;
        }
        if (*p++ != ' ')
            return -1;
    }
    return -1;
}

static void assert_in(double x, double lo, double hi)
{
    ck_assert_msg(x >= lo && x <= hi, "%.17g outside [%.17g, %.17g]", x, lo, hi);
}

/* Oracle: Rz(yaw) Ry(pitch) Rx(roll) multiplied out from the three turns
 * about the world axes (columns), not the generator's expanded form. */
static cq_mat3 ypr_oracle(double yaw, double pitch, double roll)
{
    double cz = cos(yaw), sz = sin(yaw), cy = cos(pitch), sy = sin(pitch), cx = cos(roll), sx = sin(roll);
    cq_mat3 rz = {{cq_v3(cz, sz, 0), cq_v3(-sz, cz, 0), cq_v3(0, 0, 1)}};
    cq_mat3 ry = {{cq_v3(cy, 0, -sy), cq_v3(0, 1, 0), cq_v3(sy, 0, cy)}};
    cq_mat3 rx = {{cq_v3(1, 0, 0), cq_v3(0, cx, sx), cq_v3(0, -sx, cx)}};
    cq_mat3 zy = cq_mul_mm(&rz, &ry);
    return cq_mul_mm(&zy, &rx);
}

/* The angles in the generator's draw order, from a replayed stream. */
static cq_mat3 replay_rotation(tu_rng *rng)
{
    double yaw = tu_uniform(rng, -CQ_PI, CQ_PI);
    double pitch = tu_uniform(rng, -CQ_PI / 2, CQ_PI / 2);
    double roll = tu_uniform(rng, -CQ_PI, CQ_PI);
    return ypr_oracle(yaw, pitch, roll);
}

static void assert_frame(const cq_mat3 *m, const cq_mat3 *oracle)
{
    for (int k = 0; k < 3; k++) {
        ck_assert_double_eq_tol(cq_len(m->c[k]), 1.0, 1e-12);
        tu_assert_vec_eq_tol(m->c[k], oracle->c[k], 1e-12);
    }
    ck_assert_double_eq_tol(cq_dot(m->c[0], m->c[1]), 0.0, 1e-12);
    ck_assert_double_eq_tol(cq_dot(m->c[1], m->c[2]), 0.0, 1e-12);
    ck_assert_double_eq_tol(cq_dot(m->c[0], m->c[2]), 0.0, 1e-12);
    tu_assert_vec_eq_tol(cq_cross(m->c[0], m->c[1]), m->c[2], 1e-12);
}

/* Every drawn number must read back as the very double drawn. */
static void assert_replayed(tu_rng *rng, const double *v, int n, double lo, double hi, double scale)
{
    for (int k = 0; k < n; k++) {
        ck_assert(v[k] == tu_uniform(rng, lo, hi) * scale);
        assert_in(v[k], lo * scale, hi * scale);
    }
}

START_TEST(splitmix_matches_published_vector)
{
    /* The first outputs of Vigna's splitmix64.c seeded with 1234567. */
    static const uint64_t expect[] = {6457827717110365317u, 3203168211198807973u, 9817491932198370423u,
                                      4593380528125082431u, 16408922859458223821u};
    gen_rng a = {1234567}, b = {1234567};
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(gen_next(&a), expect[i]);
        /* The top 53 bits as a fraction of 2^53, exactly. */
        ck_assert(gen_uniform(&b, 0, 9007199254740992.0) == (double)(expect[i] >> 11));
    }
}
END_TEST

static void check_box(tu_rng *rng, const double *v)
{
    assert_replayed(rng, v, 3, -2, 2, 1);
    assert_replayed(rng, v + 3, 3, 0.2, 2, 1);
    cq_mat3 axes = {{cq_v3(v[6], v[7], v[8]), cq_v3(v[9], v[10], v[11]), cq_v3(v[12], v[13], v[14])}};
    cq_mat3 oracle = replay_rotation(rng);
    assert_frame(&axes, &oracle);
}

START_TEST(pairs_are_boxes_of_the_drawn_rotations)
{
    enum { N = 300 };
    char *text = generate(PAIRS, N, 11423, 0);
    const char *at = text;
    tu_rng rng = {11423};
    double v[31];
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(read_line(&at, v, 31), 30);
        check_box(&rng, v);
        check_box(&rng, v + 15);
    }
    ck_assert_str_eq(at, "");
    free(text);
}
END_TEST

static void check_scene_box(tu_rng *rng, const double *v, double half)
{
    assert_replayed(rng, v + 3, 3, 0.2, 2, 0.25);
    cq_quat q = {v[6], v[7], v[8], v[9]};
    ck_assert_double_eq_tol(sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w), 1.0, 1e-12);
    cq_mat3 frame = cq_quat_to_mat3(q), oracle = replay_rotation(rng);
    assert_frame(&frame, &oracle);
    assert_replayed(rng, v, 3, -half, half, 1);
    assert_replayed(rng, v + 10, 3, -3, 3, 1);
}

START_TEST(scene_quaternions_turn_to_the_drawn_frames)
{
    enum { N = 300 };
    char *text = generate(SCENE, N, 7, 0);
    const char *at = text;
    double v[14];
    ck_assert_int_eq(read_line(&at, v, 14), 2);
    /* L = 2 N^(1/3) up to the rounding of the cube root; DT = 1/60. */
    ck_assert_double_eq_tol(v[0], 2 * cbrt(N), 1e-14);
    ck_assert(v[1] == 1.0 / 60.0);
    double half = v[0];
    tu_rng rng = {7};
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(read_line(&at, v, 14), 13);
        check_scene_box(&rng, v, half);
    }
    ck_assert_str_eq(at, "");
    free(text);
}
END_TEST

START_TEST(rays_are_unit_and_inside_the_cube)
{
    enum { N = 300 };
    const double half = 7.25;
    char *text = generate(RAYS, N, 99, half);
    const char *at = text;
    tu_rng rng = {99};
    double v[8];
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(read_line(&at, v, 8), 7);
        assert_replayed(&rng, v, 3, -half, half, 1);
        double w[3];
        for (int k = 0; k < 3; k++)
            w[k] = tu_uniform(&rng, -1, 1);
        cq_vec3 drawn = cq_v3(w[0], w[1], w[2]), d = cq_v3(v[3], v[4], v[5]);
        ck_assert_double_eq_tol(cq_len(d), 1.0, 1e-12);
        /* The same direction as the draw, only shortened to unit length. */
        tu_assert_vec_eq_tol(cq_scale(d, cq_len(drawn)), drawn, 1e-12);
        ck_assert(v[6] == half / 2);
    }
    ck_assert_str_eq(at, "");
    free(text);
}
END_TEST

START_TEST(a_seed_decides_the_file)
{
    for (kind k = PAIRS; k <= RAYS; k++) {
        char *a = generate(k, 50, 2024, 3.5), *b = generate(k, 50, 2024, 3.5), *c = generate(k, 50, 2025, 3.5);
        ck_assert_str_eq(a, b);
        ck_assert_str_ne(a, c);
        /* Only the stream differs: the same number of lines. */
        int lines_a = 0, lines_c = 0;
        for (const char *p = a; *p; p++)
            lines_a += *p == '\n';
        for (const char *p = c; *p; p++)
            lines_c += *p == '\n';
        ck_assert_int_eq(lines_a, k == SCENE ? 51 : 50);
        ck_assert_int_eq(lines_c, lines_a);
        free(a), free(b), free(c);
    }
}
END_TEST

START_TEST(no_records_leave_only_the_scene_header)
{
    char *p = generate(PAIRS, 0, 1, 0), *s = generate(SCENE, 0, 1, 0), *r = generate(RAYS, 0, 1, 2);
    ck_assert_str_eq(p, "");
    ck_assert_str_eq(s, "0 0.016666666666666666\n");
    ck_assert_str_eq(r, "");
    free(p), free(s), free(r);
}
END_TEST

/* Written by the reference generator (a separate implementation, in
 * Python) that made the inputs of the figures in docs/PERFORMANCE.md: the
 * files must stay those files for the figures to stay comparable. */
static const struct {
    kind k;
    long n;
    uint64_t seed;
    double half;
    const char *text;
} reference[] = {
    {PAIRS, 1, 11423, 0,
     "1.5687974207866504 -1.5369454777328317 0.066809836214651419 1.4001135253576056 1.051070483628056 "
     "1.4319683312081766 -0.96549322673613458 -0.023239730793975559 -0.25938917486909624 0.04432115193471492 "
     "0.96681790986508687 -0.25159245746898851 0.25662904086994315 -0.25440724061380093 -0.93242613182248635 "
     "0.69955205089482009 1.7753948248060967 -1.377122811009142 1.178147650906965 1.3997294525306871 "
     "1.9275070955420137 0.22536461269170174 0.22694166827641812 -0.94747468068874297 0.66278094143428246 "
     "0.67707786301085782 0.31982337483701262 0.7140953822969347 -0.70004503185192757 0.0021767778086559928\n"},
    {SCENE, 2, 7, 0,
     "2.5198420997897464 0.016666666666666666\n"
     "-0.16150673826197526 -0.86643894123331466 -1.8432226726223855 0.22542338677607215 0.057554732537670253 "
     "0.45534230627309752 -0.6689837826189754 -0.23286632190127476 0.13023038277098539 0.69373916000201541 "
     "-0.52115161549332401 -2.3786403159299292 2.7592444594385492\n"
     "0.60033021155411825 1.2968215282252067 0.87976114833738084 0.46310881331575954 0.44209929194453473 "
     "0.43880344803211946 -0.49692361438055965 0.40968812146558742 0.39492003116184116 0.65517992459177921 "
     "-2.359834036544203 -0.93334325822917652 -0.45736487715810137\n"},
    {RAYS, 2, 99, 43.088693800637664,
     "-20.550680982658491 -40.360510652924937 28.84871853540583 -0.68462534140307074 -0.56800861264971403 "
     "-0.45678699397473643 21.544346900318832\n"
     "14.727134739222464 19.604678145325408 1.947941270982291 0.20410313393817145 0.14028598962810057 "
     "0.96884557687522177 21.544346900318832\n"},
};

START_TEST(the_reference_generators_records)
{
    for (size_t i = 0; i < sizeof reference / sizeof reference[0]; i++) {
        char *text = generate(reference[i].k, reference[i].n, reference[i].seed, reference[i].half);
        ck_assert_str_eq(text, reference[i].text);
        free(text);
    }
}
END_TEST

Suite *gen_suite(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("gen");
    tcase_add_test(tc, splitmix_matches_published_vector);
    tcase_add_test(tc, pairs_are_boxes_of_the_drawn_rotations);
    tcase_add_test(tc, scene_quaternions_turn_to_the_drawn_frames);
    tcase_add_test(tc, rays_are_unit_and_inside_the_cube);
    tcase_add_test(tc, a_seed_decides_the_file);
    tcase_add_test(tc, no_records_leave_only_the_scene_header);
    tcase_add_test(tc, the_reference_generators_records);
    suite_add_tcase(s, tc);
    return s;
}
