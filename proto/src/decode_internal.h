/* Helpers shared by the decoders (decode*.c): the JSON-pointer path kept in
 * cqp_decoder, failures at that path with a readable detail, and typed
 * field access that rejects wrong types, unknown and missing fields. */
#ifndef CQP_DECODE_INTERNAL_H
#define CQP_DECODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cqp/decode.h"

/* Path: push returns a mark that pop restores. A key is escaped as JSON
 * pointer wants it ('~' -> "~0", '/' -> "~1"). */
int cqpd_push_key(cqp_decoder *d, const char *key);
int cqpd_push_index(cqp_decoder *d, size_t index);
void cqpd_pop(cqp_decoder *d, int mark);

/* Fills the problem at the current path; the detail is the path in dotted
 * form ("a.shape.half_extents[1]", "body" at the root) followed by a space
 * and the formatted message. Returns -1. */
int cqpd_fail(cqp_decoder *d, cqp_problem_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The effective count limit: lim when > 0 (capped by hard), else hard. */
size_t cqpd_limit(int lim, size_t hard);

/* v must be an object (BAD_TYPE) whose every key is in fields (a
 * NULL-terminated list; else UNKNOWN_FIELD at that key, what naming the
 * object in the detail, e.g. "a box"). NULL (an absent body) passes as an
 * empty object. */
int cqpd_object(cqp_decoder *d, const json_t *v, const char *const *fields, const char *what);

/* obj[key]. Present: returns 1 with *v set and the path pushed to key
 * (*mark for cqpd_pop). Absent: 0, or -1 with MISSING_FIELD when required. */
int cqpd_enter(cqp_decoder *d, const json_t *obj, const char *key, bool required, const json_t **v,
               int *mark);

/* Values at the current path. */
int cqpd_number(cqp_decoder *d, const json_t *v, double *out);   /* any JSON number, finite, within +-1e50 */
/* Finite, of any magnitude: only for numbers no query multiplies (a ray's
 * direction, which is made unit, and its length, which only clips). */
int cqpd_finite(cqp_decoder *d, const json_t *v, double *out);
int cqpd_finite_vec3(cqp_decoder *d, const json_t *v, cq_vec3 *out);
int cqpd_nonneg(cqp_decoder *d, const json_t *v, double *out);   /* finite and >= 0 */
int cqpd_integer(cqp_decoder *d, const json_t *v, json_int_t lo, json_int_t hi, json_int_t *out);
int cqpd_uint32(cqp_decoder *d, const json_t *v, uint32_t *out); /* integer 0..4294967295 */
int cqpd_bool(cqp_decoder *d, const json_t *v, bool *out);
/* An array (BAD_TYPE otherwise); *n its size. */
int cqpd_array(cqp_decoder *d, const json_t *v, size_t *n);
/* An array of at most max items (more is OVER_LIMIT, 422; noun names the
 * items in the detail), and not empty when nonempty (BAD_VALUE). */
int cqpd_array_limited(cqp_decoder *d, const json_t *v, bool nonempty, size_t max, const char *noun, size_t *n);

/* Optional or required fields of obj, decoded in place with the path at
 * the field during decoding: 1 present, 0 absent (out untouched), -1 failed. */
int cqpd_field_number(cqp_decoder *d, const json_t *obj, const char *key, bool required, double *out);
int cqpd_field_nonneg(cqp_decoder *d, const json_t *obj, const char *key, bool required, double *out);
int cqpd_field_vec3(cqp_decoder *d, const json_t *obj, const char *key, bool required, cq_vec3 *out);
int cqpd_field_uint32(cqp_decoder *d, const json_t *obj, const char *key, uint32_t *out);
int cqpd_field_bool(cqp_decoder *d, const json_t *obj, const char *key, bool *out);
int cqpd_field_integer(cqp_decoder *d, const json_t *obj, const char *key, json_int_t lo, json_int_t hi,
                       json_int_t *out);
int cqpd_field_pose(cqp_decoder *d, const json_t *obj, const char *key, bool required, cq_xform *out);
int cqpd_field_shape(cqp_decoder *d, const json_t *obj, const char *key, cqp_shape *out);

/* Maps a core fault on the value at the current path (its field, index and
 * sub become pointer segments) to a problem; CQ_ENO_MEMORY is INTERNAL. */
int cqpd_fault(cqp_decoder *d, cq_fault f);

/* A shape with its pose, velocity and filter, as one upsert of a batch body
 * or an import ({"id"?, "shape", "pose"?, "velocity"?, "layer"?, "mask"?}).
 * with_id: the object carries "id" (decoded into id); else id is the caller's.
 * On success op and shape are filled (op->id still unset). */
int cqpd_upsert(cqp_decoder *d, const json_t *v, bool with_id, char id[CQ_WORLD_ID_MAX + 1], cq_world_op *op,
                cqp_shape *shape);

#endif
