/*
 * uthread.c - user-level threads, the work-stealing scheduler, join
 * counters, semaphores and thread-aware word waits (the model is in
 * uthread.h; the deque in deque.h).
 *
 * Contexts. Each process's scheduler loop runs on the process's own stack
 * and keeps its context in sched.sp while a thread runs; a thread keeps
 * its context in thread.sp while it does not. Every switch is thread ->
 * its process's scheduler or scheduler -> thread, never thread -> thread,
 * so the thread that comes back to a scheduler is always the one it ran.
 * A thread that stops running records why (thread.why) and the scheduler
 * acts on it *after* the switch, on its own stack: only then is the
 * thread's context complete, so only then may it become visible to other
 * processes (pushed, queued as a waiter, or freed).
 *
 * Per-process state (struct sched) is reached through sl_plat_proc()->sched
 * and re-read after every switch, because the caller may now be on another
 * process. Only its owner writes a sched, except its deque's top (thieves).
 *
 * Waiting ("park"): a thread sets thread.park (a function) and parks; the
 * scheduler calls park(t) after the switch. park registers t where the
 * waker will find it and, atomically with that, checks whether the wait is
 * already over (then it returns 1 and t is ready at once). Whoever later
 * ends the wait calls make_ready(t), which pushes t on the caller's own
 * deque (a thread or scheduler of this run) or on the run's inbox.
 *
 * Pinned threads (sl_thread_spawn_on / sl_thread_create_on) never enter a
 * deque: making one ready appends it to its home process's FIFO (pq) when
 * the caller is that process, else pushes it on the home's pin inbox (a
 * CAS stack emptied whole by an exchange, like the run's inbox). So nobody
 * steals them and they resume on their home after every wait. pin_load
 * counts a process's pinned threads from creation to finish (placement's
 * measure of load). The one exception is process control: the pin inbox
 * of a suspended process is emptied by whoever is idle ("rescue"), so a
 * suspended home never holds a thread hostage.
 */
#include "schedlab.h"
#include "deque.h"
#include "uthread.h"

#ifndef SL_TARGET_KERNEL
#if !defined(__x86_64__)
#error "uthread: the host backend has a user-level context switch only for x86-64 (lib/host_uctx_x86_64.S); write lib/host_uctx_<arch>.S for this architecture and add it in lib/host.mk"
#endif
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

/* rv_uctx.S / host_uctx_<arch>.S */
void  sl_uctx_switch(void **save_sp, void *new_sp);
void *sl_uctx_init(void *top, void (*fn)(void *), void *arg);

#define STACK_BYTES      (SL_THREAD_STACK - 64)  /* + the allocator's 64-byte header = whole pages */
#define STACK_CACHE      8         /* free stacks a process keeps */
#define THREAD_CACHE     64        /* free descriptors a process keeps */
#define STEALS_PER_YIELD 32        /* failed steals between kernel yields */
#define YIELDER_PASSES   256       /* the same while the process runs yielded threads */
#define SLEEP_AFTER_US   2000      /* idle this long: sleep instead of yielding */
#define SLEEP_US         1000      /* longest sleep before looking again */
#define BACKOFF_MAX      64        /* relaxes between two failed steals, at most */
#define CANARY           0x5354434b43414e59ull   /* "STCKCANY" */
#define NBUCKETS         64        /* wait_ne buckets */

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
    struct pool   *pool;
    sl_thread_t   *next;           /* yield FIFO, inbox, wait bucket, semaphore queue, free list */
    uint8_t        why;            /* why it last went back to the scheduler */
    uint8_t        detached, is_main;
    int16_t        home;           /* pinned to this process; -1: not pinned (stealable) */
    int          (*park)(sl_thread_t *t);   /* WHY_PARK: register; 1 = ready again at once */
    void          *park_obj;
    uint32_t       park_old;
    struct sl_joincnt done;        /* joinable: signalled once, when finished */
#if defined(__SANITIZE_ADDRESS__)
    void          *asan_fake;
#endif
};

/* One per process of the run, written by that process only (its deque's
   top excepted). */
struct sched {
    struct sl_deque dq;
    void          *sp;             /* the loop's context while a thread runs */
    sl_thread_t   *cur;            /* the running thread; NULL in the loop */
    struct pool   *pool;
    int            id;
    uint32_t       fails;          /* failed steals since a thread was last found */
    uint32_t       until_yield;    /* failed steals left before the next kernel yield */
    uint64_t       idle_since;     /* ticks: start of the current idle stretch */
    struct sl_rng  rng;
    sl_thread_t   *yq_head, *yq_tail;       /* yielded threads, FIFO */
    struct stack  *free_stacks;
    sl_thread_t   *free_threads;
    uint32_t       nfree_stacks, nfree_threads;
    struct sl_thread_stats st;
    uint64_t       exited;         /* threads finished on this process */
    uint32_t       resume;         /* process control: futex word, set to 1 to resume this process */
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
    uint32_t       suspended;      /* process control: 1 while suspended (its pin inbox may be rescued) */
    int32_t        hart;           /* hart it was on when it last looked (-1: not yet) */
} __attribute__((aligned(64)));

