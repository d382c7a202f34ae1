/* The test's own reader of the Prometheus text format (see prom_oracle.h). */
#include "prom_oracle.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(prom *p, int line, const char *fmt, ...)
{
    if (p->error[0])
        return -1;
    int n = snprintf(p->error, sizeof p->error, "line %d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error + n, sizeof p->error - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int family_index(const prom *p, const char *name)
{
    for (int i = 0; i < p->nfamilies; i++)
        if (strcmp(p->families[i].name, name) == 0)
            return i;
    return -1;
}

static int family_add(prom *p, const char *name)
{
    int i = family_index(p, name);
    if (i >= 0 || p->nfamilies == (int)(sizeof p->families / sizeof p->families[0]))
        return i;
    prom_family *f = &p->families[p->nfamilies];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    return p->nfamilies++;
}

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* Reads a metric or label name at *s into out. */
static bool read_name(const char **s, char *out, size_t size)
{
    size_t n = 0;
    while (name_char(**s, n == 0) && n + 1 < size)
        out[n++] = *(*s)++;
    out[n] = '\0';
    return n > 0 && !name_char(**s, false);
}

/* Which family a sample belongs to: its own name, or a histogram's or
 * summary's base name for the _bucket/_sum/_count series. */
static int sample_family(const prom *p, const char *name)
{
    static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(name), m = strlen(suffixes[k]);
        if (n > m && strcmp(name + n - m, suffixes[k]) == 0) {
            char base[128];
            snprintf(base, sizeof base, "%.*s", (int)(n - m), name);
            int i = family_index(p, base);
            if (i >= 0 && (strcmp(p->families[i].type, "histogram") == 0 ||
                           (strcmp(p->families[i].type, "summary") == 0 && k > 0)))
                return i;
        }
    }
    return family_index(p, name);
}

typedef struct kv {
    char key[64];
    char value[256];
} kv;

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const kv *)a)->key, ((const kv *)b)->key);
}

static int parse_sample(prom *p, int line, const char *s, prom_sample *out)
{
    memset(out, 0, sizeof *out);
    if (!read_name(&s, out->name, sizeof out->name))
        return fail(p, line, "bad metric name");
    kv labels[16];
    int n = 0;
    if (*s == '{') {
        s++;
        while (*s != '}') {
            if (n == 16)
                return fail(p, line, "too many labels");
            if (!read_name(&s, labels[n].key, sizeof labels[n].key) || *s++ != '=' || *s++ != '"')
                return fail(p, line, "bad label syntax");
            size_t len = 0;
            for (; *s != '"'; s++) {
                char c = *s;
                if (c == '\0' || c == '\n')
                    return fail(p, line, "unterminated label value");
                if (c == '\\') {
                    s++;
                    c = *s == 'n' ? '\n' : *s;
                    if (*s != 'n' && *s != '\\' && *s != '"')
                        return fail(p, line, "bad escape \\%c", *s);
                }
                if (len + 1 < sizeof labels[n].value)
                    labels[n].value[len++] = c;
            }
            labels[n].value[len] = '\0';
            s++;
            for (int i = 0; i < n; i++)
                if (strcmp(labels[i].key, labels[n].key) == 0)
                    return fail(p, line, "label %s twice", labels[n].key);
            n++;
            if (*s == ',')
                s++;
            else if (*s != '}')
                return fail(p, line, "expected , or }");
        }
        s++;
    }
    if (*s++ != ' ')
        return fail(p, line, "expected a space before the value");
    char *end;
    if (strncmp(s, "+Inf", 4) == 0) {
        out->value = INFINITY;
        end = (char *)s + 4;
    } else {
        out->value = strtod(s, &end);
        if (end == s)
            return fail(p, line, "bad value");
    }
    if (*end != '\0' && *end != ' ')
        return fail(p, line, "junk after the value");

    qsort(labels, (size_t)n, sizeof labels[0], kv_cmp);
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(labels[i].key, "le") == 0) {
            out->has_le = true;
            out->le = strcmp(labels[i].value, "+Inf") == 0 ? INFINITY : strtod(labels[i].value, &end);
            if (!isinf(out->le) && *end != '\0')
                return fail(p, line, "bad le %s", labels[i].value);
            continue;
        }
        used += (size_t)snprintf(out->labels + used, sizeof out->labels - used, "%s%s=%s", used ? "," : "",
                                 labels[i].key, labels[i].value);
        if (used >= sizeof out->labels)
            return fail(p, line, "labels too long");
    }
    return 0;
}

