/// @file server/admit.c
/// Admission control (admit.h): two counters moved with compare-and-swap,
/// so no lock is taken on the request path.
#include "admit.h"

void cqd_admit_init(cqd_admit *a, long max_inflight, size_t max_buffered)
{
    atomic_init(&a->inflight, 0);
    atomic_init(&a->buffered, 0);
    atomic_init(&a->shed, 0);
    a->max_inflight = max_inflight;
    a->max_buffered = max_buffered;
}

/// Adds more to buffered unless that passes the bound.
static bool reserve(cqd_admit *a, size_t more)
{
    size_t seen = atomic_load_explicit(&a->buffered, memory_order_relaxed);
    do {
        if (more > a->max_buffered - (seen < a->max_buffered ? seen : a->max_buffered))
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&a->buffered, &seen, seen + more, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

bool cqd_admit_enter(cqd_admit *a, size_t body)
{
    // Compare-and-swap rather than add-then-undo: the count never shows
    // more than the bound, not even for a moment.
    long seen = atomic_load_explicit(&a->inflight, memory_order_relaxed);
    do {
        if (seen >= a->max_inflight) {
            atomic_fetch_add_explicit(&a->shed, 1, memory_order_relaxed);
            return false;
        }
    } while (!atomic_compare_exchange_weak_explicit(&a->inflight, &seen, seen + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    if (body && !reserve(a, body)) {
        atomic_fetch_sub_explicit(&a->inflight, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&a->shed, 1, memory_order_relaxed);
        return false;
    }
    return true;
}

bool cqd_admit_grow(cqd_admit *a, size_t more)
{
    if (reserve(a, more))
        return true;
    atomic_fetch_add_explicit(&a->shed, 1, memory_order_relaxed);
    return false;
}

void cqd_admit_leave(cqd_admit *a, size_t body)
{
    atomic_fetch_sub_explicit(&a->buffered, body, memory_order_relaxed);
    atomic_fetch_sub_explicit(&a->inflight, 1, memory_order_relaxed);
}
