/*
 * wait_stats.c - the counting wait kinds: each kind of sl_waits[] swapped for one whose wait publishes itself
 * in the process's sync statistics record (base/syncstat.h, abi.h "sync statistics"): one wait, the ticks
 * it took (spinning, asleep, parked or preempted), and in_wait and wait_open while inside it.
 *
 * Each kind makes its counted wait beside itself (wait.h SL_WAIT_COUNTED: a direct call of the kind's wait,
 * and sl_wait_timed below only while timed). Installed by sl_wait_stats_start (the start code, process 0,
 * before the app's main and before any other process or thread exists) only where the kernel mapped the
 * page (policy=adaptive); then sl_waits[k] points at counted[k], the kind with its counted wait. Under
 * every other policy the table is never touched and a wait costs exactly what it did: the publication is
 * paid by the policy that reads it - and only while it reads the wait times (the info page's sync_timed:
 * a job folded onto its partition is judged by its barrier episodes alone, and its waits then cost one
 * load more than uncounted ones).
 *
 * A user-level thread of a process whose idle streaks are published (a run of placed threads:
 * threads/uthread.c, the thread hooks' wait_is_threads) is not counted: while it waits its process runs
 * its other threads, and the process waits only when it has none left - the streak, which is counted.
 * Counted as well, the threads' waits covered the process's compute: gauss fine showed more time waiting
 * than running (t_p 0, 99 % waiting) and left its gang row for a partition where it ran 1.1 s instead of
 * 0.28 (MODEL=modern, QEMU, 2 harts, one seed of three).
 *
 * A user-level thread may wait on one process and be resumed on another (work stealing, process control):
 * the wait is counted in the record of the process it began on, with atomic adds, so in_wait stays
 * balanced whichever process ends it (sl_sync_wait_ends says what that costs wait_open).
 */
#include "schedlab.h"
#include "wait/wait.h"
#include "base/syncstat.h"

static struct sl_waitops counted[SL_NWAITS];

/* The caller is a thread whose wait is not its process's (the header). Asked only of a timed wait. */
static int threads_wait(void)
{
    const struct sl_wait_threads *t = __atomic_load_n(&sl_wait_thread_hooks, __ATOMIC_RELAXED);
    return t && t->wait_is_threads();
}

/* A kind's wait fn that the kernel reads (the info page's sync_timed), from its SL_WAIT_COUNTED wrapper
   (wait.h): out of line, so that the untimed path keeps no frame. */
void sl_wait_timed(sl_waitfn fn, const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    struct sl_sync *s = sl_sync_rec();
    if (!s || threads_wait()) {
        fn(word, old, wf);
        return;
    }
    uint64_t t0 = sl_plat_ticks();
    sl_sync_wait_begins(s, t0);
    fn(word, old, wf);
    sl_sync_wait_ends(s, t0, sl_plat_ticks(), 1);
}

int sl_wait_stats_start(void)
{
    if (!sl_sync_published() || counted[0].wait)
        return counted[0].wait != 0;
    for (int k = 0; k < SL_NWAITS; k++) {
        if (!sl_waits[k]->counted_wait)
            sl_die("wait kind %s has no counted wait (wait.h: SL_WAIT_COUNTED)", sl_waits[k]->name);
        counted[k] = *sl_waits[k];
        counted[k].wait = sl_waits[k]->counted_wait;
        sl_waits[k] = &counted[k];
    }
    return 1;
}
