/* Admission control (server/net/admit.c). Oracles: the bounds counted by
 * hand in sequential scripts; and, with threads racing, a bound that no
 * thread ever sees passed and counters that return to zero. */
#include <check.h>
#include <pthread.h>

#include "net/admit.h"

Suite *admit_suite(void);

START_TEST(inflight_bound)
{
    cqd_admit a;
    cqd_admit_init(&a, 3, 1000);
    for (int i = 0; i < 3; i++)
        ck_assert(cqd_admit_enter(&a));
    ck_assert(!cqd_admit_enter(&a));
    ck_assert(!cqd_admit_enter(&a));
    ck_assert_int_eq((int)atomic_load(&a.shed), 2);
    ck_assert_int_eq((int)atomic_load(&a.inflight), 3);
    cqd_admit_leave(&a);
    ck_assert(cqd_admit_enter(&a));
    for (int i = 0; i < 3; i++)
        cqd_admit_leave(&a);
    ck_assert_int_eq((int)atomic_load(&a.inflight), 0);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
}
END_TEST

START_TEST(buffered_bound)
{
    cqd_admit a;
    cqd_admit_init(&a, 1, 100);
    ck_assert(cqd_admit_reserve(&a, 60));
    ck_assert(!cqd_admit_reserve(&a, 41)); /* 60 + 41 > 100: nothing reserved */
    ck_assert_uint_eq(atomic_load(&a.buffered), 60);
    ck_assert(cqd_admit_reserve(&a, 40)); /* exactly 100 */
    ck_assert(!cqd_admit_reserve(&a, 1));
    ck_assert(cqd_admit_reserve(&a, 0));
    ck_assert_int_eq((int)atomic_load(&a.shed), 2);
    ck_assert_int_eq((int)atomic_load(&a.inflight), 0); /* bytes do not count as requests */
    cqd_admit_release(&a, 60);
    ck_assert(!cqd_admit_reserve(&a, 101)); /* larger than the whole bound */
    cqd_admit_release(&a, 40);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
}
END_TEST

enum { RACERS = 8, ROUNDS = 20000, BOUND = 3 };

typedef struct racer {
    cqd_admit *a;
    int admitted, passed; /* passed: times this thread saw a count over its bound */
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (cqd_admit_enter(r->a)) {
            r->admitted++;
            if (atomic_load(&r->a->inflight) > BOUND)
                r->passed++;
            cqd_admit_leave(r->a);
        }
        if (cqd_admit_reserve(r->a, 7)) {
            if (atomic_load(&r->a->buffered) > BOUND * 7)
                r->passed++;
            cqd_admit_release(r->a, 7);
        }
    }
    return NULL;
}

START_TEST(racing_threads)
{
    cqd_admit a;
    cqd_admit_init(&a, BOUND, BOUND * 7);
    racer r[RACERS];
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) {
        r[i] = (racer){.a = &a};
        ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    long admitted = 0;
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(r[i].passed, 0);
        admitted += r[i].admitted;
    }
    ck_assert_int_le(admitted, (long)RACERS * ROUNDS);
    ck_assert_int_eq((int)atomic_load(&a.inflight), 0);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
}
END_TEST

Suite *admit_suite(void)
{
    Suite *s = suite_create("admit");
    TCase *tc = tcase_create("admit");
    tcase_add_test(tc, inflight_bound);
    tcase_add_test(tc, buffered_bound);
    tcase_add_test(tc, racing_threads);
    suite_add_tcase(s, tc);
    return s;
}
