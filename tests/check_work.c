/* The handler pool (server/net/work.c). Oracles: counts kept by the jobs
 * themselves against the numbers submitted; a job that blocks until
 * released, so that the others finishing meanwhile proves another thread
 * took them; and the bound on threads counted by hand. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "net/work.h"

Suite *work_suite(void);

typedef struct counted {
    cqd_job job;
    atomic_int *ran;
} counted;

static void count_run(cqd_job *job) { atomic_fetch_add(((counted *)job)->ran, 1); }

/// A job that waits until its gate opens.
typedef struct gated {
    cqd_job job;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open, started;
} gated;

static void gated_run(cqd_job *job)
{
    gated *g = (gated *)job;
    pthread_mutex_lock(&g->lock);
    g->started = true;
    pthread_cond_broadcast(&g->cond);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gated_init(gated *g)
{
    g->job.run = gated_run;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->open = g->started = false;
}

static void gated_wait_started(gated *g)
{
    pthread_mutex_lock(&g->lock);
    while (!g->started)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gated_open(gated *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

enum { JOBS = 2000 };

/// Submits n gated jobs and waits until each holds a thread.
static void hold_threads(cqd_work *w, gated *g, int n)
{
    for (int i = 0; i < n; i++) {
        gated_init(&g[i]);
        ck_assert(cqd_work_submit(w, &g[i].job));
        gated_wait_started(&g[i]);
    }
}

START_TEST(every_job_runs_once)
{
    cqd_work *w = cqd_work_new(4);
    ck_assert_ptr_nonnull(w);
    atomic_int ran = 0;
    static counted jobs[JOBS];
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (counted){.job.run = count_run, .ran = &ran};
        ck_assert(cqd_work_submit(w, &jobs[i].job));
    }
    cqd_work_drain(w); /* runs what is queued before it returns */
    ck_assert_int_eq(atomic_load(&ran), JOBS);
    ck_assert_int_le(cqd_work_threads(w), 4);
    ck_assert_int_ge(cqd_work_threads(w), 1);
    cqd_work_free(w);
}
END_TEST

START_TEST(a_blocked_job_holds_one_thread)
{
    /* Three jobs block at once; a fourth must still run: each blocked job
     * holds its own thread, started on demand. */
    cqd_work *w = cqd_work_new(8);
    gated g[3];
    hold_threads(w, g, 3);
    ck_assert_int_eq(cqd_work_threads(w), 3);
    atomic_int ran = 0;
    counted c = {.job.run = count_run, .ran = &ran};
    ck_assert(cqd_work_submit(w, &c.job));
    while (atomic_load(&ran) == 0)
        sched_yield();
    ck_assert_int_eq(cqd_work_threads(w), 4);
    for (int i = 0; i < 3; i++)
        gated_open(&g[i]);
    cqd_work_drain(w);
    cqd_work_free(w);
}
END_TEST

START_TEST(threads_stop_at_the_bound)
{
    /* With two threads both blocked, more jobs wait in the queue and
     * run once a thread is free; no third thread is started. */
    cqd_work *w = cqd_work_new(2);
    gated g[2];
    hold_threads(w, g, 2);
    atomic_int ran = 0;
    counted c[5];
    for (int i = 0; i < 5; i++) {
        c[i] = (counted){.job.run = count_run, .ran = &ran};
        ck_assert(cqd_work_submit(w, &c[i].job));
    }
    ck_assert_int_eq(cqd_work_threads(w), 2);
    ck_assert_int_eq(atomic_load(&ran), 0);
    gated_open(&g[0]);
    while (atomic_load(&ran) < 5)
        sched_yield();
    gated_open(&g[1]);
    cqd_work_drain(w);
    ck_assert_int_eq(cqd_work_threads(w), 2);
    cqd_work_free(w);
}
END_TEST

START_TEST(a_drained_pool_takes_nothing)
{
    cqd_work *w = cqd_work_new(2);
    atomic_int ran = 0;
    counted c = {.job.run = count_run, .ran = &ran};
    cqd_work_drain(w); /* never started a thread: nothing to join */
    ck_assert_int_eq(cqd_work_threads(w), 0);
    ck_assert(!cqd_work_submit(w, &c.job));
    ck_assert_int_eq(atomic_load(&ran), 0);
    cqd_work_free(w);
    cqd_work_free(NULL);
}
END_TEST

Suite *work_suite(void)
{
    Suite *s = suite_create("work");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, every_job_runs_once);
    tcase_add_test(tc, a_blocked_job_holds_one_thread);
    tcase_add_test(tc, threads_stop_at_the_bound);
    tcase_add_test(tc, a_drained_pool_takes_nothing);
    suite_add_tcase(s, tc);
    return s;
}
