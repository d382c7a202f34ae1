/* EPA penetration depth and the fallback log. Oracles: for boxes the
 * minimum overlap over the 15 SAT axes from the corners' projections (the
 * minimum translation of two boxes lies along one of them), an analytic
 * box-in-box answer, and a separation check of the returned normal; for
 * random point clouds the minimum overlap over many sampled directions
 * (EPA can only do better) and the overlap along EPA's own normal. */
#include <pthread.h>

#include "cq/fallback.h"
#include "testutil.h"

#define PAIRS 2000

static cq_xform at(double x, double y, double z)
{
    cq_xform t = cq_xform_identity();
    t.p = cq_v3(x, y, z);
    return t;
}

static void box_points(cq_vec3 h, cq_vec3 out[8])
{
    for (int k = 0; k < 8; k++)
        out[k] = cq_v3(k & 1 ? -h.x : h.x, k & 2 ? -h.y : h.y, k & 4 ? -h.z : h.z);
}

static double point_box_dist(cq_vec3 p, cq_vec3 h, const cq_xform *x)
{
    cq_vec3 l = cq_xform_inv_point(x, p);
    cq_vec3 c = cq_v3(cq_clamp(l.x, -h.x, h.x), cq_clamp(l.y, -h.y, h.y), cq_clamp(l.z, -h.z, h.z));
    return cq_len(cq_sub(l, c));
}

/* Overlap of the two point sets' projections on unit axis n, and whether
 * B should move along +n (rather than -n) to end it. */
static double overlap_along(const cq_vec3 *pa, int na, const cq_vec3 *pb, int nb, cq_vec3 n, bool *plus)
{
    double a0 = INFINITY, a1 = -INFINITY, b0 = INFINITY, b1 = -INFINITY;
    for (int i = 0; i < na; i++)
        a0 = fmin(a0, cq_dot(pa[i], n)), a1 = fmax(a1, cq_dot(pa[i], n));
    for (int i = 0; i < nb; i++)
        b0 = fmin(b0, cq_dot(pb[i], n)), b1 = fmax(b1, cq_dot(pb[i], n));
    *plus = a1 - b0 <= b1 - a0;
    return fmin(a1 - b0, b1 - a0);
}

/* The 15 SAT axes of two boxes (degenerate crosses skipped). */
static int sat_axes(const cq_mat3 *ra, const cq_mat3 *rb, cq_vec3 axes[15])
{
    int n = 0;
    for (int i = 0; i < 3; i++) {
        axes[n++] = ra->c[i];
        axes[n++] = rb->c[i];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            cq_vec3 c = cq_cross(ra->c[i], rb->c[j]);
            if (cq_len2(c) > 1e-12)
                axes[n++] = cq_scale(c, 1 / cq_len(c));
        }
    return n;
}

typedef struct box_pair {
    cq_vec3 ha, hb;
    cq_vec3 la[8], lb[8], ca[8], cb[8];
    cq_xform xa, xb;
    cq_proxy a, b;
    double depth, second; /* smallest and second smallest SAT overlap */
    cq_vec3 normal;       /* the smallest one's direction, A to B */
} box_pair;

static void box_pair_init(box_pair *p, cq_vec3 ha, cq_xform xa, cq_vec3 hb, cq_xform xb)
{
    p->ha = ha, p->hb = hb, p->xa = xa, p->xb = xb;
    box_points(ha, p->la);
    box_points(hb, p->lb);
    for (int k = 0; k < 8; k++) {
        p->ca[k] = cq_xform_point(&xa, p->la[k]);
        p->cb[k] = cq_xform_point(&xb, p->lb[k]);
    }
    p->a = (cq_proxy){p->la, 8, 0};
    p->b = (cq_proxy){p->lb, 8, 0};
    cq_vec3 axes[15];
    int n = sat_axes(&xa.r, &xb.r, axes);
    p->depth = p->second = INFINITY;
    for (int k = 0; k < n; k++) {
        bool plus;
        double o = overlap_along(p->ca, 8, p->cb, 8, axes[k], &plus);
        if (o < p->depth) {
            p->second = p->depth;
            p->depth = o;
            p->normal = plus ? axes[k] : cq_neg(axes[k]);
        } else if (o < p->second) {
            p->second = o;
        }
    }
}

static void random_box_pair(tu_rng *rng, box_pair *p, double spread)
{
    cq_vec3 ha = cq_v3(tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5));
    cq_vec3 hb = cq_v3(tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5), tu_uniform(rng, 0.05, 1.5));
    box_pair_init(p, ha, tu_pose(rng, spread), hb, tu_pose(rng, spread));
}

