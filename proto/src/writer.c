/* The streaming writer, JSON or MessagePack. Both keep a per-depth element
 * count, so callers only name keys and values: JSON derives its separators
 * and indentation from it, MessagePack the count its map and array headers
 * carry. Nesting past CQP_WRITER_MAX_DEPTH is not representable: the buffer
 * is marked oom (never to be sent) and the depth is still tracked so ends
 * stay balanced. */
#include <math.h>
#include <string.h>

#include "writer_internal.h"

void cqp_writer_init(cqp_writer *w, cqp_buf *buf, bool pretty)
{
    cqp_writer_init_format(w, buf, CQP_JSON, pretty);
}

void cqp_writer_init_format(cqp_writer *w, cqp_buf *buf, cqp_format f, bool pretty)
{
    /* MessagePack has no layout: pretty is dropped so no path consults it. */
    bool mp = f == CQP_MSGPACK;
    *w = (cqp_writer){.buf = buf, .format = mp ? CQP_MSGPACK : CQP_JSON, .pretty = pretty && !mp};
}

static inline bool is_mp(const cqp_writer *w) { return w->format == CQP_MSGPACK; }

/* ---- MessagePack encodings (msgpack.org spec, "formats") ---- */

/* The header tags of a map or array: its fix form (the count in the low
 * nibble), then the 16- and 32-bit forms. */
typedef struct mp_family {
    uint8_t fix, b16, b32;
} mp_family;
static const mp_family mp_map = {0x80, 0xde, 0xdf};
static const mp_family mp_array = {0x90, 0xdc, 0xdd};

/* The low `bytes` bytes of u, big-endian (MessagePack's byte order). */
static inline void put_be(char *out, uint64_t u, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        out[i] = (char)(u & 0xff);
        u >>= 8;
    }
}

/* A tag byte and a big-endian operand of `bytes` bytes. */
static inline void mp_tagged(cqp_buf *buf, uint8_t tag, uint64_t u, int bytes)
{
    if (!cqpb_room(buf, 9))
        return;
    char *out = buf->data + buf->len;
    out[0] = (char)tag;
    put_be(out + 1, u, bytes);
    buf->len += 1 + (size_t)bytes;
    buf->data[buf->len] = '\0';
}

/* An unsigned integer: positive fixint, then uint8/16/32/64. */
static void mp_uint(cqp_buf *buf, uint64_t u)
{
    if (u < 0x80)
        cqpb_putc(buf, (char)u);
    else if (u <= UINT8_MAX)
        mp_tagged(buf, 0xcc, u, 1);
    else if (u <= UINT16_MAX)
        mp_tagged(buf, 0xcd, u, 2);
    else if (u <= UINT32_MAX)
        mp_tagged(buf, 0xce, u, 4);
    else
        mp_tagged(buf, 0xcf, u, 8);
}

/* A signed integer: a non-negative one as unsigned (its smallest form),
 * a negative one as negative fixint, then int8/16/32/64 (two's complement,
 * which the cast to uint64_t gives and put_be truncates). */
static void mp_int(cqp_buf *buf, int64_t v)
{
    if (v >= 0)
        mp_uint(buf, (uint64_t)v);
    else if (v >= -32)
        cqpb_putc(buf, (char)(uint8_t)v);
    else if (v >= INT8_MIN)
        mp_tagged(buf, 0xd0, (uint64_t)v, 1);
    else if (v >= INT16_MIN)
        mp_tagged(buf, 0xd1, (uint64_t)v, 2);
    else if (v >= INT32_MIN)
        mp_tagged(buf, 0xd2, (uint64_t)v, 4);
    else
        mp_tagged(buf, 0xd3, (uint64_t)v, 8);
}

/* A str of n bytes: fixstr, str8, str16 or str32 header, then the bytes.
 * Longer than str32 holds is not representable: marked oom. */
