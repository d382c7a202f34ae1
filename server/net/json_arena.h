/// @file server/net/json_arena.h
/// The request arena: jansson's allocations and proto's (cqp/alloc.h: the
/// decoders' arrays, the MessagePack check's scratch) during a request
/// come from a per-thread bump arena, and are all released when the
/// request ends. Large blocks (long strings, big arrays' storage, which
/// jansson grows by reallocating), the chunks and allocations outside a
/// request come from the server's hook (state/alloc.h). A request's
/// allocations are held to a budget, whichever wire format its body came
/// in.
#ifndef CQD_JSON_ARENA_H
#define CQD_JSON_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct cqd_json_chunk;

/// One thread's arena (zero-initialise; its first chunk is allocated on
/// first use and kept between requests; the chunks a large request adds
/// are freed when it ends; cqd_json_arena_free frees everything).
typedef struct cqd_json_arena {
    struct cqd_json_chunk *chunks; ///< the chunk being filled first; the kept one last
    size_t held;      ///< bytes handed out from the chunks during the request
    size_t spilled;   ///< bytes live in malloc'd blocks (the large ones) made during the request
    size_t budget;    ///< the most the request may hold (held + spilled); 0 = no limit
    bool over_budget; ///< an allocation was refused for the budget during the request
    bool failed;      ///< malloc failed during the request (jansson may report it as a syntax error)
    int depth;        ///< nested cqd_json_arena_enter calls
} cqd_json_arena;

/// Routes jansson's and proto's allocations through the arenas, and
/// proto's buffers (answers, which outlive a request) through the
/// server's hook. Call once, before any other jansson or proto call
/// (blocks allocated before would be freed wrongly).
void cqd_json_install(void);

/// The calling thread allocates from a until the matching leave; returns
/// what was current before, for cqd_json_arena_leave. The outermost enter
/// starts a request: over_budget is cleared and budget set (bytes, 0 = no
/// limit). When it is left, everything allocated in the arena is released
/// at once: no jansson value or proto block made inside may be used after.
cqd_json_arena *cqd_json_arena_enter(cqd_json_arena *a, size_t budget);
void cqd_json_arena_leave(cqd_json_arena *a, cqd_json_arena *previous);

/// Frees a's storage (its thread must be done with it).
void cqd_json_arena_free(cqd_json_arena *a);

#endif
