/*
 * stride.c - stride scheduling over jobs (Waldspurger & Weihl, "Stride Scheduling", MIT/LCS/TM-528, 1995):
 * the deterministic sibling of lottery.c, and the reference solution of the worked assignment
 * docs/assignment/stride/ (its skeleton is docs/assignment/stride/stride.c; tests/test_check_rubric.py
 * grades this file and three planted bugs against docs/assignment/stride/rubric.toml).
 *
 *   job=<app>:tickets=<1..10000>   the job's share (default 10): a job with twice the tickets of another
 *                                  gets twice its hart time while both have work
 *
 * Each job has a stride, STRIDE1 / tickets, and a pass. A hart that needs work takes the job with the
 * lowest pass among those with a waiting process (ties: the lower job index), runs the head of that
 * job's FIFO for one quantum and advances the job's pass by its stride. A job that arrives, or that had
 * nothing waiting and gets a process ready again, starts from the pass of the last job picked, so time
 * spent blocked is not hoarded as credit. Every READY process waits in its job's FIFO (oldest first);
 * any hart runs any process (p->hart is set when picked), and a process made ready kicks an idle hart.
 * All state is guarded by sched_lock.
 *
 * schedlab check:
 *   work-conserving  yes
 *   share            tickets
 *   invariants       job-fifo
 */
#include "sched.h"
#include "runq.h"

#define JOB_KEYS(X) X(tickets, .min = 1, .max = 10000, .def = 10, .help = "the job's share of hart time")
SCHED_JOB_KEYS(JOB_KEYS);

#define STRIDE1 (1L << 20)

struct stride_job {                     /* SCHED_PRIV(j): zero at job_admit */
    struct runq queue;                  /* its READY processes, oldest first */
    long stride, pass;
    int nready;
};

static long last_pass;                  /* the pass of the job picked last: where newcomers start */
static int nwaiting;                    /* READY processes in every queue */

static int stride_job_admit(struct job *j)
{
    struct stride_job *sj = SCHED_PRIV(j, struct stride_job);
    sj->stride = STRIDE1 / SCHED_JOB_KEY(j, tickets);
    sj->pass = last_pass;
    return 0;
}

static void stride_enqueue(struct proc *p, enum enq_how how)
{
    (void)how;
    struct stride_job *sj = SCHED_PRIV(p->job, struct stride_job);
    if (sj->nready == 0 && sj->pass < last_pass)
        sj->pass = last_pass;
    runq_push_back(&sj->queue, p);
    sj->nready++;
    nwaiting++;
    sched_kick_idle(~0UL);              /* an idle hart, not this one, comes for it */
}

/* The job with the lowest pass among those with a waiting process; 0 if none waits. */
static struct job *lowest_pass(void)
{
    struct job *best = 0;
    for (int i = 0; i < njobs; i++) {
        struct stride_job *sj = SCHED_PRIV(&jobs[i], struct stride_job);
        if (sj->nready && (!best || sj->pass < SCHED_PRIV(best, struct stride_job)->pass))
            best = &jobs[i];
    }
    return best;
}

static struct proc *stride_pick_next(struct cpu *c)
{
    struct job *j = lowest_pass();
    if (!j)
        return 0;
    struct stride_job *sj = SCHED_PRIV(j, struct stride_job);
    struct proc *p = runq_pop(&sj->queue);
    sj->nready--;
    nwaiting--;
    last_pass = sj->pass;
    sj->pass += sj->stride;
    p->hart = c->id;
    return p;
}

static void stride_tick(struct cpu *c)
{
    if (c->cur && nwaiting)
        sched_preempt(c);
}

const struct sched_class stride_class = {
    .order = 120,
    .name = "stride",
    .job_keys = SCHED_OPTION_TABLE(JOB_KEYS),
    .job_admit = stride_job_admit,
    .enqueue = stride_enqueue,
    .pick_next = stride_pick_next,
    .tick = stride_tick,
};
SCHED_CLASS(stride_class);
