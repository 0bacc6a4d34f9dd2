/*
 * uthread.h - user-level threads on a job's processes, scheduled by
 * non-blocking work stealing (Hood: Blumofe & Papadopoulos 1998).
 *
 * The model, before any code (names as in docs/design.md):
 *
 *   hart     a processor. The kernel decides which process runs on it, when,
 *            and for how long; this library never knows and never asks.
 *   process  kernel-scheduled, one of the job's sl_nprocs() (Hood's "serial
 *            machine"). While a thread program runs, every process loops in
 *            its scheduler: take a ready thread, run it until it yields,
 *            waits or exits, take the next one. A process never blocks on
 *            behalf of a thread.
 *   thread   a user-level task: a function, its argument, and - from the
 *            moment it first runs - a stack. It runs on whichever process
 *            takes it and may continue on another after any yield or wait.
 *            A thread joined while it is still the newest thread of its
 *            joiner's deque (made, then joined before anyone took it) gets
 *            no stack: the joiner calls its function on its own stack, as
 *            lazy task creation does ("inline run", uthread_run.c). It is
 *            still a thread in every other way: it may wait, yield, join or
 *            exit, and the joiner, under it, goes wherever it goes.
 *   deque    each process's ready threads (deque.h, the ABP deque). The
 *            owner pushes and pops at the bottom (LIFO: the newest thread
 *            first, as a serial depth-first run would); idle processes steal
 *            from the top (the oldest: usually the biggest piece of work).
 *
 * sl_threads_run(main_fn, arg), called by process 0, makes the job's
 * processes into one such machine (with sl_run_procs), runs main_fn(arg) as
 * the first thread (from process 0's deque), and returns when main_fn has
 * returned; then every process leaves its scheduler. Threads exist only
 * inside that call.
 *
 * The scheduler loop of one process, in order:
 *   1. sl_safe_point(): no thread is running on this process (see below).
 *   2. pop the bottom of its own deque; else the oldest thread pinned to
 *      it (see "Pinned threads"); else take threads made ready by code
 *      that is not a thread of this run (the inbox); else one steal
 *      attempt at a victim chosen uniformly at random; else the pinned
 *      threads of a process that process control suspended (rescue).
 *   3. nothing found: count a failed steal and back off (1, 2, 4 .. 64
 *      spin-loop pauses). After every STEALS_PER_YIELD (32) failures in a
 *      row the process gives its hart away with a kernel yield (sl_yield),
 *      as Hood does, so that a process preempted while running the thread
 *      everyone waits for gets the hart back (every 256 while it still has
 *      yielded threads to run, step 4: it is not idle then). After SLEEP_AFTER_US (2 ms)
 *      without finding work it sleeps on a futex instead, at most SLEEP_US
 *      (1 ms) at a time: a process that makes a thread ready wakes one
 *      sleeper, and a wake-up missed in a race costs at most that 1 ms,
 *      never correctness. With one process there is nobody to steal from
 *      and nobody to wait for: finding nothing at all is a deadlock, and
 *      the job stops with an error saying so.
 *   4. threads that called sl_thread_yield wait in a FIFO private to the
 *      process and run only when it found nothing else (so a yield lets
 *      every ready thread run first); they are not stealable.
 * Threads that wait (join, join counter, semaphore, sl_thread_wait_ne) are
 * in no deque: whoever satisfies the wait pushes them onto its own deque
 * (or the inbox, when it is not a thread of this run).
 *
 * Pinned threads (placement, Markatos chapter 4). sl_thread_spawn_on(p, ..)
 * and sl_thread_create_on(p, ..) make a thread that runs only on process
 * p, its home: it is never stolen, and whenever it becomes ready (created,
 * woken after a wait) it goes to p's own FIFO of pinned threads - directly
 * when p itself makes it ready, else through p's pin inbox (a lock-free
 * stack p empties whole). Step 2 takes, in order: the bottom of the deque,
 * the oldest pinned thread, the run's inbox, a steal. So a thread stays
 * where its data is, as in memory-conscious scheduling, and placement is
 * decided once, at creation (lib/threads/place.h chooses p: the data's home, or the
 * least loaded process). The exception is process control: a process
 * suspended by it cannot run its pinned threads, so an idle process takes
 * the pin inbox of a suspended one ("rescue"; the threads stay pinned to
 * it, and a later wait sends them back to its inbox), and a process
 * suspends itself only when no pinned thread of its own is ready. Pinned
 * threads are not bounded by SL_THREAD_READY_MAX (their FIFO is a list),
 * so one thread may spawn thousands of them in a loop.
 *
 * Safe points: step 1 of the loop, i.e. every time a thread has finished,
 * waited or yielded and before the next is taken, and on every idle pass;
 * and inside threads, every pause of a wait (sl_thread_pause) and every
 * sl_safe_point() call. Process control acts there (procctl.c).
 *
 * Process control (Tucker & Gupta 1989): when the job adapts (its info page
 * says SL_INFO_ADAPTIVE: adapt=yes under the partition policy), each safe
 * point compares the job's allotment (info->allot_count) with the number of
 * its processes not suspended. Too many: this process suspends itself (a
 * futex wait) - unless it holds yielded threads, which nobody else can run;
 * its deque stays stealable, so no thread is lost. Too few: it resumes one
 * suspended process. No application code is involved. The end of the run
 * resumes every suspended process, and a process that would suspend itself
 * after that sees the run is done and does not.
 *
 * Lifetimes: a thread made by sl_thread_create must be joined exactly once
 * (the join frees it); one made by sl_thread_spawn frees itself when it
 * finishes and reports through a join counter or other shared data. When
 * main_fn returns, every other thread must have finished, and every
 * joinable one must have been joined: anything else is an error that stops
 * the job.
 *
 * Limits, all failing loudly (ERROR line, then a trap that ends the job):
 *   stacks   SL_THREAD_STACK bytes each (16 KB on the kernel, 64 KB on the
 *            host), page-backed from sl_alloc_node, recycled through a free
 *            list per process (at most 8 kept; more go back to sl_free). A
 *            canary at the low end is checked when the thread finishes; an
 *            overwritten canary is a stack overflow. Threads that have not
 *            started yet have no stack, so only started, unfinished threads
 *            cost one. A thread run inline shares its joiner's stack, and
 *            runs inline only while 3/4 of SL_THREAD_STACK is left there, so
 *            every thread has at least that much.
 *   ready    SL_THREAD_READY_MAX (4096) ready threads per process, in the
 *            deque's sense (deque.h "Bound").
 *
 * Host caveat: processes are pthreads there, so a thread that migrates
 * changes pthread. Never keep a pointer to thread-local (__thread) data, or
 * errno, across a yield or wait. The library itself never does: it finds
 * its per-process state through sl_plat_proc() after every switch.
 */
