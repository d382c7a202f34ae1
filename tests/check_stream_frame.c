/* The stream transport's MessagePack frame splitter (stream_frame.c):
 * frames fed whole, byte by byte and cut anywhere, the length cap, lost
 * framing, truncation, the --max-buffered charges and frames read in
 * place. Expected frames are written by hand from docs/API.md section 11. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/stream_internal.h"
#include "testutil.h"

/* ---- frame splitter ---------------------------------------------------- */

/* What take_frame keeps: each frame emitted (NULL for a shed one), in order. */
typedef struct frame_log {
    int count;
    size_t len[16];
    char bytes[16][300];
    bool shed[16];
    int fail_at;        /* take_frame fails on this frame (-1: never) */
    cqd_frames *from;   /* whose charges take_frame gives back at once */
} frame_log;

static int take_frame(void *ctx, const char *env, size_t len)
{
    frame_log *r = ctx;
    if (env && r->from && r->from->admit)
        cqd_admit_release(r->from->admit, cqd_frames_charge(r->from, len));
    if (r->count == r->fail_at)
        return -1;
    ck_assert_int_lt(r->count, 16);
    r->shed[r->count] = !env;
    r->len[r->count] = len;
    if (env && len <= sizeof r->bytes[0])
        memcpy(r->bytes[r->count], env, len);
    r->count++;
    return 0;
}

/* Three frames written out by hand: N = 1 (nil), N = 3 (the array [1, 2])
 * and N = 258 = 0x00000102 (258 x 'x': the length's bytes above the
 * lowest count). */
static size_t three_frames(unsigned char *out)
{
    static const unsigned char head[] = {0xce, 0, 0, 0, 1, 0xc0, 0xce, 0, 0, 0, 3, 0x92, 0x01, 0x02,
                                         0xce, 0, 0, 1, 2};
    memcpy(out, head, sizeof head);
    memset(out + sizeof head, 'x', 258);
    return sizeof head + 258;
}

static void check_three(const frame_log *r)
{
    ck_assert_int_eq(r->count, 3);
    ck_assert_uint_eq(r->len[0], 1);
    ck_assert_int_eq((unsigned char)r->bytes[0][0], 0xc0);
    ck_assert_uint_eq(r->len[1], 3);
    ck_assert(memcmp(r->bytes[1], "\x92\x01\x02", 3) == 0);
    ck_assert_uint_eq(r->len[2], 258);
    for (int i = 0; i < 258; i++)
        ck_assert_int_eq(r->bytes[2][i], 'x');
}

START_TEST(frames_whole_bytewise_and_cut_anywhere)
{
    unsigned char text[300];
    size_t n = three_frames(text);
    /* All at once, then one byte a read. */
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        cqd_frames f = {.max = 1000};
        frame_log r = {.fail_at = -1};
        for (size_t at = 0, step = bytewise ? 1 : n; at < n; at += step)
            ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text + at, step, take_frame, &r), CQD_FRAMES_OK);
        check_three(&r);
        ck_assert(!cqd_frames_partial(&f));
        ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_OK);
        cqd_frames_free(&f);
    }
    /* Three reads cut at every pair of places: inside a prefix, between
     * frames, inside an envelope. */
    for (size_t i = 0; i <= n; i++)
        for (size_t j = i; j <= n; j += 7) {
            cqd_frames f = {.max = 1000};
            frame_log r = {.fail_at = -1};
            ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text, i, take_frame, &r), CQD_FRAMES_OK);
            ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text + i, j - i, take_frame, &r), CQD_FRAMES_OK);
            ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text + j, n - j, take_frame, &r), CQD_FRAMES_OK);
            check_three(&r);
            cqd_frames_free(&f);
        }
}
END_TEST

