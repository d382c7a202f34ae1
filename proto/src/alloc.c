/* proto's allocator hook (cqp/alloc.h). The two pointers are proto's only
 * process-wide state: the server points them at its per-request arena. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/alloc.h"

static cqp_malloc_fn cqp_alloc_malloc = malloc;
static cqp_free_fn cqp_alloc_free = free;

void cqp_set_alloc_funcs(cqp_malloc_fn m, cqp_free_fn f)
{
    // Half a pair would free blocks through a function that did not make them.
    bool both = m && f;
    cqp_alloc_malloc = both ? m : malloc;
    cqp_alloc_free = both ? f : free;
}

void *cqp_malloc(size_t size) { return cqp_alloc_malloc(size); }

void *cqp_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = cqp_alloc_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void cqp_free(void *ptr)
{
    if (ptr)
        cqp_alloc_free(ptr);
}
