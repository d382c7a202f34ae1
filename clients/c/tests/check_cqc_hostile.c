/* libcqc against a hostile server: a fake daemon on a thread that sends
 * garbage, cuts a frame short, closes mid-reply, stalls or drips. The
 * client must answer each call with an error (never crash, never wait
 * past its timeout), follow the reconnect rule (a lost mutation is
 * CQC_EUNKNOWN, nothing is resent) and leak nothing. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <msgpuck.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "helpers.h"

typedef enum fmode {
    F_GARBAGE, F_TRUNCATE, F_CLOSE, F_STALL, F_HUGE, F_BADMP, F_WRONGID, F_DRIP, F_ONE_THEN_CLOSE, F_CLOSE_THEN_GOOD, F_GOOD,
    F_JSON_GARBAGE, F_JSON_ENDLESS, F_EMPTY_PAIRS
} fmode;

typedef struct fake {
    int lfd, port;
    fmode mode;
    pthread_t th;
} fake;

static bool read_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* One request frame; its envelope's id (the client's own bytes, trusted here). */
static bool read_request(int fd, uint64_t *id)
{
    unsigned char h[5];
    static char body[1 << 16];
    if (!read_all(fd, (char *)h, 5))
        return false;
    size_t n = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
    if (h[0] != 0xce || n > sizeof body || !read_all(fd, body, n))
        return false;
    const char *p = body;
    uint32_t members = mp_decode_map(&p);
    for (uint32_t i = 0; i < members; i++) {
        uint32_t kn;
        const char *k = mp_decode_str(&p, &kn);
        if (kn == 2 && memcmp(k, "id", 2) == 0) {
            *id = mp_decode_uint(&p);
            return true;
        }
        mp_next(&p);
    }
    return false;
}

/* A 200 reply to a health check: {id, status, body: {status: ok}}. */
static size_t good_reply(char *out, uint64_t id)
{
    char *p = mp_encode_map(out + 5, 3);
    p = mp_encode_str(p, "id", 2);
    p = mp_encode_uint(p, id);
    p = mp_encode_str(p, "status", 6);
    p = mp_encode_uint(p, 200);
    p = mp_encode_str(p, "body", 4);
    p = mp_encode_map(p, 1);
    p = mp_encode_str(p, "status", 6);
    p = mp_encode_str(p, "ok", 2);
    uint32_t n = (uint32_t)(p - out - 5);
    out[0] = (char)0xce;
    out[1] = (char)(n >> 24), out[2] = (char)(n >> 16), out[3] = (char)(n >> 8), out[4] = (char)n;
    return 5 + n;
}

static void put(int fd, const void *p, size_t n)
{
    (void)!send(fd, p, n, MSG_NOSIGNAL);
}

/* Holds the connection until the client closes it. */
static void until_closed(int fd)
{
    char b[256];
    while (recv(fd, b, sizeof b, 0) > 0)
        ;
}

static void sleep_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000000};
    nanosleep(&t, NULL);
}

/* JSON mode: one request line, then a line that is not JSON, or a line
 * that never ends. */
static void serve_json(fake *f, int fd)
{
    char ch;
    while (recv(fd, &ch, 1, 0) == 1 && ch != '\n')
        ;
    if (f->mode == F_JSON_GARBAGE) {
        put(fd, "{\"id\": 1, \"status\": 200, \"body\": nope}\n", 39);
    } else {
        char run[512];
        memset(run, ' ', sizeof run);
        put(fd, "{\"id\": 1, ", 10);
        put(fd, run, sizeof run);
    }
    until_closed(fd);
}

/* A contacts reply of 100,000 one-byte pairs ({}): 100 KB on the wire that
 * would be 50 MB of result if counted before being read. */
static void empty_pairs(int fd, uint64_t id)
{
    enum { PAIRS = 100000 };
    static char out[PAIRS + 64];
    char *p = mp_encode_map(out + 5, 3);
    p = mp_encode_str(p, "id", 2);
    p = mp_encode_uint(p, id);
    p = mp_encode_str(p, "status", 6);
    p = mp_encode_uint(p, 200);
    p = mp_encode_str(p, "body", 4);
    p = mp_encode_map(p, 1);
    p = mp_encode_str(p, "pairs", 5);
    p = mp_encode_array(p, PAIRS);
    memset(p, 0x80, PAIRS);
    p += PAIRS;
    uint32_t n = (uint32_t)(p - out - 5);
    out[0] = (char)0xce;
    out[1] = (char)(n >> 24), out[2] = (char)(n >> 16), out[3] = (char)(n >> 8), out[4] = (char)n;
    put(fd, out, 5 + n);
}

