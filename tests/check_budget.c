/* The server-wide shape slot budget (server/state/budget.c) and its use by the
 * registry. Oracles: counts kept by each thread of its own takes, summed
 * by brute force; slot counts worked out by hand from the capacities the
 * test asks for (the default 1024, exact capacities, doubling growth);
 * the registry's slots against the sum of every listed world's storage. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "state/budget.h"
#include "state/registry.h"
#include "world_oracle.h"

Suite *budget_suite(void);

enum { THREADS = 8, ROUNDS = 20000 };

typedef struct racer {
    cqd_budget *b;
    atomic_bool *go;
    long held;     /* what this thread took and still holds: its own count */
    long granted;  /* takes of one slot that succeeded */
    unsigned seed;
} racer;

/* Runs fn on THREADS threads over rs (each racer on budget b, seeded from
 * seed), lets them all go at once and waits for them. */
static void race(racer rs[THREADS], cqd_budget *b, void *(*fn)(void *), unsigned seed)
{
    atomic_bool go = false;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        rs[i] = (racer){.b = b, .go = &go, .seed = seed + (unsigned)i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, &rs[i]), 0);
    }
    atomic_store(&go, true);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

/* Takes one slot at a time until refused: the successes are counted here. */
static void *grab_all(void *arg)
{
    racer *r = arg;
    while (!atomic_load(r->go))
        ;
    while (cqd_budget_take(r->b, 1))
        r->granted++;
    return NULL;
}

START_TEST(budget_racing_takes_fill_it_exactly)
{
    cqd_budget b;
    cqd_budget_init(&b);
    cqd_budget_limit(&b, 100003);
    racer rs[THREADS];
    race(rs, &b, grab_all, 0);
    long sum = 0;
    for (int i = 0; i < THREADS; i++)
        sum += rs[i].granted;
    ck_assert_int_eq(sum, 100003);
    ck_assert_int_eq(cqd_budget_used(&b), 100003);
    ck_assert(!cqd_budget_take(&b, 1));
    ck_assert(cqd_budget_take(&b, 0));
}
END_TEST

/* Random takes and gives of up to 64 slots, each thread giving back only
 * what it holds. */
static void *churn(void *arg)
{
    racer *r = arg;
    while (!atomic_load(r->go))
        ;
    for (int k = 0; k < ROUNDS; k++) {
        long n = rand_r(&r->seed) % 64;
        if (rand_r(&r->seed) % 2 && cqd_budget_take(r->b, n)) {
            r->held += n;
        } else if (r->held >= n) {
            cqd_budget_give(r->b, n);
            r->held -= n;
        }
    }
    return NULL;
}

typedef struct watch {
    cqd_budget *b;
    atomic_bool *stop;
    long most; /* the largest count seen */
} watch;

static void *watcher(void *arg)
{
    watch *w = arg;
    while (!atomic_load(w->stop)) {
        long u = cqd_budget_used(w->b);
        if (u > w->most)
            w->most = u;
    }
    return NULL;
}

START_TEST(budget_churn_matches_the_threads_counts)
{
    cqd_budget b;
    cqd_budget_init(&b);
    cqd_budget_limit(&b, 1000);
    atomic_bool stop = false;
    racer rs[THREADS];
    pthread_t wt;
    watch w = {&b, &stop, 0};
    ck_assert_int_eq(pthread_create(&wt, NULL, watcher, &w), 0);
    race(rs, &b, churn, 17u);
    long sum = 0;
    for (int i = 0; i < THREADS; i++)
        sum += rs[i].held;
    atomic_store(&stop, true);
    pthread_join(wt, NULL);
    ck_assert_int_eq(cqd_budget_used(&b), sum);
    ck_assert_int_le(w.most, 1000); /* never above the cap, at any moment seen */
}
END_TEST

START_TEST(budget_force_passes_the_cap_and_blocks_takes)
{
    cqd_budget b;
    cqd_budget_init(&b);
    cqd_budget_force(&b, 500); /* recovery: no cap yet */
    ck_assert(cqd_budget_take(&b, 1000));
    cqd_budget_limit(&b, 1000);
    ck_assert_int_eq(cqd_budget_used(&b), 1500);
    ck_assert(!cqd_budget_take(&b, 1));
    cqd_budget_give(&b, 600);
    ck_assert(cqd_budget_take(&b, 100));
    ck_assert(!cqd_budget_take(&b, 1));
    ck_assert_int_eq(cqd_budget_used(&b), 1000);
}
END_TEST

