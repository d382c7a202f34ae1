/// @file server/replay/replay.h
/// `collisiond replay FILE --against URL`: re-sends every request of a
/// --record file, in file order, to a running daemon over one keep-alive
/// HTTP/1.1 connection and reports each response whose status or body
/// differs from the recording. What legitimately varies between runs is
/// left out unless --strict: the bodies of GET /metrics and GET
/// /metrics/fallbacks (counters, times, sequence numbers), and the number
/// of every "duration_us" member (timings). A HEAD response's body is
/// never compared: HTTP carries none. A request recorded with a
/// MessagePack body is sent with Content-Type: application/msgpack, one
/// that asked for MessagePack with Accept: application/msgpack, and a
/// MessagePack response is compared as values, not bytes.
#ifndef CQD_REPLAY_H
#define CQD_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "cqp/write.h"

/// The subcommand; argv[0] is "replay". Prints the differences and a
/// summary on stdout, errors on stderr. Returns the exit status: 0 when no
/// response differs, 1 when one does, 2 on a usage, file or connection error.
int cqd_replay_main(int argc, char **argv);

/// Compares a recorded body with a replayed one byte for byte; with mask,
/// the number after each "duration_us" key (same bytes up to the number
/// on both sides) is not compared. Returns true when they match; else
/// *exp_off and *got_off are where they first differ.
bool cqd_replay_same(const char *exp, size_t exp_len, const char *got, size_t got_len, bool mask, size_t *exp_off,
                     size_t *got_off);

/// Longest JSON Pointer cqd_replay_same_values reports (longer ones are cut).
#define CQD_REPLAY_POINTER_MAX 256

/// Where two MessagePack bodies first differ: the differing values' first
/// bytes in each, and their place as a JSON Pointer ("" for the root).
typedef struct cqd_replay_where {
    size_t exp_off, got_off;
    char pointer[CQD_REPLAY_POINTER_MAX];
} cqd_replay_where;

/// The outcome of cqd_replay_same_values.
typedef enum cqd_replay_values {
    CQD_REPLAY_SAME_VALUES,
    CQD_REPLAY_DIFFERENT_VALUES, ///< *where filled
    CQD_REPLAY_NOT_MSGPACK,      ///< a body is not one value cqp_mp_check admits: compare the bytes
} cqd_replay_values;

/// Compares a recorded MessagePack body with a replayed one as values, so
/// that encodings of the same values (a fixint or a uint8, a float32 or a
/// float64 of one number) do not differ: numbers by value across types,
/// strings by bytes, arrays and maps element by element in order. With
/// mask, a number under a "duration_us" key is not compared.
cqd_replay_values cqd_replay_same_values(const char *exp, size_t exp_len, const char *got, size_t got_len, bool mask,
                                         cqd_replay_where *where);

/// Appends the MessagePack value at value (inside bytes that
/// cqd_replay_same_values took as well-formed) as compact JSON text, cut to
/// max bytes and "..." when longer: how a difference is shown to a human.
void cqd_replay_value_text(cqp_buf *out, const char *value, size_t max);

/// True for the responses whose bodies are not compared unless --strict:
/// GET /metrics and GET /metrics/fallbacks.
bool cqd_replay_body_varies(const char *method, const char *path);

/// Removes the pretty=1 and pretty=true parameters from a query string in
/// place (the stream ignores them, HTTP would indent): how a request the
/// stream answered is re-sent over HTTP. Returns query.
char *cqd_replay_drop_pretty(char *query);

#endif