START_TEST(frames_length_cap)
{
    /* N = max is accepted; N = max + 1 is refused at its prefix, after the
     * frames before it. */
    static const unsigned char text[] = {0xce, 0, 0, 0, 3, 0x92, 0x01, 0x02, 0xce, 0, 0, 0, 4, 0x93};
    cqd_frames f = {.max = 3};
    frame_log r = {.fail_at = -1};
    ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text, sizeof text, take_frame, &r), CQD_FRAMES_TOO_LONG);
    ck_assert_int_eq(r.count, 1);
    ck_assert_uint_eq(r.len[0], 3);
    cqp_problem p;
    cqd_frames_problem(&f, CQD_FRAMES_TOO_LONG, &p);
    ck_assert_int_eq(p.kind, CQP_P_TOO_LARGE);
    ck_assert_str_eq(p.detail, "request frame of 4 bytes, longer than 3 bytes (--max-body)");
    cqd_frames_free(&f);

    /* The prefix split across reads: refused once it is whole, nothing of
     * the envelope buffered or charged. 0x01000000 = 16777216. */
    cqd_admit a;
    cqd_admit_init(&a, 100, 1000);
    cqd_frames g = {.max = 16777215, .admit = &a};
    frame_log t = {.fail_at = -1, .from = &g};
    ck_assert_int_eq(cqd_frames_feed(&g, "\xce\x01\x00", 3, take_frame, &t), CQD_FRAMES_OK);
    ck_assert(cqd_frames_partial(&g));
    ck_assert_int_eq(cqd_frames_feed(&g, "\x00\x00zzzz", 6, take_frame, &t), CQD_FRAMES_TOO_LONG);
    ck_assert_uint_eq(g.partial.len, 0);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    cqd_frames_problem(&g, CQD_FRAMES_TOO_LONG, &p);
    ck_assert_str_eq(p.detail, "request frame of 16777216 bytes, longer than 16777215 bytes (--max-body)");
    ck_assert_int_eq(t.count, 0);
    cqd_frames_free(&g);
}
END_TEST

START_TEST(frames_lost_framing)
{
    /* A byte other than 0xce where a frame starts: lost at that byte,
     * without waiting for four more. */
    cqd_frames f = {.max = 100};
    frame_log r = {.fail_at = -1};
    ck_assert_int_eq(cqd_frames_feed(&f, "\xce\0\0\0\x01\xc0{", 7, take_frame, &r), CQD_FRAMES_LOST);
    ck_assert_int_eq(r.count, 1);
    cqp_problem p;
    cqd_frames_problem(&f, CQD_FRAMES_LOST, &p);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.pointer, "");
    ck_assert_str_eq(p.detail, "framing lost: a frame starts with byte 0x7b, not 0xce");
    cqd_frames_free(&f);

    /* 0xcf (a uint64's marker) is not a frame's either. */
    cqd_frames g = {.max = 100};
    ck_assert_int_eq(cqd_frames_feed(&g, "\xcf", 1, take_frame, &r), CQD_FRAMES_LOST);
    cqd_frames_problem(&g, CQD_FRAMES_LOST, &p);
    ck_assert_str_eq(p.detail, "framing lost: a frame starts with byte 0xcf, not 0xce");
    cqd_frames_free(&g);

    /* N = 0: no envelope can be empty. */
    cqd_frames h = {.max = 100};
    ck_assert_int_eq(cqd_frames_feed(&h, "\xce\0\0", 3, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(cqd_frames_feed(&h, "\0\0\xce", 3, take_frame, &r), CQD_FRAMES_LOST);
    cqd_frames_problem(&h, CQD_FRAMES_LOST, &p);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.detail, "framing lost: a frame of length 0");
    ck_assert_int_eq(r.count, 1);
    cqd_frames_free(&h);
}
END_TEST

