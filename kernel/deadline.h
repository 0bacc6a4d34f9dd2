/*
 * deadline.h - the kernel's one deadline queue: things that must happen at a time.
 *
 * Model. A subsystem that needs the clock - the launcher (the next job arrival), its watchdog (timeout=),
 * futex timeouts (the earliest waiter's) - owns a struct deadline with a callback and arms it for a time of
 * the time CSR. The scheduling core asks only this queue when to wake next (deadline_next, when it arms the
 * timer of deadline_hart) and, on deadline_hart's timer interrupt, has it fire what is due (deadline_run).
 * The core names no subsystem and no subsystem calls the core's timer code: when an entry is armed earlier
 * than it was (or newly), the queue calls deadline_moved, the hook the core installs (it re-arms
 * deadline_hart's timer, or sends it an IPI), as Go's timers are a heap that the scheduler consults. (Only
 * an entry that became the first needs it; the wider rule is what the kernel did before the queue, when
 * futex.c sent the IPI whenever its own earliest waiter moved, and keeps deterministic consoles as they
 * were: in that mode an IPI or a timer armed changes how QEMU interleaves the harts.)
 *
 * The queue is a doubly linked list sorted by time, FIFO among equal times. Each subsystem owns a fixed
 * number of entries (one each today: arrivals, the watchdog, futex timeouts - futex.c keeps its waiters
 * and arms one entry for the earliest), never one per process, so n is small and bounded: the O(n)
 * insertion walks a handful of entries; the next deadline, popping the first and cancelling are O(1).
 *
 * Firing. deadline_run(now) takes the first entry while it is due (when <= now), disarms it and calls its
 * callback with no lock of the queue's held, so a callback may take any lock, arm any entry (its own again,
 * even for a time already due: it fires in the same run), or never return (the watchdog ends the run).
 * Due entries fire earliest first. The caller re-arms its timer from deadline_next afterwards, so an entry
 * armed by the running hart's own callbacks calls no deadline_moved.
 *
 * Locks: deadline_lock guards every entry's list links, armed flag and time; it is taken under sched_lock
 * (futex_wait arms there) and under nothing else of the kernel's, and nothing is taken under it.
 * deadline_moved is called after it is dropped, with the arming caller's locks (sched_lock) still held.
 */
#ifndef DEADLINE_H
#define DEADLINE_H

#include <stdint.h>

struct deadline {
    void (*fire)(struct deadline *d, uint64_t now); /* fixed; called on deadline_hart when due */
    const char *name;                               /* fixed */
    /* deadline_lock */
    uint64_t when;                                  /* time CSR; meaningful while armed */
    int armed;                                      /* on the list */
    struct deadline *next, *prev;
};

#define DEADLINE_INIT(nm, fn) { .fire = (fn), .name = (nm) }
#define DEADLINE_NONE UINT64_MAX                    /* deadline_next with nothing armed */

extern int deadline_hart;                           /* whose timer serves the queue (the boot hart) */
extern void (*deadline_moved)(void);                /* the core's: the earliest deadline moved earlier */

void deadline_arm(struct deadline *d, uint64_t when);   /* (re-)arm for when; an armed entry moves */
void deadline_cancel(struct deadline *d);                /* disarm; nothing if it is not armed */
uint64_t deadline_next(void);                            /* earliest armed time, or DEADLINE_NONE; no lock */
void deadline_run(uint64_t now);                         /* deadline_hart: fire every entry due at now */

#endif
