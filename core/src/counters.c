#include "cq/counters.h"

void cq_counters_snapshot(const cq_counters *c, uint64_t sum[CQ_CTR_COUNT])
{
    for (int i = 0; i < CQ_CTR_COUNT; i++)
        sum[i] += atomic_load_explicit(&c->v[i], memory_order_relaxed);
}
