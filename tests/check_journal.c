/* The journal record codec (proto/src/journal.c). Oracles: the standard
 * CRC32C check value and a bitwise CRC written here from the polynomial;
 * record bytes laid out by hand from the format in cqp/journal.h; and for
 * the decoder, buffers whose damage the test made itself, so it knows
 * where every good record ends and where the damage starts. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cqp/journal.h"
#include "testutil.h"

Suite *journal_suite(void);

/* CRC32C one bit at a time from the reflected Castagnoli polynomial. */
static uint32_t ref_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint64_t next_u64(tu_rng *rng)
{
    uint64_t hi = (uint64_t)tu_uniform(rng, 0, 4294967296.0), lo = (uint64_t)tu_uniform(rng, 0, 4294967296.0);
    return hi << 32 | lo;
}

static void fill_random(tu_rng *rng, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)tu_uniform(rng, 0, 256);
}

/* A record laid out by hand: magic FF 'Q', version 1, kind, LE length,
 * LE seq, LE CRC of payload then the first 16 header bytes. */
static size_t ref_record(uint8_t *out, uint8_t kind, uint64_t seq, const uint8_t *payload, uint32_t n)
{
    out[0] = 0xFF;
    out[1] = 'Q';
    out[2] = 1;
    out[3] = kind;
    for (int i = 0; i < 4; i++)
        out[4 + i] = (uint8_t)(n >> (8 * i));
    for (int i = 0; i < 8; i++)
        out[8 + i] = (uint8_t)(seq >> (8 * i));
    uint8_t *tmp = malloc(n + 16u);
    ck_assert_ptr_nonnull(tmp);
    memcpy(tmp, payload, n);
    memcpy(tmp + n, out, 16);
    uint32_t crc = ref_crc(tmp, n + 16u);
    free(tmp);
    for (int i = 0; i < 4; i++)
        out[16 + i] = (uint8_t)(crc >> (8 * i));
    memcpy(out + 20, payload, n);
    return 20u + n;
}

START_TEST(crc_check_value)
{
    const char *s = "123456789";
    ck_assert_uint_eq(ref_crc((const uint8_t *)s, 9), 0xE3069283u);
    ck_assert_uint_eq(cqp_crc32c(0, s, 9), 0xE3069283u);
    ck_assert_uint_eq(cqp_crc32c_table(0, s, 9), 0xE3069283u);
    ck_assert_uint_eq(cqp_crc32c(0, s, 0), 0u);
    /* 32 zero bytes: the check value of RFC 3720 (iSCSI), appendix B.4 */
    uint8_t zeros[32] = {0};
    ck_assert_uint_eq(cqp_crc32c(0, zeros, 32), 0x8A9136AAu);
}
END_TEST

/* Random buffers of every length up to 300 at every alignment up to 8, and
 * split at a random point (continuing a CRC must equal one pass). */
START_TEST(crc_random)
{
    tu_rng rng = {20260611};
    uint8_t buf[320];
    for (size_t len = 0; len <= 300; len++) {
        for (size_t align = 0; align < 8; align++) {
            fill_random(&rng, buf, sizeof buf);
            const uint8_t *p = buf + align;
            uint32_t want = ref_crc(p, len);
            ck_assert_uint_eq(cqp_crc32c(0, p, len), want);
            ck_assert_uint_eq(cqp_crc32c_table(0, p, len), want);
            size_t cut = len ? (size_t)tu_uniform(&rng, 0, (double)len + 1) : 0;
            if (cut > len)
                cut = len;
            ck_assert_uint_eq(cqp_crc32c(cqp_crc32c(0, p, cut), p + cut, len - cut), want);
        }
    }
}
END_TEST

START_TEST(header_bytes_by_hand)
{
    tu_rng rng = {77};
    for (int round = 0; round < 200; round++) {
        uint32_t n = (uint32_t)tu_uniform(&rng, 0, 600);
        uint8_t payload[600];
        fill_random(&rng, payload, n);
        uint64_t seq = next_u64(&rng);
        uint8_t kind = (uint8_t)(1 + round % 4);
        uint8_t want[620];
        ref_record(want, kind, seq, payload, n);
        uint8_t got[CQP_RECORD_HEADER];
        ck_assert_int_eq(cqp_record_header(got, (cqp_record_kind)kind, seq, n, cqp_crc32c(0, payload, n)), 0);
        ck_assert_mem_eq(got, want, CQP_RECORD_HEADER);
    }
    uint8_t h[CQP_RECORD_HEADER];
    ck_assert_int_eq(cqp_record_header(h, CQP_REC_MUTATION, 1, (size_t)CQP_RECORD_MAX_PAYLOAD + 1, 0), -1);
    ck_assert_int_eq(cqp_record_header(h, CQP_REC_MUTATION, 1, CQP_RECORD_MAX_PAYLOAD, 0), 0);
}
END_TEST

