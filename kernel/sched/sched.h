/*
 * sched.h - the scheduling core's interface to the policies, in the manner of Linux's struct sched_class.
 *
 * The core (sched/core.c) owns the per-hart dispatch loop, the context switch, the timers and IPIs, and
 * process state. A policy decides placement and order only: it keeps its own queues and answers
 * pick_next(). Every hook is called with sched_lock held, on the hart named (or any hart for the
 * process hooks), and must not block or print. Adding a policy = one file that defines a struct
 * sched_class, declares its scenario options and per-job keys in it, and registers it with SCHED_CLASS
 * (no table to edit). Every hook but ipi must be set (an empty function where there is nothing to do):
 * at boot the kernel checks every policy built and names the policy and the hook missing in a PANIC line.
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
 *   ipi(c)                an IPI the policy sent (sched_ipi) arrived on hart c (the one optional hook)
 *
 * What a policy may keep and read:
 *   options               .options: settings for the whole run (quantum-like: name=value tokens), each a
 *                         choice list ("off|on": value 0 or 1) or a whole number in [min, max] (choices
 *                         ""); read as sched_opt[i], in .options order. At most SCEN_MAX_OPTS (8).
 *   per-job keys          .job_keys: declared like options, given in a job token (job=gauss:tickets=3),
 *                         checked against the chosen policy (another policy's key is an ERROR), shown in
 *                         the job's RESULT line; read as sched_job_key(j, i). At most SCEN_MAX_JOB_KEYS (4).
 *                         Names: at most 23 characters, not procs/at/adapt/mem nor an app's key name;
 *                         choice lists at most 63 characters (scenario.h).
 *   private storage       SCHED_PRIV(p, struct mine) and SCHED_PRIV(j, struct mine): SCHED_PRIV_WORDS
 *                         words in every struct proc and struct job that only the running policy uses,
 *                         zero when proc_new(p) / job_admit(j) is called (a larger struct fails to compile).
 *   accounting            p->run_ticks (time CSR ticks on harts so far) is current in tick (for c->cur),
 *                         in enqueue after a preemption or yield, and in blocked and exited: a policy that
 *                         ranks by attained service reads it there as is.
 */
#ifndef SCHED_H
#define SCHED_H

#include "core.h"
#include "../scenario.h"
#include "../trace.h"

struct sched_class {
    const char *name;
    int order;                              /* place in the BOOT line's list (the built-in four: 1..4) */
    struct scen_option options[SCEN_MAX_OPTS];   /* its own scenario options; its values: sched_opt[] */
    struct scen_option job_keys[SCEN_MAX_JOB_KEYS];   /* its per-job keys; a job's: sched_job_key(j, i) */
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

extern const struct sched_class *sched;

/* scenario knobs the policies read */
extern uint64_t sched_quantum;          /* ticks */
extern uint64_t sched_seed;
extern long sched_opt[SCEN_MAX_OPTS];   /* the running policy's options, in its options[] order: a choice's
                                           index or the number */

/* Job j's value of the running policy's per-job key i (its job_keys[] order), its default if not given. */
static inline long sched_job_key(const struct job *j, int i) { return j->scen->pkey[i]; }

/* The policy's private storage in a struct proc or struct job as its own struct type, which must fit. */
#define SCHED_PRIV(obj, type) \
    ((type *)((obj)->sched_priv + 0 * sizeof(char[sizeof(type) <= sizeof((obj)->sched_priv) ? 1 : -1])))

/* A policy registers itself: SCHED_CLASS(x) puts a pointer to its struct sched_class in the kernel's
   .sched_classes section (linker/kernel.ld), where sched/classes.c finds every policy built. */
#define SCHED_CLASS(cls) \
    static const struct sched_class *const cls##_entry __attribute__((used, section(".sched_classes"))) = &cls

/* Record a trace event about p on the calling hart. */
static inline void trace_proc(enum trace_ev ev, struct proc *p, int arg)
{
    trace_rec(mycpu()->id, ev, p->job->id, p->idx, arg);
}

#endif
