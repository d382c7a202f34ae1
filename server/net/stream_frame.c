/// @file server/net/stream_frame.c
/// Splitting a MessagePack connection's bytes into frames (API.md section
/// 11): 0xce, the envelope's length N as 4 bytes big-endian, then N bytes.
/// The prefix is read first, so a frame over --max-body is refused before
/// a byte of it is buffered, and a frame shed for --max-buffered is
/// dropped by count, without looking at its bytes.
#include <string.h>

#include "stream_internal.h"

#define KEEP_CAPACITY (64 * 1024)

// What a frame's first `bytes` bytes, prefix included, are charged.
static size_t charged(const cqd_frames *f, size_t bytes) { return bytes > f->uncharged ? bytes - f->uncharged : 0; }

size_t cqd_frames_charge(const cqd_frames *f, size_t len) { return charged(f, CQD_FRAME_PREFIX + len); }

// Charges the frame for growing from `had` to had + n bytes, prefix
// included (so a frame of N costs what a line of 5 + N bytes does).
static bool hold(cqd_frames *f, size_t had, size_t n)
{
    size_t more = charged(f, had + n) - charged(f, had);
    if (more > 0 && f->admit && !cqd_admit_reserve(f->admit, more))
        return false;
    f->held += more;
    return true;
}

static void give_back(cqd_frames *f)
{
    if (f->admit && f->held > 0)
        cqd_admit_release(f->admit, f->held);
    f->held = 0;
}

// Between frames again, keeping a small buffer for the next frame rather
// than one sized for a huge frame.
static void end_frame(cqd_frames *f)
{
    if (f->partial.cap > KEEP_CAPACITY)
        cqp_buf_free(&f->partial);
    else
        cqp_buf_reset(&f->partial);
    f->prefix_len = 0;
    f->length = 0;
    f->got = 0;
    f->skipping = false;
}

