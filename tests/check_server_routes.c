/* Unit tests of the server's route table: every endpoint of API.md
 * matched to its route with its parameters, 404 and 405 with the Allow
 * list, bad parameters, and path unescaping. Oracles are hand-written:
 * the endpoint list of API.md and the expected statuses and headers. The
 * pipeline over these routes: check_server_unit.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/request.h"
#include "api/router.h"
#include "ops/metrics.h"

Suite *server_routes_suite(void);

/* ---- routes ----------------------------------------------------------- */

/* Every endpoint of API.md section 2 with a concrete path. */
static const struct {
    const char *method, *path, *pattern;
    cqd_handler handler;
    bool body, open, admit; /* admit: never shed (CQD_ROUTE_ALWAYS_ADMIT) */
    const char *world, *id;
} endpoints[] = {
    {"POST", "/v1/pair", "/v1/pair", cqd_h_pair, true, false, false, "", ""},
    {"POST", "/v1/pairs", "/v1/pairs", cqd_h_pairs, true, false, false, "", ""},
    {"PUT", "/v1/worlds/arena", "/v1/worlds/{world}", cqd_h_world_put, true, false, false, "arena", ""},
    {"GET", "/v1/worlds", "/v1/worlds", cqd_h_world_list, false, false, false, "", ""},
    {"GET", "/v1/worlds/a.b_c:d-e", "/v1/worlds/{world}", cqd_h_world_get, false, false, false, "a.b_c:d-e", ""},
    {"DELETE", "/v1/worlds/arena", "/v1/worlds/{world}", cqd_h_world_delete, false, false, false, "arena", ""},
    {"GET", "/v1/worlds/arena/export", "/v1/worlds/{world}/export", cqd_h_world_export, false, false, false, "arena", ""},
    {"PUT", "/v1/worlds/arena/shapes/7", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_put, true, false, false, "arena",
     "7"},
    {"GET", "/v1/worlds/w/shapes/box-1", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_get, false, false, false, "w",
     "box-1"},
    {"DELETE", "/v1/worlds/w/shapes/x", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_delete, false, false, false, "w",
     "x"},
    {"POST", "/v1/worlds/w/batch", "/v1/worlds/{world}/batch", cqd_h_batch, true, false, false, "w", ""},
    {"GET", "/v1/worlds/w/pairs", "/v1/worlds/{world}/pairs", cqd_h_broadphase, false, false, false, "w", ""},
    {"POST", "/v1/worlds/w/contacts", "/v1/worlds/{world}/contacts", cqd_h_contacts, true, false, false, "w", ""},
    {"POST", "/v1/worlds/w/raycast", "/v1/worlds/{world}/raycast", cqd_h_raycast, true, false, false, "w", ""},
    {"POST", "/v1/worlds/w/sweep", "/v1/worlds/{world}/sweep", cqd_h_sweep, true, false, false, "w", ""},
    {"POST", "/v1/worlds/w/overlap", "/v1/worlds/{world}/overlap", cqd_h_overlap, true, false, false, "w", ""},
    {"GET", "/metrics", "/metrics", cqd_h_metrics, false, false, false, "", ""},
    {"GET", "/metrics/fallbacks", "/metrics/fallbacks", cqd_h_fallbacks, false, false, false, "", ""},
    {"GET", "/healthz", "/healthz", cqd_h_healthz, false, true, true, "", ""},
    {"GET", "/readyz", "/readyz", cqd_h_readyz, false, true, true, "", ""},
    {"GET", "/v1/openapi.json", "/v1/openapi.json", cqd_h_openapi, false, false, false, "", ""},
    {"GET", "/inspect", "/inspect", cqd_h_inspector_redirect, false, true, false, "", ""},
    /* the literal page route wins over the file route's empty {file} */
    {"GET", "/inspect/", "/inspect/", cqd_h_inspector_index, false, true, false, "", ""},
    {"GET", "/inspect/three.min.js", "/inspect/{file}", cqd_h_inspector_asset, false, true, false, "", ""},
};
#define ENDPOINTS ((int)(sizeof endpoints / sizeof endpoints[0]))

static cqd_match match(const char *method, const char *path, cqd_call *c, int *route, char allow[64])
{
    memset(c, 0, sizeof *c);
    return cqd_route_match(method, path, c, route, allow, 64);
}

