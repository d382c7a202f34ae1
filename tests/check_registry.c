/* The server's world registry (server/state/registry.c). Oracles: the settings
 * and shapes the test put in, read back through the core's accessors; the
 * names in sorted order written out by hand; a world held by one thread
 * must stay usable while another deletes it (AddressSanitizer turns a
 * use-after-free into a failure), and a concurrent mix of every operation
 * must keep each name bound to its own entry. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state/alloc.h"
#include "state/registry.h"
#include "world_oracle.h"

Suite *registry_suite(void);

static int put(cqd_registry *r, const char *name, double skin)
{
    cq_world_settings s = {.skin = skin};
    int bad = 99;
    int rc = cqd_registry_put(r, name, &(cqd_world_put){.settings = &s}, &bad, NULL, NULL);
    ck_assert_int_eq(bad, -1);
    return rc;
}

static int import(cqd_registry *r, const char *name, const cq_world_op *ops, int n, int *bad)
{
    cq_world_settings s = {.skin = 0.5, .capacity = 8};
    return cqd_registry_put(r, name, &(cqd_world_put){.settings = &s, .import = true, .ops = ops, .count = n}, bad, NULL,
                            NULL);
}

static bool has(cqd_registry *r, const char *name, const char *id)
{
    cqd_world *w = cqd_world_acquire(r, name, false);
    ck_assert_ptr_nonnull(w);
    cq_world_handle h;
    bool found = cq_world_find(w->world, id, &h) == CQ_OK;
    cqd_world_release(r, w);
    return found;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

START_TEST(test_create_then_configure)
{
    cqd_registry *r = cqd_registry_create();
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(cqd_world_acquire(r, "w", false));
    ck_assert_int_eq(put(r, "w", 0.1), 201);
    ck_assert_int_eq(put(r, "w", 0.25), 200);
    cqd_world *w = cqd_world_acquire(r, "w", false);
    ck_assert_ptr_nonnull(w);
    ck_assert_str_eq(w->name, "w");
    ck_assert_double_eq(cq_world_get_settings(w->world).skin, 0.25);
    cqd_world_release(r, w);

    /* a rejected update changes nothing; a rejected creation creates nothing */
    ck_assert_int_eq(put(r, "w", -1), CQ_ENEGATIVE);
    w = cqd_world_acquire(r, "w", true);
    ck_assert_double_eq(cq_world_get_settings(w->world).skin, 0.25);
    cqd_world_release(r, w);
    ck_assert_int_eq(put(r, "v", -1), CQ_ENEGATIVE);
    ck_assert_ptr_null(cqd_world_acquire(r, "v", false));

    /* the state reported by a put is the world's */
    cq_world_settings s = {.skin = 0.75, .capacity = 3000};
    cqd_world_state st;
    int bad;
    ck_assert_int_eq(cqd_registry_put(r, "w", &(cqd_world_put){.settings = &s}, &bad, &st, NULL), 200);
    ck_assert_double_eq(st.settings.skin, 0.75);
    ck_assert_int_eq(st.settings.capacity, 3000);
    ck_assert_int_eq(st.stats.shapes, 0);
    cqd_registry_destroy(r);
}
END_TEST

