/*
 * wait.c - the spin and block wait kinds, the table of kinds, changing a
 * word (set/add with the sleepers bit), and the two primitives every
 * sleeping wait goes through (wait.h).
 *
 * The sleepers-bit protocol. A waiter sleeps only on the exact value
 * old|SL_WAIT_SLEEPERS, after setting the bit with a CAS on the word
 * itself; a changer replaces the word with one RMW and wakes iff the value
 * it replaced had the bit. Both are RMWs of one location, so they are
 * totally ordered: either the waiter's CAS comes first (the changer sees
 * the bit and wakes) or the changer's RMW does (the CAS fails, or the
 * futex sees a different value and returns at once). A word that had the
 * bit is always followed by a wake once it changes, so no sleeper is lost.
 */
#include "schedlab.h"
#include "wait/wait.h"
#include "base/eventlog.h"

static uint64_t nblocks;       /* sleeps by any process (relaxed counter) */
static uint32_t proc_sleepers; /* processes in (or entering) a futex wait on some word */

/* The thread layer's hooks (wait.h, "Threads"), NULL until it installs them. Written by process 0
   while it is the job's only process (a thread run starts there), read by every wait after. */
const struct sl_wait_threads *sl_wait_thread_hooks;

void sl_wait_use_threads(const struct sl_wait_threads *t)
{
    __atomic_store_n(&sl_wait_thread_hooks, t, __ATOMIC_RELEASE);
}

static inline const struct sl_wait_threads *thread_hooks(void)
{
    return __atomic_load_n(&sl_wait_thread_hooks, __ATOMIC_RELAXED);
}

/* ---- the two primitives ---- */

/* A process sleeps in the kernel; so does the process of a user-level
   thread in a worker run that has nothing else to do (threads/uthread_impl.h); any
   other thread parks and its process runs other threads. */
void sl_block_on_word(const uint32_t *word, uint32_t v)
{
    const struct sl_wait_threads *th = thread_hooks();
    int in_thread = th && th->pauser(), slept;

    /* counted before any futex check, this one's or the thread's process's */
    __atomic_add_fetch(&proc_sleepers, 1, __ATOMIC_SEQ_CST);
    if (in_thread) {
        slept = th->block_process(word, v);
    } else {
        sl_futex_wait(word, v, 0);
        slept = 1;
    }
    __atomic_sub_fetch(&proc_sleepers, 1, __ATOMIC_RELAXED);
    if (!slept)
        th->park(word, v); /* the thread parks; its process runs others */
}

/* Sleepers may be threads (usync.c's buckets) and processes (futex). A
   process counts itself in proc_sleepers before its futex wait, and the
   caller changed *word before this: both sequentially consistent, so if we
   read 0 here, any process that still goes to sleep finds the new value in
   its futex check and returns at once (worker runs never sleep on words as
   processes, so they save the system call). */
void sl_wake_word(const uint32_t *word)
{
    const struct sl_wait_threads *th = thread_hooks();

    if (th) /* no thread layer yet: no thread can be parked */
        th->wake(word);
    if (__atomic_load_n(&proc_sleepers, __ATOMIC_SEQ_CST))
        sl_futex_wake(word, SL_WAKE_ALL);
}

/* Someone who sleeps on *word must look at something else: clear the
   sleepers bit (a process sleeping on old|bit then returns from, or never
   enters, its futex wait) and wake every sleeper; they re-check and sleep
   again, setting the bit anew. */
