/// @file server/json_arena.h
/// jansson's allocations during a request come from a per-thread bump
/// arena: parsing a small body makes some 80 allocations that all die with
/// the request, and malloc/free for each cost about as much as the parse.
/// Allocations that do not fit, or happen outside a request, use malloc.
#ifndef CQD_JSON_ARENA_H
#define CQD_JSON_ARENA_H

#include <stddef.h>

/// One thread's arena (zero-initialise; storage is allocated on first use
/// and freed by cqd_json_arena_free).
typedef struct cqd_json_arena {
    char *base;
    size_t used, cap;
    int depth; ///< nested cqd_json_arena_enter calls
} cqd_json_arena;

/// Routes jansson's allocations through the arenas. Call once, before any
/// other jansson call (objects allocated before would be freed wrongly).
void cqd_json_install(void);

/// The calling thread allocates from a until the matching leave; returns
/// what was current before, for cqd_json_arena_leave. When the outermost
/// enter of a is left, everything allocated in it is released at once: no
/// jansson value made inside may be used after.
cqd_json_arena *cqd_json_arena_enter(cqd_json_arena *a);
void cqd_json_arena_leave(cqd_json_arena *a, cqd_json_arena *previous);

/// Frees a's storage (its thread must be done with it).
void cqd_json_arena_free(cqd_json_arena *a);

#endif
