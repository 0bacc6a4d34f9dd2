/*
 * uaccess.h - the arithmetic of checking what a process hands the kernel, kept pure (no kernel state) so
 * the host tests can try every edge of it (tests/host/test_uaccess.c).
 *
 * Invariants the syscalls rely on
 *   - uva_range_ok(va, len): every byte of [va, va+len) lies in [SL_USER_BASE, SL_USER_TOP) and va+len does
 *     not wrap past 2^64. Addresses with high bits set, or at/above 2^38 (outside Sv39), are never user
 *     addresses. An empty range touches nothing and is always fine.
 *   - sat_add and ticks_of_us never wrap: a time too far away becomes UINT64_MAX, "never", which is what a
 *     deadline that far away means (a wrapped one would fall in the past, or on 0 = "no deadline").
 */
#ifndef UACCESS_H
#define UACCESS_H

#include <stdint.h>
#include "abi.h"

static inline int uva_range_ok(uint64_t va, uint64_t len)
{
    if (len == 0)
        return 1;
    return va >= SL_USER_BASE && va < SL_USER_TOP && len <= SL_USER_TOP - va;
}

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* us microseconds in ticks of a hz clock, rounded down, saturating. */
static inline uint64_t ticks_of_us(uint64_t us, uint64_t hz)
{
    uint64_t whole = us / 1000000, part = us % 1000000;
    if (hz && whole > UINT64_MAX / hz)
        return UINT64_MAX;
    return sat_add(whole * hz, part * hz / 1000000);   /* part < 10^6 and hz < 2^32 (a device-tree cell) */
}

#endif
