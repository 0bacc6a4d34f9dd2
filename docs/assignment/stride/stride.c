/*
 * stride.c - YOUR NAME HERE. Stride scheduling over jobs (Waldspurger & Weihl, "Stride Scheduling",
 * MIT/LCS/TM-528, 1995) with per-job tickets: the skeleton of the worked assignment (README.md beside it).
 *
 *   job=<app>:tickets=<1..10000>   the job's share (default 10): a job with twice the tickets of another
 *                                  gets twice its hart time while both have work
 *
 * The rule to build. Each job has a stride, STRIDE1 / tickets, and a pass. A hart that needs work takes
 * the job with the lowest pass among those with a waiting process, runs the head of that job's FIFO for
 * one quantum and advances the job's pass by its stride. A job that arrives, or that had nothing waiting
 * and gets a process ready again, starts from the pass of the last job picked (time spent blocked is not
 * credit). Any hart runs any process; a process made ready kicks an idle hart.
 *
 * As given, the file compiles and boots: it runs the first job (in admission order) that has a process
 * waiting. Every TODO below is one step of the rule; `schedlab check stride.c --rubric rubric.toml` grades it.
 * All state is guarded by sched_lock (kernel/sched/sched.h says what a hook may and may not do).
 *
 * What the policy promises (the grader holds you to the rubric's [promises] whatever this block says):
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

__attribute__((unused))               /* used once TODO 2 and TODO 4 are done */
static long last_pass;                  /* the pass of the job picked last: where newcomers start */
static int nwaiting;                    /* READY processes in every queue */

static int stride_job_admit(struct job *j)
{
    struct stride_job *sj = SCHED_PRIV(j, struct stride_job);
    (void)sj;
    /* TODO 1: the job's stride from its tickets (SCHED_JOB_KEY(j, tickets)), and its first pass. */
    return 0;
}

static void stride_enqueue(struct proc *p, enum enq_how how)
{
    (void)how;
    struct stride_job *sj = SCHED_PRIV(p->job, struct stride_job);
    /* TODO 2: a job that had nothing waiting must not come back with credit for the time it was away. */
    runq_push_back(&sj->queue, p);
    sj->nready++;
    nwaiting++;
    sched_kick_idle(~0UL);              /* an idle hart, not this one, comes for it */
}

/* The job to run next among those with a waiting process; 0 if none waits. */
static struct job *lowest_pass(void)
{
    for (int i = 0; i < njobs; i++)
        if (SCHED_PRIV(&jobs[i], struct stride_job)->nready)
            return &jobs[i];            /* TODO 3: the one with the lowest pass, not the first */
    return 0;
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
    /* TODO 4: remember this pass for newcomers, and advance the job's pass by its stride. */
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
