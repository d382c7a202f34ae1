/// @file server/record/record_text.c
/// The text encodings under a record line (record_line.h): UTF-8
/// validation, JSON strings of arbitrary lengths (NUL included), base64.
#include <string.h>

#include "record_line.h"

/* ---- text encodings ---------------------------------------------------- */

bool cqd_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned cp, min;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2, cp = c & 0x1f, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3, cp = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false; // a continuation byte, 0xc0/0xc1 (always overlong) or past 0xf4
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}

void cqd_json_put_string(cqp_buf *out, const char *s, size_t n)
{
    cqp_buf_append(out, "\"", 1);
    size_t run = 0; // start of the bytes not yet copied
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        cqp_buf_append(out, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': cqp_buf_append(out, "\\\"", 2); break;
        case '\\': cqp_buf_append(out, "\\\\", 2); break;
        case '\n': cqp_buf_append(out, "\\n", 2); break;
        case '\r': cqp_buf_append(out, "\\r", 2); break;
        case '\t': cqp_buf_append(out, "\\t", 2); break;
        default: cqp_buf_printf(out, "\\u%04x", c); break;
        }
    }
    cqp_buf_append(out, s + run, n - run);
    cqp_buf_append(out, "\"", 1);
}

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void cqd_base64_encode(cqp_buf *out, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)b[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)b[i + 1] << 8;
        if (i + 2 < n)
            v |= b[i + 2];
        char quad[4] = {b64_alphabet[v >> 18], b64_alphabet[(v >> 12) & 63],
                        i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=', i + 2 < n ? b64_alphabet[v & 63] : '='};
        cqp_buf_append(out, quad, 4);
    }
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64_alphabet, c) : NULL;
    return p ? (int)(p - b64_alphabet) : -1;
}

int cqd_base64_decode(cqp_buf *out, const char *s, size_t n)
{
    if (n % 4)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        bool last = i + 4 == n;
        int pad = last ? (s[i + 3] == '=') + (s[i + 2] == '=' && s[i + 3] == '=') : 0;
        unsigned v = 0;
        for (int k = 0; k < 4; k++) {
            int d = k >= 4 - pad ? 0 : b64_value(s[i + k]);
            if (d < 0)
                return -1;
            v = v << 6 | (unsigned)d;
        }
        unsigned char bytes[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        cqp_buf_append(out, bytes, (size_t)(3 - pad));
    }
    return 0;
}
