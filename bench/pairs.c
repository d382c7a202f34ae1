/* Box-box figures on cq-gen's OBB pairs: verdict counts, then the boolean
 * test (one call a pair, and the batch form over all of them) and the full
 * contact query, each the best of fifteen passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "box_many.h"
#include "cq/hull.h"
#include "instr.h"

#define PASSES 15

static int read_obb(FILE *f, cq_obb *o)
{
    double v[15];
    for (int i = 0; i < 15; i++)
        if (fscanf(f, "%lf", &v[i]) != 1)
            return 0;
    cq_vec3 axes[3] = {cq_v3(v[6], v[7], v[8]), cq_v3(v[9], v[10], v[11]), cq_v3(v[12], v[13], v[14])};
    cq_xform pose;
    if (cq_pose_from_axes(cq_v3(v[0], v[1], v[2]), axes, &pose).status != CQ_OK)
        return 0;
    *o = (cq_obb){pose.p, cq_v3(v[3], v[4], v[5]), pose.r};
    return 1;
}

/* Reads up to all pairs of the file; returns the count, -1 on error. */
static int read_pairs(const char *path, cq_obb **a, cq_obb **b)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, cap = 1024;
    *a = malloc(sizeof **a * (size_t)cap);
    *b = malloc(sizeof **b * (size_t)cap);
    while (*a && *b) {
        if (n == cap) {
            cap *= 2;
            cq_obb *na = realloc(*a, sizeof **a * (size_t)cap), *nb = realloc(*b, sizeof **b * (size_t)cap);
            if (na)
                *a = na;
            if (nb)
                *b = nb;
            if (!na || !nb)
                break;
        }
        if (!read_obb(f, &(*a)[n]) || !read_obb(f, &(*b)[n]))
            break;
        n++;
    }
    fclose(f);
    return n;
}

/* Nanoseconds per pair of the boolean test, best of PASSES. */
static double time_overlap(const cq_obb *a, const cq_obb *b, int n, int *overlaps)
{
    double best = INFINITY;
    for (int p = 0; p < PASSES; p++) {
        int count = 0;
        double t0 = bench_now();
        for (int i = 0; i < n; i++)
            count += cq_obb_overlap(&a[i], &b[i]);
        best = fmin(best, bench_now() - t0);
        *overlaps = count;
    }
    return best * 1e9 / n;
}

/* Nanoseconds per pair of the batch form (cq_obb_overlap_many: four pairs
 * per vector operation), best of PASSES. */
static double time_overlap_many(const cq_obb *a, const cq_obb *b, int n, int *overlaps)
{
    bool *out = malloc((size_t)n);
    double best = INFINITY;
    for (int p = 0; out && p < PASSES; p++) {
        double t0 = bench_now();
        cq_obb_overlap_many(a, b, n, out);
        best = fmin(best, bench_now() - t0);
    }
    int count = 0;
    for (int i = 0; out && i < n; i++)
        count += out[i];
    *overlaps = count;
    double ns = out ? best * 1e9 / n : NAN;
    free(out);
    return ns;
}

/* One pass of the full contact query over the pairs; the points found.
 * Not inlined, so callgrind can count its instructions on its own
 * (`make bench-instructions`). One query reused, as a world's batch loop
 * would: only the shapes and poses change per pair. Separated pairs skip
 * their distance, as in batch contact generation. */
__attribute__((noinline)) int bench_contacts_pass(const cq_obb *a, const cq_obb *b, int n)
{
    cq_shape sa = {.type = CQ_BOX}, sb = {.type = CQ_BOX};
    cq_pair_query q = {.a = &sa, .b = &sb, .skip_distance = true};
    int count = 0;
    for (int i = 0; i < n; i++) {
        sa.box.half = a[i].half, sb.box.half = b[i].half;
        q.xa = (cq_xform){a[i].center, a[i].axes}, q.xb = (cq_xform){b[i].center, b[i].axes};
        cq_contact c;
        cq_collide(&q, &c);
        count += c.point_count;
    }
    return count;
}

/* One pass of the batch form (cq__collide_many) over queries built once,
 * as a world would hand its pairs over; the points found. */
__attribute__((noinline)) int bench_contacts_many_pass(const cq_pair_query *q, int n, cq_contact *out)
{
    cq__collide_many(q, n, out);
    int count = 0;
    for (int i = 0; i < n; i++)
        count += out[i].point_count;
    return count;
}

/* Nanoseconds per pair of the full contact query, one call a pair
 * (ns[0]) and batched (ns[1]), best of PASSES; their passes alternate,
 * so both see the machine in the same moods. */
