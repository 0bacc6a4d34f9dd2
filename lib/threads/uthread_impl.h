/*
 * uthread_impl.h - private to the thread layer (lib/threads/ only; the
 * layers above use uthread.h): the run, the virtual processors, the thread
 * descriptor, and the few functions those files share. The model is in
 * uthread.h; nothing here is for apps.
 *
 * Names. A "run" is one sl_threads_run (or sl_run_workers) call: the
 * job's processes turned into one thread machine. Each process of the
 * run is a "virtual processor" (vp, Markatos 3.3: the kernel process that
 * runs user-level threads); its state is a struct vp that only that
 * process writes, except where a field says otherwise.
 *
 * Homes and hosts. A pinned thread has a home: the vp it was created for.
 * While process control keeps that vp suspended, its pinned threads run on
 * a host instead: run->host[home] names the vp that takes them now (home
 * itself while it is active). The map is rewritten under pc_lock on every
 * suspension and resumption and read without it; a thread made ready is
 * sent to host[home] as read at that moment, and a vp that finds a thread
 * whose host is elsewhere sends it on (procctl.c). So a reader with a stale
 * map only costs one extra hop, never a lost thread.
 *
 * Bells. An idle vp sleeps on its own bell (a futex word); whoever gives it
 * a thread rings it (bell++, then a futex wake if it sleeps). The sleeper
 * sets `sleeping`, reads the bell, looks for work, and sleeps only while the
 * bell still holds what it read; the ringer publishes the thread, bumps the
 * bell, then reads `sleeping`. All four are sequentially consistent, so
 * either the sleeper sees the thread or the ringer sees the sleeper: no
 * wake-up is lost (uthread.c, idle_sleep and sl_ut_ring).
 *
 * Sleeping with a thread. In a worker run a thread that must sleep on a
 * wait word, on a vp with nothing else to run, does not park: its process
 * sleeps on the word itself, as a process would (the same system calls, no
 * user-level switch; sl_thread_block_process). Each such sleep is numbered:
 * the vp publishes the word and the value it sleeps on, then the sleep's
 * number in sleep_seq (sequentially consistent), then looks for work, and
 * when the sleep is over (slept, or never entered) stores its number in
 * sleep_done. A ringer that finds a sleep open (sleep_seq != sleep_done,
 * read after it published the thread: so either the vp sees the thread or
 * the ringer sees the sleep) "pokes" the word: it clears the word's
 * sleepers bit and wakes every sleeper of it (wait.c, sl_wait_poke), so the
 * process returns from its futex wait, or never enters it, the word no
 * longer holding the value it waits on. One poke is not enough: another
 * waiter of the word may set the bit again before the vp's futex check
 * (which then passes), after the poke's wake. So the ringer pokes until
 * that sleep is over or the word's value has moved on (then whoever moved
 * it wakes the vp, or its futex check fails), giving its hart away between
 * pokes (uready.c, wake_word_sleeper). Waiters treat a poke as the spurious
 * wake-up they already loop on. Pokes stay rare: while process control
 * keeps processes suspended, a folded vp's waiting thread parks and the vp
 * sleeps on its bell instead (its siblings' wakes ring it there), so only
 * a vp that went to sleep on a word before a suspension is poked.
 */
#ifndef SL_UTHREAD_IMPL_H
#define SL_UTHREAD_IMPL_H

#include "schedlab.h"
#include "threads/deque.h"
#include "threads/uthread.h"

/* Before any layout that depends on them: clang names the sanitizers only
   through __has_feature. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#include <setjmp.h> /* inline runs under TSan (uthread_run.c) */
#endif

#define STACK_BYTES      (SL_THREAD_STACK - 64)  /* + the allocator's 64-byte header = whole pages */

enum why { WHY_YIELD = 1, WHY_PARK, WHY_EXIT };

/* The low end of every stack block; the stack grows down towards it. */
struct stack {
    uint64_t canary[8];
    struct stack *next;            /* only while on a free list */
#if defined(__SANITIZE_THREAD__)
    void *tsan_fiber;              /* TSan's context for whatever runs on this stack */
#endif
};

struct sl_thread {
    void          *sp;             /* saved context while not running */
    struct stack  *stack;          /* NULL until it first runs */
    void         (*fn)(void *);
    void          *arg;
    struct run    *run;
    sl_thread_t   *next;           /* yield FIFO, inbox, wait bucket, semaphore queue, free list */
    uint8_t        why;            /* why it last went back to the scheduler */
    uint8_t        detached, is_main;
    uint8_t        inl;            /* runs on its joiner's stack (borrowed in `stack`; uthread_run.c) */
    int16_t        home;           /* pinned to this vp; -1: not pinned (stealable) */
    int32_t        worker;         /* sl_run_workers: the worker's id; -1 otherwise */
    int          (*park)(sl_thread_t *t);   /* WHY_PARK: register; 1 = ready again at once */
    void          *park_obj;
    uint32_t       park_old;
    struct sl_joincnt done;        /* joinable: signalled once, when finished */
    void          *unwind_sp;      /* inl: sl_uctx_call's frame (TSan: a jmp_buf), where sl_thread_exit returns to */
#if defined(__SANITIZE_ADDRESS__)
    void          *asan_fake;
#endif
};

