/// @file server/net/http_framing.h
/// The checks on a request's header section that libmicrohttpd 0.9.75 does
/// not make (RFC 9112 section 6.3, RFC 9110 section 5): a request whose
/// body length two parties could read differently is refused, never served.
#ifndef CQD_HTTP_FRAMING_H
#define CQD_HTTP_FRAMING_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

/// True when the header section of conn's request cannot be served as sent:
/// a header name that is not a token (a space before the colon), a value
/// holding a control character, Content-Length given more than once or
/// together with Transfer-Encoding, a Transfer-Encoding but one "chunked",
/// or Authorization given more than once. Writes why (printable ASCII) into
/// why[size]. The caller answers 400 at once, which also closes the
/// connection: what follows the headers can no longer be trusted to be a body.
bool cqd_http_head_fault(struct MHD_Connection *conn, char *why, size_t size);

#endif
