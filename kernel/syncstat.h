/*
 * syncstat.h - the library's sync statistics (abi.h struct sl_sync, "sync statistics"): one read/write page
 * per job, mapped at SL_SYNC_VA, that the library writes and a policy reads (the info page's reverse
 * direction). Only the policy that asks for it at init (syncstat_enabled = 1: policy=adaptive) gets the
 * pages; under every other policy nothing is mapped and the library's cost is one load and a branch.
 *
 * Services a policy may use (the kernel's kernel/syncstat.c and the simulator's tools/sim/sim_work.c both
 * provide them, so the policy runs unchanged in both):
 *   syncstat_of(j)        j's SL_MAX_PROCS records, or NULL (no page); valid from job_admit until job_done
 *                         (the page is a leaf of the job's page table and goes with it). Every field is the
 *                         job's to write at any moment: read each once and bound it.
 *   sched_wake_cost_ns()  what a blocking wait costs beyond a switch: a futex block and the cross-hart
 *                         wake-up (Feitelson & Rudolph's alpha * tau_s), from the calibration
 *   sched_reload_cost_ns() what refilling a hart's private cache costs after another job ran there (the
 *                         machine model's miss cost x the lines of its last private level); 0 without a model
 *   sched_result_extra    a policy may set it (sched_lock not held when called): extra "key=value ..." for
 *                         job j's RESULT line, after the policy's job keys (keys in resultkeys.h)
 */
#ifndef SYNCSTAT_H
#define SYNCSTAT_H

#include "schedlab/abi.h"

struct job;

extern int syncstat_enabled;
volatile struct sl_sync *syncstat_of(struct job *j);
uint64_t sched_wake_cost_ns(void);
uint64_t sched_reload_cost_ns(void);
extern void (*sched_result_extra)(struct job *j, char *buf, unsigned long len);

/* kernel only (proc.c): map j's page at admission, after info_init; forget it before the page table goes */
void syncstat_job_init(struct job *j);
void syncstat_job_put(struct job *j);

#endif