static void serve(fake *f, int fd)
{
    uint64_t id = 0;
    char reply[128];
    if (f->mode == F_EMPTY_PAIRS) {
        if (read_request(fd, &id))
            empty_pairs(fd, id);
        until_closed(fd);
        return;
    }
    if (f->mode >= F_JSON_GARBAGE) {
        serve_json(f, fd);
        return;
    }
    if (!read_request(fd, &id))
        return;
    size_t n = good_reply(reply, id);
    switch (f->mode) {
    case F_GARBAGE:
        put(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
        break;
    case F_TRUNCATE:
        put(fd, reply, n / 2);
        return;
    case F_CLOSE:
    case F_CLOSE_THEN_GOOD:
        return;
    case F_STALL:
        break;
    case F_HUGE:
        put(fd, "\xce\xff\xff\xff\xff", 5);
        break;
    case F_BADMP:
        put(fd, "\xce\x00\x00\x00\x05\xdd\xff\xff\xff\xff", 10);
        break;
    case F_WRONGID:
        put(fd, reply, good_reply(reply, id + 100));
        break;
    case F_DRIP:
        for (size_t i = 0; i < n; i++, sleep_ms(40))
            if (send(fd, reply + i, 1, MSG_NOSIGNAL) != 1)
                break;
        break;
    case F_ONE_THEN_CLOSE:
        /* The other two are read first, or closing on them would reset
         * the connection before the first reply is taken. */
        if (read_request(fd, &id) && read_request(fd, &id))
            put(fd, reply, n);
        return;
    case F_GOOD:
        put(fd, reply, n);
        break;
    default:
        break;
    }
    until_closed(fd);
}

static void *fake_main(void *arg)
{
    fake *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd >= 0) {
        struct timeval tv = {10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        serve(f, fd);
        close(fd);
    }
    if (f->mode == F_CLOSE_THEN_GOOD && (fd = accept(f->lfd, NULL, NULL)) >= 0) {
        uint64_t id;
        char reply[128];
        if (read_request(fd, &id))
            put(fd, reply, good_reply(reply, id));
        until_closed(fd);
        close(fd);
    }
    return NULL;
}

static void fake_start(fake *f, fmode mode)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    f->mode = mode;
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(f->lfd, 0);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(f->lfd, 4), 0);
    getsockname(f->lfd, (struct sockaddr *)&a, &len);
    f->port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(&f->th, NULL, fake_main, f), 0);
}

static void fake_stop(fake *f)
{
    pthread_join(f->th, NULL);
    close(f->lfd);
}

static cqc_conn *connect_fake(const fake *f)
{
    cqc_options o;
    cqc_options_init(&o);
    o.port = (uint16_t)f->port;
    o.io_timeout_ms = 200;
    cqc_conn *c;
    ck_assert_int_eq(cqc_connect(&o, &c), CQC_OK);
    return c;
}

/* One call into a hostile reply: the read's error, or a mutation's
 * CQC_EUNKNOWN; the socket is dropped and nothing leaks. */
static void one_call(fmode mode, bool mutation, cqc_status want)
{
    size_t live = th_live_bytes;
    fake f;
    fake_start(&f, mode);
    cqc_conn *c = connect_fake(&f);
    cqc_status s = mutation ? cqc_world_delete(c, "w") : cqc_health(c, false);
    ck_assert_msg(s == (mutation ? CQC_EUNKNOWN : want), "mode %d: %s", (int)mode, cqc_strerror(s));
    ck_assert(!cqc_connected(c));
    ck_assert_str_ne(cqc_last_problem(c)->detail, "");
    cqc_close(c);
    fake_stop(&f);
    ck_assert_uint_eq(th_live_bytes, live);
}

static const struct {
    fmode mode;
    cqc_status read;
} cases[] = {
    {F_GARBAGE, CQC_EPROTO}, {F_TRUNCATE, CQC_EIO}, {F_CLOSE, CQC_EIO},     {F_STALL, CQC_ETIMEOUT},
    {F_HUGE, CQC_EPROTO},    {F_BADMP, CQC_EPROTO}, {F_WRONGID, CQC_EPROTO}, {F_DRIP, CQC_ETIMEOUT},
};

START_TEST(read_fails_cleanly)
{
    one_call(cases[_i].mode, false, cases[_i].read);
}
END_TEST

START_TEST(mutation_is_unknown)
{
    one_call(cases[_i].mode, true, CQC_EUNKNOWN);
}
END_TEST

/* Items counted by a header are allocated as they are read, and an item
 * that names no shapes is refused: 100,000 empty pairs cost one. */
