/* platform.c - the machine as the device tree described it; time units; leaving QEMU. */
#include "kernel.h"
#include "uaccess.h"

struct platform plat;

#define SIFIVE_TEST 0x100000UL

void platform_exit(int code)
{
    volatile uint32_t *test = (volatile uint32_t *)SIFIVE_TEST;
    *test = code == 0 ? 0x5555 : ((uint32_t)code << 16) | 0x3333;
    for (;;)
        wfi();
}

/* Exact for any timebase, without overflowing for any realistic run length. */
uint64_t time_us(uint64_t ticks)
{
    uint64_t tb = plat.timebase_hz;
    return ticks / tb * 1000000 + ticks % tb * 1000000 / tb;
}

/* Saturating: a time too far away to represent is UINT64_MAX, never. */
uint64_t us_to_ticks(uint64_t us) { return ticks_of_us(us, plat.timebase_hz); }