/* One per process of the run, written by that process only (its deque's
   top and the fields on the last line excepted). */
struct vp {
    struct sl_deque dq;
    void          *sp;             /* the loop's context while a thread runs */
    sl_thread_t   *cur;            /* the running thread; NULL in the loop */
    struct run    *run;
    int            id;
    uint32_t       fails;          /* failed steals since a thread was last found */
    uint32_t       until_yield;    /* failed steals left before the next kernel yield */
    uint64_t       idle_since;     /* ticks: start of the current idle stretch */
    uint64_t       streak_t0;      /* ticks: a timed idle streak began (0: none open; uthread.c streak_*) */
    struct sl_rng  rng;
    sl_thread_t   *yq_head, *yq_tail;       /* yielded threads, FIFO */
    struct stack  *free_stacks;
    sl_thread_t   *free_threads;
    uint32_t       nfree_stacks, nfree_threads;
    struct sl_thread_stats st;
    uint64_t       exited;         /* threads finished on this vp */
    uint64_t       joinable, joined;   /* made by sl_thread_create here; joins done here */
#if defined(__SANITIZE_ADDRESS__)
    void          *asan_fake;
    const void    *stack_bottom;   /* the loop's stack, learnt from the first switch */
    size_t         stack_size;
#endif
#if defined(__SANITIZE_THREAD__)
    void          *tsan_fiber;
#endif
    sl_thread_t   *pq_head, *pq_tail;       /* pinned threads ready here, FIFO (owner only) */
    /* written by other processes too: its own line */
    sl_thread_t   *pin_inbox __attribute__((aligned(64)));   /* pinned here, made ready elsewhere */
    uint32_t       pin_load;       /* pinned here, created and not finished */
    uint32_t       suspended;      /* process control: 1 while suspended (set before its threads leave) */
    uint32_t       leaving;        /* process control: chosen to suspend, not yet published (procctl.c) */
    uint32_t       resume;         /* process control: futex word, set to 1 to resume this vp */
    uint32_t       bell;           /* futex word of its idle sleep: bumped by whoever gives it work */
    uint32_t       sleeping;       /* 1 while in (or about to enter) that sleep */
    /* its process sleeping on a wait word with its thread (the header; procctl.c): written by this vp */
    const uint32_t *sleep_word;    /* the word of the latest such sleep */
    uint32_t       sleep_val;      /* the value that sleep waits on while the word holds it */
    uint32_t       sleep_seq;      /* that sleep's number (published after word and value) */
    uint32_t       sleep_done;     /* the number of the latest sleep that is over (== sleep_seq: none open) */
    int32_t        hart;           /* hart it was on when it last looked (-1: not yet) */
} __attribute__((aligned(64)));

struct run {
    struct vp     *vps;
    int            nvps;
    int            pinned_only;    /* sl_run_workers: every thread is pinned; idle vps sleep at once */
    uint32_t       placed;         /* a thread was pinned to a process (thread_new): idle vps wait on partners */
    uint32_t       done __attribute__((aligned(64)));   /* the main thread has finished */
    uint32_t       nsleep;         /* vps sleeping on their bells (or about to) */
    /* process control: pc_lock guards susp and the writes of host; active is read without it */
    uint32_t       active __attribute__((aligned(64)));   /* vps not suspended */
    struct sl_spinlock pc_lock;
    int            nsusp;
    uint32_t       nleaving;       /* vps with `leaving` set (read without the lock) */
    int           *susp;           /* ids of suspended vps, in suspension order (nvps entries) */
    uint32_t      *host;           /* host[home]: the vp that runs home's pinned threads now */
    uint64_t       repartitioned;  /* ticks of the last allotment change this run saw (0: none) */
    sl_thread_t   *inbox __attribute__((aligned(64)));  /* made ready from outside the run */
};

/* A thread's descriptor, for fn(arg) in run r: every field a thread that
   has not started may be read for (the rest is written before it is read). */
static inline void
ut_thread_init(sl_thread_t *t, void (*fn)(void *), void *arg, struct run *r, int home, int detached)
{
    t->stack = 0;
    t->fn = fn;
    t->arg = arg;
    t->run = r;
    t->detached = (uint8_t)detached;
    t->is_main = 0;
    t->inl = 0;
    t->home = (int16_t)home;
    t->worker = -1;
}

/* The calling process's vp, or NULL outside a run; re-read after every
   switch (a thread may continue on another process). */
static inline struct vp *
self_vp(void)
{
    return sl_plat_proc()->sched;
}

