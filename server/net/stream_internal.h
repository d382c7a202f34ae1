/// @file server/net/stream_internal.h
/// The pieces of the stream transport (API.md section 11) shared by its
/// files: the line and frame splitters, the envelope codec and the
/// progress timer's rules (pure, unit-tested without sockets), and the
/// listener and connection state.
#ifndef CQD_STREAM_INTERNAL_H
#define CQD_STREAM_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <uv.h>

#include "api/request.h"
#include "cqp/problem.h"
#include "cqp/value.h"
#include "cqp/write.h"
#include "state/server.h"
#include "transport.h"
#include "work.h"

/* ---- line splitter ---------------------------------------------------- */

/// Splits a byte stream into lines. Holds the bytes of the line not yet
/// ended (never more than max). With admit set, every line is charged to
/// its --max-buffered budget as it arrives, but for its first `uncharged`
/// bytes (so small requests, health checks among them, are never refused
/// for it): a line that would pass the budget is shed, its bytes dropped up
/// to its end, and a finished line's charge passes to whoever takes it.
/// Zero-initialise, then set max (and admit, uncharged).
typedef struct cqd_lines {
    cqp_buf partial;  ///< the unfinished line
    size_t max;       ///< the longest line accepted, in bytes before the '\n'
    cqd_admit *admit; ///< borrowed; NULL: nothing is charged
    size_t uncharged; ///< the first bytes of every line that are not charged
    size_t held;      ///< what the unfinished line is charged
    bool skipping;    ///< the unfinished line was shed: drop bytes to its end
    size_t skipped;   ///< its length so far, still held to max
} cqd_lines;

/// What a line of len bytes is charged: its bytes past the first `uncharged`.
size_t cqd_lines_charge(const cqd_lines *l, size_t len);

/// Outcome of cqd_lines_feed.
typedef enum cqd_lines_result {
    CQD_LINES_OK,       ///< every byte consumed
    CQD_LINES_TOO_LONG, ///< a line exceeds max: the lines before it were emitted, the rest is not consumed
    CQD_LINES_FAILED,   ///< out of memory, or emit returned nonzero
} cqd_lines_result;

/// Feeds n bytes. For every complete line (a trailing '\r' stripped, empty
/// lines skipped) calls emit(ctx, line, len); line is borrowed for the
/// call, and its charge, cqd_lines_charge(l, len), becomes emit's to give
/// back (cqd_admit_release), also when emit fails. A line is refused as
/// soon as its length passes max, before more than max bytes of it are
/// buffered, shed or not. A line that cannot be charged is shed: emit is
/// called with line NULL at once, in the line's place in the order, and
/// the rest of the line is dropped as it arrives.
cqd_lines_result cqd_lines_feed(cqd_lines *l, const char *data, size_t n,
                                int (*emit)(void *ctx, const char *line, size_t len), void *ctx);
/// Called by emit with the line it was handed: when that lies in the
/// splitter's buffer (the line came in more than one read), the buffer
/// becomes the caller's (cqd_free it) and is returned; else NULL (copy it).
char *cqd_lines_take(cqd_lines *l, const char *line);
/// At the end of the input: the unfinished line, if any, is the last line
/// (emitted as cqd_lines_feed would, unless it was shed); then frees it.
/// Returns emit's result.
int cqd_lines_finish(cqd_lines *l, int (*emit)(void *ctx, const char *line, size_t len), void *ctx);
/// Drops the unfinished line (shed or not) and gives back its charge.
void cqd_lines_free(cqd_lines *l);

/* ---- frame splitter (MessagePack connections) -------------------------- */

/// The first byte of every frame, and so of a MessagePack connection: with
/// the 4 length bytes after it, the prefix is MessagePack's uint32.
#define CQD_FRAME_MARK 0xCE
/// A frame's prefix: the mark, then the envelope's length N (big-endian).
#define CQD_FRAME_PREFIX 5

