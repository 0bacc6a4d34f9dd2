/*
 * spinlock.c - the contended half of acquire() (spinlock.h): spin on plain loads until the lock looks free,
 * then try the swap again. Out of line so that the uncontended acquire, inlined everywhere, stays a swap and
 * a branch (measured with -icount: inlined, this loop cost ~12 instructions of register saves per acquire).
 * And the lock order's panic, out of line for the same reason.
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

/* The lock of each rank, by name (spinlock.h): one kind of lock per rank. */
static const char *const rank_names[LOCK_NRANKS] = {
    [LOCK_DONE] = "launcher", [LOCK_JOB] = "job",   [LOCK_SCHED] = "sched",    [LOCK_PROCTABLE] = "proctable",
    [LOCK_ULOG] = "ulog",     [LOCK_KALLOC] = "kalloc", [LOCK_CONSOLE] = "console",
};

static int rank_of(uint32_t bit)
{
    int r = 0;
    while (bit > 1) {
        bit >>= 1;
        r++;
    }
    return r;
}

/* l comes at or before a lock h holds in the lock order (spinlock.h): name the latest such lock. */
void spin_rank_panic(const struct spinlock *l, const struct spin_hart *h)
{
    static char what[160]; /* not on the stack: spin_panic's own buffer is there */
    if (holding(l))
        spin_panic(l, "acquire: already held by this hart");
    int top = LOCK_NRANKS - 1;
    while (top > 0 && !(h->ranks >> top & 1))
        top--;
    snprintf(what, sizeof what, "acquire: lock order: rank %d taken while holding %s (rank %d); the order is in "
             "spinlock.h", rank_of(l->rankbit), rank_names[top] ? rank_names[top] : "?", top);
    spin_panic(l, what);
}
