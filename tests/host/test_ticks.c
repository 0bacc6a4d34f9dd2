/* Unit tests of the tick/microsecond conversions (kernel/ticks.h): exact against 128-bit arithmetic for
   random values and timebases, and saturating where the old code wrapped (a futex timeout of UINT64_MAX
   or 2^63 us gave a deadline a few milliseconds away; issue 10, defect 4). */
#include <stdlib.h>
#include "check.h"
#include "ticks.h"

static uint64_t exact_or_never(unsigned __int128 v) { return v > UINT64_MAX ? TICKS_NEVER : (uint64_t)v; }

static uint64_t rnd64(void)
{
    uint64_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 16 | (uint64_t)(rand() & 0xffff);
    return v >> (rand() % 64);              /* every magnitude */
}

int main(void)
{
    const uint64_t tb10 = 10000000;         /* QEMU virt: 10 MHz */
    CHECK(us_to_ticks_tb(1, tb10) == 10);
    CHECK(us_to_ticks_tb(1500000, tb10) == 15000000);
    CHECK(ticks_to_us_tb(15000007, tb10) == 1500000);
    CHECK(us_to_ticks_tb(UINT64_MAX, tb10) == TICKS_NEVER);
    CHECK(us_to_ticks_tb(1ULL << 63, tb10) == TICKS_NEVER);
    CHECK(us_to_ticks_tb(1844674407370955161ULL, tb10) == 18446744073709551610ULL);   /* the largest that fits */
    CHECK(us_to_ticks_tb(1844674407370955162ULL, tb10) == TICKS_NEVER);
    CHECK(ticks_add_sat(UINT64_MAX - 5, 5) == UINT64_MAX && ticks_add_sat(UINT64_MAX - 5, 6) == TICKS_NEVER);
    CHECK(ticks_add_sat(1, 2) == 3);
    CHECK(ticks_to_us_tb(UINT64_MAX, 1) == TICKS_NEVER);                        /* a 1 Hz timebase */
    CHECK(ticks_to_us_tb(UINT64_MAX, tb10) == UINT64_MAX / 10);

    srand(7);
    const uint64_t tbs[] = { 1, 1000, 32768, 1000000, tb10, 24000000, 1000000000ULL, 3000000000ULL };
    for (int i = 0; i < 200000; i++) {
        uint64_t tb = tbs[i % (sizeof tbs / sizeof tbs[0])], v = rnd64();
        uint64_t want_t = exact_or_never((unsigned __int128)v * tb / 1000000);
        uint64_t want_u = exact_or_never((unsigned __int128)v * 1000000 / tb);
        uint64_t got_t = us_to_ticks_tb(v, tb), got_u = ticks_to_us_tb(v, tb);
        if (got_t != want_t || got_u != want_u) {
            fprintf(stderr, "v=%llu tb=%llu: ticks %llu (want %llu), us %llu (want %llu)\n", (unsigned long long)v,
                    (unsigned long long)tb, (unsigned long long)got_t, (unsigned long long)want_t,
                    (unsigned long long)got_u, (unsigned long long)want_u);
            CHECK(0);
            break;
        }
    }
    CHECK(1);
    return check_done("test_ticks");
}
