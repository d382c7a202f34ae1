/// @file cq/counters.h
/// Per-thread query counters. Each query thread owns one cq_counters and is
/// its only writer; a scrape sums them with cq_counters_snapshot. Increments
/// are relaxed atomic load+store (plain moves on x86-64): no lock, no
/// formatting, no allocation in a query.
#ifndef CQ_COUNTERS_H
#define CQ_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "cq/api.h"
#include "cq/algorithm.h"

/// Upper bounds of the GJK iteration histogram's buckets (the last is +Inf).
#define CQ_GJK_BUCKETS 6
#define CQ_GJK_BUCKET_BOUNDS {2, 4, 8, 16, 32}

/// Counter slots. The first CQ_ALG_COUNT slots count pair tests by algorithm.
enum {
    CQ_CTR_TESTS = 0,
    CQ_CTR_SAT_AXES_SKIPPED = CQ_CTR_TESTS + CQ_ALG_COUNT, ///< degenerate cross axes skipped
    CQ_CTR_ZERO_NORMALS,          ///< normals that could not be defined (contact dropped or replaced)
    CQ_CTR_GJK_CALLS,             ///< GJK distance queries
    CQ_CTR_GJK_ITERATIONS,        ///< their iterations, summed
    CQ_CTR_GJK_BUCKET,            ///< CQ_GJK_BUCKETS slots: calls by iterations (not cumulative)
    CQ_CTR_EPA_CALLS = CQ_CTR_GJK_BUCKET + CQ_GJK_BUCKETS,
    CQ_CTR_EPA_ITERATIONS,
    CQ_CTR_REASONS,               ///< CQ_FB_REASON_COUNT slots: fallbacks by reason (slot 0 unused)
    CQ_CTR_ACTIONS = CQ_CTR_REASONS + CQ_FB_REASON_COUNT, ///< CQ_FBA_COUNT slots by action (slot 0 unused)
    CQ_CTR_COUNT = CQ_CTR_ACTIONS + CQ_FBA_COUNT
};

/// One thread's counters (zero-initialise it).
typedef struct cq_counters {
    _Atomic uint64_t v[CQ_CTR_COUNT];
} cq_counters;

/// Adds n to slot i. c may be NULL (counting switched off).
static inline void cq_count(cq_counters *c, int i, uint64_t n)
{
    if (c) {
        uint64_t old = atomic_load_explicit(&c->v[i], memory_order_relaxed);
        atomic_store_explicit(&c->v[i], old + n, memory_order_relaxed);
    }
}

/// Counts one GJK query that took `iterations` in its histogram bucket.
static inline void cq_count_gjk(cq_counters *c, int iterations)
{
    static const int bounds[CQ_GJK_BUCKETS - 1] = CQ_GJK_BUCKET_BOUNDS;
    int b = 0;
    while (b < CQ_GJK_BUCKETS - 1 && iterations > bounds[b])
        b++;
    cq_count(c, CQ_CTR_GJK_CALLS, 1);
    cq_count(c, CQ_CTR_GJK_ITERATIONS, (uint64_t)iterations);
    cq_count(c, CQ_CTR_GJK_BUCKET + b, 1);
}

/// Adds every slot of c into sum (a plain array of CQ_CTR_COUNT values);
/// safe while c's owner keeps counting.
CQ_API void cq_counters_snapshot(const cq_counters *c, uint64_t sum[CQ_CTR_COUNT]);

/// The slot's snake_case name (static string): "sat_axes_skipped",
/// "gjk_calls", …; a test slot has its algorithm's name, a reason or action
/// slot its fallback's wire name, an unused slot "unused". The wire layer
/// groups them into metric families by slot range.
CQ_API const char *cq_counter_name(int slot);

#endif
