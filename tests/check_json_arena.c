/* The request arena behind jansson (server/net/json_arena.c). Oracles: values
 * read back from trees built in the arena equal the literals of the parsed
 * text; trees made before a request or spilling past the arena survive the
 * request's end; a request past its budget is refused (the smallest
 * possible node, a 24-byte integer, puts a floor under what a document of
 * n values needs) and the next request starts afresh; and under `make asan` AddressSanitizer and LeakSanitizer
 * see every heap block freed exactly once. proto's blocks (cqp_malloc)
 * are held to the same budget: a block takes at least the bytes asked for,
 * so of blocks of s bytes no more than budget / s fit, and a block larger
 * than the budget never does. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/alloc.h"
#include "net/json_arena.h"

Suite *json_arena_suite(void);

static const char doc[] = "{\"a\":[1,2.5,\"x\"],\"b\":{\"c\":null,\"d\":true}}";

/* The document's values, checked one by one against its text. */
static void check_doc(const json_t *v)
{
    ck_assert_ptr_nonnull(v);
    const json_t *a = json_object_get(v, "a");
    ck_assert_int_eq((int)json_array_size(a), 3);
    ck_assert_int_eq((int)json_integer_value(json_array_get(a, 0)), 1);
    ck_assert_double_eq(json_real_value(json_array_get(a, 1)), 2.5);
    ck_assert_str_eq(json_string_value(json_array_get(a, 2)), "x");
    ck_assert(json_is_null(json_object_get(json_object_get(v, "b"), "c")));
    ck_assert(json_is_true(json_object_get(json_object_get(v, "b"), "d")));
}

START_TEST(trees_inside_and_outside_a_request)
{
    cqd_json_install();
    json_t *before = json_loads(doc, 0, NULL); /* no arena is current: heap */
    check_doc(before);
    cqd_json_arena arena = {0};
    for (int round = 0; round < 3; round++) {
        cqd_json_arena *prev = cqd_json_arena_enter(&arena, 0);
        ck_assert_ptr_null(prev);
        json_t *inside = json_loads(doc, 0, NULL);
        check_doc(inside);
        ck_assert_uint_gt(arena.held, 0);
        json_decref(inside);
        json_decref(json_string("made and dropped inside"));
        cqd_json_arena_leave(&arena, prev);
        ck_assert_uint_eq(arena.held, 0); /* released at the request's end */
    }
    check_doc(before); /* untouched by the requests' reuse of the arena */
    json_decref(before);
    cqd_json_arena_free(&arena);
}
END_TEST

/* Nested requests share the arena; it is released by the outermost leave
 * only, and a tree larger than the arena spills to the heap intact. */
START_TEST(nesting_and_spilling)
{
    cqd_json_install();
    cqd_json_arena outer = {0};
    cqd_json_arena *p0 = cqd_json_arena_enter(&outer, 0);
    json_t *kept = json_loads(doc, 0, NULL);
    cqd_json_arena *p1 = cqd_json_arena_enter(&outer, 0);
    ck_assert_ptr_eq(p1, &outer);
    json_t *big = json_array();
    for (int i = 0; i < 20000; i++) /* about 1 MB of nodes: past the arena */
        json_array_append_new(big, json_integer(i));
    cqd_json_arena_leave(&outer, p1);
    ck_assert_uint_gt(outer.held, 0); /* still inside the outer request */
    check_doc(kept);
    ck_assert_int_eq((int)json_array_size(big), 20000);
    for (int i = 0; i < 20000; i++)
        if (json_integer_value(json_array_get(big, (size_t)i)) != i)
            ck_abort_msg("element %d lost", i);
    json_decref(big);
    json_decref(kept);
    cqd_json_arena_leave(&outer, p0);
    ck_assert_uint_eq(outer.held, 0);
    cqd_json_arena_free(&outer);
}
END_TEST