#ifndef SL_UTHREAD_H
#define SL_UTHREAD_H

#include <stdint.h>
#include "base/spinlock.h"

#ifdef SL_TARGET_KERNEL
#define SL_THREAD_STACK (16 * 1024)
#else
#define SL_THREAD_STACK (64 * 1024)
#endif
#define SL_THREAD_READY_MAX 4096
/* What a worker run (sl_run_workers) adds to an app's memory: per process
   a worker's stack and its vp, once the main thread's stack and the run. */
#define SL_WORKERS_MEM_PER_PROC (SL_THREAD_STACK + 2048)
#define SL_WORKERS_MEM_CONST    (SL_THREAD_STACK + 8192)

typedef struct sl_thread sl_thread_t;

/* ---- running a thread program ---- */
/* Process 0 only, not nested: run main_fn(arg) as the first thread on all
   sl_nprocs() processes; return when it has returned. Once per job, and
   not in a job that used sl_run_procs: it makes the job's processes with
   sl_run_procs, and a job can create its processes only once. */
void sl_threads_run(void (*main_fn)(void *), void *arg);
/* The same, every thread pinned (the workers layer's runs, workers/workers.h): main_fn runs pinned to
   process 0, every thread it makes must be made with sl_thread_*_on, and an idle process sleeps at once
   (nothing is stealable, so it has nobody to steal from). */
void sl_threads_run_pinned(void (*main_fn)(void *), void *arg);
/* The calling thread becomes worker id of a pinned run: sl_worker_id() returns id from now on, and
   sl_worker_running(id) follows the process that hosts it. */
void sl_thread_set_worker(int id);
/* An ERROR line naming the thread layer, check=FAIL, and a trap that ends the whole job (not only the
   calling process, which sl_die would end, leaving the others waiting for the run). */
__attribute__((noreturn, format(printf, 1, 2))) void sl_uthread_fatal(const char *fmt, ...);

/* ---- threads (callable only from a thread) ---- */
/* A joinable thread running fn(arg): join it exactly once. */
sl_thread_t *sl_thread_create(void (*fn)(void *), void *arg);
/* A detached thread running fn(arg): no handle, frees itself at the end. */
void sl_thread_spawn(void (*fn)(void *), void *arg);
/* The same, pinned to process proc (0..sl_nprocs()-1): it runs only there
   (see "Pinned threads" above). A bad proc stops the job. */
sl_thread_t *sl_thread_create_on(int proc, void (*fn)(void *), void *arg);
void sl_thread_spawn_on(int proc, void (*fn)(void *), void *arg);
/* Wait until t has finished, then free it. */
void sl_thread_join(sl_thread_t *t);
/* Let the other ready threads of this process run first (loop step 4).
   Outside a thread: a kernel yield. */
void sl_thread_yield(void);
/* End the calling thread (returning from fn does the same). */
__attribute__((noreturn)) void sl_thread_exit(void);
/* The calling thread, or NULL when the caller is not a thread. */
sl_thread_t *sl_thread_self(void);
/* Nonzero when the caller runs on a user-level thread. */
int sl_in_thread(void);
/* Inside a worker of sl_run_workers (workers/workers.h): its id, the barrier participant; elsewhere
   sl_self(). */
int sl_worker_id(void);
/* 1 if the process that hosts worker w is on a hart now (adaptive waits); outside a worker run, whether
   process w is. */
