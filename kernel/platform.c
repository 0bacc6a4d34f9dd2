/* platform.c - the machine as the device tree described it; time units; leaving QEMU. */
#include "kernel.h"
#include "ticks.h"

struct platform plat;

#define SIFIVE_TEST 0x100000UL

void platform_exit(int code)
{
    volatile uint32_t *test = (volatile uint32_t *)SIFIVE_TEST;
    *test = code == 0 ? 0x5555 : ((uint32_t)code << 16) | 0x3333;
    for (;;)
        wfi();
}

/* Exact for any timebase; saturating (ticks.h). */
uint64_t time_us(uint64_t ticks) { return ticks_to_us_tb(ticks, plat.timebase_hz); }
uint64_t us_to_ticks(uint64_t us) { return us_to_ticks_tb(us, plat.timebase_hz); }
