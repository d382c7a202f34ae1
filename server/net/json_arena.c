/// @file server/net/json_arena.c
/// The per-request arena behind jansson and proto (json_arena.h). Every block carries
/// a 16-byte header saying where it came from (and a heap block its size),
/// so a free works on any thread and whether or not an arena is current.
///
/// Why an arena: parsing a small body makes some 80 allocations that all
/// die with the request, and malloc/free for each cost about as much as
/// the parse (a 100,000-ray body makes millions). Why a budget: a 16 MiB
/// body of tiny values would otherwise decode to a tree, or to arrays, of
/// half a gigabyte.
#include "json_arena.h"

#include <jansson.h>
#include <stdint.h>

#include "cqp/alloc.h"
#include "state/alloc.h"

/// The chunk kept between requests: a typical request body's tree fits.
#define FIRST_CHUNK (256 * 1024)
/// Chunks added during a request double from this size up to the last.
#define NEXT_CHUNK (1024 * 1024)
#define LAST_CHUNK (64 * 1024 * 1024)
/// Blocks larger than this are malloc'd: they are the ones jansson grows
/// and frees, which a bump arena could not take back.
#define LARGE_BLOCK (64 * 1024)

enum { FROM_HEAP = 0x68656170u, FROM_ARENA = 0x6172656eu };

typedef struct block_header {
    uint64_t from;
    uint64_t size; ///< a heap block's payload size; also keeps the payload 16-byte aligned
} block_header;

struct cqd_json_chunk {
    struct cqd_json_chunk *next;
    size_t cap, used;
    _Alignas(16) char data[];
};

static _Thread_local cqd_json_arena *current;

/// True when a may not hold more bytes: the refusal is remembered, so the
/// server can tell a body too big to decode from a machine out of memory.
static bool over_budget(cqd_json_arena *a, size_t more)
{
    if (!a->budget || a->held + a->spilled + more <= a->budget)
        return false;
    a->over_budget = true;
    return true;
}

/// Puts a chunk with room for need bytes in front; false when out of memory.
static bool add_chunk(cqd_json_arena *a, size_t need)
{
    size_t cap = !a->chunks ? FIRST_CHUNK : a->chunks->cap < NEXT_CHUNK ? NEXT_CHUNK : a->chunks->cap * 2;
    if (cap > LAST_CHUNK)
        cap = LAST_CHUNK;
    if (cap < need)
        cap = need;
    struct cqd_json_chunk *c = cqd_malloc(sizeof *c + cap);
    if (!c) {
        a->failed = true;
        return false;
    }
    *c = (struct cqd_json_chunk){.next = a->chunks, .cap = cap};
    a->chunks = c;
    return true;
}

static void *from_chunks(cqd_json_arena *a, size_t need)
{
    if ((!a->chunks || need > a->chunks->cap - a->chunks->used) && !add_chunk(a, need))
        return NULL;
    block_header *h = (block_header *)(void *)(a->chunks->data + a->chunks->used);
    a->chunks->used += need;
    a->held += need;
    h->from = FROM_ARENA;
    return h + 1;
}

static void *json_alloc(size_t size)
{
    cqd_json_arena *a = current;
    if (size > SIZE_MAX / 2)
        return NULL;
    size_t need = (sizeof(block_header) + size + 15) & ~(size_t)15;
    if (a && over_budget(a, need))
        return NULL;
    if (a && size <= LARGE_BLOCK)
        return from_chunks(a, need);
    block_header *h = cqd_malloc(sizeof(block_header) + size);
    if (!h) {
        if (a)
            a->failed = true;
        return NULL;
    }
    h->from = FROM_HEAP;
    h->size = size;
    if (a)
        a->spilled += size;
    return h + 1;
}

/* Arena blocks are released all at once when the request ends. */
static void json_release(void *p)
{
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    if (h->from != FROM_HEAP)
        return;
    cqd_json_arena *a = current;
    if (a)
        a->spilled -= h->size < a->spilled ? h->size : a->spilled;
    cqd_free(h);
}

void cqd_json_install(void)
{
    json_set_alloc_funcs(json_alloc, json_release);
    cqp_set_alloc_funcs(json_alloc, json_release);
    cqp_set_buf_funcs(cqd_realloc, cqd_free); // answers outlive the arena
}

cqd_json_arena *cqd_json_arena_enter(cqd_json_arena *a, size_t budget)
{
    cqd_json_arena *previous = current;
    if (a->depth++ == 0) {
        a->budget = budget;
        a->over_budget = a->failed = false;
        a->held = a->spilled = 0;
    }
    current = a;
    return previous;
}

void cqd_json_arena_leave(cqd_json_arena *a, cqd_json_arena *previous)
{
    current = previous;
    if (--a->depth > 0)
        return;
    // Keep only the oldest chunk (the first-use one), emptied.
    while (a->chunks && a->chunks->next) {
        struct cqd_json_chunk *next = a->chunks->next;
        cqd_free(a->chunks);
        a->chunks = next;
    }
    if (a->chunks)
        a->chunks->used = 0;
    a->held = a->spilled = 0;
}

void cqd_json_arena_free(cqd_json_arena *a)
{
    while (a->chunks) {
        struct cqd_json_chunk *next = a->chunks->next;
        cqd_free(a->chunks);
        a->chunks = next;
    }
    *a = (cqd_json_arena){0};
}