static void time_contacts(const cq_obb *a, const cq_obb *b, int n, double ns[2], int points[2])
{
    double best[2] = {INFINITY, INFINITY};
    cq_shape *s = malloc(sizeof *s * 2 * (size_t)n);
    cq_pair_query *q = malloc(sizeof *q * (size_t)n);
    cq_contact *out = malloc(sizeof *out * (size_t)n);
    for (int i = 0; s && q && out && i < n; i++) {
        s[2 * i] = (cq_shape){.type = CQ_BOX, .box = {a[i].half}}, s[2 * i + 1] = (cq_shape){.type = CQ_BOX, .box = {b[i].half}};
        q[i] = (cq_pair_query){.a = &s[2 * i], .xa = {a[i].center, a[i].axes}, .b = &s[2 * i + 1],
                               .xb = {b[i].center, b[i].axes}, .skip_distance = true};
    }
    points[1] = -1;
    for (int p = 0; p < PASSES; p++) {
        double t0 = bench_now();
        points[0] = bench_contacts_pass(a, b, n);
        double t1 = bench_now();
        if (s && q && out)
            points[1] = bench_contacts_many_pass(q, n, out);
        double t2 = bench_now();
        best[0] = fmin(best[0], t1 - t0), best[1] = fmin(best[1], t2 - t1);
    }
    ns[0] = best[0] * 1e9 / n;
    ns[1] = s && q && out ? best[1] * 1e9 / n : NAN;
    free(s), free(q), free(out);
}

/* What one pass over the hull pairs found and cost. */
typedef struct hull_pass {
    int overlaps, sat; /* pairs overlapping, pairs the hull SAT answered */
    long long instructions; /* user-space instructions of the pass, -1 unknown */
} hull_pass;

/* Seconds for one pass of the pair query over the hull pairs; what it
 * found and its instruction count in *out (fd: bench_instr_open's). */
static double gjk_epa_pass(const cq_obb *a, const cq_obb *b, cq_hull *const *ha, cq_hull *const *hb, int n,
                           bool manifold, int fd, hull_pass *out)
{
    int count = 0, sat = 0;
    long long i0 = bench_instr_read(fd);
    double t0 = bench_now();
    for (int i = 0; i < n; i++) {
        cq_shape sa = {.type = CQ_CONVEX, .convex = {ha[i]}}, sb = {.type = CQ_CONVEX, .convex = {hb[i]}};
        cq_pair_query q = {.a = &sa, .xa = {a[i].center, a[i].axes}, .b = &sb, .xb = {b[i].center, b[i].axes},
                           .skip_manifold = !manifold};
        cq_contact c;
        cq_collide(&q, &c);
        count += c.overlap;
        sat += c.algorithm == CQ_ALG_SAT_HULL;
    }
    double t = bench_now() - t0;
    long long i1 = bench_instr_read(fd);
    *out = (hull_pass){count, sat, i0 >= 0 && i1 >= 0 ? i1 - i0 : -1};
    return t;
}

/* One pass of the batch form (cq__collide_many) over hull-pair queries
 * built once (qs[manifold], with room for the answers in cs), as a world
 * would hand its pairs over; what it found as gjk_epa_pass does. */
static double gjk_epa_batch_pass(cq_pair_query *const qs[2], bool manifold, cq_contact *cs, int n, int fd,
                                 hull_pass *out)
{
    const cq_pair_query *q = qs[manifold];
    int count = 0, sat = 0;
    long long i0 = bench_instr_read(fd);
    double t0 = bench_now();
    cq__collide_many(q, n, cs);
    for (int i = 0; i < n; i++) {
        count += cs[i].overlap;
        sat += cs[i].algorithm == CQ_ALG_SAT_HULL;
    }
    double t = bench_now() - t0;
    long long i1 = bench_instr_read(fd);
    *out = (hull_pass){count, sat, i0 >= 0 && i1 >= 0 ? i1 - i0 : -1};
    return t;
}

/* The two passes as functions of their own, never inlined, so an
 * instruction counter outside the process (callgrind's --toggle-collect,
 * bench/hull_instructions.py) can count each alone where the CPU's own
 * counters are not available. */
__attribute__((noinline)) static double hull_pass_depth(const cq_obb *a, const cq_obb *b, cq_hull *const *ha,
                                                        cq_hull *const *hb, int n, int fd, hull_pass *out)
{
    return gjk_epa_pass(a, b, ha, hb, n, false, fd, out);
}

__attribute__((noinline)) static double hull_pass_manifold(const cq_obb *a, const cq_obb *b, cq_hull *const *ha,
                                                           cq_hull *const *hb, int n, int fd, hull_pass *out)
{
    return gjk_epa_pass(a, b, ha, hb, n, true, fd, out);
}

/* The batched passes, depth and normal alone (qs[0]) and with the
 * manifold (qs[1]), as functions of their own for the same reason (and
 * not the same body, which the compiler would fold into one). */
