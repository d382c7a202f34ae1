/* The sweep-and-prune broadphase. The oracle is brute force written out
 * independently here: every pair of live items whose boxes overlap on all
 * three axes (touching counts), whose filters meet both ways and which are
 * not both static. Random worlds move for many frames with inserts,
 * removes, reused ids, filter changes and moved statics, and after every
 * update the pair list must equal the oracle exactly, with the added flags,
 * the removed list and the slots following from the previous frame's list.
 * Fixed cases cover touching, identical, zero-size and infinite boxes;
 * counters show that statics stay out of the re-sort; a failing allocator
 * shows the failure paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "cq/status.h"
#include "sap.h"
#include "sap_internal.h" /* bulk_ratio: to run the same frames down either path */
#include "sap_model.h"
#include "testutil.h"

Suite *sap_suite(void);

/* ---- random worlds ---- */

typedef struct scene {
    double half;     /* items live in [-half, half]^3 */
    double quantum;  /* > 0: coordinates on a grid of this step (exact ties) */
    double max_size; /* largest half extent */
} scene;

static double snap(const scene *sc, double v) { return sc->quantum > 0 ? sc->quantum * round(v / sc->quantum) : v; }

static cq_aabb random_box(tu_rng *rng, const scene *sc)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) { /* one in 20 has no extent on an axis */
        double c = tu_uniform(rng, -sc->half, sc->half);
        double e = tu_uniform(rng, 0, 1) < 0.05 ? 0 : tu_uniform(rng, 0, sc->max_size);
        lo[k] = snap(sc, c - e);
        hi[k] = e > 0 ? snap(sc, c + e) : lo[k];
    }
    return (cq_aabb){cq_v3(lo[0], lo[1], lo[2]), cq_v3(hi[0], hi[1], hi[2])};
}

static cq_aabb translated(cq_aabb b, cq_vec3 d) { return (cq_aabb){cq_add(b.min, d), cq_add(b.max, d)}; }

/* One frame of motion at velocity *v (|components| <= 3): v / 60 in a
 * continuous scene, one grid step or none per axis in a grid scene. A
 * component reverses at the walls, so the world stays as dense as it began. */
static cq_aabb drift(const scene *sc, cq_aabb b, cq_vec3 *v)
{
    double *vk[3] = {&v->x, &v->y, &v->z}, d[3];
    for (int k = 0; k < 3; k++) {
        d[k] = sc->quantum > 0 ? sc->quantum * round(*vk[k] / 3) : *vk[k] / 60;
        double centre = 0.5 * (cq_comp(b.min, k) + cq_comp(b.max, k));
        if (fabs(centre + d[k]) > sc->half) {
            *vk[k] = -*vk[k];
            d[k] = -d[k];
        }
    }
    return translated(b, cq_v3(d[0], d[1], d[2]));
}

static void random_filter(tu_rng *rng, uint32_t *layer, uint32_t *mask)
{
    *layer = 1u << (int)tu_uniform(rng, 0, 3);
    double r = tu_uniform(rng, 0, 1);
    *mask = r < 0.7 ? 0xffffffffu : r < 0.85 ? ~*layer : (uint32_t)tu_uniform(rng, 0, 8);
}

static int random_free_id(tu_rng *rng, const sm_model *m)
{
    for (;;) {
        int id = (int)tu_uniform(rng, 0, m->cap);
        if (!m->alive[id])
            return id;
    }
}

static int random_live_id(tu_rng *rng, const sm_model *m)
{
    for (;;) {
        int id = (int)tu_uniform(rng, 0, m->cap);
        if (m->alive[id])
            return id;
    }
}

static void random_item(tu_rng *rng, const scene *sc, sm_model *m, int id)
{
    random_filter(rng, &m->layer[id], &m->mask[id]);
    m->box[id] = random_box(rng, sc);
    m->is_static[id] = tu_uniform(rng, 0, 1) < 0.15;
}

static void insert_random(cq_sap *sap, sm_model *m, tu_rng *rng, const scene *sc, int id)
{
    random_item(rng, sc, m, id);
    sm_put(sap, m, id, m->box[id], m->layer[id], m->mask[id], m->is_static[id]);
}

/* The half-spaces z <= -0.8 half (static) and x >= 0.9 half (static), and a
 * slab infinite in x and z that moves along y (dynamic). */
static const int plane_ids[3] = {0, 1, 2};

static cq_aabb slab_at(double y)
{
    return (cq_aabb){cq_v3(-INFINITY, y, -INFINITY), cq_v3(INFINITY, y + 0.5, INFINITY)};
}

