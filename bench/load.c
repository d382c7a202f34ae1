/* `cq-bench load WHAT:SCENE[:COUNT] ...`: a world of cq-gen's boxes under
 * game load, through the public API, each WHAT on its own fresh worlds:
 *
 *   move:SCENE[:FRAMES]  coherent motion: every box moved by cq-gen's rule
 *       each frame, one cq_world_apply a frame, frames alternately by id (as
 *       the daemon names shapes) and by handle; ns per move.
 *   teleport:SCENE[:BUDGET]  building the world afresh (cq_world_create and one
 *       upsert batch of every box, its first broadphase update included),
 *       then one batch moving 1 %, 50 % and 100 % of the boxes (a random
 *       subset) to random places in the scene's cube, U(-L, L)^3 as cq-gen
 *       draws centres; best of LOAD_REPS worlds. A batch expected to take
 *       more than BUDGET seconds (default TELEPORT_BUDGET_S) is skipped.
 *   put:SCENE[:REPS]     one upsert of a new box (one shape PUT) into the
 *       world of every box of SCENE and into an empty world, alternately,
 *       each removed again untimed so every PUT meets the same world; medians.
 *       The new id sorts at a random place among the world's.
 *
 * Keys end in the scene's box count; the ratios of the goals are printed
 * from the figures of this one process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gen/splitmix.h"

#define LOAD_REPS 3
#define WARMUP_FRAMES 3
#define DEFAULT_PUTS 200
#define LOAD_SEED 2112
/* Seconds a teleport round may take before its larger batches are skipped. */
#define TELEPORT_BUDGET_S 10

static const int teleport_percent[] = {1, 50, 100};
#define TELEPORT_KINDS (int)(sizeof teleport_percent / sizeof teleport_percent[0])

static int fail(const char *what, int rc)
{
    fprintf(stderr, "cq-bench load: %s: %s\n", what, cq_strerror(rc));
    return 1;
}

/* Creates a world sized for the scene and upserts every box in one batch;
 * returns the seconds that took (negative on failure, *w NULL). */
static double build(const bench_scene *s, cq_world **w)
{
    int bad;
    double t0 = bench_now();
    int rc = cq_world_create(&(cq_world_settings){.capacity = s->n}, w);
    if (rc == CQ_OK)
        rc = cq_world_apply(*w, s->ops, s->n, &bad);
    double t = bench_now() - t0;
    if (rc != CQ_OK) {
        cq_world_destroy(*w);
        *w = NULL;
        fail("building the world", rc);
        return -1;
    }
    return t;
}

/* Times one batch; negative when it was refused. */
static double timed_apply(cq_world *w, const cq_world_op *ops, int count)
{
    int bad;
    double t0 = bench_now();
    int rc = cq_world_apply(w, ops, count, &bad);
    double t = bench_now() - t0;
    if (rc != CQ_OK) {
        fprintf(stderr, "cq-bench load: batch of %d refused at op %d: %s\n", count, bad, cq_strerror(rc));
        return -1;
    }
    return t;
}

static double uniform_point_coord(gen_rng *rng, double L) { return gen_uniform(rng, -L, L); }

/* ops[0..count): moves by id of a random subset of count boxes (a partial
 * Fisher-Yates shuffle of order) to random places, rotation and velocity kept. */
static void teleport_ops(const bench_scene *s, gen_rng *rng, int *order, cq_world_op *ops, int count)
{
    for (int i = 0; i < count; i++) {
        int j = i + (int)(gen_next(rng) % (uint64_t)(s->n - i));
        int k = order[j];
        order[j] = order[i];
        order[i] = k;
        cq_xform pose = s->ops[k].pose;
        pose.p.x = uniform_point_coord(rng, s->L);
        pose.p.y = uniform_point_coord(rng, s->L);
        pose.p.z = uniform_point_coord(rng, s->L);
        ops[i] = (cq_world_op){.kind = CQ_WORLD_MOVE, .id = s->ids[k], .pose = pose, .keep_velocity = true};
    }
}

static double min2(double a, double b) { return a < b ? a : b; }

/* Whether the world holds op's pose for op's id: a timed batch that was not
 * applied as asked must not pass for a figure. */
static bool applied(const cq_world *w, const cq_world_op *op)
{
    cq_world_handle h;
    cq_world_body body;
    return cq_world_find(w, op->id, &h) == CQ_OK && cq_world_get(w, h, &body) == CQ_OK &&
           body.pose.p.x == op->pose.p.x && body.pose.p.y == op->pose.p.y && body.pose.p.z == op->pose.p.z;
}

typedef struct teleport_best {
    double build, batch[TELEPORT_KINDS]; /* seconds; NAN: not run */
    double estimate[TELEPORT_KINDS];     /* seconds, for a batch skipped as over the budget */
} teleport_best;

