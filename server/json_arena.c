/// @file server/json_arena.c
/// The per-request arena behind jansson (json_arena.h). Every block carries
/// a 16-byte header saying where it came from, so a free works on any
/// thread and whether or not an arena is current.
#include "json_arena.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

/// Arena storage per thread: a typical request body's tree fits; a larger
/// one spills to malloc.
#define ARENA_BYTES (256 * 1024)

enum { FROM_HEAP = 0x68656170u, FROM_ARENA = 0x6172656eu };

typedef struct block_header {
    uint64_t from;
    uint64_t pad; ///< keeps the payload 16-byte aligned
} block_header;

static _Thread_local cqd_json_arena *current;

static void *json_alloc(size_t size)
{
    cqd_json_arena *a = current;
    if (size <= ARENA_BYTES) {
        size_t need = (sizeof(block_header) + size + 15) & ~(size_t)15;
        if (a && !a->base && (a->base = malloc(ARENA_BYTES)) != NULL)
            a->cap = ARENA_BYTES;
        if (a && a->base && need <= a->cap - a->used) {
            block_header *h = (block_header *)(void *)(a->base + a->used);
            a->used += need;
            h->from = FROM_ARENA;
            return h + 1;
        }
    } else if (size > SIZE_MAX - sizeof(block_header)) {
        return NULL;
    }
    block_header *h = malloc(sizeof(block_header) + size);
    if (!h)
        return NULL;
    h->from = FROM_HEAP;
    return h + 1;
}

/* Arena blocks are released all at once when the request ends. */
static void json_release(void *p)
{
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    if (h->from == FROM_HEAP)
        free(h);
}

void cqd_json_install(void) { json_set_alloc_funcs(json_alloc, json_release); }

cqd_json_arena *cqd_json_arena_enter(cqd_json_arena *a)
{
    cqd_json_arena *previous = current;
    a->depth++;
    current = a;
    return previous;
}

void cqd_json_arena_leave(cqd_json_arena *a, cqd_json_arena *previous)
{
    if (--a->depth == 0)
        a->used = 0;
    current = previous;
}

void cqd_json_arena_free(cqd_json_arena *a)
{
    free(a->base);
    *a = (cqd_json_arena){0};
}