static void insert_planes(cq_sap *sap, sm_model *m, const scene *sc)
{
    cq_aabb floor = {cq_v3(-INFINITY, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, -0.8 * sc->half)};
    cq_aabb wall = {cq_v3(0.9 * sc->half, -INFINITY, -INFINITY), cq_v3(INFINITY, INFINITY, INFINITY)};
    sm_put(sap, m, plane_ids[0], floor, 1, 0xffffffffu, true);
    sm_put(sap, m, plane_ids[1], wall, 2, 0xffffffffu, true);
    sm_put(sap, m, plane_ids[2], slab_at(0), 1, 0xffffffffu, false);
}

static bool is_plane(int id) { return id <= plane_ids[2]; }

typedef struct run_cfg {
    int items, frames;
    scene sc;
    uint64_t seed;
    double bulk_ratio; /* > 0: the sap's choice of path overridden (INFINITY: never merge) */
} run_cfg;

/* One frame of mutations: most dynamics drift, a few teleport or resize,
 * the slab sweeps along y, and now and then items come and go (ids
 * reused, sometimes removed and inserted again in the same frame), a
 * filter changes, a static moves, or a batch of 40 arrives at once. */
static void random_frame(cq_sap *sap, sm_model *m, tu_rng *rng, const scene *sc, cq_vec3 *vel, int frame)
{
    for (int id = plane_ids[2] + 1; id < m->cap; id++) {
        if (!m->alive[id] || m->is_static[id])
            continue;
        double r = tu_uniform(rng, 0, 1);
        if (r < 0.002)
            sm_shift(sap, m, id, random_box(rng, sc));
        else if (r < 0.01)
            sm_shift(sap, m, id, (cq_aabb){m->box[id].min, cq_add(m->box[id].max, cq_v3(0.1, 0, 0.2))});
        else if (r < 0.85)
            sm_shift(sap, m, id, drift(sc, m->box[id], &vel[id]));
        else if (r < 0.9) /* the same box again: a no-op */
            sm_shift(sap, m, id, m->box[id]);
    }
    sm_shift(sap, m, plane_ids[2], slab_at(sc->half * sin(frame * 0.05)));
    int churn = (int)tu_uniform(rng, 0, 4);
    for (int k = 0; k < churn; k++) {
        double r = tu_uniform(rng, 0, 1);
        if (r < 0.3) {
            int id = random_live_id(rng, m);
            if (!is_plane(id))
                sm_drop(sap, m, id);
        } else if (r < 0.6) {
            insert_random(sap, m, rng, sc, random_free_id(rng, m));
        } else if (r < 0.7) {
            int id = random_live_id(rng, m);
            if (!is_plane(id)) {
                sm_drop(sap, m, id);
                insert_random(sap, m, rng, sc, id);
            }
        } else if (r < 0.85) {
            uint32_t layer, mask;
            random_filter(rng, &layer, &mask);
            sm_refilter(sap, m, random_live_id(rng, m), layer, mask);
        } else {
            int id = random_live_id(rng, m);
            if (m->is_static[id] && !is_plane(id))
                sm_shift(sap, m, id, random_box(rng, sc));
        }
    }
    if (frame % 97 == 96)
        for (int k = 0; k < 40; k++) {
            int id = random_live_id(rng, m);
            if (!is_plane(id))
                sm_drop(sap, m, id);
            insert_random(sap, m, rng, sc, random_free_id(rng, m));
        }
}

static cq_sap_stats run_random(const run_cfg *cfg)
{
    tu_rng rng = {cfg->seed};
    sm_model m = sm_model_make(cfg->items + cfg->items / 10);
    cq_vec3 *vel = malloc((size_t)m.cap * sizeof *vel);
    ck_assert(vel);
    for (int id = 0; id < m.cap; id++)
        vel[id] = cq_v3(tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3));
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(cfg->items / 2, &sap), CQ_OK); /* half: inserts must grow it */
    if (cfg->bulk_ratio > 0)
        sap->bulk_ratio = cfg->bulk_ratio;
    insert_planes(sap, &m, &cfg->sc);
    for (int id = plane_ids[2] + 1; id < cfg->items; id++)
        insert_random(sap, &m, &rng, &cfg->sc, id);
    sm_history h = {0};
    sm_update_and_check(sap, &m, &h);
    for (int frame = 0; frame < cfg->frames; frame++) {
        random_frame(sap, &m, &rng, &cfg->sc, vel, frame);
        sm_update_and_check(sap, &m, &h);
    }
    cq_sap_stats st = cq__sap_get_stats(sap);
    cq__sap_destroy(sap);
    sm_history_free(&h);
    free(vel);
    sm_model_free(&m);
    return st;
}

