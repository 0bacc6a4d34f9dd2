/*
 * deadline.c - the deadline queue (the model and the lock rules are in deadline.h).
 *
 * Invariants (deadline_lock): the list from head is sorted by when, an entry of equal time after the ones
 * armed before it; d->armed iff d is on it; first_when is head->when, or DEADLINE_NONE when it is empty.
 * first_when is also read without the lock (deadline_next): a stale value only makes the core arm its timer
 * for a time that fires early and finds nothing due, or late by the window that deadline_moved closes.
 */
#include "kernel.h"
#include "deadline.h"

int deadline_hart;
void (*deadline_moved)(void);

static struct spinlock deadline_lock = SPINLOCK_INIT("deadline", LOCK_DEADLINE);
static struct deadline *head;                 /* deadline_lock */
static uint64_t first_when = DEADLINE_NONE;   /* deadline_lock to write */
static uintptr_t runner;                      /* deadline_lock: the hart in deadline_run (its tp), or 0 */

static void unlink(struct deadline *d)
{
    if (d->prev)
        d->prev->next = d->next;
    else
        head = d->next;
    if (d->next)
        d->next->prev = d->prev;
    d->next = d->prev = 0;
    d->armed = 0;
}

static void set_first(void) { __atomic_store_n(&first_when, head ? head->when : DEADLINE_NONE, __ATOMIC_RELAXED); }

void deadline_arm(struct deadline *d, uint64_t when)
{
    acquire(&deadline_lock);
    int earlier = !d->armed || when < d->when;
    if (d->armed)
        unlink(d);
    d->when = when;
    d->armed = 1;
    struct deadline *prev = 0, *cur = head;
    while (cur && cur->when <= when) /* after every entry of the same time: FIFO among equals */
        prev = cur, cur = cur->next;
    d->prev = prev;
    d->next = cur;
    if (cur)
        cur->prev = d;
    if (prev)
        prev->next = d;
    else
        head = d;
    set_first();
    int moved = earlier && runner != spin_self();
    release(&deadline_lock);
    if (moved && deadline_moved)
        deadline_moved();
}

void deadline_cancel(struct deadline *d)
{
    acquire(&deadline_lock);
    if (d->armed) {
        unlink(d);
        set_first(); /* only ever later: the timer may fire early and find nothing due, never late */
    }
    release(&deadline_lock);
}

uint64_t deadline_next(void) { return __atomic_load_n(&first_when, __ATOMIC_RELAXED); }

void deadline_run(uint64_t now)
{
    if (now < deadline_next()) /* the common case, every tick: nothing due, no lock */
        return;
    for (;;) {
        acquire(&deadline_lock);
        struct deadline *d = head;
        if (!d || d->when > now) {
            runner = 0;
            release(&deadline_lock);
            return;
        }
        unlink(d);
        set_first();
        runner = spin_self();
        release(&deadline_lock);
        d->fire(d, now);
    }
}
