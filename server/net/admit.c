/// @file server/net/admit.c
/// Admission control (admit.h): counters moved with compare-and-swap, so no
/// lock is taken on the request path and a count never shows more than its
/// bound, not even for a moment.
#include "admit.h"

void cqd_admit_init(cqd_admit *a, long max_inflight, size_t max_buffered)
{
    atomic_init(&a->inflight, 0);
    atomic_init(&a->buffered, 0);
    atomic_init(&a->shed, 0);
    a->max_inflight = max_inflight;
    a->max_buffered = max_buffered;
}

static bool shed(cqd_admit *a)
{
    atomic_fetch_add_explicit(&a->shed, 1, memory_order_relaxed);
    return false;
}

bool cqd_admit_enter(cqd_admit *a)
{
    long seen = atomic_load_explicit(&a->inflight, memory_order_relaxed);
    do {
        if (seen >= a->max_inflight)
            return shed(a);
    } while (!atomic_compare_exchange_weak_explicit(&a->inflight, &seen, seen + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

void cqd_admit_leave(cqd_admit *a) { atomic_fetch_sub_explicit(&a->inflight, 1, memory_order_relaxed); }

bool cqd_admit_reserve(cqd_admit *a, size_t bytes)
{
    size_t seen = atomic_load_explicit(&a->buffered, memory_order_relaxed);
    do {
        if (seen > a->max_buffered || bytes > a->max_buffered - seen)
            return shed(a);
    } while (!atomic_compare_exchange_weak_explicit(&a->buffered, &seen, seen + bytes, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

void cqd_admit_release(cqd_admit *a, size_t bytes)
{
    atomic_fetch_sub_explicit(&a->buffered, bytes, memory_order_relaxed);
}
