/* The one-call members (cqp_kv_*) and the answers' encoders of
 * cqp/encode.h that take no world (listing entries, batch counts, a
 * probe's status, lists that stop at a failed item, fallback records),
 * against hand-written JSON and, for the members, MessagePack bytes
 * worked out from the msgpack.org spec. The answers that read a world
 * are pinned by the e2e golden files. */
#include <check.h>
#include <msgpuck.h>
#include <string.h>

#include "cqp/encode.h"
#include "write_mp_util.h"

/* The JSON text w wrote over buf equals expected; the buffer is released. */
static void json_check(cqp_buf *buf, const cqp_writer *w, const char *expected)
{
    ck_assert(!buf->oom);
    ck_assert_int_eq(w->depth, 0);
    ck_assert_str_eq(buf->data, expected);
    cqp_buf_free(buf);
}

/* One member of each kind, in the writer's format. */
static void write_members(cqp_writer *w)
{
    cqp_obj_begin(w);
    cqp_kv_str(w, "s", "x");
    cqp_kv_str_or_null(w, "o", "y");
    cqp_kv_str_or_null(w, "n", NULL);
    cqp_kv_num(w, "d", 0.5);
    cqp_kv_int(w, "i", -1);
    cqp_kv_uint(w, "u", 200);
    cqp_kv_bool(w, "b", true);
    cqp_kv_null(w, "z");
    cqp_kv_vec3(w, "v", cq_v3(1, 2, 0));
    cqp_kv_obj(w, "m");
    cqp_obj_end(w);
    cqp_kv_arr(w, "a");
    cqp_arr_end(w);
    cqp_obj_end(w);
}

START_TEST(members_json)
{
    cqp_buf buf = {0};
    cqp_writer w;
    cqp_writer_init(&w, &buf, false);
    write_members(&w);
    json_check(&buf, &w,
               "{\"s\":\"x\",\"o\":\"y\",\"n\":null,\"d\":0.5,\"i\":-1,\"u\":200,\"b\":true,\"z\":null,"
               "\"v\":[1,2,0],\"m\":{},\"a\":[]}");
}
END_TEST

START_TEST(members_msgpack)
{
    mdoc d;
    mdoc_init(&d);
    write_members(&d.w);
    MDOC_CHECK(&d,
               0x8b,                                    /* fixmap, 11 members */
               0xa1, 's', 0xa1, 'x',                    /* fixstr keys and values */
               0xa1, 'o', 0xa1, 'y',
               0xa1, 'n', 0xc0,                         /* nil */
               0xa1, 'd', 0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, /* float64 0.5 */
               0xa1, 'i', 0xff,                         /* negative fixint -1 */
               0xa1, 'u', 0xcc, 0xc8,                   /* uint8 200 */
               0xa1, 'b', 0xc3,                         /* true */
               0xa1, 'z', 0xc0,
               0xa1, 'v', 0x93,                         /* fixarray 3 of float64 */
               0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,      /* 1 */
               0xcb, 0x40, 0x00, 0, 0, 0, 0, 0, 0,      /* 2 */
               0xcb, 0, 0, 0, 0, 0, 0, 0, 0,            /* 0 */
               0xa1, 'm', 0x80,                         /* empty fixmap */
               0xa1, 'a', 0x90);                        /* empty fixarray */
}
END_TEST

START_TEST(small_answers)
{
    cqp_buf buf = {0};
    cqp_writer w;
    cqp_writer_init(&w, &buf, false);
    cqp_write_batch_counts(&w, 3, 2, 1, 40);
    json_check(&buf, &w, "{\"upserted\":3,\"moved\":2,\"removed\":1,\"shapes\":40}");
    cqp_writer_init(&w, &buf, false);
    cqp_write_status(&w, "ready");
    json_check(&buf, &w, "{\"status\":\"ready\"}");
    cqp_writer_init(&w, &buf, false);
    cqp_write_world_entry(&w, "arena", 12, CQP_DURABILITY_NONE);
    json_check(&buf, &w, "{\"name\":\"arena\",\"shapes\":12,\"durability\":\"none\"}");
}
END_TEST

/* Items that write their index, failing (7) at fail_at. */
static int index_item(void *ctx, cqp_writer *w, int i)
{
    int fail_at = *(const int *)ctx;
    if (i == fail_at)
        return 7;
    cqp_int(w, i);
    return 0;
}

START_TEST(list_stops_at_failure)
{
    cqp_buf buf = {0};
    cqp_writer w;
    int never = -1, second = 1;
    cqp_writer_init(&w, &buf, false);
    ck_assert_int_eq(cqp_write_list(&w, "xs", 3, index_item, &never), 0);
    json_check(&buf, &w, "{\"xs\":[0,1,2]}");
    cqp_writer_init(&w, &buf, false);
    ck_assert_int_eq(cqp_write_list(&w, "xs", 0, index_item, &never), 0);
    json_check(&buf, &w, "{\"xs\":[]}");
    /* the item's result comes back and no later item is asked for */
    cqp_writer_init(&w, &buf, false);
    ck_assert_int_eq(cqp_write_list(&w, "xs", 3, index_item, &second), 7);
    json_check(&buf, &w, "{\"xs\":[0]}");
}
END_TEST

static const cq_fallback_record record = {
    .seq = 9, .reason = CQ_FB_GJK_ITERATION_LIMIT, .action = CQ_FBA_PREVIOUS_NORMAL,
    .shape_a = CQ_BOX, .shape_b = CQ_CONVEX, .iterations = 64, .tag_a = 3, .tag_b = 5};

#define FALLBACK_TAIL "\"shapes\":[\"box\",\"convex\"],\"iterations\":64,\"reason\":\"gjk_iteration_limit\"," \
                      "\"action\":\"previous_normal\","

/* A record in a world (ids known or gone), in a stateless request (the
 * tags are indices), and with its label unknown (all of it null). */
START_TEST(fallback_views)
{
    static const struct {
        cqp_fallback_view v;
        const char *json;
    } rows[] = {
        {{&record, true, 1.5, "arena", "crate", NULL, "req-1"},
         "{\"seq\":9,\"time\":1.5,\"world\":\"arena\",\"a\":\"crate\",\"b\":null," FALLBACK_TAIL
         "\"request_id\":\"req-1\"}"},
        {{&record, true, 2, NULL, NULL, NULL, NULL},
         "{\"seq\":9,\"time\":2,\"world\":null,\"a\":3,\"b\":5," FALLBACK_TAIL "\"request_id\":null}"},
        {{&record, false, 2, "arena", "crate", "barrel", "req-1"},
         "{\"seq\":9,\"time\":null,\"world\":null,\"a\":null,\"b\":null," FALLBACK_TAIL "\"request_id\":null}"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cqp_buf buf = {0};
        cqp_writer w;
        cqp_writer_init(&w, &buf, false);
        cqp_write_fallback(&w, &rows[i].v);
        json_check(&buf, &w, rows[i].json);
    }
}
END_TEST

Suite *proto_answers_suite(void)
{
    Suite *s = suite_create("proto_answers");
    TCase *tc = tcase_create("answers");
    tcase_add_test(tc, members_json);
    tcase_add_test(tc, members_msgpack);
    tcase_add_test(tc, small_answers);
    tcase_add_test(tc, list_stops_at_failure);
    tcase_add_test(tc, fallback_views);
    suite_add_tcase(s, tc);
    return s;
}
