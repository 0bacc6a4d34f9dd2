/*
 * syncstat.h - publishing how this process synchronizes, for a policy that chooses per job between
 * coscheduling and space sharing (abi.h "sync statistics", kernel/sched/adaptive.c): spinning is invisible
 * to the kernel, so the library says it.
 *
 * Where the info page has SL_INFO_SYNCSTAT (policy=adaptive), process i's record is at SL_SYNC_VA + i and
 * only process i writes it: plain stores, no atomics (the kernel reads each field once and bounds it).
 * Elsewhere (every other policy, the host) the pointer stays NULL and each hook costs a load and a branch.
 *   sl_sync_episode()      a worker arrived at a barrier (sl_barrier_wait_as)
 *   sl_sync_begin/end(t0)  around a wait kind's wait (sl_wait_ne...): one wait and its ticks; in_wait
 *                          says the process is inside one (the kernel subtracts its preemptions there)
 *   sl_sync_slept(t0)      the part of a wait asleep in the kernel or parked (sl_wait_sleep)
 */
#ifndef SL_SYNCSTAT_H
#define SL_SYNCSTAT_H

#include <stdint.h>
#include "schedlab/abi.h"
#include "platform.h"

static inline struct sl_sync *sl_sync_rec(void)
{
    struct sl_proc *p = sl_plat_proc();
#ifdef SL_TARGET_KERNEL
    return p->sync;
#else
    return p ? p->sync : 0; /* host tests may call in from plain threads */
#endif
}

static inline void sl_sync_episode(void)
{
    struct sl_sync *s = sl_sync_rec();
    if (__builtin_expect(s != 0, 0))
        s->episodes++;
}

/* 0 when nothing is published (no clock read then). */
static inline uint64_t sl_sync_begin(void)
{
    struct sl_sync *s = sl_sync_rec();
    if (__builtin_expect(s == 0, 1))
        return 0;
    s->in_wait++;
    return sl_plat_ticks();
}

static inline void sl_sync_end(uint64_t t0)
{
    struct sl_sync *s = sl_sync_rec();
    if (__builtin_expect(s != 0 && t0 != 0, 0)) {
        s->waits++;
        s->wait_ticks += sl_plat_ticks() - t0;
        s->in_wait--;
    }
}

/* The clock for sl_sync_slept: 0 when nothing is published. */
static inline uint64_t sl_sync_clock(void) { return sl_sync_rec() ? sl_plat_ticks() : 0; }

static inline void sl_sync_slept(uint64_t t0)
{
    struct sl_sync *s = sl_sync_rec();
    if (__builtin_expect(s != 0 && t0 != 0, 0))
        s->sleep_ticks += sl_plat_ticks() - t0;
}

#endif