/* Largest SAT gap after moving B by t: positive means separated. */
static double gap_after_move(const box_pair *p, cq_vec3 t)
{
    cq_vec3 axes[15], moved[8];
    for (int k = 0; k < 8; k++)
        moved[k] = cq_add(p->cb[k], t);
    int n = sat_axes(&p->xa.r, &p->xb.r, axes);
    double gap = -INFINITY;
    for (int k = 0; k < n; k++) {
        bool plus;
        gap = fmax(gap, -overlap_along(p->ca, 8, moved, 8, axes[k], &plus));
    }
    return gap;
}

static cq_epa_result epa(const box_pair *p, const cq_simplex_cache *start, const cq_epa_options *opt)
{
    cq_epa_result r = cq_epa_penetration(&p->a, &p->xa, &p->b, &p->xb, start, opt);
    ck_assert(isfinite(r.depth) && cq_v3_finite(r.normal));
    ck_assert(cq_v3_finite(r.point_a) && cq_v3_finite(r.point_b));
    if (r.status == CQ_EPA_OK) {
        ck_assert_double_eq_tol(cq_len(r.normal), 1.0, 1e-12);
        tu_assert_vec_eq_tol(cq_sub(r.point_a, r.point_b), cq_scale(r.normal, r.depth), 1e-9);
    } else {
        ck_assert(cq_len2(r.normal) == 0 && r.depth == 0);
    }
    return r;
}

static void check_box_depth(const box_pair *p, const cq_epa_result *r)
{
    ck_assert_int_eq(r->status, CQ_EPA_OK);
    ck_assert_double_eq_tol(r->depth, p->depth, 1e-6 * p->depth + 1e-12);
    ck_assert(gap_after_move(p, cq_scale(r->normal, r->depth + 1e-6)) > 0);
    if (p->second > p->depth + 1e-6)
        tu_assert_vec_eq_tol(r->normal, p->normal, 1e-6);
    /* Witnesses on their own boxes (their difference was checked by epa()). */
    ck_assert_double_eq_tol(point_box_dist(r->point_a, p->ha, &p->xa), 0, 1e-9);
    ck_assert_double_eq_tol(point_box_dist(r->point_b, p->hb, &p->xb), 0, 1e-9);
}

START_TEST(test_box_box_random)
{
    tu_rng rng = {21};
    int n = 0;
    while (n < PAIRS) {
        box_pair p;
        random_box_pair(&rng, &p, 1);
        if (p.depth <= 1e-6)
            continue;
        n++;
        cq_gjk_result g = cq_gjk_distance(&p.a, &p.xa, &p.b, &p.xb, NULL);
        ck_assert_int_eq(g.status, CQ_GJK_PENETRATING);
        cq_epa_result r = epa(&p, &g.simplex, NULL);
        check_box_depth(&p, &r);
        ck_assert_int_le(r.iterations, CQ_EPA_DEFAULT_MAX_ITERATIONS);
        /* From scratch (no simplex) the answer is the same. */
        cq_epa_result s = epa(&p, NULL, NULL);
        check_box_depth(&p, &s);
    }
}
END_TEST

START_TEST(test_box_in_box)
{
    box_pair p;
    box_pair_init(&p, cq_v3(2, 2, 2), at(0, 0, 0), cq_v3(0.5, 0.5, 0.5), at(0.3, 0.1, 0));
    cq_epa_result r = epa(&p, NULL, NULL);
    ck_assert_int_eq(r.status, CQ_EPA_OK);
    ck_assert_double_eq_tol(r.depth, 2.2, 1e-12);
    tu_assert_vec_eq_tol(r.normal, cq_v3(1, 0, 0), 1e-12);
    /* Rotated and deep inside, against the SAT oracle. */
    tu_rng rng = {22};
    for (int i = 0; i < 500; i++) {
        cq_xform xb = tu_pose(&rng, 0.5);
        box_pair_init(&p, cq_v3(2, 1.5, 3), tu_pose(&rng, 0.2), cq_v3(0.3, 0.2, 0.4), xb);
        r = epa(&p, NULL, NULL);
        check_box_depth(&p, &r);
    }
}
END_TEST

