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
 * All state below is guarded by sched_lock.
 */
#include "runq.h"

static struct runq queue; /* every READY process, oldest first */

static void gl_init(void) { memset(&queue, 0, sizeof queue); }

static int gl_job_admit(struct job *j) { return 0; }
static void gl_job_done(struct job *j) {}

/* No binding: p->hart only says where p last ran; at first, its creator's hart (whose node its stack
   comes from). */
static void gl_proc_new(struct proc *p) { p->hart = mycpu()->id; }

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

static void gl_blocked(struct proc *p) {}
static void gl_exited(struct proc *p) {}

static void gl_tick(struct cpu *c) { runq_tick(&queue, c); }

const struct sched_class global_class = {
    .order = 4,
    .name = "global",
    .init = gl_init,
    .job_admit = gl_job_admit,
    .job_done = gl_job_done,
    .proc_new = gl_proc_new,
    .enqueue = gl_enqueue,
    .pick_next = gl_pick_next,
    .blocked = gl_blocked,
    .exited = gl_exited,
    .abandoned = gl_exited, /* proc_new took nothing */
    .tick = gl_tick,
    .ipi = 0,
};
SCHED_CLASS(global_class);
