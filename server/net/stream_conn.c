/// @file server/net/stream_conn.c
/// One stream connection: reads requests (JSON lines or MessagePack
/// frames, as its first byte chose) into a FIFO, answers them in order
/// on the handler pool (work.h, shared with HTTP), one batch at a time (so a mutation is applied
/// before the query behind it), writes each batch's replies with one
/// write, and applies back-pressure both ways. A pipelining client's lines
/// share one hand-off to a worker and back and one write, instead of
/// paying for both per line.
///
/// Life cycle: reading -> input done (client EOF, overlong line or frame,
/// lost framing, drain) -> every request read answered -> closed (after a
/// half-close and a short linger when the client may still be sending).
/// The connection is freed once its handles are closed and no work or
/// write of it is in flight. A progress timer (the rules are in
/// stream_watch.c) closes a connection that is idle too long, stalls in
/// the middle of a line or frame, or leaves its replies unread, so no
/// client holds a slot or its buffers for ever.
///
/// Reply bytes are held to two bounds: --max-stream-reply-buffered for one
/// connection (c->unacked: handed to libuv, not yet written) and
/// --max-stream-reply-total for all of them (srv->stream_reply_bytes: made,
/// not yet freed). No batch starts past either, and a running batch starts
/// no further line past either, so each bound is passed by at most the one
/// reply of each batch that was running. A reply made is always sent.
/// Past the total, a connection holding unwritten replies waits for them
/// to be written (their completion pumps it again); one holding none has
/// nothing to wait for, and runs its requests one at a time with answers
/// of at most SHORT_ANSWER (a longer one is answered 503; a change, never
/// answered "retry", is answered whole, request.h): a client that
/// reads is served, small answers, while others leave theirs unread, and
/// each connection adds at most one such reply to the total.
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"
#include "state/alloc.h"

/// Stop reading above these; resume below half of each.
#define QUEUE_HIGH 64                 // lines read but not answered
#define QUEUE_BYTES_HIGH (4u << 20)   // their bytes
/// The longest answer body a connection with no reply unwritten is sent
/// while the stream's replies fill --max-stream-reply-total.
#define SHORT_ANSWER (64u << 10)
/// The first bytes of every line are not charged to --max-buffered, so a
/// small request (a health check) is never refused for it; at most
/// QUEUE_HIGH + 1 such lines a connection.
#define LINE_UNCHARGED 4096
/// How long a closing connection keeps discarding input, waiting for the client's EOF.
#define LINGER_MS 2000
/// A batch takes at most this many queued lines, and a worker starts no
/// further line of its batch once it has run this long. A line already
/// started runs to its end, and the batch's replies leave together, so a
/// reply may wait for the slow request pipelined right behind it.
#define BATCH_MAX 32
#define BATCH_NS 1000000

/// One request (a line or a frame's envelope) and then its reply. A batch
/// is a chain of jobs (next) taken off the queue together; its first job's
/// work and write requests serve the whole chain.
typedef struct job {
    cqd_job work; ///< a batch's first job: its hold on the pool
    struct job *ran; ///< a batch's first job: the next batch in s->ran
    uv_write_t write;
    struct job *next;
    cqd_conn *conn;
    char *line; ///< owned; NULL once answered, or for a reply made on the loop
    size_t len; ///< the request's length, kept for the queue's byte count
    size_t charge; ///< what the request holds of --max-buffered while it is held
    size_t held; ///< the reply's bytes counted in srv->stream_reply_bytes
    size_t budget; ///< a batch's first job: reply bytes after which it starts no further line
    bool short_answer; ///< a batch's first job: its one request is answered within SHORT_ANSWER (--max-stream-reply-total)
    uint64_t arrived_ns; ///< cqd_mono_ns() when the request's end was found (its clock's start, request.h)
    cqp_buf out;
} job;

