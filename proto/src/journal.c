/// @file proto/src/journal.c
/// Record framing for the journal and snapshot files: CRC32C, headers,
/// the decoder that tells a torn tail from corruption, and the payload of
/// a mutation. Pure functions over caller buffers.
#include "cqp/journal.h"

#include <string.h>

/// CRC32C (reflected polynomial 0x82F63B78) of every byte value.
static const uint32_t crc_table[256] = {
    0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c,
    0x26a1e7e8, 0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b,
    0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c,
    0xf165b798, 0x030e349b, 0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
    0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54, 0x5d1d08bf, 0xaf768bbc,
    0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a,
    0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
    0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
    0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad,
    0x1642ae59, 0xe4292d5a, 0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a,
    0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595, 0x417b1dbc, 0xb3109ebf,
    0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
    0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c, 0xfe53516f,
    0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
    0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f,
    0x3ac7f2eb, 0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
    0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e,
    0x4767748a, 0xb50cf789, 0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859,
    0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46, 0x7198540d, 0x83f3d70e,
    0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
    0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
    0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c,
    0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4,
    0xe9141340, 0x1b7f9043, 0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
    0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3, 0x55326b08, 0xa759e80b,
    0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c,
    0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6, 0x502036a5,
    0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
    0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975,
    0x0e330a81, 0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d,
    0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905,
    0xd9f75af1, 0x2b9cd9f2, 0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
    0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530, 0x0417b1db, 0xf67c32d8,
    0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff,
    0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
    0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
    0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78,
    0x7fab5e8c, 0x8dc0dd8f, 0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee,
    0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1, 0x69e9f0d5, 0x9b8273d6,
    0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
    0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a, 0xc69f7b69,
    0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
    0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351
};

uint32_t cqp_crc32c_table(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__) && defined(__GNUC__)
/// The SSE4.2 crc32 instruction computes exactly CRC32C, 8 bytes a step.
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t c = ~crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    uint32_t c32 = (uint32_t)c;
    for (; n > 0; n--, p++)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return ~c32;
}

uint32_t cqp_crc32c(uint32_t crc, const void *data, size_t n)
{
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_sse42(crc, data, n);
    return cqp_crc32c_table(crc, data, n);
}
#else
uint32_t cqp_crc32c(uint32_t crc, const void *data, size_t n) { return cqp_crc32c_table(crc, data, n); }
#endif

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

int cqp_record_header(uint8_t out[CQP_RECORD_HEADER], cqp_record_kind kind, uint64_t seq, size_t len,
                      uint32_t payload_crc)
{
    if (len > CQP_RECORD_MAX_PAYLOAD)
        return -1;
    out[0] = 0xFF;
    out[1] = 'Q';
    out[2] = CQP_RECORD_VERSION;
    out[3] = (uint8_t)kind;
    put32(out + 4, (uint32_t)len);
    put64(out + 8, seq);
    put32(out + 16, cqp_crc32c(payload_crc, out, 16));
    return 0;
}

/// True when the header at pos could be a record's, as far as it can be
/// judged without its payload: magic, version, a known kind, and a length
/// a record may have. False when fewer than CQP_RECORD_HEADER bytes remain.
static bool plausible(const uint8_t *buf, size_t len, size_t pos)
{
    if (len - pos < CQP_RECORD_HEADER)
        return false;
    const uint8_t *h = buf + pos;
    return h[0] == 0xFF && h[1] == 'Q' && h[2] == CQP_RECORD_VERSION && h[3] >= CQP_REC_MUTATION &&
           h[3] <= CQP_REC_MUTATION_MSGPACK && get32(h + 4) <= CQP_RECORD_MAX_PAYLOAD;
}

/// True when a whole valid record starts at pos (filling *rec).
static bool frames(const uint8_t *buf, size_t len, size_t pos, cqp_record *rec)
{
    if (!plausible(buf, len, pos))
        return false;
    const uint8_t *h = buf + pos;
    uint32_t n = get32(h + 4);
    if (n > len - pos - CQP_RECORD_HEADER)
        return false;
    uint32_t crc = cqp_crc32c(cqp_crc32c(0, h + CQP_RECORD_HEADER, n), h, 16);
    if (crc != get32(h + 16))
        return false;
    rec->kind = (cqp_record_kind)h[3];
    rec->seq = get64(h + 8);
    rec->payload = h + CQP_RECORD_HEADER;
    rec->len = n;
    rec->offset = pos;
    return true;
}

/// Whether the damaged record whose header is h would check out had its
/// length field said n, and next (the valid record right after those n
/// bytes) is the one that follows it: its length field alone was damaged.
/// payload_crc is the CRC32C of those n bytes. A journal numbers its
/// records one by one, so after a mutation next must be numbered next: a
/// client's body, which does not know its record's number, cannot then
/// pass for the record after its own.
static bool length_alone_damaged(const uint8_t *h, uint32_t n, uint32_t payload_crc, const cqp_record *next)
{
    if (cqp_record_is_mutation((cqp_record_kind)h[3], NULL) && next->seq != get64(h + 8) + 1)
        return false;
    uint8_t fixed[16];
    memcpy(fixed, h, sizeof fixed);
    put32(fixed + 4, n);
    return cqp_crc32c(payload_crc, fixed, sizeof fixed) == get32(h + 16);
}