/* One fresh world: its build, then the three batches in turn. A batch
 * whose cost, scaled by count from the previous one, would pass budget
 * seconds is skipped (an insertion-sort broadphase makes a mass move
 * O(n^2): minutes at 100,000 boxes). Returns the seconds spent, -1 on
 * failure. */
static double teleport_round(const bench_scene *s, gen_rng *rng, int *order, cq_world_op *ops, double budget,
                             teleport_best *b)
{
    cq_world *w;
    double t = build(s, &w), spent = t, prev = 0; /* prev: the last batch's seconds, measured or estimated */
    int prev_count = 0;
    if (t < 0)
        return -1;
    b->build = min2(b->build, t);
    for (int i = 0; i < TELEPORT_KINDS; i++) {
        int count = (int)((long)s->n * teleport_percent[i] / 100);
        double estimate = prev_count ? prev * count / prev_count : 0;
        if (estimate > budget) { /* the next one is larger still */
            b->estimate[i] = estimate;
            prev = estimate;
            prev_count = count;
            continue;
        }
        teleport_ops(s, rng, order, ops, count);
        double tt = timed_apply(w, ops, count);
        if (tt < 0 || !applied(w, &ops[0]) || !applied(w, &ops[count - 1])) {
            fprintf(stderr, "cq-bench load: a teleport batch left a box elsewhere\n");
            return cq_world_destroy(w), -1;
        }
        b->batch[i] = isnan(b->batch[i]) ? tt : min2(b->batch[i], tt);
        prev = tt;
        prev_count = count;
        spent += tt;
    }
    cq_world_destroy(w);
    return spent;
}

static void print_teleport(const bench_scene *s, const teleport_best *b)
{
    printf("build_ms_%d %.4f\n", s->n, 1e3 * b->build);
    for (int i = 0; i < TELEPORT_KINDS; i++) {
        if (!isnan(b->batch[i]))
            printf("teleport%d_ms_%d %.4f\n", teleport_percent[i], s->n, 1e3 * b->batch[i]);
        else
            printf("teleport%d_skipped_est_ms_%d %.0f\n", teleport_percent[i], s->n, 1e3 * b->estimate[i]);
    }
    if (!isnan(b->batch[TELEPORT_KINDS - 1]))
        printf("teleport100_over_build_%d %.4f\n", s->n, b->batch[TELEPORT_KINDS - 1] / b->build);
}

/* Best of LOAD_REPS worlds, fewer when one round takes over budget. */
static int run_teleport(bench_scene *s, double budget)
{
    gen_rng rng = {LOAD_SEED};
    int *order = malloc(sizeof *order * (size_t)s->n);
    cq_world_op *ops = malloc(sizeof *ops * (size_t)s->n);
    teleport_best b = {.build = INFINITY};
    for (int i = 0; i < TELEPORT_KINDS; i++)
        b.batch[i] = NAN;
    for (int k = 0; order && k < s->n; k++)
        order[k] = k;
    double spent = 0;
    for (int r = 0; r < LOAD_REPS && order && ops && spent >= 0 && spent < budget; r++)
        spent = teleport_round(s, &rng, order, ops, budget, &b);
    free(order);
    free(ops);
    if (spent < 0 || !isfinite(b.build))
        return 1;
    print_teleport(s, &b);
    return 0;
}

/* Moves by id and by handle of every box, at the scene's current poses. */
static int move_ops(const bench_scene *s, const cq_world *w, cq_world_op *by_id, cq_world_op *by_handle)
{
    for (int k = 0; k < s->n; k++) {
        cq_world_handle h;
        int rc = cq_world_find(w, s->ids[k], &h);
        if (rc != CQ_OK)
            return fail("finding a box", rc);
        by_id[k] = (cq_world_op){.kind = CQ_WORLD_MOVE, .id = s->ids[k], .pose = s->ops[k].pose,
                                 .velocity = s->vel[k]};
        by_handle[k] = by_id[k];
        by_handle[k].id = NULL;
        by_handle[k].handle = h;
    }
    return 0;
}

/* One frame of cq-gen's motion into ops (poses and velocities). */
static void frame_into(bench_scene *s, cq_world_op *ops)
{
    bench_scene_advance(s);
    for (int k = 0; k < s->n; k++) {
        ops[k].pose.p = s->pos[k];
        ops[k].velocity = s->vel[k];
    }
}

