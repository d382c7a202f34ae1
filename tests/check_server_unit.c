/* Unit tests of the server's spine: the request pipeline driven through
 * cqd_handle on real routes (request ids, 404/405, auth, readiness,
 * bodies, pretty, 204, formats, metrics, access log), the per-thread state
 * and the logger. Oracles are hand-written: the expected statuses and
 * headers, and JSON read back with jansson. Route matching:
 * check_server_routes.c; the config table: check_config.c. */
#include <check.h>
#include <jansson.h>
#include <msgpuck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/handlers.h"
#include "api/request.h"
#include "api/router.h"
#include "config_util.h"
#include "net/listen.h"
#include "net/refuse.h"
#include "net/transport.h"
#include "ops/config.h"
#include "ops/log.h"
#include "ops/metrics.h"
#include "state/server.h"
#include "state/thread.h"

/* ---- pipeline --------------------------------------------------------- */

static void server_up(cqd_server *srv, const char *token, FILE **log)
{
    cqd_config cfg = cu_default_config();
    snprintf(cfg.token, sizeof cfg.token, "%s", token);
    ck_assert_int_eq(cqd_server_init(srv, &cfg), 0);
    *log = tmpfile();
    ck_assert_ptr_nonnull(*log);
    srv->log.fd = fileno(*log);
    atomic_store(&srv->state, CQD_READY);
}

typedef struct req_opts {
    const char *query, *auth, *request_id, *body;
    size_t len;               /* the body's bytes; 0: strlen(body) */
    cqp_format body_format, accept;
    cqp_value body_value;     /* a body the transport opened */
    bool no_pretty;
} req_opts;

static void call(cqd_server *srv, const char *method, const char *path, req_opts o, cqd_response *resp)
{
    cqd_request req = {
        .transport = "test",
        .method = method,
        .path = path,
        .query = o.query,
        .authorization = o.auth,
        .request_id = o.request_id,
        .body = o.body,
        .body_len = o.len ? o.len : o.body ? strlen(o.body) : 0,
        .body_format = o.body_format,
        .body_value = o.body_value,
        .accept = o.accept,
        .allow_pretty = !o.no_pretty,
    };
    cqd_response_init(resp);
    cqd_handle(srv, &req, resp);
}

/* The problem body's type slug, checked against status and content type. */
static void assert_problem(const cqd_response *resp, int status, const char *slug)
{
    ck_assert_int_eq(resp->status, status);
    ck_assert_str_eq(resp->content_type, "application/problem+json");
    json_error_t e;
    json_t *v = json_loadb(resp->body.data, resp->body.len, 0, &e);
    ck_assert_msg(v != NULL, "problem body is not JSON: %s", e.text);
    char type[128];
    snprintf(type, sizeof type, "urn:collisiond:problem:%s", slug);
    ck_assert_str_eq(json_string_value(json_object_get(v, "type")), type);
    ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), status);
    json_decref(v);
}

/* How many of this process's descriptors name the file at path. */
static int fds_naming(const char *path)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) {
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len < 0)
            continue;
        target[len] = '\0';
        n += strcmp(target, path) == 0;
    }
    return n;
}

/* When libmicrohttpd refuses to start (here: a regular file is no socket
 * epoll can watch), the copy of the listen socket it was given is closed
 * and the caller's is left open. */
START_TEST(http_start_failure_closes_its_copy)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    srv.cfg.threads = 1; // no pool: the listen socket goes into the daemon's own epoll set
    char path[] = "/tmp/check-http-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    cqd_listen_sock sock = {.fd = fd, .port = 1, .ipv6 = false, .addr = "test:1"};
    ck_assert_int_eq(fds_naming(path), 1);
    ck_assert_ptr_null(cqd_http_start(&srv, &sock, NULL));
    ck_assert_int_eq(fds_naming(path), 1); /* the caller's alone */
    close(fd);
    unlink(path);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

