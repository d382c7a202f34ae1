/* Allocation-failure injection (issue 8). One failing allocator, counting
 * every allocation the core (cq_set_allocator), the server
 * (cqd_set_allocator: its own blocks, the arena's chunks, answers' buffers),
 * and jansson and proto (json_set_alloc_funcs, cqp_set_alloc_funcs, both
 * wrapped around the server's arena) make, fails the
 * Nth one, or every one from the Nth on, while cqd_handle runs one request
 * on a fresh server with the same starting worlds; N runs 1, 2, ... until a
 * request completes without the injector firing. Oracles, per N:
 * - the answer is the request's answer without injection, byte for byte
 *   (a graceful fallback: then queries on the world answer as they do
 *   without injection too), or 503 "unavailable" with Retry-After 1 and a
 *   problem body that parses and says "out of memory";
 * - after a failure every world's export is the one taken before, and the
 *   request then succeeds with the uninjected answer;
 * - with the server torn down, cq_alloc_bytes() and the count of blocks
 *   live through the server's hook are back where they started (ASan's
 *   leak checker covers the rest under `make asan`);
 * - with a data directory, a recovery from it gives the same worlds as the
 *   memory held right after the request (a failed request never reaches
 *   the journal).
 * Start-up is injected the same way: a journal replayed with allocation N
 * failing either recovers every world the requests left or refuses to
 * start, never starts without a record it could not replay
 * (recover_with_failing_allocations).
 * The body's parse is injected too: the injector, sitting above the
 * server's arena, marks the arena's record of a failed allocation as the
 * arena does when its own malloc fails, since jansson reports some failed
 * allocations as syntax errors (json_arena.h, "failed"). Every scenario
 * must see the injector fire: a GET without a body allocates at least its
 * answer's buffer. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/request.h"
#include "config_util.h"
#include "cq/alloc.h"
#include "cqp/alloc.h"
#include "net/json_arena.h"
#include "state/alloc.h"
#include "state/registry.h"
#include "state/server.h"
#include "state/thread.h"
#include "store/store.h"
#include "store/store_internal.h"

Suite *oom_suite(void);

/* ---- the injector --------------------------------------------------------- */

/* Test-side state of the one failing allocator (every hook shares it, so
 * N counts all allocations in the order they happen). */
static struct {
    atomic_bool armed;
    atomic_long seen;
    long fail_at; /* 1-based */
    bool sticky;  /* fail every allocation from fail_at on */
    atomic_long fired;
} inj;

static cqd_json_arena *inj_arena; /* the arena of the thread running the request */
static json_malloc_t under_malloc; /* the server's arena functions */
static json_free_t under_free;
static json_malloc_t plain_malloc; /* what jansson had before the suite */
static json_free_t plain_free;

static bool inj_fails(void)
{
    if (!atomic_load(&inj.armed))
        return false;
    long n = atomic_fetch_add(&inj.seen, 1) + 1;
    if (n == inj.fail_at || (inj.sticky && n > inj.fail_at)) {
        atomic_fetch_add(&inj.fired, 1);
        return true;
    }
    return false;
}

static void *core_alloc(size_t size, void *ctx)
{
    (void)ctx;
    return inj_fails() ? NULL : malloc(size);
}

static void core_free(void *p, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(p);
}

/* Blocks live through the server's hook, for its leak check as
 * cq_alloc_bytes is the core's (a realloc of NULL is a new block). */
static atomic_long server_live;

static void *server_malloc(size_t size)
{
    void *p = inj_fails() ? NULL : malloc(size);
    if (p)
        atomic_fetch_add(&server_live, 1);
    return p;
}

static void *server_realloc(void *p, size_t size)
{
    void *q = inj_fails() ? NULL : realloc(p, size);
    if (q && !p)
        atomic_fetch_add(&server_live, 1);
    return q;
}

static void server_free(void *p)
{
    if (p)
        atomic_fetch_sub(&server_live, 1);
    free(p);
}

static void *json_wrap_malloc(size_t size)
{
    if (!inj_fails())
        return under_malloc(size);
    if (inj_arena)
        inj_arena->failed = true;
    return NULL;
}

static void arm(long n, bool sticky)
{
    atomic_store(&inj.seen, 0);
    atomic_store(&inj.fired, 0);
    inj.fail_at = n;
    inj.sticky = sticky;
    atomic_store(&inj.armed, true);
}