static void mp_str(cqp_buf *buf, const char *s, size_t n)
{
    if (n > UINT32_MAX) {
        buf->oom = true;
        return;
    }
    if (!cqpb_room(buf, 5 + n))
        return;
    char *out = buf->data + buf->len;
    size_t h = 1;
    if (n < 32)
        out[0] = (char)(0xa0 | n);
    else if (n <= UINT8_MAX)
        out[0] = (char)0xd9, h = 2;
    else if (n <= UINT16_MAX)
        out[0] = (char)0xda, h = 3;
    else
        out[0] = (char)0xdb, h = 5;
    put_be(out + 1, n, (int)h - 1);
    if (n)
        memcpy(out + h, s, n);
    buf->len += h + n;
    buf->data[buf->len] = '\0';
}

/* The bytes of a map or array header for n elements. */
static inline size_t mp_header_size(uint32_t n)
{
    return n <= 15 ? 1 : n <= UINT16_MAX ? 3 : 5;
}

/* An open container's header always has the size its count so far needs:
 * begin reserves one byte, and when the 16th element (then the 65536th)
 * is about to be written the content so far moves right by 2 bytes. So a
 * container moves at most its first 65535 elements, twice, whatever its
 * length: a 10,000-contact reply moves its first 15 contacts once, its
 * small maps and vectors never move. */
static void mp_widen(cqp_buf *buf, size_t at, uint32_t n)
{
    if (buf->oom || !buf->data || at >= buf->len || !cqpb_room(buf, 2))
        return;
    size_t from = at + mp_header_size(n - 1);
    memmove(buf->data + from + 2, buf->data + from, buf->len - from);
    buf->len += 2;
    buf->data[buf->len] = '\0';
}

/* Writes the header of the container of n elements whose room is at `at`. */
static void mp_header(cqp_buf *buf, size_t at, uint32_t n, const mp_family *fam)
{
    if (buf->oom || !buf->data || at + mp_header_size(n) > buf->len)
        return;
    char *h = buf->data + at;
    if (n <= 15)
        h[0] = (char)(fam->fix | n);
    else if (n <= UINT16_MAX)
        h[0] = (char)fam->b16, put_be(h + 1, n, 2);
    else
        h[0] = (char)fam->b32, put_be(h + 1, n, 4);
}

/* ---- shared structure ---- */

/* A newline and two spaces per level (pretty mode only). */
static void indent(cqp_writer *w, int depth)
{
    static const char spaces[] = "\n                                                                ";
    cqpb_putc(w->buf, '\n');
    for (int n = 2 * depth; n > 0;) {
        int k = n < (int)sizeof spaces - 2 ? n : (int)sizeof spaces - 2;
        cqpb_put(w->buf, spaces + 1, (size_t)k);
        n -= k;
    }
}

/* Counts an element (a value in an array or at the top, or a key in an
 * object: a map's count is its members) and writes what goes before it in
 * JSON: the comma after a sibling and the pretty line break. A value after
 * its key is neither counted nor separated. MessagePack counts stop at
 * what a 32-bit header holds: one more is not representable (oom). */
static void element(cqp_writer *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth <= 0 || w->depth > CQP_WRITER_MAX_DEPTH)
        return;
    uint32_t *count = &w->count[w->depth - 1];
    if (is_mp(w)) {
        if (*count == UINT32_MAX)
            w->buf->oom = true;
        else if (++*count == 16 || *count == UINT16_MAX + 1)
            mp_widen(w->buf, w->start[w->depth - 1], *count);
        return;
    }
    if (*count)
        cqpb_putc(w->buf, ',');
    if (w->pretty)
        indent(w, w->depth);
    if (*count < UINT32_MAX)
        (*count)++;
}

/* Opens a container: JSON's bracket, or MessagePack's one reserved header
 * byte (widened by mp_widen as elements come, written by mp_header at the
 * end). */
static void container_begin(cqp_writer *w, char bracket, const mp_family *fam)
{
    element(w);
    bool mp = is_mp(w);
    size_t at = w->buf->len;
    cqpb_putc(w->buf, mp ? (char)fam->fix : bracket);
    if (w->depth >= CQP_WRITER_MAX_DEPTH) {
        w->buf->oom = true;
    } else {
        w->count[w->depth] = 0;
        w->start[w->depth] = at;
    }
    w->depth++;
}