START_TEST(counted_items_allocated_as_read)
{
    size_t live = th_live_bytes;
    fake f;
    fake_start(&f, F_EMPTY_PAIRS);
    cqc_conn *c = connect_fake(&f);
    cqc_contacts out = {0};
    th_peak_bytes = th_live_bytes;
    size_t before = th_peak_bytes;
    ck_assert_int_eq(cqc_contacts_get(c, "w", NULL, &out), CQC_EPROTO);
    ck_assert_msg(th_peak_bytes - before < (size_t)4 << 20, "peak %zu bytes over the start", th_peak_bytes - before);
    cqc_contacts_release(&out);
    cqc_close(c);
    fake_stop(&f);
    ck_assert_uint_eq(th_live_bytes, live);
}
END_TEST

/* Three pipelined calls, the connection lost after the first reply:
 * the read before it is answered, the mutation is unknown, the read after
 * it is lost; nothing is resent. */
START_TEST(pipeline_cut_after_one)
{
    fake f;
    fake_start(&f, F_ONE_THEN_CLOSE);
    cqc_conn *c = connect_fake(&f);
    ck_assert_int_eq(cqc_q_health(c, false), CQC_OK);
    ck_assert_int_eq(cqc_q_world_delete(c, "w"), CQC_OK);
    ck_assert_int_eq(cqc_q_health(c, false), CQC_OK);
    ck_assert_int_eq(cqc_pipe_send(c), CQC_OK);
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_OK);
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_EUNKNOWN);
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_EIO);
    ck_assert_int_eq(cqc_get_stats(c).requests, 3);
    cqc_close(c);
    fake_stop(&f);
}
END_TEST

/* After a drop the next call reconnects; the lost mutation is not resent
 * (the second connection sees only the health check). */
START_TEST(reconnects_after_drop)
{
    fake f;
    fake_start(&f, F_CLOSE_THEN_GOOD);
    cqc_conn *c = connect_fake(&f);
    ck_assert_int_eq(cqc_world_delete(c, "w"), CQC_EUNKNOWN);
    ck_assert(!cqc_connected(c));
    ck_assert_int_eq(cqc_health(c, false), CQC_OK);
    ck_assert(cqc_connected(c));
    ck_assert_int_eq(cqc_get_stats(c).reconnects, 1);
    cqc_close(c);
    fake_stop(&f);
}
END_TEST

START_TEST(misuse_is_refused)
{
    fake f;
    fake_start(&f, F_GOOD);
    cqc_conn *c = connect_fake(&f);
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_ESTATE);
    ck_assert_int_eq(cqc_q_health(c, false), CQC_OK);
    ck_assert_int_eq(cqc_health(c, false), CQC_ESTATE); /* an unsent queue is the caller's */
    ck_assert_int_eq(cqc_pipe_send(c), CQC_OK);
    ck_assert_int_eq(cqc_pipe_send(c), CQC_ESTATE);
    ck_assert_int_eq(cqc_pipe_begin(c), CQC_ESTATE); /* a reply is unread */
    ck_assert_int_eq(cqc_pipe_next(c, NULL), CQC_OK);
    cqc_close(c);
    fake_stop(&f);
    cqc_options o;
    cqc_options_init(&o);
    o.port = 0;
    ck_assert_int_eq(cqc_connect(&o, &c), CQC_EINVAL);
    ck_assert_ptr_null(c);
}
END_TEST

/* JSON mode reads lines: a reply line that is not JSON, or one longer than
 * max_reply without its end, is CQC_EPROTO and drops the connection. */
START_TEST(json_lines_refused)
{
    size_t live = th_live_bytes;
    fake f;
    fake_start(&f, _i ? F_JSON_ENDLESS : F_JSON_GARBAGE);
    cqc_options o;
    cqc_options_init(&o);
    o.port = (uint16_t)f.port;
    o.io_timeout_ms = 2000;
    o.encoding = CQC_JSON;
    o.max_reply = 256;
    cqc_conn *c;
    ck_assert_int_eq(cqc_connect(&o, &c), CQC_OK);
    ck_assert_int_eq(cqc_health(c, false), CQC_EPROTO);
    ck_assert(!cqc_connected(c));
    cqc_close(c);
    fake_stop(&f);
    ck_assert_uint_eq(th_live_bytes, live);
}
END_TEST

Suite *cqc_hostile_suite(void)
{
    Suite *s = suite_create("cqc_hostile");
    TCase *tc = tcase_create("fake server");
    tcase_set_timeout(tc, 30);
    int n = (int)(sizeof cases / sizeof *cases);
    tcase_add_loop_test(tc, read_fails_cleanly, 0, n);
    tcase_add_test(tc, counted_items_allocated_as_read);
    tcase_add_loop_test(tc, mutation_is_unknown, 0, n);
    tcase_add_test(tc, pipeline_cut_after_one);
    tcase_add_test(tc, reconnects_after_drop);
    tcase_add_test(tc, misuse_is_refused);
    tcase_add_loop_test(tc, json_lines_refused, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