static long disarm(void)
{
    atomic_store(&inj.armed, false);
    return atomic_load(&inj.fired);
}

/* The hooks go in for the whole test; the default core and server
 * allocators are malloc/free too, so blocks from before the test free the
 * same way. proto shares jansson's arena functions (cqd_json_install). */
static void hooks_in(void)
{
    json_get_alloc_funcs(&plain_malloc, &plain_free);
    cqd_json_install();
    json_get_alloc_funcs(&under_malloc, &under_free);
    json_set_alloc_funcs(json_wrap_malloc, under_free);
    cqp_set_alloc_funcs(json_wrap_malloc, under_free);
    static const cq_allocator failing = {core_alloc, core_free, NULL};
    cq_set_allocator(&failing);
    static const cqd_allocator failing_server = {server_malloc, server_realloc, server_free};
    cqd_set_allocator(&failing_server);
}

static void hooks_out(void)
{
    cqd_set_allocator(NULL);
    cq_set_allocator(NULL);
    cqp_set_alloc_funcs(under_malloc, under_free);
    json_set_alloc_funcs(plain_malloc, plain_free);
}

/* ---- a server and its requests ------------------------------------------- */

typedef struct fixture {
    cqd_server srv;
    FILE *log;
    char dir[64]; /* the data directory, "" without durability */
} fixture;

/* A server on f's directory, logging to a scratch file, its store not yet open. */
static void server_init_logged(fixture *f)
{
    cqd_config cfg = cu_default_config();
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", f->dir);
    cfg.fsync = CQD_FSYNC_NO;
    cfg.snapshot_every = 0; /* no store thread work racing the injector */
    ck_assert_int_eq(cqd_server_init(&f->srv, &cfg), 0);
    f->log = tmpfile();
    ck_assert_ptr_nonnull(f->log);
    f->srv.log.fd = fileno(f->log);
}

static void server_up(fixture *f)
{
    server_init_logged(f);
    if (f->dir[0]) {
        f->srv.store = cqd_store_open(&f->srv);
        ck_assert_ptr_nonnull(f->srv.store);
        ck_assert_int_eq(cqd_store_recover(f->srv.store), 0);
    }
    atomic_store(&f->srv.state, CQD_READY);
}

static void server_down(fixture *f)
{
    cqd_store_close(f->srv.store, false); /* keep the journal as the requests left it */
    f->srv.store = NULL;
    cqd_server_destroy(&f->srv);
    fclose(f->log);
}

static void call(fixture *f, const char *method, const char *path, const char *body, cqd_response *resp)
{
    cqd_request req = {
        .transport = "test",
        .method = method,
        .path = path,
        .body = body,
        .body_len = body ? strlen(body) : 0,
    };
    cqd_response_init(resp);
    cqd_handle(&f->srv, &req, resp);
}

/* A request that must succeed with status; its body into a new string. */
static char *must(fixture *f, const char *method, const char *path, const char *body, int status)
{
    cqd_response r;
    call(f, method, path, body, &r);
    ck_assert_msg(r.status == status, "%s %s: %d %.*s", method, path, r.status, (int)r.body.len,
                  r.body.data ? r.body.data : "");
    char *text = strndup(r.body.data ? r.body.data : "", r.body.len);
    ck_assert_ptr_nonnull(text);
    cqd_response_free(&r);
    return text;
}

/* Every world: the listing, then each world's export, in one string. */
static char *dump(fixture *f)
{
    char *list = must(f, "GET", "/v1/worlds", NULL, 200);
    json_t *v = json_loads(list, 0, NULL);
    ck_assert_ptr_nonnull(v);
    size_t cap = strlen(list) + 1, len = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    memcpy(out, list, cap);
    len = cap - 1;
    free(list);
    json_t *worlds = json_object_get(v, "worlds"), *w;
    size_t i;
    json_array_foreach(worlds, i, w) {
        char path[128];
        snprintf(path, sizeof path, "/v1/worlds/%s/export", json_string_value(json_object_get(w, "name")));
        char *x = must(f, "GET", path, NULL, 200);
        size_t n = strlen(x);
        out = realloc(out, len + n + 2);
        ck_assert_ptr_nonnull(out);
        out[len++] = '\n';
        memcpy(out + len, x, n + 1);
        len += n;
        free(x);
    }
    json_decref(v);
    return out;
}

