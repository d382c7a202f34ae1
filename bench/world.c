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

static int setup(bench_scene *s, double skin, cq_world **w)
{
    int bad;
    bench_scene_point_ids(s);
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
    bench_scene s = {0};
    int nrays = 0, frames = atoi(argv[2]);
    double skin = argc > 3 ? atof(argv[3]) : 0;
    cq_world_ray *rays = read_rays(argv[1], &nrays);
    cq_world *w = NULL;
    if (!bench_scene_read(argv[0], &s) || !rays || frames < 1 || setup(&s, skin, &w) != 0) {
        fprintf(stderr, "cq-bench world: cannot read %s / %s or build the world\n", argv[0], argv[1]);
        return 1;
    }
    int pcap = 16 * s.n, bad;
    cq_world_contact *pairs = malloc(sizeof *pairs * (size_t)pcap);
    cq_world_contacts_out out = {.pairs = pairs, .pair_capacity = pcap};
    double t_move = 0, t_contacts = 0;
    for (int f = 0; f < frames && pairs; f++) {
        double t0 = bench_now();
        bench_scene_advance(&s);
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
    bench_scene_free(&s);
    return 0;
}
