/* The worlds by name: a sorted array of entries under one mutex (there are
 * few worlds and many shapes, so binary search and memmove are plenty),
 * each entry with its own readers-writer lock and a reference count.
 *
 * _GNU_SOURCE: glibc's writer-preferring rwlock kind, so a stream of
 * read queries (ray casts every tick) cannot starve a contacts pass. */
#define _GNU_SOURCE

#include "registry.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "budget.h"

struct cqd_registry {
    pthread_mutex_t lock; /* guards the array and every entry's refs */
    cqd_world **w;        /* sorted by name */
    int n, cap;
    int max;              /* worlds allowed; 0 = no cap */
    atomic_long max_pairs; /* every world's pair cap; 0 = none */
    cqd_budget slots;     /* the storage slots of every world, listed or not yet freed */
};

cqd_registry *cqd_registry_create(void)
{
    cqd_registry *r = cqd_calloc(1, sizeof *r);
    if (r && pthread_mutex_init(&r->lock, NULL) != 0) {
        cqd_free(r);
        return NULL;
    }
    cqd_budget_init(&r->slots);
    atomic_init(&r->max_pairs, 0);
    return r;
}

void cqd_registry_limit(cqd_registry *r, int max)
{
    pthread_mutex_lock(&r->lock);
    r->max = max;
    pthread_mutex_unlock(&r->lock);
}

void cqd_registry_limit_slots(cqd_registry *r, long max) { cqd_budget_limit(&r->slots, max); }

long cqd_registry_slots(cqd_registry *r) { return cqd_budget_used(&r->slots); }

static bool slots_take(void *ctx, long n) { return cqd_budget_take(ctx, n); }

static void slots_give(void *ctx, long n) { cqd_budget_give(ctx, n); }

/* A new world charged to the budget: its capacity before the storage is
 * allocated (so a refused one costs no memory), its growth through the
 * core's hook. CQ_EBUDGET when the capacity does not fit. */
static int world_new(cqd_registry *r, const cq_world_settings *s, cq_world **out)
{
    long want = s && s->capacity > 0 ? s->capacity : CQ_WORLD_DEFAULT_CAPACITY;
    bool charged = want <= CQ_WORLD_MAX_SHAPES; /* else creating it fails, and says why */
    *out = NULL;
    if (charged && !cqd_budget_take(&r->slots, want))
        return CQ_EBUDGET;
    int rc = cq_world_create(s, out);
    long held = rc == CQ_OK ? cq_world_get_stats(*out).capacity : 0;
    /* the storage, whatever was asked: the charge always matches it */
    cqd_budget_force(&r->slots, held - (charged ? want : 0));
    if (rc == CQ_OK)
        cq_world_set_budget(*out, &(cq_world_budget){slots_take, slots_give, &r->slots});
    return rc;
}

/* Destroys a world from world_new (NULL ignored), returning its charge. */
static void world_drop(cqd_registry *r, cq_world *world)
{
    if (world)
        cqd_budget_give(&r->slots, cq_world_get_stats(world).capacity);
    cq_world_destroy(world);
}

static void world_free(cqd_registry *r, cqd_world *w)
{
    world_drop(r, w->world);
    pthread_rwlock_destroy(&w->lock);
    cqd_free(w);
}

void cqd_registry_destroy(cqd_registry *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        world_free(r, r->w[i]);
    cqd_free(r->w);
    pthread_mutex_destroy(&r->lock);
    cqd_free(r);
}

