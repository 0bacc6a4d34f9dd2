/*
 * info.h - the job info page (include/schedlab/abi.h struct sl_info): one read-only page per job, mapped at SL_INFO_VA,
 * through which the library learns what the scheduler did without a syscall. kernel/info.c is its only
 * writer: the fixed fields when the job is admitted, and the live ones (running[], the allotment,
 * fg_live) through the setters below.
 *
 * Lock rules: info_set_running and info_set_allotment are called with sched_lock held (the process's
 * state and the policy's allotment change under it); info_set_fg_live takes sched_lock itself. The page
 * exists from job_admit until the job's page table is freed; j->info is NULL outside that window.
 */
#ifndef INFO_H
#define INFO_H

#include "proc.h"

void info_init(struct job *j);                                   /* the fixed fields; allotment = all harts */
void info_set_allotment(struct job *j, int count, uint64_t mask); /* stamps allot_stamp (sched_lock held) */
void info_set_fg_live(uint32_t n);                               /* in every running job's page */

/* Process idx of j is (on = 1) or is not (0) on a hart this instant. The scheduler's hot path. */
static inline void info_set_running(struct job *j, int idx, int on)
{
    j->info->running[idx] = (uint32_t)on;
}

#endif
