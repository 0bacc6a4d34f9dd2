/*
 * info.h - the job info page (include/schedlab/abi.h struct sl_info): one read-only page per job, mapped at SL_INFO_VA,
 * through which the library learns what the scheduler did without a syscall. kernel/info.c is its only
 * writer: the fixed fields when the job is admitted, and the live ones (running[], the allotment,
 * fg_live) through the setters below.
 *
 * Lock rules: info_set_running, info_set_allotment and info_put_fg_live are called with sched_lock held
 * (the process's state, the policy's allotment and the running jobs change under it). The page exists
 * from job_admit until the job's page table is freed; j->info is NULL outside that window.
 *
 * Layers: info.c calls nothing but the string and console code, so the core and the policies may call it
 * (the core's hot path inline); info_init (the process layer's, at admission) takes the run's seed and
 * foreground count from what the launcher handed down (info_set_seed, info_set_fg_live), never from it.
 */
#ifndef INFO_H
#define INFO_H

#include "proc.h"
#include "sched/core.h"

void info_init(struct job *j);         /* the fixed fields; allotment = all harts */
void info_set_seed(uint64_t seed);     /* the run's seed=, before the first admission */
void info_set_fg_live(uint32_t n);     /* foreground jobs live: what pages made from now on say */
void info_set_allotment(struct job *j, int count, uint64_t mask); /* stamps allot_stamp (sched_lock held) */
/* j's waits time themselves (on = 1) or not (abi.h sync_timed; sched_lock held); returns the value before. */
int info_set_sync_timed(struct job *j, int on);

/* Process idx of j is (on = 1) or is not (0) on a hart this instant. The scheduler's hot path. */
static inline void info_set_running(struct job *j, int idx, int on)
{
    j->info->running[idx] = (uint32_t)on;
}

/* n foreground jobs live, into running job j's page. */
static inline void info_put_fg_live(struct job *j, uint32_t n)
{
    ASSERT_HELD(&sched_lock, "info_put_fg_live");
    j->info->fg_live = n;
}

#endif