struct pool {
    struct sched  *procs;
    int            nprocs;
    uint32_t       done __attribute__((aligned(64)));   /* the main thread has finished */
    uint32_t       wake;           /* futex word of sleeping processes: bumped to wake them */
    uint32_t       nsleep;         /* processes sleeping (or about to) */
    /* process control: pc_lock guards the suspended stack; active is read without it */
    uint32_t       active __attribute__((aligned(64)));   /* processes not suspended */
    struct sl_spinlock pc_lock;
    int            nsusp;
    int           *susp;           /* ids of suspended processes (nprocs entries) */
    sl_thread_t   *inbox __attribute__((aligned(64)));  /* made ready from outside the run */
};

struct bucket {
    struct sl_spinlock lock;
    uint32_t       nwait;          /* threads in the list; changed under the lock, read without it */
    sl_thread_t   *head;
} __attribute__((aligned(64)));

void (*sl_safe_point_hook)(void);
static struct bucket buckets[NBUCKETS];
static struct sl_thread_stats last_stats;

static struct sched *
self_sched(void)
{
    return sl_plat_proc()->sched;
}

static sl_thread_t *
self_thread(void)
{
    struct sched *s = self_sched();
    return s ? s->cur : 0;
}

__attribute__((noreturn, format(printf, 1, 2))) static void
fatal(const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    sl_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sl_printf("ERROR %s: threads: %s\n", (const char *)sl_info()->app, msg);
    sl_report(0, "error=threads");
    /* sl_die would end only this process and leave the others waiting for
       the run to finish; a fault ends the whole job. */
    __builtin_trap();
}

/* ---- sanitizer annotations (host only; no-ops elsewhere) ----
   ASan and TSan must be told when the stack changes under them. */

static void
san_to_thread(struct sched *s, sl_thread_t *t)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(&s->asan_fake, t->stack, STACK_BYTES);
#endif
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(t->stack->tsan_fiber, 0);
#endif
    (void)s;
    (void)t;
}

static void
san_back_in_sched(struct sched *s)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(s->asan_fake, 0, 0);
#endif
    (void)s;
}

static void
san_to_sched(struct sched *s, sl_thread_t *t, int exiting)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(exiting ? 0 : &t->asan_fake, s->stack_bottom, s->stack_size);
#endif
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(s->tsan_fiber, 0);
#endif
    (void)s;
    (void)t;
    (void)exiting;
}

/* In a thread, just switched in (fresh = its first time). */
static void
san_back_in_thread(sl_thread_t *t, int fresh)
{
#if defined(__SANITIZE_ADDRESS__)
    struct sched *s = self_sched();
    __sanitizer_finish_switch_fiber(fresh ? 0 : t->asan_fake, &s->stack_bottom, &s->stack_size);
#endif
    (void)t;
    (void)fresh;
}

/* ---- stacks and descriptors: per-process free lists ---- */

static void
stack_free(struct stack *k)
{
#if defined(__SANITIZE_THREAD__)
    __tsan_destroy_fiber(k->tsan_fiber);
#endif
    sl_free(k);
}

static struct stack *
stack_get(struct sched *s)
{
    struct stack *k = s->free_stacks;

    if (k) {
        s->free_stacks = k->next;
        s->nfree_stacks--;
    } else {
        k = sl_alloc_node(STACK_BYTES, -1);
        if (!k)
            fatal("out of memory for a thread stack (%u bytes)", (unsigned)STACK_BYTES);
        for (int i = 0; i < 8; i++)
            k->canary[i] = CANARY ^ (uint64_t)i;
#if defined(__SANITIZE_THREAD__)
        k->tsan_fiber = __tsan_create_fiber(0);   /* one per stack: creating one is slow */
#endif
        s->st.stacks++;
    }
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(k, STACK_BYTES);   /* frames of its last user never returned */
#endif
    return k;
}

static void
stack_put(struct sched *s, struct stack *k)
{
    for (int i = 0; i < 8; i++)
        if (k->canary[i] != (CANARY ^ (uint64_t)i))
            fatal("thread stack overflow: a thread used more than its %u-byte stack", (unsigned)STACK_BYTES);
    if (s->nfree_stacks < STACK_CACHE) {
        k->next = s->free_stacks;
        s->free_stacks = k;
        s->nfree_stacks++;
    } else {
        stack_free(k);
    }
}

static sl_thread_t *
thread_get(struct sched *s)
{
    sl_thread_t *t = s ? s->free_threads : 0;

    if (t) {
        s->free_threads = t->next;
        s->nfree_threads--;
    } else if (!(t = sl_malloc(sizeof *t))) {
        fatal("out of memory for a thread descriptor");
    }
    memset(t, 0, sizeof *t);
    return t;
}