static void container_end(cqp_writer *w, char bracket, const mp_family *fam)
{
    if (w->depth <= 0) {
        /* An unbalanced end is a caller bug; the output is unusable. */
        w->buf->oom = true;
        return;
    }
    w->depth--;
    w->after_key = false;
    if (w->depth >= CQP_WRITER_MAX_DEPTH)
        return; /* past the limit: already oom, nothing recorded */
    if (is_mp(w)) {
        mp_header(w->buf, w->start[w->depth], w->count[w->depth], fam);
        return;
    }
    if (w->pretty && w->count[w->depth])
        indent(w, w->depth);
    cqpb_putc(w->buf, bracket);
}

void cqp_obj_begin(cqp_writer *w) { container_begin(w, '{', &mp_map); }
void cqp_obj_end(cqp_writer *w) { container_end(w, '}', &mp_map); }
void cqp_arr_begin(cqp_writer *w) { container_begin(w, '[', &mp_array); }
void cqp_arr_end(cqp_writer *w) { container_end(w, ']', &mp_array); }

/* s[0..n) escaped as RFC 8259 requires (runs of plain bytes, UTF-8
 * included, copied in one append; a NUL byte is \u0000), then the closing
 * quote. s may be NULL when n is 0. */
static void quoted_tail(cqp_buf *buf, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s, *end = s + n;
    for (const char *p = s; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (p > run)
            cqpb_put(buf, run, (size_t)(p - run));
        run = p + 1;
        char esc[6] = {'\\', 0};
        size_t k = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            k = 6;
        }
        cqpb_put(buf, esc, k);
    }
    if (end > run) /* memcpy takes no NULL, even for 0 bytes */
        cqpb_put(buf, run, (size_t)(end - run));
    cqpb_putc(buf, '"');
}

/* Plain strings up to this long are copied as they are scanned. */
#define QUOTED_SHORT 64

/* A quoted string with the escapes RFC 8259 requires, followed by the
 * suffix (": " or ":" after a key, "" after a value). Keys, ids and names
 * are short and need no escapes: they are copied byte by byte into room
 * made once, with no strlen or memcpy call. */
static void quoted(cqp_buf *buf, const char *s, const char *suffix, size_t suffix_len)
{
    if (cqpb_room(buf, QUOTED_SHORT + 2 + suffix_len)) {
        char *out = buf->data + buf->len;
        out[0] = '"';
        size_t n = 0;
        for (unsigned char c; n < QUOTED_SHORT && (c = (unsigned char)s[n]) >= 0x20 && c != '"' && c != '\\'; n++)
            out[n + 1] = (char)c;
        if (!s[n]) {
            out[n + 1] = '"';
            memcpy(out + n + 2, suffix, suffix_len);
            buf->len += n + 2 + suffix_len;
            buf->data[buf->len] = '\0';
            return;
        }
    }
    /* Longer, escaped, or out of memory: the general path (which drops
     * everything once the buffer is oom). */
    cqpb_putc(buf, '"');
    quoted_tail(buf, s, strlen(s));
    cqpb_put(buf, suffix, suffix_len);
}

void cqp_key(cqp_writer *w, const char *key)
{
    element(w);
    if (is_mp(w))
        mp_str(w->buf, key, strlen(key));
    else
        quoted(w->buf, key, ": ", w->pretty ? 2 : 1);
    w->after_key = true;
}

void cqp_str(cqp_writer *w, const char *s)
{
    element(w);
    if (is_mp(w))
        mp_str(w->buf, s, strlen(s));
    else
        quoted(w->buf, s, "", 0);
}

void cqp_strn(cqp_writer *w, const char *s, size_t n)
{
    element(w);
    if (is_mp(w)) {
        mp_str(w->buf, s, n);
        return;
    }
    cqpb_putc(w->buf, '"');
    quoted_tail(w->buf, s, n);
}

/* null, in the writer's format. */
static void null_value(cqp_writer *w)
{
    if (is_mp(w))
        cqpb_putc(w->buf, (char)0xc0);
    else
        cqpb_put(w->buf, "null", 4);
}

