/// @file cqp/value.h
/// A read-only, format-neutral view of a request value, so each decoder is
/// written once for both wire formats (API.md section 1). A view has two
/// backings: a jansson tree (JSON bodies) and the bytes of a MessagePack
/// value that cqp_mp_check accepted. A view borrows what it points at and
/// allocates nothing; reading one never fails, because the backing was
/// validated before any view was made of it.
#ifndef CQP_VALUE_H
#define CQP_VALUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cqp/api.h"
#include "cqp/alloc.h"
#include "cqp/format.h"
#include "cqp/problem.h"

/// What a value is. INT and REAL are both numbers: a JSON integer (no
/// fraction or exponent) or a MessagePack int is INT, anything else REAL.
typedef enum cqp_vtype {
    CQP_V_ABSENT, ///< no value (a missing member, the end of an iteration)
    CQP_V_NULL,
    CQP_V_BOOL,
    CQP_V_INT,
    CQP_V_REAL,
    CQP_V_STRING,
    CQP_V_ARRAY,
    CQP_V_OBJECT,
} cqp_vtype;

/// A view of one value. Copy it freely; it is valid while its backing is.
typedef struct cqp_value {
    const void *ref;   ///< the json_t, or the value's first byte; NULL: absent
    cqp_format format;
} cqp_value;

/// A view of a jansson value (borrowed; NULL gives an absent view).
CQP_API cqp_value cqp_value_json(const json_t *v);
/// A view of the MessagePack value starting at p, which lies inside bytes
/// cqp_mp_check accepted (NULL gives an absent view).
CQP_API cqp_value cqp_value_mp(const char *p);
/// The absent view.
static inline cqp_value cqp_value_absent(void) { return (cqp_value){0}; }
/// True unless the view is absent.
static inline bool cqp_value_present(cqp_value v) { return v.ref != NULL; }

/// What the value is (CQP_V_ABSENT for an absent view).
CQP_API cqp_vtype cqp_value_type(cqp_value v);
/// True for an INT or a REAL.
static inline bool cqp_value_is_number(cqp_value v)
{
    cqp_vtype t = cqp_value_type(v);
    return t == CQP_V_INT || t == CQP_V_REAL;
}
/// A BOOL's value.
CQP_API bool cqp_value_bool(cqp_value v);
/// An INT's value. A MessagePack uint64 above INT64_MAX reads as INT64_MAX,
/// which every range check refuses as too large.
CQP_API int64_t cqp_value_int(cqp_value v);
/// True when an INT read as INT64_MAX only because it is larger (a
/// MessagePack uint64 above INT64_MAX; JSON's parser refuses such numbers),
/// for the few integers no range check bounds (an id given as an integer).
CQP_API bool cqp_value_int_saturated(cqp_value v);
/// An INT's or REAL's value as a double (float32 widened, any integer
/// rounded to the nearest double). It may be NaN or infinite: callers check.
CQP_API double cqp_value_number(cqp_value v);
/// Up to n leading elements of an ARRAY read as numbers (as cqp_value_number
/// reads them) into out, stopping at the first that is not a number (INT
/// or REAL); returns how many were read. One call for a vector's few
/// numbers, which are most of a large body.
CQP_API size_t cqp_value_numbers(cqp_value array, double *out, size_t n);
/// A STRING's bytes (valid UTF-8, *len of them, not NUL-terminated, and
/// possibly holding a NUL byte).
CQP_API const char *cqp_value_string(cqp_value v, size_t *len);
/// Elements of an ARRAY, members of an OBJECT (0 for anything else).
CQP_API size_t cqp_value_size(cqp_value v);

/// Iteration over an array's elements or an object's members, in order.
/// Caller-owned; no allocation.
typedef struct cqp_iter {
    cqp_value of;
    size_t index, count;
    const char *at;   ///< MessagePack: where the iteration stands (value.c)
    void *json_iter;  ///< JSON objects: jansson's iterator
} cqp_iter;

/// Starts iterating an ARRAY or OBJECT (any other value iterates nothing).
CQP_API void cqp_value_iter_init(cqp_iter *it, cqp_value v);
/// The next array element into *elem; false at the end.
CQP_API bool cqp_value_next(cqp_iter *it, cqp_value *elem);
/// The next object member: its key (*key_len bytes, not NUL-terminated)
/// and value; false at the end.
CQP_API bool cqp_value_next_member(cqp_iter *it, const char **key, size_t *key_len, cqp_value *value);
/// obj[key] (key NUL-terminated), or the absent view when obj is not an
/// object or has no such member. Linear in the members before it.
CQP_API cqp_value cqp_value_get(cqp_value obj, const char *key);

/// True when key[0..key_len) is the NUL-terminated name.
static inline bool cqp_value_key_is(const char *key, size_t key_len, const char *name)
{
    size_t i = 0;
    for (; i < key_len; i++)
        if (name[i] != key[i] || !name[i])
            return false;
    return name[i] == '\0';
}

/// Deepest nesting of arrays and maps cqp_mp_check accepts (the body's
/// root is depth 1; the deepest request, pairs of hulls, needs 6, and the
/// stream's envelope one more).
#define CQP_MP_MAX_DEPTH 32

/// Validates data[0..len) as exactly one MessagePack value a request may
/// hold, before anything is decoded or allocated: no count is believed
/// beyond the bytes left. Refused with a CQP_P_BAD_MSGPACK problem whose
/// detail says what and where (the byte offset): truncation, trailing
/// bytes, a non-string map key, a duplicate key, an ext or bin value, the
/// reserved byte 0xc1, a string that is not UTF-8, nesting past max_depth
/// (at most CQP_MP_MAX_DEPTH: a larger one acts as CQP_MP_MAX_DEPTH; 0
/// admits no array or map), the empty input, and one over INT_MAX bytes
/// (docs/MSGPACK.md says why of each). Numbers of every width, float32,
/// NaN and Inf pass: the decoders check them as they check JSON numbers.
/// O(n log n) in the bytes; scratch memory (through cqp_malloc, so a
/// request's budget applies) only for the duplicate check of maps with
/// many members. Returns 0, or -1 with *p filled (a BUSY problem when the
/// scratch could not be had).
CQP_API int cqp_mp_check(const char *data, size_t len, int max_depth, cqp_problem *p);

/// Bytes taken by the validated MessagePack value starting at p (so a
/// member can be copied or embedded verbatim).
CQP_API size_t cqp_mp_span(const char *p);

/// A request body opened for decoding: JSON parsed into a tree (owned
/// here), MessagePack checked where it lies (borrowed).
typedef struct cqp_body {
    cqp_value root; ///< the body's view; absent for an empty body
    json_t *tree;   ///< JSON: the parsed tree (new reference), else NULL
} cqp_body;

/// Opens data[0..len) of format f: JSON through cqp_parse (BAD_JSON),
/// MessagePack through cqp_mp_check with CQP_MP_MAX_DEPTH (BAD_MSGPACK).
/// An empty body opens as absent. Returns 0, or -1 with *p filled and
/// nothing held.
CQP_API int cqp_body_open(cqp_body *b, cqp_format f, const char *data, size_t len, cqp_problem *p);
/// Releases what b holds (the tree) and makes it absent.
CQP_API void cqp_body_close(cqp_body *b);

#endif
