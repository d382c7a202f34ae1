/* Helpers shared by the decoders (decode*.c): the JSON-pointer path kept in
 * cqp_decoder, failures at that path with a readable detail, and typed
 * access to values and object fields through the format-neutral view
 * (cqp/value.h), rejecting wrong types, unknown, duplicate and missing
 * fields. */
#ifndef CQP_DECODE_INTERNAL_H
#define CQP_DECODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cqp/decode.h"

/* Path: push returns a mark that pop restores. A key is escaped as JSON
 * pointer wants it ('~' -> "~0", '/' -> "~1"). */
int cqp__push_key(cqp_decoder *d, const char *key);
/* The same for a key of len bytes that may hold a NUL (a MessagePack key):
 * a NUL cannot stand in a C string, so it shows as U+FFFD. */
int cqp__push_keyn(cqp_decoder *d, const char *key, size_t len);
int cqp__push_index(cqp_decoder *d, size_t index);
void cqp__pop(cqp_decoder *d, int mark);

/* Fills the problem at the current path; the detail is the path in dotted
 * form ("a.shape.half_extents[1]", "body" at the root) followed by a space
 * and the formatted message. Returns -1. */
int cqp__fail(cqp_decoder *d, cqp_problem_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* MISSING_FIELD "is required" at the current path plus key. Returns -1. */
int cqp__missing(cqp_decoder *d, const char *key);
/* A BUSY problem for a failed allocation (the client may retry). Returns -1. */
int cqp__no_memory(cqp_decoder *d);

/* The largest magnitude a request number may have: every product a query
 * makes of such numbers stays a finite double (decode_field.c says why
 * 1e50). */
#define CQPD_NUMBER_MAX 1e50

/* The effective count limit: lim when > 0 (capped by hard), else hard. */
size_t cqp__limit(int lim, size_t hard);

/* The most fields any object of a request has (an upsert's six, settings'
 * five); a field list longer than this does not compile (CQPD_FIELD_LIST). */
#define CQPD_MAX_FIELDS 8

/* A NULL-terminated static list of an object's field names. */
#define CQPD_FIELD_LIST(name, ...)                                                                                   \
    static const char *const name[] = {__VA_ARGS__, NULL};                                                           \
    _Static_assert(sizeof name / sizeof name[0] <= CQPD_MAX_FIELDS + 1, #name " has too many fields")

/* An object's members, found in one pass over it: v[k] is the member named
 * names[k], or absent. Caller-owned, filled by cqp__object. */
typedef struct cqpd_fields {
    const char *const *names;
    cqp_value v[CQPD_MAX_FIELDS];
} cqpd_fields;

/* v must be an object (BAD_TYPE) whose every key is in names (else
 * UNKNOWN_FIELD at that key, what naming the object in the detail, e.g. "a
 * box") and appears once (else BAD_VALUE at the second: the JSON parser and
 * the MessagePack check refuse duplicates first, but the decoder never takes
 * one of two values silently). Fills *f. An absent v (an absent body)
 * passes as an empty object. */
int cqp__object(cqp_decoder *d, cqp_value v, const char *const *names, const char *what, cqpd_fields *f);
/* The member named key (one of f's names), or the absent view. */
cqp_value cqp__get(const cqpd_fields *f, const char *key);

/* f's member key. Present: returns 1 with *v set and the path pushed to key
 * (*mark for cqp__pop). Absent: 0, or -1 with MISSING_FIELD when required. */
int cqp__enter(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cqp_value *v, int *mark);

/* Values at the current path. */
int cqp__number(cqp_decoder *d, cqp_value v, double *out);   /* any number, finite, within +-1e50 */
/* Finite, of any magnitude: only for numbers no query multiplies (a ray's
 * direction, which is made unit, and its length, which only clips). */
int cqp__finite(cqp_decoder *d, cqp_value v, double *out);
int cqp__finite_vec3(cqp_decoder *d, cqp_value v, cq_vec3 *out);
/* The n elements of array a (its size checked by the caller) into out[0..n)
 * as cqp__number (any_magnitude: cqp__finite) checks each, a problem at
 * its index. */
int cqp__numbers(cqp_decoder *d, cqp_value a, bool any_magnitude, double *out, size_t n);
int cqp__nonneg(cqp_decoder *d, cqp_value v, double *out);   /* finite and >= 0 */
/* An integer (INT: no real, even one with a zero fraction) in lo..hi. */
int cqp__integer(cqp_decoder *d, cqp_value v, int64_t lo, int64_t hi, int64_t *out);
int cqp__uint32(cqp_decoder *d, cqp_value v, uint32_t *out); /* integer 0..4294967295 */
int cqp__bool(cqp_decoder *d, cqp_value v, bool *out);
/* An array (BAD_TYPE otherwise); *n its size. */
int cqp__array(cqp_decoder *d, cqp_value v, size_t *n);
/* An array of at most max items (more is OVER_LIMIT, 422; noun names the
 * items in the detail), and not empty when nonempty (BAD_VALUE). */
int cqp__array_limited(cqp_decoder *d, cqp_value v, bool nonempty, size_t max, const char *noun, size_t *n);

/* A check of one value that allocates nothing and has no effect but on
 * *out and the problem, so running it twice gives the same answer. */
typedef int (*cqpd_leaf_fn)(cqp_decoder *d, cqp_value v, void *out);
/* leaf on v, member key of the value at the current path. The path is
 * pushed only when the check fails, which then runs again at key for the
 * pointer: a large body is mostly such values, and almost all pass. */
int cqp__leaf(cqp_decoder *d, const char *key, cqpd_leaf_fn leaf, cqp_value v, void *out);

/* Optional or required fields of f, decoded in place with the path at the
 * field for any problem: 1 present, 0 absent (out untouched), -1 failed.
 * All but the shape and integer are leaves (cqp__leaf). */
int cqp__field_number(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, double *out);
int cqp__field_nonneg(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, double *out);
int cqp__field_vec3(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cq_vec3 *out);
int cqp__field_uint32(cqp_decoder *d, const cqpd_fields *f, const char *key, uint32_t *out);
int cqp__field_bool(cqp_decoder *d, const cqpd_fields *f, const char *key, bool *out);
int cqp__field_integer(cqp_decoder *d, const cqpd_fields *f, const char *key, int64_t lo, int64_t hi,
                       int64_t *out);
int cqp__field_id(cqp_decoder *d, const cqpd_fields *f, const char *key, char out[CQ_WORLD_ID_MAX + 1]);
/* An absent pose (0) leaves *out the identity. */
int cqp__field_pose(cqp_decoder *d, const cqpd_fields *f, const char *key, bool required, cq_xform *out);
int cqp__field_shape(cqp_decoder *d, const cqpd_fields *f, const char *key, cqp_shape *out);

/* Maps a core fault on the value at the current path (its field, index and
 * sub become pointer segments) to a problem; CQ_ENO_MEMORY is BUSY. */
int cqp__fault(cqp_decoder *d, cq_fault f);

/* A shape with its pose, velocity and filter, as one upsert of a batch body
 * or an import ({"id"?, "shape", "pose"?, "velocity"?, "layer"?, "mask"?}).
 * with_id: the object carries "id" (decoded into id); else id is the caller's.
 * shape comes zeroed; op is zeroed here. On success op and shape are
 * filled (op->id still unset). */
int cqp__upsert(cqp_decoder *d, cqp_value v, bool with_id, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                cqp_shape *shape);

/* A batch's move at p (MessagePack, inside checked bytes, followed there
 * by at least `after` more values: the later items of its list) in one pass,
 * when it is the common form {"id": string, "pose": {"position"?,
 * "rotation"?}, "velocity"?} and the view-based decoder would accept all
 * but the rotation, which cq_pose_from_quat(raw->position, raw->rotation,
 * &op->pose) checks and makes (the caller's, so that cq_poses_from_quats
 * can make several in vector lanes): then *op (zeroed first, op->id and
 * op->pose unset) and id are what that decoder makes of it, and the byte
 * after the item is returned. Otherwise NULL, with *op, id and *raw
 * undefined: the caller decodes the item through the view, which reports
 * any problem (decode_move_mp.c). */
const char *cqp__move_mp(const char *p, size_t after, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                         cq_quat_pose *raw);

#endif
