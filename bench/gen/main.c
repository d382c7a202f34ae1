/* cq-gen KIND N SEED [L]: the project's deterministic inputs on stdout
 * (formats in gen.h). The Makefile makes build/data/ with it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct gen_args {
    long n;
    uint64_t seed;
    double half;
} gen_args;

static int run_pairs(const gen_args *a) { return gen_pairs(stdout, a->n, a->seed); }
static int run_scene(const gen_args *a) { return gen_scene(stdout, a->n, a->seed); }
static int run_rays(const gen_args *a) { return gen_rays(stdout, a->n, a->seed, a->half); }

static const struct kind {
    const char *name;
    int argc; /* words after the kind */
    const char *usage;
    int (*run)(const gen_args *);
} kinds[] = {
    {"pairs", 2, "N SEED      N pairs of oriented boxes", run_pairs},
    {"scene", 2, "N SEED      N moving boxes in the cube [-L, L]^3, L = 2 N^(1/3)", run_scene},
    {"rays", 3, "N SEED L    N rays inside the cube [-L, L]^3", run_rays},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

static int usage(void)
{
    for (size_t i = 0; i < KIND_COUNT; i++)
        fprintf(stderr, "%s cq-gen %-5s %s\n", i ? "      " : "usage:", kinds[i].name, kinds[i].usage);
    return 2;
}

/* Whole decimal words only: a typo must not quietly become another file. */
static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && *out >= 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && end != s && *end == '\0';
}

static int parse_half(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return errno == 0 && end != s && *end == '\0' && isfinite(*out) && *out > 0;
}

static int parse_args(const struct kind *k, char **word, gen_args *a)
{
    a->half = 0;
    return parse_count(word[0], &a->n) && parse_seed(word[1], &a->seed) && (k->argc < 3 || parse_half(word[2], &a->half));
}

static const struct kind *find_kind(const char *name)
{
    for (size_t i = 0; i < KIND_COUNT; i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    const struct kind *k = argc > 1 ? find_kind(argv[1]) : NULL;
    gen_args a;
    if (!k || argc != k->argc + 2 || !parse_args(k, argv + 2, &a))
        return usage();
    int failed = k->run(&a) != 0;
    if (fclose(stdout) != 0 || failed) {
        perror("cq-gen: writing stdout");
        return 1;
    }
    return 0;
}
