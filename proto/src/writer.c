/* The streaming JSON writer: separators and indentation come from a
 * per-depth element count, so callers only name keys and values. Nesting
 * past CQP_WRITER_MAX_DEPTH is not representable: the buffer is marked oom
 * (never to be sent) and the depth is still tracked so ends stay balanced. */
#include <math.h>
#include <string.h>

#include "buf_internal.h"

void cqp_writer_init(cqp_writer *w, cqp_buf *buf, bool pretty)
{
    *w = (cqp_writer){.buf = buf, .pretty = pretty};
}

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

/* What goes before an element (a value in an array or at the top, or a key
 * in an object): the comma after a sibling and the pretty line break. A
 * value after its key gets nothing. */
static void element(cqp_writer *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth <= 0 || w->depth > CQP_WRITER_MAX_DEPTH)
        return;
    uint32_t *count = &w->count[w->depth - 1];
    if (*count)
        cqpb_putc(w->buf, ',');
    if (w->pretty)
        indent(w, w->depth);
    if (*count < UINT32_MAX)
        (*count)++;
}

static void container_begin(cqp_writer *w, char bracket)
{
    element(w);
    cqpb_putc(w->buf, bracket);
    if (w->depth >= CQP_WRITER_MAX_DEPTH)
        w->buf->oom = true;
    else
        w->count[w->depth] = 0;
    w->depth++;
}

static void container_end(cqp_writer *w, char bracket)
{
    if (w->depth <= 0) {
        /* An unbalanced end is a caller bug; the output is unusable. */
        w->buf->oom = true;
        return;
    }
    w->depth--;
    w->after_key = false;
    if (w->pretty && w->depth < CQP_WRITER_MAX_DEPTH && w->count[w->depth])
        indent(w, w->depth);
    cqpb_putc(w->buf, bracket);
}

void cqp_obj_begin(cqp_writer *w) { container_begin(w, '{'); }
void cqp_obj_end(cqp_writer *w) { container_end(w, '}'); }
void cqp_arr_begin(cqp_writer *w) { container_begin(w, '['); }
void cqp_arr_end(cqp_writer *w) { container_end(w, ']'); }

/* s escaped as RFC 8259 requires (runs of plain bytes, UTF-8 included,
 * copied in one append), then the closing quote. */
static void quoted_tail(cqp_buf *buf, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        cqpb_put(buf, run, (size_t)(p - run));
        run = p + 1;
        char esc[6] = {'\\', 0};
        size_t n = 2;
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
            n = 6;
        }
        cqpb_put(buf, esc, n);
    }
    cqpb_put(buf, run, strlen(run));
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
    quoted_tail(buf, s);
    cqpb_put(buf, suffix, suffix_len);
}

void cqp_key(cqp_writer *w, const char *key)
{
    element(w);
    quoted(w->buf, key, ": ", w->pretty ? 2 : 1);
    w->after_key = true;
}

void cqp_str(cqp_writer *w, const char *s)
{
    element(w);
    quoted(w->buf, s, "", 0);
}

void cqp_num(cqp_writer *w, double v)
{
    element(w);
    if (!isfinite(v)) {
        cqpb_put(w->buf, "null", 4);
        return;
    }
    if (v == 0 && !w->keep_negative_zero)
        v = 0.0; /* -0 == 0: the positive zero */
    /* Formatted in place (with its NUL) rather than copied. */
    if (!cqpb_room(w->buf, CQP_DOUBLE_CHARS))
        return;
    w->buf->len += (size_t)cqp_format_double(v, w->buf->data + w->buf->len);
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
    char text[24];
    char *end = text + sizeof text;
    char *p = utoa(v, end);
    cqpb_put(w->buf, p, (size_t)(end - p));
}

void cqp_bool(cqp_writer *w, bool v)
{
    element(w);
    if (v)
        cqpb_put(w->buf, "true", 4);
    else
        cqpb_put(w->buf, "false", 5);
}

void cqp_null(cqp_writer *w)
{
    element(w);
    cqpb_put(w->buf, "null", 4);
}

void cqp_vec3(cqp_writer *w, cq_vec3 v)
{
    cqp_arr_begin(w);
    cqp_num(w, v.x);
    cqp_num(w, v.y);
    cqp_num(w, v.z);
    cqp_arr_end(w);
}

void cqp_raw(cqp_writer *w, const char *json, size_t n)
{
    element(w);
    cqp_buf_append(w->buf, json, n);
}
