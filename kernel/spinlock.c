/*
 * spinlock.c - the contended half of acquire() (spinlock.h): spin on plain loads until the lock looks free,
 * then try the swap again. Out of line so that the uncontended acquire, inlined everywhere, stays a swap and
 * a branch (measured with -icount: inlined, this loop cost ~12 instructions of register saves per acquire).
 */
#include "kernel.h"

void spin_acquire_contended(struct spinlock *l)
{
    do {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            vclock_pause(); /* deterministic mode: let the holder's hart run */
    } while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
    l->holder = spin_self();
}
