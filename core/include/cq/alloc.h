/// @file cq/alloc.h
/// The core's one allocator hook. Every heap byte the core uses (hulls,
/// meshes, world storage; never a query) goes through cq_alloc/cq_free, so
/// an embedder can route it and tests can inject allocation failure.
#ifndef CQ_ALLOC_H
#define CQ_ALLOC_H

#include <stddef.h>

#include "cq/api.h"

/// An allocator: alloc returns NULL on failure; free accepts NULL.
typedef struct cq_allocator {
    void *(*alloc)(size_t size, void *ctx);
    void (*free)(void *ptr, size_t size, void *ctx);
    void *ctx;
} cq_allocator;

/// Installs an allocator for the whole process (NULL restores malloc/free).
/// Call before any core object exists.
CQ_API void cq_set_allocator(const cq_allocator *allocator);

/// Allocates size bytes (NULL on failure or when size is 0). The caller
/// owns the block and returns it with cq_free and the same size.
CQ_API void *cq_alloc(size_t size);

/// Releases a block from cq_alloc; NULL is ignored.
CQ_API void cq_free(void *ptr, size_t size);

/// Bytes currently allocated through the hook (for metrics and leak tests).
CQ_API size_t cq_alloc_bytes(void);

#endif