/// Splits a byte stream into frames, 0xce + N (4 bytes, big-endian) + N
/// envelope bytes. Holds the bytes of the frame not yet ended (never more
/// than max). Charged to --max-buffered as cqd_lines is, a frame counting
/// its prefix too: a frame that would pass the budget is shed, its bytes
/// dropped by count. Zero-initialise, then set max (and admit, uncharged).
typedef struct cqd_frames {
    cqp_buf partial;  ///< the unfinished frame's envelope bytes
    size_t max;       ///< the longest envelope accepted (N), in bytes
    cqd_admit *admit; ///< borrowed; NULL: nothing is charged
    size_t uncharged; ///< the first bytes of every frame (prefix included) that are not charged
    size_t held;      ///< what the unfinished frame is charged
    unsigned char prefix[CQD_FRAME_PREFIX]; ///< the unfinished frame's prefix bytes so far
    size_t prefix_len; ///< how many; 0 between frames
    size_t length;    ///< its N, once the prefix is whole
    size_t got;       ///< its envelope bytes so far, buffered or dropped
    bool skipping;    ///< it was shed: drop its bytes to its end
} cqd_frames;

/// What a frame of len envelope bytes is charged: its 5 + len bytes past
/// the first `uncharged`.
size_t cqd_frames_charge(const cqd_frames *f, size_t len);

/// Outcome of cqd_frames_feed and cqd_frames_end.
typedef enum cqd_frames_result {
    CQD_FRAMES_OK,        ///< every byte consumed (cqd_frames_end: no frame begun, or it was shed)
    CQD_FRAMES_TOO_LONG,  ///< a frame's N exceeds max: the frames before it were emitted, the rest is not consumed
    CQD_FRAMES_LOST,      ///< a frame starts with another byte than 0xce, or has N = 0: likewise
    CQD_FRAMES_FAILED,    ///< out of memory, or emit returned nonzero
    CQD_FRAMES_TRUNCATED, ///< cqd_frames_end: the input ended inside a frame
} cqd_frames_result;

/// Feeds n bytes. For every complete frame calls emit(ctx, envelope, N);
/// envelope is borrowed for the call, and its charge,
/// cqd_frames_charge(f, N), becomes emit's to give back, also when emit
/// fails. A frame is refused (TOO_LONG, LOST) at its prefix, before any of
/// its envelope is buffered or charged. A frame that cannot be charged is
/// shed: emit is called with envelope NULL at once, in the frame's place
/// in the order, and the rest of the frame is dropped as it arrives.
cqd_frames_result cqd_frames_feed(cqd_frames *f, const char *data, size_t n,
                                  int (*emit)(void *ctx, const char *env, size_t len), void *ctx);
/// Where the next bytes of the frame being read may be read into place
/// (*n of them at most, none past the frame's end): the splitter's own
/// buffer, sized for the whole envelope when the frame is not huge, so
/// a large frame is copied once, by the kernel. Bytes read there are then
/// fed with cqd_frames_feed as any others, from that address. NULL
/// between frames, while a frame is shed, or when memory ran out.
char *cqd_frames_space(cqd_frames *f, size_t *n);
/// Called by emit with the envelope it was handed: when that lies in the
/// splitter's buffer (the frame came in more than one read), the buffer
/// becomes the caller's (cqd_free it) and is returned; else NULL (the
/// envelope lies in the caller's read: copy it to keep it).
char *cqd_frames_take(cqd_frames *f, const char *env);
/// True while part of a frame (a prefix byte at least) is read.
bool cqd_frames_partial(const cqd_frames *f);
/// At the end of the input: TRUNCATED when a frame was begun and neither
/// finished nor shed, else OK. (A truncated frame is never decoded.)
cqd_frames_result cqd_frames_end(const cqd_frames *f);
/// The refusal answering a TOO_LONG or LOST feed, or a TRUNCATED end: a
/// 413 naming N and max, or a 400 malformed-msgpack saying what was read.
void cqd_frames_problem(const cqd_frames *f, cqd_frames_result r, cqp_problem *p);
/// Drops the unfinished frame (shed or not) and gives back its charge.
void cqd_frames_free(cqd_frames *f);

/* ---- envelope --------------------------------------------------------- */