START_TEST(route_every_endpoint)
{
    int count;
    const cqd_route *routes = cqd_routes(&count);
    ck_assert_int_eq(count, ENDPOINTS);
    ck_assert_int_le(count, CQD_MAX_ROUTES);
    for (int i = 0; i < ENDPOINTS; i++) {
        cqd_call c;
        int r;
        char allow[64];
        ck_assert_msg(match(endpoints[i].method, endpoints[i].path, &c, &r, allow) == CQD_MATCH_OK, "%s %s",
                      endpoints[i].method, endpoints[i].path);
        ck_assert_str_eq(routes[r].pattern, endpoints[i].pattern);
        ck_assert_str_eq(routes[r].method, endpoints[i].method);
        ck_assert_msg(routes[r].handler == endpoints[i].handler, "%s %s: wrong handler", endpoints[i].method,
                      endpoints[i].path);
        ck_assert_int_eq(!!(routes[r].flags & CQD_ROUTE_BODY), endpoints[i].body);
        ck_assert_int_eq(!!(routes[r].flags & CQD_ROUTE_OPEN), endpoints[i].open);
        ck_assert_int_eq(!!(routes[r].flags & CQD_ROUTE_ALWAYS_ADMIT), endpoints[i].admit);
        /* what the transports ask before admission control, by the request's own path */
        ck_assert_msg(cqd_route_always_admitted(endpoints[i].method, endpoints[i].path) == endpoints[i].admit,
                      "%s %s: admitted always?", endpoints[i].method, endpoints[i].path);
        ck_assert_str_eq(c.world, endpoints[i].world);
        ck_assert_str_eq(c.id, endpoints[i].id);
    }
}
END_TEST

/* {file} keeps no id rule: any segment matches and is handed over as it
 * is, so the handler answers 404 for a name it does not hold. */
START_TEST(route_file_keeps_no_rule)
{
    static const char *const names[] = {"three.min.js", "bad!name", "a%", "..%2Fv1", "a b",
                                        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "/inspect/%s", names[i]);
        cqd_call c;
        int r;
        char allow[64];
        ck_assert_msg(match("GET", path, &c, &r, allow) == CQD_MATCH_OK, "%s", path);
        ck_assert_msg(cqd_routes(&(int){0})[r].handler == cqd_h_inspector_asset, "%s: wrong handler", path);
        ck_assert_str_eq(c.file, names[i]);
        ck_assert_str_eq(c.id, "");
    }
    cqd_call c;
    int r;
    char allow[64];
    ck_assert_int_eq(match("GET", "/v1/worlds/w/shapes/s", &c, &r, allow), CQD_MATCH_OK);
    ck_assert_ptr_null(c.file);
}
END_TEST

/* True when the comma-separated list holds exactly the given methods. */
static bool allow_is(const char *allow, const char *const *methods, int n)
{
    char copy[64];
    snprintf(copy, sizeof copy, "%s", allow);
    int seen = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        bool known = false;
        for (int i = 0; i < n; i++)
            known |= strcmp(tok, methods[i]) == 0;
        if (!known)
            return false;
        seen++;
    }
    return seen == n;
}

