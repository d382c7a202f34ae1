/* The mutating handlers against a real store (server/api/durable.c,
 * h_shape.c, h_world.c, store*.c) in a temporary data directory, driven
 * through cqd_handle. Oracles: what the test read back before the change
 * (the world list and exports, the journal's bytes), which a change the
 * journal refused must leave as they were; and the durability rules of
 * docs/API.md (which changes reach the journal at all). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/request.h"
#include "config_util.h"
#include "state/server.h"
#include "store/store.h"

Suite *durable_suite(void);

/* A server with a store in a directory of its own. */
typedef struct rig {
    cqd_server srv;
    char dir[64];
    FILE *log;
} rig;

static void rig_up(rig *g)
{
    cqd_config cfg = cu_default_config();
    snprintf(g->dir, sizeof g->dir, "/tmp/cq-durable-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g->dir));
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", g->dir);
    ck_assert_int_eq(cqd_server_init(&g->srv, &cfg), 0);
    g->log = tmpfile();
    ck_assert_ptr_nonnull(g->log);
    g->srv.log.fd = fileno(g->log); /* the journal's failure is logged: not on the test's output */
    g->srv.store = cqd_store_open(&g->srv);
    ck_assert_ptr_nonnull(g->srv.store);
    ck_assert_int_eq(cqd_store_recover(g->srv.store), 0);
    atomic_store(&g->srv.state, CQD_READY);
}

static void rig_down(rig *g)
{
    cqd_store_close(g->srv.store, false);
    g->srv.store = NULL;
    cqd_server_destroy(&g->srv);
    fclose(g->log);
    DIR *d = opendir(g->dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", g->dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    closedir(d);
    ck_assert_int_eq(rmdir(g->dir), 0);
}

/* The status of method path with a JSON body (NULL: none); the answer's
 * body into *out (a new string, free() it) when out is not NULL. */
static int call(rig *g, const char *method, const char *path, const char *body, char **out)
{
    cqd_request req = {.transport = "test", .method = method, .path = path, .body = body,
                       .body_len = body ? strlen(body) : 0, .body_format = CQP_JSON, .accept = CQP_JSON};
    cqd_response resp;
    cqd_response_init(&resp);
    cqd_handle(&g->srv, &req, &resp);
    if (out) {
        *out = malloc(resp.body.len + 1);
        ck_assert_ptr_nonnull(*out);
        if (resp.body.len) /* a 204 has no body, and no buffer */
            memcpy(*out, resp.body.data, resp.body.len);
        (*out)[resp.body.len] = '\0';
    }
    int status = resp.status;
    cqd_response_free(&resp);
    return status;
}

static void ok(rig *g, const char *method, const char *path, const char *body)
{
    char *text;
    int status = call(g, method, path, body, &text);
    ck_assert_msg(status >= 200 && status < 300, "%s %s -> %d %s", method, path, status, text);
    free(text);
}

/* Every byte of the journal files (journal-*.log, in name order) and their
 * total size, into a new buffer. */
static char *journal_bytes(const rig *g, size_t *len)
{
    struct dirent **names;
    int n = scandir(g->dir, &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    char *all = NULL;
    *len = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i]->d_name, "journal-", 8) == 0) {
            char path[400];
            snprintf(path, sizeof path, "%s/%s", g->dir, names[i]->d_name);
            FILE *f = fopen(path, "rb");
            ck_assert_ptr_nonnull(f);
            char chunk[4096];
            for (size_t got; (got = fread(chunk, 1, sizeof chunk, f)) > 0; *len += got) {
                all = realloc(all, *len + got);
                ck_assert_ptr_nonnull(all);
                memcpy(all + *len, chunk, got);
            }
            fclose(f);
        }
        free(names[i]);
    }
    free(names);
    return all;
}

/* What the clients can see of the worlds: the list and each export. */
static char *visible(rig *g)
{
    static const char *const worlds[] = {"/v1/worlds", "/v1/worlds/w/export", "/v1/worlds/v/export",
                                         "/v1/worlds/e/export", "/v1/worlds/n/export"};
    size_t len = 0;
    char *all = calloc(1, 1);
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++) {
        char *text;
        int status = call(g, "GET", worlds[k], NULL, &text);
        size_t add = strlen(text) + 32;
        all = realloc(all, len + add);
        ck_assert_ptr_nonnull(all);
        len += (size_t)snprintf(all + len, add, "%d %s\n", status, text);
        free(text);
    }
    return all;
}

#define SPHERE "{\"type\":\"sphere\",\"radius\":0.5}"