/// One request line or frame, decoded. id and body borrow from the line
/// or frame; the other texts are owned copies. The line is parsed once: of its JSON tree only
/// the body's part outlives cqd_envelope_parse, and the pipeline decodes
/// that instead of parsing the body again.
typedef struct cqd_envelope {
    json_t *root;              ///< owned while parsing; NULL once the texts are copied
    json_t *body_tree;         ///< owned: a line's body tree, NULL when body is absent or null (and for a frame)
    cqp_value body_value;      ///< the body's view (of body_tree, or of a frame's bytes); absent with no body
    char *copy;                ///< owned: method, target, authorization, request_id (each NUL-terminated)
    const char *id;            ///< the "id" member's text or bytes, verbatim; NULL = null
    size_t id_len;
    const char *method;        ///< NULL when the line has none (a failed parse)
    const char *path;          ///< "path" up to its '?', or NULL
    const char *query;         ///< what follows the '?', or NULL
    const char *authorization; ///< the Authorization header, or NULL
    const char *request_id;    ///< the X-Request-Id header, or NULL
    const char *body;          ///< the "body" member's text or bytes, verbatim; NULL when absent or null
    size_t body_len;
} cqd_envelope;

/// Decodes the line {"id"?, "method", "path", "headers"?, "body"?} (len
/// bytes, no newline). Returns 0, or -1 with p filled (id is still set
/// when the line is an object with an "id", request_id when the headers
/// named one before the fault). A NUL byte in method, path or a kept
/// header (which only a MessagePack string can hold) is refused. Always cqd_envelope_free env, and while
/// the calling thread is inside the same JSON arena (json_arena.h) as
/// for the parse: the trees live there.
int cqd_envelope_parse(const char *line, size_t len, cqd_envelope *env, cqp_problem *p);
/// Decodes a frame's envelope, the len bytes after its prefix: one
/// MessagePack map with the members of a line, checked whole by
/// cqp_mp_check (to CQP_MP_MAX_DEPTH levels, the envelope's among them)
/// before anything is read, then refused as a line would be. A
/// failed check leaves id NULL: nothing of such a frame is trusted.
/// Returns 0, or -1 with p filled; always cqd_envelope_free env.
int cqd_envelope_parse_frame(const char *frame, size_t len, cqd_envelope *env, cqp_problem *p);
void cqd_envelope_free(cqd_envelope *env);

/// Appends the reply {"id", "status", "request_id", "headers"?, "body"} to
/// out in format f: a JSON line with its '\n', or a MessagePack frame
/// (prefix and map). A body in the reply's format is inserted as is (a
/// JSON body's '\r' or '\n' turned into spaces), another body as a
/// string of its bytes, an empty one as null. id (the request's own text
/// or bytes) is copied verbatim; NULL writes null.
void cqd_stream_reply(cqp_buf *out, cqp_format f, const char *id, size_t id_len, const cqd_response *resp);

/// Answers a request refused before the pipeline (bad envelope, overlong
/// line or frame, lost framing): counts and logs it as every request is
/// (cqd_refuse: route "unmatched", request_id sanitised or generated,
/// timed from arrived_ns, a cqd_mono_ns() stamp), then appends the reply
/// in format f with the problem p, its pointer included. id NULL writes
/// null.
void cqd_stream_refuse(cqd_server *srv, cqp_format f, const char *id, size_t id_len, const char *request_id,
                       uint64_t arrived_ns, const cqp_problem *p, cqp_buf *out);

/// Answers one request of format f (a JSON line, or a frame's envelope)
/// that arrived at arrived_ns (cqd_mono_ns(), when the splitter found its
/// end; 0: now): decodes it, runs cqd_handle with the body's format and
/// Accept both f, timed from arrived_ns (request.h), and appends the reply
/// (a line or a frame) to out. Runs on a worker thread.
void cqd_stream_answer(cqd_server *srv, cqp_format f, const char *request, size_t len, uint64_t arrived_ns,
                       cqp_buf *out);

/// cqd_stream_answer with an answer body of at most max_response bytes
/// (0: --max-response): a longer answer that --max-response would let
/// through is answered 503 with Retry-After instead (cqd_request's
/// max_response). For a connection that may add only a short reply to the
/// stream's total (--max-stream-reply-total).
void cqd_stream_answer_within(cqd_server *srv, cqp_format f, const char *request, size_t len, uint64_t arrived_ns,
                              size_t max_response, cqp_buf *out);

