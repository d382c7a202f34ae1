/* cq-tick: a game backend's tick against collisiond, over the wire and in
 * process (`make bench-tick`, docs/PERFORMANCE.md "The game tick over the
 * wire"). A tick moves every box of a cq-gen scene by the scene format's
 * rule (one POST .../batch), then asks for the contacts with dt (one POST
 * .../contacts). Every request is encoded before the clock starts. */
#ifndef CQ_TICK_H
#define CQ_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cq/world.h"

/* ---- bytes ---------------------------------------------------------------- */

/// A growable byte buffer; every append aborts the program when memory runs
/// out (a benchmark has nothing better to do).
typedef struct tk_buf {
    char *p;
    size_t len, cap;
} tk_buf;

/// Makes room for n more bytes and returns where they go (len unchanged).
char *tk_buf_reserve(tk_buf *b, size_t n);
/// Appends n bytes.
void tk_buf_add(tk_buf *b, const void *p, size_t n);
/// Appends a NUL-terminated string.
void tk_buf_str(tk_buf *b, const char *s);
/// Appends printf-formatted text.
void tk_buf_fmt(tk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/// Frees the bytes and zeroes the buffer.
void tk_buf_free(tk_buf *b);

/// Seconds on the monotonic clock.
double tk_now(void);

/* ---- the scene and its motion (scene.c) ----------------------------------- */

/// One box of a cq-gen scene: centre, half extents, unit quaternion
/// (x, y, z, w) and velocity, as the file gives them.
typedef struct tk_box {
    double c[3], h[3], q[4], v[3];
} tk_box;

/// A cq-gen scene (bench/gen/gen.h): the cube's half-size L, the time step
/// and the boxes, whose centres and velocities move tick by tick.
typedef struct tk_scene {
    double L, dt;
    int n;
    tk_box *boxes;
    char (*ids)[12]; ///< "b0", "b1", ...: short, so the bodies carry geometry more than names
} tk_scene;

/// Reads a cq-gen scene file; false (with a message on stderr) on error.
bool tk_scene_read(const char *path, tk_scene *s);
/// Frees the scene's arrays.
void tk_scene_free(tk_scene *s);
/// One tick of cq-gen's rule, as bench/world.c moves the boxes: each centre
/// moves by v dt; a coordinate that would leave [-L, L] reverses that
/// velocity component and moves by the reversed velocity instead.
void tk_scene_advance(tk_scene *s);

/* ---- the same world in process (inproc.c) --------------------------------- */

/// A libcq world holding the scene, with the arrays a tick needs.
typedef struct tk_local {
    cq_world *world;
    cq_world_op *ops;
    cq_world_contacts_out out;
    double dt;
} tk_local;

/// Creates the world (skin 0, capacity n, pair cap max_pairs: 0 none, the
/// daemon's 1000000 to count its check in) and upserts every box by id.
bool tk_local_open(tk_local *l, const tk_scene *s, long max_pairs);
/// Writes the scene's current poses and velocities into the move ops (by
/// id, as the daemon applies a batch), outside any clock.
void tk_local_stage(tk_local *l, const tk_scene *s);
/// cq_world_apply of the staged moves; false when they are rejected.
bool tk_local_apply(tk_local *l);
/// cq_world_contacts with dt over every pair: the touching pairs, or -1.
int tk_local_contacts(tk_local *l);
/// A whole tick: tk_local_apply then tk_local_contacts (-1 on error).
int tk_local_tick(tk_local *l);
/// Frees the world and the arrays.
void tk_local_close(tk_local *l);

/* ---- request bodies (enc_json.c, enc_mp.c) -------------------------------- */

/// The wire formats of a body.
typedef enum tk_format { TK_JSON, TK_MSGPACK } tk_format;

/// The media type of a format ("application/json", "application/msgpack").
const char *tk_media_type(tk_format f);

/// PUT /v1/worlds/W's import body: {"settings": {"skin": 0, "capacity": n},
/// "shapes": [every box with its id, shape, pose and velocity]}.
void tk_json_import(tk_buf *b, const tk_scene *s);
void tk_mp_import(tk_buf *b, const tk_scene *s);
/// A tick's batch body: {"move": [{"id", "pose": {"position", "rotation"},
/// "velocity"}, ...]} for every box at its current place.
void tk_json_moves(tk_buf *b, const tk_scene *s);
void tk_mp_moves(tk_buf *b, const tk_scene *s);
/// The contacts body {"dt": dt}.
void tk_json_contacts(tk_buf *b, double dt);
void tk_mp_contacts(tk_buf *b, double dt);
/// Appends a double as the shortest decimal that reads back as the same
/// double, so the daemon's world holds exactly the in-process poses.
void tk_json_num(tk_buf *b, double v);
/// Re-encodes a JSON document as MessagePack (integers stay integers,
/// reals become float64); false when the text is not JSON.
bool tk_json_to_mp(const char *json, size_t len, tk_buf *out);

/* ---- framing (frame.c) ---------------------------------------------------- */

/// Appends an HTTP/1.1 request with a Content-Length body of the format
/// (Content-Type and Accept both set to its media type).
void tk_http_request(tk_buf *b, const char *method, const char *path, tk_format f, const void *body, size_t len);
/// Appends one stream request: a JSON line {"id","method","path","body"}
/// with the JSON body inline, or a MessagePack frame 0xCE, a 4-byte
/// big-endian length, and the envelope map with the MessagePack body.
void tk_stream_request(tk_buf *b, tk_format f, uint32_t id, const char *method, const char *path, const void *body,
                       size_t len);

/* ---- connections (http.c, stream.c) --------------------------------------- */

/// A blocking TCP connection to 127.0.0.1 with a buffer of received bytes.
typedef struct tk_conn {
    int fd;
    tk_buf in;     ///< bytes received and not yet consumed
    size_t start;  ///< the first unconsumed byte of in
} tk_conn;

/// Connects to 127.0.0.1:port (TCP_NODELAY); false on error.
bool tk_connect(tk_conn *c, int port);
/// Closes the connection.
void tk_close(tk_conn *c);
/// Writes all n bytes; false on error.
bool tk_send(tk_conn *c, const void *p, size_t n);

/// One response or reply: status, body format and body bytes.
typedef struct tk_reply {
    int status;
    tk_format format;
    tk_buf body;
    uint32_t id; ///< stream replies: the envelope's id (0 when absent)
} tk_reply;

/// Reads one HTTP/1.1 response (Content-Length or chunked body) into r;
/// false on a broken connection or an unreadable head.
bool tk_http_read(tk_conn *c, tk_reply *r);
/// Reads one stream reply of format f: a JSON line, or a MessagePack frame.
/// Only the framing is read here; tk_reply_open takes the envelope apart.
bool tk_stream_read(tk_conn *c, tk_format f, tk_buf *raw);

/* ---- replies (reply.c) ---------------------------------------------------- */

/// Takes a stream reply's envelope apart: id, status and body (re-encoded
/// alone in the envelope's format). False when it is not an envelope.
bool tk_reply_open(tk_format f, const tk_buf *raw, tk_reply *r);
/// The "stats.touching" count of a contacts answer, or -1 when absent.
long tk_reply_touching(const tk_reply *r);
/// The body for a message: JSON as text, MessagePack as a JSON rendering.
void tk_reply_describe(const tk_reply *r, char *out, size_t cap);

/* ---- the daemon's CPU time (cpu.c) ---------------------------------------- */

/// CPU seconds process pid has used, all threads: utime + stime of
/// /proc/PID/stat (clock ticks), and the kernel's per-process CPU clock
/// (nanoseconds). -1 where unreadable.
typedef struct tk_cpu {
    double stat_s, clock_s;
} tk_cpu;

tk_cpu tk_cpu_sample(pid_t pid);

#endif
