/// @file server/api/h_common.h
/// What the endpoint handlers (h_*.c) share: the world of the path, the
/// problems for missing worlds and shapes and for core failures, and
/// overflow-checked array allocation.
#ifndef CQD_H_COMMON_H
#define CQD_H_COMMON_H

#include <stddef.h>

#include "request.h"
#include "state/registry.h"

/// The world named by c->world, locked shared (write false) or exclusive;
/// NULL with a 404 problem filled. Release it with cqd_h_release.
cqd_world *cqd_h_acquire(cqd_call *c, bool write);
/// Releases a world taken with cqd_h_acquire.
void cqd_h_release(cqd_call *c, cqd_world *w);

/// 404 "no shape 'id' in world 'world'" at pointer (NULL for none); returns -1.
int cqd_h_no_shape(cqd_call *c, const char *id, const char *pointer);

/// Out of memory: 503 "unavailable" with Retry-After 1 and the detail "out
/// of memory" (memory may come back; the handler changed nothing). Returns -1.
int cqd_fail_oom(cqd_call *c);

/// A failure that is the server's, not the request's: out of memory as
/// cqd_fail_oom, CQ_ECANCELED as cqd_h_timed_out, anything else 500. what
/// names the step that failed. Returns -1.
int cqd_h_server_fail(cqd_call *c, int status, const char *what);

/// The shape slot budget refused the storage a change needed (CQ_EBUDGET):
/// 422 over-limit naming --max-shapes-total and the slots in use, at
/// pointer (NULL for none). Returns -1.
int cqd_h_over_budget(cqd_call *c, const char *pointer);
/// The pair cap refused a change (CQ_ELIMIT): 422 over-limit naming
/// --max-world-pairs, at pointer (NULL for none). Returns -1.
int cqd_h_over_pairs(cqd_call *c, const char *pointer);

/// Arms c's deadline: --request-timeout seconds from now (0: none). The
/// pipeline calls it as the handler starts.
void cqd_h_start_deadline(cqd_call *c);

/// The stop hook to give the core's queries: --request-timeout's deadline
/// (none when it is off) and the drain (never NULL).
const cq_deadline *cqd_h_deadline(cqd_call *c);

/// Whether c's deadline has passed (false without one) or the server
/// drains: for a handler's own loops, asked every so many units as the core does.
bool cqd_h_expired(cqd_call *c);

/// A query stopped at the deadline: 503 "timeout" with Retry-After (the
/// timeout's seconds: the same request is likely to meet the same limit
/// while the server is as loaded), the detail naming what was stopped and
/// --request-timeout, counted in collisiond_requests_timed_out_total.
/// The handler changed nothing. Stopped by the drain instead: 503
/// "unavailable" with Retry-After 1, not counted. Returns -1.
int cqd_h_timed_out(cqd_call *c, const char *what);

/// A new zeroed array of n elements of size bytes (cqd_free it); n may be 0.
/// NULL when out of memory or when n * size overflows.
void *cqd_h_array(size_t n, size_t size);
/// The same, not zeroed: for an array the core fills before anything
/// reads it, and whose size is a bound far above what it fills.
void *cqd_h_out_array(size_t n, size_t size);

#endif
