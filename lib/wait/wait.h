/*
 * wait.h - how a process waits for a shared 32-bit word to change.
 *
 * Every synchronization object in lib/ (barrier shapes, gauss's pivot-row
 * flags, later join counters) reduces waiting to one operation: "return
 * once *word != old", paired with "I changed *word: wake the waiters". A
 * wait kind is a function doing the first; objects take the kind as a
 * parameter and never care how it is done:
 *   spin      re-read the word until it changes (the waiter keeps its hart)
 *   block     sleep at once (futex) while the word still holds old
 *   twophase  spin for at most a bound, then block (wait_twophase.c); the
 *             bound is about one block + wake round trip, so the time a
 *             waiter wastes is at most twice what the best choice made in
 *             hindsight would waste
 *   adaptive  spin while every participant the waiter still needs is on a
 *             hart right now (the info page's running[]) and for at most
 *             twice twophase's bound, block otherwise (wait_adaptive.c: a
 *             hart that holds a participant may not be executing it);
 *             objects say whom a waiter needs with a struct sl_waitfor. On
 *             the host, where running[] cannot say who waits for a CPU, it
 *             waits as twophase does (lib/platform/host_spin.h)
 *   twophase and adaptive spin with sl_wait_giveway, which on a crowded
 *   host yields the CPU between looks; spin never gives its CPU away
 * A new kind is one new file defining a struct sl_waitops, one enum value,
 * one table entry in wait.c and its name in SL_WAIT_CHOICES.
 *
 * The sleepers bit. Bit 31 of a word (SL_WAIT_SLEEPERS) belongs to this
 * layer: a waiter about to sleep sets it, so the changer knows whether a
 * wake is needed at all and a wait that never slept costs no system call.
 * Values are therefore 31 bits (SL_WAIT_VALUE); waits compare the value
 * part only, and counters wrap at 2^31. The word must be writable memory.
 *
 * Changing a word:
 *   sl_wait_set(word, v, kind)      publish v; wakes sleepers if any
 *   sl_wait_add(word, d, kind)      add d (a counter); wakes sleepers if any
 *   store + sl_wait_wake(word,kind) also correct (the wake is unconditional
 *                                   for the sleeping kinds): the old contract
 * Memory order contract: set and add are release RMWs; a wait returns with
 * acquire ordering, so everything the changer wrote before changing the
 * word is visible after the wait.
 *
 * Sleeping and waking go through two primitives only, sl_block_on_word and
 * sl_wake_word (wait.c): the one place where a user-level thread suspends
 * itself instead of its process.
 *
 * Threads. This layer lies below the user-level threads (lib/LAYERS) and
 * never calls them by name: a thread library that runs on top installs a
 * struct sl_wait_threads (sl_wait_use_threads) before its first thread
 * exists, as Go's gopark takes the unlockf its caller supplies, and every
 * wait asks it whether the caller is a thread, how such a caller pauses,
 * parks and is woken. Until one is installed every caller is a process.
 */
#ifndef SL_WAIT_H
#define SL_WAIT_H

#include <stdint.h>
#include "schedlab.h"
#include "base/syncstat.h"

#define SL_WAIT_SLEEPERS 0x80000000u
#define SL_WAIT_VALUE    0x7fffffffu

enum sl_wait {
    SL_WAIT_SPIN,
    SL_WAIT_BLOCK,
    SL_WAIT_TWOPHASE,
    SL_WAIT_ADAPTIVE,
    SL_NWAITS
};

/* The kinds' names in enum order, as an app's SL_ENUM choices
   (SL_ENUM("barrier", SL_WAIT_CHOICES, 0)): the one list every app's key
   takes, so the boot check accepts exactly the kinds sl_waits[] has.
   tests/host/test_barrier.c checks it against the table. */
#define SL_WAIT_CHOICES "spin|block|twophase|adaptive"

/* Whom a waiter waits for, for the adaptive kind: running(wf) is 1 while
   every participant the waiter still needs is on a hart this instant. An
   object embeds it in its own struct and recovers that with an offset. A
   null sl_waitfor means "every other process of the job". */
struct sl_waitfor {
    int (*running)(const struct sl_waitfor *wf);
};

typedef void (*sl_waitfn)(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf);

