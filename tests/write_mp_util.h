/* Shared by the writer's MessagePack suites (check_proto_write_mp.c and
 * check_proto_write_mp_random.c): a writer over a fresh buffer, and
 * msgpuck (a separate implementation) as the oracle that the bytes form
 * exactly one value. */
#ifndef TESTS_WRITE_MP_UTIL_H
#define TESTS_WRITE_MP_UTIL_H

#include <check.h>
#include <msgpuck.h>
#include <stdint.h>

#include "cqp/encode.h"


/* A MessagePack writer over a fresh buffer. */
typedef struct mdoc {
    cqp_buf buf;
    cqp_writer w;
} mdoc;

static inline void mdoc_init(mdoc *d)
{
    d->buf = (cqp_buf){0};
    cqp_writer_init_format(&d->w, &d->buf, CQP_MSGPACK, false);
}

/* Oracle: msgpuck reads data[0..n) as exactly one well-formed value. */
static inline void assert_one_value(const char *data, size_t n)
{
    const char *p = data;
    ck_assert_msg(mp_check(&p, data + n) == 0, "msgpuck rejects the bytes");
    ck_assert_msg(p == data + n, "one value takes %td of %zu bytes", p - data, n);
}

/* The bytes written equal expected[0..n), form one value, and the buffer
 * is released. The first difference is reported by offset. */
static inline void mdoc_check(mdoc *d, const uint8_t *expected, size_t n)
{
    ck_assert(!d->buf.oom);
    ck_assert_int_eq(d->w.depth, 0);
    const uint8_t *got = (const uint8_t *)d->buf.data;
    for (size_t i = 0; i < n && i < d->buf.len; i++)
        ck_assert_msg(got[i] == expected[i], "byte %zu: 0x%02x, expected 0x%02x", i, got[i], expected[i]);
    ck_assert_uint_eq(d->buf.len, n);
    assert_one_value(d->buf.data, d->buf.len);
    cqp_buf_free(&d->buf);
}

#define MDOC_CHECK(d, ...)                                                     \
    do {                                                                       \
        static const uint8_t expected_[] = {__VA_ARGS__};                      \
        mdoc_check((d), expected_, sizeof expected_);                          \
    } while (0)

#endif
