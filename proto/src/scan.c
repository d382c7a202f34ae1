/* Members of a JSON object located in its text (cqp/scan.h). */
#include "cqp/scan.h"

#include <jansson.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && is_ws(s[i]))
        i++;
    return i;
}

/* s[i] is a quote: the index after the closing quote, or n + 1 when the
 * text ends first. */
static size_t skip_string(const char *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n + 1;
}

/* s[i] starts a value: the index after it (a scalar ends before the ','
 * or '}' that follows it), or n + 1 when the text ends first or brackets
 * do not balance. */
static size_t skip_value(const char *s, size_t i, size_t n)
{
    size_t depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            i = skip_string(s, i, n);
            if (i > n || depth == 0)
                return i;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return i;
            if (--depth == 0)
                return i + 1;
        } else if (c == ',' && depth == 0) {
            return i;
        }
        i++;
    }
    return depth == 0 ? n : n + 1;
}

/* The index of the object's closing brace (its last byte but blanks), or
 * n + 1 when the text does not end with one. */
static size_t closing_brace(const char *s, size_t n)
{
    size_t end = n;
    while (end > 0 && is_ws(s[end - 1]))
        end--;
    return end > 0 && s[end - 1] == '}' ? end - 1 : n + 1;
}

/* Where the value starting at s[v] ends: the closing brace for the last
 * of `members` members (seen counts the members so far, this one too),
 * else wherever skip_value finds. */
static size_t value_end(const char *s, size_t v, size_t n, size_t members, size_t seen)
{
    if (members > 0 && seen == members) {
        size_t brace = closing_brace(s, n);
        if (brace <= n && brace >= v)
            return brace;
    }
    return skip_value(s, v, n);
}

int cqp_scan_object(const char *s, size_t n, int (*each)(const cqp_member *m, void *arg), void *arg, size_t *at)
{
    return cqp_scan_object_counted(s, n, 0, each, arg, at);
}

int cqp_scan_object_counted(const char *s, size_t n, size_t members, int (*each)(const cqp_member *m, void *arg),
                            void *arg, size_t *at)
{
    size_t i = skip_ws(s, 0, n), seen = 0;
    if (i < n && s[i] == '{') {
        i = skip_ws(s, i + 1, n);
        while (i < n && s[i] != '}') {
            size_t key = i;
            if (s[i] != '"' || (i = skip_string(s, i, n)) > n)
                break;
            size_t key_end = i;
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ':')
                break;
            size_t v = skip_ws(s, i + 1, n);
            if ((i = value_end(s, v, n, members, ++seen)) > n)
                break;
            size_t end = i;
            while (end > v && is_ws(s[end - 1]))
                end--;
            cqp_member m = {s + key, key_end - key, s + v, end - v};
            int rc = each(&m, arg);
            if (rc != 0)
                return rc;
            i = skip_ws(s, i, n);
            if (i < n && s[i] == ',')
                i = skip_ws(s, i + 1, n);
        }
        if (i < n && s[i] == '}' && skip_ws(s, i + 1, n) == n)
            return 0;
    }
    if (at)
        *at = i < n ? i : n;
    return -1;
}

bool cqp_key_is(const char *token, size_t n, const char *want)
{
    if (!memchr(token, '\\', n))
        return n == strlen(want) + 2 && memcmp(token + 1, want, n - 2) == 0;
    json_t *k = json_loadb(token, n, JSON_DECODE_ANY, NULL);
    bool same = json_is_string(k) && strcmp(json_string_value(k), want) == 0;
    json_decref(k);
    return same;
}
