/*
 * wait_adaptive.c - schedule-aware waiting: spin only while every
 * participant the waiter still needs is running right now, block
 * otherwise (wait.h).
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
 * running() is re-evaluated every RECHECK spins (participants may be
 * preempted while we spin) and after every wake-up. A waiter that went to
 * sleep stays asleep until the word changes, even if its participants are
 * dispatched again meanwhile.
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

#define RECHECK 128

extern const struct sl_waitops sl_wait_twophase_ops;

static int needed_running(const struct sl_waitfor *wf) { return wf ? wf->running(wf) : sl_others_running(); }

static void adaptive_wait(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    sl_wait_pausefn pause = sl_wait_pauser();

    if (!SL_PLAT_RUNNING_EXACT) { /* the host: see above */
        sl_wait_twophase_ops.wait(word, old, wf);
        return;
    }
    while (sl_wait_value(word) == old) {
        while (needed_running(wf)) {
            for (unsigned i = 0; i < RECHECK; i++) {
                if ((__atomic_load_n(word, __ATOMIC_RELAXED) & SL_WAIT_VALUE) != old) {
                    (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
                    return;
                }
                sl_wait_pause(pause);
            }
        }
        sl_wait_sleep(word, old);
    }
}

SL_WAIT_COUNTED(adaptive_wait)
const struct sl_waitops sl_wait_adaptive_ops = { "adaptive", adaptive_wait, sl_wake_word, adaptive_wait_counted };
