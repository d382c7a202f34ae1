/* The stream's MessagePack replies read with msgpuck, an independent
 * decoder (check_stream.c, check_stream_server.c). Each fails the test
 * at hand on a malformed value. */
#ifndef CQ_TESTS_STREAM_MP_H
#define CQ_TESTS_STREAM_MP_H

#include <stddef.h>
#include <stdint.h>

#include "cqp/write.h"

/* The value of key in the map at map, or NULL (borrowed: points into it). */
const char *smp_member(const char *map, const char *key);
/* The frame in out[from..]: its prefix names exactly the bytes after it,
 * which hold one valid value; returns the envelope. */
const char *smp_frame_of(const cqp_buf *out, size_t from);
/* The string at v, in a static buffer (valid until the next call). */
const char *smp_text(const char *v);
/* The unsigned integer at v. */
int64_t smp_integer(const char *v);

#endif