int sl_worker_running(int worker);

/* ---- what placement needs to know (inside a run; 0 / -1 outside) ---- */
/* Process proc's load: its pinned threads created and not finished, plus the
   ready threads in its deque (a snapshot: others change it meanwhile). */
uint32_t sl_thread_load(int proc);
/* The hart process proc was on when it last looked (at the start of the
   run, after its idle kernel yields and after a suspension), -1 if it has
   not started yet. Under timeslice a process never moves. */
int sl_thread_proc_hart(int proc);

/* ---- join counters (Hood's wait(n)/signal) ----
   sl_joincnt_wait returns once n signals have arrived (before or after it
   was called). One waiter per init; re-init after the wait to reuse.
   Signals may come from anywhere (threads or plain processes). A signal
   never touches the counter after its own decrement unless it is the last,
   so the counter may live in the waiter's stack frame. Outside a thread
   the wait spins (with kernel yields). */
struct sl_joincnt {
    uint32_t     count;     /* signals still missing, +1 held by the waiter until it parks */
    sl_thread_t *waiter;    /* set by the waiter before it gives up its hold */
};
void sl_joincnt_init(struct sl_joincnt *jc, uint32_t n);
void sl_joincnt_signal(struct sl_joincnt *jc);
void sl_joincnt_wait(struct sl_joincnt *jc);

/* ---- counting semaphores ----
   sl_sem_p takes a unit, waiting (the thread, not the process) while there
   is none; sl_sem_v returns one, handing it straight to the oldest waiting
   thread if any. FIFO among waiting threads. A short spinlock guards the
   count and the queue (Hood's are lock-free; ours holds it for a few
   instructions). Outside a thread P polls with kernel yields. */
struct sl_sem {
    struct sl_spinlock lock;
    int32_t            count;
    sl_thread_t       *head, *tail;   /* waiting threads, oldest first */
};
void sl_sem_init(struct sl_sem *s, uint32_t count);
void sl_sem_p(struct sl_sem *s);
void sl_sem_v(struct sl_sem *s);

/* ---- thread-aware waiting on a 32-bit word (the wait layer's hooks, wait/wait.h
   "Threads": every run installs them, uthread_run.c; tests call them directly) ----
   sl_thread_wait_ne returns once *word != old (acquire), suspending the
   calling thread - not its process - in between. The thread is woken only
   by sl_thread_wake(word), which whoever changes *word must call after
   the change (release or stronger). wake costs one atomic read-modify-
   write of a bucket counter when nobody waits on a word of that bucket. Outside a thread
   wait_ne polls with kernel yields, and wake may be called from anywhere. */
void sl_thread_wait_ne(const uint32_t *word, uint32_t old);
void sl_thread_wake(const uint32_t *word);

/* ---- safe points (for process control; procctl.c) ----
   sl_safe_point: the calling thread may hand its process to another ready
   thread, to its host, or to process control here (a no-op outside a
   thread). sl_thread_pause: one pause of a spin loop inside a thread: the
   same, or a cpu relax when nothing wants the process. Every wait kind of
   wait.h pauses with it, so a barrier arrival is a safe point. */
void sl_safe_point(void);
void sl_thread_pause(void);
/* For the wait layer's sleeping kinds (its block_process hook): in a worker run, sleep the calling thread's
   process on *word while it holds v, the thread staying on it, if nothing
   else wants the process (uthread_impl.h, "Sleeping with a thread"); 1 if
   it did (returns on any wake-up), 0 if the caller must park the thread. */
int sl_thread_block_process(const uint32_t *word, uint32_t v);
/* Off by default: while process control keeps processes suspended a folded vp parks its waiting thread and
   sleeps on its bell rather than on the wait word (measured no slower, and a ringer seldom has to poke).
   On, it sleeps on the word then too: every wake of a sibling pokes it - the host test of the poke
   protocol drives it that way. Set before the run. */
void sl_threads_word_sleep_folded(int on);

/* ---- counters of the last sl_threads_run, summed over processes ---- */
struct sl_thread_stats {
    uint64_t threads;        /* created, the main thread included */
    uint64_t steals;         /* successful steals */
    uint64_t steal_fails;    /* steal attempts that found nothing or lost a race */
    uint64_t yields;         /* kernel yields of idle processes */
    uint64_t sleeps;         /* futex sleeps of idle processes */
    uint64_t stacks;         /* stacks a process had to get from sl_alloc_node (its own free list was empty) */
    uint64_t suspends;       /* process control: times a process suspended itself */
    uint64_t resumes;        /* process control: times a process resumed a suspended one */
    uint64_t react_ticks;    /* process control: sum over suspensions of (suspension - allotment change) */
    uint64_t react_max_ticks;/* the longest of those */
    uint64_t inlined;        /* threads run on their joiner's stack (joined before anyone else took them) */
};
void sl_threads_stats(struct sl_thread_stats *out);
/* Hood's yield (on by default): a thief that keeps failing gives its hart away every few dozen attempts.
   Off, it keeps trying (it still sleeps after a long idle stretch). Set before sl_threads_run. */
void sl_threads_yields(int on);

#endif
