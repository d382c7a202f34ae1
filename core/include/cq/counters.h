/// @file cq/counters.h
/// Per-thread query counters. Each query thread owns one cq_counters and is
/// its only writer; a scrape sums them with cq_counters_snapshot. Increments
/// are relaxed atomic load+store (plain moves on x86-64): no lock, no
/// formatting, no allocation in a query.
#ifndef CQ_COUNTERS_H
#define CQ_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "cq/algorithm.h"

/// Counter slots. The first CQ_ALG_COUNT slots count pair tests by algorithm.
enum {
    CQ_CTR_TESTS = 0,
    CQ_CTR_SAT_AXES_SKIPPED = CQ_CTR_TESTS + CQ_ALG_COUNT, ///< degenerate cross axes skipped
    CQ_CTR_ZERO_NORMALS,                                   ///< normals that could not be defined
    CQ_CTR_COUNT
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

/// Adds every slot of c into sum (a plain array of CQ_CTR_COUNT values);
/// safe while c's owner keeps counting.
void cq_counters_snapshot(const cq_counters *c, uint64_t sum[CQ_CTR_COUNT]);

/// The slot's snake_case name, e.g. "sat_axes_skipped"; for test slots the
/// algorithm's name (static string).
const char *cq_counter_name(int slot);

#endif
