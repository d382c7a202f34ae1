/// @file server/state/alloc.h
/// The server's one allocator hook. Every block the daemon allocates for
/// a request or for what it holds (registry, store, threads, transports'
/// connections, the request arena's chunks, answers' buffers through
/// proto's cqp_set_buf_funcs) goes through cqd_malloc and its kin, so an
/// embedder can route it and tests can inject allocation failure. The
/// core (cq/alloc.h) and proto (cqp/alloc.h) have hooks of their own;
/// docs/ARCHITECTURE.md says how the three fit.
#ifndef CQD_ALLOC_H
#define CQD_ALLOC_H

#include <stddef.h>

/// An allocator with libc's contracts: malloc_fn and realloc_fn return
/// NULL on failure (realloc_fn then leaves the block as it was); free_fn
/// accepts NULL.
typedef struct cqd_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} cqd_allocator;

/// Installs a (copied; NULL or any NULL member restores malloc, realloc
/// and free) for the whole process. Call while no server thread runs and
/// no block from the previous allocator is still to be freed by a
/// different one; not thread-safe.
void cqd_set_allocator(const cqd_allocator *a);

/// A new block of size bytes (the caller's: cqd_free it), or NULL.
void *cqd_malloc(size_t size);
/// A new zeroed block of n * size bytes (the caller's), or NULL, also when
/// the product overflows.
void *cqd_calloc(size_t n, size_t size);
/// Resizes ptr (NULL: a new block) to size bytes; NULL on failure, ptr
/// then untouched and still the caller's.
void *cqd_realloc(void *ptr, size_t size);
/// Frees a block from the functions above; NULL is ignored.
void cqd_free(void *ptr);

#endif
