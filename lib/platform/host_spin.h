/*
 * host_spin.h - private to the Linux backend: its estimate of which processes of the job run, for the
 * waits that give way (wait.h: sl_wait_giveway, the adaptive kind's running[]).
 *
 * On the schedlab kernel the info page's running[] says exactly who is on a hart. Linux tells a process
 * none of that, so the host backend keeps what it does know (host_spin.c, pure logic; host_sys.c feeds
 * it):
 *   asleep    a process inside a futex wait is not running: host_sys.c clears its running[] entry
 *             for the time of the wait, as the kernel would
 *   crowded   the job's runnable processes (started, not exited, not asleep in a futex wait) outnumber
 *             the CPUs it may run on (its affinity mask, sched_getaffinity). Then some of them wait for
 *             a CPU, and a waiter cannot tell which: the participant it needs may be queued behind it.
 *             libgomp makes the same test (threads vs CPUs in the mask) to throttle its spin count.
 * A crowded waiter that gives way yields its CPU between looks at the word (sched_yield), so the
 * runnable process queued behind it - most likely one of its job's, which it waits for - runs now
 * instead of after a time slice; an uncrowded one spins with the CPU's pause.
 */
#ifndef SL_HOST_SPIN_H
#define SL_HOST_SPIN_H

#include <stdint.h>

struct host_crowd {
    uint32_t cpus;     /* CPUs in the job's affinity mask, >= 1; set before the job's processes start */
    uint32_t runnable; /* processes started, not exited, not asleep in a futex wait (atomic) */
};

/* The CPUs a job may run on: the `nset` CPUs of its affinity mask when sched_getaffinity succeeded
   (mask_ok), else the `online` ones; at least 1. */
uint32_t host_crowd_cpus(int mask_ok, int nset, long online);
/* Set the CPU count; the runnable count is left alone (processes of an earlier job may still exit). */
void     host_crowd_init(struct host_crowd *c, uint32_t cpus);
/* A process became runnable (started, or back from a futex wait) / stopped being runnable. */
void     host_crowd_up(struct host_crowd *c);
void     host_crowd_down(struct host_crowd *c);
/* 1 while more processes are runnable than there are CPUs for them. */
int      host_crowded(const struct host_crowd *c);

#endif
