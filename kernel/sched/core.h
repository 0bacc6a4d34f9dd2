/*
 * core.h - the scheduling core's services and entry points (sched/core.c), for the rest of the kernel and
 * for the policies. What a policy implements is in sched.h; what a hart is, in ../cpu.h.
 */
#ifndef SCHED_CORE_H
#define SCHED_CORE_H

#include "../cpu.h"

enum enq_how { ENQ_NEW, ENQ_PREEMPT, ENQ_YIELD, ENQ_WAKE };

struct sched_class;

extern struct spinlock sched_lock;

/* services (sched_lock held) */
void sched_preempt(struct cpu *c);          /* end c's current process's turn at its next return to user */
void sched_kick(int hart);                  /* make an idle hart look at its queue again */
int sched_kick_idle(uint64_t hart_mask);    /* sched_kick one idle, not yet kicked hart of the mask: its id, or -1 */
void sched_ipi(uint64_t hart_mask);         /* send the policy's IPI to those harts */
uint64_t sched_rand(void);                  /* seeded PRNG (splitmix64) */
void sched_restart_tick(int hart);          /* hart's next tick a full quantum from now */

/* core entry points */
const struct sched_class *sched_class_by_name(const char *name);
const char *sched_class_names(void);        /* "timeslice,gang,..." of the policies built, in order */
const char *sched_option_list(void);        /* "gang.alternates=on|off,...": every policy's options */
const char *sched_job_key_list(void);       /* "lottery.tickets=1..10000,...": every policy's job keys */
struct scen_policy;
const struct scen_policy *sched_policy_table(int *n);   /* names and options, for the scenario parser */
void sched_init(void);
void sched_start_hart(void) __attribute__((noreturn));
void sched_make_ready(struct proc *p, enum enq_how how);   /* sched_lock held */
void sched_block(struct proc *p);           /* sched_lock held; returns when woken, lock held again */
void sched_yield(struct proc *p);
void sched_exit(struct proc *p) __attribute__((noreturn));  /* sched_lock held */
void sched_timer_interrupt(struct cpu *c);
void sched_soft_interrupt(struct cpu *c);
void sched_preempt_on_return(struct proc *p); /* sched_on_return's switch, out of line */
/* On the way back to user: preempt if asked. Inline, so a trap that switches nothing (every syscall) pays
   a load and a branch, not a call with its frame (-icount: 17 instructions per syscall when it was a
   function that gcc did not shrink-wrap). */
static inline void sched_on_return(struct proc *p)
{
    if (mycpu()->need_resched)
        sched_preempt_on_return(p);
}
void sched_first_return(void);
void sched_hook_printed(struct cpu *c, const char *line);   /* kprintf inside a policy hook: panics (but a PANIC) */

/* What the core needs from the layers above it, called through these and never by name (../LAYERS.md);
   main.c fills them in before any hart runs. Each is called with no lock held. */
struct sched_upcalls {
    void (*to_user)(struct proc *p);        /* noreturn: a new process's first way to U-mode (trap.c) */
    void (*reap)(struct proc *p);           /* p is a zombie and its hart has switched away from it */
    void (*put_pagetable)(struct job *j);   /* no hart holds j's page table any more and j is done */
    void (*deadlocked)(struct job *j);      /* j was found stuck as a process left its hart: end it */
};
extern struct sched_upcalls sched_up;

/* sched_lock held. Is j stuck for good: every process of it that has not exited blocked on a futex with
   no timeout? Only a process of j can wake j's futexes and nothing else wakes a waiter without a
   timeout, so such a job can never move again. O(1): the core keeps the two counts as processes are
   made ready, block and exit. A process being created implies a running one, so it never looks stuck. */
static inline int sched_job_stuck(const struct job *j)
{   /* no ASSERT_HELD: it is on the block and exit paths, whose callers assert sched_lock already */
    return j->nforever > 0 && j->nforever == j->nactive;
}

#endif
