/// @file cqp/journal.h
/// The framing of the journal and snapshot files (pure functions, no I/O).
///
/// A file is a sequence of records, each a 20-byte header and a payload:
///
///     offset 0  u8  0xFF   magic
///     offset 1  u8  'Q'
///     offset 2  u8  version (CQP_RECORD_VERSION)
///     offset 3  u8  kind (cqp_record_kind)
///     offset 4  u32 payload length, little-endian
///     offset 8  u64 sequence number, little-endian
///     offset 16 u32 CRC32C (Castagnoli) of the payload, then bytes 0..16
///
/// A mutation's payload is a u8 method length, the method, a u16 path
/// length (little-endian), the path, and the request body (the rest).
///
/// The record's kind says how its body is encoded: CQP_REC_MUTATION a JSON
/// body, CQP_REC_MUTATION_MSGPACK the same payload with a MessagePack body,
/// kept as the client sent it. Snapshot records are JSON.
#ifndef CQP_JOURNAL_H
#define CQP_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cqp/api.h"
#include "cqp/format.h"

/// Bytes of a record header.
#define CQP_RECORD_HEADER 20
/// The format version written and accepted.
#define CQP_RECORD_VERSION 1
/// Largest payload a record may carry (1 GiB); a header claiming more is damage.
#define CQP_RECORD_MAX_PAYLOAD (1u << 30)

/// What a record holds.
typedef enum cqp_record_kind {
    CQP_REC_MUTATION = 1,   ///< journal: one mutating request (cqp_mutation)
    CQP_REC_SNAP_BEGIN = 2, ///< snapshot: first record; seq = the first journal seq after it; empty payload
    CQP_REC_SNAP_WORLD = 3, ///< snapshot: one world (cqp_mutation of its import); seq = its last applied seq
    CQP_REC_SNAP_END = 4,   ///< snapshot: last record; seq = the number of worlds; empty payload
    CQP_REC_MUTATION_MSGPACK = 5, ///< journal: one mutating request whose body is MessagePack
} cqp_record_kind;

/// The kind of a journal record holding a mutation whose body is in f.
CQP_API cqp_record_kind cqp_mutation_kind(cqp_format f);
/// True when kind is a journal mutation (of either body format); *f (may
/// be NULL) then receives its body's format.
CQP_API bool cqp_record_is_mutation(cqp_record_kind kind, cqp_format *f);

/// CRC32C of n bytes continuing from crc (start with 0): the SSE4.2
/// instruction when the CPU has it, else cqp_crc32c_table.
CQP_API uint32_t cqp_crc32c(uint32_t crc, const void *data, size_t n);
/// The same CRC, always table-driven (for tests and CPUs without SSE4.2).
CQP_API uint32_t cqp_crc32c_table(uint32_t crc, const void *data, size_t n);

/// Writes the header of a record of kind and seq whose payload is len
/// bytes with CRC32C payload_crc (cqp_crc32c(0, payload, len), which may be
/// taken before the sequence number is known: the record's checksum is
/// that CRC continued over the header's first 16 bytes). Returns 0, or -1
/// when len is over CQP_RECORD_MAX_PAYLOAD.
CQP_API int cqp_record_header(uint8_t out[CQP_RECORD_HEADER], cqp_record_kind kind, uint64_t seq, size_t len,
                              uint32_t payload_crc);

/// One decoded record; payload points into the decoded buffer.
typedef struct cqp_record {
    cqp_record_kind kind;
    uint64_t seq;
    const uint8_t *payload;
    uint32_t len;
    size_t offset; ///< where the record starts in the buffer
} cqp_record;

/// Outcome of cqp_record_next.
typedef enum cqp_scan {
    CQP_SCAN_RECORD,  ///< *rec filled, *pos moved past it
    CQP_SCAN_END,     ///< *pos is at the end of the buffer
    CQP_SCAN_TORN,    ///< from *pos to the end nothing proves damage: an interrupted write (cut it there)
    CQP_SCAN_CORRUPT, ///< the record at *pos is damaged and a valid one after it starts at *resume
} cqp_scan;

/// Decodes the record at *pos of buf[0..len). *pos is left at the damaged
/// bytes for TORN and CORRUPT; *resume (may be NULL) receives the offset of
/// the first valid record after them for CORRUPT. Such a record counts only
/// where it cannot be the damaged record's own payload: anywhere when the
/// header is no record's, else at or past the end its length claims, or
/// where the record would check out had its length field alone been
/// damaged (after a mutation, only a record numbered next). So a plausible
/// header whose length runs past the end of buf is TORN whatever follows.
CQP_API cqp_scan cqp_record_next(const uint8_t *buf, size_t len, size_t *pos, cqp_record *rec, size_t *resume);

/// A mutation as the client sent it. The pointers borrow the payload
/// (method and path are not NUL-terminated).
typedef struct cqp_mutation {
    const char *method;
    size_t method_len;
    const char *path;
    size_t path_len;
    const char *body;
    size_t body_len;
} cqp_mutation;

/// Writes the bytes that precede the body in a mutation's payload into out
/// (at least 3 + method_len + path_len bytes); returns their count, or 0
/// when the method is over 255 bytes or the path over 65535.
CQP_API size_t cqp_mutation_prefix(uint8_t *out, size_t size, const char *method, size_t method_len, const char *path,
                                   size_t path_len);
/// Splits a mutation payload; false when it does not parse.
CQP_API bool cqp_mutation_parse(const uint8_t *payload, size_t len, cqp_mutation *out);

#endif
