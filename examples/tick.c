/* A game server's tick loop against collisiond, with libcqc: N boxes move
 * at 60 Hz; each tick is one pipelined round trip of a move batch, the
 * contacts with CCD over the tick's dt, and a few ray casts. Prints the
 * tick latency percentiles and the missed ticks, then one summary line.
 *
 *   build/examples/tick --host 127.0.0.1 --port 7879 --boxes 10000 --ticks 600
 *
 * Copy it: everything here but the argument parsing is what a game needs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqc.h"

#define RAYS 8

typedef struct args {
    const char *host, *token, *world;
    int port, boxes, ticks, hz, daemon_pid, warmup;
    bool json, free_run;
} args;

typedef struct scene {
    int n;
    double half;  /* the cube the boxes move in: [-half, half]^3 */
    char (*names)[16];
    const char **ids;
    double *pos, *rot, *vel, *spin;
} scene;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static bool scene_new(scene *s, int n)
{
    *s = (scene){.n = n, .half = 1.5 * cbrt((double)n)};
    s->names = calloc((size_t)n, sizeof *s->names);
    s->ids = calloc((size_t)n, sizeof *s->ids);
    s->pos = calloc((size_t)n * 3, sizeof *s->pos);
    s->rot = calloc((size_t)n * 4, sizeof *s->rot);
    s->vel = calloc((size_t)n * 3, sizeof *s->vel);
    s->spin = calloc((size_t)n * 4, sizeof *s->spin);
    if (!s->names || !s->ids || !s->pos || !s->rot || !s->vel || !s->spin)
        return false;
    uint64_t seed = 7;
    for (int i = 0; i < n; i++) {
        snprintf(s->names[i], sizeof s->names[i], "box-%d", i);
        s->ids[i] = s->names[i];
        for (int k = 0; k < 3; k++) {
            s->pos[3 * i + k] = (2 * rnd(&seed) - 1) * s->half;
            s->vel[3 * i + k] = (2 * rnd(&seed) - 1) * 4;
        }
        double axis[3] = {rnd(&seed) - 0.5, rnd(&seed) - 0.5, rnd(&seed) - 0.5};
        cqc_quat_axis_angle(axis, 0, s->rot + 4 * i);
        cqc_quat_axis_angle(axis, 0.05, s->spin + 4 * i); /* a turn per tick */
    }
    return true;
}

static void scene_free(scene *s)
{
    free(s->names);
    free(s->ids);
    free(s->pos);
    free(s->rot);
    free(s->vel);
    free(s->spin);
}

/* Moves every box by dt, bouncing off the cube's walls, and turns it. */
static void scene_step(scene *s, double dt)
{
    for (int i = 0; i < s->n; i++) {
        for (int k = 0; k < 3; k++) {
            double *p = &s->pos[3 * i + k], *v = &s->vel[3 * i + k];
            *p += *v * dt;
            if (*p > s->half || *p < -s->half)
                *v = -*v;
        }
        double q[4];
        cqc_quat_mul(s->spin + 4 * i, s->rot + 4 * i, q);
        double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int k = 0; k < 4; k++)
            s->rot[4 * i + k] = q[k] / len;
    }
}

static int fail(const char *what, cqc_status st, const cqc_conn *c)
{
    const cqc_problem *p = c ? cqc_last_problem(c) : NULL;
    fprintf(stderr, "tick: %s: %s%s%s\n", what, cqc_strerror(st), p && p->detail[0] ? ": " : "",
            p ? p->detail : "");
    return 1;
}