/* A buffer of count records with random payloads (record i has seq
 * first + i); starts[i] is where record i begins, starts[count] the end. */
typedef struct log_buf {
    uint8_t *data;
    size_t len;
    size_t starts[65];
    uint32_t lens[64];
    uint8_t kinds[64];
    int count;
} log_buf;

static void make_log(log_buf *lb, tu_rng *rng, int count, uint64_t first)
{
    ck_assert_int_le(count, 64);
    lb->data = malloc((size_t)count * 700u + 1u);
    ck_assert_ptr_nonnull(lb->data);
    lb->len = 0;
    lb->count = count;
    for (int i = 0; i < count; i++) {
        uint8_t payload[600];
        uint32_t n = i % 7 == 3 ? 0 : (uint32_t)tu_uniform(rng, 1, 600);
        /* JSON-like text: payloads never hold 0xFF, as a journal's do not */
        for (uint32_t k = 0; k < n; k++)
            payload[k] = (uint8_t)tu_uniform(rng, 0x20, 0x7f);
        lb->starts[i] = lb->len;
        lb->lens[i] = n;
        lb->kinds[i] = (uint8_t)(1 + i % 4);
        lb->len += ref_record(lb->data + lb->len, lb->kinds[i], first + (uint64_t)i, payload, n);
    }
    lb->starts[count] = lb->len;
}

/* Decodes buf[0..len): the records until something else, checked against
 * lb; returns what ended the scan, with *stop where it stopped. */
static cqp_scan decode_all(const log_buf *lb, const uint8_t *buf, size_t len, uint64_t first, int *records,
                           size_t *stop, size_t *resume)
{
    size_t pos = 0;
    *records = 0;
    for (;;) {
        cqp_record r;
        cqp_scan s = cqp_record_next(buf, len, &pos, &r, resume);
        if (s != CQP_SCAN_RECORD) {
            *stop = pos;
            return s;
        }
        int i = (*records)++;
        ck_assert_int_lt(i, lb->count);
        ck_assert_uint_eq(r.offset, lb->starts[i]);
        ck_assert_uint_eq(pos, lb->starts[i + 1]);
        ck_assert_uint_eq(r.seq, first + (uint64_t)i);
        ck_assert_int_eq(r.kind, lb->kinds[i]);
        ck_assert_uint_eq(r.len, lb->lens[i]);
        ck_assert_ptr_eq(r.payload, buf + lb->starts[i] + 20);
    }
}

START_TEST(round_trip)
{
    tu_rng rng = {5};
    log_buf lb;
    make_log(&lb, &rng, 40, 1000);
    int n;
    size_t stop, resume;
    ck_assert_int_eq(decode_all(&lb, lb.data, lb.len, 1000, &n, &stop, &resume), CQP_SCAN_END);
    ck_assert_int_eq(n, 40);
    ck_assert_uint_eq(stop, lb.len);
    /* an empty buffer is a clean end */
    size_t pos = 0;
    cqp_record r;
    ck_assert_int_eq(cqp_record_next(lb.data, 0, &pos, &r, NULL), CQP_SCAN_END);
    free(lb.data);
}
END_TEST

/* The journal cut at every byte of its last record: every complete record
 * is kept and the rest is a torn tail starting where the last one did. */
START_TEST(torn_tail_sweep)
{
    tu_rng rng = {11};
    log_buf lb;
    make_log(&lb, &rng, 12, 1);
    size_t last = lb.starts[11];
    for (size_t cut = last; cut < lb.len; cut++) {
        int n;
        size_t stop, resume;
        cqp_scan s = decode_all(&lb, lb.data, cut, 1, &n, &stop, &resume);
        ck_assert_int_eq(n, 11);
        ck_assert_uint_eq(stop, last);
        ck_assert_int_eq(s, cut == last ? CQP_SCAN_END : CQP_SCAN_TORN);
    }
    free(lb.data);
}
END_TEST

