/* The wire formats' media types (cqp/format.h). */
#include "cqp/format.h"

static const char *const media_types[] = {
    [CQP_JSON] = "application/json",
    [CQP_MSGPACK] = "application/msgpack",
};

static const char *const problem_types[] = {
    [CQP_JSON] = "application/problem+json",
    [CQP_MSGPACK] = "application/problem+msgpack",
};

// An out-of-range format is a caller bug; JSON is the default format.
static cqp_format known(cqp_format f) { return f == CQP_MSGPACK ? CQP_MSGPACK : CQP_JSON; }

const char *cqp_format_media_type(cqp_format f) { return media_types[known(f)]; }

const char *cqp_format_problem_type(cqp_format f) { return problem_types[known(f)]; }
