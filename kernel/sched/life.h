/*
 * life.h - the life of a process and of a job: the one state machine the kernel and the simulator
 * (tools/sim, -DSCHEDLAB_SIM) both run, and the host tests check (tests/host/test_life.c).
 *
 * Why here, in kernel/sched/: it is the half of the scheduling core that is not a hart. The other half -
 * context switch, satp and FPU, idling, IPIs, timers - is the machine's, and each side has its own
 * (kernel/sched/core.c, tools/sim/sim_core.c). Everything in sched/ but core.c builds for the simulator
 * (tools/sim/sim.mk), so a file here is in both builds with no list to edit.
 *
 * The model
 *   process  FREE -> READY (created: life_proc_new, life_proc_start, life_ready ENQ_NEW)
 *            READY -> RUNNING (a hart's pick: life_run)
 *            RUNNING -> READY (life_requeue: yield, preemption), BLOCKED (life_block), ZOMBIE (life_exit)
 *            BLOCKED -> READY (life_ready ENQ_WAKE: a futex wake, a timeout, or its job killed)
 *            ZOMBIE -> FREE (life_reap, once no hart runs on its stack any more)
 *   job      WAITING -> RUNNING (life_admit) -> DONE (life_job_finish after its last reap, or
 *            life_fail_early when admission fails). A job is stuck for good (sched_job_stuck, core.h) when every process
 *            made ready and not exited is BLOCKED with no timeout: only its own processes could wake it.
 *            nactive and nforever are those two counts, kept here and nowhere else.
 *   memory   job_charge takes bytes from the job's limit (mem=): a stack per process, and what SYS_alloc
 *            gives; mem_used is what RESULT prints as mem_kb.
 *
 * Data flow: traps, syscalls and the simulator's events call in; this calls the policy (sched->...) and
 * the hart operations below; it names no launcher, futex or info function: where it must tell the rest
 * (a job is done, a blocked process's wait is cancelled) it calls the hooks in life_hooks, which each
 * side defines.
 *
 * Hot paths (ready, block, requeue, run, exit) are static inline: the kernel's yield and futex paths pay
 * no call for them (ab.py --icount). The rest (creation, reap, admission, kill, deadlock) is life.c.
 *
 * Locking, as in the kernel (the simulator takes the same locks on its one thread): the inline functions
 * below run with sched_lock held (life_ready, life_block and life_exit check it); the declarations of
 * life.c's say which lock each wants, and life.c what it takes itself.
 */
#ifndef SCHED_LIFE_H
#define SCHED_LIFE_H

#include "hooks.h"

/* ---- what each side implements (kernel: sched/core.c; simulator: tools/sim/sim_core.c) ---- */

/* p, the calling hart's current process, has had its state set (READY, BLOCKED or ZOMBIE) and its run
   time accounted: give the hart back. Kernel: switch to the scheduler loop, return when p runs again
   (never for a ZOMBIE); simulator: the hart is free now, return at once. sched_lock held. */
void hart_leave(struct proc *p);

/* Where the core tells the rest of the system; each side fills in life_hooks (kernel: main.c's wire_layers; simulator: sim_main.c's main). */
struct life_hooks {
    void (*job_done)(struct job *j);    /* j is DONE: print its RESULT (no lock held) */
    void (*unwait)(struct proc *p);     /* a BLOCKED p is about to be woken by a kill: cancel its wait
                                           (sched_lock held) */
};
extern struct life_hooks life_hooks;   /* defined here (life.c), filled in before any process runs */

/* ---- the hot paths (sched_lock held) ---- */

/* Bring p's time on its hart up to now, before a policy hook sees p (proc.h). p RUNNING. */
static inline void life_account(struct proc *p, uint64_t now)
{
    p->run_ticks += now - p->dispatched_at;
    p->dispatched_at = now;
}

/* p's job may have just become stuck for good: the hart reports it once it has dropped sched_lock
   (c->stuck_job; ending a job takes job->lock, which comes before sched_lock). */
static inline void life_note_if_stuck(struct proc *p)
{
    if (sched_job_stuck(p->job))
        mycpu()->stuck_job = p->job;
}

