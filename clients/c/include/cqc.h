/* libcqc: the C client of collisiond's stream transport (docs/CLIENTS.md).
 *
 * Thread-safety: each declaration's comment ends with its rule.
 *   [conn]  c, and every result the call fills, belongs to one thread at a
 *           time: one connection per thread is the intended use (two
 *           threads sharing one need a lock around each whole pipeline).
 *           Distinct connections share nothing.
 *   [any]   safe from any number of threads at once.
 *   [first] process-wide: call before any other cqc function, once.
 *
 * Ownership: every pointer argument is borrowed for the call only, unless
 * its comment says otherwise; results are caller-owned structs the library
 * fills, and the few heap arrays it may put in them are released by the
 * matching cqc_*_release. */
#ifndef CQC_H
#define CQC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cqc_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------ */

/// Every status a call returns: name, HTTP status it stands for (0: none),
/// message. CQC_EUNKNOWN is the reconnect rule's answer: a mutation whose
/// reply was lost may or may not have been applied (docs/CLIENTS.md).
#define CQC_STATUS_TABLE(X)                                                                     \
    X(CQC_OK, 0, "ok")                                                                          \
    X(CQC_ENOMEM, 0, "out of memory")                                                           \
    X(CQC_EINVAL, 0, "invalid argument")                                                        \
    X(CQC_ECONNECT, 0, "cannot connect to the daemon")                                          \
    X(CQC_ETIMEOUT, 0, "timed out waiting for the daemon")                                      \
    X(CQC_EIO, 0, "the connection was lost before the reply")                                   \
    X(CQC_EPROTO, 0, "the daemon's reply is malformed")                                         \
    X(CQC_EUNKNOWN, 0, "the connection was lost: the mutation may or may not have been applied") \
    X(CQC_ESTATE, 0, "call out of order (pipeline misuse)")                                     \
    X(CQC_ETRUNCATED, 0, "the result did not fit the caller's arrays")                          \
    X(CQC_EBADREQUEST, 400, "bad request")                                                      \
    X(CQC_EUNAUTHORIZED, 401, "unauthorized: missing or wrong token")                           \
    X(CQC_ENOTFOUND, 404, "not found")                                                          \
    X(CQC_EMETHOD, 405, "method not allowed")                                                   \
    X(CQC_ETOOLARGE, 413, "request too large")                                                  \
    X(CQC_EOVERLIMIT, 422, "over a per-request limit")                                          \
    X(CQC_EINTERNAL, 500, "internal server error")                                              \
    X(CQC_EUNAVAILABLE, 503, "unavailable: retry later")                                        \
    X(CQC_EHTTP, 0, "unexpected HTTP status")

typedef enum cqc_status {
#define CQC_STATUS_ENUM(name, http, text) name,
    CQC_STATUS_TABLE(CQC_STATUS_ENUM)
#undef CQC_STATUS_ENUM
        CQC_STATUS_COUNT
} cqc_status;

/// A static string describing s (never NULL; "unknown status" out of range). [any]
CQC_API const char *cqc_strerror(cqc_status s);

/// The last error reply's problem (RFC 9457 members; empty strings when the
/// error did not come from the daemon). Borrowed from c: valid until the
/// next call on c. [conn]
CQC_API const cqc_problem *cqc_last_problem(const cqc_conn *c);

/* ---- allocator --------------------------------------------------------- */

/// The one allocator hook: realloc_fn(ud, p, n) with the realloc contract
/// (n == 0 frees p and returns NULL). NULL restores libc's. Process-wide:
/// set it before any other cqc call, never while a connection is open.
/// JSON mode's parser (jansson) keeps its own allocator. [first]
CQC_API void cqc_set_allocator(void *(*realloc_fn)(void *ud, void *p, size_t n), void *ud);

/* ---- connections ------------------------------------------------------- */

/// Fills o with the defaults: 127.0.0.1:7879, MessagePack, 2 s to connect,
/// 5 s per send or reply, 64 MiB largest reply, reconnect on. [any]
CQC_API void cqc_options_init(cqc_options *o);

/// Connects to the stream listener o->host:o->port. *out is new (free it
/// with cqc_close), NULL on failure. o's strings are copied. [any]
CQC_API cqc_status cqc_connect(const cqc_options *o, cqc_conn **out);

/// Closes c's socket and frees c and everything it owns. NULL is a no-op. [conn]
CQC_API void cqc_close(cqc_conn *c);

/// True while c holds an open socket (false after a drop, until the next
/// cqc_pipe_send reconnects it). [conn]
CQC_API bool cqc_connected(const cqc_conn *c);

/// c's running counters (a copy). [conn]
CQC_API cqc_stats cqc_get_stats(const cqc_conn *c);