static void
thread_put(struct sched *s, sl_thread_t *t)
{
    if (s && s->nfree_threads < THREAD_CACHE) {
        t->next = s->free_threads;
        s->free_threads = t;
        s->nfree_threads++;
    } else {
        sl_free(t);
    }
}

/* ---- making threads ready ---- */

static void
wake_sleeper(struct pool *p, uint32_t n)
{
    __atomic_add_fetch(&p->wake, 1, __ATOMIC_RELEASE);
    sl_futex_wake(&p->wake, n);
}

/* Owner push. The relaxed load of nsleep may miss a process that is just
   going to sleep; that one sleeps at most SLEEP_US (see uthread.h). */
static void
push_local(struct sched *s, sl_thread_t *t)
{
    if (sl_deque_push_bottom(&s->dq, t) < 0)
        fatal("process %d has more than %d ready threads (SL_THREAD_READY_MAX, deque.h)",
              s->id, SL_THREAD_READY_MAX);
    if (__atomic_load_n(&s->pool->nsleep, __ATOMIC_RELAXED))
        wake_sleeper(s->pool, 1);
}

/* Append t to the owner's FIFO of pinned ready threads. */
static void
pq_append(struct sched *s, sl_thread_t *t)
{
    t->next = 0;
    if (s->pq_tail)
        s->pq_tail->next = t;
    else
        s->pq_head = t;
    s->pq_tail = t;
}

/* A pinned thread is ready: to its home's FIFO if we are the home, else
   to the home's pin inbox (and wake the sleepers: we cannot wake the home
   alone, it sleeps on the pool's word like everyone). */
