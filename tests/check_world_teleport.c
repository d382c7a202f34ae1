/* Worlds whose shapes teleport: batches through cq_world_apply that move
 * all, half or 1 % of the shapes to random places, alternating with rounds
 * of small steps. Oracles: the brute-force pairs of tests/world_oracle.c
 * (cq_world_pairs must equal them) and brute-force cq_collide over those
 * pairs with the pair cache emulated here, as tests/check_world_contacts.c
 * does: a pair's previous normal and box-box axis are kept while the pair
 * stays in the broadphase from one answer to the next, and dropped when it
 * leaves (a pair that ends and comes back starts fresh). cq_world_contacts
 * must give the same contacts byte for byte, so a pair that persists
 * through a teleport must keep its cached state (its slot) and one that
 * came back must not. Shapes teleport in clusters (a rigid jump of a group
 * of touching boxes), so that many pairs persist through a teleport; the
 * boxes turn a little every frame, so that the cached axis decides some
 * answers (counted: the test fails if the cache never mattered). The
 * broadphase's counters show the teleports took its bulk path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sap.h"
#include "world_internal.h"
#include "world_oracle.h"

Suite *world_teleport_suite(void);

#define GROUP 3 /* boxes per cluster */

/* The emulated pair cache: last answer's broadphase pairs (by the two
 * items' numbers, sorted) and each one's cache. */
typedef struct cache_map {
    uint64_t *key;
    cq_pair_cache *cache;
    int n, cap;
} cache_map;

typedef struct scene {
    int groups, n;              /* n = groups * GROUP shapes, named s0000.. */
    char (*id)[16];
    cq_vec3 *centre;            /* per group */
    cq_vec3 *offset;            /* per shape, from its group's centre */
    cq_mat3 *turn;              /* per shape */
    double side, skin;
    cache_map prev;
    int mattered, persisted;    /* answers the cache changed; pairs that carried a cached axis */
} scene;

static uint64_t key_of(int a, int b) { return (uint64_t)a << 32 | (uint32_t)b; }

static int find_key(const cache_map *m, uint64_t k)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->key[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->key[lo] == k ? lo : -1;
}

static void map_push(cache_map *m, uint64_t k, cq_pair_cache c)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->key = realloc(m->key, sizeof *m->key * (size_t)m->cap);
        m->cache = realloc(m->cache, sizeof *m->cache * (size_t)m->cap);
        ck_assert(m->key && m->cache);
    }
    m->key[m->n] = k;
    m->cache[m->n++] = c;
}

static cq_xform pose_of(const scene *sc, int i)
{
    return (cq_xform){cq_add(sc->centre[i / GROUP], sc->offset[i]), sc->turn[i]};
}

static cq_world_op place_op(const scene *sc, int i)
{
    return wo_move(sc->id[i], pose_of(sc, i), cq_v3(0, 0, 0));
}

/* Clusters of GROUP unit boxes stacked along z with a slight overlap,
 * tilted a little (so two face axes are close and hysteresis decides). */
static cq_world *make_scene(scene *sc, tu_rng *rng, int groups)
{
    memset(sc, 0, sizeof *sc);
    sc->groups = groups;
    sc->n = groups * GROUP;
    sc->id = malloc(sizeof *sc->id * (size_t)sc->n);
    sc->centre = malloc(sizeof *sc->centre * (size_t)groups);
    sc->offset = malloc(sizeof *sc->offset * (size_t)sc->n);
    sc->turn = malloc(sizeof *sc->turn * (size_t)sc->n);
    ck_assert(sc->id && sc->centre && sc->offset && sc->turn);
    sc->side = 3.0 * cbrt(groups);
    sc->skin = 0.05;
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = sc->skin, .capacity = sc->n}, &w), CQ_OK);
    cq_world_op *ops = malloc(sizeof *ops * (size_t)sc->n);
    ck_assert(ops != NULL);
    for (int g = 0; g < groups; g++)
        sc->centre[g] = cq_v3(tu_uniform(rng, 0, sc->side), tu_uniform(rng, 0, sc->side), tu_uniform(rng, 0, sc->side));
    for (int i = 0; i < sc->n; i++) {
        snprintf(sc->id[i], sizeof sc->id[i], "s%04d", i);
        sc->offset[i] = cq_v3(tu_uniform(rng, -0.1, 0.1), tu_uniform(rng, -0.1, 0.1), 0.95 * (i % GROUP));
        sc->turn[i] = tu_axis_angle(cq_v3(1, 0, 0), tu_uniform(rng, -0.05, 0.05));
        ops[i] = wo_upsert(sc->id[i], wo_box(0.5, 0.5, 0.5), pose_of(sc, i), cq_v3(0, 0, 0), 1, 1);
    }
    wo_apply(w, ops, sc->n);
    free(ops);
    return w;
}