/* Garbage after the last record (random bytes, 0xFF included; a copy of a
 * header; a cut record followed by garbage): all records kept, the rest torn. */
START_TEST(garbage_after_last)
{
    tu_rng rng = {12};
    log_buf lb;
    make_log(&lb, &rng, 10, 7);
    uint8_t *buf = malloc(lb.len + 4096);
    ck_assert_ptr_nonnull(buf);
    for (int round = 0; round < 300; round++) {
        size_t keep = round % 3 == 2 ? lb.starts[9] + (size_t)tu_uniform(&rng, 1, (double)(lb.len - lb.starts[9]))
                                     : lb.len;
        int whole = keep == lb.len ? 10 : 9;
        memcpy(buf, lb.data, keep);
        size_t extra = (size_t)tu_uniform(&rng, 1, 2000);
        fill_random(&rng, buf + keep, extra);
        if (round % 3 == 1) { /* starts with the header of a record that has a payload */
            int i = lb.lens[round % 10] ? round % 10 : round % 10 + 1;
            memcpy(buf + keep, lb.data + lb.starts[i], extra < 20 ? extra : 20);
        }
        int n;
        size_t stop, resume;
        cqp_scan s = decode_all(&lb, buf, keep + extra, 7, &n, &stop, &resume);
        ck_assert_int_eq(n, whole);
        ck_assert_uint_eq(stop, lb.starts[whole]);
        ck_assert_int_eq(s, CQP_SCAN_TORN);
    }
    free(buf);
    free(lb.data);
}
END_TEST

/* Any byte of a middle record flipped: the records before it are kept,
 * then corruption at that record, resuming at the next one. */
START_TEST(flipped_byte_is_corruption)
{
    tu_rng rng = {13};
    log_buf lb;
    make_log(&lb, &rng, 9, 50);
    int mid = 4;
    uint8_t *buf = malloc(lb.len);
    ck_assert_ptr_nonnull(buf);
    for (size_t at = lb.starts[mid]; at < lb.starts[mid + 1]; at++) {
        memcpy(buf, lb.data, lb.len);
        buf[at] ^= (uint8_t)(1u << (at % 8));
        int n;
        size_t stop, resume = 0;
        cqp_scan s = decode_all(&lb, buf, lb.len, 50, &n, &stop, &resume);
        ck_assert_int_eq(s, CQP_SCAN_CORRUPT);
        ck_assert_int_eq(n, mid);
        ck_assert_uint_eq(stop, lb.starts[mid]);
        ck_assert_uint_eq(resume, lb.starts[mid + 1]);
    }
    /* the same flip in the last record is only a torn tail */
    memcpy(buf, lb.data, lb.len);
    buf[lb.starts[8] + 21] ^= 1;
    int n;
    size_t stop, resume;
    ck_assert_int_eq(decode_all(&lb, buf, lb.len, 50, &n, &stop, &resume), CQP_SCAN_TORN);
    ck_assert_int_eq(n, 8);
    free(buf);
    free(lb.data);
}
END_TEST

/* A header of another version or an unknown kind frames nothing. */
START_TEST(unknown_version_or_kind)
{
    uint8_t rec[40];
    const uint8_t payload[] = "{}";
    ref_record(rec, 1, 3, payload, 2);
    rec[2] = 2; /* version; the CRC made over the changed byte too */
    uint8_t fixed[40];
    memcpy(fixed, rec, 22);
    uint8_t tmp[18];
    memcpy(tmp, payload, 2);
    memcpy(tmp + 2, fixed, 16);
    uint32_t crc = ref_crc(tmp, 18);
    for (int i = 0; i < 4; i++)
        fixed[16 + i] = (uint8_t)(crc >> (8 * i));
    size_t pos = 0;
    cqp_record r;
    ck_assert_int_eq(cqp_record_next(fixed, 22, &pos, &r, NULL), CQP_SCAN_TORN);
    ck_assert_uint_eq(pos, 0);
    ref_record(rec, 9, 3, payload, 2);
    ck_assert_int_eq(cqp_record_next(rec, 22, &pos, &r, NULL), CQP_SCAN_TORN);
}
END_TEST