START_TEST(pipeline_probes_and_misses)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    cqd_response resp;
    call(&srv, "GET", "/healthz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.content_type, "application/json");
    ck_assert_str_eq(resp.body.data, "{\"status\":\"ok\"}");
    cqd_response_free(&resp);

    call(&srv, "GET", "/nope", (req_opts){0}, &resp);
    assert_problem(&resp, 404, "no-route");
    ck_assert_str_eq(resp.allow, "");
    cqd_response_free(&resp);

    call(&srv, "DELETE", "/v1/pairs", (req_opts){0}, &resp);
    assert_problem(&resp, 405, "method-not-allowed");
    ck_assert_str_eq(resp.allow, "POST");
    cqd_response_free(&resp);

    call(&srv, "GET", "/v1/worlds/no world", (req_opts){0}, &resp);
    assert_problem(&resp, 400, "invalid-value");
    cqd_response_free(&resp);
    call(&srv, "GET", "/v1/worlds/none", (req_opts){0}, &resp);
    assert_problem(&resp, 404, "not-found");
    cqd_response_free(&resp);

    /* Bytes that are not UTF-8 in a path or method: still a JSON problem. */
    call(&srv, "GET", "/x\xff\xc3", (req_opts){0}, &resp);
    assert_problem(&resp, 404, "no-route");
    cqd_response_free(&resp);
    call(&srv, "G\x01\xe9T", "/healthz", (req_opts){0}, &resp);
    assert_problem(&resp, 405, "method-not-allowed");
    cqd_response_free(&resp);

    /* What a client may leave out of a stream envelope. */
    call(&srv, NULL, "/healthz", (req_opts){0}, &resp);
    assert_problem(&resp, 405, "method-not-allowed");
    cqd_response_free(&resp);
    call(&srv, "GET", NULL, (req_opts){0}, &resp);
    assert_problem(&resp, 404, "no-route");
    cqd_response_free(&resp);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

START_TEST(pipeline_request_ids)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    cqd_response resp;
    call(&srv, "GET", "/healthz", (req_opts){.request_id = "ab c/<d>:e.f_g-h\n"}, &resp);
    ck_assert_str_eq(resp.request_id, "abcd:e.f_g-h");
    cqd_response_free(&resp);

    char longer[200];
    memset(longer, 'z', 150);
    longer[150] = '\0';
    longer[10] = ' ';
    call(&srv, "GET", "/healthz", (req_opts){.request_id = longer}, &resp);
    ck_assert_uint_eq(strlen(resp.request_id), 64);
    ck_assert_int_eq(strspn(resp.request_id, "z"), 64);
    cqd_response_free(&resp);

    /* Absent, empty or all-invalid ids are generated: "<boot id hex>-<seq>", distinct. */
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%016llx-", (unsigned long long)srv.boot_id);
    char first[CQD_REQUEST_ID_MAX + 1] = "";
    const char *givens[] = {NULL, "", "<>  !!"};
    for (int i = 0; i < 3; i++) {
        call(&srv, "GET", "/nope", (req_opts){.request_id = givens[i]}, &resp);
        ck_assert_msg(strncmp(resp.request_id, prefix, 17) == 0, "id %s, boot %s", resp.request_id, prefix);
        const char *seq = resp.request_id + 17;
        ck_assert_int_gt(strlen(seq), 0);
        ck_assert_uint_eq(strspn(seq, "0123456789"), strlen(seq));
        ck_assert_str_ne(resp.request_id, first);
        snprintf(first, sizeof first, "%s", resp.request_id);
        cqd_response_free(&resp);
    }
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

START_TEST(pipeline_auth)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "s3cret", &log);
    cqd_response resp;
    /* The probes stay open. */
    call(&srv, "GET", "/healthz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    call(&srv, "GET", "/readyz", (req_opts){.auth = "Bearer nope"}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    /* Without the token, nothing about paths or methods is told. */
    static const char *const wrong[] = {NULL, "", "Bearer", "Bearer ", "Bearer s3cre", "Bearer s3cret2",
                                        "Bearer S3CRET", "Bearer s3crex", "Basic s3cret", "Bearers3cret",
                                        "Bearer s3cret x", "Bearer \ts3cret\tx", "s3cret"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        call(&srv, "GET", "/v1/worlds", (req_opts){.auth = wrong[i]}, &resp);
        assert_problem(&resp, 401, "unauthorized");
        cqd_response_free(&resp);
        call(&srv, "GET", "/unknown", (req_opts){.auth = wrong[i]}, &resp);
        assert_problem(&resp, 401, "unauthorized");
        cqd_response_free(&resp);
        call(&srv, "DELETE", "/v1/pair", (req_opts){.auth = wrong[i]}, &resp);
        assert_problem(&resp, 401, "unauthorized");
        ck_assert_str_eq(resp.allow, "");
        cqd_response_free(&resp);
    }
    /* A bad id is told only to a client with the token. */
    call(&srv, "PUT", "/v1/worlds/bad!", (req_opts){0}, &resp);
    assert_problem(&resp, 401, "unauthorized");
    cqd_response_free(&resp);
    call(&srv, "GET", "/unknown", (req_opts){.auth = "Bearer s3cret"}, &resp);
    assert_problem(&resp, 404, "no-route");
    cqd_response_free(&resp);
    call(&srv, "PUT", "/v1/worlds/bad!", (req_opts){.auth = "Bearer s3cret"}, &resp);
    assert_problem(&resp, 400, "invalid-value");
    cqd_response_free(&resp);
    call(&srv, "GET", "/v1/worlds", (req_opts){.auth = "bearer s3cret"}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    /* RFC 9110: 1*SP after the scheme, OWS around the value (issue 25, item 11). */
    static const char *const blank[] = {"Bearer  s3cret", "Bearer s3cret ", " Bearer s3cret", "\tBearer\ts3cret\t",
                                        "Bearer s3cret \t "};
    for (size_t i = 0; i < sizeof blank / sizeof blank[0]; i++) {
        call(&srv, "GET", "/v1/worlds", (req_opts){.auth = blank[i]}, &resp);
        ck_assert_int_eq(resp.status, 200);
        cqd_response_free(&resp);
    }
    fclose(log);
    cqd_server_destroy(&srv);

    /* Auth off: no header needed. */
    server_up(&srv, "", &log);
    call(&srv, "GET", "/v1/worlds", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

START_TEST(pipeline_readiness)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    atomic_store(&srv.state, CQD_STARTING);
    cqd_response resp;
    call(&srv, "GET", "/v1/worlds", (req_opts){0}, &resp);
    assert_problem(&resp, 503, "unavailable");
    ck_assert_int_eq(resp.retry_after, 1);
    cqd_response_free(&resp);
    call(&srv, "PUT", "/v1/worlds/w", (req_opts){0}, &resp);
    assert_problem(&resp, 503, "unavailable");
    cqd_response_free(&resp);
    /* A name that can never exist needs no recovered world to refuse. */
    call(&srv, "PUT", "/v1/worlds/w%2Fx", (req_opts){0}, &resp);
    assert_problem(&resp, 400, "invalid-value");
    cqd_response_free(&resp);
    call(&srv, "GET", "/healthz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    call(&srv, "GET", "/readyz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 503);
    cqd_response_free(&resp);
    call(&srv, "GET", "/metrics", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_ne(resp.content_type, "application/json"); /* the handler's own type is kept */
    cqd_response_free(&resp);

    atomic_store(&srv.state, CQD_READY);
    call(&srv, "GET", "/readyz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    atomic_store(&srv.state, CQD_DRAINING);
    call(&srv, "GET", "/readyz", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 503);
    cqd_response_free(&resp);
    call(&srv, "GET", "/v1/worlds", (req_opts){0}, &resp); /* draining still serves */
    ck_assert_int_eq(resp.status, 200);
    cqd_response_free(&resp);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

START_TEST(pipeline_bodies_pretty_204)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    cqd_response resp;
    static const char *const not_objects[] = {"[1]", "3", "\"s\"", "null", "true"};
    for (size_t i = 0; i < sizeof not_objects / sizeof not_objects[0]; i++) {
        call(&srv, "POST", "/v1/pair", (req_opts){.body = not_objects[i]}, &resp);
        assert_problem(&resp, 400, "wrong-type");
        cqd_response_free(&resp);
    }
    call(&srv, "POST", "/v1/pair", (req_opts){.body = "{\"a\":"}, &resp);
    assert_problem(&resp, 400, "malformed-json");
    cqd_response_free(&resp);
    call(&srv, "POST", "/v1/pair", (req_opts){.body = "{\"a\":1,\"a\":2}"}, &resp);
    assert_problem(&resp, 400, "malformed-json");
    cqd_response_free(&resp);

    /* An empty body is no body: PUT of a world takes the defaults. */
    call(&srv, "PUT", "/v1/worlds/w1", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 201);
    cqd_response_free(&resp);
    call(&srv, "DELETE", "/v1/worlds/w1", (req_opts){0}, &resp);
    ck_assert_int_eq(resp.status, 204);
    ck_assert_uint_eq(resp.body.len, 0);
    cqd_response_free(&resp);

    static const struct {
        const char *query;
        bool no_pretty, pretty;
    } cases[] = {{NULL, false, false},      {"pretty=1", false, true},  {"a=b&pretty=true", false, true},
                 {"pretty=2", false, false}, {"xpretty=1", false, false}, {"pretty=1", true, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        call(&srv, "GET", "/healthz", (req_opts){.query = cases[i].query, .no_pretty = cases[i].no_pretty}, &resp);
        ck_assert_int_eq(resp.status, 200);
        ck_assert_msg((strchr(resp.body.data, '\n') != NULL) == cases[i].pretty, "query %s: %s", cases[i].query,
                      resp.body.data);
        json_t *v = json_loads(resp.body.data, 0, NULL);
        ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "ok");
        json_decref(v);
        cqd_response_free(&resp);
    }
    call(&srv, "GET", "/nope", (req_opts){.query = "pretty=1"}, &resp);
    ck_assert_ptr_nonnull(strchr(resp.body.data, '\n')); /* problems are pretty too */
    cqd_response_free(&resp);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

/* The value of member key in the MessagePack map at p, read by msgpuck
 * (not by the daemon's code), or NULL. */
static const char *mp_member(const char *p, const char *key)
{
    if (mp_typeof(*p) != MP_MAP)
        return NULL;
    uint32_t n = mp_decode_map(&p);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len;
        ck_assert_int_eq(mp_typeof(*p), MP_STR);
        const char *k = mp_decode_str(&p, &len);
        if (len == strlen(key) && memcmp(k, key, len) == 0)
            return p;
        mp_next(&p);
    }
    return NULL;
}

/* A MessagePack problem: its content type, status and type slug. */
static void assert_mp_problem(const cqd_response *resp, int status, const char *slug)
{
    ck_assert_int_eq(resp->status, status);
    ck_assert_str_eq(resp->content_type, "application/problem+msgpack");
    ck_assert(resp->negotiated);
    const char *end = resp->body.data;
    ck_assert_int_eq(mp_check(&end, resp->body.data + resp->body.len), 0);
    ck_assert_ptr_eq(end, resp->body.data + resp->body.len); /* one value, nothing after */
    const char *v = mp_member(resp->body.data, "status");
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(mp_decode_uint(&v), (uint64_t)status);
    char type[128];
    uint32_t len;
    snprintf(type, sizeof type, "urn:collisiond:problem:%s", slug);
    v = mp_member(resp->body.data, "type");
    ck_assert_ptr_nonnull(v);
    const char *got = mp_decode_str(&v, &len);
    ck_assert_int_eq((int)len, (int)strlen(type));
    ck_assert(memcmp(got, type, len) == 0);
}

/* Two unit spheres with centres 3 apart, as MessagePack bytes written by
 * hand: {"a": {"shape": {"type": "sphere", "radius": 1}}, "b": {"shape":
 * {"type": "sphere", "radius": 1}, "pose": {"position": [3, 0, 0]}}}. */
static const char spheres_mp[] =
    "\x82"
    "\xa1" "a" "\x81" "\xa5" "shape" "\x82" "\xa4" "type" "\xa6" "sphere" "\xa6" "radius" "\x01"
    "\xa1" "b" "\x82" "\xa5" "shape" "\x82" "\xa4" "type" "\xa6" "sphere" "\xa6" "radius" "\x01"
    "\xa4" "pose" "\x81" "\xa8" "position" "\x93" "\x03" "\x00" "\x00";

/* The pipeline in both formats: the body read in body_format (or the
 * transport's view), the answer and every problem in accept's, with the
 * matching content types; handlers that name their type keep it. */
START_TEST(pipeline_formats)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    cqd_response resp;
    const req_opts mp_in_out = {.body = spheres_mp, .len = sizeof spheres_mp - 1, .body_format = CQP_MSGPACK,
                                .accept = CQP_MSGPACK};
    call(&srv, "POST", "/v1/pair", mp_in_out, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.content_type, "application/msgpack");
    ck_assert(resp.negotiated);
    const char *v = mp_member(resp.body.data, "distance");
    ck_assert_ptr_nonnull(v);
    ck_assert_double_eq_tol(mp_decode_double(&v), 1.0, 1e-12); /* 3 - 1 - 1 */
    cqd_response_free(&resp);

    /* MessagePack in, JSON out (Accept said nothing). */
    req_opts mp_in = mp_in_out;
    mp_in.accept = CQP_JSON;
    call(&srv, "POST", "/v1/pair", mp_in, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.content_type, "application/json");
    ck_assert(resp.negotiated);
    json_t *j = json_loadb(resp.body.data, resp.body.len, 0, NULL);
    ck_assert_double_eq_tol(json_number_value(json_object_get(j, "distance")), 1.0, 1e-12);
    json_decref(j);
    cqd_response_free(&resp);

    /* A view the transport opened is used as is: the bytes are not read. */
    json_t *tree = json_loads("{\"a\":{\"shape\":{\"type\":\"sphere\",\"radius\":1}},"
                              "\"b\":{\"shape\":{\"type\":\"sphere\",\"radius\":2},\"pose\":{\"position\":[5,0,0]}}}",
                              0, NULL);
    call(&srv, "POST", "/v1/pair", (req_opts){.body = "garbage", .body_value = cqp_value_json(tree)}, &resp);
    ck_assert_int_eq(resp.status, 200);
    j = json_loadb(resp.body.data, resp.body.len, 0, NULL);
    ck_assert_double_eq_tol(json_number_value(json_object_get(j, "distance")), 2.0, 1e-12); /* 5 - 1 - 2 */
    json_decref(j);
    json_decref(tree);
    cqd_response_free(&resp);

    /* Problems follow accept, whatever the body's format. */
    call(&srv, "GET", "/v1/nope", (req_opts){.accept = CQP_MSGPACK}, &resp);
    assert_mp_problem(&resp, 404, "no-route");
    cqd_response_free(&resp);
    static const char truncated[] = "\x92\x01";
    call(&srv, "POST", "/v1/pair", (req_opts){.body = truncated, .body_format = CQP_MSGPACK, .accept = CQP_MSGPACK},
         &resp);
    assert_mp_problem(&resp, 400, "malformed-msgpack");
    cqd_response_free(&resp);
    call(&srv, "POST", "/v1/pair", (req_opts){.body = truncated, .body_format = CQP_MSGPACK}, &resp);
    assert_problem(&resp, 400, "malformed-msgpack");
    cqd_response_free(&resp);
    static const char array_root[] = "\x91\x01";
    call(&srv, "POST", "/v1/pair", (req_opts){.body = array_root, .body_format = CQP_MSGPACK, .accept = CQP_MSGPACK},
         &resp);
    assert_mp_problem(&resp, 400, "wrong-type");
    v = mp_member(resp.body.data, "detail");
    uint32_t len;
    const char *detail = mp_decode_str(&v, &len);
    static const char want[] = "the request body must be a MessagePack map";
    ck_assert_int_eq((int)len, (int)strlen(want));
    ck_assert(memcmp(detail, want, len) == 0);
    cqd_response_free(&resp);

    /* One type whatever Accept says, and nothing negotiated; a 204 has no body. */
    call(&srv, "GET", "/v1/openapi.json", (req_opts){.accept = CQP_MSGPACK}, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.content_type, "application/json");
    ck_assert(!resp.negotiated);
    cqd_response_free(&resp);
    call(&srv, "GET", "/metrics", (req_opts){.accept = CQP_MSGPACK}, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_nonnull(strstr(resp.content_type, "text/plain"));
    ck_assert(!resp.negotiated);
    cqd_response_free(&resp);
    call(&srv, "PUT", "/v1/worlds/f", (req_opts){.accept = CQP_MSGPACK}, &resp);
    ck_assert_int_eq(resp.status, 201);
    ck_assert_str_eq(resp.content_type, "application/msgpack");
    cqd_response_free(&resp);
    call(&srv, "DELETE", "/v1/worlds/f", (req_opts){.accept = CQP_MSGPACK}, &resp);
    ck_assert_int_eq(resp.status, 204);
    ck_assert(!resp.negotiated);
    cqd_response_free(&resp);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

/* Requests of one route and status counted by this thread, all buckets. */
static uint64_t counted(cqd_server *srv, int route, int status)
{
    static const int codes[] = CQD_STATUS_CODES;
    int slot = CQD_STATUS_SLOTS - 1;
    for (int i = 0; i < (int)(sizeof codes / sizeof codes[0]); i++)
        if (codes[i] == status)
            slot = i;
    cqd_thread *t = cqd_thread_self(srv);
    int row = route < 0 ? CQD_MAX_ROUTES : route;
    uint64_t n = 0;
    for (int b = 0; b < CQD_LATENCY_BUCKETS; b++)
        n += atomic_load(&t->requests.bucket[row][slot][b]);
    return n;
}

static int route_of(const char *pattern)
{
    int count;
    const cqd_route *routes = cqd_routes(&count);
    for (int i = 0; i < count; i++)
        if (strcmp(routes[i].pattern, pattern) == 0)
            return i;
    return -1;
}

START_TEST(pipeline_metrics_and_log)
{
    cqd_server srv;
    FILE *log;
    server_up(&srv, "", &log);
    srv.access.mode = CQD_ACCESS_ALL;
    cqd_response resp;
    for (int i = 0; i < 3; i++) {
        call(&srv, "GET", "/healthz", (req_opts){.request_id = "hz"}, &resp);
        cqd_response_free(&resp);
    }
    call(&srv, "GET", "/nope\"\n", (req_opts){.request_id = "miss"}, &resp);
    cqd_response_free(&resp);
    cqd_request big = {.transport = "test", .method = "POST", .path = "/v1/pairs", .request_id = "big"};
    cqd_response_init(&resp);
    cqd_refuse(&srv, &big, CQP_P_TOO_LARGE, "too big", &resp);
    assert_problem(&resp, 413, "body-too-large");
    ck_assert_str_eq(resp.request_id, "big");
    cqd_response_free(&resp);

    ck_assert_uint_eq(counted(&srv, route_of("/healthz"), 200), 3);
    ck_assert_uint_eq(counted(&srv, -1, 404), 1);
    ck_assert_uint_eq(counted(&srv, route_of("/v1/pairs"), 413), 1);

    /* One JSON access line per request, in order. */
    rewind(log);
    char line[4096];
    const char *want_ids[] = {"hz", "hz", "hz", "miss", "big"};
    const int want_status[] = {200, 200, 200, 404, 413};
    int n = 0;
    while (fgets(line, sizeof line, log)) {
        json_error_t e;
        json_t *v = json_loads(line, 0, &e);
        ck_assert_msg(v != NULL, "log line is not JSON: %s (%s)", line, e.text);
        ck_assert_int_lt(n, 5);
        ck_assert_str_eq(json_string_value(json_object_get(v, "msg")), "request");
        ck_assert_str_eq(json_string_value(json_object_get(v, "level")), "info");
        ck_assert_str_eq(json_string_value(json_object_get(v, "request_id")), want_ids[n]);
        ck_assert_int_eq(json_integer_value(json_object_get(v, "status")), want_status[n]);
        ck_assert_ptr_nonnull(json_object_get(v, "duration_us"));
        ck_assert_ptr_nonnull(json_object_get(v, "time"));
        if (n == 3) {
            ck_assert_str_eq(json_string_value(json_object_get(v, "path")), "/nope\"\n");
            ck_assert(json_is_null(json_object_get(v, "route")));
        }
        if (n == 0)
            ck_assert_str_eq(json_string_value(json_object_get(v, "route")), "/healthz");
        json_decref(v);
        n++;
    }
    ck_assert_int_eq(n, 5);
    fclose(log);

    /* The level does not silence access lines; --access-log off does. */
    log = tmpfile();
    srv.log.fd = fileno(log);
    srv.log.level = CQD_LOG_ERROR;
    call(&srv, "GET", "/healthz", (req_opts){0}, &resp);
    cqd_response_free(&resp);
    fseek(log, 0, SEEK_END);
    ck_assert_int_gt(ftell(log), 0);
    long written = ftell(log);
    srv.access.mode = CQD_ACCESS_OFF;
    srv.log.level = CQD_LOG_DEBUG;
    call(&srv, "GET", "/nope", (req_opts){0}, &resp);
    cqd_response_free(&resp);
    fseek(log, 0, SEEK_END);
    ck_assert_int_eq(ftell(log), written);
    fclose(log);
    cqd_server_destroy(&srv);
}
END_TEST

/* ---- threads and logs ------------------------------------------------- */

START_TEST(thread_state)
{
    cqd_server a, b;
    cqd_config cfg = cu_default_config();
    ck_assert_int_eq(cqd_server_init(&a, &cfg), 0);
    ck_assert_int_eq(cqd_server_init(&b, &cfg), 0);
    cqd_thread *ta = cqd_thread_self(&a);
    ck_assert_ptr_nonnull(ta);
    ck_assert_ptr_eq(cqd_thread_self(&a), ta);
    ck_assert_ptr_eq(a.threads, ta);
    cqd_thread *tb = cqd_thread_self(&b); /* another server: other state */
    ck_assert_ptr_ne(tb, ta);
    ck_assert_ptr_eq(b.threads, tb);

    /* Records pushed after the mark get labels; the ring shares a's clock. */
    cq_fallback_record rec = {.reason = 1, .action = 1};
    cq_fallback_log_push(&ta->fallbacks, &rec);
    uint64_t mark = cqd_thread_mark(ta);
    ck_assert_uint_eq(mark, 1);
    uint64_t s1 = cq_fallback_log_push(&ta->fallbacks, &rec);
    uint64_t s2 = cq_fallback_log_push(&ta->fallbacks, &rec);
    ck_assert_uint_eq(s1, 2);
    ck_assert_uint_eq(s2, 3);
    ck_assert_uint_eq(atomic_load(&a.fallback_clock), 3);
    cqd_thread_label_fallbacks(ta, mark, "arena", "req-9");
    /* Labels sit in the ring slots of their records: push numbers 1 and 2. */
    ck_assert_uint_eq(atomic_load(&ta->labels[1].seq), s1);
    ck_assert_uint_eq(atomic_load(&ta->labels[2].seq), s2);
    ck_assert_str_eq(ta->labels[2].world, "arena");
    ck_assert_str_eq(ta->labels[2].request_id, "req-9");
    ck_assert_uint_eq(atomic_load(&ta->labels[0].seq), 0); /* pushed before the mark */
    cqd_thread_label_fallbacks(ta, cqd_thread_mark(ta), NULL, "x"); /* nothing new: no change */
    ck_assert_str_eq(ta->labels[2].request_id, "req-9");
    cqd_server_destroy(&b);
    cqd_server_destroy(&a);
}
END_TEST

START_TEST(log_lines_are_json)
{
    FILE *f = tmpfile();
    cqd_logger lg = {.level = CQD_LOG_INFO, .fd = fileno(f)};
    cqd_log(&lg, CQD_LOG_WARN, "quote \" backslash \\ tab \t ctl \x01 %d", 42);
    cqd_log(&lg, CQD_LOG_DEBUG, "not written");
    char huge[5000];
    memset(huge, '"', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    cqd_log(&lg, CQD_LOG_ERROR, "%s", huge);
    cqd_log_request(&lg, "id", "http", "GET", NULL, huge, 200, 5);
    /* Valid UTF-8 passes; stray, overlong and surrogate bytes are replaced. */
    cqd_log_request(&lg, "id", "http", "G\xffT", NULL, "/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xc3|\xc0\xaf|\xed\xa0\x80|\xe2\x82", 200, 5);
    rewind(f);
    char line[8192];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    json_t *v = json_loads(line, 0, NULL);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(json_string_value(json_object_get(v, "level")), "warn");
    ck_assert_str_eq(json_string_value(json_object_get(v, "msg")), "quote \" backslash \\ tab \t ctl \x01 42");
    json_decref(v);
    for (int i = 0; i < 3; i++) { /* cut, but complete JSON */
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(line[strlen(line) - 1], '\n');
        json_error_t e;
        v = json_loads(line, 0, &e);
        ck_assert_msg(v != NULL, "%s", e.text);
        if (i == 2) {
            ck_assert_str_eq(json_string_value(json_object_get(v, "method")), "G\xef\xbf\xbdT");
            /* U+FFFD per bad byte: the lone lead, both bytes of the overlong
             * form, the three of the surrogate, and the two of the cut euro. */
            const char *r = "\xef\xbf\xbd";
            char want[128];
            snprintf(want, sizeof want, "/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|%s|%s%s|%s%s%s|%s%s", r, r, r, r, r, r, r, r);
            ck_assert_str_eq(json_string_value(json_object_get(v, "path")), want);
        }
        json_decref(v);
    }
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
}
END_TEST

/* The access policy against a hand-written table of API.md section 14:
 * per mode, which of (quiet?, status, slow?) get a line; in sample mode,
 * 1 in 3 of the ordinary requests, the 1st of each three. */
START_TEST(access_policy)
{
    static const struct {
        bool quiet;
        int status;
        bool slow;
        bool off, errors, sample_first, all; /* sample_first: sample mode, as the first ordinary request */
    } rows[] = {
        {false, 200, false, false, false, true, true},  {true, 200, false, false, false, false, true},
        {false, 404, false, false, false, true, true},  {false, 400, false, false, false, true, true},
        {false, 405, false, false, false, true, true},  {false, 409, false, false, false, true, true},
        {false, 401, false, false, true, true, true},   {true, 401, false, false, true, true, true},
        {false, 413, false, false, true, true, true},   {false, 422, false, false, true, true, true},
        {false, 500, false, false, true, true, true},   {true, 503, false, false, true, true, true},
        {false, 200, true, false, true, true, true},    {true, 200, true, false, true, true, true},
    };
    const uint64_t slow_ns = 16000000, fast_ns = slow_ns - 1;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const bool want[] = {rows[i].off, rows[i].errors, rows[i].sample_first, rows[i].all};
        for (int mode = CQD_ACCESS_OFF; mode <= CQD_ACCESS_ALL; mode++) {
            cqd_access a;
            cqd_access_init(&a, (cqd_access_mode)mode, 3, 16);
            bool got = cqd_access_wanted(&a, rows[i].quiet, rows[i].status, rows[i].slow ? slow_ns : fast_ns);
            ck_assert_msg(got == want[mode], "row %zu, mode %d", i, mode);
        }
    }
    /* Sampling: the 1st, 4th, 7th... ordinary request; errors, slow and
     * quiet requests in between neither count nor break the rhythm. */
    cqd_access a;
    cqd_access_init(&a, CQD_ACCESS_SAMPLE, 3, 16);
    int logged = 0;
    for (int k = 0; k < 10; k++) {
        ck_assert(cqd_access_wanted(&a, false, 503, fast_ns));
        ck_assert(!cqd_access_wanted(&a, true, 200, fast_ns));
        ck_assert(cqd_access_wanted(&a, false, 200, slow_ns));
        bool got = cqd_access_wanted(&a, false, 200, fast_ns);
        ck_assert_msg(got == (k % 3 == 0), "ordinary request %d", k);
        logged += got;
    }
    ck_assert_int_eq(logged, 4);
    /* --slow-request 0: every request is slow. */
    cqd_access_init(&a, CQD_ACCESS_ERRORS, 1, 0);
    ck_assert(cqd_access_wanted(&a, true, 200, 0));
}
END_TEST

Suite *server_unit_suite(void)
{
    Suite *s = suite_create("server_unit");
    TCase *tc = tcase_create("pipeline");
    tcase_add_test(tc, http_start_failure_closes_its_copy);
    tcase_add_test(tc, pipeline_probes_and_misses);
    tcase_add_test(tc, pipeline_request_ids);
    tcase_add_test(tc, pipeline_auth);
    tcase_add_test(tc, pipeline_readiness);
    tcase_add_test(tc, pipeline_bodies_pretty_204);
    tcase_add_test(tc, pipeline_formats);
    tcase_add_test(tc, pipeline_metrics_and_log);
    suite_add_tcase(s, tc);
    tc = tcase_create("threads_logs");
    tcase_add_test(tc, thread_state);
    tcase_add_test(tc, log_lines_are_json);
    tcase_add_test(tc, access_policy);
    suite_add_tcase(s, tc);
    return s;
}