int prom_parse(prom *p, const char *text)
{
    memset(p, 0, sizeof *p);
    int cap = 0, last_family = -1, line = 0;
    const char *s = text;
    while (*s) {
        line++;
        size_t len = strcspn(s, "\n");
        if (s[len] != '\n')
            return fail(p, line, "the last line has no newline");
        char buf[1024];
        if (len >= sizeof buf)
            return fail(p, line, "line too long");
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + 1;

        if (buf[0] == '#') {
            char kind[8], name[128];
            if (sscanf(buf, "# %7s %127s", kind, name) != 2 ||
                (strcmp(kind, "HELP") != 0 && strcmp(kind, "TYPE") != 0))
                continue; /* a plain comment */
            int f = family_add(p, name);
            if (f < 0)
                return fail(p, line, "too many families");
            prom_family *fam = &p->families[f];
            if (fam->samples > 0)
                return fail(p, line, "%s for %s after its samples", kind, name);
            if (strcmp(kind, "HELP") == 0) {
                fam->help_lines++;
            } else {
                fam->type_lines++;
                char type[16];
                if (sscanf(buf, "# TYPE %*s %15s", type) != 1)
                    return fail(p, line, "TYPE without a type");
                if (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "histogram") &&
                    strcmp(type, "summary") && strcmp(type, "untyped"))
                    return fail(p, line, "unknown type %s", type);
                snprintf(fam->type, sizeof fam->type, "%s", type);
            }
            continue;
        }
        if (len == 0)
            continue;
        if (p->nsamples == cap) {
            cap = cap ? 2 * cap : 64;
            prom_sample *grown = realloc(p->samples, (size_t)cap * sizeof *grown);
            if (!grown)
                return fail(p, line, "out of memory");
            p->samples = grown;
        }
        prom_sample *smp = &p->samples[p->nsamples];
        if (parse_sample(p, line, buf, smp) < 0)
            return -1;
        int f = sample_family(p, smp->name);
        if (f < 0 || p->families[f].type[0] == '\0')
            return fail(p, line, "sample %s has no TYPE before it", smp->name);
        if (f != last_family && p->families[f].samples > 0)
            return fail(p, line, "samples of %s are not contiguous", p->families[f].name);
        smp->family = f;
        p->families[f].samples++;
        last_family = f;
        p->nsamples++;
    }
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* One histogram series (one label set): its buckets in order, _sum, _count. */
static int check_series(prom *p, int f, const char *labels)
{
    const prom_family *fam = &p->families[f];
    char bucket[160], sum[160], count[160];
    snprintf(bucket, sizeof bucket, "%s_bucket", fam->name);
    snprintf(sum, sizeof sum, "%s_sum", fam->name);
    snprintf(count, sizeof count, "%s_count", fam->name);
    double prev_le = -INFINITY, prev_v = 0, last_le = NAN, last_v = NAN;
    int buckets = 0;
    for (int i = 0; i < p->nsamples; i++) {
        const prom_sample *s = &p->samples[i];
        if (strcmp(s->name, bucket) != 0 || strcmp(s->labels, labels) != 0)
            continue;
        if (!s->has_le)
            return fail(p, 0, "%s{%s} without le", bucket, labels);
        if (!(s->le > prev_le))
            return fail(p, 0, "%s{%s}: le not ascending", bucket, labels);
        if (s->value < prev_v)
            return fail(p, 0, "%s{%s}: buckets not cumulative", bucket, labels);
        prev_le = last_le = s->le;
        prev_v = last_v = s->value;
        buckets++;
    }
    if (buckets == 0 || !isinf(last_le))
        return fail(p, 0, "%s{%s}: no +Inf bucket", bucket, labels);
    double c = prom_value(p, count, labels);
    if (c != last_v)
        return fail(p, 0, "%s{%s}: +Inf %g != _count %g", bucket, labels, last_v, c);
    if (isnan(prom_value(p, sum, labels)))
        return fail(p, 0, "%s{%s}: no _sum", fam->name, labels);
    return 0;
}

