/* Growable byte buffers and the clock. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tick.h"

char *tk_buf_reserve(tk_buf *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "cq-tick: out of memory (%zu bytes)\n", cap);
            exit(1);
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

void tk_buf_add(tk_buf *b, const void *p, size_t n)
{
    memcpy(tk_buf_reserve(b, n), p, n);
    b->len += n;
}

void tk_buf_str(tk_buf *b, const char *s)
{
    tk_buf_add(b, s, strlen(s));
}

void tk_buf_fmt(tk_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *at = tk_buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(at, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tk_buf_free(tk_buf *b)
{
    free(b->p);
    *b = (tk_buf){0};
}

double tk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
