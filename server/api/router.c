/// @file server/api/router.c
/// The route table of API.md section 2 and the matcher. A path is compared
/// segment by segment against each pattern; {world} and {id} match any
/// segment, even an empty one, and are validated only once the method
/// matched, so a wrong method is a 405 whatever the ids, and a right one
/// with an id that breaks the rule a 400 (invalid-value) before anything is
/// looked up: no world or shape can ever exist under such a name. {file}
/// (last in its pattern) matches any segment too but keeps no rule: it
/// names a compiled-in file, and a name the handler does not hold is a 404
/// like any other.
#include "router.h"

#include <stdio.h>
#include <string.h>

#include "cq/world.h"
#include "handlers.h"
#include "ops/metrics.h"

/* Each row ends with its operation's facts in docs/openapi.json: the
 * operationId, the request body's schema and the success answer's
 * (check_server_routes holds the document to them). */
static const cqd_route routes[] = {
    // Open (probes carry no token) and never shed (a busy server is not dead).
    // Inline: answered on the connection's thread, whatever runs on the
    // handler pool, so a probe never waits behind a long request.
    {"GET", "/healthz", cqd_h_healthz, CQD_ROUTE_OPEN | CQD_ROUTE_QUIET | CQD_ROUTE_ALWAYS_ADMIT | CQD_ROUTE_INLINE,
     "healthz", NULL, "Status"},
    {"GET", "/readyz", cqd_h_readyz, CQD_ROUTE_OPEN | CQD_ROUTE_QUIET | CQD_ROUTE_ALWAYS_ADMIT | CQD_ROUTE_INLINE,
     "readyz", NULL, "Status"},
    // A scrape sums every thread and reads every world: the pool's.
    {"GET", "/metrics", cqd_h_metrics, CQD_ROUTE_QUIET, "metrics", NULL, NULL},
    {"GET", "/metrics/fallbacks", cqd_h_fallbacks, CQD_ROUTE_QUIET, "fallbacks", NULL, "FallbackLog"},
    {"GET", "/v1/openapi.json", cqd_h_openapi, CQD_ROUTE_INLINE, "openapi", NULL, NULL},
    // The page and its files are open: a browser cannot send the token
    // when it navigates; the API calls the page makes carry it. The
    // literal "/inspect/" goes before "/inspect/{file}", which would
    // take its empty segment as a file name. Compiled-in bytes: inline.
    {"GET", "/inspect", cqd_h_inspector_redirect, CQD_ROUTE_OPEN | CQD_ROUTE_INLINE, "inspectorRedirect", NULL, NULL},
    {"GET", "/inspect/", cqd_h_inspector_index, CQD_ROUTE_OPEN | CQD_ROUTE_INLINE, "inspectorPage", NULL, NULL},
    {"GET", "/inspect/{file}", cqd_h_inspector_asset, CQD_ROUTE_OPEN | CQD_ROUTE_INLINE, "inspectorAsset", NULL, NULL},
    {"POST", "/v1/pair", cqd_h_pair, CQD_ROUTE_BODY, "pair", "PairRequest", "ContactResult"},
    {"POST", "/v1/pairs", cqd_h_pairs, CQD_ROUTE_BODY, "pairs", "PairsRequest", "PairsResponse"},
    {"GET", "/v1/worlds", cqd_h_world_list, 0, "listWorlds", NULL, "WorldList"},
    // A snapshot holds each world as its import: PUT /v1/worlds/{world}.
    {"PUT", "/v1/worlds/{world}", cqd_h_world_put, CQD_ROUTE_BODY | CQD_ROUTE_WRITE | CQD_ROUTE_SNAPSHOT, "putWorld",
     "WorldPutRequest", "WorldSummary"},
    {"GET", "/v1/worlds/{world}", cqd_h_world_get, 0, "getWorld", NULL, "WorldInfo"},
    {"DELETE", "/v1/worlds/{world}", cqd_h_world_delete, CQD_ROUTE_WRITE, "deleteWorld", NULL, NULL},
    {"GET", "/v1/worlds/{world}/export", cqd_h_world_export, 0, "exportWorld", NULL, "WorldExport"},
    {"PUT", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_put, CQD_ROUTE_BODY | CQD_ROUTE_WRITE, "putShape",
     "ShapePutRequest", "WorldShape"},
    {"GET", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_get, 0, "getShape", NULL, "WorldShape"},
    {"DELETE", "/v1/worlds/{world}/shapes/{id}", cqd_h_shape_delete, CQD_ROUTE_WRITE, "deleteShape", NULL, NULL},
    {"POST", "/v1/worlds/{world}/batch", cqd_h_batch, CQD_ROUTE_BODY | CQD_ROUTE_WRITE, "batch", "BatchRequest",
     "BatchResult"},
    {"GET", "/v1/worlds/{world}/pairs", cqd_h_broadphase, 0, "broadphasePairs", NULL, "BroadphasePairs"},
    {"POST", "/v1/worlds/{world}/contacts", cqd_h_contacts, CQD_ROUTE_BODY, "contacts", "ContactsRequest",
     "ContactsResponse"},
    {"POST", "/v1/worlds/{world}/raycast", cqd_h_raycast, CQD_ROUTE_BODY, "raycast", "RaycastRequest",
     "RaycastResponse"},
    {"POST", "/v1/worlds/{world}/sweep", cqd_h_sweep, CQD_ROUTE_BODY, "sweep", "SweepRequest", "SweepResponse"},
    {"POST", "/v1/worlds/{world}/overlap", cqd_h_overlap, CQD_ROUTE_BODY, "overlap", "OverlapRequest",
     "OverlapResponse"},
};

