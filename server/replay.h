/// @file server/replay.h
/// `collisiond replay FILE --against URL`: re-sends every request of a
/// --record file, in file order, to a running daemon over one keep-alive
/// HTTP/1.1 connection and reports each response whose status or body
/// differs from the recording. What legitimately varies between runs is
/// left out unless --strict: the bodies of GET /metrics and GET
/// /metrics/fallbacks (counters, times, sequence numbers), and the number
/// of every "duration_us" member (timings). A HEAD response's body is
/// never compared: HTTP carries none.
#ifndef CQD_REPLAY_H
#define CQD_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

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

/// True for the responses whose bodies are not compared unless --strict:
/// GET /metrics and GET /metrics/fallbacks.
bool cqd_replay_body_varies(const char *method, const char *path);

/// Removes the pretty=1 and pretty=true parameters from a query string in
/// place (the stream ignores them, HTTP would indent): how a request the
/// stream answered is re-sent over HTTP. Returns query.
char *cqd_replay_drop_pretty(char *query);

#endif