/* Two durable worlds (w with shapes a and b) and an ephemeral one (e). */
static void populate(rig *g)
{
    ok(g, "PUT", "/v1/worlds/w", "{\"skin\":0.1}");
    ok(g, "PUT", "/v1/worlds/w/shapes/a", "{\"shape\":" SPHERE ",\"pose\":{\"position\":[1,2,3]}}");
    ok(g, "PUT", "/v1/worlds/w/shapes/b", "{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1,1]}}");
    ok(g, "PUT", "/v1/worlds/v", NULL);
    ok(g, "PUT", "/v1/worlds/e", "{\"durability\":\"none\"}");
    ok(g, "PUT", "/v1/worlds/e/shapes/a", "{\"shape\":" SPHERE "}");
}

/* Every mutating route, each changing a durable world. */
static const struct {
    const char *method, *path, *body;
} changes[] = {
    {"PUT", "/v1/worlds/w/shapes/c", "{\"shape\":" SPHERE "}"},
    {"PUT", "/v1/worlds/w/shapes/a", "{\"shape\":{\"type\":\"capsule\",\"radius\":1,\"half_height\":2}}"},
    {"DELETE", "/v1/worlds/w/shapes/a", NULL},
    {"POST", "/v1/worlds/w/batch",
     "{\"upsert\":[{\"id\":\"c\",\"shape\":" SPHERE "}],\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[5,0,0]}}],"
     "\"remove\":[\"b\"]}"},
    {"POST", "/v1/worlds/w/batch", "{\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[5,0,0]},\"velocity\":[1,0,0]}]}"},
    {"PUT", "/v1/worlds/w", "{\"skin\":0.3,\"capacity\":5000,\"gjk_max_iterations\":7}"},
    {"PUT", "/v1/worlds/w", "{\"settings\":{\"skin\":0.2},\"shapes\":[{\"id\":\"z\",\"shape\":" SPHERE "}]}"},
    {"PUT", "/v1/worlds/n", "{\"skin\":0.2}"},
    {"PUT", "/v1/worlds/n", "{\"settings\":{},\"shapes\":[{\"id\":\"z\",\"shape\":" SPHERE "}]}"},
    {"DELETE", "/v1/worlds/w", NULL},
    {"DELETE", "/v1/worlds/v", NULL},
};

/* The journal's write fails under change _i: 503, and the worlds, the
 * journal and even the world's readiness for the next mutation are as
 * before (a prepared batch was abandoned, not left pending). Changes to the
 * ephemeral world never touch the journal, so they go on working. */
START_TEST(journal_refusal_changes_nothing)
{
    rig g;
    rig_up(&g);
    populate(&g);
    ok(&g, "PUT", "/v1/worlds/s", "{\"durability\":\"shapes\"}");
    ok(&g, "PUT", "/v1/worlds/s/shapes/a", "{\"shape\":" SPHERE "}");
    char *before = visible(&g);
    size_t jlen;
    char *journal = journal_bytes(&g, &jlen);
    ck_assert_uint_gt(jlen, 0);

    ck_assert_int_eq(cqd_failpoint_init(&g.srv.fp, "journal_write"), 0);
    char *text;
    int status = call(&g, changes[_i].method, changes[_i].path, changes[_i].body, &text);
    ck_assert_msg(status == 503 && strstr(text, "nothing changed"), "%s %s -> %d %s", changes[_i].method,
                  changes[_i].path, status, text);
    free(text);
    char *after = visible(&g);
    ck_assert_str_eq(after, before);
    size_t jlen2;
    char *journal2 = journal_bytes(&g, &jlen2);
    ck_assert_uint_eq(jlen2, jlen);
    ck_assert_int_eq(memcmp(journal2, journal, jlen), 0);

    /* the journal stays failed: a durable world refuses, the ephemeral one takes changes */
    ck_assert_int_eq(call(&g, "PUT", "/v1/worlds/w/shapes/q", "{\"shape\":" SPHERE "}", NULL), 503);
    /* and a world of durability shapes takes no move either: no snapshot
     * of a failed store would keep it */
    const char *move = "{\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[5,0,0]}}]}";
    ck_assert_int_eq(call(&g, "POST", "/v1/worlds/s/batch", move, NULL), 503);
    ok(&g, "POST", "/v1/worlds/e/batch",
       "{\"upsert\":[{\"id\":\"q\",\"shape\":" SPHERE "}],\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[0,0,0]}}]}");
    ok(&g, "DELETE", "/v1/worlds/e/shapes/q", NULL);
    ok(&g, "PUT", "/v1/worlds/e2", "{\"durability\":\"none\"}");
    ok(&g, "DELETE", "/v1/worlds/e2", NULL);
    char *last = visible(&g);
    ck_assert_str_eq(last, before); /* e is back as it was */
    free(journal);
    free(journal2);
    free(before);
    free(after);
    free(last);
    rig_down(&g);
}
END_TEST