static int create(cqd_registry *r, const char *name, int capacity)
{
    cq_world_settings s = {.capacity = capacity};
    int bad;
    return cqd_registry_put(r, name, &(cqd_world_put){.settings = &s}, &bad, NULL, NULL);
}

/* Sum of every listed world's storage, read through the core. */
static long storage_sum(cqd_registry *r)
{
    cqd_world **ws;
    int n;
    ck_assert_int_eq(cqd_registry_refs(r, &ws, &n), 0);
    long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += cq_world_get_stats(ws[i]->world).capacity;
        cqd_world_unref(r, ws[i]);
    }
    free(ws);
    return sum;
}

START_TEST(registry_charges_creation_and_delete_returns_it)
{
    cqd_registry *r = cqd_registry_create();
    cqd_registry_limit_slots(r, 3000);
    ck_assert_int_eq(create(r, "a", 0), 201); /* the default: 1024 */
    ck_assert_int_eq(create(r, "b", 1024), 201);
    ck_assert_int_eq(cqd_registry_slots(r), 2048);
    ck_assert_int_eq(create(r, "c", 0), CQ_EBUDGET);
    ck_assert_int_eq(create(r, "c", 953), CQ_EBUDGET); /* 2048 + 953 = 3001 */
    ck_assert_int_eq(cqd_registry_slots(r), 2048);
    ck_assert_int_eq(create(r, "c", 952), 201); /* exactly full */
    ck_assert_int_eq(cqd_registry_slots(r), 3000);
    ck_assert_int_eq(create(r, "d", 1), CQ_EBUDGET);
    ck_assert_ptr_null(cqd_world_acquire(r, "d", false));
    /* a capacity raised past the budget: refused, the storage as it was */
    ck_assert_int_eq(create(r, "a", 2048), CQ_EBUDGET);
    ck_assert_int_eq(storage_sum(r), 3000);
    ck_assert_int_eq(cqd_registry_delete(r, "b"), CQ_OK);
    ck_assert_int_eq(cqd_registry_slots(r), 1976);
    ck_assert_int_eq(create(r, "a", 2048), 200); /* 1024 -> 2048: 3000 */
    ck_assert_int_eq(cqd_registry_slots(r), 3000);
    ck_assert_int_eq(storage_sum(r), 3000);
    cqd_registry_destroy(r);
}
END_TEST

static char ids[64][8];

/* n sphere upserts "s0".. "s<n-1>". */
static void spheres(cq_world_op *ops, int n)
{
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "s%d", i);
        ops[i] = wo_upsert(ids[i], wo_sphere(0.1), wo_at(i, 0, 0), cq_v3(0, 0, 0), 1, 1);
    }
}

static int apply(cqd_registry *r, const char *name, const cq_world_op *ops, int n, int *shapes)
{
    cqd_world *w = cqd_world_acquire(r, name, true);
    int bad;
    int rc = cq_world_apply(w->world, ops, n, &bad);
    *shapes = cq_world_count(w->world);
    cqd_world_release(r, w);
    return rc;
}

