/* cqp_buf's limit (--max-response): past it a buffer is over, holds at
 * most the limit, and counts the length it would have had exactly. Oracles: the
 * sum of the appended lengths, and documents spelt out with snprintf. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/write.h"
#include "testutil.h"

Suite *proto_buf_suite(void);

START_TEST(appends_up_to_the_limit_fit)
{
    cqp_buf b = {.limit = 1000};
    char chunk[100];
    memset(chunk, 'a', sizeof chunk);
    for (int i = 0; i < 10; i++)
        cqp_buf_append(&b, chunk, sizeof chunk);
    ck_assert(!b.over && !b.oom);
    ck_assert_uint_eq(b.len, 1000);
    ck_assert_uint_ge(b.cap, 1001);
    ck_assert_uint_le(b.cap, 1001); /* never more storage than the limit needs */
    cqp_buf_append(&b, "b", 1);
    ck_assert(b.over && !b.oom);
    ck_assert_uint_eq(cqp_buf_size(&b), 1001);
    ck_assert_uint_le(b.len, 1000);
    char big[1001] = {0};
    cqp_buf_append(&b, big, sizeof big); /* longer than the window: dropped, still counted */
    ck_assert(b.oom);
    ck_assert_uint_eq(cqp_buf_size(&b), 2002);
    cqp_buf_free(&b);
}
END_TEST

START_TEST(past_the_limit_it_counts_what_it_drops)
{
    srand(25);
    for (int round = 0; round < 200; round++) {
        size_t limit = 1 + (size_t)(rand() % 5000), total = 0;
        cqp_buf b = {.limit = limit};
        char chunk[700];
        memset(chunk, 'x', sizeof chunk);
        for (int i = 0; i < 40; i++) {
            size_t n = (size_t)(rand() % (int)sizeof chunk);
            cqp_buf_append(&b, chunk, n);
            total += n;
            ck_assert_uint_le(b.len, limit);
            ck_assert(b.over == (total > limit));
            ck_assert_uint_eq(cqp_buf_size(&b), total);
            if (!b.over)
                ck_assert_uint_eq(b.len, total);
        }
        cqp_buf_free(&b);
    }
}
END_TEST

START_TEST(reserve_past_the_limit_is_over)
{
    cqp_buf b = {.limit = 64};
    ck_assert(cqp_buf_reserve(&b, 64));
    ck_assert(!b.over);
    cqp_buf_append(&b, "abc", 3);
    ck_assert(!cqp_buf_reserve(&b, 62));
    ck_assert(b.over && !b.oom);
    cqp_buf_append(&b, "defg", 4); /* into the window */
    ck_assert_uint_eq(cqp_buf_size(&b), 7);
    cqp_buf_reset(&b);
    ck_assert(!b.over && !b.oom);
    ck_assert_uint_eq(cqp_buf_size(&b), 0);
    ck_assert_uint_eq(b.limit, 64); /* reset keeps it; free clears it */
    cqp_buf_free(&b);
    ck_assert_uint_eq(b.limit, 0);
}
END_TEST

/* The document [0,1,...,n-1] as text, spelt out independently. */
static size_t array_text_length(int n)
{
    size_t len = 2;
    char digits[16];
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(digits, sizeof digits, "%d", i) + (i > 0);
    return len;
}

START_TEST(the_writer_stops_at_the_limit)
{
    enum { N = 20000 };
    size_t whole = array_text_length(N);
    cqp_buf b = {.limit = whole / 3};
    cqp_writer w;
    cqp_writer_init(&w, &b, false);
    cqp_arr_begin(&w);
    for (int i = 0; i < N; i++)
        cqp_int(&w, i);
    cqp_arr_end(&w);
    ck_assert(b.over && !b.oom);
    ck_assert_uint_le(b.len, whole / 3);
    ck_assert_uint_le(b.cap, whole / 3 + 1);
    ck_assert_uint_eq(cqp_buf_size(&b), whole);
    cqp_buf_free(&b);

    cqp_buf fits = {.limit = whole};
    cqp_writer_init(&w, &fits, false);
    cqp_arr_begin(&w);
    for (int i = 0; i < N; i++)
        cqp_int(&w, i);
    cqp_arr_end(&w);
    ck_assert(!fits.over && !fits.oom);
    ck_assert_uint_eq(fits.len, whole);
    cqp_buf_free(&fits);
}
END_TEST

Suite *proto_buf_suite(void)
{
    Suite *s = suite_create("proto_buf");
    TCase *tc = tcase_create("limit");
    tcase_add_test(tc, appends_up_to_the_limit_fit);
    tcase_add_test(tc, past_the_limit_it_counts_what_it_drops);
    tcase_add_test(tc, reserve_past_the_limit_is_over);
    tcase_add_test(tc, the_writer_stops_at_the_limit);
    suite_add_tcase(s, tc);
    return s;
}