/* Ends a cursor write of MessagePack bytes that began at the buffer's end
 * (room made for them), keeping the NUL after them. */
static inline void mp_advance(cqp_buf *buf, char *end)
{
    buf->len = (size_t)(end - buf->data);
    buf->data[buf->len] = '\0';
}

/* A number's value as written, after element(): a non-finite one as null
 * (the core never produces one), -0 as 0 unless kept. MessagePack: always
 * a float64, so a reader sees the same type for 3 and 3.5. */
static void num_value(cqp_writer *w, double v)
{
    if (is_mp(w)) {
        if (cqpb_room(w->buf, 9))
            mp_advance(w->buf, cqpw_put_num(w->buf->data + w->buf->len, v, w->keep_negative_zero));
        return;
    }
    if (!isfinite(v)) {
        null_value(w);
        return;
    }
    if (v == 0 && !w->keep_negative_zero)
        v = 0.0; /* -0 == 0: the positive zero */
    /* Formatted in place (with its NUL) rather than copied. */
    if (!cqpb_room(w->buf, CQP_DOUBLE_CHARS))
        return;
    w->buf->len += (size_t)cqp_format_double(v, w->buf->data + w->buf->len);
}

void cqp_num(cqp_writer *w, double v)
{
    element(w);
    num_value(w, v);
}

/* Decimal digits of u, written backwards from end; returns the first. */
static char *utoa(uint64_t u, char *end)
{
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return end;
}

void cqp_int(cqp_writer *w, int64_t v)
{
    element(w);
    if (is_mp(w)) {
        mp_int(w->buf, v);
        return;
    }
    char text[24];
    char *end = text + sizeof text;
    /* The magnitude as unsigned, so INT64_MIN does not overflow. */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *p = utoa(u, end);
    if (v < 0)
        *--p = '-';
    cqpb_put(w->buf, p, (size_t)(end - p));
}

void cqp_uint(cqp_writer *w, uint64_t v)
{
    element(w);
    if (is_mp(w)) {
        mp_uint(w->buf, v);
        return;
    }
    char text[24];
    char *end = text + sizeof text;
    char *p = utoa(v, end);
    cqpb_put(w->buf, p, (size_t)(end - p));
}

void cqp_bool(cqp_writer *w, bool v)
{
    element(w);
    if (is_mp(w))
        cqpb_putc(w->buf, (char)(v ? 0xc3 : 0xc2));
    else if (v)
        cqpb_put(w->buf, "true", 4);
    else
        cqpb_put(w->buf, "false", 5);
}

void cqp_null(cqp_writer *w)
{
    element(w);
    null_value(w);
}

/* MessagePack's [x, y, z]: the fixarray header is known (3), so nothing is
 * reserved or patched; the depth limit still applies as to any array. */
static void mp_vec3(cqp_writer *w, cq_vec3 v)
{
    element(w);
    if (w->depth >= CQP_WRITER_MAX_DEPTH)
        w->buf->oom = true;
    if (cqpb_room(w->buf, 28))
        mp_advance(w->buf, cqpw_put_vec3(w->buf->data + w->buf->len, v, w->keep_negative_zero));
}

void cqp_vec3(cqp_writer *w, cq_vec3 v)
{
    if (is_mp(w)) {
        mp_vec3(w, v);
        return;
    }
    cqp_arr_begin(w);
    cqp_num(w, v.x);
    cqp_num(w, v.y);
    cqp_num(w, v.z);
    cqp_arr_end(w);
}

void cqp_raw(cqp_writer *w, const char *encoded, size_t n)
{
    element(w);
    cqp_buf_append(w->buf, encoded, n);
}

char *cqp__mp_raw_begin(cqp_writer *w, uint32_t elements, size_t bytes)
{
    for (uint32_t i = 0; i < elements; i++)
        element(w);
    if (!cqpb_room(w->buf, bytes))
        return NULL;
    return w->buf->data + w->buf->len;
}

void cqp__mp_raw_end(cqp_writer *w, char *end) { mp_advance(w->buf, end); }