/* ---- the starting state and the requests ---------------------------------- */

#define HULL "{\"type\":\"convex\",\"points\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1],[0.2,0.2,0.2]]}"
#define MESH "{\"type\":\"mesh\",\"vertices\":[[-5,0,-5],[5,0,-5],[5,0,5],[-5,0,5]],\"triangles\":[[0,2,1],[0,3,2]]}"
#define BALL "{\"type\":\"sphere\",\"radius\":1}"
#define POSE(x, y, z) "{\"position\":[" #x "," #y "," #z "]}"
#define SHAPE(id, shape, pose, extra) "{\"id\":\"" id "\",\"shape\":" shape ",\"pose\":" pose extra "}"

/* Seven shapes, every kind, in a world whose capacity (8) a batch must grow
 * past; overlapping so pairs, contacts and hits exist; one fast mover for CCD. */
static const char seed_world[] =
    "{\"settings\":{\"skin\":0.05,\"capacity\":8},\"shapes\":["                                   //
    SHAPE("ball", "{\"type\":\"sphere\",\"radius\":0.5}", POSE(0, 0.4, 0), ",\"velocity\":[40,0,0]") "," //
    SHAPE("crate", "{\"type\":\"box\",\"half_extents\":[0.5,0.5,0.5]}", POSE(0.8, 0.45, 0), "") ","      //
    SHAPE("pill", "{\"type\":\"capsule\",\"radius\":0.3,\"half_height\":0.5}", POSE(-0.6, 0.5, 0.3), "") "," //
    SHAPE("rock", HULL, POSE(0.3, 0.2, 0.6), "") ","                                                    //
    SHAPE("shard", "{\"type\":\"triangle\",\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}", POSE(3, 0, 0), "") "," //
    SHAPE("floor", "{\"type\":\"plane\",\"normal\":[0,1,0],\"offset\":0}", POSE(0, 0, 0), "") ","         //
    SHAPE("terrain", MESH, POSE(0, -0.1, 0), "") "]}";

typedef struct scenario {
    const char *name, *method, *path, *body;
    int status; /* the answer without injection */
} scenario;

#define PAIR_BODY(a, b) "{\"a\":{\"shape\":" a "},\"b\":{\"shape\":" b ",\"pose\":" POSE(0.4, 0.3, 0.2) "}}"