__attribute__((noinline)) static double hull_pass_depth_batch(cq_pair_query *const qs[2], cq_contact *cs, int n,
                                                              int fd, hull_pass *out)
{
    return gjk_epa_batch_pass(qs, false, cs, n, fd, out);
}

__attribute__((noinline)) static double hull_pass_manifold_batch(cq_pair_query *const qs[2], cq_contact *cs, int n,
                                                                 int fd, hull_pass *out)
{
    return gjk_epa_batch_pass(qs, true, cs, n, fd, out);
}

/* Passes of the hull figures: PASSES, or $CQ_BENCH_HULL_PASSES (1 for an
 * instruction count under callgrind). */
static int hull_passes(void)
{
    const char *e = getenv("CQ_BENCH_HULL_PASSES");
    int p = e ? atoi(e) : 0;
    return p > 0 ? p : PASSES;
}

/* The hull figures' four passes: the query that stops at what the peers'
 * GJK/EPA return (a distance, or a depth and a normal), the one that clips
 * the contact points too, and the same two as one batch. */
enum { HULL_DEPTH, HULL_MANIFOLD, HULL_DEPTH_BATCH, HULL_MANIFOLD_BATCH, HULL_MODES };

/* One pass of mode m; qs[0] and qs[1] are the batch's queries without and
 * with the manifold. */
static double hull_pass_run(int m, const cq_obb *a, const cq_obb *b, cq_hull *const *ha, cq_hull *const *hb,
                            cq_pair_query *const qs[2], cq_contact *cs, int n, int fd, hull_pass *out)
{
    switch (m) {
    case HULL_DEPTH:
        return hull_pass_depth(a, b, ha, hb, n, fd, out);
    case HULL_MANIFOLD:
        return hull_pass_manifold(a, b, ha, hb, n, fd, out);
    case HULL_DEPTH_BATCH:
        return hull_pass_depth_batch(qs, cs, n, fd, out);
    default:
        return hull_pass_manifold_batch(qs, cs, n, fd, out);
    }
}

/* Nanoseconds per pair of the pair query on the same boxes given as 8-point
 * hulls (the general convex path: the hull SAT for overlapping pairs, GJK
 * for the rest), best of PASSES, and instructions per pair (the fewest of
 * the passes), in each of the HULL_MODES; the hulls (each its own
 * cq_hull_build, as a world's bodies with hulls of their own) and the
 * batch's queries are built once, outside the timing. The one-call passes
 * build each pair's query on the stack, as bench_contacts_pass does; the
 * batched ones hand cq__collide_many the array. The modes' passes
 * alternate, so all see the machine in the same moods. */
static void time_gjk_epa(const cq_obb *a, const cq_obb *b, int n, double ns[HULL_MODES], double instr[HULL_MODES],
                         hull_pass found[HULL_MODES])
{
    cq_hull **ha = calloc((size_t)n, sizeof *ha), **hb = calloc((size_t)n, sizeof *hb);
    cq_shape *sh = malloc(sizeof *sh * 2 * (size_t)n);
    cq_pair_query *qs[2] = {malloc(sizeof *qs[0] * (size_t)n), malloc(sizeof *qs[1] * (size_t)n)};
    cq_contact *cs = malloc(sizeof *cs * (size_t)n);
    double best[HULL_MODES];
    int ok = ha && hb && sh && qs[0] && qs[1] && cs;
    for (int i = 0; ok && i < n; i++) {
        cq_vec3 ca[8], cb[8];
        for (int k = 0; k < 8; k++) {
            ca[k] = cq_v3(k & 1 ? -a[i].half.x : a[i].half.x, k & 2 ? -a[i].half.y : a[i].half.y,
                          k & 4 ? -a[i].half.z : a[i].half.z);
            cb[k] = cq_v3(k & 1 ? -b[i].half.x : b[i].half.x, k & 2 ? -b[i].half.y : b[i].half.y,
                          k & 4 ? -b[i].half.z : b[i].half.z);
        }
        ok = cq_hull_build(ca, 8, 0, &ha[i]) == CQ_OK && cq_hull_build(cb, 8, 0, &hb[i]) == CQ_OK;
        if (!ok)
            break;
        sh[2 * i] = (cq_shape){.type = CQ_CONVEX, .convex = {ha[i]}};
        sh[2 * i + 1] = (cq_shape){.type = CQ_CONVEX, .convex = {hb[i]}};
        for (int m = 0; m < 2; m++)
            qs[m][i] = (cq_pair_query){.a = &sh[2 * i], .xa = {a[i].center, a[i].axes}, .b = &sh[2 * i + 1],
                                       .xb = {b[i].center, b[i].axes}, .skip_manifold = m == 0};
    }
    long long fewest[HULL_MODES];
    for (int m = 0; m < HULL_MODES; m++)
        found[m] = (hull_pass){-1, -1, -1}, fewest[m] = -1, best[m] = INFINITY;
    int fd = bench_instr_open();
    for (int p = 0, passes = hull_passes(); ok && p < passes; p++)
        for (int m = 0; m < HULL_MODES; m++) {
            best[m] = fmin(best[m], hull_pass_run(m, a, b, ha, hb, qs, cs, n, fd, &found[m]));
            if (found[m].instructions >= 0 && (fewest[m] < 0 || found[m].instructions < fewest[m]))
                fewest[m] = found[m].instructions;
        }
    if (fd >= 0)
        close(fd);
    for (int i = 0; i < n && ha && hb; i++)
        cq_hull_free(ha[i]), cq_hull_free(hb[i]);
    free(ha), free(hb), free(sh), free(qs[0]), free(qs[1]), free(cs);
    for (int m = 0; m < HULL_MODES; m++) {
        ns[m] = ok ? best[m] * 1e9 / n : NAN;
        instr[m] = ok && fewest[m] >= 0 ? (double)fewest[m] / n : NAN;
    }
}

