/// @file server/ops/log.c
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

/// Appends a string literal.
#define PUT_LIT(l, s) put((l), (s), sizeof(s) - 1)

/// Writes u in decimal to out (room for 20 digits); returns the length.
static size_t format_uint(unsigned long long u, char *out)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

/// Appends v in decimal, as "%lld" writes it.
static void put_int(line *l, long long v)
{
    char text[24];
    size_t n = 0;
    if (v < 0)
        text[n++] = '-';
    n += format_uint(v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, text + n);
    put(l, text, n);
}

/// Appends n < 10^width in decimal with leading zeros to width digits.
static void put_padded(line *l, unsigned n, int width)
{
    char text[4];
    for (int i = width - 1; i >= 0; i--, n /= 10)
        text[i] = (char)('0' + n % 10);
    put(l, text, (size_t)width);
}

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

/// True for the bytes put_str copies as they are.
static bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

/// Appends s as a JSON string (quotes included) of at most budget escaped
/// bytes. Control characters are escaped and bytes that are not UTF-8
/// (client paths may hold any) become U+FFFD, so the line stays valid
/// JSON; a cut never splits an escape or a character.
static void put_str(line *l, const char *s, size_t budget)
{
    size_t start = l->len;
    static const char hex[] = "0123456789abcdef";
    put(l, "\"", 1);
    /* A byte may be added while the line stays within both the budget
     * and the buffer (one byte short of the reserve, for the quote). */
    size_t end = sizeof l->buf - LINE_RESERVE - 1;
    if (start + budget < end)
        end = start + budget;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        /* Runs of plain ASCII, the usual text, are copied in one go. */
        size_t run = 0;
        while (plain(p[run]))
            run++;
        if (run) {
            size_t room = end > l->len ? end - l->len : 0;
            put(l, (const char *)p, run < room ? run : room);
            if (run > room)
                break;
            p += run;
            if (!*p)
                break;
        }
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
            } else if ((used = (size_t)utf8_len(p)) > 0) {
                memcpy(esc, p, used);
                n = used;
            } else {
                used = 1;
                memcpy(esc, "\\ufffd", 6);
                n = 6;
            }
        }
        if (l->len + n > end)
            break;
        put(l, esc, n);
        p += used - 1;
    }
    l->buf[l->len++] = '"'; // the reserve guarantees room
}

/// Starts a line with {"time":..., "level":...}. The UTC time is what
/// gmtime_r and strftime("%Y-%m-%dT%H:%M:%S") give, plus ".mmmZ", but
/// computed directly (days to a civil date as in H. Hinnant's
/// civil_from_days): it is on every access line.
static void begin(line *l, cqd_log_level level)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long days = ts.tv_sec / 86400, secs = ts.tv_sec % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    days += 719468; // from 1970-01-01 to 0000-03-01
    long long era = (days >= 0 ? days : days - 146096) / 146097;
    unsigned doe = (unsigned)(days - era * 146097);                             // [0, 146096]
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;         // [0, 399]
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                       // [0, 365], from March
    unsigned mp = (5 * doy + 2) / 153;                                            // [0, 11]
    unsigned day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    long long year = (long long)yoe + era * 400 + (month <= 2);
    l->len = 0;
    PUT_LIT(l, "{\"time\":\"");
    put_int(l, year);
    PUT_LIT(l, "-");
    put_padded(l, month, 2);
    PUT_LIT(l, "-");
    put_padded(l, day, 2);
    PUT_LIT(l, "T");
    put_padded(l, (unsigned)(secs / 3600), 2);
    PUT_LIT(l, ":");
    put_padded(l, (unsigned)(secs / 60 % 60), 2);
    PUT_LIT(l, ":");
    put_padded(l, (unsigned)(secs % 60), 2);
    PUT_LIT(l, ".");
    put_padded(l, (unsigned)(ts.tv_nsec / 1000000), 3);
    PUT_LIT(l, "Z\",\"level\":\"");
    puts_raw(l, level_names[level]);
    PUT_LIT(l, "\"");
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

void cqd_access_init(cqd_access *a, cqd_access_mode mode, int sample, int slow_ms)
{
    a->mode = mode;
    a->slow_ns = (uint64_t)slow_ms * 1000000u;
    a->sample = sample > 0 ? (unsigned long long)sample : 1;
    atomic_init(&a->ordinary, 0);
}

/// The statuses an operator acts on: a refused token (a client or a
/// deployment with the wrong one), a configured limit (--max-body,
/// --max-request-memory, the --max-* counts), and the server's own
/// failures and refusals (5xx). The other 4xx are the client's business.
static bool operator_status(int status) { return status >= 500 || status == 401 || status == 413 || status == 422; }

bool cqd_access_wanted(cqd_access *a, bool quiet, int status, uint64_t duration_ns)
{
    switch (a->mode) {
    case CQD_ACCESS_OFF: return false;
    case CQD_ACCESS_ALL: return true;
    case CQD_ACCESS_ERRORS:
    case CQD_ACCESS_SAMPLE: break;
    }
    if (duration_ns >= a->slow_ns || operator_status(status))
        return true;
    if (a->mode == CQD_ACCESS_ERRORS || quiet)
        return false;
    return atomic_fetch_add_explicit(&a->ordinary, 1, memory_order_relaxed) % a->sample == 0;
}

void cqd_log_request(const cqd_logger *lg, const char *request_id, const char *transport, const char *method,
                     const char *route, const char *path, int status, long long duration_us)
{
    line l;
    begin(&l, CQD_LOG_INFO);
    PUT_LIT(&l, ",\"msg\":\"request\",\"request_id\":");
    put_str(&l, request_id, 80);
    PUT_LIT(&l, ",\"transport\":");
    put_str(&l, transport, 16);
    PUT_LIT(&l, ",\"method\":");
    put_str(&l, method, 32);
    PUT_LIT(&l, ",\"route\":");
    if (route)
        put_str(&l, route, 80);
    else
        PUT_LIT(&l, "null");
    PUT_LIT(&l, ",\"path\":");
    put_str(&l, path, 512);
    PUT_LIT(&l, ",\"status\":");
    put_int(&l, status);
    PUT_LIT(&l, ",\"duration_us\":");
    put_int(&l, duration_us);
    finish(lg, &l);
}