#define ROUTE_COUNT ((int)(sizeof routes / sizeof routes[0]))
_Static_assert(ROUTE_COUNT <= CQD_MAX_ROUTES, "the metrics hold CQD_MAX_ROUTES routes");

const cqd_route *cqd_routes(int *count)
{
    *count = ROUTE_COUNT;
    return routes;
}

bool cqd_route_takes_body(int route)
{
    return route >= 0 && route < ROUTE_COUNT && (routes[route].flags & CQD_ROUTE_BODY);
}

int cqd_route_snapshot(const char *world, const char **method, char *path, size_t size)
{
    for (int i = 0; i < ROUTE_COUNT; i++) {
        const char *p = strstr(routes[i].pattern, "{world}");
        if (!(routes[i].flags & CQD_ROUTE_SNAPSHOT) || !p)
            continue;
        *method = routes[i].method;
        int n = snprintf(path, size, "%.*s%s%s", (int)(p - routes[i].pattern), routes[i].pattern, world,
                         p + strlen("{world}"));
        return n >= 0 && (size_t)n < size ? n : -1;
    }
    return -1;
}

/// A GET route answers HEAD too (RFC 9110 section 9.3.2): the same
/// handler, whose body the transport leaves out.
static bool method_is(const cqd_route *r, const char *method)
{
    return strcmp(r->method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0);
}

bool cqd_route_always_admitted(const char *method, const char *path)
{
    // Patterns with parameters never match here: the flag is for literals.
    for (int i = 0; i < ROUTE_COUNT; i++)
        if ((routes[i].flags & CQD_ROUTE_ALWAYS_ADMIT) && strcmp(routes[i].pattern, path) == 0 &&
            method_is(&routes[i], method))
            return true;
    return false;
}

/// Where a path parameter lies in the path (at NULL: the pattern has none).
typedef struct param {
    const char *at;
    size_t len;
} param;

/// Compares path with pattern; on a match, the {world}, {id} and {file}
/// segments go to world, id and file.
static bool shape_matches(const char *pattern, const char *path, param *world, param *id, param *file)
{
    *world = *id = *file = (param){NULL, 0};
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return false;
        p++;
        s++;
        const char *pe = strchr(p, '/'), *se = strchr(s, '/');
        size_t plen = pe ? (size_t)(pe - p) : strlen(p);
        size_t slen = se ? (size_t)(se - s) : strlen(s);
        if (p[0] == '{') {
            param *dst = p[1] == 'w' ? world : p[1] == 'f' ? file : id;
            *dst = (param){s, slen};
        } else if (plen != slen || memcmp(p, s, plen) != 0) {
            return false;
        }
        p += plen;
        s += slen;
    }
    return *p == '\0' && *s == '\0';
}