/* ---- pipelining ---------------------------------------------------------
 * cqc_pipe_begin, then queue calls (cqc_q_*: each encodes one request and
 * remembers where its result goes), cqc_pipe_send (one write), then one
 * cqc_pipe_next per queued call, in queue order. A cqc_q_* call encodes
 * its inputs at once (they are borrowed for the call only); its out
 * pointer is borrowed until its cqc_pipe_next returns. The blocking calls below
 * (without q_) are begin + one call + send + next. */

/// Starts a pipeline, discarding one that was queued and not sent.
/// CQC_ESTATE while replies of a sent pipeline are still unread. [conn]
CQC_API cqc_status cqc_pipe_begin(cqc_conn *c);

/// Sends every queued request in one write (reconnecting first when c was
/// dropped and o->reconnect is set). On failure every queued call is
/// answered by its cqc_pipe_next with the failure, or CQC_EUNKNOWN for a
/// mutation when part of the pipeline may have been written (CQC_EIO,
/// CQC_ETIMEOUT). [conn]
CQC_API cqc_status cqc_pipe_send(cqc_conn *c);

/// Reads the next reply and decodes it into its call's out. Returns that
/// call's status; *index (may be NULL) is its position in the queue.
/// CQC_ESTATE when every reply was read. [conn]
CQC_API cqc_status cqc_pipe_next(cqc_conn *c, size_t *index);

/// Calls queued and not yet answered by cqc_pipe_next. [conn]
CQC_API size_t cqc_pipe_pending(const cqc_conn *c);

/* ---- queued calls (one request each; see docs/CLIENTS.md's table) ------- */

/// GET /healthz (ready false) or /readyz (ready true). [conn]
CQC_API cqc_status cqc_q_health(cqc_conn *c, bool ready);
/// PUT /v1/worlds/{world} with settings (NULL: all defaults); out may be NULL. [conn]
CQC_API cqc_status cqc_q_world_create(cqc_conn *c, const char *world, const cqc_world_settings *settings,
                                      cqc_world_info *out);
/// GET /v1/worlds/{world}. [conn]
CQC_API cqc_status cqc_q_world_get(cqc_conn *c, const char *world, cqc_world_info *out);
/// DELETE /v1/worlds/{world}. [conn]
CQC_API cqc_status cqc_q_world_delete(cqc_conn *c, const char *world);
/// GET /v1/worlds/{world}/export: out gets the document as MessagePack
/// (whatever the encoding), new, freed with cqc_blob_release. [conn]
CQC_API cqc_status cqc_q_world_export(cqc_conn *c, const char *world, cqc_blob *out);
/// PUT /v1/worlds/{world} with an export document (MessagePack bytes, as
/// cqc_q_world_export gives them; copied at once); out may be NULL. [conn]
CQC_API cqc_status cqc_q_world_import(cqc_conn *c, const char *world, const void *doc, size_t len,
                                      cqc_world_info *out);
/// PUT /v1/worlds/{world}/shapes/{body->id}; out (may be NULL) gets whether
/// it was created (201) or replaced (200). [conn]
CQC_API cqc_status cqc_q_shape_put(cqc_conn *c, const char *world, const cqc_body *body, bool *created);
/// GET /v1/worlds/{world}/shapes/{id}; out is zeroed here and, whatever the outcome,
/// may be released with cqc_stored_release (only a success leaves arrays in it). [conn]
CQC_API cqc_status cqc_q_shape_get(cqc_conn *c, const char *world, const char *id, cqc_stored *out);
/// DELETE /v1/worlds/{world}/shapes/{id}. [conn]
CQC_API cqc_status cqc_q_shape_delete(cqc_conn *c, const char *world, const char *id);
/// POST /v1/worlds/{world}/batch: upserts, moves (from the caller's arrays;
/// no allocation per move), removes. out may be NULL. [conn]
CQC_API cqc_status cqc_q_batch(cqc_conn *c, const char *world, const cqc_batch *b, cqc_batch_result *out);
/// POST /v1/pair. [conn]
CQC_API cqc_status cqc_q_pair(cqc_conn *c, const cqc_pair *p, cqc_contact *out);
/// POST /v1/pairs: n pairs, out has room for n results. [conn]
CQC_API cqc_status cqc_q_pairs(cqc_conn *c, const cqc_pair *pairs, size_t n, cqc_contact *out);
/// GET /v1/worlds/{world}/pairs into out (caller's arrays or grown ones). [conn]
CQC_API cqc_status cqc_q_broadphase(cqc_conn *c, const char *world, cqc_id_pairs *out);
/// POST /v1/worlds/{world}/contacts with q's filter and dt (q may be NULL). [conn]
CQC_API cqc_status cqc_q_contacts(cqc_conn *c, const char *world, const cqc_contacts_query *q,
                                  cqc_contacts *out);
