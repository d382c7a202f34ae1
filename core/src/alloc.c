/* The allocator hook. The hook and the byte counter are the core's only
 * process-wide state: an allocator is by nature one per process. */
#include <stdatomic.h>
#include <stdlib.h>

#include "cq/alloc.h"

static void *cq_default_alloc(size_t size, void *ctx)
{
    (void)ctx;
    return malloc(size);
}

static void cq_default_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

static cq_allocator cq_allocator_current = {cq_default_alloc, cq_default_free, NULL};
static atomic_size_t cq_allocated;

void cq_set_allocator(const cq_allocator *allocator)
{
    cq_allocator_current = allocator ? *allocator : (cq_allocator){cq_default_alloc, cq_default_free, NULL};
}

void *cq_alloc(size_t size)
{
    if (size == 0)
        return NULL;
    void *p = cq_allocator_current.alloc(size, cq_allocator_current.ctx);
    if (p)
        atomic_fetch_add_explicit(&cq_allocated, size, memory_order_relaxed);
    return p;
}

void cq_free(void *ptr, size_t size)
{
    if (!ptr)
        return;
    cq_allocator_current.free(ptr, size, cq_allocator_current.ctx);
    atomic_fetch_sub_explicit(&cq_allocated, size, memory_order_relaxed);
}

size_t cq_alloc_bytes(void) { return atomic_load_explicit(&cq_allocated, memory_order_relaxed); }
