/*
 * uaccess.h - the arithmetic of checking what a process hands the kernel, kept pure (no kernel state) so
 * the host tests can try every edge of it (tests/host/test_uaccess.c).
 *
 * Invariants the syscalls rely on
 *   - uva_range_ok(va, len): every byte of [va, va+len) lies in [SL_USER_BASE, SL_USER_TOP) and va+len does
 *     not wrap past 2^64. Addresses with high bits set, or at/above 2^38 (outside Sv39), are never user
 *     addresses. An empty range touches nothing and is always fine.
 */
#ifndef UACCESS_H
#define UACCESS_H

#include <stdint.h>
#include "schedlab/abi.h"

static inline int uva_range_ok(uint64_t va, uint64_t len)
{
    if (len == 0)
        return 1;
    return va >= SL_USER_BASE && va < SL_USER_TOP && len <= SL_USER_TOP - va;
}

#endif