static void
make_ready_pinned(struct sched *s, sl_thread_t *t)
{
    struct pool *p = t->pool;
    struct sched *h = &p->procs[t->home];

    if (s == h) {
        pq_append(s, t);
        return;
    }
    t->next = __atomic_load_n(&h->pin_inbox, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&h->pin_inbox, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    if (__atomic_load_n(&p->nsleep, __ATOMIC_SEQ_CST))
        wake_sleeper(p, SL_WAKE_ALL);
}

/* Ready again on the scheduler side of process s (after a park). */
static void
ready_here(struct sched *s, sl_thread_t *t)
{
    if (t->home >= 0)
        make_ready_pinned(s, t);
    else
        push_local(s, t);
}

static void
make_ready(sl_thread_t *t)
{
    struct sched *s = self_sched();
    struct pool *p = t->pool;

    if (t->home >= 0) {
        make_ready_pinned(s && s->pool == p ? s : 0, t);
        return;
    }
    if (s && s->pool == p) {
        push_local(s, t);
        return;
    }
    /* Not a process of this run (or between runs): the inbox, a stack
       pushed with CAS and emptied whole with an exchange (so no ABA). */
    t->next = __atomic_load_n(&p->inbox, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&p->inbox, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    wake_sleeper(p, 1);
}

/* ---- the thread side of a switch ---- */

static void
to_sched(sl_thread_t *t, int why)
{
    struct sched *s = self_sched();

    t->why = (uint8_t)why;
    san_to_sched(s, t, why == WHY_EXIT);
    sl_uctx_switch(&t->sp, s->sp);
    san_back_in_thread(t, 0);             /* possibly on another process now */
}

static void
thread_main(void *p)
{
    sl_thread_t *t = p;

    san_back_in_thread(t, 1);
    t->fn(t->arg);
    sl_thread_exit();
}

void
sl_thread_exit(void)
{
    sl_thread_t *t = self_thread();

    if (!t)
        fatal("sl_thread_exit called outside a thread");
    to_sched(t, WHY_EXIT);
    __builtin_unreachable();
}

void
sl_thread_yield(void)
{
    sl_thread_t *t = self_thread();

    if (!t)
        sl_yield();
    else
        to_sched(t, WHY_YIELD);
}

/* ---- the scheduler side ---- */

static void finish_run(struct pool *p);

/* t has switched back for good: release its stack, then tell its joiner.
   After the signal t may already be freed by the joiner: touch it no more. */
static void
reap(struct sched *s, sl_thread_t *t)
{
    stack_put(s, t->stack);
    t->stack = 0;
    s->exited++;
    if (t->home >= 0)
        __atomic_sub_fetch(&s->pool->procs[t->home].pin_load, 1, __ATOMIC_RELAXED);
    if (t->is_main)
        finish_run(s->pool);
    if (t->detached)
        thread_put(s, t);
    else
        sl_joincnt_signal(&t->done);
}

static void
run(struct sched *s, sl_thread_t *t)
{
    if (!t->stack) {
        t->stack = stack_get(s);
        t->sp = sl_uctx_init((char *)t->stack + STACK_BYTES, thread_main, t);
    }
    s->cur = t;
    san_to_thread(s, t);
    sl_uctx_switch(&s->sp, t->sp);
    san_back_in_sched(s);
    s->cur = 0;
    switch (t->why) {
    case WHY_YIELD:
        t->next = 0;
        if (s->yq_tail)
            s->yq_tail->next = t;
        else
            s->yq_head = t;
        s->yq_tail = t;
        break;
    case WHY_PARK:
        if (t->park(t))
            ready_here(s, t);
        break;
    case WHY_EXIT:
        reap(s, t);
        break;
    default:
        fatal("thread %p switched back without a reason", (void *)t);
    }
}

static sl_thread_t *
take_inbox(struct sched *s)
{
    sl_thread_t *t = __atomic_exchange_n(&s->pool->inbox, 0, __ATOMIC_ACQUIRE);

    if (t)
        for (sl_thread_t *u = t->next; u; ) {
            sl_thread_t *n = u->next;
            push_local(s, u);
            u = n;
        }
    return t;
}

/* Move a pin inbox (a LIFO stack) to the end of s's FIFO, oldest first. */
static void
pq_append_inbox(struct sched *s, sl_thread_t **inbox)
{
    sl_thread_t *t = __atomic_exchange_n(inbox, 0, __ATOMIC_ACQUIRE), *rev = 0;

    while (t) {
        sl_thread_t *n = t->next;
        t->next = rev;
        rev = t;
        t = n;
    }
    while (rev) {
        sl_thread_t *n = rev->next;
        pq_append(s, rev);
        rev = n;
    }
}

/* The oldest pinned thread ready on s. */
static sl_thread_t *
take_pinned(struct sched *s)
{
    sl_thread_t *t;

    if (!s->pq_head && __atomic_load_n(&s->pin_inbox, __ATOMIC_RELAXED))
        pq_append_inbox(s, &s->pin_inbox);
    if ((t = s->pq_head) != 0) {
        s->pq_head = t->next;
        if (!s->pq_head)
            s->pq_tail = 0;
    }
    return t;
}

/* Process control suspended a process whose pinned threads became ready
   afterwards: run them here (they stay pinned to it: a later wait sends
   them back to its inbox). */
static sl_thread_t *
rescue(struct sched *s)
{
    struct pool *p = s->pool;

    if (!__atomic_load_n(&p->nsusp, __ATOMIC_RELAXED))
        return 0;
    for (int i = 0; i < p->nprocs; i++) {
        struct sched *v = &p->procs[i];
        if (v != s && __atomic_load_n(&v->suspended, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&v->pin_inbox, __ATOMIC_RELAXED)) {
            pq_append_inbox(s, &v->pin_inbox);
            return take_pinned(s);
        }
    }
    return 0;
}

/* One steal attempt at a victim chosen uniformly among the others. */
static sl_thread_t *
steal(struct sched *s)
{
    struct pool *p = s->pool;
    void *item;
    int v;

    if (p->nprocs < 2)
        return 0;
    v = (int)sl_rng_below(&s->rng, (uint64_t)p->nprocs - 1);
    if (v >= s->id)
        v++;
    if (sl_deque_pop_top(&p->procs[v].dq, &item) == SL_STEAL_OK) {
        s->st.steals++;
        return item;
    }
    s->st.steal_fails++;
    return 0;
}

static int
work_visible(struct sched *s)
{
    struct pool *p = s->pool;

    if (__atomic_load_n(&p->inbox, __ATOMIC_ACQUIRE) || s->pq_head ||
        __atomic_load_n(&s->pin_inbox, __ATOMIC_ACQUIRE))
        return 1;
    for (int i = 0; i < p->nprocs; i++) {
        struct sched *v = &p->procs[i];
        if (sl_deque_size(&v->dq))
            return 1;
        if (__atomic_load_n(&v->suspended, __ATOMIC_ACQUIRE) && __atomic_load_n(&v->pin_inbox, __ATOMIC_ACQUIRE))
            return 1;
    }
    return 0;
}

/* Idle for long: sleep until a push wakes us, the run ends, or SLEEP_US. */
static void
idle_sleep(struct sched *s)
{
    struct pool *p = s->pool;
    uint32_t w = __atomic_load_n(&p->wake, __ATOMIC_ACQUIRE);

    __atomic_add_fetch(&p->nsleep, 1, __ATOMIC_SEQ_CST);
    if (!work_visible(s) && !__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
        sl_futex_wait(&p->wake, w, SLEEP_US);
        s->st.sleeps++;
    }
    __atomic_sub_fetch(&p->nsleep, 1, __ATOMIC_RELAXED);
}

/* Where this process runs (for placement): one system call, only at the
   start of the run and after the kernel yields of idle passes. */
static void
note_hart(struct sched *s)
{
    __atomic_store_n(&s->hart, (int32_t)sl_hart(), __ATOMIC_RELAXED);
}

/* Every STEALS_PER_YIELD failed steals: give the hart away (Hood's yield),
   or sleep once the process has found nothing for SLEEP_AFTER_US and holds
   no yielded threads. A process that holds yielded threads is not idle (it
   runs them between steal attempts, and such a pass is much cheaper than a
   kernel yield), so it yields only every YIELDER_PASSES failed steals. */
static void
pause_process(struct sched *s)
{
    s->until_yield = s->yq_head ? YIELDER_PASSES : STEALS_PER_YIELD;
    if (!s->yq_head && sl_ticks_to_us(sl_plat_ticks() - s->idle_since) >= SLEEP_AFTER_US) {
        idle_sleep(s);
        return;
    }
    s->st.yields++;
    sl_yield();
    note_hart(s);                         /* a policy may have moved us meanwhile */
}

/* Between failed steals: a pause that doubles up to BACKOFF_MAX relaxes,
   so idle thieves do not keep the victims' deque lines bouncing between
   caches while there is nothing to take. */
static void
backoff(uint32_t fails)
{
    uint32_t n = fails < 6 ? 1u << fails : BACKOFF_MAX;

    while (n--)
        sl_cpu_relax();
}

static void process_control(struct sched *s);

static void
sched_loop(void *arg, int id)
{
    struct pool *p = arg;
    struct sched *s = &p->procs[id];

    sl_plat_proc()->sched = s;
    note_hart(s);
#if defined(__SANITIZE_THREAD__)
    s->tsan_fiber = __tsan_get_current_fiber();
#endif
    while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
        sl_thread_t *t;

        sl_safe_point();
        process_control(s);
        if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
            break;
        t = sl_deque_pop_bottom(&s->dq);
        if (!t)
            t = take_pinned(s);
        if (!t && __atomic_load_n(&p->inbox, __ATOMIC_RELAXED))
            t = take_inbox(s);
        if (!t)
            t = steal(s);
        if (!t)
            t = rescue(s);
        if (t) {
            s->fails = 0;
            run(s, t);
            continue;
        }
        if (p->nprocs > 1 && ++s->fails == 1) {
            s->idle_since = sl_plat_ticks();
            s->until_yield = STEALS_PER_YIELD;
        }
        if (p->nprocs > 1 && --s->until_yield == 0)
            pause_process(s);
        if (s->yq_head) {
            t = s->yq_head;
            s->yq_head = t->next;
            if (!s->yq_head)
                s->yq_tail = 0;
            run(s, t);
        } else if (p->nprocs == 1) {
            fatal("deadlock: every thread is waiting and the job's only process has none to run");
        } else {
            backoff(s->fails);
        }
    }
    while (s->free_stacks) {
        struct stack *k = s->free_stacks;
        s->free_stacks = k->next;
        stack_free(k);
    }
    while (s->free_threads) {
        sl_thread_t *t = s->free_threads;
        s->free_threads = t->next;
        sl_free(t);
    }
    s->nfree_stacks = s->nfree_threads = 0;
    sl_plat_proc()->sched = 0;
}

/* ---- process control (see uthread.h) ---- */

/* Resume the most recently suspended process, if any; 1 if one was. */
static int
resume_one(struct pool *p)
{
    int id = -1;

    sl_spin_lock(&p->pc_lock);
    if (p->nsusp > 0) {
        id = p->susp[--p->nsusp];
        __atomic_add_fetch(&p->active, 1, __ATOMIC_RELAXED);
    }
    sl_spin_unlock(&p->pc_lock);
    if (id < 0)
        return 0;
    __atomic_store_n(&p->procs[id].resume, 1, __ATOMIC_RELEASE);
    sl_futex_wake(&p->procs[id].resume, 1);
    return 1;
}

static void
suspend_self(struct sched *s)
{
    struct pool *p = s->pool;

    __atomic_store_n(&s->resume, 0, __ATOMIC_RELAXED);
    sl_spin_lock(&p->pc_lock);
    /* finish_run sets done, then resumes whoever is on the stack, taking
       this lock each time: a process that registers after the last of
       those would never be resumed - but it sees done here, so it doesn't */
    if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&p->active, 1, __ATOMIC_RELAXED);    /* undo our decrement */
        sl_spin_unlock(&p->pc_lock);
        return;
    }
    p->susp[p->nsusp++] = s->id;
    __atomic_store_n(&s->suspended, 1, __ATOMIC_RELEASE);
    sl_spin_unlock(&p->pc_lock);
    s->st.suspends++;
    /* a pinned thread made ready in the meantime is rescued by the others */
    if (__atomic_load_n(&s->pin_inbox, __ATOMIC_ACQUIRE) && __atomic_load_n(&p->nsleep, __ATOMIC_SEQ_CST))
        wake_sleeper(p, SL_WAKE_ALL);
    /* finish_run resumes everyone: done is set before the wake-ups */
    while (!__atomic_load_n(&s->resume, __ATOMIC_ACQUIRE))
        sl_futex_wait(&s->resume, 0, 0);
    __atomic_store_n(&s->suspended, 0, __ATOMIC_RELEASE);
    note_hart(s);
}