bool cqd_route_inline(const char *method, const char *path)
{
    param world, id, file;
    for (int i = 0; i < ROUTE_COUNT; i++)
        if (shape_matches(routes[i].pattern, path, &world, &id, &file) && method_is(&routes[i], method))
            return (routes[i].flags & CQD_ROUTE_INLINE) != 0;
    return false;
}

/// The value of a hex digit, -1 for anything else.
static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if ((ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'))
        return (ch | 0x20) - 'a' + 10;
    return -1;
}

size_t cqd_path_unescape(char *path)
{
    char *w = path;
    for (const char *r = path; *r;) {
        int hi = r[0] == '%' ? hex_value(r[1]) : -1;
        int lo = hi >= 0 ? hex_value(r[2]) : -1;
        int byte = lo >= 0 ? hi * 16 + lo : 0;
        // A decoded NUL would end the path early, a decoded '/' split a
        // segment: both stay escaped, and so are refused as ids.
        if (byte != 0 && byte != '/') {
            *w++ = (char)byte;
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - path);
}

/// Why v breaks the id rule, written into why; false when it keeps it.
static bool id_fault(param v, char *why, size_t size)
{
    if (v.len == 0) {
        snprintf(why, size, "is empty");
        return true;
    }
    if (v.len > CQ_WORLD_ID_MAX) {
        snprintf(why, size, "is %zu characters long", v.len);
        return true;
    }
    for (size_t i = 0; i < v.len; i++) {
        unsigned char ch = (unsigned char)v.at[i];
        if (cq_world_id_char((char)ch))
            continue;
        if (ch > 0x20 && ch < 0x7f) // printable: safe to quote in a detail
            snprintf(why, size, "has '%c' at offset %zu", ch, i);
        else
            snprintf(why, size, "has the byte 0x%02X at offset %zu", ch, i);
        return true;
    }
    return false;
}

/// Copies a path parameter into out when it keeps the id rule; otherwise
/// fills the problem, a 400 naming what is wrong with it.
static bool take_param(param v, const char *what, char out[CQ_WORLD_ID_MAX + 1], cqp_problem *problem)
{
    out[0] = '\0';
    if (!v.at)
        return true;
    char why[48];
    if (id_fault(v, why, sizeof why)) {
        cqp_fail(problem, CQP_P_BAD_VALUE, NULL,
                 "the %s in the path %s; it must be 1 to %d characters of [A-Za-z0-9._:-]", what, why,
                 CQ_WORLD_ID_MAX);
        return false;
    }
    memcpy(out, v.at, v.len);
    out[v.len] = '\0';
    return true;
}

/// Appends method to the comma-separated allow list unless it is there.
static void add_allow(char *allow, int allow_size, const char *method)
{
    size_t mlen = strlen(method);
    for (const char *a = allow; (a = strstr(a, method)) != NULL; a += mlen)
        if ((a == allow || a[-1] == ' ') && (a[mlen] == ',' || a[mlen] == '\0'))
            return;
    size_t used = strlen(allow);
    snprintf(allow + used, (size_t)allow_size - used, "%s%s", used ? ", " : "", method);
}

cqd_match cqd_route_match(const char *method, const char *path, cqd_call *c, int *route, char *allow,
                          int allow_size)
{
    bool path_known = false;
    if (allow_size > 0)
        allow[0] = '\0';
    *route = -1;
    c->world[0] = c->id[0] = '\0';
    c->file = NULL;
    for (int i = 0; i < ROUTE_COUNT; i++) {
        param world, id, file;
        if (!shape_matches(routes[i].pattern, path, &world, &id, &file))
            continue;
        path_known = true;
        if (!method_is(&routes[i], method)) {
            if (allow_size > 0)
                add_allow(allow, allow_size, routes[i].method);
            if (allow_size > 0 && strcmp(routes[i].method, "GET") == 0)
                add_allow(allow, allow_size, "HEAD");
            continue;
        }
        *route = i;
        if (allow_size > 0) /* a partial list is no answer: Allow goes with a 405 only */
            allow[0] = '\0';
        c->file = file.at; // the last segment: it ends where the path does
        if (!take_param(world, "world name", c->world, &c->problem) ||
            !take_param(id, "shape id", c->id, &c->problem))
            return CQD_MATCH_BAD_PARAM;
        return CQD_MATCH_OK;
    }
    return path_known ? CQD_MATCH_NO_METHOD : CQD_MATCH_NO_PATH;
}
