/// @file cqp/alloc.h
/// proto's one allocator hook. Every block proto allocates for a request
/// (a decoded batch's arrays, the MessagePack check's scratch) comes from
/// here, so the server can serve them from its per-request arena and hold
/// them to --max-request-memory. Hulls and meshes are the core's, not
/// proto's: they outlive the request.
#ifndef CQP_ALLOC_H
#define CQP_ALLOC_H

#include <stddef.h>

#include "cqp/api.h"

typedef void *(*cqp_malloc_fn)(size_t size);
typedef void (*cqp_free_fn)(void *ptr);

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

#endif