START_TEST(test_random_grid)
{
    /* Coordinates on a 1/4 grid: touching and identical boxes all the time. */
    run_cfg cfg = {1000, 2000, {6, 0.25, 0.75}, 0x5a9001, 0};
    cq_sap_stats st = run_random(&cfg); /* a grid step a frame: mass moves, merged in */
    ck_assert(st.grows > 0 && st.sweeps > 0 && st.bulk_moves > 1000);
    cfg.bulk_ratio = INFINITY; /* the same frames, insertion-sorted */
    st = run_random(&cfg);
    ck_assert(st.grows > 0 && st.sweeps > 0 && st.swaps > 0 && st.crossings > 0 && st.bulk_moves == 0);
}
END_TEST

START_TEST(test_random_large)
{
    run_cfg cfg = {5000, 500, {10, 0, 0.5}, 0x5a9002, 0};
    cq_sap_stats st = run_random(&cfg);
    ck_assert(st.grows > 0 && st.sweeps > 0 && st.queries > 0 && st.swaps > 0 && st.crossings > 0);
}
END_TEST

/* The pruned oracle equals the all-pairs one (on a grid, with planes). */
START_TEST(test_oracle_agrees)
{
    tu_rng rng = {77};
    scene sc = {4, 0.25, 1};
    sm_model m = sm_model_make(600);
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(600, &sap), CQ_OK);
    insert_planes(sap, &m, &sc);
    for (int id = 3; id < 600; id++)
        insert_random(sap, &m, &rng, &sc, id);
    sm_keys all = {0}, pruned = {0};
    sm_oracle_all(&m, &all);
    sm_oracle(&m, &pruned);
    ck_assert_int_gt(all.n, 1000);
    ck_assert_int_eq(all.n, pruned.n);
    ck_assert(memcmp(all.k, pruned.k, (size_t)all.n * sizeof *all.k) == 0);
    sm_keys_free(&all);
    sm_keys_free(&pruned);
    cq__sap_destroy(sap);
    sm_model_free(&m);
}
END_TEST

/* ---- fixed cases ---- */

static cq_aabb box6(double x0, double y0, double z0, double x1, double y1, double z1)
{
    return (cq_aabb){cq_v3(x0, y0, z0), cq_v3(x1, y1, z1)};
}

static void expect_pairs(const cq_sap *sap, const int (*want)[2], int n)
{
    ck_assert_int_eq(cq__sap_pair_count(sap), n);
    for (int k = 0; k < n; k++) {
        cq_sap_pair p = cq__sap_pair_at(sap, k);
        ck_assert_msg(p.a == want[k][0] && p.b == want[k][1], "pair %d: (%d,%d) want (%d,%d)", k, p.a, p.b,
                      want[k][0], want[k][1]);
    }
}