START_TEST(test_touching_and_symmetry)
{
    /* Stacked cubes: depth 0 along +y. */
    box_pair p;
    box_pair_init(&p, cq_v3(1, 1, 1), at(0, 0, 0), cq_v3(1, 1, 1), at(0.4, 2, -0.3));
    cq_epa_result r = epa(&p, NULL, NULL);
    ck_assert_int_eq(r.status, CQ_EPA_OK);
    ck_assert_double_eq_tol(r.depth, 0, 1e-12);
    tu_assert_vec_eq_tol(r.normal, cq_v3(0, 1, 0), 1e-12);
    /* Swapping A and B: same depth, opposite normal. */
    tu_rng rng = {23};
    for (int i = 0; i < PAIRS; i++) {
        random_box_pair(&rng, &p, 1);
        if (p.depth <= 1e-6)
            continue;
        box_pair q;
        box_pair_init(&q, p.hb, p.xb, p.ha, p.xa);
        cq_epa_result ab = epa(&p, NULL, NULL), ba = epa(&q, NULL, NULL);
        ck_assert_int_eq(ab.status, CQ_EPA_OK);
        ck_assert_int_eq(ba.status, CQ_EPA_OK);
        ck_assert_double_eq_tol(ab.depth, ba.depth, 1e-9 * (1 + ab.depth));
        if (p.second > p.depth + 1e-6)
            tu_assert_vec_eq_tol(ab.normal, cq_neg(ba.normal), 1e-6);
    }
}
END_TEST

START_TEST(test_rigid_invariance)
{
    tu_rng rng = {24};
    for (int i = 0; i < PAIRS; i++) {
        box_pair p, q;
        random_box_pair(&rng, &p, 1);
        if (p.depth <= 1e-6)
            continue;
        cq_xform t = tu_pose(&rng, 1);
        t.p = cq_add(t.p, cq_v3(-1e4, 1e4, 1e4));
        cq_xform xa = {cq_xform_point(&t, p.xa.p), cq_mul_mm(&t.r, &p.xa.r)};
        cq_xform xb = {cq_xform_point(&t, p.xb.p), cq_mul_mm(&t.r, &p.xb.r)};
        box_pair_init(&q, p.ha, xa, p.hb, xb);
        cq_epa_result r0 = epa(&p, NULL, NULL), r1 = epa(&q, NULL, NULL);
        ck_assert_int_eq(r1.status, CQ_EPA_OK);
        /* Coordinates near 1e4 carry ~1e-12 of rounding each. */
        ck_assert_double_eq_tol(r0.depth, r1.depth, 1e-7);
        if (p.second > p.depth + 1e-6)
            tu_assert_vec_eq_tol(cq_mul_mv(&t.r, r0.normal), r1.normal, 1e-6);
    }
}
END_TEST

/* Random point clouds: EPA's depth is the overlap along its own normal and
 * no sampled direction overlaps less. */
START_TEST(test_point_clouds)
{
    enum { N = 12, DIRS = 4000 };
    tu_rng rng = {25};
    static cq_vec3 dirs[DIRS];
    for (int k = 0; k < DIRS; k++) {
        /* A Fibonacci sphere: even coverage. */
        double z = 1 - (2 * k + 1.0) / DIRS, r = sqrt(1 - z * z), phi = k * CQ_PI * (3 - sqrt(5.0));
        dirs[k] = cq_v3(r * cos(phi), r * sin(phi), z);
    }
    int tested = 0;
    while (tested < 300) {
        cq_vec3 la[N], lb[N], wa[N], wb[N];
        for (int i = 0; i < N; i++) {
            la[i] = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
            lb[i] = cq_v3(tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1), tu_uniform(&rng, -1, 1));
        }
        cq_xform xa = tu_pose(&rng, 0.5), xb = tu_pose(&rng, 0.5);
        for (int i = 0; i < N; i++) {
            wa[i] = cq_xform_point(&xa, la[i]);
            wb[i] = cq_xform_point(&xb, lb[i]);
        }
        double sampled = INFINITY;
        bool plus;
        for (int k = 0; k < DIRS; k++)
            sampled = fmin(sampled, overlap_along(wa, N, wb, N, dirs[k], &plus));
        if (sampled < 1e-3)
            continue;
        tested++;
        cq_proxy a = {la, N, 0}, b = {lb, N, 0};
        cq_gjk_result g = cq_gjk_distance(&a, &xa, &b, &xb, NULL);
        ck_assert_int_eq(g.status, CQ_GJK_PENETRATING);
        cq_epa_result r = cq_epa_penetration(&a, &xa, &b, &xb, &g.simplex, NULL);
        ck_assert_int_eq(r.status, CQ_EPA_OK);
        ck_assert(r.depth <= sampled + 1e-9);
        double along = overlap_along(wa, N, wb, N, r.normal, &plus);
        ck_assert(plus);
        ck_assert_double_eq_tol(along, r.depth, 1e-9);
    }
}
END_TEST

