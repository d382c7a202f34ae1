/* proto's allocator hook (cqp/alloc.h). The four pointers are proto's only
 * process-wide state: the server points the first two at its per-request
 * arena, the buffers' two at its own hook. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf_internal.h"
#include "cqp/alloc.h"

static cqp_malloc_fn block_malloc = malloc;
static cqp_free_fn block_free = free;
static cqp_realloc_fn buf_realloc = realloc;
static cqp_free_fn buf_release = free;

void cqp_set_alloc_funcs(cqp_malloc_fn m, cqp_free_fn f)
{
    // Half a pair would free blocks through a function that did not make them.
    bool both = m && f;
    block_malloc = both ? m : malloc;
    block_free = both ? f : free;
}

void *cqp_malloc(size_t size) { return block_malloc(size); }

void *cqp_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = block_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void cqp_free(void *ptr)
{
    if (ptr)
        block_free(ptr);
}

void cqp_set_buf_funcs(cqp_realloc_fn r, cqp_free_fn f)
{
    bool both = r && f;
    buf_realloc = both ? r : realloc;
    buf_release = both ? f : free;
}

void *cqp__buf_realloc(void *ptr, size_t size) { return buf_realloc(ptr, size); }

void cqp__buf_free(void *ptr)
{
    if (ptr)
        buf_release(ptr);
}
