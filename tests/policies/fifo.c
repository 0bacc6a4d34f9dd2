/*
 * fifo.c - a policy that exists only in the test tree, to prove that adding a policy is one file
 * (tests/test_policy_file.py builds a kernel with it: make EXTRA_POLICIES=tests/policies/fifo.c).
 *
 * First come, first served with no preemption: one queue for all harts, a hart runs the head until it
 * blocks, yields or exits. Its one option, fifo_wake=back|front, says where a woken process goes.
 *
 * schedlab check:
 *   work-conserving  yes - one queue for every hart, and a process made ready kicks them all
 *   invariants       job-fifo - at the default fifo_wake=back, the queue's order is the order of readiness
 *   progress         none - no preemption: a process that never blocks keeps its hart
 *
 * All state is guarded by sched_lock.
 */
#include "sched.h"
#include "runq.h"

#define OPTIONS(X) X(fifo_wake, .choices = "back|front", .help = "where a woken process joins the queue")
SCHED_OPTIONS(OPTIONS);

static struct runq queue;


static void fifo_enqueue(struct proc *p, enum enq_how how)
{
    if (how == ENQ_WAKE && SCHED_OPT(fifo_wake) == 1)
        runq_push_front(&queue, p);
    else
        runq_push_back(&queue, p);
    for (int h = 0; h < ncpus; h++)
        sched_kick(h);                  /* any idle hart may take it */
}

static struct proc *fifo_pick_next(struct cpu *c)
{
    struct proc *p = runq_pop(&queue);
    if (p)
        p->hart = c->id;
    return p;
}

const struct sched_class fifo_class = {
    .order = 100,
    .name = "fifo",
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .enqueue = fifo_enqueue,            /* the only hooks it needs: no tick, so no preemption (sched.h) */
    .pick_next = fifo_pick_next,
};
SCHED_CLASS(fifo_class);