START_TEST(test_touching_identical_zero)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(8, &sap), CQ_OK);
    const double eps = 1e-12;
    cq_aabb boxes[7] = {
        box6(0, 0, 0, 1, 1, 1),       /* 0 */
        box6(1, 0, 0, 2, 1, 1),       /* 1: shares the face x = 1 with 0 */
        box6(0, 0, 0, 1, 1, 1),       /* 2: identical to 0 */
        box6(1, 1, 1, 1, 1, 1),       /* 3: a point on the corner of 0, 1, 2 */
        box6(5, 5, 5, 5, 5, 5),       /* 4: a point alone */
        box6(1 + eps, 0, 0, 3, 1, 1), /* 5: a hair right of x = 1 */
        box6(5, 5, 5, 5, 5, 5),       /* 6: the same point as 4 */
    };
    for (int id = 0; id < 7; id++)
        ck_assert_int_eq(cq__sap_insert(sap, id, &boxes[id], 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int want[8][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {1, 5}, {2, 3}, {4, 6}};
    expect_pairs(sap, want, 8);
    for (int k = 0; k < 8; k++)
        ck_assert(cq__sap_pair_at(sap, k).added);

    /* 5 slides left onto x = 1: it now touches 0, 2 and 3. */
    boxes[5] = box6(1, 0, 0, 3 - eps, 1, 1);
    ck_assert_int_eq(cq__sap_move(sap, 5, &boxes[5]), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int want2[11][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 5}, {1, 2}, {1, 3},
                                     {1, 5}, {2, 3}, {2, 5}, {3, 5}, {4, 6}};
    expect_pairs(sap, want2, 11);
    for (int k = 0; k < 11; k++) {
        cq_sap_pair p = cq__sap_pair_at(sap, k);
        ck_assert(p.added == (p.b == 5 && p.a != 1));
    }
    ck_assert_int_eq(cq__sap_removed_count(sap), 0);

    /* 1 leaves: its four pairs end. */
    boxes[1] = box6(10, 0, 0, 11, 1, 1);
    ck_assert_int_eq(cq__sap_move(sap, 1, &boxes[1]), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int gone[4][2] = {{0, 1}, {1, 2}, {1, 3}, {1, 5}};
    ck_assert_int_eq(cq__sap_removed_count(sap), 4);
    for (int k = 0; k < 4; k++) {
        cq_sap_pair p = cq__sap_removed_at(sap, k);
        ck_assert(p.a == gone[k][0] && p.b == gone[k][1]);
    }
    ck_assert_int_eq(cq__sap_pair_count(sap), 7);
    ck_assert_int_eq(cq__sap_find(sap, 0, 1), -1);
    ck_assert_int_ge(cq__sap_find(sap, 5, 3), 0);
    ck_assert_int_eq(cq__sap_find(sap, 3, 3), -1);

    /* An update with nothing to do clears the reports and keeps the list. */
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    ck_assert_int_eq(cq__sap_removed_count(sap), 0);
    ck_assert_int_eq(cq__sap_pair_count(sap), 7);
    for (int k = 0; k < 7; k++)
        ck_assert(!cq__sap_pair_at(sap, k).added);
    cq__sap_destroy(sap);
}
END_TEST

/* Boxes that overlap before and after a frame keep their pair (same slot,
 * not added) however far they travel together or past each other. */
START_TEST(test_pair_continues)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(4, &sap), CQ_OK);
    cq_aabb low = box6(0, 0, 0, 1, 1, 1), high = box6(0, 0, 1, 1, 1, 2), other = box6(50, 0, 0, 51, 1, 1);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &low, 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_insert(sap, 1, &high, 1, 1, false), CQ_OK); /* stacked, touching at z = 1 */
    ck_assert_int_eq(cq__sap_insert(sap, 2, &other, 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    int slot = cq__sap_find(sap, 0, 1);
    ck_assert_int_ge(slot, 0);
    for (int frame = 1; frame <= 30; frame++) { /* the stack falls 3 units a frame, past 2 on the way */
        cq_vec3 d = cq_v3(frame % 2 ? 7 : -7, 0, -3);
        low = (cq_aabb){cq_add(low.min, d), cq_add(low.max, d)};
        high = (cq_aabb){cq_add(high.min, d), cq_add(high.max, d)};
        ck_assert_int_eq(cq__sap_move(sap, frame % 2 ? 0 : 1, frame % 2 ? &low : &high), CQ_OK);
        ck_assert_int_eq(cq__sap_move(sap, frame % 2 ? 1 : 0, frame % 2 ? &high : &low), CQ_OK);
        ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
        ck_assert_int_eq(cq__sap_pair_count(sap), 1);
        cq_sap_pair p = cq__sap_pair_at(sap, 0);
        ck_assert(p.a == 0 && p.b == 1 && p.slot == slot && !p.added);
        ck_assert_int_eq(cq__sap_removed_count(sap), 0);
    }
    /* Two boxes trade places in one frame, overlapping before and after. */
    low = box6(0, 0, 0, 2, 1, 1);
    high = box6(1, 0, 0, 3, 1, 1);
    ck_assert_int_eq(cq__sap_move(sap, 0, &low), CQ_OK);
    ck_assert_int_eq(cq__sap_move(sap, 1, &high), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    ck_assert_int_eq(cq__sap_find(sap, 0, 1), slot);
    ck_assert_int_eq(cq__sap_move(sap, 0, &high), CQ_OK);
    ck_assert_int_eq(cq__sap_move(sap, 1, &low), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    ck_assert_int_eq(cq__sap_find(sap, 0, 1), slot);
    ck_assert(!cq__sap_pair_at(sap, 0).added && cq__sap_removed_count(sap) == 0);
    cq__sap_destroy(sap);
}
END_TEST

START_TEST(test_filter)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(4, &sap), CQ_OK);
    cq_aabb b = box6(0, 0, 0, 1, 1, 1);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &b, 1, 2, false), CQ_OK); /* A */
    ck_assert_int_eq(cq__sap_insert(sap, 1, &b, 2, 1, false), CQ_OK); /* B */
    ck_assert_int_eq(cq__sap_insert(sap, 2, &b, 2, 2, false), CQ_OK); /* C */
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    /* A-B meet both ways; A-C: A's layer misses C's mask; B-C: C's layer misses B's mask. */
    static const int w1[1][2] = {{0, 1}};
    expect_pairs(sap, w1, 1);
    int slot_ab = cq__sap_pair_at(sap, 0).slot;

    ck_assert_int_eq(cq__sap_set_filter(sap, 2, 2, 3), CQ_OK); /* C's mask now takes A and B */
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int w2[2][2] = {{0, 1}, {0, 2}}; /* B-C still fails: C's layer 2 & B's mask 1 */
    expect_pairs(sap, w2, 2);
    ck_assert(!cq__sap_pair_at(sap, 0).added && cq__sap_pair_at(sap, 0).slot == slot_ab);
    ck_assert(cq__sap_pair_at(sap, 1).added);

    ck_assert_int_eq(cq__sap_set_filter(sap, 1, 2, 0), CQ_OK); /* B collides with nothing */
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int w3[1][2] = {{0, 2}};
    expect_pairs(sap, w3, 1);
    ck_assert_int_eq(cq__sap_removed_count(sap), 1);
    ck_assert(cq__sap_removed_at(sap, 0).a == 0 && cq__sap_removed_at(sap, 0).b == 1);
    ck_assert_int_eq(cq__sap_removed_at(sap, 0).slot, slot_ab);
    cq__sap_destroy(sap);
}
END_TEST

