/// @file server/record/record.h
/// --record FILE: every request the pipeline answers (HTTP and stream,
/// queries too) is appended to FILE with its response, one JSON line each
/// (the format: record_line.h), for `collisiond replay` to re-send.
/// Lines are numbered in file order and written whole under one lock, so
/// they never interleave; a line is written before its response is sent,
/// so a request that depended on an earlier answer always comes after it.
/// Recording is best effort: when the file cannot be written the error is
/// logged once and recording stops, while requests keep being served.
#ifndef CQD_RECORD_H
#define CQD_RECORD_H

#include "api/request.h"
#include "ops/log.h"

struct cqd_server;

/// An open recording (owned by the server).
typedef struct cqd_recorder cqd_recorder;

/// Opens path for appending (created with mode 0600: recordings hold
/// request bodies). Returns the recorder (free with cqd_record_close), or
/// NULL after logging why to lg (the server then serves without recording).
cqd_recorder *cqd_record_open(const char *path, const cqd_logger *lg);

/// Closes the file and frees r (NULL is fine). No request may be running.
void cqd_record_close(cqd_recorder *r);

/// Appends req and its finished response to srv's recording; does nothing
/// when srv has none or it stopped. Safe from any number of threads.
void cqd_record_request(struct cqd_server *srv, const cqd_request *req, const cqd_response *resp);

#endif