static int run_move(bench_scene *s, int frames)
{
    cq_world *w;
    cq_world_op *ops[2] = {malloc(sizeof *ops[0] * (size_t)s->n), malloc(sizeof *ops[1] * (size_t)s->n)};
    double spent[2] = {0, 0};
    int done[2] = {0, 0}, rc = 1;
    if (ops[0] && ops[1] && build(s, &w) >= 0) {
        rc = move_ops(s, w, ops[0], ops[1]);
        for (int f = 0; rc == 0 && f < WARMUP_FRAMES + frames; f++) {
            int by = f % 2; /* 0: by id, 1: by handle */
            frame_into(s, ops[by]);
            double t = timed_apply(w, ops[by], s->n);
            rc = t < 0;
            if (f >= WARMUP_FRAMES) {
                spent[by] += t;
                done[by]++;
            }
        }
        cq_world_destroy(w);
    }
    free(ops[0]);
    free(ops[1]);
    if (rc != 0 || !done[0] || !done[1])
        return 1;
    printf("move_frames_%d %d\n", s->n, frames);
    printf("move_id_ns_%d %.2f\n", s->n, 1e9 * spent[0] / ((double)done[0] * s->n));
    printf("move_handle_ns_%d %.2f\n", s->n, 1e9 * spent[1] / ((double)done[1] * s->n));
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Upserts box k of the scene under a new id at a random place (timed),
 * then removes it again (untimed). The id, "box<j>p" for a random box j,
 * sorts at a random place among the world's ("put<k>" sorted after every
 * "box<k>", which hid a cost of the id order's that grew with the ids
 * after the new one). */
static double put_once(cq_world *w, const bench_scene *s, gen_rng *rng, int rep)
{
    char id[32];
    snprintf(id, sizeof id, "box%dp", (int)(gen_next(rng) % (uint64_t)s->n));
    cq_world_op op = s->ops[rep % s->n];
    op.id = id;
    op.pose.p = cq_v3(uniform_point_coord(rng, s->L), uniform_point_coord(rng, s->L), uniform_point_coord(rng, s->L));
    int before = cq_world_count(w), bad;
    double t = timed_apply(w, &op, 1);
    if (t >= 0 && (cq_world_count(w) != before + 1 || !applied(w, &op)))
        return -1;
    cq_world_op rm = {.kind = CQ_WORLD_REMOVE, .id = id};
    if (t >= 0 && (cq_world_apply(w, &rm, 1, &bad) != CQ_OK || cq_world_count(w) != before))
        return -1;
    return t;
}

static int run_put(bench_scene *s, int reps)
{
    cq_world *full = NULL, *empty = NULL;
    double *t[2] = {malloc(sizeof *t[0] * (size_t)reps), malloc(sizeof *t[1] * (size_t)reps)};
    gen_rng rng = {LOAD_SEED + 1};
    int rc = !t[0] || !t[1] || build(s, &full) < 0 || cq_world_reserve(full, s->n + 1, 1) != CQ_OK ||
             cq_world_create(&(cq_world_settings){.capacity = CQ_WORLD_DEFAULT_CAPACITY}, &empty) != CQ_OK;
    for (int r = 0; rc == 0 && r < reps; r++) { /* alternate, so a burst of load hits both */
        t[0][r] = put_once(empty, s, &rng, r);
        t[1][r] = put_once(full, s, &rng, r);
        rc = t[0][r] < 0 || t[1][r] < 0;
    }
    if (rc == 0) {
        double e = median(t[0], reps), f = median(t[1], reps);
        printf("put_shapes %d\nput_reps %d\n", s->n, reps);
        printf("put_empty_us %.3f\nput_full_us %.3f\nput_full_over_empty %.4f\n", 1e6 * e, 1e6 * f, f / e);
    }
    cq_world_destroy(full);
    cq_world_destroy(empty);
    free(t[0]);
    free(t[1]);
    return rc;
}

/* One WHAT:SCENE[:COUNT] argument. */
static int run_arg(const char *arg)
{
    char what[16], path[4096];
    int count = 0;
    if (sscanf(arg, "%15[a-z]:%4095[^:]:%d", what, path, &count) < 2) {
        fprintf(stderr, "cq-bench load: bad argument %s (WHAT:SCENE[:COUNT])\n", arg);
        return 2;
    }
    bench_scene s;
    if (!bench_scene_read(path, &s)) {
        fprintf(stderr, "cq-bench load: cannot read the scene %s\n", path);
        return 1;
    }
    bench_scene_point_ids(&s);
    int rc = 2;
    if (strcmp(what, "move") == 0)
        rc = run_move(&s, count > 0 ? count : 20);
    else if (strcmp(what, "teleport") == 0)
        rc = run_teleport(&s, count > 0 ? count : TELEPORT_BUDGET_S);
    else if (strcmp(what, "put") == 0)
        rc = run_put(&s, count > 0 ? count : DEFAULT_PUTS);
    else
        fprintf(stderr, "cq-bench load: unknown %s (move, teleport, put)\n", what);
    bench_scene_free(&s);
    return rc;
}

int bench_load(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: cq-bench load WHAT:SCENE[:COUNT]...   (WHAT: move, teleport, put)\n");
        return 2;
    }
    for (int i = 0; i < argc; i++) {
        int rc = run_arg(argv[i]);
        if (rc != 0)
            return rc;
        fflush(stdout);
    }
    return 0;
}