static void free_scene(scene *sc)
{
    free(sc->id);
    free(sc->centre);
    free(sc->offset);
    free(sc->turn);
    free(sc->prev.key);
    free(sc->prev.cache);
}

/* cq_world_pairs equals the brute-force pairs (both sorted by ids). */
static void check_pairs(const cq_world *w, const wo_item *items, int n, const int (*want)[2], int nw)
{
    cq_world_pair *got = malloc(sizeof *got * (size_t)(nw + 1));
    ck_assert(got != NULL);
    int count = -1;
    ck_assert_int_eq(cq_world_pairs(w, got, nw + 1, &count), CQ_OK);
    ck_assert_int_eq(count, nw);
    for (int k = 0; k < nw; k++)
        if (wo_find(items, n, got[k].a) != want[k][0] || wo_find(items, n, got[k].b) != want[k][1])
            ck_abort_msg("pair %d differs from the brute force", k);
    free(got);
}

/* The expected contacts with the cache carried, checked against the
 * world's answer; the map moves on to this answer's pairs. */
static void check_contacts(cq_world *w, scene *sc)
{
    wo_item *items;
    int n = wo_items(w, &items);
    ck_assert_int_eq(n, sc->n); /* ids s0000.. sort as their numbers */
    int (*pairs)[2];
    int np = wo_brute_pairs(items, n, sc->skin, &pairs);
    check_pairs(w, items, n, (const int (*)[2])pairs, np);
    cq_world_contact *got = malloc(sizeof *got * (size_t)(np + 1));
    ck_assert(got != NULL);
    cq_world_contacts_out out = {.pairs = got, .pair_capacity = np + 1};
    ck_assert_int_eq(cq_world_contacts(w, NULL, &out), CQ_OK);
    cache_map now = {0};
    int touching = 0;
    for (int k = 0; k < np; k++) {
        const cq_world_body *a = &items[pairs[k][0]].body, *b = &items[pairs[k][1]].body;
        int at = find_key(&sc->prev, key_of(pairs[k][0], pairs[k][1]));
        cq_pair_cache prev = at >= 0 ? sc->prev.cache[at] : (cq_pair_cache){0};
        sc->persisted += at >= 0 && prev.has_axis;
        cq_pair_query q = {.a = &a->shape, .xa = a->pose, .b = &b->shape, .xb = b->pose, .skin = sc->skin,
                           .cache = prev.has_normal ? &prev : NULL, .skip_distance = true};
        cq_contact c, bare;
        memset(&c, 0, sizeof c);
        ck_assert_int_eq(cq_collide(&q, &c), CQ_OK);
        q.cache = NULL;
        ck_assert_int_eq(cq_collide(&q, &bare), CQ_OK);
        sc->mattered += c.overlap && c.normal_axis != bare.normal_axis;
        map_push(&now, key_of(pairs[k][0], pairs[k][1]), c.has_normal ? cq_pair_cache_of(&c) : prev);
        if (!c.overlap)
            continue;
        ck_assert_int_lt(touching, out.pair_count);
        const cq_world_contact *g = &got[touching++];
        ck_assert(wo_find(items, n, g->a) == pairs[k][0] && wo_find(items, n, g->b) == pairs[k][1]);
        if (g->contact.normal_axis != c.normal_axis || memcmp(&g->contact.normal, &c.normal, sizeof c.normal) ||
            g->contact.depth != c.depth || g->contact.point_count != c.point_count)
            ck_abort_msg("pair (%s, %s): axis %d, want %d (cache-free %d)", items[pairs[k][0]].id,
                         items[pairs[k][1]].id, g->contact.normal_axis, c.normal_axis, bare.normal_axis);
    }
    ck_assert_int_eq(touching, out.pair_count);
    free(sc->prev.key);
    free(sc->prev.cache);
    sc->prev = now;
    free(got);
    free(pairs);
    free(items);
}

/* Turns every box a little about x (the stack's face axes trade depth). */
static void jitter(scene *sc, tu_rng *rng)
{
    for (int i = 0; i < sc->n; i++)
    {
        cq_mat3 step = tu_axis_angle(cq_v3(1, 0, 0), tu_uniform(rng, -0.01, 0.01));
        sc->turn[i] = cq_mul_mm(&step, &sc->turn[i]);
    }
}

