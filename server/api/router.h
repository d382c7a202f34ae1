/// @file server/api/router.h
/// The routing table: method + path pattern -> handler, shared by every
/// transport. Patterns are literal segments and the parameters {world} and
/// {id} (validated ids, after the transport decoded the path) and {file}
/// (any segment, unvalidated; only last in a pattern).
#ifndef CQD_ROUTER_H
#define CQD_ROUTER_H

#include "request.h"

/// Route flags.
enum {
    CQD_ROUTE_BODY = 1, ///< the handler takes a body (opened before the call); without it one sent is ignored
    CQD_ROUTE_OPEN = 2, ///< no bearer token needed (health probes)
    CQD_ROUTE_QUIET = 4, ///< polled by machines (probes, scrapes): never a sampled access line
    CQD_ROUTE_ALWAYS_ADMIT = 8, ///< never shed by admission control (health probes): a busy server is not dead
    CQD_ROUTE_INLINE = 16, ///< HTTP runs it on the connection's thread, not the handler pool: it is short whatever is asked (probes, static files)
    /// Writes a world (as Redis marks its write commands): journaled, so
    /// recovery replays exactly these routes; and answered within
    /// --max-response alone, never a request's tighter limit, as a change
    /// made is never answered "retry".
    CQD_ROUTE_WRITE = 32,
    /// The route a snapshot's world record replays through (the import):
    /// the snapshot writes each world as a request to it.
    CQD_ROUTE_SNAPSHOT = 64,
};

/// A route: how a request reaches its handler, and the facts of its
/// operation in docs/openapi.json, which a test holds the document to.
typedef struct cqd_route {
    const char *method;
    const char *pattern; ///< e.g. "/v1/worlds/{world}/shapes/{id}"; also the metrics label
    cqd_handler handler;
    unsigned flags;
    const char *operation; ///< its operationId (a GET's HEAD twin: this with "Head" after it)
    const char *request;   ///< the schema its body has (components/schemas), NULL: it takes none
    const char *response;  ///< the schema of its success answers, NULL: none named (204, text, files)
} cqd_route;

/// The table and its length (static storage).
const cqd_route *cqd_routes(int *count);

/// Whether the route at index route (in cqd_routes) takes a body: only
/// then does the pipeline open one, so only then may the journal keep one
/// and recovery open it. False for an index outside the table.
bool cqd_route_takes_body(int route);

/// The CQD_ROUTE_SNAPSHOT route's method, and its pattern with {world}
/// set to world, into path (size bytes): the request a snapshot's record
/// of that world stands for. The path's length, or -1 when it does not fit
/// (or no route has the flag).
int cqd_route_snapshot(const char *world, const char **method, char *path, size_t size);

/// True when method and path name a CQD_ROUTE_ALWAYS_ADMIT route (the
/// health probes, which have no parameters): admission control lets them
/// through, so a busy server is not mistaken for a dead one.
bool cqd_route_always_admitted(const char *method, const char *path);

/// True when method and path name a CQD_ROUTE_INLINE route: its answer
/// costs less than handing it to the pool would (http_work.c).
bool cqd_route_inline(const char *method, const char *path);

/// Outcome of matching a request line.
typedef enum cqd_match {
    CQD_MATCH_OK,         ///< *route set, params filled
    CQD_MATCH_NO_PATH,    ///< 404
    CQD_MATCH_NO_METHOD,  ///< 405: allow filled with the methods the path has
    CQD_MATCH_BAD_PARAM,  ///< 400: a {world} or {id} segment breaks the id rule (problem filled)
} cqd_match;

/// Decodes the %XX escapes of a request path in place; every transport
/// hands the pipeline its path so decoded, so one path means the same on
/// each ("%3A" is ':'). An escape of NUL or '/' stays as written (a segment
/// holds neither, and the '%' then breaks the id rule), as does a '%'
/// without two hex digits after it. Returns the new length.
size_t cqd_path_unescape(char *path);

/// Matches method and path against the table; copies {world} and {id}
/// into c->world and c->id, and points c->file at {file} in path.
cqd_match cqd_route_match(const char *method, const char *path, cqd_call *c, int *route, char *allow,
                          int allow_size);

#endif