static const scenario scenarios[] = {
    {"create world", "PUT", "/v1/worlds/fresh", "{\"skin\":0.1,\"capacity\":4}", 201},
    {"configure world", "PUT", "/v1/worlds/w", "{\"skin\":0.2,\"capacity\":40}", 200},
    {"import new world", "PUT", "/v1/worlds/copy", seed_world, 201},
    {"import over world", "PUT", "/v1/worlds/w",
     "{\"settings\":{\"capacity\":2},\"shapes\":[" SHAPE("a", HULL, POSE(0, 0, 0), "") "," //
     SHAPE("b", MESH, POSE(0, 1, 0), "") "," SHAPE("c", "{\"type\":\"sphere\",\"radius\":1}", POSE(0, 0, 0), "") "]}",
     200},
    {"put sphere", "PUT", "/v1/worlds/w/shapes/s9", "{\"shape\":{\"type\":\"sphere\",\"radius\":0.4}}", 201},
    {"put box", "PUT", "/v1/worlds/w/shapes/b9",
     "{\"shape\":{\"type\":\"box\",\"half_extents\":[1,2,3]},\"pose\":" POSE(1, 1, 1) "}", 201},
    {"put capsule", "PUT", "/v1/worlds/w/shapes/c9",
     "{\"shape\":{\"type\":\"capsule\",\"radius\":0.2,\"half_height\":1},\"velocity\":[1,0,0]}", 201},
    {"put hull", "PUT", "/v1/worlds/w/shapes/h9", "{\"shape\":" HULL ",\"layer\":3,\"mask\":5}", 201},
    {"put triangle", "PUT", "/v1/worlds/w/shapes/t9",
     "{\"shape\":{\"type\":\"triangle\",\"vertices\":[[0,0,0],[0,1,0],[0,0,1]]}}", 201},
    {"put plane", "PUT", "/v1/worlds/w/shapes/p9", "{\"shape\":{\"type\":\"plane\",\"normal\":[1,0,0],\"offset\":-9}}",
     201},
    {"put mesh", "PUT", "/v1/worlds/w/shapes/m9", "{\"shape\":" MESH "}", 201},
    {"replace with hull", "PUT", "/v1/worlds/w/shapes/ball", "{\"shape\":" HULL "}", 200},
    {"replace mesh", "PUT", "/v1/worlds/w/shapes/terrain", "{\"shape\":{\"type\":\"sphere\",\"radius\":2}}", 200},
    {"batch", "POST", "/v1/worlds/w/batch",
     "{\"upsert\":[" SHAPE("n1", HULL, POSE(0, 2, 0), "") "," SHAPE("n2", MESH, POSE(0, 3, 0), "") "," //
     SHAPE("n3", "{\"type\":\"sphere\",\"radius\":0.1}", POSE(0, 2, 0), "") ","                         //
     SHAPE("n4", "{\"type\":\"box\",\"half_extents\":[1,1,1]}", POSE(0, 2.5, 0), "") ","                //
     SHAPE("rock", "{\"type\":\"sphere\",\"radius\":0.3}", POSE(0, 0, 0), "") "],"                      //
     "\"move\":[{\"id\":\"crate\",\"pose\":" POSE(5, 5, 5) "},{\"id\":\"n1\",\"pose\":" POSE(0, 1, 0) "}],"
     "\"remove\":[\"pill\",\"terrain\",\"n3\"]}",
     200},
    {"crowd batch", "POST", "/v1/worlds/w/batch", /* more pairs than the broadphase has room for */
     "{\"upsert\":[" SHAPE("k1", BALL, POSE(0, 0.5, 0), "") "," SHAPE("k2", BALL, POSE(0.1, 0.5, 0), "") "," //
     SHAPE("k3", BALL, POSE(0.2, 0.5, 0), "") "," SHAPE("k4", BALL, POSE(0.3, 0.5, 0), "") ","                  //
     SHAPE("k5", BALL, POSE(0, 0.6, 0), "") "," SHAPE("k6", BALL, POSE(0, 0.7, 0), "") ","                      //
     SHAPE("k7", BALL, POSE(0, 0.8, 0), "") "," SHAPE("k8", BALL, POSE(0, 0.9, 0), "") ","                      //
     SHAPE("k9", BALL, POSE(0, 1, 0), "") "," SHAPE("ka", BALL, POSE(0, 1.1, 0), "") ","                        //
     SHAPE("kb", BALL, POSE(0, 1.2, 0), "") "," SHAPE("kc", BALL, POSE(0, 1.3, 0), "") "]}",
     200},
    {"delete hull", "DELETE", "/v1/worlds/w/shapes/rock", NULL, 204},
    {"delete mesh", "DELETE", "/v1/worlds/w/shapes/terrain", NULL, 204},
    {"delete world", "DELETE", "/v1/worlds/w", NULL, 204},
    {"pair boxes", "POST", "/v1/pair",
     "{\"a\":{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]}},\"b\":{\"shape\":{\"type\":\"box\","
     "\"half_extents\":[1,1,1]},\"pose\":{\"position\":[1.5,0.2,0],\"rotation\":[0,0,0.38268343236,"
     "0.92387953251]}},\"explain\":true}",
     200},
    {"pair hulls", "POST", "/v1/pair", PAIR_BODY(HULL, HULL), 200},
    {"pair mesh", "POST", "/v1/pair", PAIR_BODY(MESH, "{\"type\":\"sphere\",\"radius\":0.5}"), 200},
    {"pairs", "POST", "/v1/pairs",
     "{\"pairs\":[" PAIR_BODY(HULL, "{\"type\":\"capsule\",\"radius\":0.5,\"half_height\":1}") "," //
     PAIR_BODY(MESH, HULL) "," PAIR_BODY("{\"type\":\"sphere\",\"radius\":1}", "{\"type\":\"sphere\",\"radius\":1}") "]}",
     200},
    {"contacts", "POST", "/v1/worlds/w/contacts", "{\"dt\":0.1}", 200},
    {"contacts of ids", "POST", "/v1/worlds/w/contacts", "{\"ids\":[\"rock\",\"crate\"]}", 200},
    {"raycast", "POST", "/v1/worlds/w/raycast",
     "{\"rays\":[{\"origin\":[0,10,0],\"direction\":[0,-1,0]},{\"origin\":[-9,0.3,0],\"direction\":[1,0,0]},"
     "{\"origin\":[0,10,9],\"direction\":[0,1,0]}]}",
     200},
    {"raycast all", "POST", "/v1/worlds/w/raycast",
     "{\"rays\":[{\"origin\":[0,10,0],\"direction\":[0,-1,0]},{\"origin\":[-9,0.3,0.1],\"direction\":[1,0,0],"
     "\"mask\":1}],\"all\":true}",
     200},
    {"sweep", "POST", "/v1/worlds/w/sweep",
     "{\"shape\":" HULL ",\"pose\":" POSE(-9, 0.5, 0) ",\"translation\":[18,0,0]}", 200},
    {"overlap", "POST", "/v1/worlds/w/overlap", "{\"shape\":{\"type\":\"sphere\",\"radius\":1},\"pose\":" POSE(0, 0.5, 0) "}",
     200},
    {"list worlds", "GET", "/v1/worlds", NULL, 200},
    {"shape", "GET", "/v1/worlds/w/shapes/rock", NULL, 200},
    {"fallbacks", "GET", "/metrics/fallbacks", NULL, 200},
    {"broadphase pairs", "GET", "/v1/worlds/w/pairs", NULL, 200},
    {"export", "GET", "/v1/worlds/w/export", NULL, 200},
    {"world", "GET", "/v1/worlds/w", NULL, 200},
    {"metrics", "GET", "/metrics", NULL, 200},
};
#define SCENARIOS ((int)(sizeof scenarios / sizeof scenarios[0]))