START_TEST(test_degenerate)
{
    cq_vec3 one[1] = {{0, 0, 0}};
    cq_vec3 seg[2] = {{-1, 0, 0}, {1, 0, 0}};
    cq_vec3 square[4] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
    cq_proxy p_one = {one, 1, 0.5}, p_seg = {seg, 2, 0.5}, p_square = {square, 4, 0};
    cq_xform id = cq_xform_identity(), rot = id;
    rot.r = tu_axis_angle(cq_v3(0, 0, 1), CQ_PI / 2);
    struct {
        const cq_proxy *a, *b;
        cq_xform xb;
    } cases[] = {
        {&p_one, &p_one, id},         /* coincident points */
        {&p_seg, &p_seg, rot},        /* crossing segments */
        {&p_seg, &p_one, id},         /* point on a segment */
        {&p_square, &p_square, rot},  /* coplanar squares */
        {&p_square, &p_seg, id},      /* segment in the square's plane */
    };
    for (int c = 0; c < 5; c++) {
        cq_gjk_result g = cq_gjk_distance(cases[c].a, &id, cases[c].b, &cases[c].xb, NULL);
        ck_assert_int_eq(g.status, CQ_GJK_TOUCHING);
        cq_epa_result r = cq_epa_penetration(cases[c].a, &id, cases[c].b, &cases[c].xb, &g.simplex, NULL);
        ck_assert_int_eq(r.status, CQ_EPA_DEGENERATE);
        ck_assert(cq_len2(r.normal) == 0);
    }
    /* Rounded: apply_radii adds the radii along the core normal. */
    cq_vec3 h[8];
    box_points(cq_v3(1, 1, 1), h);
    cq_proxy rounded = {h, 8, 0.25};
    cq_xform xb = at(0, 1.5, 0);
    cq_epa_result r = cq_epa_penetration(&rounded, &id, &rounded, &xb, NULL, NULL);
    ck_assert_int_eq(r.status, CQ_EPA_OK);
    ck_assert_double_eq_tol(r.depth, 0.5, 1e-12);
    cq_epa_apply_radii(&r, &rounded, &rounded);
    ck_assert_double_eq_tol(r.depth, 1.0, 1e-12);
    tu_assert_vec_eq_tol(r.normal, cq_v3(0, 1, 0), 1e-12);
    tu_assert_vec_eq_tol(cq_sub(r.point_a, r.point_b), cq_v3(0, 1, 0), 1e-12);
}
END_TEST

/* Points on a sphere: a round difference that EPA cannot finish in a few steps. */
static void sphere_cloud(cq_vec3 *out, int n, double radius)
{
    for (int k = 0; k < n; k++) {
        double z = 1 - (2 * k + 1.0) / n, r = sqrt(1 - z * z), phi = k * CQ_PI * (3 - sqrt(5.0));
        out[k] = cq_v3(radius * r * cos(phi), radius * r * sin(phi), radius * z);
    }
}

