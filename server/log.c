/// @file server/log.c
/// JSON-lines logging into a stack buffer, one write(2) per line. Every
/// string field has an output budget (long client-given values are cut at
/// a character boundary of the escaped text), and the budgets add up to
/// less than the buffer, so a line is always complete JSON.
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096
/// Room kept at the end of the line for the closing of the object.
#define LINE_RESERVE 8

typedef struct line {
    char buf[LINE_MAX_BYTES];
    size_t len;
} line;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/// Appends raw bytes; what does not fit (minus the reserve) is dropped.
static void put(line *l, const char *s, size_t n)
{
    size_t room = sizeof l->buf - LINE_RESERVE - l->len;
    if (n > room)
        n = room;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void puts_raw(line *l, const char *s) { put(l, s, strlen(s)); }

/// Length of the well-formed UTF-8 sequence at p (2 to 4), or 0 (a stray
/// byte, an overlong form, a surrogate, or past U+10FFFF).
static int utf8_len(const unsigned char *p)
{
    int n;
    unsigned min;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2, min = 0x80;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, min = 0x800;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = p[0] & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) // also stops at the NUL
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

/// Appends s as a JSON string (quotes included) of at most budget escaped
/// bytes. Control characters are escaped and bytes that are not UTF-8
/// (client paths may hold any) become U+FFFD, so the line stays valid
/// JSON; a cut never splits an escape or a character.
static void put_str(line *l, const char *s, size_t budget)
{
    size_t start = l->len;
    static const char hex[] = "0123456789abcdef";
    put(l, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t n = 2, used = 1; // bytes written, bytes of s consumed
        switch (*p) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[*p >> 4];
                esc[5] = hex[*p & 15];
                n = 6;
            } else if (*p < 0x80) {
                esc[0] = (char)*p;
                n = 1;
            } else if ((used = (size_t)utf8_len(p)) > 0) {
                memcpy(esc, p, used);
                n = used;
            } else {
                used = 1;
                memcpy(esc, "\\ufffd", 6);
                n = 6;
            }
        }
        if (l->len - start + n > budget || l->len + n + 1 > sizeof l->buf - LINE_RESERVE)
            break;
        put(l, esc, n);
        p += used - 1;
    }
    l->buf[l->len++] = '"'; // the reserve guarantees room
}

/// Starts a line with {"time":..., "level":...}.
static void begin(line *l, cqd_log_level level)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[40];
    size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + n, sizeof stamp - n, ".%03ldZ", ts.tv_nsec / 1000000);
    l->len = 0;
    puts_raw(l, "{\"time\":\"");
    puts_raw(l, stamp);
    puts_raw(l, "\",\"level\":\"");
    puts_raw(l, level_names[level]);
    puts_raw(l, "\"");
}

static void key(line *l, const char *k)
{
    puts_raw(l, ",\"");
    puts_raw(l, k);
    puts_raw(l, "\":");
}

/// Closes the object and writes the line in one write(2).
static void finish(const cqd_logger *lg, line *l)
{
    l->buf[l->len++] = '}';
    l->buf[l->len++] = '\n';
    size_t done = 0;
    while (done < l->len) {
        ssize_t w = write(lg->fd, l->buf + done, l->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; // nowhere to report a failing log
        done += (size_t)w;
    }
}

void cqd_log(const cqd_logger *lg, cqd_log_level level, const char *fmt, ...)
{
    if (!cqd_log_enabled(lg, level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    line l;
    begin(&l, level);
    key(&l, "msg");
    put_str(&l, msg, 1600);
    finish(lg, &l);
}

void cqd_log_request(const cqd_logger *lg, const char *request_id, const char *transport, const char *method,
                     const char *route, const char *path, int status, long long duration_us)
{
    if (!cqd_log_enabled(lg, CQD_LOG_INFO))
        return;
    line l;
    begin(&l, CQD_LOG_INFO);
    key(&l, "msg");
    puts_raw(&l, "\"request\"");
    key(&l, "request_id");
    put_str(&l, request_id, 80);
    key(&l, "transport");
    put_str(&l, transport, 16);
    key(&l, "method");
    put_str(&l, method, 32);
    key(&l, "route");
    if (route)
        put_str(&l, route, 80);
    else
        puts_raw(&l, "null");
    key(&l, "path");
    put_str(&l, path, 512);
    char num[64];
    snprintf(num, sizeof num, ",\"status\":%d,\"duration_us\":%lld", status, duration_us);
    puts_raw(&l, num);
    finish(lg, &l);
}
