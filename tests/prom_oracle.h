/* An independent reader of the Prometheus text format 0.0.4 for the
 * metrics suite: it parses an exposition into families and samples and
 * checks the format's rules, sharing no code with the renderer. */
#ifndef CQ_PROM_ORACLE_H
#define CQ_PROM_ORACLE_H

#include <stdbool.h>

typedef struct prom_sample {
    char name[128];    /* the sample's own name (with _bucket/_sum/_count) */
    char labels[512];  /* unescaped "k=v" pairs sorted by key, joined by ',', without le */
    bool has_le;
    double le;         /* the le label's value (+Inf as INFINITY) */
    double value;
    int family;        /* index into prom.families */
} prom_sample;

typedef struct prom_family {
    char name[128];
    char type[16];     /* "" until a TYPE line was seen */
    int help_lines, type_lines;
    int samples;
} prom_family;

typedef struct prom {
    prom_family families[64];
    int nfamilies;
    prom_sample *samples; /* malloc'd */
    int nsamples;
    char error[256];      /* the first rule broken, or "" */
} prom;

/* Parses text (NUL-terminated) into p and checks: HELP and TYPE at most
 * once per family and before its samples, every sample in a TYPE'd family,
 * each family's samples contiguous, label syntax and escapes, values that
 * parse. Returns 0, or -1 with p->error set. Free p with prom_free. */
int prom_parse(prom *p, const char *text);

/* Checks the families after a successful parse: no two samples with the
 * same name and labels; exactly one HELP and TYPE each; histogram series with ascending le ending at +Inf, cumulative
 * (non-decreasing) counts, +Inf equal to _count, and a _sum; counter names
 * ending in _total. Returns 0, or -1 with p->error set. */
int prom_check(prom *p);

void prom_free(prom *p);

/* The value of the sample name{labels} (labels as in prom_sample, "" for
 * none; without le), or NAN when there is none. */
double prom_value(const prom *p, const char *name, const char *labels);
/* The value of name_bucket{labels, le}, or NAN. */
double prom_bucket(const prom *p, const char *name, const char *labels, double le);
/* How many samples are named name. */
int prom_count(const prom *p, const char *name);
/* The family of a name, or NULL. */
const prom_family *prom_family_of(const prom *p, const char *name);

#endif
