/* The slot budget: a compare-and-swap loop, so a take that would cross the
 * cap leaves the count as it was and two racing takes can never both fit
 * in the room for one. */
#include "budget.h"

void cqd_budget_init(cqd_budget *b)
{
    atomic_init(&b->used, 0);
    atomic_init(&b->max, 0);
}

void cqd_budget_limit(cqd_budget *b, long max) { atomic_store(&b->max, max > 0 ? max : 0); }

bool cqd_budget_take(cqd_budget *b, long n)
{
    long max = atomic_load(&b->max);
    long used = atomic_load(&b->used);
    do {
        if (max > 0 && n > max - used)
            return false;
    } while (!atomic_compare_exchange_weak(&b->used, &used, used + n));
    return true;
}

void cqd_budget_force(cqd_budget *b, long n) { atomic_fetch_add(&b->used, n); }

void cqd_budget_give(cqd_budget *b, long n) { atomic_fetch_sub(&b->used, n); }

long cqd_budget_used(const cqd_budget *b) { return atomic_load((atomic_long *)&b->used); }

long cqd_budget_max(const cqd_budget *b) { return atomic_load((atomic_long *)&b->max); }