/* The world, then every box in upsert batches of up to 10,000. */
static int load(cqc_conn *c, const args *a, const scene *s)
{
    cqc_world_settings ws;
    cqc_world_settings_init(&ws);
    ws.capacity = (uint64_t)s->n;
    ws.durability = CQC_DURABILITY_NONE; /* a game's world: 60 move batches a second, never journaled */
    cqc_world_delete(c, a->world); /* a world left by an earlier run; not-found is fine */
    cqc_status st = cqc_world_create(c, a->world, &ws, NULL);
    if (st != CQC_OK)
        return fail("create the world", st, c);
    enum { CHUNK = 10000 };
    cqc_body *bodies = calloc(CHUNK, sizeof *bodies);
    for (int at = 0; bodies && at < s->n; at += CHUNK) {
        int n = s->n - at < CHUNK ? s->n - at : CHUNK;
        for (int i = 0; i < n; i++) {
            int k = at + i;
            cqc_body *b = &bodies[i];
            *b = (cqc_body){.id = s->ids[k], .shape = {.type = CQC_BOX, .half_extents = {0.5, 0.5, 0.5}}};
            memcpy(b->pose.position, s->pos + 3 * k, sizeof b->pose.position);
            memcpy(b->pose.rotation, s->rot + 4 * k, sizeof b->pose.rotation);
            memcpy(b->velocity, s->vel + 3 * k, sizeof b->velocity);
        }
        cqc_batch batch = {.upserts = bodies, .upsert_count = (size_t)n};
        st = cqc_batch_apply(c, a->world, &batch, NULL);
        if (st != CQC_OK) {
            free(bodies);
            return fail("load the boxes", st, c);
        }
    }
    free(bodies);
    return bodies ? 0 : fail("load the boxes", CQC_ENOMEM, NULL);
}

/* One tick: the move batch, contacts with dt and RAYS rays, one round trip. */
static cqc_status tick(cqc_conn *c, const args *a, const scene *s, double dt, cqc_contacts *out,
                       cqc_ray_hit *hits)
{
    cqc_batch moves = {.move_ids = s->ids, .move_positions = s->pos, .move_rotations = s->rot,
                       .move_velocities = s->vel, .move_count = (size_t)s->n};
    cqc_contacts_query q = {.dt = dt, .has_dt = true};
    cqc_ray rays[RAYS];
    for (int i = 0; i < RAYS; i++)
        rays[i] = (cqc_ray){.origin = {-s->half - 1, s->half * (i - RAYS / 2) / RAYS, 0}, .direction = {1, 0, 0}};
    cqc_status st = cqc_pipe_begin(c);
    if (st == CQC_OK)
        st = cqc_q_batch(c, a->world, &moves, NULL);
    if (st == CQC_OK)
        st = cqc_q_contacts(c, a->world, &q, out);
    if (st == CQC_OK)
        st = cqc_q_raycast(c, a->world, rays, RAYS, hits);
    if (st == CQC_OK)
        st = cqc_pipe_send(c);
    cqc_status first = st;
    while (cqc_pipe_pending(c) > 0) {
        cqc_status r = cqc_pipe_next(c, NULL);
        if (first == CQC_OK)
            first = r;
    }
    return first;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The daemon's user + system CPU seconds, from /proc (the benchmark's --daemon-pid). */
static double daemon_cpu(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / 100.0; /* USER_HZ */
}

