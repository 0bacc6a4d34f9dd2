/* The arithmetic of user-pointer checks (kernel/uaccess.h) at every edge, under UBSan: ranges that wrap past
   2^64, that end exactly at the top of user space, addresses outside Sv39 or with high bits set. Compared
   with a 128-bit reference. (Deadlines and tick conversions: test_ticks.c.) */
#include <stdlib.h>
#include "check.h"
#include "uaccess.h"

typedef unsigned __int128 u128;

static int range_ref(uint64_t va, uint64_t len)
{
    return len == 0 || ((u128)va >= SL_USER_BASE && (u128)va + len <= SL_USER_TOP);
}

static uint64_t rng = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* values near the edges that matter */
static uint64_t edge(void)
{
    static const uint64_t e[] = { 0, 1, 4095, 4096, SL_USER_BASE, SL_USER_TOP, 1ULL << 38, 1ULL << 39,
                                  0x8000000000000000ULL, UINT64_MAX, 0x80200000ULL, SL_HEAP_VA };
    uint64_t v = e[rnd() % (sizeof e / sizeof *e)];
    switch (rnd() % 4) {
    case 0: return v;
    case 1: return v - 1 - rnd() % 8;
    case 2: return v + 1 + rnd() % 8;
    default: return rnd() >> (rnd() % 64);
    }
}

static void test_ranges(void)
{
    CHECK(uva_range_ok(SL_USER_BASE, 1));
    CHECK(uva_range_ok(SL_USER_TOP - 8, 8));                      /* ends exactly at the top */
    CHECK(!uva_range_ok(SL_USER_TOP - 8, 64));                    /* runs past it (fault.c's badptr) */
    CHECK(!uva_range_ok(SL_USER_TOP, 1));
    CHECK(!uva_range_ok(SL_USER_BASE - 1, 2));
    CHECK(!uva_range_ok(SL_USER_BASE, UINT64_MAX));               /* huge length */
    CHECK(!uva_range_ok(UINT64_MAX - 10, 100));                    /* wraps past 2^64 */
    CHECK(!uva_range_ok(SL_USER_BASE | (1ULL << 38), 1));         /* outside Sv39 */
    CHECK(!uva_range_ok(SL_USER_BASE | 0xffffff8000000000ULL, 1)); /* high bits set */
    CHECK(uva_range_ok(0, 0) && uva_range_ok(UINT64_MAX, 0));     /* empty: touches nothing */
    for (int i = 0; i < 2000000; i++) {
        uint64_t va = edge(), len = edge();
        CHECK(uva_range_ok(va, len) == range_ref(va, len));
    }
}

int main(void)
{
    test_ranges();
    return check_done("test_uaccess");
}