/* Orders samples by name, labels and le (a missing le first). */
static int sample_order(const void *x, const void *y)
{
    const prom_sample *a = *(const prom_sample *const *)x, *b = *(const prom_sample *const *)y;
    int c = strcmp(a->name, b->name);
    if (c == 0)
        c = strcmp(a->labels, b->labels);
    if (c == 0)
        c = a->has_le != b->has_le ? a->has_le - b->has_le : (a->le > b->le) - (a->le < b->le);
    return c;
}

/* No two samples may share name and labels, le included: a scraper
 * keeps one of them and drops the rest. Sorted, so equal ones are
 * neighbours (thousands of samples stay quick under the sanitizers). */
static int check_unique(prom *p)
{
    if (p->nsamples < 2)
        return 0;
    const prom_sample **order = malloc((size_t)p->nsamples * sizeof *order);
    if (!order)
        return fail(p, 0, "out of memory");
    for (int i = 0; i < p->nsamples; i++)
        order[i] = &p->samples[i];
    qsort(order, (size_t)p->nsamples, sizeof *order, sample_order);
    int rc = 0;
    for (int i = 1; i < p->nsamples && rc == 0; i++)
        if (sample_order(&order[i - 1], &order[i]) == 0)
            rc = fail(p, 0, "%s{%s} appears twice", order[i]->name, order[i]->labels);
    free(order);
    return rc;
}

int prom_check(prom *p)
{
    if (check_unique(p) < 0)
        return -1;
    for (int f = 0; f < p->nfamilies; f++) {
        const prom_family *fam = &p->families[f];
        if (fam->help_lines != 1 || fam->type_lines != 1)
            return fail(p, 0, "%s: %d HELP and %d TYPE lines", fam->name, fam->help_lines, fam->type_lines);
        if (strcmp(fam->type, "counter") == 0 && !ends_with(fam->name, "_total"))
            return fail(p, 0, "counter %s does not end in _total", fam->name);
    }
    for (int i = 0; i < p->nsamples; i++) {
        const prom_sample *s = &p->samples[i];
        const prom_family *fam = &p->families[s->family];
        if (strcmp(fam->type, "histogram") != 0)
            continue;
        if (strcmp(s->name, fam->name) == 0)
            return fail(p, 0, "histogram %s has a bare sample", fam->name);
        if (ends_with(s->name, "_count") && check_series(p, s->family, s->labels) < 0)
            return -1;
        if (ends_with(s->name, "_bucket")) {
            char count[160];
            snprintf(count, sizeof count, "%s_count", fam->name);
            if (isnan(prom_value(p, count, s->labels)))
                return fail(p, 0, "%s{%s} has no _count", s->name, s->labels);
        }
    }
    return 0;
}

void prom_free(prom *p)
{
    free(p->samples);
    p->samples = NULL;
}

double prom_value(const prom *p, const char *name, const char *labels)
{
    for (int i = 0; i < p->nsamples; i++)
        if (!p->samples[i].has_le && strcmp(p->samples[i].name, name) == 0 &&
            strcmp(p->samples[i].labels, labels) == 0)
            return p->samples[i].value;
    return NAN;
}

double prom_bucket(const prom *p, const char *name, const char *labels, double le)
{
    char bucket[160];
    snprintf(bucket, sizeof bucket, "%s_bucket", name);
    for (int i = 0; i < p->nsamples; i++)
        if (p->samples[i].has_le && p->samples[i].le == le && strcmp(p->samples[i].name, bucket) == 0 &&
            strcmp(p->samples[i].labels, labels) == 0)
            return p->samples[i].value;
    return NAN;
}

int prom_count(const prom *p, const char *name)
{
    int n = 0;
    for (int i = 0; i < p->nsamples; i++)
        n += strcmp(p->samples[i].name, name) == 0;
    return n;
}

const prom_family *prom_family_of(const prom *p, const char *name)
{
    int i = family_index(p, name);
    return i >= 0 ? &p->families[i] : NULL;
}
