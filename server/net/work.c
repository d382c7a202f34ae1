/// @file server/net/work.c
/// The handler pool (work.h): one lock, one condition, a FIFO of jobs.
#include "work.h"
#include "state/alloc.h"

#include <pthread.h>
#include <stdlib.h>

struct cqd_work {
    pthread_mutex_t lock;
    pthread_cond_t ready;  ///< a job was queued, or the pool drains
    cqd_job *head, *tail;
    int queued;            ///< jobs in the queue, not yet taken
    int idle;              ///< threads waiting for a job
    int started, max;
    bool draining;
    pthread_t *tids;       ///< max slots, started used
};

cqd_work *cqd_work_new(int max_threads)
{
    cqd_work *w = cqd_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->max = max_threads < 1 ? 1 : max_threads;
    w->tids = cqd_calloc((size_t)w->max, sizeof *w->tids);
    bool locked = w->tids && pthread_mutex_init(&w->lock, NULL) == 0;
    if (locked && pthread_cond_init(&w->ready, NULL) == 0)
        return w;
    if (locked)
        pthread_mutex_destroy(&w->lock);
    cqd_free(w->tids);
    cqd_free(w);
    return NULL;
}

/// The next job, waiting for one; NULL once the pool drains and the queue is empty.
static cqd_job *take(cqd_work *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->head && !w->draining) {
        w->idle++;
        pthread_cond_wait(&w->ready, &w->lock);
        w->idle--;
    }
    cqd_job *job = w->head;
    if (job) {
        w->head = job->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
    }
    pthread_mutex_unlock(&w->lock);
    return job;
}

static void *worker(void *arg)
{
    cqd_work *w = arg;
    for (cqd_job *job; (job = take(w)) != NULL;)
        job->run(job);
    return NULL;
}

/// Starts one more thread when the queued jobs outnumber the idle threads
/// (called with the lock held). False when one was needed and failed.
static bool grow(cqd_work *w)
{
    if (w->queued <= w->idle || w->started >= w->max)
        return true;
    if (pthread_create(&w->tids[w->started], NULL, worker, w) != 0)
        return false;
    w->started++;
    return true;
}

bool cqd_work_submit(cqd_work *w, cqd_job *job)
{
    pthread_mutex_lock(&w->lock);
    bool ok = !w->draining;
    cqd_job *prev = w->tail;
    if (ok) {
        job->next = NULL;
        *(prev ? &prev->next : &w->head) = job;
        w->tail = job;
        w->queued++;
        // A thread that failed to start is no loss while another will take the job.
        ok = grow(w) || w->started > 0;
    }
    if (ok) {
        pthread_cond_signal(&w->ready);
    } else if (!w->draining) { // take the job back off the tail
        *(prev ? &prev->next : &w->head) = NULL;
        w->tail = prev;
        w->queued--;
    }
    pthread_mutex_unlock(&w->lock);
    return ok;
}

void cqd_work_drain(cqd_work *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->draining) { // drained already: its threads are joined
        pthread_mutex_unlock(&w->lock);
        return;
    }
    w->draining = true;
    pthread_cond_broadcast(&w->ready);
    int started = w->started;
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < started; i++)
        pthread_join(w->tids[i], NULL);
}

void cqd_work_free(cqd_work *w)
{
    if (!w)
        return;
    pthread_cond_destroy(&w->ready);
    pthread_mutex_destroy(&w->lock);
    cqd_free(w->tids);
    cqd_free(w);
}

int cqd_work_threads(cqd_work *w)
{
    pthread_mutex_lock(&w->lock);
    int n = w->started;
    pthread_mutex_unlock(&w->lock);
    return n;
}