struct sl_waitops {
    const char *name;                                   /* as in app keys */
    /* Until (*word & SL_WAIT_VALUE) != old; wf may be null. */
    sl_waitfn wait;
    /* After changing *word without set/add: wake whoever may sleep on it. */
    void (*wake)(const uint32_t *word);
    /* wait, publishing itself in the sync statistics (wait_stats.c) - made by SL_WAIT_COUNTED(wait) beside
       the kind. Required: sl_wait_stats_start swaps it in for wait where the job publishes. */
    sl_waitfn counted_wait;
};

/* A kind's counted wait, SL_WAIT_COUNTED(fn) -> fn_counted, for the kind's table entry. Untimed (the
   common case: the info page's sync_timed is 0) it is one load and a direct tail call more than fn itself,
   no stack: under the machine model every access costs host time, and a shared wrapper that called the
   kind through a table and kept a frame had cost twice the accesses (a fine synth folded onto one hart,
   MODEL=modern). */
void sl_wait_timed(sl_waitfn fn, const uint32_t *word, uint32_t old, const struct sl_waitfor *wf);
#define SL_WAIT_COUNTED(fn)                                                                   \
    static void fn##_counted(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf) \
    {                                                                                          \
        if (__builtin_expect(!sl_sync_timed(), 1))                                             \
            fn(word, old, wf);                                                                 \
        else                                                                                   \
            sl_wait_timed(fn, word, old, wf);                                                  \
    }

/* The kinds, by enum sl_wait. Written once, by sl_wait_stats_start, before any process but 0 exists. */
extern const struct sl_waitops *sl_waits[SL_NWAITS];

/* Where the job publishes sync statistics (base/syncstat.h: policy=adaptive), make every kind count its
   waits there (wait_stats.c); elsewhere nothing changes. Process 0, at start-up. 1 if counting. */
int sl_wait_stats_start(void);

/* The kind named `name`, or -1. */
int sl_wait_parse(const char *name);
/* The kind named by the app key `key` (e.g. barrier=spin); sl_die if none. */
enum sl_wait sl_wait_from_arg(const char *key);

/* Publish value v (< 2^31) in *word; wake the sleepers, if any. */
void     sl_wait_set(uint32_t *word, uint32_t v, enum sl_wait kind);
/* *word += d (mod 2^31); wake the sleepers, if any; returns the new value. */
uint32_t sl_wait_add(uint32_t *word, uint32_t d, enum sl_wait kind);

/* ---- for wait kinds (and nothing else) ---- */
/* Sleep once while *word's value is old: sets the sleepers bit, then blocks.
   Returns on any wake-up, spurious ones included: callers loop. */
void sl_wait_sleep(const uint32_t *word, uint32_t old);
/* The two primitives: block while *word == v (exactly); wake every sleeper. */
void sl_block_on_word(const uint32_t *word, uint32_t v);
void sl_wake_word(const uint32_t *word);
/* Make whoever sleeps on *word look again (a spurious wake-up for each). */
void sl_wait_poke(const uint32_t *word);
/* ---- the thread layer's hooks ----
   One pause of a spin loop inside a user-level thread (the thread library's sl_thread_pause): it first
   lets another ready thread of its process run - a spinning thread must not keep the process from running
   the thread it waits for: Markatos 3.6's "yields to another process of the same application on the same
   processor, and spins otherwise", at the thread level - and follows process control. */
typedef void (*sl_wait_pausefn)(void);

struct sl_wait_threads {
    /* The caller's pause if it runs on a user-level thread; NULL for a process. */
    sl_wait_pausefn (*pauser)(void);
    /* 1 if the caller is a thread whose wait is not its process's: the process runs its other threads
       meanwhile and publishes its own idle streaks (threads/uthread.c); wait_stats.c does not count it. */
    int (*wait_is_threads)(void);
    /* A thread about to sleep on *word while it holds v: 1 if its process slept there instead (on any
       wake-up; the thread stays on it), 0 if the thread must park (park below). */
    int  (*block_process)(const uint32_t *word, uint32_t v);
    /* Suspend the calling thread - not its process - until *word != v (acquire); the process runs
       others meanwhile. Woken only through wake(word). */
    void (*park)(const uint32_t *word, uint32_t v);
    /* *word changed (release or stronger): make the threads parked on it look again. Cheap when none. */
    void (*wake)(const uint32_t *word);
};

