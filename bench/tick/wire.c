/* `cq-tick wire`: the tick against a running daemon, over the stream
 * transport and HTTP, in JSON and MessagePack. The scene is imported once;
 * each mode then runs its warm-up and timed ticks, the motion going on
 * from mode to mode. A shadow libcq world follows the same ticks while
 * the requests are encoded, before the clock, and gives each tick's
 * expected number of touching pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tick.h"
#include "wire.h"

/* One tick's requests as they go on the wire, and what the daemon must
 * answer to its contacts. */
typedef struct tick_req {
    tk_buf batch, contacts; /* HTTP: two requests; stream: both envelopes in batch */
    long touching;
} tick_req;

static const char *const MODE_NAMES[] = {"stream_msgpack", "stream_json", "http_msgpack", "http_json"};

const char *tk_mode_name(tk_mode m)
{
    return MODE_NAMES[m];
}

bool tk_mode_parse(const char *name, tk_mode *m)
{
    for (int k = 0; k < 4; k++)
        if (strcmp(name, MODE_NAMES[k]) == 0)
            return *m = (tk_mode)k, true;
    return false;
}

static bool on_stream(tk_mode m)
{
    return m == TK_STREAM_MSGPACK || m == TK_STREAM_JSON;
}

static tk_format format_of(tk_mode m)
{
    return m == TK_STREAM_MSGPACK || m == TK_HTTP_MSGPACK ? TK_MSGPACK : TK_JSON;
}

/* Moves the scene one tick, encodes its requests for mode m, and runs the
 * same tick in the shadow world for the count its contacts must answer. */
static bool encode_tick(const tk_wire *w, tk_mode m, tk_local *shadow, tick_req *t)
{
    tk_scene_advance(w->scene);
    tk_format f = format_of(m);
    tk_buf moves = {0}, contacts = {0};
    if (f == TK_MSGPACK) {
        tk_mp_moves(&moves, w->scene);
        tk_mp_contacts(&contacts, w->scene->dt);
    } else {
        tk_json_moves(&moves, w->scene);
        tk_json_contacts(&contacts, w->scene->dt);
    }
    *t = (tick_req){0};
    if (on_stream(m)) { /* pipelined: both envelopes in one write */
        tk_stream_request(&t->batch, f, 1, "POST", w->batch_path, moves.p, moves.len);
        tk_stream_request(&t->batch, f, 2, "POST", w->contacts_path, contacts.p, contacts.len);
    } else {
        tk_http_request(&t->batch, "POST", w->batch_path, f, moves.p, moves.len);
        tk_http_request(&t->contacts, "POST", w->contacts_path, f, contacts.p, contacts.len);
    }
    tk_buf_free(&moves);
    tk_buf_free(&contacts);
    tk_local_stage(shadow, w->scene);
    t->touching = tk_local_tick(shadow);
    return t->touching >= 0;
}

/* The timed part of a tick: the requests out, the two replies in whole. */
static bool run_tick(tk_conn *c, tk_mode m, const tick_req *t, tk_reply r[2], tk_buf raw[2])
{
    if (on_stream(m)) {
        return tk_send(c, t->batch.p, t->batch.len) && tk_stream_read(c, format_of(m), &raw[0]) &&
               tk_stream_read(c, format_of(m), &raw[1]);
    }
    return tk_send(c, t->batch.p, t->batch.len) && tk_http_read(c, &r[0]) &&
           tk_send(c, t->contacts.p, t->contacts.len) && tk_http_read(c, &r[1]);
}

/* After the clock: both answers 200, the contacts answer in the mode's
 * format with the shadow world's count of touching pairs. */
static bool check_tick(tk_mode m, const tick_req *t, tk_reply r[2], const tk_buf raw[2], int tick)
{
    for (int k = 0; k < 2; k++) {
        if (on_stream(m) && (!tk_reply_open(format_of(m), &raw[k], &r[k]) || r[k].id != (uint32_t)k + 1)) {
            fprintf(stderr, "cq-tick: %s tick %d: reply %d is not the envelope expected\n", tk_mode_name(m), tick, k + 1);
            return false;
        }
        if (r[k].status != 200 || r[k].format != format_of(m)) {
            char what[512];
            tk_reply_describe(&r[k], what, sizeof what);
            fprintf(stderr, "cq-tick: %s tick %d: %s answered %d: %s\n", tk_mode_name(m), tick,
                    k ? "contacts" : "batch", r[k].status, what);
            return false;
        }
    }
    long got = tk_reply_touching(&r[1]);
    if (got != t->touching) {
        fprintf(stderr, "cq-tick: %s tick %d: the daemon found %ld touching pairs, libcq in process %ld\n",
                tk_mode_name(m), tick, got, t->touching);
        return false;
    }
    return true;
}

/* How a mode ended. */
typedef enum mode_end { MODE_OK, MODE_FAILED, MODE_UNSUPPORTED } mode_end;

/* Whether the daemon refused the mode's first tick for its format: a JSON
 * problem where MessagePack was asked for (HTTP), or a JSON line where a
 * frame was due (stream). A daemon without MessagePack does that. */
static bool format_refused(tk_mode m, const tk_conn *c, const tk_reply *first)
{
    if (format_of(m) != TK_MSGPACK)
        return false;
    if (on_stream(m))
        return c->in.len > c->start && c->in.p[c->start] == '{';
    return first->status != 200 && first->format == TK_JSON;
}

/* Runs one mode: encode everything, warm up, then the timed ticks between
 * two samples of the daemon's CPU time. */
