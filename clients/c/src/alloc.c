/* The one allocator hook, and the buffers and arrays built on it. */
#include <stdlib.h>

#include "cqc_int.h"

static void *libc_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, n);
}

/* Set once before use (cqc.h); read by every allocation after. */
static void *(*hook)(void *, void *, size_t) = libc_realloc;
static void *hook_ud;

void cqc_set_allocator(void *(*realloc_fn)(void *ud, void *p, size_t n), void *ud)
{
    hook = realloc_fn ? realloc_fn : libc_realloc;
    hook_ud = realloc_fn ? ud : NULL;
}

void *cqc__realloc(void *p, size_t n)
{
    return n ? hook(hook_ud, p, n) : NULL;
}

void cqc__free(void *p)
{
    if (p)
        hook(hook_ud, p, 0);
}

bool cqc__grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return false;
        n *= 2;
    }
    if (n > SIZE_MAX / size)
        return false;
    void *p = cqc__realloc(*items, n * size);
    if (!p)
        return false;
    *items = p;
    *cap = n;
    return true;
}

char *cqc__reserve(cqc_buf *b, size_t n)
{
    if (n > SIZE_MAX - b->len)
        return NULL;
    void *p = b->p;
    if (!cqc__grow(&p, &b->cap, b->len + n, 1))
        return NULL;
    b->p = p;
    return b->p + b->len;
}

void cqc__buf_free(cqc_buf *b)
{
    cqc__free(b->p);
    *b = (cqc_buf){0};
}