START_TEST(test_planes)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(8, &sap), CQ_OK);
    cq_aabb ground = box6(-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, 0); /* z <= 0 */
    cq_aabb all = box6(-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY);
    cq_aabb wall = box6(-INFINITY, 3, -INFINITY, INFINITY, INFINITY, INFINITY); /* y >= 3 */
    ck_assert_int_eq(cq__sap_insert(sap, 0, &ground, 1, 1, true), CQ_OK);
    ck_assert_int_eq(cq__sap_insert(sap, 1, &all, 1, 1, true), CQ_OK);
    ck_assert_int_eq(cq__sap_insert(sap, 2, &wall, 1, 1, false), CQ_OK); /* an infinite dynamic */
    cq_aabb ball = box6(-0.5, -0.5, 0.5, 0.5, 0.5, 1.5);
    ck_assert_int_eq(cq__sap_insert(sap, 3, &ball, 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    /* The two statics never pair; both infinite boxes meet the wall and the ball. */
    static const int w1[3][2] = {{0, 2}, {1, 2}, {1, 3}};
    expect_pairs(sap, w1, 3);

    /* The ball falls in steps of 0.25: it meets the ground from min z = 0 on. */
    for (int step = 1; step <= 8; step++) {
        double z = 0.5 - 0.25 * step;
        ball = box6(-0.5, -0.5, z, 0.5, 0.5, z + 1);
        ck_assert_int_eq(cq__sap_move(sap, 3, &ball), CQ_OK);
        ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
        ck_assert_int_eq(cq__sap_find(sap, 0, 3) >= 0, z <= 0);
        ck_assert_int_ge(cq__sap_find(sap, 1, 3), 0);
    }
    /* Then it rolls into the wall (touching at y = 3) and on through it. */
    ball = box6(2, 2, -1, 3, 3, 0);
    ck_assert_int_eq(cq__sap_move(sap, 3, &ball), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int w2[5][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    expect_pairs(sap, w2, 5);
    /* The wall moves off to y >= 100 and the ground rises to z <= 10 (a static move). */
    wall = box6(-INFINITY, 100, -INFINITY, INFINITY, INFINITY, INFINITY);
    ground.max.z = 10;
    ck_assert_int_eq(cq__sap_move(sap, 2, &wall), CQ_OK);
    ck_assert_int_eq(cq__sap_move(sap, 0, &ground), CQ_OK);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    static const int w3[4][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}};
    expect_pairs(sap, w3, 4);
    for (int k = 0; k < 4; k++)
        ck_assert(!cq__sap_pair_at(sap, k).added); /* the static's pairs continued */
    ck_assert_int_eq(cq__sap_removed_count(sap), 1);
    cq_sap_stats st = cq__sap_get_stats(sap);
    ck_assert_int_eq((int)st.static_rebuilds, 2);
    cq__sap_destroy(sap);
}
END_TEST

/* Statics never enter the per-frame re-sort: the same dynamic motion makes
 * exactly the same swaps with 3000 statics around as without them, the
 * static arrays are built once, and overlapping statics never pair. */
static cq_sap_stats static_run(int statics, bool check)
{
    tu_rng rng = {4242};
    scene sc = {8, 0, 0.6};
    int dyn = 800, cap = dyn + 3000;
    sm_model m = sm_model_make(cap);
    cq_vec3 *vel = malloc((size_t)dyn * sizeof *vel);
    ck_assert(vel);
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(cap, &sap), CQ_OK);
    for (int id = 0; id < dyn; id++) {
        sm_put(sap, &m, id, random_box(&rng, &sc), 1, 0xffffffffu, false);
        vel[id] = cq_v3(tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3), tu_uniform(&rng, -3, 3));
    }
    tu_rng srng = {99};
    for (int id = dyn; id < dyn + statics; id++)
        sm_put(sap, &m, id, random_box(&srng, &sc), 1, 0xffffffffu, true);
    sm_history h = {0};
    if (check)
        sm_update_and_check(sap, &m, &h);
    else
        ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    uint64_t rebuilds = cq__sap_get_stats(sap).static_rebuilds, swaps = cq__sap_get_stats(sap).swaps;
    ck_assert_int_eq((int)swaps, 0);
    for (int frame = 0; frame < 300; frame++) {
        for (int id = 0; id < dyn; id++)
            sm_shift(sap, &m, id, drift(&sc, m.box[id], &vel[id]));
        if (check)
            sm_update_and_check(sap, &m, &h);
        else
            ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
        for (int k = 0; check && k < cq__sap_pair_count(sap); k++)
            if (cq__sap_pair_at(sap, k).a >= dyn) /* statics have the top ids: a >= dyn is static-static */
                ck_abort_msg("static-static pair %d", cq__sap_pair_at(sap, k).a);
    }
    cq_sap_stats st = cq__sap_get_stats(sap);
    ck_assert(st.static_rebuilds == rebuilds);
    cq__sap_destroy(sap);
    sm_history_free(&h);
    free(vel);
    sm_model_free(&m);
    return st;
}