/* Index of name in the array, or where it would be inserted (*found false). */
static int find(const cqd_registry *r, const char *name, bool *found)
{
    int lo = 0, hi = r->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int cmp = strcmp(r->w[mid]->name, name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Takes a reference on the named world, or NULL. */
static cqd_world *ref(cqd_registry *r, const char *name)
{
    pthread_mutex_lock(&r->lock);
    bool found;
    int i = find(r, name, &found);
    cqd_world *w = found ? r->w[i] : NULL;
    if (w)
        w->refs++;
    pthread_mutex_unlock(&r->lock);
    return w;
}

/* Drops a reference taken by ref(); the last one of a deleted world frees it. */
static void unref(cqd_registry *r, cqd_world *w)
{
    pthread_mutex_lock(&r->lock);
    bool last = --w->refs == 0 && w->deleted;
    pthread_mutex_unlock(&r->lock);
    if (last)
        world_free(r, w);
}

cqd_world *cqd_world_acquire(cqd_registry *r, const char *name, bool write)
{
    cqd_world *w = ref(r, name);
    if (!w)
        return NULL;
    if (write)
        pthread_rwlock_wrlock(&w->lock);
    else
        pthread_rwlock_rdlock(&w->lock);
    if (write)
        w->writing = true; /* readers never touch it: they hold the lock with no writer */
    /* deleted is set under the world's write lock, so holding either side
     * of it makes this read safe; a DELETE that won the race means "no world". */
    if (w->deleted) {
        cqd_world_release(r, w);
        return NULL;
    }
    return w;
}

/* The counts lists read without the lock, from the world as it is now. */
static void publish(cqd_world *w)
{
    cq_world_stats st = cq_world_get_stats(w->world);
    atomic_store_explicit(&w->shapes_seen, st.shapes, memory_order_relaxed);
    atomic_store_explicit(&w->pairs_seen, st.broadphase_pairs, memory_order_relaxed);
}

void cqd_world_release(cqd_registry *r, cqd_world *w)
{
    if (w->writing) {
        w->writing = false;
        publish(w);
    }
    pthread_rwlock_unlock(&w->lock);
    unref(r, w);
}

static void snapshot(const cqd_world *w, cqd_world_state *state)
{
    if (state) {
        state->settings = cq_world_get_settings(w->world);
        state->stats = cq_world_get_stats(w->world);
        state->durability = w->durability;
    }
}

/* The hook's verdict: 0, or CQD_REGISTRY_REFUSED. */
static int run_hook(const cqd_registry_hook *hook, cqd_world *w)
{
    return hook && hook->before(hook->arg, w) != 0 ? CQD_REGISTRY_REFUSED : 0;
}

/* Inserts a new entry owning world. 201; 0 when the name appeared since the
 * caller looked (nothing taken); CQ_ENO_MEMORY, CQD_REGISTRY_FULL or
 * CQD_REGISTRY_REFUSED (nothing taken). */
static int insert(cqd_registry *r, const char *name, cq_world *world, cqp_durability durability,
                  cqd_world_state *state, const cqd_registry_hook *hook)
{
    cqd_world *w = cqd_calloc(1, sizeof *w);
    if (!w)
        return CQ_ENO_MEMORY;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#if defined(__GLIBC__)
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    int rc = pthread_rwlock_init(&w->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0) {
        cqd_free(w);
        return CQ_ENO_MEMORY;
    }
    strcpy(w->name, name);
    w->world = world;
    w->durability = durability; /* before the hook: it decides whether the creation is journaled */
    publish(w);

    pthread_mutex_lock(&r->lock);
    bool found;
    int i = find(r, name, &found);
    int status = 201;
    if (found) {
        status = 0;
    } else if (r->max > 0 && r->n >= r->max) {
        status = CQD_REGISTRY_FULL;
    } else if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        cqd_world **grown = cqd_realloc(r->w, (size_t)cap * sizeof *grown);
        if (grown) {
            r->w = grown;
            r->cap = cap;
        } else {
            status = CQ_ENO_MEMORY;
        }
    }
    if (status == 201 && run_hook(hook, w) != 0)
        status = CQD_REGISTRY_REFUSED;
    if (status == 201) {
        memmove(&r->w[i + 1], &r->w[i], (size_t)(r->n - i) * sizeof *r->w);
        r->w[i] = w;
        r->n++;
        /* read before unlocking: once listed, others may change it */
        snapshot(w, state);
    }
    pthread_mutex_unlock(&r->lock);
    if (status != 201) {
        pthread_rwlock_destroy(&w->lock);
        cqd_free(w);
    }
    return status;
}

/* A new world with settings holding the ops; on failure nothing is kept. */
static int build(cqd_registry *r, const cq_world_settings *settings, const cq_world_op *ops, int count,
                 int *bad_op, cq_world **out)
{
    int rc = world_new(r, settings, out);
    if (rc == CQ_OK && count > 0) {
        rc = cq_world_apply(*out, ops, count, bad_op);
        if (rc != CQ_OK) {
            world_drop(r, *out);
            *out = NULL;
        }
    }
    return rc;
}

/* A put on the existing world w (write-locked): everything that can fail
 * is checked and made room for before the hook, so that a journaled
 * change is applied. fresh is the import's new content, or NULL. */
static int put_existing(cqd_world *w, const cqd_world_put *put, cq_world **fresh, cqd_world_state *state,
                        const cqd_registry_hook *hook)
{
    if (put->durability_given && put->durability != w->durability)
        return CQD_REGISTRY_CONFLICT;
    /* storage for a larger capacity first: once journaled, the change
     * must not fail for memory */
    const cq_world_settings *s = put->settings;
    int capacity = !put->import && s && s->capacity > 0 ? s->capacity : 0;
    int rc = cq_world_reserve(w->world, capacity, 0);
    if (rc == CQ_OK && !put->import && s) /* the pair cap refuses a wider skin before the journal */
        rc = cq_world_check_pair_cap(w->world, s);
    if (rc == CQ_OK)
        rc = run_hook(hook, w); /* refused: nothing changes */
    if (rc == CQ_OK && put->import) {
        cq_world *old = w->world;
        w->world = *fresh;
        *fresh = old; /* the caller frees the old content, outside the lock */
    } else if (rc == CQ_OK) {
        rc = cq_world_configure(w->world, s);
    }
    if (rc == CQ_OK)
        snapshot(w, state);
    return rc;
}

/* Whether the named world exists with a durability other than put's; a
 * look only: put_existing checks again under the lock. */
static bool conflicts(cqd_registry *r, const char *name, const cqd_world_put *put)
{
    if (!put->durability_given)
        return false;
    cqd_world *w = cqd_world_acquire(r, name, false);
    bool other = w && w->durability != put->durability;
    if (w)
        cqd_world_release(r, w);
    return other;
}

int cqd_registry_put(cqd_registry *r, const char *name, const cqd_world_put *put, int *bad_op,
                     cqd_world_state *state, const cqd_registry_hook *hook)
{
    *bad_op = -1;
    if (strlen(name) > CQ_WORLD_ID_MAX)
        return CQ_ERANGE;
    /* The pair cap is the registry's, whatever the settings say. */
    cq_world_settings settings = put->settings ? *put->settings : (cq_world_settings){0};
    settings.max_pairs = atomic_load_explicit(&r->max_pairs, memory_order_relaxed);
    cqd_world_put capped = *put;
    capped.settings = &settings;
    put = &capped;
    /* Everything costly (allocating storage, applying an import) happens
     * before any lock is taken; the locks only cover the swap. */
    cq_world *fresh = NULL;
    if (put->import && conflicts(r, name, put))
        return CQD_REGISTRY_CONFLICT; /* before the import takes memory and slots for nothing */
    if (put->import) {
        int rc = build(r, put->settings, put->ops, put->count, bad_op, &fresh);
        if (rc != CQ_OK)
            return rc;
        if (put->ops_taken) /* fresh owns them now: its destruction frees them */
            *put->ops_taken = true;
    }
    cqp_durability durability = put->durability_given ? put->durability : CQP_DURABILITY_FULL;
    for (;;) {
        cqd_world *w = cqd_world_acquire(r, name, true);
        if (w) {
            int rc = put_existing(w, put, &fresh, state, hook);
            cqd_world_release(r, w);
            /* the replaced content, or one built for a creation another
             * request won */
            world_drop(r, fresh);
            return rc == CQ_OK ? 200 : rc;
        }
        if (!fresh) {
            int rc = world_new(r, put->settings, &fresh);
            if (rc != CQ_OK)
                return rc;
        }
        int rc = insert(r, name, fresh, durability, state, hook);
        if (rc != 0) {
            if (rc < 0)
                world_drop(r, fresh);
            return rc;
        }
        /* the name appeared meanwhile: update that world instead */
    }
}

int cqd_registry_delete_hooked(cqd_registry *r, const char *name, const cqd_registry_hook *hook)
{
    cqd_world *w = cqd_world_acquire(r, name, true);
    if (!w)
        return CQ_ENOT_FOUND;
    if (run_hook(hook, w) != 0) {
        cqd_world_release(r, w);
        return CQD_REGISTRY_REFUSED;
    }
    /* Under the write lock: no mutation is half done on the world we drop,
     * and every later acquire sees deleted. */
    pthread_mutex_lock(&r->lock);
    bool found;
    int i = find(r, name, &found);
    if (found) {
        memmove(&r->w[i], &r->w[i + 1], (size_t)(r->n - i - 1) * sizeof *r->w);
        r->n--;
    }
    w->deleted = true;
    pthread_mutex_unlock(&r->lock);
    cqd_world_release(r, w);
    return CQ_OK;
}

int cqd_registry_delete(cqd_registry *r, const char *name) { return cqd_registry_delete_hooked(r, name, NULL); }

const char *cqd_registry_strerror(int status)
{
    switch (status) {
#define CQD_REGISTRY_STATUS_MSG_(name, code, msg)                                                            \
    case code:                                                                                               \
        return msg;
        CQD_REGISTRY_STATUS_TABLE(CQD_REGISTRY_STATUS_MSG_)
#undef CQD_REGISTRY_STATUS_MSG_
    }
    return cq_strerror(status);
}

int cqd_registry_refs(cqd_registry *r, cqd_world ***out, int *count)
{
    pthread_mutex_lock(&r->lock);
    int n = r->n;
    cqd_world **ws = cqd_malloc((size_t)(n > 0 ? n : 1) * sizeof *ws);
    for (int i = 0; ws && i < n; i++) {
        ws[i] = r->w[i];
        ws[i]->refs++;
    }
    pthread_mutex_unlock(&r->lock);
    *out = ws;
    *count = ws ? n : 0;
    return ws ? 0 : -1;
}

void cqd_world_unref(cqd_registry *r, cqd_world *w) { unref(r, w); }

int cqd_registry_cap_pairs(cqd_registry *r, long max)
{
    cqd_world **ws;
    int n;
    if (cqd_registry_refs(r, &ws, &n) != 0)
        return -1;
    atomic_store_explicit(&r->max_pairs, max, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        pthread_rwlock_wrlock(&ws[i]->lock);
        cq_world_settings s = cq_world_get_settings(ws[i]->world);
        s.max_pairs = max;
        int rc = cq_world_configure(ws[i]->world, &s); /* the skin is kept: cannot refuse */
        assert(rc == CQ_OK);
        (void)rc;
        pthread_rwlock_unlock(&ws[i]->lock);
        unref(r, ws[i]);
    }
    cqd_free(ws);
    return 0;
}

int cqd_registry_list(cqd_registry *r, cqd_world_info **out, int *count)
{
    /* Under the map lock only: the counts are published by each writer,
     * so a long query holding one world's lock delays no list or scrape. */
    pthread_mutex_lock(&r->lock);
    int n = r->n;
    cqd_world_info *info = cqd_malloc((size_t)(n > 0 ? n : 1) * sizeof *info);
    for (int i = 0; info && i < n; i++) {
        const cqd_world *w = r->w[i];
        strcpy(info[i].name, w->name);
        info[i].shapes = atomic_load_explicit(&w->shapes_seen, memory_order_relaxed);
        info[i].broadphase_pairs = atomic_load_explicit(&w->pairs_seen, memory_order_relaxed);
        info[i].durability = w->durability;
    }
    pthread_mutex_unlock(&r->lock);
    *out = info;
    *count = info ? n : 0;
    return info ? 0 : -1;
}
