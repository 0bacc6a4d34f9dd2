/*
 * partition.c - dynamic space partitions (Markatos 3.4.3; Tucker & Gupta's process control).
 *
 * The harts are divided among the running jobs on every arrival and departure (allot.h: fair shares,
 * never more than asked for, at least one each while there are enough harts, Markatos's z-rule for jobs
 * that cannot adapt; more jobs than harts share one-hart partitions). A job's allotment - how many harts
 * and which - is published in its info page (allot_count, allot_mask) and recorded in the trace (`rep`).
 *
 * Inside a partition each hart round-robins its own FIFO queue with the quantum, as timeslice does; a
 * process is bound to one hart of its job's partition (the least loaded one) and only that job's
 * processes are bound there (unless more jobs than harts share it). When a repartition takes a hart away
 * from a job, the kernel moves (migrates) the job's processes from it to the job's remaining harts and
 * counts the moves (RESULT migrations=); when a job gains harts, its processes are spread over them
 * again. An adaptive job (adapt=yes) moreover suspends or resumes its own processes at safe points so
 * that as many run as it has harts (lib/, process control); the kernel treats both kinds alike. A hart
 * of a job's partition with nothing of its own to run takes a ready process of that job waiting on
 * another of its harts (pull_from_partition): the partition's harts share the job's work, whichever
 * processes the library suspended.
 *
 * What it promises, for schedlab check (tools/py/schedlab/check/declare.py):
 * schedlab check:
 *   work-conserving  no - a job's processes run only on its partition
 *   share            per-hart - each hart round-robins its FIFO; with more jobs than harts, jobs share one-hart partitions
 *   invariants       disjoint-partitions
 *
 * All state below is guarded by sched_lock.
 */
#include "runq.h"
#include "allot.h"
#include "../info.h"

struct pt_hart {
    struct runq q; /* READY processes bound here */
    int nbound;    /* live processes bound here */
};

static struct pt_hart harts[SL_MAX_HARTS];
static struct job *running[NJOB]; /* admitted, not done, in arrival order */
static int nrunning;
static struct proc *members[NJOB][SL_MAX_PROCS]; /* live processes of each job (by id - 1, idx) */
static uint64_t allot_mask[NJOB];

/* Processes of job j bound to hart h. */
static int job_on_hart(struct job *j, int h)
{
    int n = 0;
    for (int i = 0; i < j->nprocs; i++)
        n += members[j->id - 1][i] && members[j->id - 1][i]->hart == h;
    return n;
}

/* The hart of j's partition for one more process: fewest of j's processes, then fewest bound, then lowest. */
static int pick_hart(struct job *j)
{
    int best = -1, best_own = 0;
    for (int h = 0; h < ncpus; h++) {
        if (!(allot_mask[j->id - 1] >> h & 1))
            continue;
        int own = job_on_hart(j, h);
        if (best < 0 || own < best_own || (own == best_own && harts[h].nbound < harts[best].nbound)) {
            best = h;
            best_own = own;
        }
    }
    return best;
}

/* Move p to hart h: off its queue if it waits, off its hart if it runs (it is re-queued on h when it
   leaves), or just rebound if it is blocked. */
static void migrate(struct proc *p, int h)
{
    int old = p->hart;
    harts[old].nbound--;
    harts[h].nbound++;
    p->hart = h;
    p->job->nmigrate++;
    if (p->state == P_READY) {
        runq_remove(&harts[old].q, p);
        runq_push_back(&harts[h].q, p);
        sched_kick(h);
    } else if (p->state == P_RUNNING) {
        sched_preempt(p->on_cpu);
    }
}

/* Every process of j onto j's harts, spread evenly. */
static void rebind(struct job *j)
{
    uint64_t mask = allot_mask[j->id - 1];
    struct proc **m = members[j->id - 1];
    for (int i = 0; i < j->nprocs; i++)
        if (m[i] && m[i]->state != P_ZOMBIE && !(mask >> m[i]->hart & 1))
            migrate(m[i], pick_hart(j));
    for (int moved = 1; moved;) { /* level the job's load over its harts */
        moved = 0;
        int lo = pick_hart(j), lo_n = job_on_hart(j, lo);
        for (int i = 0; i < j->nprocs && !moved; i++)
            if (m[i] && m[i]->state != P_ZOMBIE && m[i]->hart != lo && job_on_hart(j, m[i]->hart) > lo_n + 1) {
                migrate(m[i], lo);
                moved = 1;
            }
    }
}

