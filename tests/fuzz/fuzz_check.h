/* What the fuzz targets assert with: a failed check prints the target's
 * name (FUZZ_TARGET, defined before including this) and aborts, which
 * libFuzzer and the replay driver both report as a crash. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static inline void check(int ok, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "%s: %s\n", FUZZ_TARGET, what);
    abort();
}

/* Asserts every real number of v is finite (jansson would not parse a NaN,
 * but a writer could still print a number that overflows to inf). */
static inline void check_finite(const json_t *v, const char *what)
{
    if (json_is_real(v)) {
        double d = json_real_value(v);
        check(d - d == 0, what);
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            check_finite(json_array_get(v, i), what);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
            check_finite(m, what);
    }
}

#endif
