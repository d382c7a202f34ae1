/// @file cqp/format.h
/// The two wire formats of a body (API.md section 1): every request and
/// response body is JSON or MessagePack, with the same schema.
#ifndef CQP_FORMAT_H
#define CQP_FORMAT_H

#include "cqp/api.h"

/// A body's encoding on the wire.
typedef enum cqp_format {
    CQP_JSON = 0,    ///< application/json (the default)
    CQP_MSGPACK = 1, ///< application/msgpack
} cqp_format;

/// The media type of a format's bodies ("application/json"); static string.
CQP_API const char *cqp_format_media_type(cqp_format f);
/// The media type of a format's problem bodies ("application/problem+json",
/// "application/problem+msgpack"); static string.
CQP_API const char *cqp_format_problem_type(cqp_format f);

#endif