static mode_end run_mode(const tk_wire *w, tk_mode m, tk_local *shadow, tk_conn *http)
{
    int total = w->warmup + w->ticks;
    tick_req *reqs = calloc((size_t)total, sizeof *reqs);
    bool ok = reqs != NULL;
    for (int k = 0; ok && k < total; k++)
        ok = encode_tick(w, m, shadow, &reqs[k]);
    tk_conn stream = {.fd = -1};
    if (ok && on_stream(m))
        ok = tk_connect(&stream, w->stream_port);
    tk_conn *c = on_stream(m) ? &stream : http;
    tk_reply r[2] = {{0}};
    tk_buf raw[2] = {{0}};
    double wall = 0, t0;
    tk_cpu cpu0 = {0};
    bool refused = false;
    for (int k = 0; ok && k < total; k++) {
        if (k == w->warmup)
            cpu0 = tk_cpu_sample(w->pid);
        t0 = tk_now();
        ok = run_tick(c, m, &reqs[k], r, raw);
        if (k >= w->warmup)
            wall += tk_now() - t0;
        refused = k == 0 && format_refused(m, c, &r[0]);
        ok = !refused && ok && check_tick(m, &reqs[k], r, raw, k);
    }
    tk_cpu cpu1 = tk_cpu_sample(w->pid);
    if (ok) {
        const char *name = tk_mode_name(m);
        size_t sent = reqs[total - 1].batch.len + reqs[total - 1].contacts.len;
        size_t answer = on_stream(m) ? raw[1].len : r[1].body.len; /* the envelope, or the HTTP body */
        printf("%s_wall_per_tick_us %.1f\n", name, 1e6 * wall / w->ticks);
        if (cpu0.clock_s >= 0 && cpu1.clock_s >= 0)
            printf("%s_daemon_cpu_per_tick_us %.1f\n", name, 1e6 * (cpu1.clock_s - cpu0.clock_s) / w->ticks);
        if (cpu0.stat_s >= 0 && cpu1.stat_s >= 0)
            printf("%s_daemon_cpu_stat_per_tick_us %.1f\n", name, 1e6 * (cpu1.stat_s - cpu0.stat_s) / w->ticks);
        printf("%s_request_bytes_per_tick %zu\n%s_contacts_answer_bytes %zu\n%s_touching_pairs %ld\n", name, sent,
               name, answer, name, reqs[total - 1].touching);
    }
    for (int k = 0; reqs && k < total; k++) {
        tk_buf_free(&reqs[k].batch);
        tk_buf_free(&reqs[k].contacts);
    }
    for (int k = 0; k < 2; k++) {
        tk_buf_free(&r[k].body);
        tk_buf_free(&raw[k]);
    }
    free(reqs);
    if (stream.fd >= 0)
        tk_close(&stream);
    if (refused) {
        printf("%s_unsupported 1\n", tk_mode_name(m));
        fprintf(stderr, "cq-tick: %s: the daemon does not take MessagePack; skipped\n", tk_mode_name(m));
        return MODE_UNSUPPORTED;
    }
    return ok ? MODE_OK : MODE_FAILED;
}

/* PUT /v1/worlds/W with the import document: the world holds exactly the
 * scene, whatever an earlier run left in it. */
static bool load(const tk_wire *w, tk_conn *http)
{
    tk_buf body = {0}, req = {0};
    if (w->load == TK_MSGPACK)
        tk_mp_import(&body, w->scene);
    else
        tk_json_import(&body, w->scene);
    tk_http_request(&req, "PUT", w->world_path, w->load, body.p, body.len);
    tk_reply r = {0};
    double t0 = tk_now();
    bool ok = tk_send(http, req.p, req.len) && tk_http_read(http, &r);
    if (ok && r.status != 200 && r.status != 201) {
        char what[512];
        tk_reply_describe(&r, what, sizeof what);
        fprintf(stderr, "cq-tick: PUT %s answered %d: %s\n", w->world_path, r.status, what);
        ok = false;
    }
    if (ok)
        printf("load_s %.3f\nload_bytes %zu\n", tk_now() - t0, body.len);
    tk_buf_free(&body);
    tk_buf_free(&req);
    tk_buf_free(&r.body);
    return ok;
}

int tk_wire_run(tk_wire *w)
{
    tk_local shadow;
    tk_conn http;
    snprintf(w->world_path, sizeof w->world_path, "/v1/worlds/%s", w->world);
    snprintf(w->batch_path, sizeof w->batch_path, "/v1/worlds/%s/batch", w->world);
    snprintf(w->contacts_path, sizeof w->contacts_path, "/v1/worlds/%s/contacts", w->world);
    if (!tk_local_open(&shadow, w->scene, 0)) {
        fprintf(stderr, "cq-tick: cannot build the shadow world\n");
        return 1;
    }
    bool ok = tk_connect(&http, w->http_port) && load(w, &http);
    printf("shapes %d\nticks %d\nwarmup %d\n", w->scene->n, w->ticks, w->warmup);
    for (int k = 0; ok && k < w->mode_count; k++) {
        mode_end end = run_mode(w, w->modes[k], &shadow, &http);
        /* The refused tick left the world behind the shadow, which ran
         * every tick of the mode: put the scene where the shadow is. */
        if (end == MODE_UNSUPPORTED) {
            tk_close(&http);
            ok = tk_connect(&http, w->http_port) && load(w, &http);
        }
        ok = ok && end != MODE_FAILED;
    }
    if (http.fd >= 0)
        tk_close(&http);
    tk_local_close(&shadow);
    return ok ? 0 : 1;
}
