/*
 * rogue.c - a policy of the test tree that breaks the policy contract (kernel/sched/sched.h) on purpose, one
 * rule per value of its option rogue=, so that tests/test_policy_file.py can show that a checked kernel
 * (make KCHECKS=1: kernel/sched/hooks.h) stops each with a PANIC naming the policy and the hook:
 *
 *   rogue=none       a plain FIFO (as fifo.c): the checks pass a policy that keeps the rules
 *   rogue=pick       pick_next returns the process it picked last once its queue is empty: blocked, or gone
 *   rogue=elsewhere  pick_next returns a process bound to another hart (p->hart != c->id; 2 harts or more)
 *   rogue=print      enqueue prints a line
 *   rogue=block      tick blocks the running process (sched_block) from inside the hook
 *
 * Kernel only: sched_block is no service of the simulator's core, so `make sim` with it fails to link.
 *
 * What it promises at its default, rogue=none (schedlab check):
 *
 * schedlab check:
 *   progress         none - no preemption: a process that never blocks keeps its hart
 *
 * All state is guarded by sched_lock.
 */
#include "sched.h"
#include "runq.h"

#define OPTIONS(X) X(rogue, .choices = "none|pick|elsewhere|print|block", .help = "the contract rule to break")
SCHED_OPTIONS(OPTIONS);
enum { ROGUE_NONE, ROGUE_PICK, ROGUE_ELSEWHERE, ROGUE_PRINT, ROGUE_BLOCK };

static struct runq queue;
static struct proc *last; /* the process pick_next returned last */

static void rogue_enqueue(struct proc *p, enum enq_how how)
{
    if (SCHED_OPT(rogue) == ROGUE_PRINT)
        kprintf("rogue: enqueue %d.%d\n", p->job->id, p->idx);
    runq_push_back(&queue, p);
    for (int h = 0; h < ncpus; h++)
        sched_kick(h);
}

static struct proc *rogue_pick_next(struct cpu *c)
{
    struct proc *p = runq_pop(&queue);
    if (!p)
        return SCHED_OPT(rogue) == ROGUE_PICK ? last : 0;
    p->hart = c->id;
    if (SCHED_OPT(rogue) == ROGUE_ELSEWHERE && ncpus > 1)
        p->hart = (c->id + 1) % ncpus;
    last = p;
    return p;
}

static void rogue_tick(struct cpu *c)
{
    if (SCHED_OPT(rogue) == ROGUE_BLOCK && c->cur)
        sched_block(c->cur);
}

const struct sched_class rogue_class = {
    .order = 120,
    .name = "rogue",
    .options = SCHED_OPTION_TABLE(OPTIONS),
    .enqueue = rogue_enqueue,
    .pick_next = rogue_pick_next,
    .tick = rogue_tick,
};
SCHED_CLASS(rogue_class);