START_TEST(frames_truncated_at_the_end)
{
    cqp_problem p;
    cqd_frames f = {.max = 100};
    frame_log r = {.fail_at = -1};
    ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_OK); /* nothing read */
    ck_assert_int_eq(cqd_frames_feed(&f, "\xce\0\0", 3, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_TRUNCATED);
    cqd_frames_problem(&f, CQD_FRAMES_TRUNCATED, &p);
    ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    ck_assert_str_eq(p.detail, "the input ended inside a frame's prefix (3 of 5 bytes)");
    ck_assert_int_eq(cqd_frames_feed(&f, "\0\x03\x92\x01", 4, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_TRUNCATED);
    cqd_frames_problem(&f, CQD_FRAMES_TRUNCATED, &p);
    ck_assert_str_eq(p.detail, "the input ended inside a frame (2 of 3 bytes)");
    ck_assert_int_eq(r.count, 0); /* never emitted */
    ck_assert_int_eq(cqd_frames_feed(&f, "\x02", 1, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_OK);
    cqd_frames_free(&f);
}
END_TEST

START_TEST(frames_emit_failure)
{
    cqd_frames f = {.max = 100};
    frame_log r = {.fail_at = 1};
    ck_assert_int_eq(cqd_frames_feed(&f, "\xce\0\0\0\x01\xc0\xce\0\0\0\x01\xc2\xce\0\0\0\x01\xc3", 18, take_frame, &r),
                     CQD_FRAMES_FAILED);
    ck_assert_int_eq(r.count, 1);
    cqd_frames_free(&f);
}
END_TEST

/* Frames are charged as lines are, their prefix included: budget 10 and
 * nothing free, a frame of N = 5 (5 + 5 bytes) passes, N = 6 is shed
 * when its 11th byte arrives, in its place, and dropped to its end by
 * count; the frame after it is read as before. */
START_TEST(frames_charged_to_the_budget)
{
    cqd_admit a;
    cqd_admit_init(&a, 100, 10);
    cqd_frames f = {.max = 100, .admit = &a};
    frame_log r = {.fail_at = -1, .from = &f};
    ck_assert_int_eq(cqd_frames_feed(&f, "\xce\0\0\0\x05" "abcde", 10, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);
    ck_assert_int_eq(cqd_frames_feed(&f, "\xce\0\0\0\x06" "abc", 8, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 8); /* held while it arrives */
    ck_assert_int_eq(r.count, 1);
    ck_assert_int_eq(cqd_frames_feed(&f, "de", 2, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_uint_eq(atomic_load(&a.buffered), 10); /* at the bound */
    ck_assert_int_eq(cqd_frames_feed(&f, "f\xce\0\0\0\x01", 6, take_frame, &r), CQD_FRAMES_OK); /* 11: shed */
    ck_assert_int_eq(r.count, 2);
    ck_assert(r.shed[1]);
    ck_assert_uint_eq(atomic_load(&a.buffered), 5); /* the next frame's prefix */
    ck_assert_uint_eq(atomic_load(&a.shed), 1);
    ck_assert_int_eq(cqd_frames_feed(&f, "\xc0", 1, take_frame, &r), CQD_FRAMES_OK);
    ck_assert_int_eq(r.count, 3);
    ck_assert(!r.shed[2] && r.len[2] == 1);
    ck_assert_uint_eq(atomic_load(&a.buffered), 0);

    /* A prefix that cannot be charged sheds the frame at once; its N bytes
     * are dropped unread, and a shed frame is no truncated one. */
    cqd_admit b;
    cqd_admit_init(&b, 100, 4);
    cqd_frames g = {.max = 100, .admit = &b};
    frame_log t = {.fail_at = -1, .from = &g};
    ck_assert_int_eq(cqd_frames_feed(&g, "\xce\0\0\0\x04" "\xce\0", 7, take_frame, &t), CQD_FRAMES_OK);
    ck_assert_int_eq(t.count, 1);
    ck_assert(t.shed[0]);
    ck_assert_int_eq(cqd_frames_end(&g), CQD_FRAMES_OK);
    ck_assert_int_eq(cqd_frames_feed(&g, "\0\0", 2, take_frame, &t), CQD_FRAMES_OK);
    ck_assert(!cqd_frames_partial(&g)); /* the 4 bytes, whatever they were, are gone */
    ck_assert_uint_eq(atomic_load(&b.buffered), 0);

    /* The first 4096 bytes of a frame, prefix included, are free: with a
     * spent budget a frame of 4091 passes, one of 4092 is shed. */
    cqd_admit c;
    cqd_admit_init(&c, 100, 0);
    cqd_frames h = {.max = 10000, .admit = &c, .uncharged = 4096};
    ck_assert_uint_eq(cqd_frames_charge(&h, 4091), 0);
    ck_assert_uint_eq(cqd_frames_charge(&h, 4092), 1);
    static char big[5 + 4092 + 5 + 4091];
    memcpy(big, "\xce\0\0\x0f\xfc", 5); /* 0x0ffc = 4092 */
    memcpy(big + 5 + 4092, "\xce\0\0\x0f\xfb", 5); /* 0x0ffb = 4091 */
    frame_log u = {.fail_at = -1, .from = &h};
    ck_assert_int_eq(cqd_frames_feed(&h, big, sizeof big, take_frame, &u), CQD_FRAMES_OK);
    ck_assert_int_eq(u.count, 2);
    ck_assert(u.shed[0] && !u.shed[1]);
    ck_assert_uint_eq(u.len[1], 4091);
    cqd_frames_free(&h);
    cqd_frames_free(&g);
    cqd_frames_free(&f);
}
END_TEST

/* What read_in_place's taker saw of each frame. */
typedef struct place_log {
    int count;
    size_t len[8];
    unsigned long sum[8]; /* of the bytes, position-weighted */
    bool taken[8];        /* the splitter's buffer was handed over */
    cqd_frames *from;
} place_log;

static unsigned long weigh(const unsigned char *b, size_t n)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + b[i];
    return s;
}

static int take_placed(void *ctx, const char *env, size_t len)
{
    place_log *r = ctx;
    ck_assert_int_lt(r->count, 8);
    ck_assert_ptr_nonnull(env);
    r->len[r->count] = len;
    r->sum[r->count] = weigh((const unsigned char *)env, len);
    char *mine = cqd_frames_take(r->from, env);
    r->taken[r->count] = mine != NULL;
    ck_assert(!mine || mine == env);
    free(mine);
    r->count++;
    return 0;
}

/* A reader as the connection's: each read goes where cqd_frames_space
 * says, else to a small read buffer, and is fed from there. Random frames
 * of up to 200,000 bytes in random reads: every frame comes out whole and
 * in order (oracle: the bytes as written), a space never reaches past its
 * frame's end, a frame that came in one read of the read buffer is
 * handed over from there, and any other from the splitter's own buffer,
 * which the taker then owns. */
START_TEST(frames_read_in_place)
{
    tu_rng rng = {91};
    static unsigned char text[8 * 200005];
    static char readbuf[4096];
    for (int round = 0; round < 40; round++) {
        size_t n = 0, lens[8], ends[8];
        int nframes = 1 + (int)tu_uniform(&rng, 0, 7);
        for (int k = 0; k < nframes; k++) {
            size_t len = 1 + (size_t)tu_uniform(&rng, 0, k % 2 ? 300 : 200000);
            unsigned char prefix[5] = {0xce, 0, (unsigned char)(len >> 16), (unsigned char)(len >> 8),
                                       (unsigned char)len};
            memcpy(text + n, prefix, 5);
            n += 5;
            for (size_t i = 0; i < len; i++)
                text[n++] = (unsigned char)tu_uniform(&rng, 0, 256);
            lens[k] = len;
            ends[k] = n;
        }
        cqd_frames f = {.max = 300000};
        place_log r = {.from = &f};
        bool whole[8] = {false}; /* came in one read of the read buffer */
        for (size_t at = 0; at < n;) {
            size_t room = 0, piece = 1 + (size_t)tu_uniform(&rng, 0, 70000);
            char *to = cqd_frames_space(&f, &room);
            int k = 0;
            while (ends[k] <= at)
                k++;
            if (to) {
                ck_assert_uint_le(room, ends[k] - at);
            } else {
                to = readbuf;
                room = sizeof readbuf;
                whole[k] = at == ends[k] - lens[k] - 5 && piece >= lens[k] + 5 && room >= lens[k] + 5;
            }
            piece = piece < room ? piece : room;
            piece = piece < n - at ? piece : n - at;
            memcpy(to, text + at, piece);
            ck_assert_int_eq(cqd_frames_feed(&f, to, piece, take_placed, &r), CQD_FRAMES_OK);
            at += piece;
        }
        ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_OK);
        cqd_frames_free(&f);
        ck_assert_int_eq(r.count, nframes);
        for (int k = 0; k < nframes; k++) {
            ck_assert_uint_eq(r.len[k], lens[k]);
            ck_assert(r.sum[k] == weigh(text + ends[k] - lens[k], lens[k]));
            if (whole[k])
                ck_assert(!r.taken[k]);
            if (lens[k] + 5 > sizeof readbuf)
                ck_assert(r.taken[k]);
        }
    }
}
END_TEST

/* Random frames (random bytes, 0xce among them) cut into random reads,
 * with random budgets and free prefixes. Oracle: the frames as written;
 * as the taker gives each frame's charge back at once, a frame is shed
 * exactly when its 5 + N bytes past the free prefix exceed the budget,
 * however the reads cut it. */
START_TEST(frames_random_cuts_and_budgets)
{
    tu_rng rng = {78};
    for (int round = 0; round < 3000; round++) {
        unsigned char text[16 * 45];
        size_t n = 0, lens[16];
        int nframes = 1 + (int)tu_uniform(&rng, 0, 12);
        for (int k = 0; k < nframes; k++) {
            size_t len = 1 + (size_t)tu_uniform(&rng, 0, 40);
            lens[k] = len;
            unsigned char prefix[5] = {0xce, 0, 0, 0, (unsigned char)len};
            memcpy(text + n, prefix, 5);
            n += 5;
            for (size_t i = 0; i < len; i++)
                text[n++] = (unsigned char)tu_uniform(&rng, 0, 256);
        }
        size_t budget = (size_t)tu_uniform(&rng, 0, 60), uncharged = (size_t)tu_uniform(&rng, 0, 30);
        cqd_admit a;
        cqd_admit_init(&a, 100, budget);
        cqd_frames f = {.max = 100, .admit = &a, .uncharged = uncharged};
        frame_log r = {.fail_at = -1, .from = &f};
        for (size_t at = 0; at < n;) {
            size_t piece = 1 + (size_t)tu_uniform(&rng, 0, 30);
            piece = piece < n - at ? piece : n - at;
            ck_assert_int_eq(cqd_frames_feed(&f, (const char *)text + at, piece, take_frame, &r), CQD_FRAMES_OK);
            at += piece;
        }
        ck_assert_int_eq(cqd_frames_end(&f), CQD_FRAMES_OK);
        cqd_frames_free(&f);
        ck_assert_uint_eq(atomic_load(&a.buffered), 0);
        ck_assert_int_eq(r.count, nframes);
        for (int k = 0, at = 0; k < nframes; at += 5 + (int)lens[k], k++) {
            size_t all = 5 + lens[k];
            bool shed = all > uncharged && all - uncharged > budget;
            ck_assert_msg(r.shed[k] == shed, "round %d frame %d: shed %d, expected %d", round, k, r.shed[k], shed);
            if (!shed)
                ck_assert(r.len[k] == lens[k] && memcmp(r.bytes[k], text + at + 5, lens[k]) == 0);
        }
    }
}
END_TEST

Suite *stream_frame_suite(void)
{
    Suite *s = suite_create("stream_frame");
    TCase *t = tcase_create("frames");
    tcase_set_timeout(t, 60); /* seconds: every cut of every frame, under the sanitizers or a loaded host */
    tcase_add_test(t, frames_whole_bytewise_and_cut_anywhere);
    tcase_add_test(t, frames_length_cap);
    tcase_add_test(t, frames_lost_framing);
    tcase_add_test(t, frames_truncated_at_the_end);
    tcase_add_test(t, frames_emit_failure);
    tcase_add_test(t, frames_charged_to_the_budget);
    tcase_add_test(t, frames_random_cuts_and_budgets);
    tcase_add_test(t, frames_read_in_place);
    suite_add_tcase(s, t);
    return s;
}