START_TEST(mutation_payload)
{
    uint8_t buf[128];
    size_t n = cqp_mutation_prefix(buf, sizeof buf, "PUT", 3, "/v1/worlds/a", 12);
    ck_assert_uint_eq(n, 18);
    const uint8_t want[] = {3, 'P', 'U', 'T', 12, 0, '/', 'v', '1', '/', 'w', 'o', 'r', 'l', 'd', 's', '/', 'a'};
    ck_assert_mem_eq(buf, want, sizeof want);
    memcpy(buf + n, "{\"x\":1}", 7);
    cqp_mutation m;
    ck_assert(cqp_mutation_parse(buf, n + 7, &m));
    ck_assert_uint_eq(m.method_len, 3);
    ck_assert_int_eq(memcmp(m.method, "PUT", 3), 0);
    ck_assert_uint_eq(m.path_len, 12);
    ck_assert_int_eq(memcmp(m.path, "/v1/worlds/a", 12), 0);
    ck_assert_uint_eq(m.body_len, 7);
    ck_assert_int_eq(memcmp(m.body, "{\"x\":1}", 7), 0);
    /* no body */
    ck_assert(cqp_mutation_parse(buf, n, &m));
    ck_assert_uint_eq(m.body_len, 0);
    /* every shorter prefix lacks part of the method or the path */
    for (size_t cut = 0; cut < n; cut++)
        ck_assert(!cqp_mutation_parse(buf, cut, &m));
    /* a path longer than 65535 bytes does not fit the format; nor a too small buffer */
    static char long_path[70000];
    memset(long_path, 'a', sizeof long_path);
    ck_assert_uint_eq(cqp_mutation_prefix(buf, sizeof buf, "PUT", 3, long_path, 65536), 0);
    ck_assert_uint_eq(cqp_mutation_prefix(buf, 10, "PUT", 3, "/v1/worlds/a", 12), 0);
}
END_TEST

/* Kind 5 is a mutation whose body is MessagePack: same payload layout,
 * and its body may hold 0xFF. Kind 6 frames nothing. */
START_TEST(msgpack_mutation_kind)
{
    ck_assert_int_eq(cqp_mutation_kind(CQP_JSON), 1);
    ck_assert_int_eq(cqp_mutation_kind(CQP_MSGPACK), 5);
    cqp_format f = CQP_MSGPACK;
    ck_assert(cqp_record_is_mutation((cqp_record_kind)1, &f) && f == CQP_JSON);
    ck_assert(cqp_record_is_mutation((cqp_record_kind)5, &f) && f == CQP_MSGPACK);
    for (int k = 2; k <= 4; k++)
        ck_assert(!cqp_record_is_mutation((cqp_record_kind)k, NULL));
    ck_assert(!cqp_record_is_mutation((cqp_record_kind)6, NULL));

    /* POST /b with the body {"x": -1}: fixmap 1, fixstr "x", fixint -1 (0xff). */
    const uint8_t payload[] = {4, 'P', 'O', 'S', 'T', 2, 0, '/', 'b', 0x81, 0xa1, 'x', 0xff};
    uint8_t rec[64];
    size_t n = ref_record(rec, 5, 7, payload, sizeof payload);
    uint8_t h[CQP_RECORD_HEADER];
    ck_assert_int_eq(cqp_record_header(h, CQP_REC_MUTATION_MSGPACK, 7, sizeof payload,
                                       cqp_crc32c(0, payload, sizeof payload)),
                     0);
    ck_assert_mem_eq(h, rec, CQP_RECORD_HEADER);
    size_t pos = 0;
    cqp_record r;
    ck_assert_int_eq(cqp_record_next(rec, n, &pos, &r, NULL), CQP_SCAN_RECORD);
    ck_assert_int_eq(r.kind, CQP_REC_MUTATION_MSGPACK);
    ck_assert_uint_eq(r.seq, 7);
    cqp_mutation m;
    ck_assert(cqp_mutation_parse(r.payload, r.len, &m));
    ck_assert_uint_eq(m.body_len, 4);
    ck_assert_int_eq(memcmp(m.body, payload + 9, 4), 0);

    rec[3] = 6; /* the CRC covers the kind too, but the kind is refused first */
    pos = 0;
    ck_assert_int_eq(cqp_record_next(rec, n, &pos, &r, NULL), CQP_SCAN_TORN);
}
END_TEST

