/*
 * syncstat.h - publishing how this process synchronizes, for a policy that chooses per job between
 * coscheduling and space sharing (abi.h "sync statistics", kernel/sched/adaptive/adaptive.c): spinning is invisible
 * to the kernel, so the library says it.
 *
 * Where the info page has SL_INFO_SYNCSTAT (policy=adaptive), process i's record is at SL_SYNC_VA + SL_SYNC_OFFSET(i)
 * (the platform attaches it: sl_proc.sync). Nothing on the hot paths asks whether it is there: at start-up
 * (lib/start/rv_start.c) the wait layer swaps its kinds for counting ones (wait/wait_stats.c) and the
 * barrier layer its shapes (barriers/barrier.c), each only when the flag is set - under every other policy
 * and on the host the library runs exactly the code it runs without this. The counts:
 *   episodes   a worker arrived at a barrier (the counting shapes' wait), or a process of a run of placed
 *              threads ran out of them (threads/uthread.c streak_begins: it waits for its partners)
 *   waits, wait_ticks, in_wait, wait_open   around a wait kind's wait (the counting kinds'), while the
 *              info page's sync_timed says the kernel reads them (sl_sync_wait_begins/ends); in_wait says
 *              the process is inside one (the kernel subtracts its preemptions there), wait_open since when
 *   units      process 0's: the pinned workers of the worker run in progress (sl_sync_units)
 * The time asleep is the kernel's to count (a process blocked while in_wait), not published.
 * Layer: base (lib/LAYERS) - it calls only the platform, so the wait and barrier layers may use it.
 */
#ifndef SL_SYNCSTAT_H
#define SL_SYNCSTAT_H

#include <stdint.h>
#include "schedlab/abi.h"
#include "platform/platform.h"

/* 1 when this job publishes (policy=adaptive on the schedlab kernel). */
static inline int sl_sync_published(void) { return (sl_plat_info()->flags & SL_INFO_SYNCSTAT) != 0; }

/* 1 while the kernel reads this job's wait times (the info page's sync_timed, a live field). */
static inline int sl_sync_timed(void) { return sl_plat_info()->sync_timed != 0; }

/* This process's record, or NULL (a host thread that is no process, or nothing published). */
static inline struct sl_sync *sl_sync_rec(void)
{
    struct sl_proc *p = sl_plat_proc();
    return p ? p->sync : 0;
}

/* A worker of this process arrived at a barrier. The record is this process's own and a process runs its
   threads one at a time, so it has one writer: a plain increment through a volatile word (a load and a
   store; no atomic read-modify-write, which the compiler emits even for a relaxed atomic store of a
   32-bit word here, an amoswap: the kernel only reads it, and an aligned word is never torn). */
static inline void sl_sync_episode(void)
{
    struct sl_sync *s = sl_sync_rec();
    if (s) {
        volatile uint32_t *e = &s->episodes;
        *e = *e + 1;
    }
}

/* Process 0, around a worker run: it runs n pinned workers (0: the run is over). A job whose workers
   synchronize folds them into ceil(n / harts) rounds per step, so the policy knows which harts speed it up. */
static inline void sl_sync_units(uint32_t n)
{
    struct sl_sync *s = sl_sync_rec();
    if (s)
        __atomic_store_n(&s->units, n, __ATOMIC_RELAXED);
}

/* A timed wait of record s (sl_sync_timed) begins at t0 (a sl_plat_ticks value). The outermost one
   publishes its start, so the kernel counts a wait still open at a window's end (abi.h wait_open). */
static inline void sl_sync_wait_begins(struct sl_sync *s, uint64_t t0)
{
    if (__atomic_add_fetch(&s->in_wait, 1, __ATOMIC_RELAXED) == 1)
        __atomic_store_n(&s->wait_open, t0 | 1, __ATOMIC_RELAXED); /* never 0 while open */
}

/* That wait is over at t1: counted (one wait of t1 - t0 ticks) or not (it was no wait on a partner). The
   outermost one withdraws its start before its ticks are added (release: in that order), and the kernel
   reads wait_ticks before wait_open, so it may miss a wait's last stretch for a moment but never counts it
   twice. A user-level thread may end its wait on another process (work stealing) while a thread of the
   first begins one: that wait may then go unseen until it ends - never counted twice either. */
static inline void sl_sync_wait_ends(struct sl_sync *s, uint64_t t0, uint64_t t1, int counted)
{
    if (__atomic_sub_fetch(&s->in_wait, 1, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(&s->wait_open, 0, __ATOMIC_RELAXED);
    if (counted) {
        __atomic_add_fetch(&s->wait_ticks, t1 - t0, __ATOMIC_RELEASE);
        __atomic_add_fetch(&s->waits, 1, __ATOMIC_RELAXED);
    }
}

#endif