void sl_wait_poke(const uint32_t *word)
{
    uint32_t *w = (uint32_t *)word;
    uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);

    while ((v & SL_WAIT_SLEEPERS) &&
           !__atomic_compare_exchange_n(w, &v, v & SL_WAIT_VALUE, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        ;
    if (thread_hooks())
        thread_hooks()->wake(word);
    sl_futex_wake(word, SL_WAKE_ALL);
}

void sl_wait_sleep(const uint32_t *word, uint32_t old)
{
    uint32_t *w = (uint32_t *)word; /* waiters write only the bit */
    uint32_t v = __atomic_load_n(w, __ATOMIC_RELAXED);

    if ((v & SL_WAIT_VALUE) != old)
        return;
    if (!(v & SL_WAIT_SLEEPERS) &&
        !__atomic_compare_exchange_n(w, &v, v | SL_WAIT_SLEEPERS, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return; /* changed under us: the caller re-checks */
    __atomic_add_fetch(&nblocks, 1, __ATOMIC_RELAXED);
    sl_ulog(SL_UL_BLOCK, (int32_t)old, 0);
    sl_block_on_word(word, old | SL_WAIT_SLEEPERS);
    sl_ulog(SL_UL_UNBLOCK, (int32_t)old, 0);
}

uint64_t sl_wait_blocks(void) { return __atomic_load_n(&nblocks, __ATOMIC_RELAXED); }

/* ---- changing a word ---- */

void sl_wait_set(uint32_t *word, uint32_t v, enum sl_wait kind)
{
    sl_race_point(SL_RACE_RELEASE);
    if (kind == SL_WAIT_SPIN) { /* nobody ever sets the bit */
        __atomic_store_n(word, v & SL_WAIT_VALUE, __ATOMIC_RELEASE);
        return;
    }
    if (__atomic_exchange_n(word, v & SL_WAIT_VALUE, __ATOMIC_ACQ_REL) & SL_WAIT_SLEEPERS)
        sl_wake_word(word);
}

uint32_t sl_wait_add(uint32_t *word, uint32_t d, enum sl_wait kind)
{
    uint32_t v, nv;

    if (kind == SL_WAIT_SPIN)
        return __atomic_add_fetch(word, d, __ATOMIC_ACQ_REL) & SL_WAIT_VALUE;
    v = __atomic_load_n(word, __ATOMIC_RELAXED);
    do
        nv = ((v & SL_WAIT_VALUE) + d) & SL_WAIT_VALUE; /* clears the bit */
    while (!__atomic_compare_exchange_n(word, &v, nv, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    if (v & SL_WAIT_SLEEPERS)
        sl_wake_word(word);
    return nv;
}

/* ---- who is running (the adaptive kind's evidence) ---- */

int sl_proc_running(uint32_t proc)
{
    volatile struct sl_info *in = sl_info();

    if (proc >= SL_MAX_PROCS)
        return 0;
    return __atomic_load_n((uint32_t *)&in->running[proc], __ATOMIC_RELAXED) != 0;
}

int sl_others_running(void)
{
    uint32_t n = sl_info()->nprocs, self = (uint32_t)sl_self();

    for (uint32_t p = 0; p < n && p < SL_MAX_PROCS; p++)
        if (p != self && !sl_proc_running(p))
            return 0;
    return 1;
}

/* ---- spin and block ---- */

/* Spin with plain loads; one acquire load once the word has changed pairs
   with the changer's release (it reads that RMW or a later one). */
static void spin_wait(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    sl_wait_pausefn pause = sl_wait_pauser();

    (void)wf;
    while ((__atomic_load_n(word, __ATOMIC_RELAXED) & SL_WAIT_VALUE) == old)
        sl_wait_pause(pause);
    (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static void spin_wake(const uint32_t *word) { (void)word; /* spinners see the store by themselves */ }

static void block_wait(const uint32_t *word, uint32_t old, const struct sl_waitfor *wf)
{
    (void)wf;
    while (sl_wait_value(word) == old)
        sl_wait_sleep(word, old);
}

extern const struct sl_waitops sl_wait_twophase_ops, sl_wait_adaptive_ops;
SL_WAIT_COUNTED(spin_wait)
SL_WAIT_COUNTED(block_wait)
static const struct sl_waitops spin_ops = { "spin", spin_wait, spin_wake, spin_wait_counted };
static const struct sl_waitops block_ops = { "block", block_wait, sl_wake_word, block_wait_counted };

const struct sl_waitops *sl_waits[SL_NWAITS] = {
    [SL_WAIT_SPIN] = &spin_ops,
    [SL_WAIT_BLOCK] = &block_ops,
    [SL_WAIT_TWOPHASE] = &sl_wait_twophase_ops,
    [SL_WAIT_ADAPTIVE] = &sl_wait_adaptive_ops,
};

int sl_wait_parse(const char *name)
{
    for (int k = 0; k < SL_NWAITS; k++)
        if (strcmp(sl_waits[k]->name, name) == 0)
            return k;
    return -1;
}

enum sl_wait sl_wait_from_arg(const char *key)
{
    const char *v = sl_arg_str(key);
    int k = sl_wait_parse(v);

    if (k < 0)
        sl_die("%s=%s is not a wait kind this library has", key, v);
    return (enum sl_wait)k;
}
