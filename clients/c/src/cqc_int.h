/* libcqc's internals: buffers, the bounded MessagePack reader, the request
 * writer and the connection. Nothing here is exported. */
#ifndef CQC_INT_H
#define CQC_INT_H

#include <string.h>

#include <msgpuck.h>

#include "cqc.h"

/* ---- memory (alloc.c) ---------------------------------------------------- */

void *cqc__realloc(void *p, size_t n);
void cqc__free(void *p);
/* Grows *items (of size each) to hold at least need; false on overflow or
 * out of memory (then *items is unchanged). */
bool cqc__grow(void **items, size_t *cap, size_t need, size_t size);

/* A growable byte buffer. */
typedef struct cqc_buf {
    char *p;
    size_t len, cap;
} cqc_buf;

/* Room for n more bytes at b->p + b->len; NULL when it cannot be had. */
char *cqc__reserve(cqc_buf *b, size_t n);
void cqc__buf_free(cqc_buf *b);

/* ---- the request writer (enc.c) --------------------------------------------
 * Every write reserves its bytes first; the first failed reservation sets
 * w->oom and later writes do nothing, so a call checks once at its end. */
typedef struct cqc_w {
    cqc_buf *b;
    bool oom;
} cqc_w;

/* Room for n bytes, NULL once out of memory; the caller advances b->len. */
char *cqc__w_room(cqc_w *w, size_t n);
void cqc__w_map(cqc_w *w, uint32_t n);
void cqc__w_arr(cqc_w *w, uint32_t n);
void cqc__w_str(cqc_w *w, const char *s);
/* The wire name of a durability ("full", "shapes", "none"), NULL when unset. */
const char *cqc__durability_name(cqc_durability d);
void cqc__w_strn(cqc_w *w, const char *s, size_t n);
void cqc__w_dbl(cqc_w *w, double v);
void cqc__w_uint(cqc_w *w, uint64_t v);
void cqc__w_bool(cqc_w *w, bool v);
void cqc__w_vec(cqc_w *w, const double *v, uint32_t n);
void cqc__w_raw(cqc_w *w, const void *p, size_t n);
/* A shape map, a pose map ({position, rotation}). */
void cqc__w_shape(cqc_w *w, const cqc_shape *s);
void cqc__w_pose(cqc_w *w, const cqc_pose *p);
/* An upsert item / a stored shape's body: {id?, shape, pose, velocity, layer, mask}. */
void cqc__w_body(cqc_w *w, const cqc_body *b, bool with_id);
/* The tick's move list: no allocation per move beyond the buffer's growth. */
void cqc__w_moves(cqc_w *w, const cqc_batch *b);
/* False when a shape's arrays or sizes cannot be encoded (EINVAL). */
bool cqc__shape_ok(const cqc_shape *s);

/* ---- the bounded reader (rd.c) ----------------------------------------------
 * Every length and count is checked against the bytes left before it is
 * trusted; any fault sets r->bad and every later read fails. */
typedef struct cqc_rd {
    const char *p, *end;
    bool bad;
    bool oom; /* the fault was an allocation's, not the reply's */
} cqc_rd;

bool cqc__rd_map(cqc_rd *r, uint32_t *n);
bool cqc__rd_arr(cqc_rd *r, uint32_t *n);
bool cqc__rd_str(cqc_rd *r, const char **s, uint32_t *n);
bool cqc__rd_num(cqc_rd *r, double *v);
bool cqc__rd_uint(cqc_rd *r, uint64_t *v);
bool cqc__rd_bool(cqc_rd *r, bool *v);
/* Consumes a nil and returns true; false (nothing consumed) otherwise. */
bool cqc__rd_nil(cqc_rd *r);
/* Skips one whole value of any type. */
bool cqc__rd_skip(cqc_rd *r);
/* A str into dst (NUL-terminated); false when it is longer than cap - 1. */
bool cqc__rd_strcpy(cqc_rd *r, char *dst, size_t cap);
/* A str cut to fit dst (problem texts). */
bool cqc__rd_strcut(cqc_rd *r, char *dst, size_t cap);
/* An array of exactly n numbers into v. */
bool cqc__rd_vec(cqc_rd *r, double *v, uint32_t n);
/* Reads a map, calling f for each member with the reader at its value;
 * f must consume the value (cqc__rd_skip for members it does not know). */
