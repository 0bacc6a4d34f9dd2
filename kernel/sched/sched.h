/*
 * sched.h - the scheduling core's interface to the policies, in the manner of Linux's struct sched_class.
 *
 * The core (sched/core.c) owns the per-hart dispatch loop, the context switch, the timers and IPIs, and
 * process state. A policy decides placement and order only: it keeps its own queues and answers
 * pick_next(). Every hook is called with sched_lock held, on the hart named (or any hart for the
 * process hooks), and must not block or print. Adding a policy = one file defining a struct sched_class
 * plus one line in the table in core.c.
 *
 * Process life as a policy sees it:
 *   job_admit(j)          j arrived (before its first process); -1 refuses it (no room), and it fails
 *   job_done(j)           j's last process was reaped, or its admission failed after job_admit
 *   proc_new(p)           p was created; choose p->hart (binding) and p->slot if the policy uses them
 *   enqueue(p, how)       p is runnable and not running: after proc_new, after preemption or yield,
 *                         or after a wake-up (how = ENQ_WAKE)
 *   pick_next(c)          take the process hart c should run next, or NULL to idle
 *   blocked(p) / exited(p)  the running p stopped running for good or until woken
 *   abandoned(p)          proc_new(p) was called but p never became ready (its stack could not be had):
 *                         undo what proc_new did; p never ran and is never enqueued
 *   tick(c)               hart c's quantum timer fired; call sched_preempt(c) to end the current quantum.
 *                         Every hart ticks, at seeded random phases, unless the policy sets one_timer:
 *                         then only hart 0 does (gang), and sched_restart_tick starts a full quantum anew
 *   ipi(c)                an IPI the policy sent (sched_ipi) arrived on hart c
 */
#ifndef SCHED_H
#define SCHED_H

#include "../kernel.h"
#include "../proc.h"
#include "../trace.h"

enum enq_how { ENQ_NEW, ENQ_PREEMPT, ENQ_YIELD, ENQ_WAKE };

struct sched_class {
    const char *name;
    int one_timer;                          /* only hart 0 has the quantum timer */
    int allots;                             /* sets each job's allotment (info page); adapt=yes jobs follow it */
    void (*init)(void);
    int (*job_admit)(struct job *j);
    void (*job_done)(struct job *j);
    void (*proc_new)(struct proc *p);
    void (*enqueue)(struct proc *p, enum enq_how how);
    struct proc *(*pick_next)(struct cpu *c);
    void (*blocked)(struct proc *p);
    void (*exited)(struct proc *p);
    void (*abandoned)(struct proc *p);
    void (*tick)(struct cpu *c);
    void (*ipi)(struct cpu *c);
};

enum { IDLE_NOT, IDLE_POLL, IDLE_HALT };

/* One per hart; tp points at it in S-mode. */
struct cpu {
    int id;                     /* hart index 0..H-1 */
    uint64_t hartid;            /* firmware hart id */
    int node;                   /* NUMA node */
    struct proc *cur;           /* RUNNING here, or NULL while the hart idles in its scheduler loop */
    struct job *satp_job;       /* whose page table is loaded */
    struct context sched_ctx;   /* the scheduler loop's context */
    struct proc *fpu_owner;     /* whose values the FP registers hold */
    int idle;                   /* IDLE_NOT, or IDLE_POLL / IDLE_HALT while it has nothing to run */
    int poked;                  /* sched_kick's wake-up for a polling hart */
    int need_resched;           /* leave the current process at the next return to user */
    uint64_t next_tick;         /* time of the next quantum tick */
    uint64_t idle_ticks, idle_since;
    int traced_idle;            /* an idle record was written since the last dispatch */
    void *policy;               /* per-hart policy state */
    struct job *stuck_job;      /* the process that just left this hart found its job stuck (job_stuck) */
};

extern struct cpu cpus[SL_MAX_HARTS];
extern int ncpus;
extern struct spinlock sched_lock;
extern const struct sched_class *sched;

/* scenario knobs the policies read */
extern uint64_t sched_quantum;          /* ticks */
extern uint64_t sched_seed;
extern int sched_wakeboost;
extern int sched_alternates;            /* gang: alternates=on */
extern int sched_gangfit;               /* gang: SCEN_FIT_FIRST / SCEN_FIT_BEST */

static inline struct cpu *mycpu(void)
{
    struct cpu *c;
    asm volatile("mv %0, tp" : "=r"(c));
    return c;
}

/* core services for policies (sched_lock held) */
void sched_preempt(struct cpu *c);          /* end c's current process's turn at its next return to user */
void sched_kick(int hart);                  /* make an idle hart look at its queue again */
void sched_ipi(uint64_t hart_mask);         /* send the policy's IPI to those harts */
uint64_t sched_rand(void);                  /* seeded PRNG (splitmix64) */
void sched_restart_tick(int hart);          /* hart's next tick a full quantum from now */
void sched_arm_timer(void);                 /* re-arm the calling hart's timer (a deadline moved earlier) */

/* Record a trace event about p on the calling hart. */
static inline void trace_proc(enum trace_ev ev, struct proc *p, int arg)
{
    trace_rec(mycpu()->id, ev, p->job->id, p->idx, arg);
}

/* core entry points */
const struct sched_class *sched_class_by_name(const char *name);
const char *sched_class_names(void);        /* "timeslice,gang,..." of the policies built */
void sched_init(void);
void sched_start_hart(void) __attribute__((noreturn));
void sched_make_ready(struct proc *p, enum enq_how how);   /* sched_lock held */
void sched_block(struct proc *p);           /* sched_lock held; returns when woken, lock held again */
void sched_yield(struct proc *p);
void sched_exit(struct proc *p) __attribute__((noreturn));  /* sched_lock held */
void sched_timer_interrupt(struct cpu *c);
void sched_soft_interrupt(struct cpu *c);
void sched_on_return(struct proc *p);       /* on the way back to user: preempt if asked */
void sched_first_return(void);

#endif