/* ---- progress timer --------------------------------------------------- */

/// An idle connection may wait this many times --timeout for its next line.
#define CQD_STREAM_IDLE_FACTOR 10

/// What a connection waits for, as its progress timer sees it.
typedef enum cqd_wait {
    CQD_WAIT_NONE,  ///< the server's turn (a request queued or running, input ended): no limit
    CQD_WAIT_WRITE, ///< the client to take replies already sent (--timeout)
    CQD_WAIT_LINE,  ///< the rest of a started line (--timeout)
    CQD_WAIT_IDLE,  ///< the next line (CQD_STREAM_IDLE_FACTOR x --timeout)
} cqd_wait;

/// A connection's state, as far as its progress timer cares. Times are in
/// milliseconds of any one monotonic clock.
typedef struct cqd_watch {
    bool unwritten;    ///< replies handed to the socket and not yet written out
    bool busy;         ///< requests read and not yet answered
    bool reading;      ///< reading input (not paused, not ended)
    bool partial;      ///< part of a line is buffered
    uint64_t active_at; ///< the last progress of any kind: bytes read, a request answered, reply bytes written
    uint64_t write_at;  ///< the last reply bytes written, or when replies began to wait
    uint64_t now;
} cqd_watch;

/// What w waits for. Unless CQD_WAIT_NONE: *due is when the connection is
/// closed if nothing moves before, and *look when its timer should look
/// next: *due, or sooner while replies wait (the bytes a write in progress
/// hands to the socket are seen only by looking, four times per --timeout,
/// so a stall is found within a quarter of --timeout after it).
cqd_wait cqd_watch_due(const cqd_watch *w, int timeout_s, uint64_t *due, uint64_t *look);

/// The pace of a request still arriving (--min-body-rate): the window it
/// is measured over. Times in milliseconds of the loop's clock.
typedef struct cqd_pace {
    uint64_t at;  ///< the window's start
    size_t base;  ///< the request's bytes then
    bool grace;   ///< the first window, from the request's first byte: --min-body-grace runs
} cqd_pace;

/// Whether a request of bytes so far (had before this read of n bytes,
/// 0 when it began in it) has fallen below rate bytes a second over a
/// window of at least grace_s seconds (1 s at least) since its grace.
/// A request within its first free bytes, or rate 0, is never slow.
bool cqd_pace_slow(cqd_pace *p, size_t had, size_t n, size_t bytes, uint64_t now, size_t free,
                   size_t rate, int grace_s);

/* ---- listener and connections ----------------------------------------- */

typedef struct cqd_conn cqd_conn;

struct cqd_stream {
    cqd_server *srv;
    uv_loop_t *loop;
    uv_tcp_t listener;
    bool listener_open;          ///< until the listener's close callback
    cqd_work *pool;              ///< runs the batches (work.h, shared with HTTP; borrowed): not libuv's pool of --threads
    uv_async_t answered;         ///< wakes the loop for the batches the pool has run
    bool answered_open;          ///< until its close callback
    int handles;                 ///< listener and answered until their close callbacks (then s may go)
    pthread_mutex_t lock;        ///< guards ran
    void *ran;                   ///< batches run, waiting for the loop (stream_conn.c's, a LIFO)
    bool draining;
    void (*done)(void *arg);     ///< set by cqd_stream_drain
    void *done_arg;
    int conns;                   ///< open connections (freed ones not counted)
    cqd_conn *first;             ///< every open connection (for the drain)
    char readbuf[64 * 1024];     ///< shared by every read: libuv consumes each read before the next alloc
};

/// Accepts a pending connection on s->listener and starts reading it.
void cqd_conn_accept(cqd_stream *s);
/// Stops reading c; what it already read is answered, then it closes.
void cqd_conn_drain(cqd_conn *c);
/// The next connection after c in s->first's list.
cqd_conn *cqd_conn_next(const cqd_conn *c);
/// Called when a connection was freed: calls done once draining ends.
void cqd_stream_conn_gone(cqd_stream *s);
/// s->answered's callback: hands each batch the pool has run back to its
/// connection, on the loop.
void cqd_conn_answered(uv_async_t *a);

#endif
