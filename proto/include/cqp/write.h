/// @file cqp/write.h
/// A growable byte buffer and a streaming JSON or MessagePack writer over
/// it. Responses of tens of thousands of results are written straight into
/// one buffer (no tree, no quadratic work); JSON doubles are written in the
/// shortest form that reads back to the same double, MessagePack ones as
/// float64. Not thread-safe: one writer per request.
#ifndef CQP_WRITE_H
#define CQP_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cq/math.h"
#include "cqp/api.h"
#include "cqp/format.h"

/// A growable byte buffer (zero-initialise it, or cqp_buf_init). After an
/// allocation failure `oom` is set, later appends are dropped, and the
/// contents must not be sent. With a `limit`, an append that would take
/// the buffer past it makes it `over`: its contents must not be sent
/// either, and cqp_buf_size counts the length the appends would have
/// reached, holding no more than the limit meanwhile.
typedef struct cqp_buf {
    char *data;    ///< owned; NUL-terminated when not NULL
    size_t len;
    size_t cap;
    bool oom;
    bool over;     ///< passed the limit: the bytes are dropped as they come
    size_t limit;  ///< most bytes it may hold (0: no limit); kept by reset, cleared by free
    size_t wanted; ///< when over: the bytes dropped before data[0..len)
} cqp_buf;

/// The length the appends to buf have reached: len, or when over the
/// length they would have reached without the limit.
CQP_API size_t cqp_buf_size(const cqp_buf *buf);