struct cqd_conn {
    uv_tcp_t tcp;
    uv_timer_t timer; ///< the linger, or the drain's deadline
    uv_timer_t watchdog; ///< the progress timer
    uv_shutdown_t shutdown;
    cqd_stream *s;
    cqd_conn *prev, *next;
    cqd_lines lines;     ///< a JSON connection's splitter
    cqd_frames frames;   ///< a MessagePack connection's
    cqp_format format;   ///< set by the first byte read (CQD_FRAME_MARK: MessagePack)
    bool sniffed;        ///< that byte was read
    job *head, *tail;    ///< read, waiting for their turn
    job *running;        ///< the batch on a worker thread
    int queued;          ///< jobs read but not yet answered (the running one included)
    size_t queued_bytes;
    size_t unacked;      ///< reply bytes in writes not yet completed
    uint64_t submitted;  ///< reply bytes ever handed to libuv
    uint64_t written_seen; ///< reply bytes the socket had taken at write_at
    uint64_t active_at;  ///< loop time (ms) of the last progress of any kind
    uint64_t write_at;   ///< loop time (ms) of the last write progress
    uint64_t watch_due;  ///< when the watchdog fires, 0 when it is not armed
    cqd_pace pace;       ///< the unfinished request's pace (--min-body-rate)
    int writes;          ///< writes in flight
    int handles;         ///< tcp and both timers until their close callbacks
    bool reading;
    bool input_done;     ///< no more lines will be read
    bool eof;            ///< the client half-closed
    bool lingering;      ///< half-closed by us, discarding input until EOF
    bool shutting;       ///< the shutdown request is in flight
    bool closing;
};

static void pump(cqd_conn *c);

cqd_conn *cqd_conn_next(const cqd_conn *c) { return c->next; }

// Frees a job's line, giving back the --max-buffered bytes it holds (a
// line keeps its charge from its first byte until its request has run).
static void drop_line(job *j)
{
    if (j->line)
        cqd_admit_release(&j->conn->s->srv->admit, j->charge);
    cqd_free(j->line);
    j->line = NULL;
}

// Counts j's reply, just made, in the stream's total. Any thread.
static void hold_reply(cqd_server *srv, job *j)
{
    j->held = j->out.len;
    atomic_fetch_add_explicit(&srv->stream_reply_bytes, j->held, memory_order_relaxed);
}

// True while the reply bytes of all stream connections are at
// --max-stream-reply-total. Any thread.
static bool total_full(cqd_server *srv)
{
    return atomic_load_explicit(&srv->stream_reply_bytes, memory_order_relaxed) >= srv->cfg.max_stream_reply_total;
}

static void free_job(job *j)
{
    drop_line(j);
    if (j->held)
        atomic_fetch_sub_explicit(&j->conn->s->srv->stream_reply_bytes, j->held, memory_order_relaxed);
    cqp_buf_free(&j->out);
    cqd_free(j);
}

// Frees a chain of jobs.
static void free_jobs(job *j)
{
    while (j) {
        job *next = j->next;
        free_job(j);
        j = next;
    }
}

// Frees c once nothing refers to it any more; the last call of every callback.
static void maybe_free(cqd_conn *c)
{
    if (!c->closing || c->handles > 0 || c->running || c->writes > 0 || c->shutting)
        return;
    cqd_stream *s = c->s;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free_jobs(c->head);
    cqd_lines_free(&c->lines);
    cqd_frames_free(&c->frames);
    cqd_free(c);
    s->conns--;
    atomic_fetch_sub_explicit(&s->srv->stream_connections, 1, memory_order_relaxed);
    cqd_log(&s->srv->log, CQD_LOG_DEBUG, "stream: connection closed (%d open)", s->conns);
    cqd_stream_conn_gone(s);
}

static void on_close(uv_handle_t *h)
{
    cqd_conn *c = h->data;
    c->handles--;
    maybe_free(c);
}

