/*
 * info.c - the only writer of the job info pages (the model and lock rules are in info.h).
 *
 * Called by the launcher, the process layer, the core and the policies; calls none of them: what a page
 * says about the run (the seed, the foreground jobs still live) the launcher hands down (info_set_seed,
 * info_set_fg_live). It reads the hart table and the policy's allots flag (data the core keeps).
 */
#include "sched/sched.h"
#include "info.h"
#include "perturb.h"

static uint64_t run_seed;         /* seed= (info_set_seed, before any job is admitted) */
static volatile uint32_t fg_live; /* foreground jobs not finished yet (info_set_fg_live) */

void info_set_seed(uint64_t seed) { run_seed = seed; }
void info_set_fg_live(uint32_t n) { fg_live = n; }

/* The fixed fields, at admission (before the job's first process exists: no lock needed). */
void info_init(struct job *j)
{
    struct sl_info *in = j->info;
    in->magic = SL_INFO_MAGIC;
    in->job_id = j->id;
    in->nharts = ncpus;
    in->nprocs = j->nprocs;
    in->nnodes = plat.nnodes;
    /* process control only where the policy hands out allotments (partition); elsewhere the allotment
       is every hart and an adaptive job runs all its processes */
    in->flags = (j->background ? SL_INFO_BACKGROUND : 0) | (j->adaptive && sched->allots ? SL_INFO_ADAPTIVE : 0) |
        (clock_virtual ? SL_INFO_VIRTUAL_CLOCK : 0) | (perturb_on ? SL_INFO_PERTURBED : 0);
    in->timebase_hz = plat.timebase_hz;
    in->seed = run_seed ^ ((uint64_t)j->id * 0x9e3779b97f4a7c15UL);
    in->start_time = j->arrive;
    strlcpy(in->app, j->app->name, sizeof in->app);
    strlcpy(in->args, j->scen->args, sizeof in->args);
    for (int h = 0; h < ncpus; h++)
        in->hart_node[h] = cpus[h].node;
    in->fg_live = fg_live;
    in->allot_count = ncpus;
    in->allot_mask = ncpus == 64 ? ~0UL : (1UL << ncpus) - 1;
}

int info_set_sync_timed(struct job *j, int on)
{
    ASSERT_HELD(&sched_lock, "info_set_sync_timed");
    int was = j->info->sync_timed != 0;
    j->info->sync_timed = (uint32_t)(on != 0);
    return was;
}

void info_set_allotment(struct job *j, int count, uint64_t mask)
{
    ASSERT_HELD(&sched_lock, "info_set_allotment");
    j->info->allot_count = (uint32_t)count;
    j->info->allot_mask = mask;
    j->info->allot_stamp = rdtime();
}
