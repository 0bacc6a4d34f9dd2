/*
 * syncstat.h - the library's sync statistics (abi.h struct sl_sync, "sync statistics"): one read/write page
 * per job, mapped at SL_SYNC_VA, that the library writes and a policy reads (the info page's reverse
 * direction). Only a policy whose class sets .syncstat (policy=adaptive) gets the pages; under every other
 * policy nothing is mapped, the info page has no SL_INFO_SYNCSTAT, and the library's waits and barriers run
 * exactly the code they run without this (it swaps in its counting waits at start-up only when the flag is
 * there: lib/wait/wait_stats.c).
 *
 * Services a policy may use (the kernel's kernel/syncstat.c and the simulator's tools/sim/sim_sync.c both
 * provide them, so the policy runs unchanged in both):
 *   syncstat_of(j, i)     the record of j's process i (abi.h SL_SYNC_OFFSET), or NULL (no page); valid from
 *                         job_admit until job_done
 *                         (the page is a leaf of the job's page table and goes with it). Every field is the
 *                         job's to write at any moment: read each once and bound it.
 *   sched_wake_cost_ns()  what a blocking wait costs beyond a switch: a futex block and the cross-hart
 *                         wake-up (Feitelson & Rudolph's alpha * tau_s), from the calibration
 *   sched_reload_cost_ns() what refilling a hart's private cache costs after another job ran there (the
 *                         machine model's miss cost x the lines of its last private level); 0 without a model
 * The part of a wait spent asleep is not the library's to say: the kernel counts the time a process is
 * blocked while its record's in_wait says it is inside a wait (policy=adaptive: adaptive.c ad_blocked).
 *
 * Layer (kernel/LAYERS): the scheduling core's, beside info.c - the policies call it, proc.c maps and
 * forgets the page, calib.c hands down the wake cost; it calls only the leaves.
 */
#ifndef SYNCSTAT_H
#define SYNCSTAT_H

#include "schedlab/abi.h"

struct job;

volatile struct sl_sync *syncstat_of(struct job *j, int idx);
uint64_t sched_wake_cost_ns(void);
uint64_t sched_reload_cost_ns(void);

/* kernel only (proc.c): map j's page at admission, after info_init; forget it before the page table goes */
void syncstat_job_init(struct job *j);
void syncstat_job_put(struct job *j);
/* kernel only (calib.c, before t0): 2 syscalls + 2 switches + an IPI, in centi-ns (0: no card) */
void syncstat_set_wake_cost(uint64_t cns);

#endif