/* Moves a share of the clusters to random places, or when share is 0
 * every cluster by a small step and every box turning a little; one batch
 * of a move per shape (an unmoved shape's move changes nothing). */
static void frame(cq_world *w, scene *sc, tu_rng *rng, double share)
{
    int jumps = (int)ceil(share * sc->groups), first = (int)tu_uniform(rng, 0, sc->groups);
    for (int g = 0; g < sc->groups; g++) {
        bool jump = (g - first + sc->groups) % sc->groups < jumps; /* exactly the share */
        cq_vec3 d = cq_v3(tu_uniform(rng, -0.02, 0.02), tu_uniform(rng, -0.02, 0.02), tu_uniform(rng, -0.02, 0.02));
        if (jump)
            sc->centre[g] = cq_v3(tu_uniform(rng, 0, sc->side), tu_uniform(rng, 0, sc->side), tu_uniform(rng, 0, sc->side));
        else if (share == 0)
            sc->centre[g] = cq_add(sc->centre[g], d);
    }
    if (share == 0)
        jitter(sc, rng);
    cq_world_op *ops = malloc(sizeof *ops * (size_t)sc->n);
    ck_assert(ops != NULL);
    for (int i = 0; i < sc->n; i++)
        ops[i] = place_op(sc, i);
    wo_apply(w, ops, sc->n);
    free(ops);
}

static uint64_t bulk_moves(const cq_world *w) { return cq__sap_get_stats(w->sap).bulk_moves; }

/* Teleports of the given share alternate with frames of small steps. */
static void run_teleports(double share, uint64_t seed)
{
    tu_rng rng = {seed};
    scene sc;
    cq_world *w = make_scene(&sc, &rng, 400);
    check_contacts(w, &sc);
    for (int round = 0; round < 4; round++) {
        for (int step = 0; step < 3; step++) {
            uint64_t bulk = bulk_moves(w);
            frame(w, &sc, &rng, 0);
            check_contacts(w, &sc);
            ck_assert_uint_eq(bulk_moves(w), bulk); /* small steps: the incremental path */
        }
        uint64_t bulk = bulk_moves(w);
        int persisted = sc.persisted;
        frame(w, &sc, &rng, share);
        check_contacts(w, &sc);
        ck_assert_uint_eq(bulk_moves(w), bulk + 1);
        ck_assert_int_gt(sc.persisted, persisted); /* some pairs carried their axis through the teleport */
    }
    ck_assert_int_gt(sc.mattered, 0);
    cq_world_destroy(w);
    free_scene(&sc);
}

START_TEST(test_teleport_all) { run_teleports(1.0, 0x7e1e11); }
END_TEST

START_TEST(test_teleport_half) { run_teleports(0.5, 0x7e1e12); }
END_TEST

START_TEST(test_teleport_one_percent) { run_teleports(0.01, 0x7e1e13); }
END_TEST

/* A box leaves its stack by teleport and comes back the next frame: the
 * pair ended, so it starts fresh (the oracle drops its cache), while its
 * neighbours' pairs carried through both teleports keep theirs. */
START_TEST(test_leave_and_return)
{
    tu_rng rng = {0x7e1e14};
    scene sc;
    cq_world *w = make_scene(&sc, &rng, 400);
    check_contacts(w, &sc);
    cq_vec3 *home = malloc(sizeof *home * (size_t)sc.n);
    ck_assert(home != NULL);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < sc.n; i++) /* the top box of every stack jumps 1,000 up */
            if (i % GROUP == GROUP - 1) {
                home[i] = sc.offset[i];
                sc.offset[i] = cq_add(sc.offset[i], cq_v3(0, 0, 1000 + i));
            }
        frame(w, &sc, &rng, 0.3);
        check_contacts(w, &sc);
        for (int i = 0; i < sc.n; i++)
            if (i % GROUP == GROUP - 1)
                sc.offset[i] = home[i];
        frame(w, &sc, &rng, 0);
        check_contacts(w, &sc);
    }
    ck_assert_int_gt(sc.mattered, 0);
    free(home);
    cq_world_destroy(w);
    free_scene(&sc);
}
END_TEST

Suite *world_teleport_suite(void)
{
    Suite *s = suite_create("world_teleport");
    TCase *tc = tcase_create("teleport");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_teleport_all);
    tcase_add_test(tc, test_teleport_half);
    tcase_add_test(tc, test_teleport_one_percent);
    tcase_add_test(tc, test_leave_and_return);
    suite_add_tcase(s, tc);
    return s;
}