typedef bool (*cqc_member_fn)(cqc_rd *r, const char *k, uint32_t kn, void *out);
bool cqc__rd_each(cqc_rd *r, cqc_member_fn f, void *out);
/* Reads a map key and compares it with the literal k. */
#define CQC_KEY(s, n, k) ((n) == sizeof(k) - 1 && memcmp((s), (k), sizeof(k) - 1) == 0)
static inline bool cqc__fail(cqc_rd *r)
{
    r->bad = true;
    return false;
}

/* ---- the connection (conn.c, pipe.c) ----------------------------------------- */

/* What a queued call's reply decodes into. */
typedef enum cqc_kind {
    CQC_K_NONE, CQC_K_WORLD, CQC_K_BLOB, CQC_K_PUT, CQC_K_STORED, CQC_K_BATCH, CQC_K_CONTACT,
    CQC_K_CONTACTS_N, CQC_K_ID_PAIRS, CQC_K_CONTACTS, CQC_K_HITS, CQC_K_SWEEP, CQC_K_IDS, CQC_K_COUNT
} cqc_kind;

typedef struct cqc_call {
    uint8_t kind;
    bool mutation;      /* its outcome is unknown when its reply is lost */
    void *out;
    size_t n;           /* the count out has room for (pairs, rays) */
    size_t frame;       /* offset of its frame in the out buffer */
} cqc_call;

struct cqc_conn {
    cqc_options opt;
    char *host, *token;
    int fd;
    cqc_buf out, in, line;
    size_t in_at;              /* first unread byte of in */
    size_t frame_at;           /* where the frame being queued starts in out */
    cqc_call *calls;
    size_t ncalls, cap_calls, next;
    bool sent;
    cqc_status send_status;    /* the send's failure, answered to every call */
    uint32_t seq;              /* the id of the next request */
    uint32_t first_id;         /* the id of calls[0] */
    cqc_problem problem;
    cqc_stats stats;
};

/* The open, write and read of one socket (net.c). */
cqc_status cqc__net_open(cqc_conn *c);
void cqc__net_close(cqc_conn *c);
cqc_status cqc__net_send(cqc_conn *c, const char *p, size_t n);
/* Reads more bytes into c->in, waiting until deadline_ns (monotonic). */
cqc_status cqc__net_fill(cqc_conn *c, uint64_t deadline_ns);
uint64_t cqc__now_ns(void);
uint64_t cqc__cpu_ns(void);

/* Starts a request frame: the envelope's id, method, path (world and id
 * percent-encoded into it when not NULL) and headers, then "body" when
 * has_body; the caller writes the body and calls cqc__end. */
cqc_status cqc__begin(cqc_conn *c, cqc_w *w, const char *method, const char *path, const char *world,
                      const char *tail, const char *id, bool has_body);
cqc_status cqc__end(cqc_conn *c, cqc_w *w, uint8_t kind, bool mutation, void *out, size_t n);
/* Runs the pipeline queued since begin: send and one reply. */
cqc_status cqc__one(cqc_conn *c, cqc_status queued);
/* A blocking call starts a fresh pipeline of one: CQC_ESTATE when an
 * unsent queue or unread replies are the caller's (never thrown away). */
cqc_status cqc__prep(cqc_conn *c);
#define CQC_BLOCK(c, expr)                                        \
    do {                                                          \
        cqc_status s_ = cqc__prep(c);                             \
        return s_ != CQC_OK ? s_ : cqc__one((c), (expr));         \
    } while (0)

/* Decodes a 2xx reply body into call->out (dec.c, dec_query.c). */
cqc_status cqc__decode(cqc_rd *r, const cqc_call *call, int http);
/* Fills c->problem from an error body; the status for http. */
cqc_status cqc__problem(cqc_conn *c, cqc_rd *r, int http);
cqc_status cqc__status_of_http(int http);

bool cqc__dec_contact(cqc_rd *r, cqc_contact *out);
cqc_status cqc__dec_query(cqc_rd *r, const cqc_call *call);

/* JSON mode (json.c): a MessagePack frame's envelope to one JSON line, and
 * one reply line to a MessagePack envelope. */
cqc_status cqc__mp_to_json(const char *mp, size_t n, cqc_buf *out);
cqc_status cqc__json_to_mp(const char *line, size_t n, cqc_buf *out);

#endif