/* A record whose payload holds a whole valid record (a MessagePack body
 * can: here an empty snapshot header, numbered as the record after its
 * own would be), after a whole record. Read from the start, it is one
 * record; cut at any byte, it is a torn tail at its start, not corruption
 * resuming at the record inside it: an append-only file ends short only
 * by an interrupted write. */
START_TEST(torn_record_holding_a_frame)
{
    uint8_t inner[32], buf[160];
    size_t in = ref_record(inner, 2, 9, (const uint8_t *)"", 0);
    uint8_t payload[64] = {4, 'P', 'O', 'S', 'T', 2, 0, '/', 'b'};
    memcpy(payload + 9, inner, in);
    payload[9 + in] = 0xc0; /* a byte after it, so a cut last byte leaves it whole */
    size_t first = ref_record(buf, 1, 7, (const uint8_t *)"{}", 2);
    size_t n = first + ref_record(buf + first, 5, 8, payload, (uint32_t)(10 + in));
    size_t pos = 0, resume = 0;
    cqp_record r;
    ck_assert_int_eq(cqp_record_next(buf, n, &pos, &r, &resume), CQP_SCAN_RECORD);
    ck_assert_int_eq(cqp_record_next(buf, n, &pos, &r, &resume), CQP_SCAN_RECORD);
    ck_assert_uint_eq(r.seq, 8);
    ck_assert_int_eq(cqp_record_next(buf, n, &pos, &r, &resume), CQP_SCAN_END);
    for (size_t cut = first + 1; cut < n; cut++) {
        pos = first;
        ck_assert_msg(cqp_record_next(buf, cut, &pos, &r, &resume) == CQP_SCAN_TORN, "cut at %zu", cut);
        ck_assert_uint_eq(pos, first);
    }
}
END_TEST

/* A middle record's length field damaged to any length a record may have
 * (past the end of the file, or not): corruption resuming at the next
 * record, since the record checks out with its true length. Over the
 * limit the header is no record's, and the same. */
START_TEST(damaged_length_is_corruption)
{
    tu_rng rng = {14};
    log_buf lb;
    make_log(&lb, &rng, 9, 50);
    int mid = 4;
    size_t at = lb.starts[mid];
    const uint32_t lengths[] = {lb.lens[mid] + 1, lb.lens[mid] + 200, (uint32_t)lb.len, (uint32_t)lb.len + 1000,
                                1u << 20, CQP_RECORD_MAX_PAYLOAD, CQP_RECORD_MAX_PAYLOAD + 1, 0xFFFFFFFFu};
    uint8_t *buf = malloc(lb.len);
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        memcpy(buf, lb.data, lb.len);
        for (int k = 0; k < 4; k++)
            buf[at + 4 + (size_t)k] = (uint8_t)(lengths[i] >> (8 * k));
        int n;
        size_t stop, resume = 0;
        ck_assert_msg(decode_all(&lb, buf, lb.len, 50, &n, &stop, &resume) == CQP_SCAN_CORRUPT, "length %u",
                      lengths[i]);
        ck_assert_int_eq(n, mid);
        ck_assert_uint_eq(stop, at);
        ck_assert_uint_eq(resume, lb.starts[mid + 1]);
    }
    free(buf);
    free(lb.data);
}
END_TEST

/* The reference CRC32C of a record's payload then its header's first 16
 * bytes: what the header stores. */
static uint32_t stored_crc(const uint8_t *payload, size_t n, const uint8_t *head16)
{
    uint8_t tmp[256];
    ck_assert_uint_le(n + 16, sizeof tmp);
    memcpy(tmp, payload, n);
    memcpy(tmp + n, head16, 16);
    return ref_crc(tmp, n + 16);
}

/* Sets the 4 bytes at payload + at so that the reference CRC of the
 * payload (n bytes) then head16 is want: the CRC is affine in those 32
 * bits, so one column per bit and Gauss-Jordan elimination over GF(2). */