static int run(const args *a, cqc_conn *c, scene *s)
{
    double dt = 1.0 / a->hz;
    double *lat = calloc((size_t)a->ticks, sizeof *lat);
    cqc_contacts out = {0};
    cqc_ray_hit hits[RAYS];
    int missed = 0;
    size_t pairs = 0;
    if (!lat)
        return fail("tick", CQC_ENOMEM, NULL);
    /* Warm-up ticks grow the buffers and the daemon's trees; not counted. */
    for (int t = 0; t < a->warmup; t++) {
        scene_step(s, dt);
        cqc_status st = tick(c, a, s, dt, &out, hits);
        if (st != CQC_OK) {
            free(lat);
            cqc_contacts_release(&out);
            return fail("warm-up tick", st, c);
        }
    }
    cqc_stats s1 = cqc_get_stats(c);
    double cpu0 = a->daemon_pid ? daemon_cpu(a->daemon_pid) : 0, start = now_s(), next = start;
    for (int t = 0; t < a->ticks; t++) {
        scene_step(s, dt);
        double t0 = now_s();
        cqc_status st = tick(c, a, s, dt, &out, hits);
        lat[t] = now_s() - t0;
        if (st != CQC_OK) {
            free(lat);
            cqc_contacts_release(&out);
            return fail("tick", st, c);
        }
        pairs += out.pair_count;
        next += dt;
        if (now_s() > next) {
            missed++;
            next = now_s(); /* a late tick does not make the next ones late */
        } else if (!a->free_run) {
            struct timespec w = {0, (long)((next - now_s()) * 1e9)};
            nanosleep(&w, NULL);
        }
    }
    double cpu1 = a->daemon_pid ? daemon_cpu(a->daemon_pid) : 0;
    cqc_stats s2 = cqc_get_stats(c);
    qsort(lat, (size_t)a->ticks, sizeof *lat, cmp_double);
    int T = a->ticks;
    double ed = (double)((s2.encode_ns - s1.encode_ns) + (s2.decode_ns - s1.decode_ns)) / 1e3 / T;
    printf("tick latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", lat[T / 2] * 1e3, lat[T * 9 / 10] * 1e3,
           lat[T * 99 / 100] * 1e3, lat[T - 1] * 1e3);
    printf("client encode %.1f us + decode %.1f us per tick; %.0f bytes out, %.0f in\n",
           (double)(s2.encode_ns - s1.encode_ns) / 1e3 / T, (double)(s2.decode_ns - s1.decode_ns) / 1e3 / T,
           (double)(s2.bytes_out - s1.bytes_out) / T, (double)(s2.bytes_in - s1.bytes_in) / T);
    if (a->daemon_pid)
        printf("daemon_cpu_us_per_tick %.1f\n", (cpu1 - cpu0) * 1e6 / T);
    printf("summary: boxes=%d ticks=%d hz=%d p50_ms=%.3f p99_ms=%.3f missed=%d contacts_per_tick=%.1f "
           "client_us_per_tick=%.1f\n",
           s->n, T, a->hz, lat[T / 2] * 1e3, lat[T * 99 / 100] * 1e3, missed, (double)pairs / T, ed);
    free(lat);
    cqc_contacts_release(&out);
    return 0;
}

static const char usage[] =
    "usage: tick [--host H] [--port P] [--boxes N] [--ticks T] [--token TOKEN]\n"
    "            [--hz 60] [--world NAME] [--json] [--free-run] [--warmup 0] [--daemon-pid PID]\n";

static bool parse(int argc, char **argv, args *a)
{
    *a = (args){.host = "127.0.0.1", .world = "tick", .port = 7879, .boxes = 10000, .ticks = 600, .hz = 60};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--json") || !strcmp(k, "--free-run")) {
            *(k[2] == 'j' ? &a->json : &a->free_run) = true;
            continue;
        }
        if (!v)
            return false;
        i++;
        if (!strcmp(k, "--host"))
            a->host = v;
        else if (!strcmp(k, "--token"))
            a->token = v;
        else if (!strcmp(k, "--world"))
            a->world = v;
        else if (!strcmp(k, "--port"))
            a->port = atoi(v);
        else if (!strcmp(k, "--boxes"))
            a->boxes = atoi(v);
        else if (!strcmp(k, "--ticks"))
            a->ticks = atoi(v);
        else if (!strcmp(k, "--hz"))
            a->hz = atoi(v);
        else if (!strcmp(k, "--daemon-pid"))
            a->daemon_pid = atoi(v);
        else if (!strcmp(k, "--warmup"))
            a->warmup = atoi(v);
        else
            return false;
    }
    return a->port > 0 && a->port < 65536 && a->boxes > 0 && a->ticks > 0 && a->hz > 0 && a->warmup >= 0;
}

int main(int argc, char **argv)
{
    args a;
    if (!parse(argc, argv, &a)) {
        fputs(usage, stderr);
        return 2;
    }
    cqc_options o;
    cqc_options_init(&o);
    o.host = a.host;
    o.port = (uint16_t)a.port;
    o.token = a.token;
    o.encoding = a.json ? CQC_JSON : CQC_MSGPACK;
    o.io_timeout_ms = 30000; /* a 100,000-box import takes a while */
    cqc_conn *c;
    cqc_status st = cqc_connect(&o, &c);
    if (st != CQC_OK)
        return fail("connect", st, NULL);
    scene s;
    int rc = scene_new(&s, a.boxes) ? load(c, &a, &s) : fail("scene", CQC_ENOMEM, NULL);
    if (rc == 0)
        rc = run(&a, c, &s);
    cqc_world_delete(c, a.world);
    scene_free(&s);
    cqc_close(c);
    return rc;
}
