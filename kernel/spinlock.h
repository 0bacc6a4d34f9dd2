/*
 * spinlock.h - test-and-set spinlocks that know their holder. The kernel never takes interrupts in S-mode,
 * so holding a lock needs no interrupt masking; a lock is never held across a return to U-mode except
 * sched_lock, which is handed over across swtch between a hart's scheduler loop and the process it runs
 * (see sched/core.c) - on the same hart, so the holder stays the same.
 *
 * The holder is the hart's tp (its struct cpu; 0 before boot_main sets it, when only the boot hart runs).
 * As in xv6, acquiring a lock the hart already holds, or releasing one it does not hold, is a kernel bug
 * and panics (spin_panic, which prints without taking the console lock); code that states "lock held"
 * checks it with holding().
 */
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include <stdint.h>
#include "vclock.h"

struct spinlock {
    volatile uint32_t locked;
    const char *name;
    uintptr_t holder;           /* tp of the hart that holds it (valid while locked) */
};

#define SPINLOCK_INIT(n) { 0, n, 0 }

void spin_panic(const struct spinlock *l, const char *what) __attribute__((noreturn));   /* console.c */
void spin_acquire_contended(struct spinlock *l); /* spinlock.c: wait, take it, set the holder */

static inline uintptr_t spin_self(void) { return read_tp(); }

/* 1 if the calling hart holds l. */
static inline int holding(const struct spinlock *l)
{
    return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) && l->holder == spin_self();
}

static inline void acquire(struct spinlock *l)
{
    if (holding(l))
        spin_panic(l, "acquire: already held by this hart");
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
    l->holder = 0;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* For code whose rule is "l held": panics with the function's name when it is not. */
#define ASSERT_HELD(l, who)                 \
    do {                                    \
        if (!holding(l))                    \
            spin_panic((l), who ": lock not held"); \
    } while (0)

#endif
