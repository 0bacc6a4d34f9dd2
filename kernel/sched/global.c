/*
 * global.c - uncontrolled global time-sharing: one run queue for all harts (Tucker & Gupta's baseline,
 * the Encore Multimax's UMAX, a 4.2BSD derivative).
 *
 * Every READY process of every job waits in one FIFO. A hart that needs work takes the head, whichever
 * hart the process ran on before, so processes migrate freely; there is no binding, no affinity and no
 * notion of a job. Each hart's periodic quantum tick (at its own seeded phase, sched/core.c) sends its
 * running process to the back of the queue if another process waits, so with R runnable processes on H
 * harts every process gets about H/R of a hart, in turns of one quantum: round robin over all of them.
 * A process made ready kicks one idle hart (the lowest-numbered), so a hart never idles while the queue
 * holds work it could run.
 *
 * This is the policy under which Tucker & Gupta saw applications with more runnable processes than
 * processors slow down (spinning on locks and barriers held by preempted processes, switching, cache
 * corruption); process control is their remedy, and it works only under a policy that allots harts
 * (partition), so here adapt= has no effect and every job keeps all its processes runnable.
 *
 * What it promises, for schedlab check (tools/py/schedlab/check/declare.py):
 * schedlab check:
 *   work-conserving  yes
 *   share            equal
 *
 * All state below is guarded by sched_lock.
 */
#include "runq.h"

static struct runq queue; /* every READY process, oldest first */

/* No binding (no proc_new): p->hart only says where p last ran; at first, its creator's hart (whose node its
   stack comes from, hooks.h). */

/* An idle hart to run p now, other than the caller's (which looks at the queue itself when it idles). */
static void kick_idle_hart(void)
{
    int me = mycpu()->id;
    for (int h = 0; h < ncpus; h++)
        if (h != me && __atomic_load_n(&cpus[h].idle, __ATOMIC_RELAXED) != IDLE_NOT) {
            sched_kick(h);
            return;
        }
}

static void gl_enqueue(struct proc *p, enum enq_how how)
{
    runq_push_back(&queue, p);
    kick_idle_hart();
}

static struct proc *gl_pick_next(struct cpu *c)
{
    struct proc *p = runq_pop(&queue);
    if (p)
        p->hart = c->id;
    return p;
}

static void gl_tick(struct cpu *c) { runq_tick(&queue, c); }

const struct sched_class global_class = {
    .order = 4,
    .name = "global",
    .enqueue = gl_enqueue,
    .pick_next = gl_pick_next,
    .tick = gl_tick,
};
SCHED_CLASS(global_class);
