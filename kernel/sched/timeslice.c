/*
 * timeslice.c - uncoordinated time-slicing (Markatos 3.4.1; Feitelson & Rudolph's "uncoordinated").
 *
 * Each hart has its own FIFO run queue. A process is bound at creation to the hart with the fewest
 * processes of its own job, ties to the least loaded (fewest live bound processes), then to the lowest
 * index, and never migrates. So a job's processes spread over the harts, one per hart while it has no more
 * than the harts, as in the papers' experiments (Markatos 3.5.1: 16 processes on 16 processors), whatever
 * the other jobs did meanwhile. Load first would let the order of creation decide: process 0 of a job
 * creates the others once it has run a while, and a hart that another job's processes made the least
 * loaded in between took them all (two spinning processes of one job on one hart).
 *
 * Each hart's periodic quantum tick sends its running process to the back of its queue if another process
 * waits there. Harts tick independently, at seeded random phases (sched/core.c).
 *
 * wakeboost=on (Feitelson & Rudolph's conclusion: "it is imperative that systems that use blocking raise
 * the priority of tasks that become unblocked"): a woken process goes to the front of its hart's queue and
 * preempts the running process at once if that process has never blocked (a compute-bound or spinning
 * process); otherwise it waits for the current turn to end, still at the front.
 *
 * What it promises, for schedlab check (tools/py/schedlab/check/declare.py):
 * schedlab check:
 *   work-conserving  no - a process is bound to its hart: another hart idles while it waits
 *   share            per-hart - each hart round-robins the processes bound to it
 *   invariants       bound
 */
#include "runq.h"

#define OPTIONS(X) X(wakeboost, .choices = "off|on", .help = "a woken process preempts one that never blocks")
SCHED_OPTIONS(OPTIONS);

struct ts_hart {
    struct runq q; /* READY processes bound here */
    int nbound;    /* live processes bound here (ready, running or blocked) */
};

static struct ts_hart ts[SL_MAX_HARTS];

/* Processes of job j bound to hart h (the caller holds j->lock, so j->procs is stable). */
static int job_on_hart(struct job *j, int h)
{
    int n = 0;
    for (int i = 0; i < j->ncreated; i++)
        n += j->procs[i] && j->procs[i]->hart == h;
    return n;
}

static void ts_proc_new(struct proc *p)
{
    int best = 0, best_own = job_on_hart(p->job, 0);
    for (int h = 1; h < ncpus; h++) {
        int own = job_on_hart(p->job, h);
        if (own < best_own || (own == best_own && ts[h].nbound < ts[best].nbound)) {
            best = h;
            best_own = own;
        }
    }
    p->hart = best;
    ts[best].nbound++;
}

static void ts_enqueue(struct proc *p, enum enq_how how)
{
    struct runq *q = &ts[p->hart].q;
    struct cpu *c = &cpus[p->hart];
    if (how == ENQ_WAKE && SCHED_OPT(wakeboost)) {
        runq_push_front(q, p);
        if (c->cur && c->cur->nblock == 0)
            sched_preempt(c);
    } else {
        runq_push_back(q, p);
    }
    sched_kick(p->hart);
}

static struct proc *ts_pick_next(struct cpu *c) { return runq_pop(&ts[c->id].q); }

static void ts_exited(struct proc *p) { ts[p->hart].nbound--; }

static void ts_tick(struct cpu *c) { runq_tick(&ts[c->id].q, c); }

const struct sched_class timeslice_class = {
    .order = 1,
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .name = "timeslice",
    .proc_new = ts_proc_new,
    .enqueue = ts_enqueue,
    .pick_next = ts_pick_next,
    .exited = ts_exited,
    .abandoned = ts_exited, /* proc_new took its binding only: exited gives it back */
    .tick = ts_tick,
};
SCHED_CLASS(timeslice_class);
