/// @file server/state/budget.h
/// One server-wide budget of shape slots (--max-shapes-total): every world
/// is charged the slots its storage holds (cq_world_stats.capacity), from
/// before they are allocated until the world is freed. A counter under
/// atomics, so worlds charge it under their own locks, never a shared one.
#ifndef CQD_BUDGET_H
#define CQD_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>

/// The budget: slots in use and the most allowed (0: no cap).
typedef struct cqd_budget {
    atomic_long used;
    atomic_long max;
} cqd_budget;

/// An empty budget without a cap (recovery charges what it accepted; the
/// daemon sets the cap once it is done, as with cqd_registry_limit).
void cqd_budget_init(cqd_budget *b);
/// Sets the cap (0: none). Slots already in use stay charged even above it:
/// only later takes are refused until enough are given back.
void cqd_budget_limit(cqd_budget *b, long max);
/// Takes n slots (n >= 0) if used + n stays within the cap: true, else
/// false and nothing is taken.
bool cqd_budget_take(cqd_budget *b, long n);
/// Takes n slots whatever the cap says (storage that exists already).
void cqd_budget_force(cqd_budget *b, long n);
/// Gives n slots back (n >= 0, taken before).
void cqd_budget_give(cqd_budget *b, long n);
/// Slots in use now.
long cqd_budget_used(const cqd_budget *b);
/// The cap (0: none).
long cqd_budget_max(const cqd_budget *b);

#endif