START_TEST(registry_refuses_growth_past_the_budget)
{
    cqd_registry *r = cqd_registry_create();
    cqd_registry_limit_slots(r, 31);
    ck_assert_int_eq(create(r, "w", 16), 201);
    cq_world_op ops[64];
    spheres(ops, 64);
    int shapes;
    /* 17 shapes: a doubling to 32 does not fit, the exact 17 does */
    ck_assert_int_eq(apply(r, "w", ops, 17, &shapes), CQ_OK);
    ck_assert_int_eq(shapes, 17);
    ck_assert_int_eq(cqd_registry_slots(r), 17);
    ck_assert_int_eq(apply(r, "w", ops, 35, &shapes), CQ_EBUDGET);
    ck_assert_int_eq(shapes, 17); /* nothing changed */
    ck_assert_int_eq(cqd_registry_slots(r), 17);
    ck_assert_int_eq(storage_sum(r), 17);
    ck_assert_int_eq(apply(r, "w", ops, 32, &shapes), CQ_EBUDGET);
    ck_assert_int_eq(apply(r, "w", ops, 31, &shapes), CQ_OK); /* 31: all of it */
    ck_assert_int_eq(shapes, 31);
    ck_assert_int_eq(cqd_registry_slots(r), 31);
    /* an import charges its new world while the old one still stands */
    cq_world_settings s = {.capacity = 1};
    int bad;
    cqd_world_put imp = {.settings = &s, .import = true, .ops = ops, .count = 1};
    ck_assert_int_eq(cqd_registry_put(r, "w", &imp, &bad, NULL, NULL), CQ_EBUDGET);
    ck_assert_int_eq(cqd_registry_delete(r, "w"), CQ_OK);
    ck_assert_int_eq(cqd_registry_slots(r), 0);
    /* 1 slot, then 30 at once: a doubling to 32 does not fit, 30 does */
    imp.count = 30;
    ck_assert_int_eq(cqd_registry_put(r, "w", &imp, &bad, NULL, NULL), 201);
    ck_assert_int_eq(cqd_registry_slots(r), 30);
    ck_assert_int_eq(storage_sum(r), 30);
    cqd_registry_destroy(r);
}
END_TEST

START_TEST(registry_keeps_worlds_charged_before_the_cap)
{
    cqd_registry *r = cqd_registry_create(); /* as recovery finds it: no cap */
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", i);
        ck_assert_int_eq(create(r, name, 1000), 201);
    }
    cqd_registry_limit_slots(r, 2500);
    ck_assert_int_eq(cqd_registry_slots(r), 5000);
    ck_assert_int_eq(storage_sum(r), 5000);
    ck_assert_int_eq(create(r, "new", 1), CQ_EBUDGET);
    ck_assert_int_eq(create(r, "r0", 1000), 200); /* no growth: still allowed */
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", i);
        ck_assert_int_eq(cqd_registry_delete(r, name), CQ_OK);
    }
    ck_assert_int_eq(create(r, "new", 500), 201);
    ck_assert_int_eq(cqd_registry_slots(r), 2500);
    cqd_registry_destroy(r);
}
END_TEST

typedef struct churner {
    cqd_registry *r;
    int index;
    unsigned seed;
    int refused; /* creations the budget refused */
} churner;

/* Creates, raises and deletes worlds of its own names at random. */
static void *registry_churn(void *arg)
{
    churner *c = arg;
    for (int k = 0; k < 400; k++) {
        char name[16];
        snprintf(name, sizeof name, "t%d_%u", c->index, rand_r(&c->seed) % 4);
        if (rand_r(&c->seed) % 3 == 0) {
            cqd_registry_delete(c->r, name);
            continue;
        }
        int rc = create(c->r, name, 1 + (int)(rand_r(&c->seed) % 300));
        ck_assert(rc == 201 || rc == 200 || rc == CQ_EBUDGET);
        c->refused += rc == CQ_EBUDGET;
    }
    return NULL;
}

START_TEST(registry_racing_worlds_stay_within_the_budget)
{
    cqd_registry *r = cqd_registry_create();
    cqd_registry_limit_slots(r, 1500);
    churner cs[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        cs[i] = (churner){r, i, 7u * (unsigned)i + 1, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, registry_churn, &cs[i]), 0);
    }
    int refused = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        refused += cs[i].refused;
    }
    ck_assert_int_gt(refused, 0); /* 16 worlds of up to 300 slots: the budget was reached */
    ck_assert_int_eq(cqd_registry_slots(r), storage_sum(r));
    ck_assert_int_le(cqd_registry_slots(r), 1500);
    cqd_registry_destroy(r);
}
END_TEST

Suite *budget_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("budget");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, budget_racing_takes_fill_it_exactly);
    tcase_add_test(tc, budget_churn_matches_the_threads_counts);
    tcase_add_test(tc, budget_force_passes_the_cap_and_blocks_takes);
    tcase_add_test(tc, registry_charges_creation_and_delete_returns_it);
    tcase_add_test(tc, registry_refuses_growth_past_the_budget);
    tcase_add_test(tc, registry_keeps_worlds_charged_before_the_cap);
    tcase_add_test(tc, registry_racing_worlds_stay_within_the_budget);
    suite_add_tcase(s, tc);
    return s;
}
