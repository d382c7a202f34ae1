/// @file server/net/refuse.h
/// Requests a transport refuses before they are complete (a body over
/// --max-body): answered with a problem, counted and logged like any other.
#ifndef CQD_REFUSE_H
#define CQD_REFUSE_H

#include "api/request.h"
#include "cqp/problem.h"

/// Fills *resp (initialised with cqd_response_init) with the problem kind
/// and detail for req, whose body is ignored; the request id is sanitised
/// or generated as cqd_handle does, and the request is counted on its route
/// (when the path matches one) and logged.
void cqd_refuse(struct cqd_server *srv, const cqd_request *req, cqp_problem_kind kind, const char *detail,
                cqd_response *resp);

#endif