int bench_pairs(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: cq-bench pairs FILE\n");
        return 2;
    }
    cq_obb *a = NULL, *b = NULL;
    int n = read_pairs(argv[0], &a, &b);
    if (n <= 0) {
        fprintf(stderr, "cq-bench: cannot read pairs from %s\n", argv[0]);
        free(a), free(b);
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--contacts") == 0) {
        /* The contact rows alone: what `make bench-instructions` counts. */
        int points[2];
        double ns[2];
        time_contacts(a, b, n, ns, points);
        printf("box_box_contacts_ns %.1f\nbox_box_contacts_batch_ns %.1f\n", ns[0], ns[1]);
        printf("contact_points %d\ncontact_points_batch %d\n", points[0], points[1]);
        free(a), free(b);
        return 0;
    }
    int full = 0, face_only_fp = 0;
    for (int i = 0; i < n; i++) {
        bool overlap = cq_obb_sat(&a[i], &b[i], false).overlap;
        full += overlap;
        face_only_fp += !overlap && cq_obb_sat(&a[i], &b[i], true).overlap;
    }
    int overlaps, batch_overlaps = -1, points[2];
    double overlap_ns = time_overlap(a, b, n, &overlaps);
    double batch_ns = time_overlap_many(a, b, n, &batch_overlaps);
    double contacts_ns[2];
    time_contacts(a, b, n, contacts_ns, points);
    hull_pass hull[HULL_MODES];
    double gjk_epa_ns[HULL_MODES], gjk_epa_instr[HULL_MODES];
    time_gjk_epa(a, b, n, gjk_epa_ns, gjk_epa_instr, hull);
    printf("pairs %d\n", n);
    printf("overlaps %d\n", full);
    printf("face_only_false_positives %d\n", face_only_fp);
    printf("box_box_overlap_ns %.1f\n", overlap_ns);
    printf("box_box_overlap_batch_ns %.1f\n", batch_ns);
    printf("box_box_contacts_ns %.1f\n", contacts_ns[0]);
    printf("box_box_contacts_batch_ns %.1f\n", contacts_ns[1]);
    printf("contact_points %d\n", points[0]);
    printf("contact_points_batch %d\n", points[1]);
    printf("gjk_epa_ns %.1f\n", gjk_epa_ns[0]);
    printf("gjk_epa_instructions %.0f\n", gjk_epa_instr[0]);
    printf("gjk_epa_overlaps %d\n", hull[0].overlaps);
    printf("gjk_epa_sat_answers %d\n", hull[0].sat);
    printf("gjk_epa_manifold_ns %.1f\n", gjk_epa_ns[1]);
    printf("gjk_epa_manifold_instructions %.0f\n", gjk_epa_instr[1]);
    printf("gjk_epa_batch_ns %.1f\n", gjk_epa_ns[HULL_DEPTH_BATCH]);
    printf("gjk_epa_batch_instructions %.0f\n", gjk_epa_instr[HULL_DEPTH_BATCH]);
    printf("gjk_epa_batch_manifold_ns %.1f\n", gjk_epa_ns[HULL_MANIFOLD_BATCH]);
    printf("gjk_epa_batch_manifold_instructions %.0f\n", gjk_epa_instr[HULL_MANIFOLD_BATCH]);
    free(a), free(b);
    return overlaps == full && batch_overlaps == full && points[1] == points[0] && hull[0].overlaps == full &&
                   hull[1].overlaps == full && hull[2].overlaps == full && hull[3].overlaps == full &&
                   hull[2].sat == hull[0].sat && hull[3].sat == hull[1].sat
               ? 0
               : 1;
}
