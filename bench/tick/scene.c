/* A cq-gen scene (bench/gen/gen.h) and its motion rule. */
#include <stdio.h>
#include <stdlib.h>

#include "tick.h"

bool tk_scene_read(const char *path, tk_scene *s)
{
    *s = (tk_scene){0};
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%lf %lf", &s->L, &s->dt) != 2) {
        fprintf(stderr, "cq-tick: cannot read the scene %s\n", path);
        if (f)
            fclose(f);
        return false;
    }
    int cap = 1024;
    s->boxes = malloc(sizeof *s->boxes * (size_t)cap);
    for (tk_box x; s->boxes;) {
        double *v[13] = {&x.c[0], &x.c[1], &x.c[2], &x.h[0], &x.h[1], &x.h[2], &x.q[0],
                         &x.q[1], &x.q[2], &x.q[3], &x.v[0], &x.v[1], &x.v[2]};
        int got = 0;
        while (got < 13 && fscanf(f, "%lf", v[got]) == 1)
            got++;
        if (got < 13)
            break;
        if (s->n == cap) {
            cap *= 2;
            tk_box *grown = realloc(s->boxes, sizeof *s->boxes * (size_t)cap);
            if (!grown)
                free(s->boxes);
            s->boxes = grown;
            if (!grown)
                break;
        }
        s->boxes[s->n++] = x;
    }
    fclose(f);
    s->ids = s->boxes ? malloc(sizeof *s->ids * (size_t)(s->n ? s->n : 1)) : NULL;
    if (!s->ids || s->n == 0) {
        fprintf(stderr, "cq-tick: no boxes in %s (or out of memory)\n", path);
        tk_scene_free(s);
        return false;
    }
    for (int k = 0; k < s->n; k++)
        snprintf(s->ids[k], sizeof s->ids[k], "b%d", k);
    return true;
}

void tk_scene_free(tk_scene *s)
{
    free(s->boxes);
    free(s->ids);
    *s = (tk_scene){0};
}

void tk_scene_advance(tk_scene *s)
{
    for (int k = 0; k < s->n; k++) {
        tk_box *b = &s->boxes[k];
        for (int i = 0; i < 3; i++) {
            double next = b->c[i] + b->v[i] * s->dt;
            if (next < -s->L || next > s->L) {
                b->v[i] = -b->v[i];
                next = b->c[i] + b->v[i] * s->dt;
            }
            b->c[i] = next;
        }
    }
}
