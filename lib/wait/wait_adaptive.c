/*
 * wait_adaptive.c - schedule-aware waiting: spin only while every
 * participant the waiter still needs is running right now, and for at most
 * a bound; block otherwise (wait.h).
 *
 * The evidence is the job info page's running[] (the kernel sets
 * running[i] while process i is on a hart), read without a system call.
 * Whom the waiter needs comes from the object: a struct sl_waitfor whose
 * running() checks its participants (a barrier: those that have not
 * arrived yet); without one, every other process of the job. Spinning for
 * a participant that is not running only burns a quantum the participant
 * may need (it may be queued behind the spinner on the same hart), so the
 * waiter blocks at once; while all of them run, the change is near and a
 * spin is cheapest.
 *
 * The bound. running[] says a participant holds a hart, not that the hart
 * executes it: a hart that is a host thread may itself wait for a host CPU
 * (more harts than host cores), and deterministic mode runs the harts in
 * turn on one host thread, so every waiter of a job can spin at once on
 * evidence that no partner makes progress, until a preemption ends it. So
 * the spin also ends once the wait has lasted L = SL_ADAPTIVE_SPIN_NS
 * (wait_bounds.h), k times twophase's B, the cost of one block + wake round
 * trip; then the waiter sleeps until the word changes. The competitive
 * argument of two-phase waiting (Karlin, Li, Manasse and Owicki, SOSP 1991)
 * bounds what this costs: a wait of t costs t if t <= L, else L + B,
 * against min(t, B) for the best choice made in hindsight - at most k + 1
 * times that, whatever running[] says. k = 2 rather than twophase's 1:
 * where the evidence is right a wait between B and L still spins, which is
 * what this kind is for (a partner that runs is about to arrive), and every
 * wait shorter than L - a barrier's skew between harts that really run -
 * spins exactly as it did without the bound. The bound runs across the
 * whole wait, sleeps included: a waiter woken after L sleeps again after
 * its next look at the clock.
 *
 * running() is re-evaluated every RECHECK spins (participants may be
 * preempted while we spin) and after every wake-up; the clock (`time`, no
 * system call) every CHECK_EVERY spins, as twophase reads it. The bound
 * starts at the first look at the clock, so a wait that ends within
 * CHECK_EVERY spins - a barrier between harts that really run - costs
 * what it cost before the bound: no clock read, no division; L is kept
 * to within CHECK_EVERY spins. A waiter that went to sleep stays asleep
 * until the word changes, even if its participants are dispatched again
 * meanwhile.
 *
 * On the Linux host running[] says only which processes have not exited and
 * are not asleep in a futex wait (SL_PLAT_RUNNING_EXACT is 0). That is no
 * evidence of being descheduled: a participant asleep in this very barrier
 * is woken by its release, and sleeping at once because of it made every
 * barrier at 2 threads on 2 CPUs cost a wake (a convoy: 0.1 us became 0.3 to
 * 25 us, make bench). Nor can the host know whether a runnable participant
 * is on a CPU - its own job may have more runnable processes than CPUs
 * (host_spin.h), and the machine's other load is invisible - so it waits as
 * twophase does: spin (yielding its CPU between looks while the job is
 * crowded, since the participant may be queued behind it: sl_wait_giveway),
 * and sleep once that has taken a block + wake round trip. What it cannot
 * see then costs it at most twice the best choice in hindsight instead of a
 * time slice.
 */
#include "schedlab.h"
#include "wait/wait.h"
#include "wait/wait_bounds.h"

#define RECHECK     128
#define CHECK_EVERY 32

extern const struct sl_waitops sl_wait_twophase_ops;

static uint64_t bound_ns = SL_ADAPTIVE_SPIN_NS;
static uint64_t bound_ticks; /* bound_ns in ticks of the info page's timebase; 0 until a wait needs it */

uint64_t sl_wait_adaptive_bound(uint64_t ns)
{
    uint64_t was = __atomic_exchange_n(&bound_ns, ns, __ATOMIC_RELAXED);

    __atomic_store_n(&bound_ticks, 0, __ATOMIC_RELAXED);
    return was;
}

static uint64_t limit_ticks(void)
{
    uint64_t t = __atomic_load_n(&bound_ticks, __ATOMIC_RELAXED);

    if (!t) {
        t = sl_wait_ns_ticks(__atomic_load_n(&bound_ns, __ATOMIC_RELAXED), sl_info()->timebase_hz);
        __atomic_store_n(&bound_ticks, t, __ATOMIC_RELAXED);
    }
    return t;
}

static int needed_running(const struct sl_waitfor *wf) { return wf ? wf->running(wf) : sl_others_running(); }

int sl_wait_adaptive_spin(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf, uint64_t *since,
                          uint64_t limit)
{
    sl_wait_pausefn pause = sl_wait_pauser();

    for (unsigned i = 0;; i++) {
        if (i % RECHECK == 0 && !needed_running(wf))
            return 0;
        if ((__atomic_load_n(word, __ATOMIC_RELAXED) & SL_WAIT_VALUE) != old) {
            (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
            return 1;
        }
        sl_wait_pause(pause);
        if (i % CHECK_EVERY == CHECK_EVERY - 1) {
            uint64_t now = sl_plat_ticks();
            if (*since == SL_WAIT_UNTIMED)
                *since = now;
            else if (now - *since >= limit)
                return 0;
        }
    }
}

static void adaptive_wait(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    uint64_t since = SL_WAIT_UNTIMED;

    if (!SL_PLAT_RUNNING_EXACT) { /* the host: see above */
        sl_wait_twophase_ops.wait(word, old, wf);
        return;
    }
    while (sl_wait_value(word) == old) {
        if (sl_wait_adaptive_spin(word, old, wf, &since, limit_ticks()))
            return;
        sl_wait_sleep(word, old);
    }
}

SL_WAIT_COUNTED(adaptive_wait)
const struct sl_waitops sl_wait_adaptive_ops = { "adaptive", adaptive_wait, sl_wake_word, adaptive_wait_counted };
