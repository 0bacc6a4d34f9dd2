/*
 * lcg.h - the 64-bit linear congruential step the workloads compute with (x -> A x + C mod 2^64,
 * Knuth's MMIX constants), and its n-fold composition in O(log n), so an app can check the result
 * of n steps without redoing them.
 */
#ifndef SL_LCG_H
#define SL_LCG_H

#include <stdint.h>

#define SL_LCG_A 6364136223846793005ull
#define SL_LCG_C 1442695040888963407ull

static inline uint64_t
sl_lcg_step(uint64_t x)
{
    return x * SL_LCG_A + SL_LCG_C;
}

/* n steps as one affine map x -> *pa x + *pc (square-and-multiply on the maps). */
static inline void
sl_lcg_pow(uint64_t n, uint64_t *pa, uint64_t *pc)
{
    uint64_t a = SL_LCG_A, c = SL_LCG_C, ra = 1, rc = 0;

    for (; n; n >>= 1) {
        if (n & 1) {
            ra *= a;
            rc = rc * a + c;
        }
        c *= a + 1;
        a *= a;
    }
    *pa = ra;
    *pc = rc;
}

/* x advanced by n steps. */
static inline uint64_t
sl_lcg_jump(uint64_t x, uint64_t n)
{
    uint64_t a, c;

    sl_lcg_pow(n, &a, &c);
    return a * x + c;
}

#endif
