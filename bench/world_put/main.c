/* A by-hand timing harness for the world side of issue 21 (not part of
 * `make bench`): the cost of one move in a frame of coherent motion, and
 * of one single-shape upsert, as the world grows.
 *
 *   make build/libcq.a
 *   cc -O2 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Icore/include \
 *      bench/world_put/main.c build/libcq.a -lm -o build/world-put
 *   taskset -c 1 build/world-put moves N FRAMES [id|handle]
 *   taskset -c 1 build/world-put put N REPS
 *
 * Boxes of half-width 0.5 at a density of one per 8 unit cubes (so the
 * pairs per shape do not change with N), ids "b<k>" in creation order.
 * `moves`: every frame moves every box a small step (by id, as a server
 * does, or by handle), in a fixed shuffled order; prints ns per move of
 * cq_world_apply (best frame and the median) and of its halves (median). `put`: REPS batches of one
 * upsert of a new id into the world of N (each removed again by the next
 * batch, so the world stays at N), and REPS upserts replacing an existing
 * id; prints microseconds per batch. Times are the thread's CPU time (the
 * machine is shared). WORLD_PUT_PAUSE=S sleeps S seconds after building
 * the world, for `perf record -p PID` of the timed part alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cq/world.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static double uniform(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return lo + (hi - lo) * (double)(rng_state >> 11) * 0x1p-53;
}

typedef struct scene {
    int n;
    double L;
    char (*id)[16];
    char (*fid)[16]; /* a frame's ids in its ops' order, as a decoded request holds them */
    cq_vec3 *pos, *vel;
    cq_world_op *ops;
    int *order;
    cq_world *w;
} scene;

static cq_world_op box_op(const char *id, cq_vec3 p)
{
    cq_xform x = cq_xform_identity();
    x.p = p;
    return (cq_world_op){.kind = CQ_WORLD_UPSERT, .id = id, .shape = {.type = CQ_BOX, .box = {cq_v3(0.5, 0.5, 0.5)}},
                         .pose = x, .layer = 1, .mask = 1};
}

