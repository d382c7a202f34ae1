/* `cq-bench world SCENE RAYS FRAMES [SKIN]`: a world of cq-gen's moving
 * boxes. A frame moves every box by cq-gen's rule (one batch of moves) and
 * runs batch contacts for every touching pair; then the rays are cast for
 * their closest hits on the final state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cq/world.h"

#define RAY_PASSES 5

typedef struct scene {
    double L, dt;
    int n;
    cq_world_op *ops; /* one move per box, by handle once registered */
    cq_vec3 *pos, *vel;
    char (*ids)[16];
} scene;

static void scene_free(scene *s)
{
    free(s->ops);
    free(s->pos);
    free(s->vel);
    free(s->ids);
}

/* Reads the scene into upserts (ops) and the motion state; false on error. */
static bool read_scene(const char *path, scene *s)
{
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%lf %lf", &s->L, &s->dt) != 2) {
        if (f)
            fclose(f);
        return false;
    }
    int cap = 1024;
    bool ok = true;
    s->n = 0;
    s->ops = malloc(sizeof *s->ops * (size_t)cap);
    s->pos = malloc(sizeof *s->pos * (size_t)cap);
    s->vel = malloc(sizeof *s->vel * (size_t)cap);
    s->ids = malloc(sizeof *s->ids * (size_t)cap);
    for (double v[13]; ok;) {
        int got = 0;
        while (got < 13 && fscanf(f, "%lf", &v[got]) == 1)
            got++;
        if (got < 13)
            break;
        if (s->n == cap) {
            cap *= 2;
            s->ops = realloc(s->ops, sizeof *s->ops * (size_t)cap);
            s->pos = realloc(s->pos, sizeof *s->pos * (size_t)cap);
            s->vel = realloc(s->vel, sizeof *s->vel * (size_t)cap);
            s->ids = realloc(s->ids, sizeof *s->ids * (size_t)cap);
        }
        if (!s->ops || !s->pos || !s->vel || !s->ids)
            return fclose(f), false;
        int k = s->n++;
        cq_xform pose;
        ok = cq_pose_from_quat(cq_v3(v[0], v[1], v[2]), (cq_quat){v[6], v[7], v[8], v[9]}, &pose).status == CQ_OK;
        snprintf(s->ids[k], sizeof s->ids[k], "box%d", k);
        s->pos[k] = pose.p;
        s->vel[k] = cq_v3(v[10], v[11], v[12]);
        s->ops[k] = (cq_world_op){.kind = CQ_WORLD_UPSERT, /* ids are pointed to once the arrays stop moving */
                                  .shape = {.type = CQ_BOX, .box = {cq_v3(v[3], v[4], v[5])}},
                                  .pose = pose, .velocity = s->vel[k], .layer = 1, .mask = 1};
    }
    fclose(f);
    return ok && s->n > 0;
}