static void close_now(cqd_conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    c->reading = false;
    uv_close((uv_handle_t *)&c->tcp, on_close);
    uv_close((uv_handle_t *)&c->timer, on_close);
    uv_close((uv_handle_t *)&c->watchdog, on_close);
}

static void on_timer(uv_timer_t *t) { close_now(t->data); }

/* ---- progress timer ---------------------------------------------------- */

static uint64_t now_ms(const cqd_conn *c) { return uv_now(c->s->loop); }

// Reply bytes the socket has taken so far (a large reply completes its
// write only at its end, but every byte taken is progress).
static uint64_t written(const cqd_conn *c)
{
    return c->submitted - uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

static cqd_wait waiting_for(const cqd_conn *c, uint64_t *due, uint64_t *look)
{
    cqd_watch w = {
        .unwritten = c->unacked > 0,
        .busy = c->running || c->head,
        .reading = c->reading,
        .partial = c->lines.partial.len > 0 || c->lines.skipping || cqd_frames_partial(&c->frames),
        .active_at = c->active_at,
        .write_at = c->write_at,
        .now = now_ms(c),
    };
    return cqd_watch_due(&w, c->s->srv->cfg.timeout_s, due, look);
}

static void on_watchdog(uv_timer_t *t);

// Arms the watchdog for what c waits for now, unless it fires before that
// anyway: a deadline that progress (a read, a write) moved later is left
// for the timer to find when it fires, so progress costs no timer restart.
static void watch(cqd_conn *c)
{
    uint64_t due, look;
    if (c->closing || waiting_for(c, &due, &look) == CQD_WAIT_NONE)
        return;
    if (c->watch_due != 0 && c->watch_due <= look)
        return;
    uint64_t now = now_ms(c);
    c->watch_due = look;
    uv_timer_start(&c->watchdog, on_watchdog, look > now ? look - now : 0, 0);
}

static void on_watchdog(uv_timer_t *t)
{
    cqd_conn *c = t->data;
    c->watch_due = 0;
    uint64_t now = now_ms(c);
    uint64_t w = written(c);
    if (w != c->written_seen) {
        c->written_seen = w;
        c->write_at = c->active_at = now;
    }
    uint64_t due, look;
    cqd_wait what = waiting_for(c, &due, &look);
    if (what == CQD_WAIT_NONE || due > now) {
        watch(c);
        return;
    }
    int secs = c->s->srv->cfg.timeout_s;
    switch (what) {
    case CQD_WAIT_WRITE:
        cqd_log(&c->s->srv->log, CQD_LOG_INFO,
                "stream: the client took no reply bytes for %d s (--timeout); closing the connection", secs);
        break;
    case CQD_WAIT_LINE:
        cqd_log(&c->s->srv->log, CQD_LOG_INFO,
                "stream: a request line made no progress for %d s (--timeout); closing the connection", secs);
        break;
    case CQD_WAIT_IDLE:
    case CQD_WAIT_NONE: /* returned above */
        cqd_log(&c->s->srv->log, CQD_LOG_INFO, "stream: connection idle for %d s; closing it",
                secs * CQD_STREAM_IDLE_FACTOR);
        break;
    }
    close_now(c);
}

/* ---- reading ----------------------------------------------------------- */

// The rest of a large frame is read straight into its buffer (one copy,
// the kernel's, and as many bytes a read as have come); anything else
// into the shared buffer, then split.
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    cqd_conn *c = h->data;
    size_t n = 0;
    char *space = c->format == CQP_MSGPACK ? cqd_frames_space(&c->frames, &n) : NULL;
    if (space) {
        *buf = uv_buf_init(space, n < UINT_MAX ? (unsigned)n : UINT_MAX);
        return;
    }
    *buf = uv_buf_init(c->s->readbuf, sizeof c->s->readbuf);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

static void start_reading(cqd_conn *c)
{
    if (c->reading || c->closing)
        return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        close_now(c);
        return;
    }
    c->reading = true;
}

static void stop_reading(cqd_conn *c)
{
    if (!c->reading)
        return;
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
}