// The frame's length, once its prefix is whole.
static size_t prefix_length(const cqd_frames *f)
{
    const unsigned char *b = f->prefix;
    return (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | (size_t)b[4];
}

// The frame cannot be charged more: shed it (emit with NULL, in its place
// in the order) and drop the rest of it by count.
static int shed(cqd_frames *f, int (*emit)(void *ctx, const char *env, size_t len), void *ctx)
{
    give_back(f);
    cqp_buf_reset(&f->partial);
    f->skipping = true;
    return emit(ctx, NULL, 0);
}

// Takes prefix bytes; a wrong mark is seen at its first byte, the length
// once the prefix is whole. *used is what was consumed.
static cqd_frames_result take_prefix(cqd_frames *f, const char *data, size_t n, size_t *used,
                                     int (*emit)(void *ctx, const char *env, size_t len), void *ctx)
{
    size_t k = CQD_FRAME_PREFIX - f->prefix_len;
    k = k < n ? k : n;
    memcpy(f->prefix + f->prefix_len, data, k);
    f->prefix_len += k;
    *used = k;
    if (f->prefix[0] != CQD_FRAME_MARK)
        return CQD_FRAMES_LOST;
    if (f->prefix_len < CQD_FRAME_PREFIX)
        return CQD_FRAMES_OK;
    f->length = prefix_length(f);
    if (f->length == 0)
        return CQD_FRAMES_LOST;
    if (f->length > f->max)
        return CQD_FRAMES_TOO_LONG;
    if (!hold(f, 0, CQD_FRAME_PREFIX) && shed(f, emit, ctx) != 0)
        return CQD_FRAMES_FAILED;
    return CQD_FRAMES_OK;
}

// Hands a finished frame's envelope to emit, with its charge.
static int emit_frame(cqd_frames *f, const char *env, size_t len,
                      int (*emit)(void *ctx, const char *env, size_t len), void *ctx)
{
    f->held = 0; // the callee's now: cqd_frames_charge(f, len)
    return emit(ctx, env, len);
}

// The buffer of a frame whose envelope is this long is allocated whole
// when its first bytes come, so they are read into place and never moved;
// a longer one grows from there in steps of what it holds (a prefix alone
// never makes the splitter allocate more than this ahead of the bytes).
#define WHOLE_UP_TO (32u << 20)
// Spare room below this is grown before a read into place.
#define READ_MIN (64u * 1024)

// True when data is where cqd_frames_space let the next bytes be read.
static bool in_place(const cqd_frames *f, const char *data)
{
    return f->partial.data && data == f->partial.data + f->partial.len;
}

// Room for the next step of the frame being buffered (of `left` bytes
// still to come); false when memory ran out.
static bool make_room(cqd_frames *f, size_t left)
{
    size_t step = f->partial.len > WHOLE_UP_TO ? f->partial.len : WHOLE_UP_TO;
    return cqp_buf_reserve(&f->partial, left < step ? left : step);
}

// Buffers seg bytes of the frame, unless they were read into place.
static bool buffer(cqd_frames *f, const char *data, size_t seg)
{
    if (in_place(f, data)) {
        f->partial.len += seg;
        f->partial.data[f->partial.len] = '\0';
        return true;
    }
    if (f->partial.len == 0)
        make_room(f, f->length - f->got); // else the append grows it
    cqp_buf_append(&f->partial, data, seg);
    return !f->partial.oom;
}

// Takes envelope bytes of the frame whose prefix is whole.
static cqd_frames_result take_body(cqd_frames *f, const char *data, size_t n, size_t *used,
                                   int (*emit)(void *ctx, const char *env, size_t len), void *ctx)
{
    size_t seg = f->length - f->got;
    seg = seg < n ? seg : n;
    int rc = 0;
    if (f->skipping) {
        // dropped
    } else if (!hold(f, CQD_FRAME_PREFIX + f->got, seg)) {
        rc = shed(f, emit, ctx);
    } else if (f->got == 0 && seg == f->length && !in_place(f, data)) {
        rc = emit_frame(f, data, seg, emit, ctx); // the whole frame in this read: no copy
    } else {
        if (!buffer(f, data, seg))
            return CQD_FRAMES_FAILED;
        if (f->got + seg == f->length)
            rc = emit_frame(f, f->partial.data, f->partial.len, emit, ctx);
    }
    f->got += seg;
    *used = seg;
    if (f->got == f->length)
        end_frame(f);
    return rc == 0 ? CQD_FRAMES_OK : CQD_FRAMES_FAILED;
}

cqd_frames_result cqd_frames_feed(cqd_frames *f, const char *data, size_t n,
                                  int (*emit)(void *ctx, const char *env, size_t len), void *ctx)
{
    while (n > 0) {
        size_t used = 0;
        cqd_frames_result r = f->prefix_len < CQD_FRAME_PREFIX ? take_prefix(f, data, n, &used, emit, ctx)
                                                                : take_body(f, data, n, &used, emit, ctx);
        if (r != CQD_FRAMES_OK)
            return r;
        data += used;
        n -= used;
    }
    return CQD_FRAMES_OK;
}

char *cqd_frames_space(cqd_frames *f, size_t *n)
{
    if (f->prefix_len < CQD_FRAME_PREFIX || f->skipping || f->partial.oom)
        return NULL;
    size_t left = f->length - f->got;
    size_t room = f->partial.cap > f->partial.len ? f->partial.cap - f->partial.len - 1 : 0;
    if (room < left && room < READ_MIN) {
        if (!make_room(f, left))
            return NULL; // the bytes go through the read buffer and the append
        room = f->partial.cap - f->partial.len - 1;
    }
    *n = room < left ? room : left;
    return f->partial.data + f->partial.len;
}

char *cqd_frames_take(cqd_frames *f, const char *env)
{
    if (!env || env != f->partial.data)
        return NULL;
    char *data = f->partial.data;
    f->partial = (cqp_buf){0};
    return data;
}

bool cqd_frames_partial(const cqd_frames *f) { return f->prefix_len > 0; }

cqd_frames_result cqd_frames_end(const cqd_frames *f)
{
    return f->prefix_len > 0 && !f->skipping ? CQD_FRAMES_TRUNCATED : CQD_FRAMES_OK;
}

void cqd_frames_problem(const cqd_frames *f, cqd_frames_result r, cqp_problem *p)
{
    if (r == CQD_FRAMES_TOO_LONG)
        cqp_fail(p, CQP_P_TOO_LARGE, NULL, "request frame of %zu bytes, longer than %zu bytes (--max-body)",
                 f->length, f->max);
    else if (r == CQD_FRAMES_LOST && f->prefix[0] != CQD_FRAME_MARK)
        cqp_fail(p, CQP_P_BAD_MSGPACK, NULL, "framing lost: a frame starts with byte 0x%02x, not 0xce",
                 f->prefix[0]);
    else if (r == CQD_FRAMES_LOST)
        cqp_fail(p, CQP_P_BAD_MSGPACK, NULL, "framing lost: a frame of length 0");
    else if (f->prefix_len < CQD_FRAME_PREFIX)
        cqp_fail(p, CQP_P_BAD_MSGPACK, NULL, "the input ended inside a frame's prefix (%zu of 5 bytes)",
                 f->prefix_len);
    else
        cqp_fail(p, CQP_P_BAD_MSGPACK, NULL, "the input ended inside a frame (%zu of %zu bytes)", f->got,
                 f->length);
}

void cqd_frames_free(cqd_frames *f)
{
    give_back(f);
    cqp_buf_free(&f->partial);
    end_frame(f);
}