static int build(scene *s, int n)
{
    s->n = n;
    s->L = 0.5 * cbrt(8.0 * n);
    s->id = malloc(sizeof *s->id * (size_t)n);
    s->fid = malloc(sizeof *s->fid * (size_t)n);
    s->pos = malloc(sizeof *s->pos * (size_t)n);
    s->vel = malloc(sizeof *s->vel * (size_t)n);
    s->ops = malloc(sizeof *s->ops * (size_t)n);
    s->order = malloc(sizeof *s->order * (size_t)n);
    for (int k = 0; k < n; k++) {
        snprintf(s->id[k], sizeof s->id[k], "b%d", k);
        s->pos[k] = cq_v3(uniform(-s->L, s->L), uniform(-s->L, s->L), uniform(-s->L, s->L));
        s->vel[k] = cq_v3(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
        s->ops[k] = box_op(s->id[k], s->pos[k]);
        s->order[k] = k;
    }
    for (int k = n - 1; k > 0; k--) { /* the client's order, fixed across frames */
        int j = (int)uniform(0, k + 1);
        int t = s->order[k];
        s->order[k] = s->order[j];
        s->order[j] = t;
    }
    int bad;
    if (cq_world_create(&(cq_world_settings){.skin = 0.1, .capacity = n}, &s->w) != CQ_OK ||
        cq_world_apply(s->w, s->ops, n, &bad) != CQ_OK)
        return -1;
    return 0;
}

static void frame_ops(scene *s, bool by_handle)
{
    const double dt = 1.0 / 60;
    for (int i = 0; i < s->n; i++) {
        int k = s->order[i];
        double *p[3] = {&s->pos[k].x, &s->pos[k].y, &s->pos[k].z}, *v[3] = {&s->vel[k].x, &s->vel[k].y, &s->vel[k].z};
        for (int a = 0; a < 3; a++) {
            if (fabs(*p[a] + *v[a] * dt) > s->L)
                *v[a] = -*v[a];
            *p[a] += *v[a] * dt;
        }
        cq_xform x = cq_xform_identity();
        x.p = s->pos[k];
        memcpy(s->fid[i], s->id[k], sizeof s->fid[i]);
        cq_world_op op = {.kind = CQ_WORLD_MOVE, .id = s->fid[i], .pose = x, .velocity = s->vel[k]};
        if (by_handle) {
            cq_world_find(s->w, s->id[k], &op.handle);
            op.id = NULL;
        }
        s->ops[i] = op;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times cq_world_apply as its two halves: prepare (checks, id lookups)
 * and commit (the stores and the broadphase update). */
static int run_moves(scene *s, int frames, bool by_handle)
{
    double *t = malloc(sizeof *t * (size_t)frames * 3), *tp = t + frames, *tc = tp + frames;
    for (int f = 0; f < frames; f++) {
        frame_ops(s, by_handle);
        int bad;
        double t0 = now();
        if (cq_world_prepare(s->w, s->ops, s->n, &bad) != CQ_OK)
            return 1;
        double t1 = now();
        cq_world_commit(s->w, s->ops, s->n);
        double t2 = now();
        t[f] = t2 - t0;
        tp[f] = t1 - t0;
        tc[f] = t2 - t1;
    }
    for (int k = 0; k < 3; k++)
        qsort(t + k * frames, (size_t)frames, sizeof *t, cmp_double);
    printf("shapes %d\nframes %d\nns_per_move_best %.1f\nns_per_move_median %.1f\n", s->n, frames,
           1e9 * t[0] / s->n, 1e9 * t[frames / 2] / s->n);
    printf("prepare_ns_median %.1f\ncommit_ns_median %.1f\npairs %d\n", 1e9 * tp[frames / 2] / s->n,
           1e9 * tc[frames / 2] / s->n, cq_world_get_stats(s->w).broadphase_pairs);
    free(t);
    return 0;
}

static int run_put(scene *s, int reps)
{
    double t_new = 0, t_replace = 0;
    int bad;
    for (int r = 0; r < reps; r++) {
        char id[16];
        snprintf(id, sizeof id, "p%d", r);
        cq_world_op op = box_op(id, cq_v3(uniform(-s->L, s->L), uniform(-s->L, s->L), uniform(-s->L, s->L)));
        double t0 = now();
        if (cq_world_apply(s->w, &op, 1, &bad) != CQ_OK)
            return 1;
        t_new += now() - t0;
        cq_world_op rm = {.kind = CQ_WORLD_REMOVE, .id = id};
        if (cq_world_apply(s->w, &rm, 1, &bad) != CQ_OK)
            return 1;
        if (s->n == 0)
            continue;
        int k = (int)uniform(0, s->n);
        op = box_op(s->id[k], s->pos[k]);
        t0 = now();
        if (cq_world_apply(s->w, &op, 1, &bad) != CQ_OK)
            return 1;
        t_replace += now() - t0;
    }
    printf("shapes %d\nreps %d\nput_new_us %.2f\nput_replace_us %.2f\n", s->n, reps, 1e6 * t_new / reps,
           1e6 * t_replace / reps);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "moves") != 0 && strcmp(argv[1], "put") != 0)) {
        fprintf(stderr, "usage: world-put moves N FRAMES [id|handle] | put N REPS\n");
        return 2;
    }
    scene s = {0};
    if (build(&s, atoi(argv[2])) != 0) {
        fprintf(stderr, "world-put: cannot build the world\n");
        return 1;
    }
    if (getenv("WORLD_PUT_PAUSE")) { /* time to attach `perf record -p` to the frames alone */
        fprintf(stderr, "world-put: built, pid %d\n", (int)getpid());
        sleep((unsigned)atoi(getenv("WORLD_PUT_PAUSE")));
    }
    int rc = strcmp(argv[1], "moves") == 0 ? run_moves(&s, atoi(argv[3]), argc > 4 && !strcmp(argv[4], "handle"))
                                           : run_put(&s, atoi(argv[3]));
    cq_world_destroy(s.w);
    return rc;
}
