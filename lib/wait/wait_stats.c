/*
 * wait_stats.c - the counting wait kinds: each kind of sl_waits[] wrapped so that a wait publishes itself
 * in the process's sync statistics record (base/syncstat.h, abi.h "sync statistics"): one wait, the ticks
 * it took (spinning, asleep, parked or preempted), and in_wait and wait_open while inside it.
 *
 * Installed by sl_wait_stats_start (the start code, process 0, before the app's main and before any other
 * process or thread exists) only where the kernel mapped the page (policy=adaptive); then sl_waits[k]
 * points at counted[k], which calls the kind it replaced. Under every other policy the table is never
 * touched and a wait costs exactly what it did: the publication is paid by the policy that reads it - and
 * only while it reads the wait times (the info page's sync_timed: a job folded onto its partition is judged
 * by its barrier episodes alone, and its waits then cost one load more than uncounted ones).
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

/* The waits of the kinds the counted ones wrap (set once, at start-up: the kinds are immutable). */
static void (*inner_wait[SL_NWAITS])(const uint32_t *, uint32_t, const struct sl_waitfor *);
static struct sl_waitops counted[SL_NWAITS];

/* The caller is a thread whose wait is not its process's (the header). Asked only of a timed wait. */
static int threads_wait(void)
{
    const struct sl_wait_threads *t = __atomic_load_n(&sl_wait_thread_hooks, __ATOMIC_RELAXED);
    return t && t->wait_is_threads();
}

/* A wait of kind k that the kernel reads (the info page's sync_timed): out of line, so that the untimed
   path below keeps no frame. */
static __attribute__((noinline)) void timed_wait(int k, const uint32_t *word, uint32_t old,
                                                  const struct sl_waitfor *wf)
{
    struct sl_sync *s = sl_sync_rec();
    if (!s || threads_wait()) {
        inner_wait[k](word, old, wf);
        return;
    }
    uint64_t t0 = sl_plat_ticks();
    sl_sync_wait_begins(s, t0);
    inner_wait[k](word, old, wf);
    sl_sync_wait_ends(s, t0, sl_plat_ticks(), 1);
}

/* Untimed (the common case: a job folded onto its share), a counted wait is two loads and a jump more
   than the kind's own: the flag, the kind's wait, a tail call - no stack, since under the machine model
   every access is charged host time (measured: the frame of a single wrapper function doubled the
   counting's accesses). */
static inline void counted_wait(int k, const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    if (__builtin_expect(!sl_sync_timed(), 1))
        inner_wait[k](word, old, wf);
    else
        timed_wait(k, word, old, wf);
}

#define COUNTED(k) \
    static void counted_##k(const uint32_t *w, uint32_t old, const struct sl_waitfor *wf) { counted_wait(k, w, old, wf); }
COUNTED(0)
COUNTED(1)
COUNTED(2)
COUNTED(3)
_Static_assert(SL_NWAITS == 4, "a counted wrapper per wait kind");
static void (*const counted_fns[SL_NWAITS])(const uint32_t *, uint32_t, const struct sl_waitfor *) = {
    counted_0, counted_1, counted_2, counted_3,
};

int sl_wait_stats_start(void)
{
    if (!sl_sync_published() || inner_wait[0])
        return inner_wait[0] != 0;
    for (int k = 0; k < SL_NWAITS; k++) {
        inner_wait[k] = sl_waits[k]->wait;
        counted[k] = *sl_waits[k];
        counted[k].wait = counted_fns[k];
        sl_waits[k] = &counted[k];
    }
    return 1;
}