/* Installed once by the thread layer, in process 0 before its first thread exists (before the run's
   other processes are made): the waits see it from then on. Installing the same table again is a no-op. */
void sl_wait_use_threads(const struct sl_wait_threads *t);
/* NULL until installed; wait.c and sl_wait_pauser read it. */
extern const struct sl_wait_threads *sl_wait_thread_hooks;

/* What a spin loop pauses with: the thread layer's pause in a thread, NULL in a process. Spin loops ask
   once, before the loop, and pass the answer to sl_wait_pause. */
static inline sl_wait_pausefn
sl_wait_pauser(void)
{
    const struct sl_wait_threads *t = __atomic_load_n(&sl_wait_thread_hooks, __ATOMIC_RELAXED);

    return t ? t->pauser() : 0;
}

/* One pause of a spin loop: a thread's pause, else a cpu relax. */
static inline void
sl_wait_pause(sl_wait_pausefn pause)
{
    if (pause)
        pause();
    else
        sl_cpu_relax();
}
/* One pause of a wait that gives way (twophase's spin phase, adaptive's spin): sl_wait_pause, except
   that a process yields its CPU while the platform says the job is crowded (sl_plat_crowded: on the
   host, more runnable processes than CPUs; never on the kernel target, where this is sl_wait_pause).
   The participant it waits for may then be queued behind it on this CPU: Markatos 3.6's "yields to
   another process of the same application on the same processor", with the host's best guess of when.
   `spin` keeps the plain pause: it is the kind that never gives its CPU away. */
static inline void
sl_wait_giveway(sl_wait_pausefn pause)
{
    if (!pause && sl_plat_crowded())
        (void)sl_sys_yield();
    else
        sl_wait_pause(pause);
}
/* 1 if process `proc` of the job is on a hart now (info page running[]). */
int  sl_proc_running(uint32_t proc);
/* Default for a null sl_waitfor: every other process of the job runs. */
int  sl_others_running(void);

/* How many times any process of this job slept in a wait (all kinds). */
uint64_t sl_wait_blocks(void);

/* twophase: the spin bound in nanoseconds (default SL_TWOPHASE_SPIN_NS,
   wait_twophase.c); set it before the waits that should use it. Returns
   the previous bound. */
uint64_t sl_wait_twophase_bound(uint64_t ns);
/* adaptive: its spin bound in nanoseconds (default SL_ADAPTIVE_SPIN_NS,
   wait_adaptive.c), the same way. */
uint64_t sl_wait_adaptive_bound(uint64_t ns);

/* ns as ticks of a clock of hz, without overflow for any ns below 2^64. */
static inline uint64_t
sl_wait_ns_ticks(uint64_t ns, uint64_t hz)
{
    return ns / 1000000000u * hz + ns % 1000000000u * hz / 1000000000u;
}

/* adaptive's spin (wait_adaptive.c; for the kind and its tests): 1 once
   (*word & SL_WAIT_VALUE) != old (acquire); 0 as soon as a participant wf
   needs is off its hart, or the clock (sl_plat_ticks) has passed *since +
   limit ticks: then the waiter should sleep. *since is the wait's start,
   SL_WAIT_UNTIMED until its first look at the clock sets it; pass the same
   one to every spin of a wait. */
#define SL_WAIT_UNTIMED UINT64_MAX
int sl_wait_adaptive_spin(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf, uint64_t *since,
                          uint64_t limit);

static inline uint32_t
sl_wait_value(const uint32_t *word)
{
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) & SL_WAIT_VALUE;
}

static inline void
sl_wait_ne_for(const uint32_t *word, uint32_t old, enum sl_wait kind, const struct sl_waitfor *wf)
{
    sl_race_point(SL_RACE_WAIT);
    sl_waits[kind]->wait(word, old, wf);
    sl_race_point(SL_RACE_WAIT);
}

static inline void
sl_wait_ne(const uint32_t *word, uint32_t old, enum sl_wait kind)
{
    sl_race_point(SL_RACE_WAIT);
    sl_waits[kind]->wait(word, old, 0);
    sl_race_point(SL_RACE_WAIT);
}

static inline void
sl_wait_wake(const uint32_t *word, enum sl_wait kind)
{
    sl_waits[kind]->wake(word);
}

#endif