START_TEST(route_misses)
{
    cqd_call c;
    int r;
    char allow[64];
    static const char *const nopaths[] = {"/", "", "/nope", "/v1", "/v1/", "//healthz", "/healthz/",
                                          "/v1/worlds/w/shapes", "/v1/worlds/w/shapes/x/y", "/v1/worlds/w/",
                                          "/v1//worlds/w", "/V1/pair", "/v1/pair/", "/metricsx"};
    for (size_t i = 0; i < sizeof nopaths / sizeof nopaths[0]; i++)
        ck_assert_msg(match("GET", nopaths[i], &c, &r, allow) == CQD_MATCH_NO_PATH, "%s matched", nopaths[i]);

    ck_assert_int_eq(match("PATCH", "/v1/worlds/arena", &c, &r, allow), CQD_MATCH_NO_METHOD);
    /* HEAD wherever GET is (RFC 9110 section 9.3.2) */
    static const char *const world_methods[] = {"GET", "HEAD", "PUT", "DELETE"};
    ck_assert_msg(allow_is(allow, world_methods, 4), "allow '%s'", allow);
    ck_assert_int_eq(match("GET", "/v1/pair", &c, &r, allow), CQD_MATCH_NO_METHOD);
    static const char *const post[] = {"POST"};
    ck_assert_msg(allow_is(allow, post, 1), "allow '%s'", allow);
    ck_assert_int_eq(match("POST", "/v1/worlds/w/shapes/s", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_msg(allow_is(allow, world_methods, 4), "allow '%s'", allow);
    /* Wrong method on a path whose ids are invalid, or empty: still a 405. */
    ck_assert_int_eq(match("POST", "/v1/worlds/bad name", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_msg(allow_is(allow, world_methods, 4), "allow '%s'", allow);
    ck_assert_int_eq(match("PATCH", "/v1/worlds//shapes/", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_msg(allow_is(allow, world_methods, 4), "allow '%s'", allow);
    ck_assert_int_eq(match("get", "/healthz", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_int_eq(match("head", "/healthz", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_int_eq(match("HEAD", "/v1/pair", &c, &r, allow), CQD_MATCH_NO_METHOD);
    ck_assert_msg(allow_is(allow, post, 1), "allow '%s'", allow);
    ck_assert_int_eq(match("HEAD", "/v1/worlds/w/shapes/s", &c, &r, allow), CQD_MATCH_OK);
    int count;
    ck_assert_str_eq(cqd_routes(&count)[r].method, "GET");
    ck_assert(cqd_route_always_admitted("HEAD", "/healthz"));
}
END_TEST

/* A path whose {world} or {id} breaks the id rule: a 400 invalid-value
 * whose detail says which parameter and why (the expected words are the
 * rule's, written here by hand). */
static void assert_bad_param(const char *method, const char *path, const char *what, const char *why)
{
    cqd_call c;
    int r;
    char allow[64];
    ck_assert_msg(match(method, path, &c, &r, allow) == CQD_MATCH_BAD_PARAM, "%s %s", method, path);
    ck_assert_int_eq(c.problem.kind, CQP_P_BAD_VALUE);
    ck_assert_int_eq(cqp_problem_status(c.problem.kind), 400);
    ck_assert_str_eq(c.problem.pointer, "");
    ck_assert_msg(strstr(c.problem.detail, what) && strstr(c.problem.detail, why), "%s: '%s'", path,
                  c.problem.detail);
    ck_assert_str_eq(allow, "");
    ck_assert_int_ge(r, 0); /* counted under its route */
}

START_TEST(route_bad_params)
{
    cqd_call c;
    int r;
    char allow[64];
    char long_id[80];
    memset(long_id, 'a', 65);
    long_id[65] = '\0';
    char path[200];
    snprintf(path, sizeof path, "/v1/worlds/%s", long_id);
    assert_bad_param("GET", path, "world name", "65 characters");
    snprintf(path, sizeof path, "/v1/worlds/w/shapes/%s", long_id);
    assert_bad_param("DELETE", path, "shape id", "65 characters");
    long_id[64] = '\0'; /* 64 characters: the longest valid id */
    snprintf(path, sizeof path, "/v1/worlds/%s/shapes/%s", long_id, long_id);
    ck_assert_int_eq(match("PUT", path, &c, &r, allow), CQD_MATCH_OK);
    ck_assert_str_eq(c.world, long_id);
    ck_assert_str_eq(c.id, long_id);

    assert_bad_param("GET", "/v1/worlds/bad name", "world name", "byte 0x20 at offset 3");
    assert_bad_param("PUT", "/v1/worlds/a%2Fb", "world name", "'%' at offset 1");
    assert_bad_param("GET", "/v1/worlds/w/shapes/x?y", "shape id", "'?' at offset 1");
    assert_bad_param("GET", "/v1/worlds/\xc3\xa9", "world name", "byte 0xC3 at offset 0");
    assert_bad_param("POST", "/v1/worlds/w\x01/raycast", "world name", "byte 0x01 at offset 1");
    assert_bad_param("GET", "/v1/worlds/w/shapes/a b", "shape id", "byte 0x20 at offset 1");
    /* Empty parameters are ids too short, not paths of their own. */
    assert_bad_param("GET", "/v1/worlds/", "world name", "is empty");
    assert_bad_param("PUT", "/v1/worlds//shapes/x", "world name", "is empty");
    assert_bad_param("GET", "/v1/worlds/w/shapes/", "shape id", "is empty");
    assert_bad_param("POST", "/v1/worlds//contacts", "world name", "is empty");
    /* The world is judged first. */
    assert_bad_param("PUT", "/v1/worlds/a!/shapes/b!", "world name", "'!'");
}
END_TEST

/* Hand-decoded per RFC 3986 section 2.1, with the two bytes a segment
 * cannot hold (NUL, '/') and broken escapes left as written. */
START_TEST(path_unescape)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", ""},
        {"/v1/worlds/arena", "/v1/worlds/arena"},
        {"/v1/worlds/a%3Ab", "/v1/worlds/a:b"},
        {"/v1/worlds/a%3ab", "/v1/worlds/a:b"},
        {"/v1/%77orlds/%41", "/v1/worlds/A"},
        {"/v1/worlds/%C3%A9", "/v1/worlds/\xc3\xa9"},
        {"/v1/worlds/a%2Fb", "/v1/worlds/a%2Fb"},
        {"/v1/worlds/a%2fb", "/v1/worlds/a%2fb"},
        {"/v1/worlds/a%00b", "/v1/worlds/a%00b"},
        {"/v1/worlds/a%252F", "/v1/worlds/a%2F"},
        {"/v1/worlds/a%", "/v1/worlds/a%"},
        {"/v1/worlds/a%4", "/v1/worlds/a%4"},
        {"/v1/worlds/a%4g%g4", "/v1/worlds/a%4g%g4"},
        {"%%41", "%A"},
        {"a+b%20c", "a+b c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", cases[i].in);
        size_t n = cqd_path_unescape(buf);
        ck_assert_msg(strcmp(buf, cases[i].out) == 0, "'%s' -> '%s'", cases[i].in, buf);
        ck_assert_uint_eq(n, strlen(cases[i].out));
    }
}
END_TEST

/* The routes that write a world, by API.md (the changes the journal
 * keeps): exactly these carry CQD_ROUTE_WRITE, which recovery replays, and
 * a world's import alone is what a snapshot record replays through. */
START_TEST(route_writes)
{
    static const char *const writes[] = {
        "PUT /v1/worlds/{world}", "DELETE /v1/worlds/{world}", "PUT /v1/worlds/{world}/shapes/{id}",
        "DELETE /v1/worlds/{world}/shapes/{id}", "POST /v1/worlds/{world}/batch",
    };
    int count, seen = 0;
    const cqd_route *routes = cqd_routes(&count);
    for (int i = 0; i < count; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s %s", routes[i].method, routes[i].pattern);
        bool listed = false;
        for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++)
            listed |= strcmp(name, writes[k]) == 0;
        seen += listed;
        ck_assert_msg(listed == ((routes[i].flags & CQD_ROUTE_WRITE) != 0), "%s: writes?", name);
        ck_assert_msg((strcmp(name, "PUT /v1/worlds/{world}") == 0) == ((routes[i].flags & CQD_ROUTE_SNAPSHOT) != 0),
                      "%s: a snapshot's route?", name);
    }
    ck_assert_int_eq(seen, 5);

    const char *method = NULL;
    char path[32];
    ck_assert_int_eq(cqd_route_snapshot("arena", &method, path, sizeof path), 16);
    ck_assert_str_eq(method, "PUT");
    ck_assert_str_eq(path, "/v1/worlds/arena");
    ck_assert_int_eq(cqd_route_snapshot("arena", &method, path, 16), -1); /* no room for the NUL */
    ck_assert_int_eq(cqd_route_snapshot("a:b.c-d_e", &method, path, 21), 20);
    ck_assert_str_eq(path, "/v1/worlds/a:b.c-d_e");
}
END_TEST

Suite *server_routes_suite(void)
{
    Suite *s = suite_create("server_routes");
    TCase *tc = tcase_create("routes");
    tcase_add_test(tc, route_every_endpoint);
    tcase_add_test(tc, route_file_keeps_no_rule);
    tcase_add_test(tc, route_misses);
    tcase_add_test(tc, route_bad_params);
    tcase_add_test(tc, path_unescape);
    tcase_add_test(tc, route_writes);
    suite_add_tcase(s, tc);
    return s;
}
