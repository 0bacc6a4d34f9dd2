/*
 * hooks.h - the one way the core calls a policy (struct sched_class, sched.h): a static inline wrapper per
 * hook, used by the kernel (sched/core.c, proc.c) and the simulator (tools/sim/sim_core.c) alike. Each
 * wrapper makes the contract of sched.h hold or panics naming the policy and the hook:
 *   - an optional hook left NULL costs one branch and means what sched.h says (proc_new: p->hart = the
 *     creating hart; job_admit: admitted; the others: nothing);
 *   - the hook runs with sched_lock held (kernel: the hart's lock-rank mask, spinlock.h, says so; the
 *     simulator has one thread and no locks);
 *   - while it runs, the hart's c->hook names it: a hook that reaches the switch out of a process
 *     (sched_block, sched_exit: hook_check_switch) or kprintf (console.c) panics, and so does a hook
 *     called from inside another (a hook that called sched_make_ready);
 *   - pick_next's process is READY, runs on this hart (p->hart == c->id) and is no other hart's current.
 * The checks are compiled in with KCHECKS (make KCHECKS=1: make test and the tests' own builds; always in
 * the simulator), as the lock order's (spinlock.h): ~39 instructions per process switch, which the default
 * build does not pay (README "Checked builds"). The panics are out of line (classes.c). Without KCHECKS a
 * wrapper is the NULL test (for an optional hook) and the call.
 */
#ifndef SCHED_HOOKS_H
#define SCHED_HOOKS_H

#include "sched.h"

#if defined(SCHEDLAB_SIM) && !defined(KCHECKS)
#define KCHECKS /* the simulator: always checked */
#endif

void sched_hook_panic(struct cpu *c, const char *hook, const char *what) __attribute__((noreturn, cold));
void sched_bad_pick(struct cpu *c, struct proc *p) __attribute__((noreturn, cold));

/* c starts running the policy's hook `name`. */
/* The calling hart, for the checks only (without them, not even its tp is read). */
#ifdef KCHECKS
#define HOOK_CPU() mycpu()
#else
#define HOOK_CPU() ((struct cpu *)0)
#endif

static inline void hook_enter(struct cpu *c, const char *name)
{
#ifdef KCHECKS
#ifndef SCHEDLAB_SIM
    if (!holding_rank(LOCK_SCHED)) /* sched_lock is the one lock of its rank: holding(&sched_lock), cheaper */
        sched_hook_panic(c, name, "called without sched_lock held (every hook but init runs under it)");
#endif
    if (c->hook)
        sched_hook_panic(c, name, "called from inside another hook (a hook may not call sched_make_ready, "
                                  "sched_block, sched_yield or sched_exit)");
    c->hook = name;
#endif
}

static inline void hook_leave(struct cpu *c)
{
#ifdef KCHECKS
    c->hook = 0;
#endif
}

/* The calling hart is about to switch a process out (block, yield, preempt, exit): never from a hook. */
static inline void hook_check_switch(struct cpu *c)
{
#ifdef KCHECKS
    if (c->hook)
        sched_hook_panic(c, c->hook, "blocked: it reached the switch out of a process (sched_block or "
                                     "sched_exit); a hook must not block");
#endif
}

/* Once, on the boot hart, before any job; not under sched_lock. */
static inline void hook_init(void)
{
    if (sched->init)
        sched->init();
}

static inline int hook_job_admit(struct job *j)
{
    if (!sched->job_admit)
        return 0;
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "job_admit");
    int r = sched->job_admit(j);
    hook_leave(c);
    return r;
}

static inline void hook_job_done(struct job *j)
{
    if (!sched->job_done)
        return;
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "job_done");
    sched->job_done(j);
    hook_leave(c);
}

static inline void hook_proc_new(struct proc *p)
{
    if (!sched->proc_new) {
        p->hart = mycpu()->id;
        return;
    }
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "proc_new");
    sched->proc_new(p);
    hook_leave(c);
}

static inline void hook_enqueue(struct proc *p, enum enq_how how)
{
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "enqueue");
    sched->enqueue(p, how);
    hook_leave(c);
}

static inline struct proc *hook_pick_next(struct cpu *c)
{
    hook_enter(c, "pick_next");
    struct proc *p = sched->pick_next(c);
    hook_leave(c);
#ifdef KCHECKS
    if (p && (p->state != P_READY || p->hart != c->id || (p->on_cpu && p->on_cpu != c && p->on_cpu->cur == p)))
        sched_bad_pick(c, p);
#endif
    return p;
}

static inline void hook_blocked(struct proc *p)
{
    if (!sched->blocked)
        return;
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "blocked");
    sched->blocked(p);
    hook_leave(c);
}

static inline void hook_exited(struct proc *p)
{
    if (!sched->exited)
        return;
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "exited");
    sched->exited(p);
    hook_leave(c);
}

static inline void hook_abandoned(struct proc *p)
{
    if (!sched->abandoned)
        return;
    struct cpu *c = HOOK_CPU();
    hook_enter(c, "abandoned");
    sched->abandoned(p);
    hook_leave(c);
}

static inline void hook_tick(struct cpu *c)
{
    if (!sched->tick)
        return;
    hook_enter(c, "tick");
    sched->tick(c);
    hook_leave(c);
}

static inline void hook_ipi(struct cpu *c)
{
    if (!sched->ipi)
        return;
    hook_enter(c, "ipi");
    sched->ipi(c);
    hook_leave(c);
}

/* Done job j's RESULT line: the policy's own keys, with a leading space, or "" (no sched_lock: sched.h). */
static inline void hook_result(const struct job *j, char *buf, size_t len)
{
    buf[0] = 0;
    if (!sched->result || len < 2)
        return;
    sched->result(j, buf + 1, len - 1);
    if (buf[1])
        buf[0] = ' ';
}

#endif
