/// @file cq/deadline.h
/// A caller's deadline for the world queries that can run long (contacts,
/// CCD, ray casts, sweeps, overlap). The core has no clock: it asks the
/// caller's hook, every CQ_DEADLINE_STRIDE units of work (a pair tested,
/// a candidate cast or swept; a pair or sweep with a mesh, which walks
/// its triangles, counts a whole stride), whether to stop, and a query told so
/// returns CQ_ECANCELED having changed nothing a later query reads.
#ifndef CQ_DEADLINE_H
#define CQ_DEADLINE_H

#include <stdbool.h>

/// Units of work between two calls of the hook: a clock read costs tens of
/// nanoseconds, a unit at least as much, so the checks cost under 1%.
#define CQ_DEADLINE_STRIDE 256

/// The hook. expired(ctx) returns true once the work should stop; it may
/// be called from any thread running a query, concurrently for concurrent
/// queries (a query never calls it again after it returned true). A NULL
/// cq_deadline pointer, or a NULL expired, means no deadline.
typedef struct cq_deadline {
    bool (*expired)(void *ctx);
    void *ctx;
} cq_deadline;

#endif