/* Hand-written parts of some uninjected answers, so that the reference the
 * injected runs are held to is itself checked. */
static const char *const expected[][2] = {
    {"create world", "\"skin\":0.1,\"capacity\":4,"},
    {"configure world", "\"skin\":0.2,\"capacity\":40,"},
    {"import new world", "\"shapes\":7,"},
    {"import over world", "\"capacity\":2,"},
    {"put hull", "\"points\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1]]},"},
    {"batch", "{\"upserted\":5,\"moved\":2,\"removed\":3,\"shapes\":8}"},
    {"crowd batch", "{\"upserted\":12,\"moved\":0,\"removed\":0,\"shapes\":19}"},
    {"overlap", "{\"ids\":[\"ball\",\"crate\",\"floor\",\"pill\",\"rock\",\"terrain\"]}"},
    {"list worlds", "{\"worlds\":[{\"name\":\"other\",\"shapes\":1,"},
    {"list worlds", "{\"name\":\"w\",\"shapes\":7,"},
};

/* Metrics count requests and time them: no two answers are the same. */
static bool answer_varies(const scenario *s) { return strcmp(s->path, "/metrics") == 0; }

/* Two worlds: the seed, and a small second one the listing shows too. */
static void seed(fixture *f)
{
    free(must(f, "PUT", "/v1/worlds/w", seed_world, 201));
    free(must(f, "PUT", "/v1/worlds/other", "{\"skin\":0.5}", 201));
    free(must(f, "PUT", "/v1/worlds/other/shapes/x", "{\"shape\":" HULL "}", 201));
}

/* ---- the runs ------------------------------------------------------------- */

/* Queries whose answers show a structure a graceful fallback left stale
 * (broadphase, pair cache, BVH): status and body of each, in one string. */
static char *probe(fixture *f)
{
    static const char *const q[][3] = {
        {"GET", "/v1/worlds/w/pairs", NULL},
        {"POST", "/v1/worlds/w/contacts", "{\"dt\":0.1}"},
        {"POST", "/v1/worlds/w/raycast",
         "{\"rays\":[{\"origin\":[-9,0.4,0.1],\"direction\":[1,0,0]},{\"origin\":[0.1,9,0.2],"
         "\"direction\":[0,-1,0]}],\"all\":true}"},
        {"POST", "/v1/worlds/w/overlap", "{\"shape\":{\"type\":\"sphere\",\"radius\":2},\"pose\":" POSE(0, 1, 0) "}"},
    };
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(m);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        cqd_response r;
        call(f, q[i][0], q[i][1], q[i][2], &r);
        fprintf(m, "%d %.*s\n", r.status, (int)r.body.len, r.body.data ? r.body.data : "");
        cqd_response_free(&r);
    }
    fclose(m);
    return out;
}

