/* cq-bench-decode: what reading a game tick's move batch costs proto, in
 * process, in both wire formats (docs/PERFORMANCE.md, "Decoding a tick's
 * batch"). For N moves it builds the body of POST /v1/worlds/W/batch,
 * {"move": [{"id", "pose": {"position", "rotation"}, "velocity"}, ...]}, as
 * JSON text and as MessagePack with float64 numbers, then times, round after
 * round with the formats alternating:
 *   check:  cqp_body_open (MessagePack: cqp_mp_check; JSON: the parse);
 *   decode: cqp_decode_batch into the cqp_batch cq_world_apply takes, then
 *           cqp_batch_release;
 *   close:  cqp_body_close (JSON: the tree's release).
 * jansson allocates from a bump arena emptied after each round, as the
 * daemon's request arena serves it (server/net/json_arena.h): with malloc and
 * free for each of a JSON body's 200,000 values the parse would cost four
 * times as much, and measure the allocator.
 * Prints `key value` lines: per format and N, the best round in ms and the
 * worst. --only FORMAT runs that format alone; with --rounds 1 under
 * callgrind, --toggle-collect=bench_check (bench_decode, bench_close)
 * counts that phase's instructions alone.
 *
 *   cq-bench-decode [--moves 10000,100000] [--rounds 30] [--only json|msgpack]
 */
#include <msgpuck.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gen/splitmix.h"
#include "cqp/decode.h"
#include "cqp/value.h"

/* One move's numbers: position, a unit quaternion (x, y, z, w), velocity. */
typedef struct move {
    double p[3], q[4], v[3];
} move;

/* The bump arena jansson allocates from (blocks never freed one by one). */
static struct {
    char *base;
    size_t used, cap;
} arena;

static void *arena_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (arena.cap - arena.used < size) {
        fprintf(stderr, "cq-bench-decode: the JSON arena is full\n");
        exit(1);
    }
    void *p = arena.base + arena.used;
    arena.used += size;
    return p;
}

static void arena_free(void *p) { (void)p; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "cq-bench-decode: %s\n", what);
    exit(1);
}

/* n moves of a scene like cq-gen's: boxes in a cube of half-size 2 n^(1/3),
 * turned any way, moving at up to 5 units a second. */
static move *make_moves(int n, uint64_t seed)
{
    gen_rng rng = {seed};
    double half = 2 * cbrt((double)n);
    move *m = malloc((size_t)n * sizeof *m);
    if (!m)
        die("out of memory");
    for (int i = 0; i < n; i++) {
        double len = 0;
        for (int k = 0; k < 4; k++) {
            m[i].q[k] = gen_uniform(&rng, -1, 1);
            len += m[i].q[k] * m[i].q[k];
        }
        len = sqrt(len);
        for (int k = 0; k < 4; k++)
            m[i].q[k] /= len;
        for (int k = 0; k < 3; k++) {
            m[i].p[k] = gen_uniform(&rng, -half, half);
            m[i].v[k] = gen_uniform(&rng, -5, 5);
        }
    }
    return m;
}

static char *mp_vec(char *w, const double *x, int n)
{
    w = mp_encode_array(w, (uint32_t)n);
    for (int k = 0; k < n; k++)
        w = mp_encode_double(w, x[k]);
    return w;
}

/* The batch as MessagePack, float64 numbers, in a malloc'd block. */
static char *mp_body(const move *m, int n, size_t *len)
{
    char *b = malloc(64 + (size_t)n * 200), *w = b;
    if (!b)
        die("out of memory");
    w = mp_encode_map(w, 1);
    w = mp_encode_str(w, "move", 4);
    w = mp_encode_array(w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        char id[16];
        int idn = snprintf(id, sizeof id, "b%d", i);
        w = mp_encode_map(w, 3);
        w = mp_encode_str(w, "id", 2);
        w = mp_encode_str(w, id, (uint32_t)idn);
        w = mp_encode_str(w, "pose", 4);
        w = mp_encode_map(w, 2);
        w = mp_encode_str(w, "position", 8);
        w = mp_vec(w, m[i].p, 3);
        w = mp_encode_str(w, "rotation", 8);
        w = mp_vec(w, m[i].q, 4);
        w = mp_encode_str(w, "velocity", 8);
        w = mp_vec(w, m[i].v, 3);
    }
    *len = (size_t)(w - b);
    return b;
}

/* The same batch as JSON text, every number in 17 digits (so it reads back
 * as the same double). */