static void enqueue(cqd_conn *c, job *j)
{
    j->conn = c;
    if (c->tail)
        c->tail->next = j;
    else
        c->head = j;
    c->tail = j;
    c->queued++;
    c->queued_bytes += j->len;
}

// Queues the answer p to a request the transport refuses, in its place
// (id null). Made (counted and logged) here on the loop thread: it is
// cheap, and there is no request to hand a worker. -1 when out of memory.
static int queue_refusal(cqd_conn *c, const cqp_problem *p)
{
    job *j = cqd_calloc(1, sizeof *j);
    if (!j)
        return -1;
    cqd_stream_refuse(c->s->srv, c->format, NULL, 0, NULL, cqd_mono_ns(), p, &j->out);
    enqueue(c, j);
    hold_reply(c->s->srv, j);
    return 0;
}

// A request shed for --max-buffered: 503 as over HTTP, the connection stays open.
static int queue_shed(cqd_conn *c)
{
    cqp_problem p;
    cqp_fail(&p, CQP_P_BUSY, NULL, "request bytes held past --max-buffered; retry shortly");
    return queue_refusal(c, &p);
}

// Queues the request line or envelope, which holds `charge` of
// --max-buffered (ours now, also when this fails): `taken`, the
// splitter's buffer that holds it, or else a copy. The splitter has just
// found its end: the request has arrived, and its clock starts now, as
// HTTP's starts at its last byte, before any of it is decoded (and while
// it may still wait behind the requests before it on this connection).
static int queue_request(cqd_conn *c, const char *line, size_t len, char *taken, size_t charge)
{
    uint64_t arrived = cqd_mono_ns();
    job *j = cqd_calloc(1, sizeof *j);
    char *copy = taken ? taken : j ? cqd_malloc(len) : NULL;
    if (!j || !copy) {
        cqd_admit_release(&c->s->srv->admit, charge);
        cqd_free(copy);
        cqd_free(j);
        return -1;
    }
    if (copy != taken)
        memcpy(copy, line, len);
    j->line = copy;
    j->len = len;
    j->charge = charge;
    j->arrived_ns = arrived;
    enqueue(c, j);
    return 0;
}

static int on_line(void *ctx, const char *line, size_t len)
{
    cqd_conn *c = ctx;
    if (!line)
        return queue_shed(c);
    return queue_request(c, line, len, cqd_lines_take(&c->lines, line), cqd_lines_charge(&c->lines, len));
}

static int on_frame(void *ctx, const char *env, size_t len)
{
    cqd_conn *c = ctx;
    if (!env)
        return queue_shed(c);
    return queue_request(c, env, len, cqd_frames_take(&c->frames, env), cqd_frames_charge(&c->frames, len));
}

// The end of a MessagePack connection's input (client EOF): a frame cut
// short is never run, but answered, as the client may still read.
static int finish_frames(cqd_conn *c)
{
    if (cqd_frames_end(&c->frames) != CQD_FRAMES_TRUNCATED)
        return 0;
    cqp_problem p;
    cqd_frames_problem(&c->frames, CQD_FRAMES_TRUNCATED, &p);
    cqd_log(&c->s->srv->log, CQD_LOG_INFO, "stream: %s", p.detail);
    return queue_refusal(c, &p);
}

// No more requests: the unfinished one is dropped (drain, overlong line
// or frame, lost framing) or is the last line (client EOF; a frame is
// refused).
static void end_input(cqd_conn *c, bool keep_partial)
{
    c->input_done = true;
    stop_reading(c);
    int rc = 0;
    if (keep_partial)
        rc = c->format == CQP_MSGPACK ? finish_frames(c) : cqd_lines_finish(&c->lines, on_line, c);
    if (rc != 0)
        close_now(c);
    cqd_lines_free(&c->lines);
    cqd_frames_free(&c->frames);
}