/// Empties buf without freeing its storage (clears oom and over).
CQP_API void cqp_buf_reset(cqp_buf *buf);
/// Frees buf's storage and zeroes it.
CQP_API void cqp_buf_free(cqp_buf *buf);
/// Makes room for n more bytes (and the NUL) with one allocation of just
/// that size, for a buffer whose final length is known: nothing is then
/// moved as it fills. False when memory ran out; buf is then unchanged
/// (not oom). False too when n would pass the limit: buf is then over.
/// An oom buffer is never given room.
CQP_API bool cqp_buf_reserve(cqp_buf *buf, size_t n);
/// Gives buf (its storage freed first) storage of cap bytes (cap > 0) that
/// the buffer hook (cqp_set_buf_funcs) allocated: buf owns it and starts
/// empty, neither oom nor over, without a limit. For a block set aside
/// beforehand, so something can be written when memory has run out.
CQP_API void cqp_buf_adopt(cqp_buf *buf, char *storage, size_t cap);
/// Appends n bytes.
CQP_API void cqp_buf_append(cqp_buf *buf, const void *bytes, size_t n);
/// Appends a NUL-terminated string.
CQP_API void cqp_buf_puts(cqp_buf *buf, const char *s);
/// Appends printf-formatted text.
CQP_API void cqp_buf_printf(cqp_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/// Deepest nesting the writer supports.
#define CQP_WRITER_MAX_DEPTH 32

/// A writer appending JSON or MessagePack to a caller-owned buffer, so a
/// handler writes each answer once for both formats. Keys and values are
/// written in call order. JSON: commas, colons and (when pretty) newlines
/// with two-space indentation are inserted by the writer. MessagePack:
/// every header and integer takes its smallest encoding (a map or array's
/// count is patched in when it ends), every cqp_num is a float64, keys
/// and strings are str (docs/MSGPACK.md, "Writing answers", lists each
/// choice); a container of more than 2^32-1 elements is not representable
/// and marks the buffer oom. No container moves more than its first 65535
/// elements, whatever its length.
typedef struct cqp_writer {
    cqp_buf *buf;  ///< borrowed
    cqp_format format;
    bool pretty;   ///< JSON only
    /// Write -0 as "-0" (exports and snapshots: stored values read back
    /// bit for bit). Off by default: an answer has one zero, written "0".
    bool keep_negative_zero;
    int depth;
    bool after_key;
    uint32_t count[CQP_WRITER_MAX_DEPTH]; ///< elements (a map's: members) written at each level
    size_t start[CQP_WRITER_MAX_DEPTH];   ///< MessagePack: where each open container's header is
} cqp_writer;

/// Starts a JSON writer appending to buf.
CQP_API void cqp_writer_init(cqp_writer *w, cqp_buf *buf, bool pretty);
/// Starts a writer of format f appending to buf (pretty applies to JSON).
CQP_API void cqp_writer_init_format(cqp_writer *w, cqp_buf *buf, cqp_format f, bool pretty);

CQP_API void cqp_obj_begin(cqp_writer *w);
CQP_API void cqp_obj_end(cqp_writer *w);
CQP_API void cqp_arr_begin(cqp_writer *w);
CQP_API void cqp_arr_end(cqp_writer *w);
/// An object key; the next call writes its value.
CQP_API void cqp_key(cqp_writer *w, const char *key);
/// A string value of strlen(s) bytes; JSON escapes control characters,
/// quote and backslash (UTF-8 passes through).
CQP_API void cqp_str(cqp_writer *w, const char *s);
/// A double in its shortest round-trip form (cqp_format_double). -0 is
/// written "0" unless keep_negative_zero is set: a negated or mirrored
/// zero (a normal's 0 components, a zero depth) is the same number, and one
/// value has one spelling. A non-finite value is written as null (nil);
/// the core never produces one. MessagePack: always a float64.
CQP_API void cqp_num(cqp_writer *w, double v);
CQP_API void cqp_int(cqp_writer *w, int64_t v);
CQP_API void cqp_uint(cqp_writer *w, uint64_t v);
CQP_API void cqp_bool(cqp_writer *w, bool v);
CQP_API void cqp_null(cqp_writer *w);
/// [x, y, z]
CQP_API void cqp_vec3(cqp_writer *w, cq_vec3 v);
/// A string value of n bytes (UTF-8, may hold NUL), escaped in JSON as
/// cqp_str escapes (a NUL as \u0000).
CQP_API void cqp_strn(cqp_writer *w, const char *s, size_t n);
/// One complete value already encoded in the writer's format, copied
/// verbatim (e.g. a handler's body inside the stream transport's envelope).
CQP_API void cqp_raw(cqp_writer *w, const char *encoded, size_t n);

/// One object member in one call: cqp_key(w, key) then the value call
/// its name says, the bytes exactly those of the two calls. An encoder
/// writes a member a line (writer_kv.c).
CQP_API void cqp_kv_str(cqp_writer *w, const char *key, const char *s);
/// The member key: s, or null when s is NULL (an id that is gone).
CQP_API void cqp_kv_str_or_null(cqp_writer *w, const char *key, const char *s);
CQP_API void cqp_kv_num(cqp_writer *w, const char *key, double v);
CQP_API void cqp_kv_int(cqp_writer *w, const char *key, int64_t v);
CQP_API void cqp_kv_uint(cqp_writer *w, const char *key, uint64_t v);
CQP_API void cqp_kv_bool(cqp_writer *w, const char *key, bool v);
CQP_API void cqp_kv_null(cqp_writer *w, const char *key);
CQP_API void cqp_kv_vec3(cqp_writer *w, const char *key, cq_vec3 v);
/// The member key opening an object (cqp_obj_end closes it).
CQP_API void cqp_kv_obj(cqp_writer *w, const char *key);
/// The member key opening an array (cqp_arr_end closes it).
CQP_API void cqp_kv_arr(cqp_writer *w, const char *key);

/// Longest text cqp_format_double writes, with its NUL.
#define CQP_DOUBLE_CHARS 32
/// Writes the shortest decimal text (at most 17 significant digits) that
/// strtod reads back as exactly v; integers within 2^53 have no exponent or
/// point ("3"), -0 is "-0". v must be finite. Returns the length.
CQP_API int cqp_format_double(double v, char out[CQP_DOUBLE_CHARS]);

#endif