static char *json_body(const move *m, int n, size_t *len)
{
    size_t cap = 64 + (size_t)n * 400, at = 0;
    char *b = malloc(cap);
    if (!b)
        die("out of memory");
    at += (size_t)snprintf(b + at, cap - at, "{\"move\":[");
    for (int i = 0; i < n; i++) {
        const move *x = &m[i];
        at += (size_t)snprintf(b + at, cap - at,
                               "%s{\"id\":\"b%d\",\"pose\":{\"position\":[%.17g,%.17g,%.17g],"
                               "\"rotation\":[%.17g,%.17g,%.17g,%.17g]},\"velocity\":[%.17g,%.17g,%.17g]}",
                               i ? "," : "", i, x->p[0], x->p[1], x->p[2], x->q[0], x->q[1], x->q[2], x->q[3],
                               x->v[0], x->v[1], x->v[2]);
    }
    at += (size_t)snprintf(b + at, cap - at, "]}");
    *len = at;
    return b;
}

/* One format's body and its timings. */
typedef struct variant {
    const char *name;
    cqp_format format;
    char *data;
    size_t len;
    double best[3], worst[3]; /* check, decode, close (s) */
    double best_total, worst_total;
} variant;

static const cqp_limits limits = {.batch_items = 1000000};

/* The phases, apart and not inlined, so callgrind can count each alone. */
__attribute__((noinline)) static void bench_check(const variant *v, cqp_body *b)
{
    cqp_problem p;
    if (cqp_body_open(b, v->format, v->data, v->len, &p) != 0)
        die(p.detail);
}

__attribute__((noinline)) static void bench_decode(const cqp_body *b)
{
    cqp_problem p;
    cqp_decoder d;
    cqp_batch batch;
    cqp_decoder_init(&d, &limits, &p);
    if (cqp_decode_batch(&d, b->root, &batch) != 0)
        die(p.detail);
    cqp_batch_release(&batch);
}

__attribute__((noinline)) static void bench_close(cqp_body *b)
{
    cqp_body_close(b);
    arena.used = 0;
}

static void keep(double *best, double *worst, double t, int round)
{
    if (round == 0 || t < *best)
        *best = t;
    if (round == 0 || t > *worst)
        *worst = t;
}

static void round_of(variant *v, int round)
{
    cqp_body b;
    double t[4];
    t[0] = now();
    bench_check(v, &b);
    t[1] = now();
    bench_decode(&b);
    t[2] = now();
    bench_close(&b);
    t[3] = now();
    for (int k = 0; k < 3; k++)
        keep(&v->best[k], &v->worst[k], t[k + 1] - t[k], round);
    keep(&v->best_total, &v->worst_total, t[3] - t[0], round);
}

static void report(const variant *v, int n)
{
    static const char *const phases[3] = {"check", "decode", "close"};
    for (int k = 0; k < 3; k++)
        printf("%s_%d_%s_ms %.3f %.3f\n", v->name, n, phases[k], 1e3 * v->best[k], 1e3 * v->worst[k]);
    printf("%s_%d_total_ms %.3f %.3f\n", v->name, n, 1e3 * v->best_total, 1e3 * v->worst_total);
}

static void run(int n, int rounds, const char *only_what)
{
    move *m = make_moves(n, 7);
    variant vs[2] = {{.name = "json", .format = CQP_JSON}, {.name = "msgpack", .format = CQP_MSGPACK}};
    vs[0].data = json_body(m, n, &vs[0].len);
    vs[1].data = mp_body(m, n, &vs[1].len);
    free(m);
    printf("moves %d\njson_bytes %zu\nmsgpack_bytes %zu\n", n, vs[0].len, vs[1].len);
    bool want[2] = {!only_what || strcmp(only_what, "json") == 0, !only_what || strcmp(only_what, "msgpack") == 0};
    if (!want[0] && !want[1])
        die("--only takes json or msgpack");
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            if (want[(k + r) % 2])
                round_of(&vs[(k + r) % 2], r);
    for (int k = 0; k < 2; k++)
        if (want[k])
            report(&vs[k], n);
    free(vs[0].data);
    free(vs[1].data);
}

int main(int argc, char **argv)
{
    const char *sizes = "10000,100000", *only_what = NULL;
    // Room for the JSON tree of 100,000 moves (about 190 bytes a value).
    arena.cap = (size_t)1 << 30;
    if (!(arena.base = malloc(arena.cap)))
        die("out of memory");
    json_set_alloc_funcs(arena_alloc, arena_free);
    int rounds = 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--moves") == 0)
            sizes = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only_what = argv[i + 1];
        else
            die("usage: cq-bench-decode [--moves 10000,100000] [--rounds 30] [--only json|msgpack]");
    }
    for (const char *s = sizes; *s;) {
        char *end;
        long n = strtol(s, &end, 10);
        if (n <= 0 || end == s)
            die("--moves takes counts such as 10000,100000");
        run((int)n, rounds > 0 ? rounds : 1, only_what);
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}
