/*
 * rng.h - a small seeded PRNG (splitmix64): one 64-bit word of state, full
 * period, good enough for generating inputs and random work amounts.
 *
 * Each process or data stream owns its own struct sl_rng; nothing is shared.
 * sl_rng_init(r, stream) derives the state from the job's seed
 * (info->seed) and a stream number, so runs with the same seed= generate the
 * same inputs whatever the number of processes, when the app numbers its
 * streams by data (row, key block) rather than by process.
 */
#ifndef SL_RNG_H
#define SL_RNG_H

#include <stdint.h>

struct sl_rng {
    uint64_t s;
};

static inline uint64_t
sl_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t
sl_rng_u64(struct sl_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return sl_mix64(r->s);
}

/* Uniform in [0, n), n > 0 (multiply-shift; bias < n / 2^64). */
static inline uint64_t
sl_rng_below(struct sl_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)sl_rng_u64(r) * n) >> 64);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double
sl_rng_double(struct sl_rng *r)
{
    return (double)(sl_rng_u64(r) >> 11) * 0x1p-53;
}

static inline void
sl_rng_seed(struct sl_rng *r, uint64_t seed, uint64_t stream)
{
    r->s = sl_mix64(seed ^ sl_mix64(stream + 0x632be59bd9b4e019ull));
}

/* Seeded from the job's seed (defined in core.c). */
void sl_rng_init(struct sl_rng *r, uint64_t stream);

#endif