// The answer to an overlong line, queued behind the lines before it; the
// connection closes after it.
static void refuse_line(cqd_conn *c)
{
    cqp_problem p;
    cqp_fail(&p, CQP_P_TOO_LARGE, NULL, "request line longer than %zu bytes (--max-body)", c->lines.max);
    cqd_log(&c->s->srv->log, CQD_LOG_INFO, "stream: %s; closing the connection", p.detail);
    if (queue_refusal(c, &p) != 0)
        close_now(c);
}

// Feeds a JSON connection's bytes to its line splitter; false once the
// connection is closed.
static bool read_lines(cqd_conn *c, const char *data, size_t n)
{
    switch (cqd_lines_feed(&c->lines, data, n, on_line, c)) {
    case CQD_LINES_OK:
        break;
    case CQD_LINES_TOO_LONG: {
        bool shed = c->lines.skipping; /* answered 503 already: no second answer */
        end_input(c, false);
        if (shed)
            cqd_log(&c->s->srv->log, CQD_LOG_INFO,
                    "stream: a shed request line passed --max-body; closing the connection");
        else
            refuse_line(c);
        break;
    }
    case CQD_LINES_FAILED:
        cqd_log(&c->s->srv->log, CQD_LOG_ERROR, "stream: out of memory reading a request; closing the connection");
        close_now(c);
        return false;
    }
    return true;
}

// Feeds a MessagePack connection's bytes to its frame splitter. A frame
// over --max-body, or lost framing, is answered behind the frames before
// it, and the connection closes after it, as after an overlong line.
// False once the connection is closed.
static bool read_frames(cqd_conn *c, const char *data, size_t n)
{
    cqd_frames_result r = cqd_frames_feed(&c->frames, data, n, on_frame, c);
    if (r == CQD_FRAMES_OK)
        return true;
    if (r == CQD_FRAMES_FAILED) {
        cqd_log(&c->s->srv->log, CQD_LOG_ERROR, "stream: out of memory reading a request; closing the connection");
        close_now(c);
        return false;
    }
    cqp_problem p;
    cqd_frames_problem(&c->frames, r, &p);
    cqd_log(&c->s->srv->log, CQD_LOG_INFO, "stream: %s; closing the connection", p.detail);
    end_input(c, false);
    if (queue_refusal(c, &p) != 0)
        close_now(c);
    return true;
}

/* ---- the pace of a request still arriving ------------------------------ */

// Bytes of the line or frame still arriving (0 between requests).
static size_t arriving(const cqd_conn *c)
{
    if (c->format == CQP_MSGPACK)
        return c->frames.prefix_len + c->frames.got;
    return c->lines.skipping ? c->lines.skipped : c->lines.partial.len;
}

// Whether the unfinished request fell below --min-body-rate
// (cqd_pace_slow). had: its bytes before this read of n.
static bool too_slow(cqd_conn *c, size_t had, size_t n, uint64_t now)
{
    const cqd_config *cfg = &c->s->srv->cfg;
    return cqd_pace_slow(&c->pace, had, n, arriving(c), now, LINE_UNCHARGED, cfg->min_body_rate,
                         cfg->min_body_grace_s);
}

// Drops the unfinished request and reads no more: the replies before it
// are still written, then the connection closes, as after an overlong line.
static void refuse_slow(cqd_conn *c)
{
    cqd_log(&c->s->srv->log, CQD_LOG_INFO,
            "stream: a request of %zu bytes so far arrives below --min-body-rate; closing the connection",
            arriving(c));
    end_input(c, false);
}