static void
process_control(struct sched *s)
{
    struct pool *p = s->pool;
    volatile struct sl_info *in = sl_info();
    uint32_t allot, active;

    if (!(in->flags & SL_INFO_ADAPTIVE) || p->nprocs == 1)
        return;
    allot = __atomic_load_n(&in->allot_count, __ATOMIC_RELAXED);
    active = __atomic_load_n(&p->active, __ATOMIC_RELAXED);
    if (active > allot && allot >= 1 && !s->yq_head && !s->pq_head &&
        !__atomic_load_n(&s->pin_inbox, __ATOMIC_RELAXED)) {
        /* one suspension per excess process: the CAS picks who */
        if (__atomic_compare_exchange_n(&p->active, &active, active - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            suspend_self(s);
    } else if (active < allot && __atomic_load_n(&p->nsusp, __ATOMIC_RELAXED) > 0) {
        s->st.resumes += resume_one(p);
    }
}

static void
finish_run(struct pool *p)
{
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
    wake_sleeper(p, SL_WAKE_ALL);
    while (resume_one(p))
        ;
}

void
sl_safe_point(void)
{
    void (*h)(void) = __atomic_load_n(&sl_safe_point_hook, __ATOMIC_RELAXED);

    if (h)
        h();
}

void
sl_threads_run(void (*main_fn)(void *), void *arg)
{
    int n = sl_nprocs();
    size_t slots = SL_DEQUE_BYTES(SL_THREAD_READY_MAX);
    size_t bytes = sizeof(struct pool) + (size_t)n * (sizeof(struct sched) + slots) + 64
                   + (size_t)n * sizeof(int) + 16;
    char *mem;
    struct pool *p;
    sl_thread_t *t;
    uint64_t threads = 1, exited = 0, joinable = 0, joined = 0;

    if (sl_self() != 0)
        sl_die("sl_threads_run called from process %d (only process 0 may)", sl_self());
    if (self_sched())
        sl_die("sl_threads_run called inside a thread program (runs do not nest)");
    if (!(mem = sl_alloc_node(bytes, -1)))
        sl_die("out of memory for the thread scheduler of %d processes", n);
    memset(mem, 0, bytes);
    /* line-aligned pieces: the scheds first, then the pool, then slots */
    p = (struct pool *)(mem + (size_t)n * sizeof(struct sched));
    p->procs = (struct sched *)mem;
    p->nprocs = n;
    p->active = (uint32_t)n;
    p->susp = (int *)(((uintptr_t)mem + (size_t)n * (sizeof(struct sched) + slots) + sizeof(struct pool) + 64 + 15)
                      & ~(uintptr_t)15);
    for (int i = 0; i < n; i++) {
        struct sched *s = &p->procs[i];
        char *sl = mem + (size_t)n * sizeof(struct sched) + sizeof(struct pool) + (size_t)i * slots;
        sl_deque_init(&s->dq, (void *)(((uintptr_t)sl + 7) & ~(uintptr_t)7), SL_THREAD_READY_MAX);
        s->pool = p;
        s->id = i;
        s->hart = -1;
        sl_rng_init(&s->rng, 0x5eed0000u + (uint64_t)i);
    }

    t = thread_get(0);
    t->fn = main_fn;
    t->arg = arg;
    t->pool = p;
    t->detached = 1;
    t->is_main = 1;
    t->home = -1;
    if (sl_deque_push_bottom(&p->procs[0].dq, t) < 0)
        sl_die("cannot queue the main thread");

    sl_run_procs(sched_loop, p);

    memset(&last_stats, 0, sizeof last_stats);
    for (int i = 0; i < n; i++) {
        struct sl_thread_stats *st = &p->procs[i].st;
        threads += st->threads;
        exited += p->procs[i].exited;
        joinable += p->procs[i].joinable;
        joined += p->procs[i].joined;
        last_stats.steals += st->steals;
        last_stats.steal_fails += st->steal_fails;
        last_stats.yields += st->yields;
        last_stats.sleeps += st->sleeps;
        last_stats.stacks += st->stacks;
        last_stats.suspends += st->suspends;
        last_stats.resumes += st->resumes;
    }
    last_stats.threads = threads;
    if (exited != threads)
        fatal("%lu of %lu threads had not finished when the main thread returned (join them, or wait "
              "for them with a join counter)", (unsigned long)(threads - exited), (unsigned long)threads);
    if (joined != joinable)
        fatal("%lu of %lu threads made by sl_thread_create were never joined (join each exactly once)",
              (unsigned long)(joinable - joined), (unsigned long)joinable);
    sl_free(mem);
}

void
sl_threads_stats(struct sl_thread_stats *out)
{
    *out = last_stats;
}

/* ---- threads ---- */

static sl_thread_t *
thread_new(void (*fn)(void *), void *arg, int detached, int home)
{
    struct sched *s = self_sched();
    sl_thread_t *t;

    if (!s || !s->cur)
        fatal("threads can only be created by threads (start with sl_threads_run)");
    if (home >= s->pool->nprocs)
        fatal("a thread pinned to process %d, but the job has processes 0..%d", home, s->pool->nprocs - 1);
    t = thread_get(s);
    t->fn = fn;
    t->arg = arg;
    t->pool = s->pool;
    t->detached = (uint8_t)detached;
    t->home = (int16_t)home;
    if (!detached) {
        sl_joincnt_init(&t->done, 1);
        s->joinable++;
    }
    s->st.threads++;
    if (home >= 0) {
        __atomic_add_fetch(&s->pool->procs[home].pin_load, 1, __ATOMIC_RELAXED);
        make_ready_pinned(s, t);
    } else {
        push_local(s, t);
    }
    return t;
}

sl_thread_t *
sl_thread_create(void (*fn)(void *), void *arg)
{
    return thread_new(fn, arg, 0, -1);
}

void
sl_thread_spawn(void (*fn)(void *), void *arg)
{
    thread_new(fn, arg, 1, -1);
}

sl_thread_t *
sl_thread_create_on(int proc, void (*fn)(void *), void *arg)
{
    if (proc < 0)
        fatal("a thread pinned to process %d (processes are numbered from 0)", proc);
    return thread_new(fn, arg, 0, proc);
}

void
sl_thread_spawn_on(int proc, void (*fn)(void *), void *arg)
{
    if (proc < 0)
        fatal("a thread pinned to process %d (processes are numbered from 0)", proc);
    thread_new(fn, arg, 1, proc);
}

/* The pool of the run the caller belongs to, or 0 outside a run. */
static struct pool *
self_pool(void)
{
    struct sched *s = self_sched();
    return s ? s->pool : 0;
}

uint32_t
sl_thread_load(int proc)
{
    struct pool *p = self_pool();

    if (!p || proc < 0 || proc >= p->nprocs)
        return 0;
    return __atomic_load_n(&p->procs[proc].pin_load, __ATOMIC_RELAXED) + sl_deque_size(&p->procs[proc].dq);
}

int
sl_thread_proc_hart(int proc)
{
    struct pool *p = self_pool();

    if (!p || proc < 0 || proc >= p->nprocs)
        return -1;
    return __atomic_load_n(&p->procs[proc].hart, __ATOMIC_RELAXED);
}

void
sl_thread_join(sl_thread_t *t)
{
    struct sched *s;

    sl_joincnt_wait(&t->done);
    s = self_sched();                 /* the process we are on now */
    if (s)
        s->joined++;
    thread_put(s, t);
}

sl_thread_t *
sl_thread_self(void)
{
    return self_thread();
}

int
sl_in_thread(void)
{
    return self_thread() != 0;
}

/* Park the calling thread t with park function fn. */
static void
park(sl_thread_t *t, int (*fn)(sl_thread_t *), void *obj, uint32_t old)
{
    t->park = fn;
    t->park_obj = obj;
    t->park_old = old;
    to_sched(t, WHY_PARK);
}

/* Polling wait for callers that are not threads. */
static void
poll_pause(unsigned *spins)
{
    if (++*spins % SL_SPIN_BEFORE_YIELD == 0)
        sl_yield();
    else
        sl_cpu_relax();
}

/* ---- join counters ----
   count = signals missing + 1: the waiter's hold. A signaler that does not
   bring count to 0 never touches the counter again. The waiter gives up its
   hold only after writing `waiter`, so the decrement that reaches 0 - the
   last signal, or the waiter's own if every signal came first - is ordered
   after that write (acq_rel RMWs on one word) and knows whom to wake. */

void
sl_joincnt_init(struct sl_joincnt *jc, uint32_t n)
{
    jc->waiter = 0;
    __atomic_store_n(&jc->count, n + 1, __ATOMIC_RELEASE);
}

void
sl_joincnt_signal(struct sl_joincnt *jc)
{
    if (__atomic_sub_fetch(&jc->count, 1, __ATOMIC_ACQ_REL) == 0) {
        sl_thread_t *w = jc->waiter;
        if (!w)
            fatal("join counter %p signalled more often than its count", (void *)jc);
        make_ready(w);
    }
}

static int
park_joincnt(sl_thread_t *t)
{
    struct sl_joincnt *jc = t->park_obj;

    jc->waiter = t;
    return __atomic_sub_fetch(&jc->count, 1, __ATOMIC_ACQ_REL) == 0;
}

void
sl_joincnt_wait(struct sl_joincnt *jc)
{
    sl_thread_t *t;
    unsigned spins = 0;

    if (__atomic_load_n(&jc->count, __ATOMIC_ACQUIRE) == 1)
        return;                          /* all signals are in and done with jc */
    if ((t = self_thread()) != 0) {
        park(t, park_joincnt, jc, 0);    /* back when count reached 0 */
        return;
    }
    while (__atomic_load_n(&jc->count, __ATOMIC_ACQUIRE) != 1)
        poll_pause(&spins);
}

/* ---- semaphores ---- */

void
sl_sem_init(struct sl_sem *s, uint32_t count)
{
    s->lock.locked = 0;
    s->count = (int32_t)count;
    s->head = s->tail = 0;
}

static int
sem_trydown(struct sl_sem *s)
{
    int ok = 0;

    sl_spin_lock(&s->lock);
    if (s->count > 0) {
        s->count--;
        ok = 1;
    }
    sl_spin_unlock(&s->lock);
    return ok;
}

static int
park_sem(sl_thread_t *t)
{
    struct sl_sem *s = t->park_obj;

    sl_spin_lock(&s->lock);
    if (s->count > 0) {                  /* a V came in between */
        s->count--;
        sl_spin_unlock(&s->lock);
        return 1;
    }
    t->next = 0;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    sl_spin_unlock(&s->lock);
    return 0;
}

void
sl_sem_p(struct sl_sem *s)
{
    sl_thread_t *t;
    unsigned spins = 0;

    if (sem_trydown(s))
        return;
    if ((t = self_thread()) != 0) {
        park(t, park_sem, s, 0);         /* back with a unit handed over by V */
        return;
    }
    while (!sem_trydown(s))
        poll_pause(&spins);
}

void
sl_sem_v(struct sl_sem *s)
{
    sl_thread_t *w;

    sl_spin_lock(&s->lock);
    if ((w = s->head) != 0) {
        s->head = w->next;
        if (!s->head)
            s->tail = 0;
    } else {
        s->count++;
    }
    sl_spin_unlock(&s->lock);
    if (w)
        make_ready(w);
}

/* ---- thread-aware word waits ----
   A waiter enters its word's bucket (an RMW on the bucket's count, under
   the bucket lock), then re-reads the word; a waker changes the word, then
   reads the count with an RMW too (+0). RMWs of one word are totally
   ordered: if the waiter's comes first, the waker sees a waiter and takes
   the lock, which the waiter holds until it has decided, so it finds the
   waiter there unless the waiter saw the change and left by itself; if the
   waker's comes first, the waiter's RMW reads it and acquires it, so the
   waiter's re-read sees the new word. (Fences between a plain store and
   load would do the same, but TSan does not understand fences.) */

static struct bucket *
bucket_of(const uint32_t *word)
{
    return &buckets[sl_mix64((uint64_t)(uintptr_t)word) % NBUCKETS];
}

static int
park_word(sl_thread_t *t)
{
    const uint32_t *word = t->park_obj;
    struct bucket *b = bucket_of(word);
    int changed;

    sl_spin_lock(&b->lock);
    t->next = b->head;
    b->head = t;
    __atomic_add_fetch(&b->nwait, 1, __ATOMIC_ACQ_REL);
    changed = __atomic_load_n(word, __ATOMIC_ACQUIRE) != t->park_old;
    if (changed) {
        b->head = t->next;               /* still first: we hold the lock */
        __atomic_sub_fetch(&b->nwait, 1, __ATOMIC_RELAXED);
    }
    sl_spin_unlock(&b->lock);
    return changed;
}

void
sl_thread_wait_ne(const uint32_t *word, uint32_t old)
{
    sl_thread_t *t = self_thread();
    unsigned spins = 0;

    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == old) {
        if (t)
            park(t, park_word, (void *)(uintptr_t)word, old);
        else
            poll_pause(&spins);
    }
}

void
sl_thread_wake(const uint32_t *word)
{
    struct bucket *b = bucket_of(word);
    sl_thread_t *woken = 0, **pp, *t;
    uint32_t n = 0;

    if (__atomic_fetch_add(&b->nwait, 0, __ATOMIC_ACQ_REL) == 0)
        return;
    sl_spin_lock(&b->lock);
    for (pp = &b->head; (t = *pp) != 0; ) {
        if (t->park_obj == (const void *)word) {
            *pp = t->next;
            t->next = woken;
            woken = t;
            n++;
        } else {
            pp = &t->next;
        }
    }
    __atomic_sub_fetch(&b->nwait, n, __ATOMIC_RELAXED);
    sl_spin_unlock(&b->lock);
    while (woken) {
        t = woken;
        woken = t->next;
        make_ready(t);
    }
}