START_TEST(test_statics_stay_out)
{
    cq_sap_stats without = static_run(0, false), with = static_run(3000, true);
    ck_assert(with.swaps == without.swaps);
    ck_assert(with.swaps > 0);
    ck_assert(without.crossings == 0 && with.crossings > 0);
    ck_assert_int_eq((int)with.static_rebuilds, 1);
}
END_TEST

/* The same final world reached by different insertion orders, with detours
 * (wrong boxes first, removed and reinserted ids, filter flips, updates in
 * between), gives the same sorted list, byte for byte. */
static void build_shuffled(cq_sap *sap, const sm_model *final, uint64_t seed, bool detours)
{
    tu_rng rng = {seed};
    int n = final->cap;
    int *order = malloc((size_t)n * sizeof *order);
    ck_assert(order);
    for (int k = 0; k < n; k++)
        order[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)tu_uniform(&rng, 0, k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    scene sc = {5, 0.25, 0.75};
    for (int k = 0; k < n; k++) {
        int id = order[k];
        cq_aabb b = detours ? random_box(&rng, &sc) : final->box[id];
        uint32_t mask = detours ? ~final->mask[id] : final->mask[id];
        ck_assert_int_eq(cq__sap_insert(sap, id, &b, final->layer[id], mask, final->is_static[id]), CQ_OK);
        if (detours && k % 7 == 0)
            ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    }
    if (detours)
        for (int k = 0; k < n; k += 5) {
            ck_assert_int_eq(cq__sap_remove(sap, order[k]), CQ_OK);
            cq_aabb b = random_box(&rng, &sc);
            ck_assert_int_eq(cq__sap_insert(sap, order[k], &b, final->layer[order[k]], 0, final->is_static[order[k]]),
                             CQ_OK);
            if (k % 3 == 0)
                ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
        }
    for (int k = 0; k < n; k++) {
        int id = order[n - 1 - k];
        ck_assert_int_eq(cq__sap_move(sap, id, &final->box[id]), CQ_OK);
        ck_assert_int_eq(cq__sap_set_filter(sap, id, final->layer[id], final->mask[id]), CQ_OK);
    }
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    free(order);
}

START_TEST(test_insertion_order)
{
    tu_rng rng = {2024};
    scene sc = {5, 0.25, 0.75};
    sm_model m = sm_model_make(1500);
    for (int id = 0; id < m.cap; id++) {
        random_item(&rng, &sc, &m, id);
        m.alive[id] = true;
    }
    sm_keys want = {0};
    sm_oracle(&m, &want);
    ck_assert_int_gt(want.n, 1000);
    uint64_t *first = NULL;
    for (int run = 0; run < 4; run++) {
        cq_sap *sap;
        ck_assert_int_eq(cq__sap_create(run == 3 ? 16 : 1500, &sap), CQ_OK);
        build_shuffled(sap, &m, 100 + (uint64_t)run, run > 0);
        int n = cq__sap_pair_count(sap);
        ck_assert_int_eq(n, want.n);
        uint64_t *got = malloc((size_t)n * sizeof *got);
        ck_assert(got);
        for (int k = 0; k < n; k++)
            got[k] = sm_key(cq__sap_pair_at(sap, k).a, cq__sap_pair_at(sap, k).b);
        ck_assert(memcmp(got, want.k, (size_t)n * sizeof *got) == 0);
        if (first) {
            ck_assert(memcmp(got, first, (size_t)n * sizeof *got) == 0);
            free(got);
        } else {
            first = got;
        }
        cq__sap_destroy(sap);
    }
    free(first);
    sm_keys_free(&want);
    sm_model_free(&m);
}
END_TEST

/* ---- capacity, allocation, bad input ---- */

START_TEST(test_growth_counted)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(4, &sap), CQ_OK);
    ck_assert_int_eq(cq__sap_pair_capacity(sap), 64);
    cq_aabb b = box6(0, 0, 0, 1, 1, 1);
    for (int id = 0; id < 100; id++) /* 4 -> 8 -> 16 -> 32 -> 64 -> 128 */
        ck_assert_int_eq(cq__sap_insert(sap, id, &b, 1, 1, false), CQ_OK);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 5);
    ck_assert_int_eq(cq__sap_insert(sap, 1000, &b, 1, 1, false), CQ_OK); /* straight to 1001 */
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 6);
    ck_assert_int_eq(cq__sap_reserve(sap, 1001), CQ_OK); /* already held */
    ck_assert_int_eq(cq__sap_reserve(sap, (1 << 24) + 1), CQ_ERANGE);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 6);
    ck_assert_int_eq(cq__sap_reserve(sap, 3000), CQ_OK);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 7);
    ck_assert_int_eq(cq__sap_insert(sap, 2999, &b, 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_remove(sap, 2999), CQ_OK);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 7);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    /* 101 mutually overlapping boxes: 5050 pairs, pair room 64 -> 8192 in 7 doublings. */
    ck_assert_int_eq(cq__sap_pair_count(sap), 5050);
    ck_assert_int_eq(cq__sap_pair_capacity(sap), 8192);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 14);
    cq__sap_destroy(sap);
}
END_TEST

