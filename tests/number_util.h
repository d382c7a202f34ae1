/* Shared by the suites that check numbers bit for bit (check_proto_number.c,
 * check_proto_write.c): an exact comparison of doubles and an assert quiet
 * enough for loops over hundreds of thousands of values. */
#ifndef CQ_NUMBER_UTIL_H
#define CQ_NUMBER_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <string.h>

/* True when a and b have the same bits (so -0 differs from 0, and a NaN
 * equals itself). */
static inline bool nu_same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Check records every passing assert (a write per call), so the loops
 * over hundreds of thousands of values only call into it on failure. */
#define nu_require(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg(__VA_ARGS__);                                         \
    } while (0)

#endif