/* A refused change never reaches the journal, whatever refuses it (the
 * decoder, the world's content, the durability rule): the journal's bytes
 * are those of the accepted changes only. */
START_TEST(refusals_are_not_journaled)
{
    rig g;
    rig_up(&g);
    populate(&g);
    size_t jlen;
    char *journal = journal_bytes(&g, &jlen);
    static const struct {
        const char *method, *path, *body;
        int status;
    } refused[] = {
        {"POST", "/v1/worlds/w/batch", "{\"move\":[{\"id\":\"nope\",\"pose\":{\"position\":[0,0,0]}}]}", 400},
        {"POST", "/v1/worlds/w/batch", "{\"remove\":[\"a\",\"a\"]}", 400},
        {"POST", "/v1/worlds/w/batch", "{\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[\"x\",0,0]}}]}", 400},
        {"POST", "/v1/worlds/nope/batch", "{}", 404},
        {"PUT", "/v1/worlds/w/shapes/a", "{\"shape\":{\"type\":\"sphere\",\"radius\":-1}}", 400},
        {"DELETE", "/v1/worlds/w/shapes/nope", NULL, 404},
        {"DELETE", "/v1/worlds/nope", NULL, 404},
        {"PUT", "/v1/worlds/w", "{\"durability\":\"none\"}", 409},
        {"PUT", "/v1/worlds/w", "{\"settings\":{\"durability\":\"shapes\"},\"shapes\":[]}", 409},
        {"PUT", "/v1/worlds/e", "{\"durability\":\"full\"}", 409},
        {"PUT", "/v1/worlds/w", "{\"skin\":-1}", 400},
        {"PUT", "/v1/worlds/w", "{\"shapes\":[{\"id\":\"x\",\"shape\":" SPHERE "},{\"id\":\"x\",\"shape\":5}]}", 400},
        {"POST", "/v1/worlds/w/batch", "{}", 200}, /* changes nothing: not journaled */
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        char *text;
        int status = call(&g, refused[k].method, refused[k].path, refused[k].body, &text);
        ck_assert_msg(status == refused[k].status, "%s %s -> %d %s", refused[k].method, refused[k].path, status,
                      text);
        free(text);
        size_t now;
        char *bytes = journal_bytes(&g, &now);
        ck_assert_msg(now == jlen && memcmp(bytes, journal, jlen) == 0, "%s %s changed the journal",
                      refused[k].method, refused[k].path);
        free(bytes);
    }
    /* an accepted change still is */
    ok(&g, "POST", "/v1/worlds/w/batch", "{\"move\":[{\"id\":\"a\",\"pose\":{\"position\":[0,0,0]}}]}");
    size_t grown;
    free(journal_bytes(&g, &grown));
    ck_assert_uint_gt(grown, jlen);
    free(journal);
    rig_down(&g);
}
END_TEST

/* The passes a failpoint spec fires on, counted by hand: "name:n" the
 * n-th only, "name:n+" every one from the n-th on; other names never. */
START_TEST(failpoint_passes)
{
    static const struct {
        const char *spec;
        const char *fires; /* pass i (1-based) fires when fires[i - 1] == 'x' */
    } cases[] = {
        {"p", "x......."}, {"p:3", "..x....."}, {"p:3+", "..xxxxxx"}, {"p:1+", "xxxxxxxx"}, {"q:1+", "........"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cqd_failpoint fp;
        ck_assert_int_eq(cqd_failpoint_init(&fp, cases[k].spec), 0);
        for (int i = 0; i < 8; i++)
            ck_assert_msg(cqd_failpoint_hit(&fp, "p") == (cases[k].fires[i] == 'x'), "%s, pass %d", cases[k].spec,
                          i + 1);
    }
    static const char *const bad[] = {"p:", "p:0", "p:0+", "p:+", "p:2++", "p:2x", ":2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cqd_failpoint fp;
        ck_assert_msg(cqd_failpoint_init(&fp, bad[k]) == -1, "%s parsed", bad[k]);
    }
}
END_TEST

Suite *durable_suite(void)
{
    Suite *s = suite_create("durable");
    TCase *tc = tcase_create("durable");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, journal_refusal_changes_nothing, 0, (int)(sizeof changes / sizeof changes[0]));
    tcase_add_test(tc, refusals_are_not_journaled);
    tcase_add_test(tc, failpoint_passes);
    suite_add_tcase(s, tc);
    return s;
}