typedef struct alloc_probe {
    long calls, fail_from; /* calls from the fail_from-th on fail; 0: none */
} alloc_probe;

static void *probe_alloc(size_t size, void *ctx)
{
    alloc_probe *p = ctx;
    ++p->calls;
    return p->fail_from && p->calls >= p->fail_from ? NULL : malloc(size);
}

static void probe_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

static void snapshot(const cq_sap *sap, sm_keys *out)
{
    out->n = 0;
    for (int k = 0; k < cq__sap_pair_count(sap); k++) {
        cq_sap_pair p = cq__sap_pair_at(sap, k);
        sm_keys_push(out, sm_key(p.a, p.b), p.slot);
    }
}

START_TEST(test_alloc_failure)
{
    alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){probe_alloc, probe_free, &probe});
    size_t base = cq_alloc_bytes();
    cq_sap *sap;
    for (long k = 1; k <= 3; k++) { /* the struct, the items, the pairs */
        probe = (alloc_probe){0, k};
        ck_assert_int_eq(cq__sap_create(8, &sap), CQ_ENO_MEMORY);
        ck_assert(sap == NULL && cq_alloc_bytes() == base);
    }
    probe = (alloc_probe){0, 0};
    ck_assert_int_eq(cq__sap_create(8, &sap), CQ_OK);
    size_t made = cq_alloc_bytes();
    for (int id = 0; id < 8; id++) {
        cq_aabb b = box6(id, 0, 0, id + 1, 1, 1);
        ck_assert_int_eq(cq__sap_insert(sap, id, &b, 1, 1, false), CQ_OK);
    }
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    sm_keys before = {0}, after = {0};
    snapshot(sap, &before);
    ck_assert_int_eq(before.n, 7);

    /* Growing the items fails: nothing changes. */
    probe = (alloc_probe){0, 1};
    cq_aabb far = box6(0, 0, 0, 9, 1, 1);
    ck_assert_int_eq(cq__sap_reserve(sap, 100), CQ_ENO_MEMORY);
    ck_assert_int_eq(cq__sap_insert(sap, 8, &far, 1, 1, false), CQ_ENO_MEMORY);
    ck_assert_int_eq(cq_alloc_bytes(), made);
    ck_assert_int_eq(cq__sap_move(sap, 8, &far), CQ_ERANGE);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 0);
    snapshot(sap, &after);
    ck_assert(after.n == before.n && memcmp(after.k, before.k, (size_t)before.n * sizeof *before.k) == 0);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    snapshot(sap, &after);
    ck_assert(after.n == before.n && memcmp(after.slot, before.slot, (size_t)before.n * sizeof(int)) == 0);

    /* Growing the pairs fails inside update: CQ_ENO_MEMORY, sort done, and
     * the next update that can allocate restores the full set. */
    for (int id = 0; id < 8; id++) {
        cq_aabb b = box6(0, 0, 0, 1 + id * 0.01, 1, 1); /* all 8 on one spot: 28 pairs */
        ck_assert_int_eq(cq__sap_move(sap, id, &b), CQ_OK);
    }
    for (int id = 8; id < 40; id++) { /* 40 overlapping: 780 pairs > 64 */
        cq_aabb b = box6(0.5, 0.5, 0.5, 2, 2, 2);
        probe = (alloc_probe){0, 0};
        ck_assert_int_eq(cq__sap_insert(sap, id, &b, 1, 1, false), CQ_OK);
    }
    made = cq_alloc_bytes();
    probe = (alloc_probe){0, 1};
    ck_assert_int_eq(cq__sap_update(sap), CQ_ENO_MEMORY);
    ck_assert_int_eq(cq_alloc_bytes(), made);
    ck_assert_int_eq(cq__sap_pair_count(sap), 64); /* as many as the preallocated room holds */
    probe = (alloc_probe){0, 0};
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    ck_assert_int_eq(cq__sap_pair_count(sap), 780);
    for (int a = 0, k = 0; a < 40; a++)
        for (int b = a + 1; b < 40; b++, k++) {
            cq_sap_pair p = cq__sap_pair_at(sap, k);
            ck_assert(p.a == a && p.b == b);
        }
    cq__sap_destroy(sap);
    ck_assert_int_eq(cq_alloc_bytes(), base);
    cq_set_allocator(NULL);
    sm_keys_free(&before);
    sm_keys_free(&after);
}
END_TEST

