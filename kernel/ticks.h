/*
 * ticks.h - converting between the time CSR's ticks and microseconds, for any timebase, saturating.
 *
 * Pure arithmetic (host-tested in tests/host/test_ticks.c). A conversion whose exact result does not fit
 * in 64 bits gives UINT64_MAX, which every caller reads as "never": a user's futex timeout of 2^64-1 us
 * must mean "wait forever", not wrap around into a deadline a few milliseconds away (issue 10).
 */
#ifndef TICKS_H
#define TICKS_H

#include <stdint.h>

#define TICKS_NEVER UINT64_MAX

/* a + b, or TICKS_NEVER if that does not fit */
static inline uint64_t ticks_add_sat(uint64_t a, uint64_t b) { return b > TICKS_NEVER - a ? TICKS_NEVER : a + b; }

/* ticks -> microseconds, exact (rounded down), saturating at TICKS_NEVER */
static inline uint64_t ticks_to_us_tb(uint64_t ticks, uint64_t tb)
{
    uint64_t whole = ticks / tb, frac = ticks % tb;
    uint64_t us = frac * 1000000 / tb;          /* frac < tb: fits for any tb < 1.8e13 Hz */
    if (whole > (TICKS_NEVER - us) / 1000000)
        return TICKS_NEVER;
    return whole * 1000000 + us;
}

/* microseconds -> ticks, exact (rounded down), saturating at TICKS_NEVER */
static inline uint64_t us_to_ticks_tb(uint64_t us, uint64_t tb)
{
    uint64_t whole = us / 1000000, frac = us % 1000000;
    if (tb && whole > TICKS_NEVER / tb)
        return TICKS_NEVER;
    return ticks_add_sat(whole * tb, frac * tb / 1000000);   /* frac * tb fits for tb < 1.8e13 Hz */
}

#endif