static inline sl_thread_t *
self_thread(void)
{
    struct vp *s = self_vp();
    return s ? s->cur : 0;
}

/* Append t to the FIFO (*head, *tail) linked through t->next. */
static inline void
ut_fifo_push(sl_thread_t **head, sl_thread_t **tail, sl_thread_t *t)
{
    t->next = 0;
    if (*tail)
        (*tail)->next = t;
    else
        *head = t;
    *tail = t;
}

/* uready.c */
void sl_ut_ring(struct run *r, struct vp *h);            /* h has work: wake it if it sleeps */
void sl_ut_pq_append(struct vp *s, sl_thread_t *t);      /* owner: end of s's pinned FIFO */
void sl_ut_make_ready(sl_thread_t *t);                   /* t may run again (any caller) */
void sl_ut_make_ready_pinned(struct vp *s, sl_thread_t *t);   /* s: the caller's vp of t's run, or NULL */
void sl_ut_park(sl_thread_t *t, int (*fn)(sl_thread_t *), void *obj, uint32_t old);
void sl_ut_note_hart(struct vp *s);
void sl_ut_take_inbox_into(struct vp *s, sl_thread_t **inbox);   /* a pin inbox, oldest first, to s's FIFO */
sl_thread_t *sl_ut_thread_get(struct vp *s);             /* a descriptor to ut_thread_init (s may be NULL) */
void sl_ut_thread_put(struct vp *s, sl_thread_t *t);
void sl_ut_pushed(struct vp *s, int full);               /* sl_ut_push_local's rare ends */
void sl_ut_vp_loop(void *arg, int id);                   /* the loop of vp id of run arg (sl_run_procs' fn) */

/* rv_uctx.S / host_uctx_<arch>.S */
void sl_uctx_switch(void **save_sp, void *new_sp);
void *sl_uctx_init(void *top, void (*fn)(void *), void *arg);
void sl_uctx_call(void (*fn)(void *), void *arg, void **unwind_sp);
__attribute__((noreturn)) void sl_uctx_unwind(void *unwind_sp);

/* uthread_run.c */
void sl_ut_run(void (*main_fn)(void *), void *arg, int pinned_only);
/* How run r publishes its processes' idle streaks (uthread.c streak_begins): as episodes and waits (placed
   threads, not a job that adapts), as waits alone (stealing threads: time with no ready thread), or not (a
   worker run). Non-zero: its threads' own waits are not counted. */
enum { STREAK_NONE, STREAK_EPISODE, STREAK_IDLE };
int sl_ut_publishes_streaks(const struct run *r);

/* procctl.c */
void sl_pc_init(struct run *r);
void sl_pc_safe_point(struct vp *s);                     /* the scheduler loop's process control */
int  sl_pc_resume_one(struct run *r);
void sl_pc_finish(struct run *r);                        /* the run is done: resume everybody */
sl_thread_t *sl_pc_rescue(struct vp *s);                 /* pinned threads stranded on a suspended vp */
int  sl_pc_stranded(struct run *r);                      /* some suspended vp holds ready pinned threads */
int  sl_pc_leaver_stalled(struct run *r);                /* a vp chosen to suspend is off its hart */
void sl_pc_forward_inbox(struct run *r, struct vp *v);   /* v is suspended: its pin inbox to the hosts */
static inline uint32_t
sl_pc_host(struct run *r, int home)
{
    return __atomic_load_n(&r->host[home], __ATOMIC_ACQUIRE);
}

/* The per-process descriptor cache: at most THREAD_CACHE free
   descriptors on s->free_threads (nfree_threads of them), owner only.
   Its common cases are inline, as they lie on every spawn's and join's
   path; an empty cache (malloc), a full one (free) and a NULL s go
   through uthread.c. */
#define THREAD_CACHE 64

static inline sl_thread_t *
ut_thread_get(struct vp *s)
{
    sl_thread_t *t = s->free_threads;

    if (__builtin_expect(t == 0, 0))
        return sl_ut_thread_get(s);
    s->free_threads = t->next;
    s->nfree_threads--;
    return t;
}

static inline void
ut_thread_put(struct vp *s, sl_thread_t *t)
{
    if (__builtin_expect(!s || s->nfree_threads >= THREAD_CACHE, 0)) {
        sl_ut_thread_put(s, t);
        return;
    }
    t->next = s->free_threads;
    s->free_threads = t;
    s->nfree_threads++;
}

/* Owner: t to the bottom of s's deque. A full deque is fatal; sleeping
   vps are woken (the relaxed load of nsleep may miss a vp just going to
   sleep; in a stealing run that one sleeps at most SLEEP_US). */
static inline void
sl_ut_push_local(struct vp *s, sl_thread_t *t)
{
    int full = sl_deque_push_bottom(&s->dq, t) < 0;

    if (__builtin_expect(full || __atomic_load_n(&s->run->nsleep, __ATOMIC_RELAXED), 0))
        sl_ut_pushed(s, full);
}

#endif