START_TEST(test_failures)
{
    box_pair p;
    box_pair_init(&p, cq_v3(1, 1, 1), at(0, 0, 0), cq_v3(0.9, 0.7, 0.8), at(0.1, 0.2, 0));
    p.xb.r = tu_axis_angle(cq_v3(0.6, 0, 0.8), 0.7);
    cq_epa_options one = {.max_iterations = 1};
    cq_epa_result r = epa(&p, NULL, &one);
    ck_assert_int_eq(r.status, CQ_EPA_ITERATION_LIMIT);
    ck_assert_int_eq(r.iterations, 1);

    /* Near-concentric balls of 65535 points: the polytope fills up first. */
    static cq_vec3 big[65535];
    sphere_cloud(big, 65535, 1);
    cq_proxy s = {big, 65535, 0};
    cq_xform xa = cq_xform_identity(), xb = at(0, 0.1, 0);
    cq_epa_options many = {.max_iterations = 1000};
    r = cq_epa_penetration(&s, &xa, &s, &xb, NULL, &many);
    ck_assert_int_eq(r.status, CQ_EPA_CAPACITY);
    ck_assert_int_le(r.iterations, CQ_EPA_MAX_VERTICES);
    ck_assert(cq_len2(r.normal) == 0);
    /* Balls of 4096 points, apart by 0.3162: more than 64 expansions. */
    static cq_vec3 ball[4096];
    sphere_cloud(ball, 4096, 1);
    s = (cq_proxy){ball, 4096, 0};
    xb = at(0.3, 0.1, 0);
    r = cq_epa_penetration(&s, &xa, &s, &xb, NULL, NULL);
    ck_assert_int_eq(r.status, CQ_EPA_ITERATION_LIMIT);
    ck_assert_int_eq(r.iterations, CQ_EPA_DEFAULT_MAX_ITERATIONS);
    /* A looser tolerance converges: the depth of two unit balls 0.3162 apart. */
    cq_epa_options loose = {.tolerance = 1e-2};
    r = cq_epa_penetration(&s, &xa, &s, &xb, NULL, &loose);
    ck_assert_int_eq(r.status, CQ_EPA_OK);
    ck_assert_double_eq_tol(r.depth, 2 - sqrt(0.1), 0.05);

    ck_assert_str_eq(cq_epa_status_name(CQ_EPA_OK), "ok");
    ck_assert_str_eq(cq_epa_status_name(CQ_EPA_ITERATION_LIMIT), "iteration_limit");
    ck_assert_str_eq(cq_epa_status_name(CQ_EPA_CAPACITY), "capacity");
    ck_assert_str_eq(cq_epa_status_name(CQ_EPA_DEGENERATE), "degenerate");
}
END_TEST

/* ---- the fallback log ---- */

static cq_fallback_record record(uint64_t k)
{
    return (cq_fallback_record){
        .reason = (uint8_t)(1 + k % 4),
        .action = (uint8_t)(1 + k % 2),
        .shape_a = (uint8_t)(k % 5),
        .shape_b = (uint8_t)(k % 3),
        .iterations = (uint16_t)k,
        .tag_a = k * 3 + 1,
        .tag_b = ~k,
    };
}

static void assert_record(const cq_fallback_record *r, uint64_t k)
{
    cq_fallback_record e = record(k);
    ck_assert_int_eq(r->reason, e.reason);
    ck_assert_int_eq(r->action, e.action);
    ck_assert_int_eq(r->shape_a, e.shape_a);
    ck_assert_int_eq(r->shape_b, e.shape_b);
    ck_assert_int_eq(r->iterations, e.iterations);
    ck_assert(r->tag_a == e.tag_a && r->tag_b == e.tag_b);
}