/* Once storage suffices, frames of motion and reading the pairs allocate nothing. */
START_TEST(test_no_alloc_per_frame)
{
    alloc_probe probe = {0, 0};
    cq_set_allocator(&(cq_allocator){probe_alloc, probe_free, &probe});
    tu_rng rng = {31};
    scene sc = {12, 0, 0.5};
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(1000, &sap), CQ_OK);
    cq_aabb *boxes = malloc(1000 * sizeof *boxes);
    ck_assert(boxes);
    for (int id = 0; id < 1000; id++) {
        boxes[id] = random_box(&rng, &sc);
        ck_assert_int_eq(cq__sap_insert(sap, id, &boxes[id], 1, 1, id % 10 == 0), CQ_OK);
    }
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    long calls = probe.calls;
    long seen = 0;
    for (int frame = 0; frame < 200; frame++) {
        for (int id = 1; id < 1000; id++)
            if (id % 10) {
                boxes[id] = translated(boxes[id], cq_v3(0.05 * sin(frame + id), 0.04, -0.03));
                if (cq__sap_move(sap, id, &boxes[id]) != CQ_OK)
                    ck_abort_msg("move %d failed", id);
            }
        ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
        for (int k = 0; k < cq__sap_pair_count(sap); k++)
            seen += cq__sap_pair_at(sap, k).b;
    }
    ck_assert(seen > 0);
    ck_assert_int_eq(probe.calls, calls);
    ck_assert_int_eq((int)cq__sap_get_stats(sap).grows, 0);
    cq__sap_destroy(sap);
    free(boxes);
    cq_set_allocator(NULL);
}
END_TEST

START_TEST(test_bad_input)
{
    cq_sap *sap;
    ck_assert_int_eq(cq__sap_create(0, &sap), CQ_ERANGE);
    ck_assert(sap == NULL);
    ck_assert_int_eq(cq__sap_create(4, &sap), CQ_OK);
    cq_aabb good = box6(0, 0, 0, 1, 1, 1), nan_box = box6(0, NAN, 0, 1, 1, 1), inverted = box6(0, 0, 2, 1, 1, 1);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &nan_box, 1, 1, false), CQ_ENOT_FINITE);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &inverted, 1, 1, false), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_insert(sap, -1, &good, 1, 1, false), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &good, 1, 1, false), CQ_OK);
    ck_assert_int_eq(cq__sap_insert(sap, 0, &good, 1, 1, false), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_move(sap, 0, &nan_box), CQ_ENOT_FINITE);
    ck_assert_int_eq(cq__sap_move(sap, 0, &inverted), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_move(sap, 1, &good), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_move(sap, 99, &good), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_remove(sap, 1), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_set_filter(sap, -3, 1, 1), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_remove(sap, 0), CQ_OK);
    ck_assert_int_eq(cq__sap_remove(sap, 0), CQ_ERANGE);
    ck_assert_int_eq(cq__sap_update(sap), CQ_OK);
    ck_assert_int_eq(cq__sap_pair_count(sap), 0);
    cq__sap_destroy(sap);
    cq__sap_destroy(NULL);
}
END_TEST

Suite *sap_suite(void)
{
    Suite *s = suite_create("sap");
    TCase *fixed = tcase_create("fixed");
    tcase_add_test(fixed, test_touching_identical_zero);
    tcase_add_test(fixed, test_pair_continues);
    tcase_add_test(fixed, test_filter);
    tcase_add_test(fixed, test_planes);
    tcase_add_test(fixed, test_growth_counted);
    tcase_add_test(fixed, test_alloc_failure);
    tcase_add_test(fixed, test_bad_input);
    suite_add_tcase(s, fixed);
    TCase *random = tcase_create("random");
    tcase_set_timeout(random, 300);
    tcase_add_test(random, test_oracle_agrees);
    tcase_add_test(random, test_random_grid);
    tcase_add_test(random, test_random_large);
    tcase_add_test(random, test_statics_stay_out);
    tcase_add_test(random, test_insertion_order);
    tcase_add_test(random, test_no_alloc_per_frame);
    suite_add_tcase(s, random);
    return s;
}