// The first byte read chooses the connection's encoding for good.
static void sniff(cqd_conn *c, unsigned char first)
{
    c->sniffed = true;
    c->format = first == CQD_FRAME_MARK ? CQP_MSGPACK : CQP_JSON;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    cqd_conn *c = st->data;
    if (nread == 0)
        return;
    if (nread < 0) {
        if (nread == UV_EOF && !c->lingering) {
            c->eof = true;
            end_input(c, true);
            pump(c);
        } else {
            close_now(c); // a reset, or the EOF a lingering close waits for
        }
        return;
    }
    if (c->input_done)
        return; // lingering: the input is discarded
    c->active_at = now_ms(c);
    if (!c->sniffed)
        sniff(c, (unsigned char)buf->base[0]);
    size_t had = arriving(c);
    bool open = c->format == CQP_MSGPACK ? read_frames(c, buf->base, (size_t)nread)
                                         : read_lines(c, buf->base, (size_t)nread);
    if (open && !c->input_done && too_slow(c, had, (size_t)nread, c->active_at))
        refuse_slow(c);
    if (open)
        pump(c);
}

/* ---- answering --------------------------------------------------------- */

static void on_written(uv_write_t *req, int status)
{
    job *first = req->data;
    cqd_conn *c = first->conn;
    c->writes--;
    for (job *j = first; j; j = j->next)
        c->unacked -= j->out.len;
    c->write_at = c->active_at = now_ms(c);
    c->written_seen = written(c);
    free_jobs(first);
    if (status < 0)
        close_now(c);
    else
        pump(c);
    maybe_free(c);
}

// A reply that cannot go out: not built (out of memory), or past what one
// write takes.
static bool unsendable(const job *j) { return j->out.oom || j->out.len > UINT_MAX; }

// Answers nothing more: stops reading and drops the lines still waiting
// (never answered, so never acknowledged). Writes already handed to libuv
// still complete; then pump closes, as after an overlong line.
static void stop_answering(cqd_conn *c)
{
    end_input(c, false);
    for (job *j = c->head; j; j = j->next) {
        c->queued--;
        c->queued_bytes -= j->len;
    }
    free_jobs(c->head);
    c->head = c->tail = NULL;
}

// Writes the replies of the chain first in one write (takes the chain). A
// reply that could not be built (out of memory) ends the connection, but
// the replies before it are still written: their requests ran, and a
// client must learn what was done.
static void send_replies(cqd_conn *c, job *first)
{
    uv_buf_t bufs[BATCH_MAX];
    unsigned n = 0;
    size_t total = 0;
    job *last_good = NULL, *bad = NULL;
    for (job *j = first; j; j = j->next) {
        c->queued--;
        c->queued_bytes -= j->len;
        if (!bad && unsendable(j))
            bad = j;
        if (bad)
            continue;
        bufs[n++] = uv_buf_init(j->out.data, (unsigned)j->out.len);
        total += j->out.len;
        last_good = j;
    }
    if (bad) {
        cqd_log(&c->s->srv->log, CQD_LOG_ERROR,
                "stream: cannot build a reply; the %u before it are sent, then the connection closes", n);
        if (last_good)
            last_good->next = NULL;
        free_jobs(bad);
        stop_answering(c);
        if (!last_good)
            return;
    }
    first->write.data = first;
    if (c->unacked == 0) {
        // Replies begin to wait for the client now.
        c->write_at = now_ms(c);
        c->written_seen = c->submitted;
    }
    if (uv_write(&first->write, (uv_stream_t *)&c->tcp, bufs, n, on_written) != 0) {
        free_jobs(first);
        close_now(c);
        return;
    }
    c->writes++;
    c->unacked += total;
    c->submitted += total;
}

// Whether a batch that has run since start and made `made` reply bytes
// starts another line: not past BATCH_NS, nor past its connection's
// budget, nor past the stream total.
static bool batch_goes_on(cqd_server *srv, const job *first, uint64_t start, size_t made)
{
    return uv_hrtime() - start < BATCH_NS && made < first->budget && !total_full(srv);
}

