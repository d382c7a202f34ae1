/* cq-gen's scene (bench/gen/gen.h) read into upserts, and its motion rule:
 * shared by the world frame (world.c) and the world-load rows (load.c). */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

void bench_scene_free(bench_scene *s)
{
    free(s->ops);
    free(s->pos);
    free(s->vel);
    free(s->ids);
    *s = (bench_scene){0};
}

/* Grows the four arrays together; false when memory ran out. */
static bool grow(bench_scene *s, int cap)
{
    cq_world_op *ops = realloc(s->ops, sizeof *ops * (size_t)cap);
    s->ops = ops ? ops : s->ops;
    cq_vec3 *pos = realloc(s->pos, sizeof *pos * (size_t)cap);
    s->pos = pos ? pos : s->pos;
    cq_vec3 *vel = realloc(s->vel, sizeof *vel * (size_t)cap);
    s->vel = vel ? vel : s->vel;
    char(*ids)[16] = realloc(s->ids, sizeof *ids * (size_t)cap);
    s->ids = ids ? ids : s->ids;
    return ops && pos && vel && ids;
}

/* One line's 13 numbers as box k; false for a bad rotation. */
static bool add_box(bench_scene *s, const double v[13])
{
    int k = s->n++;
    cq_xform pose;
    if (cq_pose_from_quat(cq_v3(v[0], v[1], v[2]), (cq_quat){v[6], v[7], v[8], v[9]}, &pose).status != CQ_OK)
        return false;
    snprintf(s->ids[k], sizeof s->ids[k], "box%d", k);
    s->pos[k] = pose.p;
    s->vel[k] = cq_v3(v[10], v[11], v[12]);
    s->ops[k] = (cq_world_op){.kind = CQ_WORLD_UPSERT, /* ids are pointed to once the arrays stop moving */
                              .shape = {.type = CQ_BOX, .box = {cq_v3(v[3], v[4], v[5])}},
                              .pose = pose, .velocity = s->vel[k], .layer = 1, .mask = 1};
    return true;
}

bool bench_scene_read(const char *path, bench_scene *s)
{
    *s = (bench_scene){0};
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%lf %lf", &s->L, &s->dt) != 2) {
        if (f)
            fclose(f);
        return false;
    }
    int cap = 0;
    bool ok = true;
    for (double v[13]; ok;) {
        int got = 0;
        while (got < 13 && fscanf(f, "%lf", &v[got]) == 1)
            got++;
        if (got < 13)
            break;
        if (s->n == cap && !grow(s, cap = cap ? 2 * cap : 1024))
            ok = false;
        ok = ok && add_box(s, v);
    }
    fclose(f);
    return ok && s->n > 0;
}

void bench_scene_point_ids(bench_scene *s)
{
    for (int k = 0; k < s->n; k++)
        s->ops[k].id = s->ids[k];
}

/* cq-gen's rule: move by v dt; a coordinate that would leave [-L, L]
 * reverses that velocity component and moves by the reversed one instead. */
void bench_scene_advance(bench_scene *s)
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