cqp_scan cqp_record_next(const uint8_t *buf, size_t len, size_t *pos, cqp_record *rec, size_t *resume)
{
    size_t at = *pos;
    if (at >= len) {
        *pos = len;
        return CQP_SCAN_END;
    }
    if (frames(buf, len, at, rec)) {
        *pos = at + CQP_RECORD_HEADER + rec->len;
        return CQP_SCAN_RECORD;
    }
    /* Damage, or an interrupted write: it is corruption only if a valid
     * record follows. Frames start with 0xFF, so only those bytes are
     * tried; no UTF-8 text holds that byte, so no JSON payload can hold
     * the start of a frame. Behind a plausible header, though, a frame
     * inside the bytes it claims is its payload proves nothing, since a
     * MessagePack body can hold a whole record's bytes (0xFF is a float's
     * byte or the fixint -1, and a client's int64s can spell a header and
     * checksum): it counts only where the record would have ended had its
     * length field alone been damaged. So a plausible header whose length
     * runs past the end of the file, the one way an append-only file ends
     * short, is a torn tail whatever its payload holds. Records are only
     * ever read from the start, so such a body never makes a valid
     * journal misread: this only keeps it from turning a torn tail into
     * corruption. */
    bool header = plausible(buf, len, at);
    size_t claimed = header ? CQP_RECORD_HEADER + (size_t)get32(buf + at + 4) : 0;
    uint32_t crc = 0; /* of the payload bytes from at + CQP_RECORD_HEADER to crc_to */
    size_t crc_to = at + CQP_RECORD_HEADER;
    for (size_t q = at + 1; q < len; q++) {
        const uint8_t *hit = memchr(buf + q, 0xFF, len - q);
        if (!hit)
            break;
        q = (size_t)(hit - buf);
        cqp_record later;
        if (!frames(buf, len, q, &later))
            continue;
        bool counts = !header || q - at >= claimed;
        if (!counts && q >= crc_to) {
            crc = cqp_crc32c(crc, buf + crc_to, q - crc_to);
            crc_to = q;
            counts = length_alone_damaged(buf + at, (uint32_t)(q - at - CQP_RECORD_HEADER), crc, &later);
        }
        if (counts) {
            if (resume)
                *resume = q;
            return CQP_SCAN_CORRUPT;
        }
    }
    return CQP_SCAN_TORN;
}

/* A MessagePack body is a kind of its own rather than a new version:
 * version-1 files stay readable, every journal written before MessagePack
 * bodies existed holds only kind 1 and recovers unchanged, and a file
 * stays one format. A daemon older than kind 5 takes such a record for
 * damage (it would cut the journal there); a clean shutdown leaves only a
 * snapshot, whose records are JSON, so a directory is safe to hand to an
 * older daemon after one (docs/DEPLOY.md). */
cqp_record_kind cqp_mutation_kind(cqp_format f)
{
    return f == CQP_MSGPACK ? CQP_REC_MUTATION_MSGPACK : CQP_REC_MUTATION;
}

bool cqp_record_is_mutation(cqp_record_kind kind, cqp_format *f)
{
    if (kind != CQP_REC_MUTATION && kind != CQP_REC_MUTATION_MSGPACK)
        return false;
    if (f)
        *f = kind == CQP_REC_MUTATION_MSGPACK ? CQP_MSGPACK : CQP_JSON;
    return true;
}

size_t cqp_mutation_prefix(uint8_t *out, size_t size, const char *method, size_t method_len, const char *path,
                           size_t path_len)
{
    size_t n = 3 + method_len + path_len;
    if (method_len > 255 || path_len > 65535 || n > size)
        return 0;
    out[0] = (uint8_t)method_len;
    memcpy(out + 1, method, method_len);
    out[1 + method_len] = (uint8_t)(path_len & 0xff);
    out[2 + method_len] = (uint8_t)(path_len >> 8);
    memcpy(out + 3 + method_len, path, path_len);
    return n;
}

bool cqp_mutation_parse(const uint8_t *payload, size_t len, cqp_mutation *out)
{
    if (len < 1 || len - 1 < payload[0] + 2u)
        return false;
    size_t m = payload[0];
    size_t p = (size_t)payload[1 + m] | (size_t)payload[2 + m] << 8;
    if (len - 3 - m < p)
        return false;
    out->method = (const char *)payload + 1;
    out->method_len = m;
    out->path = (const char *)payload + 3 + m;
    out->path_len = p;
    out->body = out->path + p;
    out->body_len = len - 3 - m - p;
    return true;
}