// Runs on a pool thread; touches only the batch and the server. Answers
// the lines in order while batch_goes_on (the first always); a line that
// was not reached keeps its line (and its charge) and goes back to the
// queue. Each answered line gives back its charge at once. After a reply
// that could not be built no further line runs: the connection ends there
// (send_replies).
static void run_batch(job *first)
{
    cqd_server *srv = first->conn->s->srv;
    uint64_t start = uv_hrtime();
    size_t made = 0;
    for (job *j = first; j; j = j->next) {
        if (j != first && !batch_goes_on(srv, first, start, made))
            break;
        cqd_stream_answer_within(srv, first->conn->format, j->line, j->len, j->arrived_ns,
                                 first->short_answer ? SHORT_ANSWER : 0, &j->out);
        hold_reply(srv, j);
        made += j->out.len;
        drop_line(j);
        if (cqd_failpoint_hit(&srv->fp, "stream_reply"))
            j->out.oom = true;
        if (unsendable(j))
            break;
    }
}

// On a pool thread: runs the batch, then hands it to the loop, which
// wakes (uv_async_send may fold several wake-ups into one: the list
// holds every batch). The wake-up is sent under the lock: the loop takes
// the batch only after, so the connection, and with the last one the
// handle, cannot be closed before it is sent.
static void on_work(cqd_job *w)
{
    job *first = (job *)((char *)w - offsetof(job, work));
    run_batch(first);
    cqd_stream *s = first->conn->s;
    pthread_mutex_lock(&s->lock);
    first->ran = s->ran;
    s->ran = first;
    uv_async_send(&s->answered);
    pthread_mutex_unlock(&s->lock);
}

static void on_work_done(job *first)
{
    cqd_conn *c = first->conn;
    c->running = NULL;
    c->active_at = now_ms(c);
    if (c->closing) {
        free_jobs(first); // the client is gone: the answers are dropped
        close_now(c);
        maybe_free(c);
        return;
    }
    // The lines not reached (still held) go back to the front of the queue.
    job *last = first;
    while (last->next && !last->next->line)
        last = last->next;
    if (last->next) {
        job *rest = last->next, *end = rest;
        while (end->next)
            end = end->next;
        end->next = c->head;
        c->head = rest;
        if (!c->tail)
            c->tail = end;
        last->next = NULL;
    }
    send_replies(c, first);
    pump(c);
    maybe_free(c);
}

// Takes the next batch off the queue: a reply made on the loop alone, the
// line at the head alone to be answered short, or the run of lines at the
// head, up to BATCH_MAX.
static void start_next(cqd_conn *c, bool short_answer)
{
    job *first = c->head, *last = first;
    if (first->line && !short_answer)
        for (int n = 1; n < BATCH_MAX && last->next && last->next->line; n++)
            last = last->next;
    c->head = last->next;
    if (!c->head)
        c->tail = NULL;
    last->next = NULL;
    if (!first->line) {
        send_replies(c, first);
        return;
    }
    c->running = first;
    first->short_answer = short_answer;
    first->budget = c->s->srv->cfg.max_stream_reply_buffered - c->unacked;
    first->work.run = on_work;
    // No pool (out of memory), or one that could start no thread: run
    // here, the loop waits this once.
    if (!c->s->pool || !cqd_work_submit(c->s->pool, &first->work))
        on_work(&first->work);
}

void cqd_conn_answered(uv_async_t *a)
{
    cqd_stream *s = a->data;
    pthread_mutex_lock(&s->lock);
    job *ran = s->ran;
    s->ran = NULL;
    pthread_mutex_unlock(&s->lock);
    while (ran) {
        job *first = ran;
        ran = first->ran;
        on_work_done(first);
    }
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    cqd_conn *c = req->data;
    c->shutting = false;
    if (status < 0)
        close_now(c);
    maybe_free(c);
}

// Everything read is answered and written: close.
static void finish(cqd_conn *c)
{
    if (c->eof) {
        close_now(c);
        return;
    }
    // The client may still be sending: closing with unread input would make
    // the kernel reset the connection and could destroy replies the client
    // has not read yet. Half-close instead and discard input until its EOF.
    c->lingering = true;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        close_now(c);
        return;
    }
    c->shutting = true;
    uv_timer_start(&c->timer, on_timer, LINGER_MS, 0);
    start_reading(c);
}