/* The uninjected answer, the worlds after it, and the probes' answers. */
typedef struct reference {
    char *body, *after, *probes;
} reference;

static reference take_reference(const scenario *s)
{
    fixture f = {0};
    server_up(&f);
    seed(&f);
    reference ref = {must(&f, s->method, s->path, s->body, s->status), dump(&f), NULL};
    ref.probes = probe(&f);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        ck_assert_msg(strcmp(expected[i][0], s->name) != 0 || strstr(ref.body, expected[i][1]), "%s: %s lacks %s",
                      s->name, ref.body, expected[i][1]);
    server_down(&f);
    return ref;
}

/* A fresh data directory under /tmp (removed by remove_dir). */
static void make_dir(fixture *f)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/check_oom.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ck_assert_int_eq(unlink(path), 0);
    }
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
}

/* got must equal want (both NUL-terminated); both go to stderr if not, as
 * a Check message is too short for them. */
static void same(const scenario *s, long n, const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    fprintf(stderr, "%s, allocation %ld: %s:\n%s\nexpected\n%s\n", s->name, n, what, got, want);
    ck_abort_msg("%s, allocation %ld: %s differ (printed on stderr)", s->name, n, what);
}

/* The failed answer: 503 unavailable, Retry-After 1, "out of memory". */
static void assert_oom_problem(const scenario *s, long n, const cqd_response *r)
{
    ck_assert_msg(r->status == 503, "%s, allocation %ld: status %d %.*s", s->name, n, r->status, (int)r->body.len,
                  r->body.data ? r->body.data : "");
    ck_assert_str_eq(r->content_type, "application/problem+json");
    ck_assert_msg(r->retry_after == 1, "%s, allocation %ld: Retry-After %d", s->name, n, r->retry_after);
    json_error_t e;
    json_t *v = json_loadb(r->body.data, r->body.len, 0, &e);
    ck_assert_msg(v != NULL, "%s, allocation %ld: problem body is not JSON: %s", s->name, n, e.text);
    ck_assert_str_eq(json_string_value(json_object_get(v, "type")), "urn:collisiond:problem:unavailable");
    ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), 503);
    const char *detail = json_string_value(json_object_get(v, "detail"));
    ck_assert_msg(detail && strstr(detail, "out of memory"), "%s, allocation %ld: detail '%s'", s->name, n,
                  detail ? detail : "(none)");
    json_decref(v);
}

/* One N: fresh server, seed, fail allocation n (and on, when sticky), check.
 * Returns whether the injector fired. */
static bool run_once(const scenario *s, const reference *ref, long n, bool sticky, bool durable)
{
    size_t base = cq_alloc_bytes();
    long live = atomic_load(&server_live);
    fixture f = {0};
    if (durable)
        make_dir(&f);
    server_up(&f);
    seed(&f);
    char *before = dump(&f);

    cqd_response r;
    cqd_thread *self = cqd_thread_self(&f.srv);
    ck_assert_ptr_nonnull(self);
    inj_arena = &self->json;
    arm(n, sticky);
    call(&f, s->method, s->path, s->body, &r);
    bool fired = disarm() > 0;
    inj_arena = NULL;

    char *now = dump(&f);
    bool failed = r.status != s->status;
    if (!failed) {
        /* success, or a graceful fallback: the same answer and worlds */
        if (!answer_varies(s))
            same(s, n, "the answer", r.body.data ? r.body.data : "", ref->body);
        same(s, n, "the worlds", now, ref->after);
        char *probes = probe(&f); /* what a fallback left stale still answers right */
        same(s, n, "queries after it", probes, ref->probes);
        free(probes);
    } else {
        ck_assert_msg(fired, "%s: status %d without an injected failure", s->name, r.status);
        assert_oom_problem(s, n, &r);
        same(s, n, "the worlds after a failure", now, before);
    }
    cqd_response_free(&r);

    if (durable) { /* what the journal holds is what memory holds */
        server_down(&f);
        server_up(&f);
        char *recovered = dump(&f);
        same(s, n, "the recovered worlds", recovered, now);
        free(recovered);
    }
    if (failed) { /* nothing changed: the request still works, with the same answer */
        char *again = must(&f, s->method, s->path, s->body, s->status);
        if (!answer_varies(s))
            same(s, n, "the answer on a retry", again, ref->body);
        free(again);
    }
    free(now);
    free(before);
    server_down(&f);
    if (durable)
        remove_dir(f.dir);
    ck_assert_msg(cq_alloc_bytes() == base, "%s, allocation %ld: %zu core bytes leaked", s->name, n,
                  cq_alloc_bytes() - base);
    ck_assert_msg(atomic_load(&server_live) == live, "%s, allocation %ld: %ld server blocks leaked", s->name, n,
                  atomic_load(&server_live) - live);
    return fired;
}

