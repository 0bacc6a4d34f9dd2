/*
 * wait_twophase.c - two-phase waiting: spin for at most a bound, then
 * block (wait.h).
 *
 * The bound is the cost of one block + wake round trip, B. If the word
 * changes within B the waiter spun exactly as long as it had to, which is
 * what spinning would have cost; otherwise it wasted B spinning plus B
 * blocking, against B for blocking at once: at most twice the best choice
 * made in hindsight (the classic competitive argument).
 *
 * B is a documented constant, not measured at start-up: measuring a round
 * trip needs a second process, which does not exist at library init.
 * SL_TWOPHASE_SPIN_NS is about the kbench futex hand-off (block + wake +
 * two switches) on QEMU at 2 harts, 17 us; on Linux a hand-off is 5-40 us
 * depending on the machine. sl_wait_twophase_bound() overrides it.
 *
 * The clock (sl_plat_ticks, no system call) is read every CHECK_EVERY
 * spins, so the bound is kept to within a few hundred nanoseconds.
 *
 * On a crowded host (more runnable processes than CPUs, host_spin.h) the
 * spin yields its CPU between looks (sl_wait_giveway): the participant it
 * waits for may be queued behind it. The clock is still read every
 * CHECK_EVERY looks, so there the bound is kept to within that many yields.
 */
#include "schedlab.h"
#include "wait/wait.h"
#include "wait/wait_bounds.h"

#define CHECK_EVERY 32

static uint64_t bound_ns = SL_TWOPHASE_SPIN_NS;

uint64_t sl_wait_twophase_bound(uint64_t ns) { return __atomic_exchange_n(&bound_ns, ns, __ATOMIC_RELAXED); }

static int spin_phase(const uint32_t *word, uint32_t old)
{
    uint64_t limit = sl_wait_ns_ticks(__atomic_load_n(&bound_ns, __ATOMIC_RELAXED), sl_info()->timebase_hz);
    uint64_t t0 = sl_plat_ticks();
    sl_wait_pausefn pause = sl_wait_pauser();

    for (unsigned i = 1;; i++) {
        if ((__atomic_load_n(word, __ATOMIC_RELAXED) & SL_WAIT_VALUE) != old)
            return 1;
        if (i % CHECK_EVERY == 0 && sl_plat_ticks() - t0 >= limit)
            return 0;
        sl_wait_giveway(pause);
    }
}

static void twophase_wait(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    (void)wf;
    if (sl_wait_value(word) != old)
        return;
    if (spin_phase(word, old)) {
        (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
        return;
    }
    while (sl_wait_value(word) == old)
        sl_wait_sleep(word, old);
}

SL_WAIT_COUNTED(twophase_wait)
const struct sl_waitops sl_wait_twophase_ops = { "twophase", twophase_wait, sl_wake_word, twophase_wait_counted };