/* "[0,0,...,0]" with n zeros; the caller frees it. */
static char *zeros(int n)
{
    char *text = malloc((size_t)n * 2 + 2);
    ck_assert_ptr_nonnull(text);
    text[0] = '[';
    for (int i = 0; i < n; i++) {
        text[1 + 2 * i] = '0';
        text[2 + 2 * i] = i + 1 < n ? ',' : ']';
    }
    text[2 * n + 1] = '\0';
    return text;
}

START_TEST(budget)
{
    cqd_json_install();
    const size_t limit = 1 << 20;
    char *small = zeros(1000), *big = zeros(100000); /* 100k nodes of >= 24 bytes: over 2 MB */
    cqd_json_arena arena = {0};
    for (int round = 0; round < 2; round++) {
        cqd_json_arena *prev = cqd_json_arena_enter(&arena, limit);
        ck_assert_ptr_null(json_loads(big, 0, NULL));
        ck_assert(arena.over_budget);
        cqd_json_arena_leave(&arena, prev);

        prev = cqd_json_arena_enter(&arena, limit);
        ck_assert(!arena.over_budget); /* a new request starts afresh */
        json_t *v = json_loads(small, 0, NULL);
        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq((int)json_array_size(v), 1000);
        json_decref(v);
        /* Spilled blocks given back count no more: 8 strings of 200 kB
         * one after the other fit a 1 MiB budget, though not all at once. */
        for (int i = 0; i < 8; i++) {
            json_t *s = json_stringn_nocheck(big, 200000);
            ck_assert_ptr_nonnull(s);
            json_decref(s);
        }
        ck_assert(!arena.over_budget);
        cqd_json_arena_leave(&arena, prev);
    }
    cqd_json_arena_free(&arena);
    free(small);
    free(big);
}
END_TEST

/* proto's hook is the arena's: a cqp_malloc inside a request is charged
 * to its budget, refused past it, and gone with the request. */
START_TEST(proto_blocks_are_charged)
{
    cqd_json_install();
    const size_t limit = 1 << 20, small = 1000;
    cqd_json_arena arena = {0};
    cqd_json_arena *prev = cqd_json_arena_enter(&arena, limit);
    ck_assert_ptr_null(cqp_malloc(2 * limit)); /* larger than the whole budget */
    ck_assert(arena.over_budget);
    cqd_json_arena_leave(&arena, prev);

    prev = cqd_json_arena_enter(&arena, limit);
    ck_assert(!arena.over_budget);
    size_t fitted = 0;
    for (char *p; (p = cqp_malloc(small)) != NULL; fitted++) {
        memset(p, 0xab, small); /* the block is usable for all its bytes */
        ck_assert_uint_ge(arena.held + arena.spilled, (fitted + 1) * small);
    }
    ck_assert(arena.over_budget);
    ck_assert_uint_le(fitted, limit / small);
    ck_assert_uint_gt(fitted, 0);
    cqd_json_arena_leave(&arena, prev);
    ck_assert_uint_eq(arena.held, 0);

    /* A large block is malloc'd: freed, it counts no more. */
    prev = cqd_json_arena_enter(&arena, limit);
    for (int i = 0; i < 8; i++) {
        unsigned char *p = cqp_calloc(200000, 1);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(p[0] | p[199999], 0);
        ck_assert_uint_ge(arena.spilled, 200000);
        cqp_free(p);
        ck_assert_uint_eq(arena.spilled, 0);
    }
    ck_assert(!arena.over_budget);
    cqd_json_arena_leave(&arena, prev);
    cqd_json_arena_free(&arena);

    /* Outside a request: the heap, with no budget. */
    void *outside = cqp_malloc(2 * limit);
    ck_assert_ptr_nonnull(outside);
    cqp_free(outside);
}
END_TEST

Suite *json_arena_suite(void)
{
    Suite *s = suite_create("json_arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, trees_inside_and_outside_a_request);
    tcase_add_test(tc, nesting_and_spilling);
    tcase_add_test(tc, budget);
    tcase_add_test(tc, proto_blocks_are_charged);
    suite_add_tcase(s, tc);
    return s;
}
