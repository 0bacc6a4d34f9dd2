/*
 * spinlock.h - test-and-set spinlocks that know their holder and their place in the lock order. The kernel
 * never takes interrupts in S-mode, so holding a lock needs no interrupt masking; a lock is never held
 * across a return to U-mode except sched_lock, which is handed over across swtch between a hart's
 * scheduler loop and the process it runs (see sched/core.c) - on the same hart, so the holder stays the same.
 *
 * The holder is the hart's tp (its struct cpu; 0 before boot_main sets it, when only the boot hart runs).
 * As in xv6, acquiring a lock the hart already holds, or releasing one it does not hold, is a kernel bug
 * and panics (spin_panic, which prints without taking the console lock); code that states "lock held"
 * checks it with holding().
 *
 * Lock order, checked at acquire time (as Go's lockrank). Every lock has a rank; a hart may acquire a lock
 * only while every lock it holds has a lower rank, so no two harts can wait for each other in a cycle. The
 * order, outermost first:
 *   LOCK_DONE       done_lock (launcher.c): finished jobs, RESULT/SUMMARY; sched_lock is taken under it
 *                   (launcher_job_done -> info_set_fg_live)
 *   LOCK_JOB        job->lock (proc.h): a job's process list, memory and results; never held with done_lock
 *   LOCK_SCHED      sched_lock (sched/core.c): process states, run queues, policy state, futex queues
 *   LOCK_DEADLINE   deadline_lock (deadline.c): the one deadline queue; armed under sched_lock (futex_wait),
 *                   never held while a deadline fires
 *   LOCK_PROCTABLE  proc_table_lock (proc.c): which process slots are in use (under job->lock)
 *   LOCK_ULOG       ulog_lock (ulog.c): the event-log rings; allocates their pages under it
 *   LOCK_KALLOC     kalloc's node locks: the free page lists (under job->lock or ulog_lock)
 *   LOCK_CONSOLE    console_lock (console.c): innermost; kprintf is called with any of the above held
 * Same rank: no two locks of one rank are ever held at once (two jobs' locks, two kalloc nodes): acquiring a
 * second lock of a rank held is a violation too. There is no exception today; one would need a count per
 * rank in struct spin_hart instead of a bit.
 *
 * The check costs a few instructions and no loop: each hart keeps the set of ranks it holds as a bit mask
 * (struct spin_hart, the first member of its struct cpu, so tp points at it), and a lock carries its rank as
 * a bit; acquire panics when the mask has that bit or a higher one (mask >= bit), naming both locks. As Go's
 * static lock ranking, it is compiled in only with KCHECKS (make KCHECKS=1, which make test and the tests'
 * own kernel builds use; README "Checked builds"): ~17 instructions per process switch (two acquires and
 * two releases of sched_lock), 3.5 % of a kbench yield, which the default build does not pay.
 */
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include <stdint.h>
#include "vclock.h"
#include "perturb.h"

enum lock_rank { LOCK_DONE = 1, LOCK_JOB, LOCK_SCHED, LOCK_DEADLINE, LOCK_PROCTABLE, LOCK_ULOG, LOCK_KALLOC, LOCK_CONSOLE, LOCK_NRANKS };

struct spinlock {
    volatile uint32_t locked;
    uint32_t rankbit;           /* 1 << its enum lock_rank */
    const char *name;
    uintptr_t holder;           /* tp of the hart that holds it (valid while locked) */
};

/* A hart's locks: the first member of struct cpu (cpu.h), so the hart's tp points at it. One lock per rank
   at most, so the rank names the lock (spin_rank_panic). */
struct spin_hart {
    uint32_t ranks;             /* bit r set: the hart holds the lock of rank r */
};

#define SPINLOCK_INIT(n, rank) { 0, 1u << (rank), n, 0 }

void spin_panic(const struct spinlock *l, const char *what) __attribute__((noreturn));   /* console.c */
void spin_acquire_contended(struct spinlock *l); /* spinlock.c: wait, take it, set the holder */
void spin_rank_panic(const struct spinlock *l, const struct spin_hart *h) __attribute__((noreturn)); /* spinlock.c */

static inline uintptr_t spin_self(void) { return read_tp(); }

/* 1 if the calling hart holds l. */
static inline int holding(const struct spinlock *l)
{
    return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) && l->holder == spin_self();
}

/* The lock order (see the header): the hart h may take l, and holds it from now on. Panics naming l and the
   lock it holds of l's rank or a later one - l itself, if the hart holds it already. Before boot_main sets
   tp (h = 0: one hart runs), and without KCHECKS, only that last rule is checked. */
static inline void spin_rank_take(struct spin_hart *h, const struct spinlock *l)
{
    if (h) {
        if (h->ranks >= l->rankbit)
            spin_rank_panic(l, h);
        h->ranks |= l->rankbit;
    } else if (holding(l)) {
        spin_panic(l, "acquire: already held by this hart");
    }
}

static inline void spin_rank_drop(struct spin_hart *h, const struct spinlock *l)
{
    if (h)
        h->ranks ^= l->rankbit; /* set: l is held (release checked) */
}

/* 1 if the calling hart holds a lock of rank r (KCHECKS only: 1 without). */
static inline int holding_rank(enum lock_rank r)
{
#ifdef KCHECKS
    const struct spin_hart *h = (const struct spin_hart *)spin_self();
    return h && (h->ranks >> r & 1);
#else
    (void)r;
    return 1;
#endif
}

static inline void acquire(struct spinlock *l)
{
#ifdef KCHECKS
    spin_rank_take((struct spin_hart *)spin_self(), l); /* also: not held by this hart already */
#else
    if (holding(l))
        spin_panic(l, "acquire: already held by this hart");
#endif
    /* the wait is out of line and a tail call (it sets the holder too): inlined, or with work after it, it
       made gcc save registers on every uncontended acquire as well */
    if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
        spin_acquire_contended(l);
        return;
    }
    l->holder = spin_self();
}

static inline void release(struct spinlock *l)
{
    if (!holding(l))
        spin_panic(l, "release: not held by this hart");
#ifdef KCHECKS
    spin_rank_drop((struct spin_hart *)spin_self(), l);
#endif
    l->holder = 0;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
#if defined(KCHECKS) && !defined(SCHEDLAB_SIM) /* the simulator never perturbs */
    /* perturb=: another hart may take l before this one goes on (perturb.h) */
    perturb_point(l->rankbit == 1u << LOCK_SCHED ? PS_RELEASE_SCHED : PS_RELEASE);
#endif
}

/* For code whose rule is "l held": panics with the function's name when it is not. */
#define ASSERT_HELD(l, who)                 \
    do {                                    \
        if (!holding(l))                    \
            spin_panic((l), who ": lock not held"); \
    } while (0)

#endif
