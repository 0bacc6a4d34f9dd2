/*
 * fifo.c - a policy that exists only in the test tree, to prove that adding a policy is one file
 * (tests/test_policy_file.py builds a kernel with it: make EXTRA_POLICIES=tests/policies/fifo.c).
 *
 * First come, first served with no preemption: one queue for all harts, a hart runs the head until it
 * blocks, yields or exits. Its one option, fifo_wake=back|front, says where a woken process goes.
 * All state is guarded by sched_lock.
 */
#include "sched.h"
#include "runq.h"

enum { OPT_WAKE };                      /* index in fifo_class.options */

static struct runq queue;

static void fifo_init(void) { memset(&queue, 0, sizeof queue); }
static int fifo_job_admit(struct job *j) { return 0; }
static void fifo_job_done(struct job *j) {}
static void fifo_proc_new(struct proc *p) { p->hart = mycpu()->id; }

static void fifo_enqueue(struct proc *p, enum enq_how how)
{
    if (how == ENQ_WAKE && sched_opt[OPT_WAKE] == 1)
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

static void fifo_blocked(struct proc *p) {}
static void fifo_exited(struct proc *p) {}
static void fifo_tick(struct cpu *c) {}  /* no preemption */

const struct sched_class fifo_class = {
    .order = 100,
    .name = "fifo",
    .options = { { "fifo_wake", "back|front", 0, "where a woken process joins the queue" } },
    .init = fifo_init,
    .job_admit = fifo_job_admit,
    .job_done = fifo_job_done,
    .proc_new = fifo_proc_new,
    .enqueue = fifo_enqueue,
    .pick_next = fifo_pick_next,
    .blocked = fifo_blocked,
    .exited = fifo_exited,
    .abandoned = fifo_exited,
    .tick = fifo_tick,
};
SCHED_CLASS(fifo_class);
