/* The tick's request bodies in JSON. */
#include <stdio.h>
#include <stdlib.h>

#include "tick.h"

const char *tk_media_type(tk_format f)
{
    return f == TK_MSGPACK ? "application/msgpack" : "application/json";
}

void tk_json_num(tk_buf *b, double v)
{
    char text[32];
    /* Fewest digits first: most poses need all 17, the half extents fewer. */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    tk_buf_str(b, text);
}

static void vec(tk_buf *b, const double *v, int n)
{
    tk_buf_add(b, "[", 1);
    for (int i = 0; i < n; i++) {
        if (i)
            tk_buf_add(b, ",", 1);
        tk_json_num(b, v[i]);
    }
    tk_buf_add(b, "]", 1);
}

/* "pose":{...},"velocity":[...] of a box where it is now. */
static void pose_velocity(tk_buf *b, const tk_box *x)
{
    tk_buf_str(b, "\"pose\":{\"position\":");
    vec(b, x->c, 3);
    tk_buf_str(b, ",\"rotation\":");
    vec(b, x->q, 4);
    tk_buf_str(b, "},\"velocity\":");
    vec(b, x->v, 3);
}

void tk_json_import(tk_buf *b, const tk_scene *s)
{
    tk_buf_fmt(b, "{\"settings\":{\"skin\":0,\"capacity\":%d},\"shapes\":[", s->n);
    for (int k = 0; k < s->n; k++) {
        tk_buf_fmt(b, "%s{\"id\":\"%s\",\"shape\":{\"type\":\"box\",\"half_extents\":", k ? "," : "", s->ids[k]);
        vec(b, s->boxes[k].h, 3);
        tk_buf_str(b, "},");
        pose_velocity(b, &s->boxes[k]);
        tk_buf_add(b, "}", 1);
    }
    tk_buf_str(b, "]}");
}

void tk_json_moves(tk_buf *b, const tk_scene *s)
{
    tk_buf_str(b, "{\"move\":[");
    for (int k = 0; k < s->n; k++) {
        tk_buf_fmt(b, "%s{\"id\":\"%s\",", k ? "," : "", s->ids[k]);
        pose_velocity(b, &s->boxes[k]);
        tk_buf_add(b, "}", 1);
    }
    tk_buf_str(b, "]}");
}

void tk_json_contacts(tk_buf *b, double dt)
{
    tk_buf_str(b, "{\"dt\":");
    tk_json_num(b, dt);
    tk_buf_add(b, "}", 1);
}