/* Every allocation point one by one for the first few hundred, then
 * geometric steps (the requests here stay below that; a larger one's later
 * allocations repeat the same sites for more elements). */
static long next_n(long n) { return n < 400 ? n + 1 : n + n / 8; }

static void run_scenario(const scenario *s, bool sticky, bool durable)
{
    reference ref = take_reference(s);
    long n = 1;
    while (run_once(s, &ref, n, sticky, durable))
        n = next_n(n);
    /* a body is parsed through jansson, and every answer has a buffer */
    ck_assert_msg(n > 1, "%s: the injector never fired", s->name);
    free(ref.body);
    free(ref.after);
    free(ref.probes);
}

START_TEST(fail_one_allocation)
{
    hooks_in();
    run_scenario(&scenarios[_i], false, false);
    hooks_out();
}
END_TEST

START_TEST(fail_from_one_allocation_on)
{
    hooks_in();
    run_scenario(&scenarios[_i], true, false);
    hooks_out();
}
END_TEST

START_TEST(fail_with_a_journal)
{
    hooks_in();
    run_scenario(&scenarios[_i], false, true);
    hooks_out();
}
END_TEST

/* ---- recovery under a failing allocator ------------------------------------ */

/* Whether a scenario changes a world (and so leaves a journal record). */
static bool mutates(const scenario *s)
{
    return strncmp(s->path, "/v1/worlds/", 11) == 0 &&
           (strcmp(s->method, "PUT") == 0 || strcmp(s->method, "DELETE") == 0 || strstr(s->path, "/batch"));
}

/* One start-up from f's directory with allocation n failing: the worlds it
 * recovered (a new string), or NULL when it refused to start. *fired says
 * whether the injector fired. */
static char *start_failing(const fixture *f, long n, bool *fired)
{
    fixture g = *f;
    server_init_logged(&g);
    cqd_thread *self = cqd_thread_self(&g.srv); /* recovery runs on this thread */
    ck_assert_ptr_nonnull(self);
    inj_arena = &self->json;
    arm(n, false);
    g.srv.store = cqd_store_open(&g.srv);
    bool up = g.srv.store && cqd_store_recover(g.srv.store) == 0;
    *fired = disarm() > 0;
    inj_arena = NULL;
    char *got = NULL;
    if (up) {
        atomic_store(&g.srv.state, CQD_READY);
        got = dump(&g);
    }
    ck_assert_msg(up || *fired, "allocation %ld: start-up refused without an injected failure", n);
    server_down(&g);
    return got;
}

/* Start-up replays a journal (the seed, every scenario that changes a
 * world, and a batch refused after it was journaled, as a journal may hold)
 * with allocation n failing, n = 1, 2, ... until a start-up runs without the
 * injector firing. A start-up that succeeds must hold exactly the worlds the
 * requests left: a record that cannot be replayed for lack of memory is not
 * a record rejected as when first sent, and dropping it would lose an
 * acknowledged change. One that refuses must leave the files so that the
 * next, uninjected start-up recovers those worlds. */