static void forge_crc(uint8_t *payload, size_t n, const uint8_t *head16, size_t at, uint32_t want)
{
    memset(payload + at, 0, 4);
    uint32_t base = stored_crc(payload, n, head16), col[32];
    for (int b = 0; b < 32; b++) {
        payload[at + (size_t)(b / 8)] = (uint8_t)(1u << (b % 8));
        col[b] = stored_crc(payload, n, head16) ^ base;
        payload[at + (size_t)(b / 8)] = 0;
    }
    /* rows: the 32 output bits; each row holds its coefficients and its target */
    uint64_t row[32];
    for (int r = 0; r < 32; r++) {
        row[r] = (uint64_t)(((want ^ base) >> r) & 1u) << 32;
        for (int b = 0; b < 32; b++)
            row[r] |= (uint64_t)((col[b] >> r) & 1u) << b;
    }
    for (int b = 0; b < 32; b++) {
        int p = b;
        while (p < 32 && !((row[p] >> b) & 1u))
            p++;
        ck_assert_int_lt(p, 32); /* CRC32C is a bijection on 32 bits: always solvable */
        uint64_t t = row[p];
        row[p] = row[b];
        row[b] = t;
        for (int r = 0; r < 32; r++)
            if (r != b && ((row[r] >> b) & 1u))
                row[r] ^= row[b];
    }
    uint32_t x = 0;
    for (int b = 0; b < 32; b++)
        x |= (uint32_t)((row[b] >> 32) & 1u) << b;
    for (int k = 0; k < 4; k++)
        payload[at + (size_t)k] = (uint8_t)(x >> (8 * k));
    ck_assert_uint_eq(stored_crc(payload, n, head16), want);
}

/* A body that forges its CRC so that its record, cut where the record it
 * holds starts, checks out: only a frame numbered as the record after its
 * own then passes for it (corruption); numbered otherwise, as a body that
 * cannot see its record's number would guess, the cut record is torn. */
START_TEST(forged_length_needs_the_next_number)
{
    const uint64_t seq = 41;
    const uint64_t inner_seqs[] = {seq + 1, seq, seq + 2, 1, 0};
    for (size_t i = 0; i < sizeof inner_seqs / sizeof inner_seqs[0]; i++) {
        uint8_t payload[96] = {3, 'P', 'U', 'T', 2, 0, '/', 'b', 0x81};
        size_t cut_at = 9; /* where the record inside starts, in the payload */
        size_t in = ref_record(payload + cut_at, 1, inner_seqs[i], (const uint8_t *)"", 0);
        size_t n = cut_at + in + 4 + 1; /* the inner record, 4 forged bytes, a last byte */
        payload[n - 1] = 0xc0;
        uint8_t head[128], head_cut[16];
        ref_record(head, 5, seq, payload, (uint32_t)n); /* for its first 16 bytes, which the forging leaves alone */
        memcpy(head_cut, head, 16);
        for (int k = 0; k < 4; k++)
            head_cut[4 + k] = (uint8_t)(cut_at >> (8 * k));
        forge_crc(payload, n, head, cut_at + in, stored_crc(payload, cut_at, head_cut));
        uint8_t rec[128];
        size_t len = ref_record(rec, 5, seq, payload, (uint32_t)n);
        size_t pos = 0, resume = 0;
        cqp_record r;
        ck_assert_int_eq(cqp_record_next(rec, len, &pos, &r, &resume), CQP_SCAN_RECORD);
        pos = 0;
        cqp_scan want = inner_seqs[i] == seq + 1 ? CQP_SCAN_CORRUPT : CQP_SCAN_TORN;
        ck_assert_msg(cqp_record_next(rec, len - 1, &pos, &r, &resume) == want, "inner seq %llu",
                      (unsigned long long)inner_seqs[i]);
        ck_assert_uint_eq(pos, 0);
        if (want == CQP_SCAN_CORRUPT)
            ck_assert_uint_eq(resume, 20 + cut_at);
    }
}
END_TEST

Suite *journal_suite(void)
{
    Suite *s = suite_create("journal");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, crc_check_value);
    tcase_add_test(tc, crc_random);
    tcase_add_test(tc, header_bytes_by_hand);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, torn_tail_sweep);
    tcase_add_test(tc, garbage_after_last);
    tcase_add_test(tc, flipped_byte_is_corruption);
    tcase_add_test(tc, unknown_version_or_kind);
    tcase_add_test(tc, mutation_payload);
    tcase_add_test(tc, msgpack_mutation_kind);
    tcase_add_test(tc, torn_record_holding_a_frame);
    tcase_add_test(tc, damaged_length_is_corruption);
    tcase_add_test(tc, forged_length_needs_the_next_number);
    suite_add_tcase(s, tc);
    return s;
}
