/* The route table against docs/openapi.json, as compiled into the daemon
 * (and served at GET /v1/openapi.json): every route is an operation of
 * the document with the operationId, request schema and success schema
 * the table names, a GET route's HEAD twin included, and every operation
 * of the document is a route. The document is the oracle: written by
 * hand, and never generated from the table. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/openapi.h"
#include "api/router.h"

Suite *route_docs_suite(void);

#define SCHEMAS "#/components/schemas/"

static json_t *load_doc(void)
{
    json_error_t err;
    json_t *doc = json_loadb(cqd_openapi_json, cqd_openapi_len, 0, &err);
    ck_assert_msg(doc != NULL, "docs/openapi.json: %s at line %d", err.text, err.line);
    return doc;
}

/* A local reference ("#/a/b") resolved in doc; node itself when it is none. */
static json_t *deref(json_t *doc, json_t *node)
{
    const char *ref = json_string_value(json_object_get(node, "$ref"));
    if (!ref || strncmp(ref, "#/", 2) != 0)
        return node;
    json_t *at = doc;
    for (const char *p = ref + 2; at && *p;) {
        size_t n = strcspn(p, "/");
        char part[128];
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        at = json_object_get(at, part);
        p += n + (p[n] == '/');
    }
    return at;
}

/* The schema name a content map's JSON entry refers to, or NULL. */
static const char *schema_name(json_t *content)
{
    json_t *schema = json_object_get(json_object_get(content, "application/json"), "schema");
    const char *ref = json_string_value(json_object_get(schema, "$ref"));
    return ref && strncmp(ref, SCHEMAS, strlen(SCHEMAS)) == 0 ? ref + strlen(SCHEMAS) : NULL;
}

static const char *request_schema(json_t *doc, json_t *op)
{
    json_t *body = json_object_get(op, "requestBody");
    return body ? schema_name(json_object_get(deref(doc, body), "content")) : NULL;
}

static bool same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Whether every 2xx answer of op names want as its schema (NULL: none
 * names one), and one at least does when want is a name. */
static bool responses_name(json_t *doc, json_t *op, const char *want)
{
    const char *code;
    json_t *resp;
    bool seen = false;
    json_object_foreach(json_object_get(op, "responses"), code, resp) {
        if (code[0] != '2')
            continue;
        const char *got = schema_name(json_object_get(deref(doc, resp), "content"));
        if (got && !same(got, want))
            return false;
        seen |= got != NULL;
    }
    return seen == (want != NULL);
}

static void lower(const char *method, char out[16])
{
    size_t i = 0;
    for (; method[i] && i + 1 < 16; i++)
        out[i] = (char)(method[i] | 0x20);
    out[i] = '\0';
}

/* Checks one operation of the document against route r as method. */
static void check_operation(json_t *doc, const cqd_route *r, const char *method)
{
    char m[16], id[64];
    lower(method, m);
    json_t *op = json_object_get(json_object_get(json_object_get(doc, "paths"), r->pattern), m);
    ck_assert_msg(op != NULL, "%s %s: a route the document lacks", method, r->pattern);
    snprintf(id, sizeof id, "%s%s", r->operation, strcmp(method, r->method) != 0 ? "Head" : "");
    const char *got = json_string_value(json_object_get(op, "operationId"));
    ck_assert_msg(same(got, id), "%s %s: operationId %s, the table says %s", method, r->pattern, got, id);
    ck_assert_msg(same(request_schema(doc, op), r->request), "%s %s: request schema %s, the table says %s", method,
                  r->pattern, request_schema(doc, op), r->request);
    ck_assert_msg(responses_name(doc, op, r->response), "%s %s: success schemas other than the table's %s", method,
                  r->pattern, r->response);
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    if (r->response)
        ck_assert_msg(json_object_get(schemas, r->response) != NULL, "no schema %s", r->response);
}

START_TEST(every_route_is_documented)
{
    json_t *doc = load_doc();
    int count;
    const cqd_route *routes = cqd_routes(&count);
    for (int i = 0; i < count; i++) {
        const cqd_route *r = &routes[i];
        ck_assert_msg(r->operation != NULL, "%s %s: no operationId", r->method, r->pattern);
        /* the table's own facts agree too: a schema for the body it takes */
        ck_assert_msg((r->request != NULL) == ((r->flags & CQD_ROUTE_BODY) != 0), "%s %s: body flag and schema",
                      r->method, r->pattern);
        check_operation(doc, r, r->method);
        if (strcmp(r->method, "GET") == 0) /* HEAD is answered wherever GET is */
            check_operation(doc, r, "HEAD");
    }
    json_decref(doc);
}
END_TEST

/* The route taking method on pattern (HEAD: the GET route), or NULL. */
static const cqd_route *route_of(const char *pattern, const char *method)
{
    int count;
    const cqd_route *routes = cqd_routes(&count);
    const char *want = strcmp(method, "HEAD") == 0 ? "GET" : method;
    for (int i = 0; i < count; i++)
        if (strcmp(routes[i].pattern, pattern) == 0 && strcmp(routes[i].method, want) == 0)
            return &routes[i];
    return NULL;
}

START_TEST(every_operation_is_a_route)
{
    static const char *const methods[] = {"get", "put", "post", "delete", "patch", "head", "options", "trace"};
    json_t *doc = load_doc();
    const char *path;
    json_t *item;
    int operations = 0;
    json_object_foreach(json_object_get(doc, "paths"), path, item) {
        for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
            if (!json_object_get(item, methods[k]))
                continue;
            char upper[16];
            size_t n = strlen(methods[k]);
            for (size_t i = 0; i <= n; i++)
                upper[i] = (char)(methods[k][i] & ~0x20);
            ck_assert_msg(route_of(path, upper) != NULL, "%s %s: documented, but no route", upper, path);
            operations++;
        }
    }
    /* 24 routes, 13 of them GET with a HEAD twin: counted by hand */
    ck_assert_int_eq(operations, 37);
    json_decref(doc);
}
END_TEST

Suite *route_docs_suite(void)
{
    Suite *s = suite_create("route_docs");
    TCase *tc = tcase_create("route_docs");
    tcase_add_test(tc, every_route_is_documented);
    tcase_add_test(tc, every_operation_is_a_route);
    suite_add_tcase(s, tc);
    return s;
}
