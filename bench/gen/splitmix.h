/* SplitMix64 (Steele, Lea and Flood 2014; Vigna's splitmix64.c), the one
 * random stream behind the generated test and benchmark inputs (cq-gen) and
 * the Check suites' random cases. Header-only, so bench/gen and tests/
 * share this copy without either linking the other. */
#ifndef GEN_SPLITMIX_H
#define GEN_SPLITMIX_H

#include <stdint.h>

/// One SplitMix64 stream; `state` starts as the seed.
typedef struct gen_rng {
    uint64_t state;
} gen_rng;

/// The next 64-bit output: the state steps by the golden-ratio increment
/// and a copy of it is mixed, so every seed gives a full-period stream.
static inline uint64_t gen_next(gen_rng *rng)
{
    rng->state += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// A uniform double in [lo, hi] (hi only by rounding): the top 53 bits of
/// the next output as a fraction of 2^53, scaled. Draws one output.
static inline double gen_uniform(gen_rng *rng, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(gen_next(rng) >> 11) * (1.0 / 9007199254740992.0));
}

#endif
