/*
 * core.c - identity, time, yielding and futexes: thin, cheap wrappers over
 * the platform layer.
 */
#include "schedlab.h"

volatile struct sl_info *sl_info(void) { return sl_plat_info(); }

int sl_self(void) { return sl_plat_proc()->index; }
int sl_nprocs(void) { return (int)sl_plat_info()->nprocs; }
int sl_hart(void) { return (int)sl_sys_hart(); }
void sl_yield(void) { sl_sys_yield(); }

/* ticks / hz in microseconds without overflowing ticks * 1e6. */
uint64_t sl_ticks_to_us(uint64_t ticks)
{
    uint64_t hz = sl_plat_info()->timebase_hz;
    return ticks / hz * 1000000u + ticks % hz * 1000000u / hz;
}

uint64_t sl_now_us(void) { return sl_ticks_to_us(sl_plat_ticks()); }

long sl_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us)
{
    return sl_sys_futex_wait(addr, expected, timeout_us);
}

long sl_futex_wake(const uint32_t *addr, uint32_t n) { return sl_sys_futex_wake(addr, n); }

void sl_rng_init(struct sl_rng *r, uint64_t stream) { sl_rng_seed(r, sl_plat_info()->seed, stream); }