START_TEST(recover_with_failing_allocations)
{
    hooks_in();
    fixture f = {0};
    make_dir(&f);
    server_up(&f);
    seed(&f);
    for (int i = 0; i < SCENARIOS; i++) {
        if (!mutates(&scenarios[i]))
            continue;
        cqd_response r;
        call(&f, scenarios[i].method, scenarios[i].path, scenarios[i].body, &r);
        cqd_response_free(&r);
    }
    free(must(&f, "POST", "/v1/worlds/copy/batch", "{\"move\":[{\"id\":\"nobody\",\"pose\":" POSE(1, 1, 1) "}]}",
              400));
    char *want = dump(&f);
    server_down(&f);
    const scenario recovery = {"recovery", "", "", NULL, 0};
    int refused = 0;
    long n = 1;
    for (bool fired = true; fired; n = next_n(n)) {
        size_t base = cq_alloc_bytes();
        long live = atomic_load(&server_live);
        char *got = start_failing(&f, n, &fired);
        if (got)
            same(&recovery, n, "the recovered worlds", got, want);
        else
            refused++;
        free(got);
        server_up(&f); /* the files still hold everything */
        char *again = dump(&f);
        same(&recovery, n, "the worlds recovered after it", again, want);
        free(again);
        server_down(&f);
        ck_assert_msg(cq_alloc_bytes() == base, "recovery, allocation %ld: %zu core bytes leaked", n,
                      cq_alloc_bytes() - base);
        ck_assert_msg(atomic_load(&server_live) == live, "recovery, allocation %ld: %ld server blocks leaked", n,
                      atomic_load(&server_live) - live);
    }
    printf("recovery under a failing allocator: %ld start-ups, %d refused\n", n, refused);
    ck_assert_int_gt(refused, 0);
    free(want);
    remove_dir(f.dir);
    hooks_out();
}
END_TEST

/* ---- a world deleted while a snapshot is written ---------------------------- */

static void *snapshot_thread(void *arg)
{
    cqd_store_snapshot(arg);
    return NULL;
}

/* Whether the data directory holds journal-<seq>.log for a seq after `after`. */
static bool has_journal_after(const char *dir, unsigned long long after)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    bool found = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        unsigned long long seq;
        if (sscanf(e->d_name, "journal-%llu.log", &seq) == 1 && seq > after)
            found = true;
    }
    closedir(d);
    return found;
}

/* A snapshot holds the worlds that existed when its journal began, each as
 * of its turn. World b, deleted before its turn, is not in it; its records
 * after the snapshot began (a shape PUT, the deletion) then fail to find it
 * at the next start. They are superseded by the deletion, not corruption:
 * the start must recover the worlds as they were (here the snapshot waits
 * at world a, whose lock the test holds, while b changes and goes). */
START_TEST(world_deleted_during_a_snapshot)
{
    fixture f = {0};
    make_dir(&f);
    server_up(&f);
    free(must(&f, "PUT", "/v1/worlds/a", "{}", 201));
    free(must(&f, "PUT", "/v1/worlds/b", "{}", 201));
    free(must(&f, "PUT", "/v1/worlds/b/shapes/s1", "{\"shape\":" BALL "}", 201));
    cqd_world *a = cqd_world_acquire(f.srv.worlds, "a", true);
    ck_assert_ptr_nonnull(a);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, snapshot_thread, f.srv.store), 0);
    for (int i = 0; !has_journal_after(f.dir, 1); i++) { /* the snapshot's journal has begun */
        ck_assert_int_lt(i, 5000);
        usleep(1000);
    }
    free(must(&f, "PUT", "/v1/worlds/b/shapes/s2", "{\"shape\":" BALL "}", 201));
    free(must(&f, "DELETE", "/v1/worlds/b", NULL, 204));
    cqd_world_release(f.srv.worlds, a);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    char *want = dump(&f);
    ck_assert_ptr_null(strstr(want, "\"b\""));
    server_down(&f); /* as a crash: no snapshot at the end */
    server_up(&f);   /* asserts that recovery succeeds */
    char *got = dump(&f);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    server_down(&f);
    remove_dir(f.dir);
}
END_TEST

Suite *oom_suite(void)
{
    Suite *s = suite_create("oom");
    TCase *one = tcase_create("fail_one");
    tcase_set_timeout(one, 300);
    tcase_add_loop_test(one, fail_one_allocation, 0, SCENARIOS);
    suite_add_tcase(s, one);
    TCase *sticky = tcase_create("fail_from_n");
    tcase_set_timeout(sticky, 300);
    tcase_add_loop_test(sticky, fail_from_one_allocation_on, 0, SCENARIOS);
    suite_add_tcase(s, sticky);
    TCase *journal = tcase_create("journal");
    tcase_set_timeout(journal, 300);
    tcase_add_loop_test(journal, fail_with_a_journal, 0, SCENARIOS);
    tcase_add_test(journal, recover_with_failing_allocations);
    tcase_add_test(journal, world_deleted_during_a_snapshot);
    suite_add_tcase(s, journal);
    return s;
}
