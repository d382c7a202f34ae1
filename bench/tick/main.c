/* cq-tick MODE ARGS...: a game backend's tick against collisiond (see
 * tick.h and `make bench-tick`). Every mode prints `key value` lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tick.h"
#include "wire.h"

static const char USAGE[] =
    "usage: cq-tick inproc SCENE TICKS [WARMUP [MAX_PAIRS]]   (MAX_PAIRS: the world's pair cap, 0 none)\n"
    "       cq-tick wire SCENE TICKS WARMUP --http-port P --stream-port P --pid PID\n"
    "               [--modes stream_msgpack,stream_json,http_msgpack,http_json] [--world NAME] [--load json|msgpack]\n"
    "       cq-tick json2mp IN OUT   (a JSON document re-encoded as MessagePack)\n";

/* `inproc`: the in-process cost of the same ticks, cq_world_apply of the
 * moves by id then cq_world_contacts with dt, the staging of each tick's
 * moves outside the clock as the wire modes encode theirs before it. */
static int inproc(int argc, char **argv)
{
    tk_scene s;
    tk_local l;
    int ticks = argc > 1 ? atoi(argv[1]) : 0, warmup = argc > 2 ? atoi(argv[2]) : 0;
    long max_pairs = argc > 3 ? atol(argv[3]) : 0;
    if (argc < 2 || ticks < 1 || warmup < 0 || max_pairs < 0 || !tk_scene_read(argv[0], &s))
        return fputs(USAGE, stderr), 2;
    if (!tk_local_open(&l, &s, max_pairs))
        return fprintf(stderr, "cq-tick: cannot build the world\n"), 1;
    double t_apply = 0, t_contacts = 0;
    int touching = 0;
    for (int k = 0; k < warmup + ticks && touching >= 0; k++) {
        tk_scene_advance(&s);
        tk_local_stage(&l, &s);
        double t0 = tk_now();
        if (!tk_local_apply(&l))
            return fprintf(stderr, "cq-tick: tick %d: the moves were rejected\n", k), 1;
        double t1 = tk_now();
        touching = tk_local_contacts(&l);
        double t2 = tk_now();
        if (k >= warmup) {
            t_apply += t1 - t0;
            t_contacts += t2 - t1;
        }
    }
    if (touching < 0)
        return fprintf(stderr, "cq-tick: cq_world_contacts failed\n"), 1;
    printf("shapes %d\nticks %d\nwarmup %d\n", s.n, ticks, warmup);
    printf("inproc_per_tick_us %.1f\ninproc_apply_us %.1f\ninproc_contacts_us %.1f\ntouching_pairs %d\n",
           1e6 * (t_apply + t_contacts) / ticks, 1e6 * t_apply / ticks, 1e6 * t_contacts / ticks, touching);
    tk_local_close(&l);
    tk_scene_free(&s);
    return 0;
}

static bool parse_modes(char *list, tk_wire *w)
{
    w->mode_count = 0;
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        if (w->mode_count == (int)(sizeof w->modes / sizeof w->modes[0]) || !tk_mode_parse(name, &w->modes[w->mode_count]))
            return fprintf(stderr, "cq-tick: unknown mode %s\n", name), false;
        w->mode_count++;
    }
    return w->mode_count > 0;
}

static int wire(int argc, char **argv)
{
    tk_scene s;
    tk_wire w = {.scene = &s, .world = "tick", .load = TK_JSON, .mode_count = 4,
                 .modes = {TK_STREAM_MSGPACK, TK_STREAM_JSON, TK_HTTP_MSGPACK, TK_HTTP_JSON}};
    if (argc < 3)
        return fputs(USAGE, stderr), 2;
    w.ticks = atoi(argv[1]);
    w.warmup = atoi(argv[2]);
    for (int k = 3; k < argc; k += 2) {
        const char *flag = argv[k];
        char *value = k + 1 < argc ? argv[k + 1] : NULL;
        if (!value)
            return fputs(USAGE, stderr), 2;
        if (strcmp(flag, "--http-port") == 0)
            w.http_port = atoi(value);
        else if (strcmp(flag, "--stream-port") == 0)
            w.stream_port = atoi(value);
        else if (strcmp(flag, "--pid") == 0)
            w.pid = (pid_t)atoi(value);
        else if (strcmp(flag, "--world") == 0)
            w.world = value;
        else if (strcmp(flag, "--load") == 0 && (strcmp(value, "json") == 0 || strcmp(value, "msgpack") == 0))
            w.load = strcmp(value, "json") == 0 ? TK_JSON : TK_MSGPACK;
        else if (strcmp(flag, "--modes") != 0 || !parse_modes(value, &w))
            return fputs(USAGE, stderr), 2;
    }
    if (w.ticks < 1 || w.warmup < 0 || w.http_port <= 0 || w.stream_port <= 0 || w.pid <= 0)
        return fputs(USAGE, stderr), 2;
    if (!tk_scene_read(argv[0], &s))
        return 1;
    int rc = tk_wire_run(&w);
    tk_scene_free(&s);
    return rc;
}

static bool slurp(const char *path, tk_buf *b)
{
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    for (size_t n; f && (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        tk_buf_add(b, chunk, n);
    if (f)
        fclose(f);
    return f != NULL;
}

/* `json2mp`: bench/http/run.sh's MessagePack body for wrk, the same
 * request as the JSON one. */
static int json2mp(int argc, char **argv)
{
    tk_buf in = {0}, out = {0};
    if (argc != 2)
        return fputs(USAGE, stderr), 2;
    if (!slurp(argv[0], &in) || !tk_json_to_mp(in.p, in.len, &out))
        return fprintf(stderr, "cq-tick: %s is not readable JSON\n", argv[0]), 1;
    FILE *f = fopen(argv[1], "wb");
    bool ok = f && fwrite(out.p, 1, out.len, f) == out.len;
    ok = f && fclose(f) == 0 && ok;
    tk_buf_free(&in);
    tk_buf_free(&out);
    return ok ? 0 : (fprintf(stderr, "cq-tick: cannot write %s\n", argv[1]), 1);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "inproc") == 0)
        return inproc(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "wire") == 0)
        return wire(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "json2mp") == 0)
        return json2mp(argc - 2, argv + 2);
    fputs(USAGE, stderr);
    return 2;
}
