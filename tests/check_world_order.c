/* A large world changed one shape at a time, as a server's PUT and DELETE
 * change it: the id order takes new ids as pending slots and removed ones
 * as holes, settled later (world_commit.c), and the broadphase finds a new
 * shape's pairs through its grid (sap_grid.c). After each change the
 * listing must be the model's ids sorted by strcmp, and every few changes
 * the pairs must equal brute force (world_oracle.c) in id order, an
 * overlap query (the tree stale, so every member is scanned, then fresh)
 * must equal an exact test of every shape, sorted by id, and the contacts
 * must come sorted by id, a before b. Ids share long prefixes and differ
 * in length, so comparisons go past the first bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/collision.h"
#include "cq/status.h"
#include "cq/world.h"
#include "world_oracle.h"

Suite *world_order_suite(void);

enum { POOL = 5200, START = 3000 };

typedef struct model {
    char id[POOL][24];
    bool alive[POOL];
    cq_vec3 at[POOL];
    double r[POOL];
} model;


static void make_ids(model *m, tu_rng *rng)
{
    static const char *stems[] = {"player_0000", "p", "npc-", "crate.big.", "z"};
    for (int k = 0; k < POOL; k++)
        snprintf(m->id[k], sizeof m->id[k], "%s%u", stems[k % 5], (unsigned)(tu_uniform(rng, 0, 1) * 1e6) * 8 + k % 8);
}

static cq_world_op put_op(model *m, tu_rng *rng, int k, double side)
{
    m->at[k] = cq_v3(tu_uniform(rng, 0, side), tu_uniform(rng, 0, side), tu_uniform(rng, 0, side));
    m->r[k] = tu_uniform(rng, 0.2, 0.6);
    m->alive[k] = true;
    return wo_upsert(m->id[k], wo_sphere(m->r[k]), wo_at(m->at[k].x, m->at[k].y, m->at[k].z), cq_v3(0, 0, 0), 1, 1);
}

static void check_list(const cq_world *w, const model *m)
{
    wo_check_listing(w, m->id[0], sizeof m->id[0], m->alive, POOL);
}

/* A sphere's overlaps against an exact test of every shape, sorted by id. */
static void check_overlap(const cq_world *w, const model *m, cq_vec3 c, double r)
{
    int want[POOL], nw = 0;
    for (int k = 0; k < POOL; k++)
        if (m->alive[k] && cq_len(cq_sub(m->at[k], c)) <= r + m->r[k])
            want[nw++] = k;
    cq_shape s = wo_sphere(r);
    cq_world_shape_query q = {.shape = &s, .pose = wo_at(c.x, c.y, c.z), .mask = ~0u};
    cq_world_handle got[POOL];
    int ng = -1;
    ck_assert_int_eq(cq_world_overlap(w, &q, got, POOL, &ng), CQ_OK);
    ck_assert_int_eq(ng, nw);
    for (int i = 1; i < ng; i++)
        ck_assert(strcmp(cq_world_id(w, got[i - 1]), cq_world_id(w, got[i])) < 0);
    for (int i = 0; i < ng; i++) {
        bool found = false;
        for (int j = 0; j < nw && !found; j++)
            found = strcmp(cq_world_id(w, got[i]), m->id[want[j]]) == 0;
        ck_assert(found);
    }
}

/* The contacts sorted by (a, b) by id with a before b. */
static void check_contacts(cq_world *w)
{
    static cq_world_contact pairs[8 * POOL];
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = 8 * POOL};
    ck_assert_int_eq(cq_world_contacts(w, NULL, &out), CQ_OK);
    for (int i = 0; i < out.pair_count; i++) {
        const char *a = cq_world_id(w, pairs[i].a), *b = cq_world_id(w, pairs[i].b);
        ck_assert(strcmp(a, b) < 0);
        if (i > 0) {
            int c = strcmp(cq_world_id(w, pairs[i - 1].a), a);
            ck_assert(c < 0 || (c == 0 && strcmp(cq_world_id(w, pairs[i - 1].b), b) < 0));
        }
    }
}

START_TEST(test_single_changes)
{
    static model m;
    memset(&m, 0, sizeof m);
    tu_rng rng = {0x0de7};
    make_ids(&m, &rng);
    double side = 2.5 * cbrt(START), skin = 0.1;
    cq_world *w = NULL;
    ck_assert_int_eq(cq_world_create(&(cq_world_settings){.skin = skin, .capacity = POOL}, &w), CQ_OK);
    static cq_world_op ops[START];
    for (int k = 0; k < START; k++)
        ops[k] = put_op(&m, &rng, k, side);
    wo_apply(w, ops, START);
    for (int round = 0; round < 1500; round++) {
        int k = (int)tu_uniform(&rng, 0, POOL);
        cq_world_op op = m.alive[k] && round % 3 ? wo_remove(m.id[k]) : put_op(&m, &rng, k, side);
        if (op.kind == CQ_WORLD_REMOVE)
            m.alive[k] = false;
        wo_apply(w, &op, 1);
        if (round % 10 == 0)
            check_list(w, &m);
        if (round % 50 == 0) {
            wo_check_pairs(w, skin);
            cq_vec3 c = cq_v3(tu_uniform(&rng, 0, side), tu_uniform(&rng, 0, side), tu_uniform(&rng, 0, side));
            check_overlap(w, &m, c, 2);
            ck_assert_int_eq(cq_world_refresh(w), CQ_OK);
            check_overlap(w, &m, c, 2);
        }
        if (round % 250 == 0)
            check_contacts(w);
    }
    check_list(w, &m);
    wo_check_pairs(w, skin);
    cq_world_destroy(w);
}
END_TEST

Suite *world_order_suite(void)
{
    Suite *s = suite_create("world_order");
    TCase *tc = tcase_create("order");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_single_changes);
    suite_add_tcase(s, tc);
    return s;
}