/// POST /v1/worlds/{world}/raycast, closest hit per ray: out has room for n. [conn]
CQC_API cqc_status cqc_q_raycast(cqc_conn *c, const char *world, const cqc_ray *rays, size_t n, cqc_ray_hit *out);
/// POST /v1/worlds/{world}/sweep. [conn]
CQC_API cqc_status cqc_q_sweep(cqc_conn *c, const char *world, const cqc_sweep *q, cqc_sweep_hit *out);
/// POST /v1/worlds/{world}/overlap into out (caller's array or a grown one). [conn]
CQC_API cqc_status cqc_q_overlap(cqc_conn *c, const char *world, const cqc_overlap *q, cqc_ids *out);

/* ---- blocking calls: the same, one round trip each --------------------- */

/// cqc_q_health, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_health(cqc_conn *c, bool ready);
/// cqc_q_world_create, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_world_create(cqc_conn *c, const char *world, const cqc_world_settings *settings,
                                    cqc_world_info *out);
/// cqc_q_world_get, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_world_get(cqc_conn *c, const char *world, cqc_world_info *out);
/// cqc_q_world_delete, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_world_delete(cqc_conn *c, const char *world);
/// cqc_q_world_export, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_world_export(cqc_conn *c, const char *world, cqc_blob *out);
/// cqc_q_world_import, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_world_import(cqc_conn *c, const char *world, const void *doc, size_t len,
                                    cqc_world_info *out);
/// cqc_q_shape_put, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_shape_put(cqc_conn *c, const char *world, const cqc_body *body, bool *created);
/// cqc_q_shape_get, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_shape_get(cqc_conn *c, const char *world, const char *id, cqc_stored *out);
/// cqc_q_shape_delete, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_shape_delete(cqc_conn *c, const char *world, const char *id);
/// cqc_q_batch, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_batch_apply(cqc_conn *c, const char *world, const cqc_batch *b, cqc_batch_result *out);
/// cqc_q_pair, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_pair_test(cqc_conn *c, const cqc_pair *p, cqc_contact *out);
/// cqc_q_pairs, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_pairs_test(cqc_conn *c, const cqc_pair *pairs, size_t n, cqc_contact *out);
/// cqc_q_broadphase, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_broadphase(cqc_conn *c, const char *world, cqc_id_pairs *out);
/// cqc_q_contacts, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_contacts_get(cqc_conn *c, const char *world, const cqc_contacts_query *q,
                                    cqc_contacts *out);
/// cqc_q_raycast, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_raycast(cqc_conn *c, const char *world, const cqc_ray *rays, size_t n, cqc_ray_hit *out);
/// cqc_q_sweep, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_sweep_test(cqc_conn *c, const char *world, const cqc_sweep *q, cqc_sweep_hit *out);
/// cqc_q_overlap, sent and answered at once; arguments borrowed for the call. [conn]
CQC_API cqc_status cqc_overlap_test(cqc_conn *c, const char *world, const cqc_overlap *q, cqc_ids *out);

/* ---- results the library may have grown -------------------------------- */

/// Frees the export document in x and zeroes x. [conn: x's thread]
CQC_API void cqc_blob_release(cqc_blob *x);
/// Frees a stored convex's or mesh's arrays in x (the library's). [conn: x's thread]
CQC_API void cqc_stored_release(cqc_stored *x);
/// Frees the arrays the library grew in x, never the caller's; counts to 0. [conn: x's thread]
CQC_API void cqc_contacts_release(cqc_contacts *x);
/// As cqc_contacts_release, for an id list. [conn: x's thread]
CQC_API void cqc_ids_release(cqc_ids *x);
/// As cqc_contacts_release, for a list of id pairs. [conn: x's thread]
CQC_API void cqc_id_pairs_release(cqc_id_pairs *x);

/* ---- sharding: the router's ring (deploy/nginx/ring.py) ----------------- */

/// A consistent-hash ring over n upstream server names written exactly as
/// in deploy/nginx's `upstream collisiond_worlds` block ("collisiond-0:7878":
/// nginx hashes the text). *out is new (cqc_ring_free); names are copied. [any]
CQC_API cqc_status cqc_ring_new(const char *const *servers, size_t n, cqc_ring **out);
/// Frees r (NULL is a no-op). [once no thread is in cqc_ring_owner(r)]
CQC_API void cqc_ring_free(cqc_ring *r);
/// The index (into the servers given to cqc_ring_new) of the server that
/// owns world, as nginx's `hash $collisiond_world consistent` picks it. [any]
CQC_API size_t cqc_ring_owner(const cqc_ring *r, const char *world);

/// Unit quaternion [x, y, z, w] turning by angle (radians) about axis
/// (any non-zero length); q gets the identity for a zero axis. [any]
CQC_API void cqc_quat_axis_angle(const double axis[3], double angle, double q[4]);
/// q = a * b (a after b). [any]
CQC_API void cqc_quat_mul(const double a[4], const double b[4], double q[4]);

#ifdef __cplusplus
}
#endif

#endif
