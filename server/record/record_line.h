/// @file server/record/record_line.h
/// One line of a --record file: written by the recorder (record.c), read
/// back by `collisiond replay` (replay.c). The line is a JSON object:
///
///     {"seq":N,"time":T,"transport":"http","method":"PUT","path":"/v1/worlds/a",
///      "query":null,"request_id":"r1","authorization":null,"body":{...},
///      "status":201,"duration_us":412,"response":{...}}
///
/// "body" and "response" hold the exact bytes: embedded raw when they are a
/// JSON object or array on one line (no CR/LF, no surrounding blanks),
/// else a JSON string of the bytes, null when empty. Text that is not valid
/// UTF-8 is written as a base64 string and its member is named in a final
/// "base64" array, so every field reads back byte for byte.
/// "authorization" is null without the header and "redacted" with it: the
/// token itself is never written. "duration_us" is the access line's
/// duration (request.h); replay does not read it.
///
/// MessagePack adds "accept", "body_format" and "response_format", each
/// written only when its value is "msgpack" (so a JSON session's lines,
/// and every older line, read as JSON); a MessagePack body or response is
/// always base64 and listed in "base64". docs/API.md (section 14) and
/// docs/DEPLOY.md say what each member means.
#ifndef CQD_RECORD_LINE_H
#define CQD_RECORD_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/request.h"
#include "cqp/write.h"

/// Appends the members of a record after "seq" and "time": from
/// ,"transport" to the closing brace and the newline. Pure: the recorder
/// writes the head ({"seq":N,"time":T) in front of it under its lock.
void cqd_record_format_tail(cqp_buf *out, const cqd_request *req, const cqd_response *resp);

/// Room for any head cqd_record_format_head writes.
#define CQD_RECORD_HEAD_MAX 64

/// Writes {"seq":N,"time":T (T: Unix time with microseconds) into out;
/// returns its length.
size_t cqd_record_format_head(char out[CQD_RECORD_HEAD_MAX], uint64_t seq, double time);

/// A record read back. Every buffer is owned (cqd_record_entry_free);
/// absent means the member was null or missing.
typedef struct cqd_record_entry {
    long long seq;
    int status;
    bool has_query;
    bool authorization;  ///< the request had an Authorization header
    cqp_buf transport, method, path, query, request_id;
    cqp_buf body, response; ///< the exact bytes (empty when null)
    cqp_format body_format;     ///< of body ("body_format"; JSON when absent)
    cqp_format accept;          ///< the response format asked for ("accept"; JSON when absent)
    cqp_format response_format; ///< of response ("response_format"; JSON when absent)
} cqd_record_entry;

/// Parses one line (without its newline) into *e (zeroed first). Returns 0,
/// or -1 with the reason in err (the entry is then freed). Besides lines
/// that are no record, refuses what the recorder never writes: a member
/// name twice, a NUL in "transport", "method", "path", "query" or
/// "request_id" (each was a C string), and a request id outside the
/// server's rule (cqd_request_id_valid; empty or null: none).
int cqd_record_parse(const char *line, size_t len, cqd_record_entry *e, char *err, size_t err_size);

/// Whether id[0..n) keeps the server's request id rule: at most
/// CQD_REQUEST_ID_MAX characters of [A-Za-z0-9._:-] (cq_world_id_char,
/// the characters request.c keeps of a client's X-Request-Id) (so every id it answers with, and every one
/// recorded). When not, why (e.g. "has the byte 0x0D at offset 1") goes
/// into why.
bool cqd_request_id_valid(const char *id, size_t n, char *why, size_t why_size);

void cqd_record_entry_free(cqd_record_entry *e);

/// True when s[0..n) is valid UTF-8 (no overlong forms, surrogates or code
/// points past U+10FFFF; NUL allowed).
bool cqd_utf8_valid(const char *s, size_t n);

/// Appends s[0..n) (valid UTF-8) as a JSON string: quote, backslash and
/// control characters escaped, everything else verbatim.
void cqd_json_put_string(cqp_buf *out, const char *s, size_t n);

/// Appends the base64 (RFC 4648, padded) of n bytes.
void cqd_base64_encode(cqp_buf *out, const void *bytes, size_t n);
/// Appends the bytes of base64 text; returns 0, or -1 when it is not
/// padded base64 of the standard alphabet.
int cqd_base64_decode(cqp_buf *out, const char *s, size_t n);

#endif