static cq_world_ray *read_rays(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    int cap = 1024;
    cq_world_ray *r = malloc(sizeof *r * (size_t)cap);
    double v[7];
    *n = 0;
    while (r && fscanf(f, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7) {
        if (*n == cap) {
            cap *= 2;
            r = realloc(r, sizeof *r * (size_t)cap);
            if (!r)
                break;
        }
        r[(*n)++] = (cq_world_ray){{cq_v3(v[0], v[1], v[2]), cq_v3(v[3], v[4], v[5]), v[6]}, 0xffffffffu};
    }
    fclose(f);
    return r;
}

/* cq-gen's rule: move by v dt; a coordinate that would leave [-L, L]
 * reverses that velocity component and moves by the reversed one instead. */
static void advance(scene *s)
{
    for (int k = 0; k < s->n; k++) {
        double *p[3] = {&s->pos[k].x, &s->pos[k].y, &s->pos[k].z};
        double *v[3] = {&s->vel[k].x, &s->vel[k].y, &s->vel[k].z};
        for (int i = 0; i < 3; i++) {
            double next = *p[i] + *v[i] * s->dt;
            if (next < -s->L || next > s->L) {
                *v[i] = -*v[i];
                next = *p[i] + *v[i] * s->dt;
            }
            *p[i] = next;
        }
        s->ops[k].pose.p = s->pos[k];
        s->ops[k].velocity = s->vel[k];
    }
}

static int setup(scene *s, double skin, cq_world **w)
{
    int bad;
    for (int k = 0; k < s->n; k++)
        s->ops[k].id = s->ids[k];
    if (cq_world_create(&(cq_world_settings){.skin = skin, .capacity = s->n}, w) != CQ_OK ||
        cq_world_apply(*w, s->ops, s->n, &bad) != CQ_OK || cq_world_refresh(*w) != CQ_OK)
        return -1;
    for (int k = 0; k < s->n; k++) { /* frames move by handle: no id lookups */
        cq_world_handle h;
        cq_world_find(*w, s->ids[k], &h);
        s->ops[k] = (cq_world_op){.kind = CQ_WORLD_MOVE, .handle = h, .pose = s->ops[k].pose};
    }
    return 0;
}

int bench_world(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cq-bench world SCENE RAYS FRAMES [SKIN]\n");
        return 2;
    }
    scene s = {0};
    int nrays = 0, frames = atoi(argv[2]);
    double skin = argc > 3 ? atof(argv[3]) : 0;
    cq_world_ray *rays = read_rays(argv[1], &nrays);
    cq_world *w = NULL;
    if (!read_scene(argv[0], &s) || !rays || frames < 1 || setup(&s, skin, &w) != 0) {
        fprintf(stderr, "cq-bench world: cannot read %s / %s or build the world\n", argv[0], argv[1]);
        return 1;
    }
    int pcap = 16 * s.n, bad;
    cq_world_contact *pairs = malloc(sizeof *pairs * (size_t)pcap);
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = pcap};
    double t_move = 0, t_contacts = 0;
    for (int f = 0; f < frames && pairs; f++) {
        double t0 = bench_now();
        advance(&s);
        int rc = cq_world_apply(w, s.ops, s.n, &bad);
        if (rc != CQ_OK) {
            fprintf(stderr, "cq-bench world: frame %d: batch rejected at op %d: %s\n", f, bad, cq_strerror(rc));
            break;
        }
        double t1 = bench_now();
        while ((rc = cq_world_contacts(w, NULL, &out)) == CQ_ERANGE && out.pair_count > pcap) {
            pcap = 2 * out.pair_count; /* nothing was committed: grow and run the frame's contacts again */
            free(pairs);
            pairs = malloc(sizeof *pairs * (size_t)pcap);
            out = (cq_world_contacts_out){.pairs = pairs, .pair_capacity = pairs ? pcap : 0};
            t1 = bench_now();
        }
        if (rc != CQ_OK)
            break;
        t_move += t1 - t0;
        t_contacts += bench_now() - t1;
    }
    long points = 0;
    for (int k = 0; k < out.pair_count; k++)
        points += out.pairs[k].contact.point_count;

    /* The ray tree is brought up to date on demand, outside the frame: here
     * after all the frames' motion (built once after setup). */
    double t_refresh = bench_now();
    cq_world_refresh(w);
    t_refresh = bench_now() - t_refresh;
    cq_world_ray_hit *hits = malloc(sizeof *hits * (size_t)(nrays + 1));
    double best = INFINITY;
    for (int p = 0; p < RAY_PASSES && hits; p++) {
        double t0 = bench_now();
        cq_world_raycast(w, rays, nrays, hits, NULL);
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    int hit_count = 0;
    for (int k = 0; k < nrays && hits; k++)
        hit_count += hits[k].hit.hit;
    cq_world_stats st = cq_world_get_stats(w);
    printf("shapes %d\nframes %d\nskin %g\n", s.n, frames, skin);
    printf("world_frame_ms %.4f\nmove_ms %.4f\ncontacts_ms %.4f\n", 1e3 * (t_move + t_contacts) / frames,
           1e3 * t_move / frames, 1e3 * t_contacts / frames);
    printf("broadphase_pairs %d\ntouching_pairs %d\ncontacts %ld\n", st.broadphase_pairs, out.pair_count, points);
    printf("bvh_refresh_ms %.4f\n", 1e3 * t_refresh);
    printf("rays %d\nrays_per_s %.0f\nray_hits %d\n", nrays, nrays / best, hit_count);
    printf("grows %llu\nbvh_builds %llu\n", (unsigned long long)st.grows, (unsigned long long)st.bvh_builds);
    cq_world_destroy(w);
    free(hits);
    free(pairs);
    free(rays);
    scene_free(&s);
    return 0;
}