START_TEST(test_log_ring)
{
    cq_fallback_slot slots[4];
    cq_fallback_log log;
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 0, NULL), CQ_ERANGE);
    ck_assert_int_eq(cq_fallback_log_init(&log, NULL, 4, NULL), CQ_ERANGE);
    ck_assert_int_eq(cq_fallback_log_init(&log, slots, 4, NULL), CQ_OK);
    cq_fallback_record out[10];
    ck_assert_int_eq(cq_fallback_log_read(&log, out, 10), 0);
    for (uint64_t k = 1; k <= 10; k++) {
        cq_fallback_record r = record(k);
        ck_assert(cq_fallback_log_push(&log, &r) == k);
    }
    ck_assert_int_eq(cq_fallback_log_read(&log, out, 10), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert(out[i].seq == 10 - (uint64_t)i);
        assert_record(&out[i], 10 - (uint64_t)i);
    }
    ck_assert_int_eq(cq_fallback_log_read(&log, out, 2), 2);
    ck_assert(out[0].seq == 10 && out[1].seq == 9);

    /* Two rings on one clock: seqs are unique and merge into push order. */
    cq_fallback_slot s1[8], s2[8];
    cq_fallback_log l1, l2;
    _Atomic uint64_t clock;
    atomic_init(&clock, 100);
    cq_fallback_log_init(&l1, s1, 8, &clock);
    cq_fallback_log_init(&l2, s2, 8, &clock);
    for (uint64_t k = 1; k <= 6; k++) {
        cq_fallback_record r = record(k);
        ck_assert(cq_fallback_log_push(k % 2 ? &l1 : &l2, &r) == 100 + k);
    }
    ck_assert_int_eq(cq_fallback_log_read(&l1, out, 8), 3);
    ck_assert(out[0].seq == 105 && out[1].seq == 103 && out[2].seq == 101);
    assert_record(&out[0], 5);

    /* Wire names, and the record a failed EPA would leave. */
    ck_assert_str_eq(cq_fallback_reason_name(CQ_FB_GJK_ITERATION_LIMIT), "gjk_iteration_limit");
    ck_assert_str_eq(cq_fallback_reason_name(CQ_FB_EPA_ITERATION_LIMIT), "epa_iteration_limit");
    ck_assert_str_eq(cq_fallback_reason_name(CQ_FB_EPA_CAPACITY), "epa_capacity");
    ck_assert_str_eq(cq_fallback_reason_name(CQ_FB_EPA_DEGENERATE), "epa_degenerate");
    ck_assert_int_eq(cq_fallback_from_epa(CQ_EPA_OK), CQ_FB_NONE);
    ck_assert_int_eq(cq_fallback_from_epa(CQ_EPA_CAPACITY), CQ_FB_EPA_CAPACITY);
    ck_assert_int_eq(cq_fallback_from_epa(CQ_EPA_DEGENERATE), CQ_FB_EPA_DEGENERATE);
    box_pair p;
    box_pair_init(&p, cq_v3(1, 1, 1), at(0, 0, 0), cq_v3(1, 1, 1), at(0.5, 0.3, 0.2));
    cq_epa_options one = {.max_iterations = 1};
    cq_epa_result e = epa(&p, NULL, &one);
    cq_fallback_record f = {.reason = (uint8_t)cq_fallback_from_epa(e.status),
                            .action = CQ_FBA_DROPPED,
                            .shape_a = CQ_BOX,
                            .shape_b = CQ_BOX,
                            .iterations = (uint16_t)e.iterations};
    cq_fallback_log_push(&log, &f);
    ck_assert_int_eq(cq_fallback_log_read(&log, out, 1), 1);
    ck_assert_str_eq(cq_fallback_reason_name(out[0].reason), "epa_iteration_limit");
    ck_assert_str_eq(cq_fallback_action_name(out[0].action), "dropped");
    ck_assert_int_eq(out[0].iterations, 1);
}
END_TEST

enum { LOG_READS = 200000, LOG_CAP = 2 };

typedef struct log_race {
    cq_fallback_log log;
    cq_fallback_slot slots[LOG_CAP];
    _Atomic int started, stop;
} log_race;

/* Pushes until told to stop; a tiny ring makes it overwrite the slots the
 * reader is reading all the time. */
static void *log_writer(void *arg)
{
    log_race *race = arg;
    atomic_store(&race->started, 1);
    for (uint64_t k = 1; !atomic_load_explicit(&race->stop, memory_order_relaxed); k++) {
        cq_fallback_record r = record(k);
        cq_fallback_log_push(&race->log, &r);
    }
    return NULL;
}

/* A reader racing the writer: every record it gets is whole (its fields
 * match its seq) and each read is newest first. */
START_TEST(test_log_concurrent)
{
    static log_race race;
    cq_fallback_log_init(&race.log, race.slots, LOG_CAP, NULL);
    atomic_init(&race.started, 0);
    atomic_init(&race.stop, 0);
    pthread_t writer;
    ck_assert_int_eq(pthread_create(&writer, NULL, log_writer, &race), 0);
    while (!atomic_load(&race.started))
        ;
    long records = 0;
    for (int i = 0; i < LOG_READS; i++) {
        cq_fallback_record out[LOG_CAP];
        int n = cq_fallback_log_read(&race.log, out, LOG_CAP);
        for (int k = 0; k < n; k++) {
            assert_record(&out[k], out[k].seq);
            if (k > 0)
                ck_assert(out[k].seq < out[k - 1].seq);
        }
        records += n;
    }
    atomic_store(&race.stop, 1);
    pthread_join(writer, NULL);
    ck_assert_int_gt(records, 0);
}
END_TEST

Suite *epa_suite(void)
{
    Suite *s = suite_create("epa");
    TCase *tc = tcase_create("boxes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_box_box_random);
    tcase_add_test(tc, test_box_in_box);
    tcase_add_test(tc, test_touching_and_symmetry);
    tcase_add_test(tc, test_rigid_invariance);
    tcase_add_test(tc, test_point_clouds);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_degenerate);
    tcase_add_test(tc, test_failures);
    suite_add_tcase(s, tc);
    tc = tcase_create("fallback_log");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_log_ring);
    tcase_add_test(tc, test_log_concurrent);
    suite_add_tcase(s, tc);
    return s;
}