static void repartition(void)
{
    struct allot_job a[NJOB];
    for (int i = 0; i < nrunning; i++)
        a[i] = (struct allot_job){ .procs = running[i]->nprocs,
                                   .adaptive = running[i]->adaptive,
                                   .prev = allot_mask[running[i]->id - 1] };
    allot_compute(ncpus, a, nrunning);
    for (int i = 0; i < nrunning; i++) {
        struct job *j = running[i];
        if (a[i].mask == allot_mask[j->id - 1])
            continue;
        allot_mask[j->id - 1] = a[i].mask;
        info_set_allotment(j, a[i].count, a[i].mask);
        trace_rec(mycpu()->id, TR_REP, j->id, 0, a[i].count);
    }
    for (int i = 0; i < nrunning; i++)
        rebind(running[i]);
}

static int pt_job_admit(struct job *j)
{
    running[nrunning++] = j;
    allot_mask[j->id - 1] = 0;
    repartition();
    return 0;
}

static void pt_job_done(struct job *j)
{
    int k = 0;
    for (int i = 0; i < nrunning; i++)
        if (running[i] != j)
            running[k++] = running[i];
    if (k == nrunning)
        return; /* never admitted (job_admit refused it) */
    nrunning = k;
    allot_mask[j->id - 1] = 0;
    repartition();
}

static void pt_proc_new(struct proc *p)
{
    p->hart = pick_hart(p->job);
    harts[p->hart].nbound++;
    members[p->job->id - 1][p->idx] = p;
}

static void pt_enqueue(struct proc *p, enum enq_how how)
{
    runq_push_back(&harts[p->hart].q, p);
    sched_kick(p->hart);
    if (cpus[p->hart].cur || harts[p->hart].q.head != p) /* its hart is busy: an idle one of the job's pulls it */
        sched_kick_idle(allot_mask[p->job->id - 1] & ~(1UL << p->hart));
}

/* A ready process of a job that owns hart h, waiting on another hart of that job's partition: the hart's
   group shares its work (Tucker & Gupta's processor groups with their own run queue). Without this, a
   partition whose job suspended or blocked the processes bound to one of its harts leaves that hart idle
   while two processes share another: process control decides how many processes run, not where. An idle
   hart pulls when pt_enqueue kicks it (a process queued behind a busy hart), or at its next tick: without
   the kick, 15 processes woken at once onto the 5 harts they last ran on left the other 3 of an 8-hart
   share idle for most of a 10 ms quantum (simulated, 16 harts). The head of an idle hart's queue is not
   taken: that hart was kicked to run it, and taking it only moves it. A blocking barrier's release wakes
   each waiter onto its own idle hart; pulled and rebound as they were, the waiters piled up on the harts
   that pulled them and waited behind each other at the next release - alone on 12 harts a blocking
   oddeven was moved 6348 times and ran 32 % longer than under timeslice (simulated; now it runs as long). */
static struct proc *pull_from_partition(int h)
{
    for (int i = 0; i < nrunning; i++) {
        struct job *j = running[i];
        uint64_t mask = allot_mask[j->id - 1];
        if (!(mask >> h & 1))
            continue;
        for (int o = 0; o < ncpus; o++) {
            if (o == h || !(mask >> o & 1))
                continue;
            for (struct proc *p = harts[o].q.head; p; p = p->rq_next)
                if (p->job == j && (cpus[o].cur || p != harts[o].q.head)) {
                    runq_remove(&harts[o].q, p);
                    harts[o].nbound--;
                    harts[h].nbound++;
                    p->hart = h;
                    j->nmigrate++;
                    return p;
                }
        }
    }
    return 0;
}

static struct proc *pt_pick_next(struct cpu *c)
{
    struct proc *p = runq_pop(&harts[c->id].q);
    return p ? p : pull_from_partition(c->id);
}

static void pt_exited(struct proc *p)
{
    harts[p->hart].nbound--;
    members[p->job->id - 1][p->idx] = 0;
}

static void pt_tick(struct cpu *c) { runq_tick(&harts[c->id].q, c); }

const struct sched_class partition_class = {
    .order = 3,
    .name = "partition",
    .allots = 1,
    .job_admit = pt_job_admit,
    .job_done = pt_job_done,
    .proc_new = pt_proc_new,
    .enqueue = pt_enqueue,
    .pick_next = pt_pick_next,
    .exited = pt_exited,
    .abandoned = pt_exited, /* proc_new took its binding and membership: exited gives it back */
    .tick = pt_tick,
};
SCHED_CLASS(partition_class);
