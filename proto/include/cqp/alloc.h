/// @file cqp/alloc.h
/// proto's one allocator hook, in two halves by lifetime. Every block proto
/// allocates for a request (a decoded batch's arrays, the MessagePack
/// check's scratch) comes from cqp_malloc, so the server can serve them
/// from its per-request arena and hold them to --max-request-memory. A
/// cqp_buf's storage (an answer, a journal record) outlives the request
/// and grows in place, so it has a realloc of its own (cqp_set_buf_funcs).
/// Hulls and meshes are the core's, not proto's: they outlive the request.
#ifndef CQP_ALLOC_H
#define CQP_ALLOC_H

#include <stddef.h>

#include "cqp/api.h"

typedef void *(*cqp_malloc_fn)(size_t size);
typedef void (*cqp_free_fn)(void *ptr);
typedef void *(*cqp_realloc_fn)(void *ptr, size_t size);

/// Routes proto's allocations through m and f (both non-NULL), or back to
/// malloc and free when either is NULL. Call before any other proto call;
/// not thread-safe.
CQP_API void cqp_set_alloc_funcs(cqp_malloc_fn m, cqp_free_fn f);

/// A new block of size bytes, or NULL.
CQP_API void *cqp_malloc(size_t size);
/// A new zeroed block of n * size bytes (NULL also when the product overflows).
CQP_API void *cqp_calloc(size_t n, size_t size);
/// Frees a block from cqp_malloc or cqp_calloc (NULL is ignored).
CQP_API void cqp_free(void *ptr);

/// Routes every cqp_buf's storage through r (realloc's contract) and f, or
/// back to realloc and free when either is NULL; cqp_buf_free releases it
/// with f, and so must whoever takes a buffer's data. Call before any
/// buffer holds storage; not thread-safe.
CQP_API void cqp_set_buf_funcs(cqp_realloc_fn r, cqp_free_fn f);

#endif
