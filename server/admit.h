/// @file server/admit.h
/// Admission control, shared by both listeners: a bound on the requests in
/// flight and on the body bytes they hold. A request beyond either bound
/// is answered 503 with Retry-After at once instead of waiting in a queue
/// that could grow without end; nothing else about it is read or run.
#ifndef CQD_ADMIT_H
#define CQD_ADMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cqd_admit {
    _Atomic long inflight;      ///< requests admitted and not yet answered
    _Atomic size_t buffered;    ///< body bytes the admitted requests reserved
    _Atomic uint64_t shed;      ///< requests refused for either bound
    long max_inflight;
    size_t max_buffered;
} cqd_admit;

/// Sets the bounds; nothing in flight.
void cqd_admit_init(cqd_admit *a, long max_inflight, size_t max_buffered);

/// Admits one request that will hold body bytes (0 when it has no body, or
/// does not know yet). Returns false, counting it as shed, when either
/// bound would be passed; on true the caller must cqd_admit_leave with the
/// bytes it holds by then.
bool cqd_admit_enter(cqd_admit *a, size_t body);

/// Reserves more body bytes for an admitted request (a chunked body that
/// grows). Returns false, reserving nothing and counting the request as
/// shed, when the buffered bound would be passed.
bool cqd_admit_grow(cqd_admit *a, size_t more);

/// Ends an admitted request that holds body bytes.
void cqd_admit_leave(cqd_admit *a, size_t body);

#endif
