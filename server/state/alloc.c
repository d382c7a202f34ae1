/// @file server/state/alloc.c
/// The server's allocator hook (alloc.h). The copy in `hook` is the
/// server's only allocation state: set before threads start, then only read.
#include "alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const cqd_allocator libc_allocator = {malloc, realloc, free};
static cqd_allocator hook = {malloc, realloc, free};

void cqd_set_allocator(const cqd_allocator *a)
{
    // Part of an allocator would free blocks through a function that did not make them.
    bool whole = a && a->malloc_fn && a->realloc_fn && a->free_fn;
    hook = whole ? *a : libc_allocator;
}

void *cqd_malloc(size_t size) { return hook.malloc_fn(size); }

void *cqd_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = hook.malloc_fn(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *cqd_realloc(void *ptr, size_t size) { return hook.realloc_fn(ptr, size); }

void cqd_free(void *ptr)
{
    if (ptr)
        hook.free_fn(ptr);
}
