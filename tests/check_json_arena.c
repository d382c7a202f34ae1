/* The request arena behind jansson (server/json_arena.c). Oracles: values
 * read back from trees built in the arena equal the literals of the parsed
 * text; trees made before a request or spilling past the arena survive the
 * request's end; and under `make asan` AddressSanitizer and LeakSanitizer
 * see every heap block freed exactly once. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "json_arena.h"

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
        cqd_json_arena *prev = cqd_json_arena_enter(&arena);
        ck_assert_ptr_null(prev);
        json_t *inside = json_loads(doc, 0, NULL);
        check_doc(inside);
        ck_assert_uint_gt(arena.used, 0);
        json_decref(inside);
        json_decref(json_string("made and dropped inside"));
        cqd_json_arena_leave(&arena, prev);
        ck_assert_uint_eq(arena.used, 0); /* released at the request's end */
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
    cqd_json_arena *p0 = cqd_json_arena_enter(&outer);
    json_t *kept = json_loads(doc, 0, NULL);
    cqd_json_arena *p1 = cqd_json_arena_enter(&outer);
    ck_assert_ptr_eq(p1, &outer);
    json_t *big = json_array();
    for (int i = 0; i < 20000; i++) /* about 1 MB of nodes: past the arena */
        json_array_append_new(big, json_integer(i));
    cqd_json_arena_leave(&outer, p1);
    ck_assert_uint_gt(outer.used, 0); /* still inside the outer request */
    check_doc(kept);
    ck_assert_int_eq((int)json_array_size(big), 20000);
    for (int i = 0; i < 20000; i++)
        if (json_integer_value(json_array_get(big, (size_t)i)) != i)
            ck_abort_msg("element %d lost", i);
    json_decref(big);
    json_decref(kept);
    cqd_json_arena_leave(&outer, p0);
    ck_assert_uint_eq(outer.used, 0);
    cqd_json_arena_free(&outer);
}
END_TEST

Suite *json_arena_suite(void)
{
    Suite *s = suite_create("json_arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, trees_inside_and_outside_a_request);
    tcase_add_test(tc, nesting_and_spilling);
    suite_add_tcase(s, tc);
    return s;
}
