/// @file server/net/media.h
/// The media types of HTTP bodies: which wire format a request's
/// Content-Type names, and which one its Accept header negotiates for the
/// response (RFC 9110 sections 8.3 and 12.5.1). JSON is the default both
/// ways, so a client that says nothing (curl) sees nothing change, and no
/// Accept header is refused with a 406: the server always answers in one of
/// its two formats. Pure functions: no state, no allocation.
#ifndef CQD_MEDIA_H
#define CQD_MEDIA_H

#include "cqp/format.h"

/// The format of a request body by its Content-Type header (NULL when
/// absent): MessagePack for application/msgpack and its aliases
/// application/x-msgpack and application/vnd.msgpack (the media type
/// before any ';', case-insensitive, whitespace around it ignored), JSON
/// for anything else, curl's default application/x-www-form-urlencoded
/// included.
cqp_format cqd_media_body_format(const char *content_type);

/// The format an Accept header (NULL when absent) asks the response in.
/// JSON's types are application/json and application/problem+json;
/// MessagePack's are application/msgpack, its two aliases and
/// application/problem+msgpack. A format takes the weight (q, default 1)
/// of the most specific range naming one of its types: a type itself,
/// then "application/*", then "*/*" (of equally specific ones, the
/// highest). MessagePack when its weight is above JSON's (and so above
/// 0); JSON on a tie (as for "*/*" or "application/*" alone), when only
/// unknown types are listed, when nothing is acceptable, or when the
/// header is absent. A malformed list member (no type/subtype, a bad or
/// quoted q, a parameter without a value, an unterminated quoted string)
/// is ignored.
cqp_format cqd_media_accept(const char *accept);

#endif
