/* Reading the stream's MessagePack replies in tests (stream_mp.h). */
#include "stream_mp.h"

#include <check.h>
#include <msgpuck.h>
#include <string.h>

const char *smp_member(const char *map, const char *key)
{
    const char *p = map;
    ck_assert_int_eq(mp_typeof(*p), MP_MAP);
    uint32_t n = mp_decode_map(&p);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len;
        const char *k = mp_decode_str(&p, &len);
        if (len == strlen(key) && memcmp(k, key, len) == 0)
            return p;
        mp_next(&p);
    }
    return NULL;
}

const char *smp_frame_of(const cqp_buf *out, size_t from)
{
    ck_assert(!out->oom);
    ck_assert_uint_ge(out->len - from, 6);
    const unsigned char *b = (const unsigned char *)out->data + from;
    ck_assert_int_eq(b[0], 0xce);
    size_t n = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
    ck_assert_uint_eq(n, out->len - from - 5);
    const char *env = out->data + from + 5, *end = env;
    ck_assert_int_eq(mp_check(&end, env + n), 0);
    ck_assert_ptr_eq(end, env + n);
    return env;
}

const char *smp_text(const char *v)
{
    static char text[256];
    ck_assert_int_eq(mp_typeof(*v), MP_STR);
    uint32_t n;
    const char *s = mp_decode_str(&v, &n);
    ck_assert_uint_lt(n, sizeof text);
    memcpy(text, s, n);
    text[n] = '\0';
    return text;
}

int64_t smp_integer(const char *v)
{
    ck_assert_int_eq(mp_typeof(*v), MP_UINT);
    return (int64_t)mp_decode_uint(&v);
}
