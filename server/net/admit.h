/// @file server/net/admit.h
/// Admission control, shared by both listeners: a bound on the requests in
/// flight (being run, or their answers being sent) and on the request bytes
/// held (HTTP bodies still arriving, stream lines not yet run). A request
/// beyond either bound is answered 503 with Retry-After at once instead of
/// waiting in a queue that could grow without end; nothing more of it is
/// read or run.
#ifndef CQD_ADMIT_H
#define CQD_ADMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cqd_admit {
    _Atomic long inflight;   ///< requests admitted and not yet answered
    _Atomic size_t buffered; ///< body bytes reserved
    _Atomic uint64_t shed;   ///< requests refused for either bound
    long max_inflight;
    size_t max_buffered;
} cqd_admit;

/// Sets the bounds; nothing in flight, nothing reserved.
void cqd_admit_init(cqd_admit *a, long max_inflight, size_t max_buffered);

/// Admits one request to run. Returns false, counting it as shed, at the
/// bound; on true the caller must cqd_admit_leave once it is answered.
bool cqd_admit_enter(cqd_admit *a);
/// Ends an admitted request.
void cqd_admit_leave(cqd_admit *a);

/// Reserves bytes for a body being received (all of a declared length up
/// front, a chunked body as it grows). Returns false, reserving nothing
/// and counting the request as shed, when the bound would be passed.
bool cqd_admit_reserve(cqd_admit *a, size_t bytes);
/// Gives back what cqd_admit_reserve reserved.
void cqd_admit_release(cqd_admit *a, size_t bytes);

#endif