START_TEST(test_list_sorted)
{
    cqd_registry *r = cqd_registry_create();
    int n = -1;
    cqd_world_info *info = NULL;
    ck_assert_int_eq(cqd_registry_list(r, &info, &n), 0); /* none is not out of memory */
    ck_assert_ptr_nonnull(info);
    ck_assert_int_eq(n, 0);
    free(info);
    const char *names[] = {"m", "a.2", "z", "a", "B", "a-1"};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(put(r, names[i], 0), 201);
    cq_world_op ops[] = {
        wo_upsert("s", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("t", wo_sphere(1), wo_at(1, 0, 0), cq_v3(0, 0, 0), 1, 1),
    };
    int bad;
    ck_assert_int_eq(import(r, "z", ops, 2, &bad), 200);
    ck_assert_int_eq(cqd_registry_delete(r, "m"), CQ_OK);
    ck_assert_int_eq(cqd_registry_list(r, &info, &n), 0);
    /* byte order: upper case first, '-' < '.' */
    const char *want[] = {"B", "a", "a-1", "a.2", "z"};
    ck_assert_int_eq(n, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(info[i].name, want[i]);
        ck_assert_int_eq(info[i].shapes, i == 4 ? 2 : 0);
    }
    ck_assert_int_eq(info[4].broadphase_pairs, 1);
    free(info);
    cqd_registry_destroy(r);
}
END_TEST

/* The server's hook refusing every allocation. */
static void *no_malloc(size_t size)
{
    (void)size;
    return NULL;
}

static void *no_realloc(void *p, size_t size)
{
    (void)p;
    (void)size;
    return NULL;
}

/* A listing that finds no memory says so, with or without worlds: an
 * empty array would read as "there are no worlds". */
START_TEST(test_list_out_of_memory)
{
    cqd_registry *r = cqd_registry_create();
    for (int worlds = 0; worlds < 2; worlds++) {
        if (worlds)
            ck_assert_int_eq(put(r, "a", 0), 201);
        cqd_set_allocator(&(cqd_allocator){no_malloc, no_realloc, free});
        cqd_world_info *info = (cqd_world_info *)r; /* any non-NULL value, to see it cleared */
        int n = -1;
        int rc = cqd_registry_list(r, &info, &n);
        cqd_set_allocator(NULL);
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_null(info);
        ck_assert_int_eq(n, 0);
    }
    cqd_registry_destroy(r);
}
END_TEST

START_TEST(test_import_atomic)
{
    cqd_registry *r = cqd_registry_create();
    int bad = 99;
    cq_world_op first[] = {wo_upsert("old", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1)};
    cqd_world_state st;
    cq_world_settings s = {.skin = 0.5};
    cqd_world_put imp = {.settings = &s, .import = true, .ops = first, .count = 1};
    ck_assert_int_eq(cqd_registry_put(r, "w", &imp, &bad, &st, NULL), 201);
    ck_assert_int_eq(st.stats.shapes, 1);
    ck_assert_double_eq(st.settings.skin, 0.5);

    /* the second upsert is invalid: the whole import is refused */
    cq_world_op broken[] = {
        wo_upsert("x", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
        wo_upsert("y", wo_sphere(-1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1),
    };
    ck_assert_int_eq(import(r, "w", broken, 2, &bad), CQ_ENEGATIVE);
    ck_assert_int_eq(bad, 1);
    ck_assert(has(r, "w", "old"));
    ck_assert(!has(r, "w", "x"));

    /* a failed import of a new world leaves no world behind */
    ck_assert_int_eq(import(r, "fresh", broken, 2, &bad), CQ_ENEGATIVE);
    ck_assert_ptr_null(cqd_world_acquire(r, "fresh", false));

    broken[1].shape.sphere.radius = 2;
    ck_assert_int_eq(import(r, "w", broken, 2, &bad), 200);
    ck_assert(!has(r, "w", "old"));
    ck_assert(has(r, "w", "x") && has(r, "w", "y"));
    cqd_world *w = cqd_world_acquire(r, "w", false);
    ck_assert_int_eq(cq_world_count(w->world), 2);
    ck_assert_double_eq(cq_world_get_settings(w->world).skin, 0.5);
    cqd_world_release(r, w);
    cqd_registry_destroy(r);
}
END_TEST

START_TEST(test_delete)
{
    cqd_registry *r = cqd_registry_create();
    ck_assert_int_eq(cqd_registry_delete(r, "w"), CQ_ENOT_FOUND);
    ck_assert_int_eq(put(r, "w", 0), 201);
    ck_assert_int_eq(cqd_registry_delete(r, "w"), CQ_OK);
    ck_assert_ptr_null(cqd_world_acquire(r, "w", false));
    ck_assert_int_eq(cqd_registry_delete(r, "w"), CQ_ENOT_FOUND);
    ck_assert_int_eq(put(r, "w", 0), 201);
    cqd_registry_destroy(r);
}
END_TEST

typedef struct deleter {
    cqd_registry *r;
    _Atomic int done;
    int rc;
} deleter;

static void *delete_main(void *arg)
{
    deleter *d = arg;
    d->rc = cqd_registry_delete(d->r, "w");
    atomic_store(&d->done, 1);
    return NULL;
}

START_TEST(test_delete_waits_for_readers)
{
    cqd_registry *r = cqd_registry_create();
    cq_world_op ops[] = {wo_upsert("s", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1)};
    int bad;
    ck_assert_int_eq(import(r, "w", ops, 1, &bad), 201);
    cqd_world *w = cqd_world_acquire(r, "w", false);
    deleter d = {.r = r};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, delete_main, &d), 0);
    sleep_ms(50);
    /* the delete waits for the reader; the world is intact meanwhile */
    ck_assert_int_eq(atomic_load(&d.done), 0);
    ck_assert_int_eq(cq_world_count(w->world), 1);
    cqd_world_release(r, w);
    pthread_join(t, NULL);
    ck_assert_int_eq(d.rc, CQ_OK);
    ck_assert_ptr_null(cqd_world_acquire(r, "w", false));
    cqd_registry_destroy(r);
}
END_TEST

/* Each thread runs a fixed pseudo-random mix of every registry operation
 * on three names; every acquire must hand back the entry of its name. */
typedef struct stress {
    cqd_registry *r;
    unsigned seed;
    _Atomic int bad;
} stress;

static void *stress_main(void *arg)
{
    stress *s = arg;
    static const char *names[] = {"a", "b", "c"};
    unsigned x = s->seed;
    for (int i = 0; i < 3000; i++) {
        x = x * 1103515245u + 12345u;
        const char *name = names[(x >> 8) % 3];
        int bad;
        cq_world_settings set = {.skin = 0.1, .capacity = 4};
        cq_world_op op = wo_upsert("s", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1);
        switch ((x >> 16) % 6) {
        case 0:
        case 1: {
            cqd_world *w = cqd_world_acquire(s->r, name, (x >> 20) & 1);
            if (w) {
                if (strcmp(w->name, name) != 0 || cq_world_count(w->world) > 1)
                    atomic_store(&s->bad, 1);
                if ((x >> 20) & 1)
                    cq_world_apply(w->world, &op, 1, &bad);
                cqd_world_release(s->r, w);
            }
            break;
        }
        case 2:
            cqd_registry_put(s->r, name, &(cqd_world_put){.settings = &set}, &bad, NULL, NULL);
            break;
        case 3:
            cqd_registry_put(s->r, name, &(cqd_world_put){.settings = &set, .import = true, .ops = &op, .count = 1}, &bad,
                             NULL, NULL);
            break;
        case 4:
            cqd_registry_delete(s->r, name);
            break;
        default: {
            int n;
            cqd_world_info *info;
            if (cqd_registry_list(s->r, &info, &n) != 0)
                atomic_store(&s->bad, 1);
            for (int k = 1; k < n; k++)
                if (strcmp(info[k - 1].name, info[k].name) >= 0)
                    atomic_store(&s->bad, 1);
            free(info);
        }
        }
    }
    return NULL;
}

START_TEST(test_concurrent_mix)
{
    cqd_registry *r = cqd_registry_create();
    enum { N = 4 };
    stress s[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        s[i] = (stress){.r = r, .seed = 17u * (unsigned)i + 1u};
        ck_assert_int_eq(pthread_create(&t[i], NULL, stress_main, &s[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(atomic_load(&s[i].bad), 0);
    }
    cqd_registry_destroy(r);
}
END_TEST

/* The hook records what it saw, and refuses when told to. */
typedef struct hook_log {
    int calls;
    cqp_durability seen;
    bool refuse;
} hook_log;

static int log_hook(void *arg, cqd_world *w)
{
    hook_log *h = arg;
    h->calls++;
    h->seen = w->durability;
    return h->refuse ? -1 : 0;
}

static int put_durable(cqd_registry *r, const char *name, bool given, cqp_durability d, bool import,
                       const cq_world_op *ops, int n, hook_log *h, cqd_world_state *st)
{
    cq_world_settings s = {.skin = 0.5};
    cqd_world_put put = {.settings = &s, .import = import, .ops = ops, .count = n, .durability = d,
                         .durability_given = given};
    cqd_registry_hook hook = {log_hook, h};
    int bad;
    return cqd_registry_put(r, name, &put, &bad, st, &hook);
}

/* A durability is chosen at creation (full when not given), seen by the
 * hook before the change, reported by the state and the listing, and a put
 * naming another one is refused before the hook with nothing changed. */
START_TEST(test_durability_fixed_at_creation)
{
    cqd_registry *r = cqd_registry_create();
    hook_log h = {0};
    cqd_world_state st;
    ck_assert_int_eq(put_durable(r, "e", true, CQP_DURABILITY_NONE, false, NULL, 0, &h, &st), 201);
    ck_assert_int_eq(h.calls, 1);
    ck_assert_int_eq(h.seen, CQP_DURABILITY_NONE);
    ck_assert_int_eq(st.durability, CQP_DURABILITY_NONE);
    ck_assert_int_eq(put_durable(r, "f", false, CQP_DURABILITY_NONE, false, NULL, 0, &h, &st), 201);
    ck_assert_int_eq(st.durability, CQP_DURABILITY_FULL);
    cq_world_op ops[] = {wo_upsert("s", wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1)};
    ck_assert_int_eq(put_durable(r, "m", true, CQP_DURABILITY_SHAPES, true, ops, 1, &h, &st), 201);
    ck_assert_int_eq(st.durability, CQP_DURABILITY_SHAPES);
    ck_assert_int_eq(h.calls, 3);

    /* the same durability, or none named: the put goes on */
    ck_assert_int_eq(put_durable(r, "e", true, CQP_DURABILITY_NONE, false, NULL, 0, &h, &st), 200);
    ck_assert_int_eq(put_durable(r, "e", false, CQP_DURABILITY_FULL, false, NULL, 0, &h, &st), 200);
    ck_assert_int_eq(st.durability, CQP_DURABILITY_NONE);
    ck_assert_int_eq(h.calls, 5);

    /* another one: refused before the hook, settings and content unchanged */
    static const struct {
        const char *name;
        cqp_durability d;
        bool import;
    } other[] = {{"e", CQP_DURABILITY_FULL, false}, {"e", CQP_DURABILITY_SHAPES, true},
                 {"f", CQP_DURABILITY_NONE, false}, {"m", CQP_DURABILITY_FULL, true}};
    cq_world_op fresh[] = {wo_upsert("t", wo_sphere(2), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1)};
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
        cq_world_settings s = {.skin = 3};
        cqd_world_put put = {.settings = &s, .import = other[k].import, .ops = fresh, .count = 1,
                             .durability = other[k].d, .durability_given = true};
        cqd_registry_hook hook = {log_hook, &h};
        int bad;
        ck_assert_int_eq(cqd_registry_put(r, other[k].name, &put, &bad, NULL, &hook), CQD_REGISTRY_CONFLICT);
        ck_assert_int_eq(h.calls, 5);
        cqd_world *w = cqd_world_acquire(r, other[k].name, false);
        ck_assert_double_eq(cq_world_get_settings(w->world).skin, 0.5);
        cqd_world_release(r, w);
        ck_assert(!has(r, other[k].name, "t"));
    }
    ck_assert(has(r, "m", "s"));

    /* a refused creation leaves nothing; the name is free for any durability */
    h.refuse = true;
    ck_assert_int_eq(put_durable(r, "x", true, CQP_DURABILITY_NONE, false, NULL, 0, &h, &st), CQD_REGISTRY_REFUSED);
    ck_assert_ptr_null(cqd_world_acquire(r, "x", false));
    h.refuse = false;
    ck_assert_int_eq(cqd_registry_delete(r, "e"), CQ_OK);
    ck_assert_int_eq(put_durable(r, "e", true, CQP_DURABILITY_FULL, false, NULL, 0, &h, &st), 201);

    int n;
    cqd_world_info *info;
    ck_assert_int_eq(cqd_registry_list(r, &info, &n), 0);
    ck_assert_int_eq(n, 3);
    const cqp_durability want[] = {CQP_DURABILITY_FULL, CQP_DURABILITY_FULL, CQP_DURABILITY_SHAPES}; /* e f m */
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(info[i].durability, want[i]);
    free(info);
    cqd_registry_destroy(r);
}
END_TEST

/* n coincident unit spheres: n (n - 1) / 2 broadphase pairs. */
static int import_pile(cqd_registry *r, const char *name, int n, long max_pairs)
{
    cq_world_op ops[8];
    char ids[8][4];
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "s%d", i);
        ops[i] = wo_upsert(ids[i], wo_sphere(1), wo_at(0, 0, 0), cq_v3(0, 0, 0), 1, 1);
    }
    cq_world_settings s = {.skin = 0.1, .max_pairs = max_pairs};
    int bad;
    return cqd_registry_put(r, name, &(cqd_world_put){.settings = &s, .import = true, .ops = ops, .count = n}, &bad, NULL,
                            NULL);
}

static long pair_cap(cqd_registry *r, const char *name)
{
    cqd_world *w = cqd_world_acquire(r, name, false);
    ck_assert_ptr_nonnull(w);
    long cap = cq_world_get_settings(w->world).max_pairs;
    cqd_world_release(r, w);
    return cap;
}

/* The pair cap is the registry's: a put's own max_pairs never counts. */
START_TEST(test_pair_cap_is_the_registry_s)
{
    cqd_registry *r = cqd_registry_create();
    ck_assert_int_eq(import_pile(r, "a", 4, 2), 201); /* 6 pairs: no cap yet, as in recovery */
    ck_assert_int_eq(pair_cap(r, "a"), 0);
    ck_assert_int_eq(cqd_registry_cap_pairs(r, 3), 0);
    ck_assert_int_eq(pair_cap(r, "a"), 3);
    ck_assert_int_eq(import_pile(r, "b", 3, 0), 201);         /* 3 pairs */
    ck_assert_int_eq(import_pile(r, "b", 4, 100), CQ_ELIMIT); /* 6 */
    ck_assert(has(r, "b", "s2") && !has(r, "b", "s3"));
    ck_assert_int_eq(pair_cap(r, "b"), 3);
    ck_assert_int_eq(put(r, "a", 0.2), 200); /* configured without a cap, keeps the registry's */
    ck_assert_int_eq(pair_cap(r, "a"), 3);
    cqd_registry_destroy(r);
}
END_TEST

/* Every registry code has its own message, written here by hand; any
 * other code is the core's, whose table passes through unchanged. */
START_TEST(test_strerror)
{
    static const struct {
        int code;
        const char *msg;
    } cells[] = {
        {CQD_REGISTRY_REFUSED, "the hook refused the change"},
        {CQD_REGISTRY_FULL, "as many worlds as the cap allows exist already"},
        {CQD_REGISTRY_CONFLICT, "the world exists with another durability (chosen once, at creation)"},
        {-1000, "the hook refused the change"},
        {-1001, "as many worlds as the cap allows exist already"},
        {-1002, "the world exists with another durability (chosen once, at creation)"},
        {CQ_OK, "ok"},
        {CQ_ENOT_FOUND, "no such id"},
        {CQ_EBUDGET, "the slot budget the world is charged to would be exceeded"},
        {-999, "unknown status"},
        {-1003, "unknown status"},
    };
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
        ck_assert_str_eq(cqd_registry_strerror(cells[i].code), cells[i].msg);
}
END_TEST

Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_create_then_configure);
    tcase_add_test(tc, test_list_sorted);
    tcase_add_test(tc, test_list_out_of_memory);
    tcase_add_test(tc, test_import_atomic);
    tcase_add_test(tc, test_delete);
    tcase_add_test(tc, test_durability_fixed_at_creation);
    tcase_add_test(tc, test_delete_waits_for_readers);
    tcase_add_test(tc, test_concurrent_mix);
    tcase_add_test(tc, test_pair_cap_is_the_registry_s);
    tcase_add_test(tc, test_strerror);
    suite_add_tcase(s, tc);
    return s;
}
