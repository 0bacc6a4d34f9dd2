/*
 * sim_sync.c - the sync statistics a job's processes publish (abi.h struct sl_sync, kernel/syncstat.h) and
 * the services the policies read them through (syncstat_of, sched_wake_cost_ns): the engine keeps them, the
 * models publish into them (the barrier kit at arrivals and waits, the thread kit at idle streaks).
 *
 * What a process publishes, as lib/barriers/barrier.h and lib/wait/wait.h would: episodes (the workers it
 * hosts, at each barrier arrival; an idle streak of a thread program), and for every wait, one wait with its
 * ticks from its start to its end, and in_wait (wait_open) while it waits - the waits only while the policy
 * asks for their times (info_set_sync_timed, as the library reads the info page's sync_timed) - so the
 * policy runs unchanged (the part asleep is the policy's own count of the time blocked while in_wait, as in
 * the kernel); and process 0's units, the workers of a worker run while it runs.
 */
#include <string.h>
#include "sim.h"
#include "../../kernel/syncstat.h"

static struct sl_sync syncs[NJOB][SL_MAX_PROCS]; /* the sync statistics pages (the header) */

void sync_job_setup(struct job *j) { memset(syncs[j->id - 1], 0, sizeof syncs[0]); }

/* Process 0 of j starts (n) or ends (0) a worker run: the library's sl_sync_units (lib/base/syncstat.h). */
void sync_units(struct job *j, uint32_t n) { syncs[j->id - 1][0].units = n; }

volatile struct sl_sync *syncstat_of(struct job *j, int idx)
{
    return sched->syncstat && idx >= 0 && idx < SL_MAX_PROCS ? &syncs[j->id - 1][idx] : 0;
}
uint64_t sched_wake_cost_ns(void) { return (uint64_t)calib.futex_cross; } /* kbench's cross-hart hand-off */
uint64_t sched_reload_cost_ns(void) { return 0; }                         /* no caches modelled */

static struct sl_sync *sync_of(const struct sproc *sp) { return &syncs[sp->p.job->id - 1][sp->p.idx]; }

void sync_arrive(struct sproc *sp, int workers) { sync_of(sp)->episodes += (uint32_t)workers; }

/* The wait sp was in is over at t (count 0: resumed by process control or leaving the run, not a wait). */
void sync_waited(struct sproc *sp, uint64_t t, int count)
{
    struct sl_sync *s = sync_of(sp);
    if (!s->in_wait)
        return;
    s->in_wait = 0;
    if (count) {
        s->waits++;
        s->wait_ticks += t - s->wait_open;
    }
    s->wait_open = 0;
}

/* sp begins a wait at t: timed (in_wait, wait_open) while its job's waits are (sync_timed). */
void sync_waits(struct sproc *sp, uint64_t t)
{
    struct sl_sync *s = sync_of(sp);
    s->in_wait = sjobs[sp->p.job->id - 1].sync_timed;
    s->wait_open = s->in_wait ? t : 0;
}

/* A thread program's process runs out of threads (begin) or finds one (end): lib/threads/uthread.c's idle
   streak, an episode and, while timed, a wait (its pinned work waits on partners). */
void sync_idle_begin(struct sproc *sp, uint64_t t)
{
    struct sl_sync *s = sync_of(sp);
    s->episodes++;
    sync_waits(sp, t);
}
void sync_idle_end(struct sproc *sp, uint64_t t, int count) { sync_waited(sp, t, count); }

/* --stats: what each job published, under a policy that reads it. */
void sync_stats(FILE *f)
{
    for (int j = 0; sched->syncstat && j < NJOB; j++) {
        uint64_t ep = 0, waits = 0;
        for (int i = 0; i < SL_MAX_PROCS; i++)
            ep += syncs[j][i].episodes, waits += syncs[j][i].waits;
        if (ep)
            fprintf(f, "sim: job %d sync episodes=%lu waits=%lu\n", j + 1, ep, waits);
    }
}
