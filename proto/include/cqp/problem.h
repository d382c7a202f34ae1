/// @file cqp/problem.h
/// The problem+json (and problem+msgpack) error model (API.md section 3): every rejected request
/// is described by one cqp_problem, filled where the fault is found and
/// written once at the edge.
#ifndef CQP_PROBLEM_H
#define CQP_PROBLEM_H

#include "cqp/api.h"
#include "cqp/write.h"

/// X(name, status, slug, title): the kinds of problem the service reports.
/// The type URI is "urn:collisiond:problem:<slug>".
#define CQP_PROBLEM_TABLE(X)                                                            \
    X(BAD_JSON, 400, "malformed-json", "Malformed JSON")                                \
    X(BAD_MSGPACK, 400, "malformed-msgpack", "Malformed MessagePack")                   \
    X(BAD_TYPE, 400, "wrong-type", "Wrong type")                                       \
    X(UNKNOWN_FIELD, 400, "unknown-field", "Unknown field")                            \
    X(MISSING_FIELD, 400, "missing-field", "Missing field")                            \
    X(BAD_VALUE, 400, "invalid-value", "Invalid value")                                \
    X(UNAUTHORIZED, 401, "unauthorized", "Missing or wrong bearer token")              \
    X(NOT_FOUND, 404, "not-found", "Not found")                                        \
    X(NO_ROUTE, 404, "no-route", "No such endpoint")                                   \
    X(BAD_METHOD, 405, "method-not-allowed", "Method not allowed")                     \
    X(CONFLICT, 409, "conflict", "Conflict")                                           \
    X(TOO_LARGE, 413, "body-too-large", "Request body too large")                      \
    X(OVER_LIMIT, 422, "over-limit", "Request over a per-request limit")              \
    X(BUSY, 503, "unavailable", "Service unavailable")                                 \
    X(TIMEOUT, 503, "timeout", "Request stopped at the server's time limit")           \
    X(INTERNAL, 500, "internal", "Internal error")

typedef enum cqp_problem_kind {
#define CQP_PROBLEM_ENUM_(name, status, slug, title) CQP_P_##name,
    CQP_PROBLEM_TABLE(CQP_PROBLEM_ENUM_)
#undef CQP_PROBLEM_ENUM_
    CQP_P_COUNT
} cqp_problem_kind;

/// One problem: kind, human detail and the JSON pointer of the field at
/// fault ("" for the whole body). Caller-owned, fixed size, no allocation.
typedef struct cqp_problem {
    cqp_problem_kind kind;
    char detail[256];
    char pointer[256];
} cqp_problem;

/// The HTTP status of a kind.
CQP_API int cqp_problem_status(cqp_problem_kind kind);
/// The slug of a kind ("invalid-value"); static string.
CQP_API const char *cqp_problem_slug(cqp_problem_kind kind);
/// The title of a kind; static string.
CQP_API const char *cqp_problem_title(cqp_problem_kind kind);

/// Fills p with kind, pointer (NULL for "") and printf-formatted detail;
/// returns -1 so decoders can `return cqp_fail(...)`.
CQP_API int cqp_fail(cqp_problem *p, cqp_problem_kind kind, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/// Writes the problem+json object {"type","title","status","detail"[,"pointer"]}.
CQP_API void cqp_write_problem(cqp_writer *w, const cqp_problem *p);

#endif
