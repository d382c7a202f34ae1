/// @file server/replay/replay_diff.c
/// What the replay compares, and what it leaves out (replay.h).
#include <string.h>

#include "replay.h"

/// The key whose values are timings.
static const char masked_key[] = "\"duration_us\"";

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/// When s[i..] is "duration_us", blanks, a colon, blanks and a number:
/// the index where the number starts; else 0 (never a valid answer, as
/// the key comes first).
static size_t masked_number_at(const char *s, size_t n, size_t i)
{
    size_t k = sizeof masked_key - 1;
    if (n - i < k || memcmp(s + i, masked_key, k) != 0)
        return 0;
    size_t j = skip_blanks(s, n, i + k);
    if (j >= n || s[j] != ':')
        return 0;
    j = skip_blanks(s, n, j + 1);
    return j < n && (s[j] == '-' || (s[j] >= '0' && s[j] <= '9')) ? j : 0;
}

static size_t number_end(const char *s, size_t n, size_t i)
{
    while (i < n && s[i] && strchr("+-.0123456789eE", s[i]))
        i++;
    return i;
}

bool cqd_replay_same(const char *exp, size_t exp_len, const char *got, size_t got_len, bool mask, size_t *exp_off,
                     size_t *got_off)
{
    size_t i = 0, j = 0;
    while (i < exp_len && j < got_len) {
        if (mask && exp[i] == '"' && got[j] == '"') {
            size_t vi = masked_number_at(exp, exp_len, i), vj = masked_number_at(got, got_len, j);
            if (vi && vj && vi - i == vj - j && memcmp(exp + i, got + j, vi - i) == 0) {
                i = number_end(exp, exp_len, vi);
                j = number_end(got, got_len, vj);
                continue;
            }
        }
        if (exp[i] != got[j])
            break;
        i++;
        j++;
    }
    if (i == exp_len && j == got_len)
        return true;
    *exp_off = i;
    *got_off = j;
    return false;
}

bool cqd_replay_body_varies(const char *method, const char *path)
{
    return strcmp(method, "GET") == 0 && (strcmp(path, "/metrics") == 0 || strcmp(path, "/metrics/fallbacks") == 0);
}

char *cqd_replay_drop_pretty(char *query)
{
    char *out = query;
    const char *p = query;
    while (*p) {
        size_t n = strcspn(p, "&");
        bool pretty = (n == 8 && memcmp(p, "pretty=1", 8) == 0) || (n == 11 && memcmp(p, "pretty=true", 11) == 0);
        if (!pretty) {
            if (out != query)
                *out++ = '&';
            memmove(out, p, n);
            out += n;
        }
        p += n;
        if (*p == '&')
            p++;
    }
    *out = '\0';
    return query;
}