// Starts what c may start now (see the file's head): nothing past its own
// bound; past the total, the head request with a short answer when c has
// no reply unwritten, else nothing.
static void start_jobs(cqd_conn *c)
{
    size_t own = c->s->srv->cfg.max_stream_reply_buffered;
    while (!c->closing && !c->running && c->head && c->unacked < own) {
        bool full = total_full(c->s->srv);
        if (full && c->unacked > 0)
            break; // its write's completion pumps c again
        start_next(c, full);
    }
}

// Moves c along: starts the next job, pauses or resumes reading, closes
// when everything is answered.
static void pump(cqd_conn *c)
{
    start_jobs(c);
    if (c->closing)
        return;
    if (!c->input_done) {
        size_t out_high = c->s->srv->cfg.max_stream_reply_buffered;
        bool full = c->queued > QUEUE_HIGH || c->queued_bytes > QUEUE_BYTES_HIGH || c->unacked > out_high;
        bool low = c->queued <= QUEUE_HIGH / 2 && c->queued_bytes <= QUEUE_BYTES_HIGH / 2 && c->unacked <= out_high / 2;
        if (full)
            stop_reading(c);
        else if (low)
            start_reading(c);
    } else if (!c->lingering && !c->running && !c->head && c->writes == 0) {
        finish(c);
    }
    watch(c);
}

/* ---- accept and drain -------------------------------------------------- */

static void free_handle(uv_handle_t *h) { cqd_free(h); }

// Over the connection limit: accept and close at once, so the client sees
// the refusal instead of waiting in the backlog.
static void refuse(cqd_stream *s)
{
    uv_tcp_t *t = cqd_malloc(sizeof *t);
    if (!t)
        return;
    uv_tcp_init(s->loop, t);
    uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)t);
    uv_close((uv_handle_t *)t, free_handle);
}

void cqd_conn_accept(cqd_stream *s)
{
    if (s->conns >= s->srv->cfg.max_connections) {
        cqd_log(&s->srv->log, CQD_LOG_WARN, "stream: connection refused: %d connections open (--max-connections)",
                s->conns);
        refuse(s);
        return;
    }
    cqd_conn *c = cqd_calloc(1, sizeof *c);
    if (!c) {
        refuse(s);
        return;
    }
    c->s = s;
    c->lines.max = s->srv->cfg.max_body;
    c->lines.admit = &s->srv->admit;
    c->lines.uncharged = LINE_UNCHARGED;
    c->frames.max = s->srv->cfg.max_body;
    c->frames.admit = &s->srv->admit;
    c->frames.uncharged = LINE_UNCHARGED;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    uv_timer_init(s->loop, &c->watchdog);
    c->tcp.data = c;
    c->timer.data = c;
    c->watchdog.data = c;
    c->handles = 3;
    c->active_at = now_ms(c);
    c->next = s->first;
    if (s->first)
        s->first->prev = c;
    s->first = c;
    s->conns++;
    atomic_fetch_add_explicit(&s->srv->stream_connections, 1, memory_order_relaxed);
    if (uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&c->tcp) != 0) {
        close_now(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1); // replies are small and latency-bound
    cqd_log(&s->srv->log, CQD_LOG_DEBUG, "stream: connection accepted (%d open)", s->conns);
    start_reading(c);
    watch(c);
}

void cqd_conn_drain(cqd_conn *c)
{
    if (c->closing || c->lingering)
        return;
    if (!c->input_done)
        end_input(c, false);
    // A client that never reads its replies must not hold up the shutdown.
    int secs = c->s->srv->cfg.timeout_s > 0 ? c->s->srv->cfg.timeout_s : 30;
    uv_timer_start(&c->timer, on_timer, (uint64_t)secs * 1000, 0);
    pump(c);
}
