/*
 * spinlock.h - test-and-set spinlocks. The kernel never takes interrupts in S-mode, so holding a lock
 * needs no interrupt masking; a lock is never held across a return to U-mode except sched_lock, which
 * is handed over across swtch (see sched/core.c).
 */
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include <stdint.h>

struct spinlock {
    volatile uint32_t locked;
    const char *name;
};

#define SPINLOCK_INIT(n) { 0, n }

static inline void acquire(struct spinlock *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            ;
}

static inline void release(struct spinlock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