/* p becomes READY: new (ENQ_NEW) or woken (ENQ_WAKE) - or, from life_requeue, after yield or preemption. */
static inline void life_ready(struct proc *p, enum enq_how how)
{
    ASSERT_HELD(&sched_lock, "life_ready");
    if (p->state == P_BLOCKED) {
        p->blocked_ticks += rdtime() - p->blocked_at;
        p->job->nforever -= !p->fx_deadline;
    }
    p->job->nactive += how == ENQ_NEW;
    p->state = P_READY;
    if (how == ENQ_NEW || how == ENQ_WAKE)
        trace_proc(how == ENQ_NEW ? TR_NEW : TR_WAKE, p, p->hart);
    hook_enqueue(p, how);
}

/* The running p leaves its hart still runnable: how is ENQ_YIELD or ENQ_PREEMPT (a constant at every
   call site, so the branches fold). */
static inline void life_requeue(struct proc *p, enum enq_how how)
{
    if (how == ENQ_PREEMPT)
        p->npreempt++;
    p->state = P_READY;
    life_account(p, rdtime());
    trace_proc(how == ENQ_PREEMPT ? TR_PRE : TR_YLD, p, 0);
    hook_enqueue(p, how);
    hart_leave(p);
}

/* The running p waits (a futex; p->fx_deadline 0: for ever). Returns when woken (kernel). */
static inline void life_block(struct proc *p)
{
    ASSERT_HELD(&sched_lock, "life_block");
    p->state = P_BLOCKED;
    p->nblock++;
    p->blocked_at = rdtime();
    life_account(p, p->blocked_at);
    trace_proc(TR_BLK, p, 0);
    hook_blocked(p);
    p->job->nforever += !p->fx_deadline;
    life_note_if_stuck(p);
    hart_leave(p);
}

/* The running p ends: a ZOMBIE until its hart reaps it (life_reap). */
static inline void life_exit(struct proc *p)
{
    ASSERT_HELD(&sched_lock, "life_exit");
    p->state = P_ZOMBIE;
    life_account(p, rdtime());
    trace_proc(TR_EXIT, p, 0);
    hook_exited(p);
    p->job->nactive--;
    life_note_if_stuck(p);
    hart_leave(p);
}


/* The policy's pick_next gave p to hart c: p is RUNNING there from now. The caller then switches to it
   (its hart operation). A pick that is not READY is the policy's bug: PANIC, naming it. sched_lock held:
   both callers (the kernel's and the simulator's scheduler loop) take it on the line before pick_next, so
   this hot path does not check it again (ASSERT_HELD is 5 instructions; the READY check costs 2). */
static inline void life_run(struct cpu *c, struct proc *p, uint64_t now)
{
    if (__builtin_expect(p->state != P_READY, 0))
        sched_bad_pick(c, p); /* hooks.h; classes.c */
    if (!p->job->start)
        p->job->start = now;
    p->state = P_RUNNING;
    p->on_cpu = c;
    p->dispatched_at = now;
    p->nswitch++;
    c->cur = p;
    c->traced_idle = 0;
    trace_rec_at(c->id, now, TR_RUN, p->job->id, p->idx, p->slot);
}

/* ---- the cold paths (life.c) ---- */

int life_may_create(struct job *j);                 /* j->lock held: another process allowed now? */
long life_proc_new(struct job *j, struct proc *p);  /* j->lock held; p zeroed: bind it, charge its stack */
void life_proc_abandon(struct proc *p);             /* j->lock held: life_proc_new undone (no stack) */
void life_proc_start(struct proc *p);               /* j->lock held: p is j's, counted live */
void life_start(struct proc *p);                    /* no lock held: p READY for the first time */
void life_exit_status(struct proc *p, int status);  /* no lock held: p exits with status (fails j if != 0) */
int life_reap(struct proc *p);                      /* no lock held: p's slot is done; 1 if it was j's last */
void life_arrive(struct job *j);                    /* j arrives now (before anything else of it) */
int life_admit(struct job *j);                      /* the policy takes j: 0, or -1 (failed, reported) */
int life_job_finish(struct job *j);                 /* j's last reap: DONE, reported; 1 if its page table
                                                       has no user left (the caller frees it) */
void life_create_failed(struct job *j, int idx, long why);  /* no lock held: report and end (see life.c) */
void life_vfail_early(struct job *j, const char *reason, const char *fmt, va_list ap);
void life_fail_early(struct job *j, const char *reason, const char *fmt, ...)   /* the same, with the args */
    __attribute__((format(printf, 3, 4)));

#endif
