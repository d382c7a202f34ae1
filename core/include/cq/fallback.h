/// @file cq/fallback.h
/// A bounded log of GJK/EPA failures and what the narrow phase did instead.
/// Each query thread owns one ring in caller-provided storage and is its
/// only writer; any thread may read it at any time (per-slot sequence
/// stamps: a record being overwritten is skipped, never returned torn). A
/// server keeps one ring per thread, gives them one shared sequence clock,
/// and merges their reads by seq. No allocation, no locks, no I/O.
#ifndef CQ_FALLBACK_H
#define CQ_FALLBACK_H

#include <stdatomic.h>
#include <stdint.h>

#include "cq/api.h"
#include "cq/collision.h"
#include "cq/gjk.h"

/// The fallback reason for an EPA status (CQ_FB_NONE for CQ_EPA_OK).
CQ_API cq_fallback_reason cq_fallback_from_epa(cq_epa_status s);

/// One failure. The reason is a cq_fallback_reason and the action a
/// cq_fallback_action (collision.h, with their wire names); shapes are
/// cq_shape_type values; tags are opaque ids the caller attaches (e.g.
/// world and shape handles).
typedef struct cq_fallback_record {
    uint64_t seq;        ///< assigned by cq_fallback_log_push
    uint8_t reason;      ///< cq_fallback_reason
    uint8_t action;      ///< cq_fallback_action
    uint8_t shape_a, shape_b;
    uint16_t iterations; ///< iterations spent before giving up
    uint64_t tag_a, tag_b;
} cq_fallback_record;

/// One ring slot (caller storage; treat as opaque).
typedef struct cq_fallback_slot {
    _Atomic uint64_t stamp;   ///< 2 * (push index) + 1 while written, + 2 once complete
    _Atomic uint64_t word[4]; ///< the packed record
} cq_fallback_slot;

/// A ring of the most recent failures (treat as opaque; do not copy).
typedef struct cq_fallback_log {
    cq_fallback_slot *slots;
    uint64_t capacity;
    _Atomic uint64_t pushed;  ///< records ever pushed
    _Atomic uint64_t *clock;  ///< shared sequence source, or NULL
} cq_fallback_log;

/// Sets up a ring over slots[0..capacity) (zeroing them). clock, when not
/// NULL, is a sequence counter shared by every ring whose reads are merged
/// (seq = ++*clock); when NULL, seq counts this ring's pushes from 1.
/// Returns CQ_OK, or CQ_ERANGE for a capacity below 1 or NULL slots.
CQ_API int cq_fallback_log_init(cq_fallback_log *log, cq_fallback_slot *slots, int capacity,
                                _Atomic uint64_t *clock);

/// Appends a copy of rec (its seq is ignored), overwriting the oldest record
/// when the ring is full, and returns the seq it was given. Only the ring's
/// owner thread may push.
CQ_API uint64_t cq_fallback_log_push(cq_fallback_log *log, const cq_fallback_record *rec);

/// Reports one fallback: counts its reason, its action and a zero normal in
/// counters (may be NULL) and, when log is not NULL, pushes rec there. The
/// one way the narrow phase and the sweeps report a GJK/EPA failure.
CQ_API void cq_fallback_report(cq_counters *counters, cq_fallback_log *log, const cq_fallback_record *rec);

/// Copies up to max of the most recent records into out, newest first, and
/// returns how many. Safe from any thread while the owner pushes: a record
/// overwritten during the read is skipped.
CQ_API int cq_fallback_log_read(const cq_fallback_log *log, cq_fallback_record *out, int max);

#endif
