/*
 * spinlock.h - a test-and-test-and-set lock for short library critical
 * sections (the allocator's free lists).
 *
 * The holder may be preempted (more processes than harts), so a waiter that
 * has spun for a while yields its hart instead of burning its whole quantum
 * on a lock whose holder cannot run.
 */
#ifndef SL_SPINLOCK_H
#define SL_SPINLOCK_H

#include "schedlab.h"

struct sl_spinlock {
    uint32_t locked;    /* 1 while held; acquire on take, release on drop */
};

#define SL_SPIN_BEFORE_YIELD 256

static inline void
sl_spin_lock(struct sl_spinlock *l)
{
    unsigned spins = 0;

    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
            if (++spins % SL_SPIN_BEFORE_YIELD == 0)
                sl_sys_yield();
            else
                sl_cpu_relax();
        }
    }
}

static inline void
sl_spin_unlock(struct sl_spinlock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
