/*
 * uthread.c - user-level threads: the context switch, stacks, making
 * threads ready, the per-process scheduler loop with stealing and idling,
 * runs, and the thread API. The model is in uthread.h; the private types
 * in uthread_impl.h; runs and the thread API in uthread_run.c; making
 * threads ready (deques, pin inboxes, bells) in uready.c; process
 * control in procctl.c; join counters, semaphores and word waits in
 * usync.c; worker runs in workers.c.
 *
 * Contexts. Each vp's scheduler loop runs on the process's own stack and
 * keeps its context in vp.sp while a thread runs; a thread keeps its
 * context in thread.sp while it does not. Every switch is thread -> its
 * vp's loop or loop -> thread, never thread -> thread, so the thread that
 * comes back to a loop is always the one it ran - or one that thread ran on
 * its own stack with a plain call and that stopped in turn (an inline run,
 * uthread_run.c): the loop reads which from vp.cur. A thread that stops
 * running records why (thread.why) and the loop acts on it *after* the
 * switch, on its own stack: only then is the thread's context complete, so
 * only then may it become visible to other processes (pushed, queued as a
 * waiter, sent to another vp, or freed).
 *
 * Waiting ("park"): a thread sets thread.park (a function) and parks; the
 * loop calls park(t) after the switch. park registers t where the waker
 * will find it and, atomically with that, checks whether the wait is
 * already over (then it returns 1 and t is ready at once). Whoever later
 * ends the wait calls sl_ut_make_ready(t): an unpinned thread goes on the
 * caller's own deque (a thread or loop of this run) or on the run's inbox;
 * a pinned one to its host (uthread_impl.h, "Homes and hosts").
 */
#include "schedlab.h"
#include "threads/uthread_impl.h"
#include "base/eventlog.h"
#include "base/syncstat.h"

#ifndef SL_TARGET_KERNEL
#if !defined(__x86_64__)
#error \
    "uthread: the host backend has a user-level context switch only for x86-64 (lib/platform/host_uctx_x86_64.S); write lib/platform/host_uctx_<arch>.S for this architecture and add it in lib/host.mk"
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#define STACK_CACHE      8                     /* free stacks a vp keeps */
#define STEALS_PER_YIELD 32                    /* failed steals between kernel yields */
#define YIELDER_PASSES   256                   /* the same while the vp runs yielded threads */
#define SLEEP_AFTER_US   2000                  /* idle this long: sleep instead of yielding */
#define SLEEP_US         1000                  /* longest sleep before looking again (stealing runs) */
#define BACKOFF_MAX      64                    /* relaxes between two failed steals, at most */
#define CANARY           0x5354434b43414e59ull /* "STCKCANY" */

void sl_uthread_fatal(const char *fmt, ...)
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

static void san_to_thread(struct vp *s, sl_thread_t *t)
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

static void san_back_in_sched(struct vp *s)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(s->asan_fake, 0, 0);
#endif
    (void)s;
}

static void san_to_sched(struct vp *s, sl_thread_t *t, int exiting)
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
static void san_back_in_thread(sl_thread_t *t, int fresh)
{
#if defined(__SANITIZE_ADDRESS__)
    struct vp *s = self_vp();
    __sanitizer_finish_switch_fiber(fresh ? 0 : t->asan_fake, &s->stack_bottom, &s->stack_size);
#endif
    (void)t;
    (void)fresh;
}

/* ---- stacks and descriptors: per-process free lists ---- */

static void stack_free(struct stack *k)
{
#if defined(__SANITIZE_THREAD__)
    __tsan_destroy_fiber(k->tsan_fiber);
#endif
    sl_free(k);
}

static struct stack *stack_get(struct vp *s)
{
    struct stack *k = s->free_stacks;

    if (k) {
        s->free_stacks = k->next;
        s->nfree_stacks--;
    } else {
        k = sl_alloc_node(STACK_BYTES, -1);
        if (!k)
            sl_uthread_fatal("out of memory for a thread stack (%u bytes)", (unsigned)STACK_BYTES);
        for (int i = 0; i < 8; i++)
            k->canary[i] = CANARY ^ (uint64_t)i;
#if defined(__SANITIZE_THREAD__)
        k->tsan_fiber = __tsan_create_fiber(0); /* one per stack: creating one is slow */
#endif
        s->st.stacks++;
    }
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(k, STACK_BYTES); /* frames of its last user never returned */
#endif
    return k;
}

static void stack_put(struct vp *s, struct stack *k)
{
    for (int i = 0; i < 8; i++)
        if (k->canary[i] != (CANARY ^ (uint64_t)i))
            sl_uthread_fatal("thread stack overflow: a thread used more than its %u-byte stack", (unsigned)STACK_BYTES);
    if (s->nfree_stacks < STACK_CACHE) {
        k->next = s->free_stacks;
        s->free_stacks = k;
        s->nfree_stacks++;
    } else {
        stack_free(k);
    }
}

/* ut_thread_get's and ut_thread_put's rare paths (uthread_impl.h). */
sl_thread_t *sl_ut_thread_get(struct vp *s)
{
    sl_thread_t *t;

    if (s && s->free_threads)
        return ut_thread_get(s);
    if (!(t = sl_malloc(sizeof *t)))
        sl_uthread_fatal("out of memory for a thread descriptor");
    return t;
}

void sl_ut_thread_put(struct vp *s, sl_thread_t *t)
{
    if (s && s->nfree_threads < THREAD_CACHE)
        ut_thread_put(s, t);
    else
        sl_free(t);
}

/* Ready again on the loop side of vp s (after a park). */
static void ready_here(struct vp *s, sl_thread_t *t)
{
    if (t->home >= 0)
        sl_ut_make_ready_pinned(s, t);
    else
        sl_ut_push_local(s, t);
}

/* ---- the thread side of a switch ---- */

static void to_loop(sl_thread_t *t, int why)
{
    struct vp *s = self_vp();

    t->why = (uint8_t)why;
    san_to_sched(s, t, why == WHY_EXIT);
    sl_uctx_switch(&t->sp, s->sp);
    san_back_in_thread(t, 0); /* possibly on another process now */
}

static void thread_main(void *p)
{
    sl_thread_t *t = p;

    san_back_in_thread(t, 1);
    t->fn(t->arg);
    sl_thread_exit();
}

void sl_thread_exit(void)
{
    sl_thread_t *t = self_thread();

    if (!t)
        sl_uthread_fatal("sl_thread_exit called outside a thread");
    if (t->inl) { /* on its joiner's stack: back to where the joiner called it (uthread_run.c) */
#if defined(__SANITIZE_ADDRESS__)
        __asan_handle_no_return(); /* the frames left behind must not stay poisoned */
#endif
#if defined(__SANITIZE_THREAD__)
        longjmp(*(jmp_buf *)t->unwind_sp, 1); /* see run_inline */
#else
        sl_uctx_unwind(t->unwind_sp);
#endif
    }
    to_loop(t, WHY_EXIT);
    __builtin_unreachable();
}

void sl_thread_yield(void)
{
    sl_thread_t *t = self_thread();

    if (!t)
        sl_yield();
    else
        to_loop(t, WHY_YIELD);
}

void sl_ut_park(sl_thread_t *t, int (*fn)(sl_thread_t *), void *obj, uint32_t old)
{
    t->park = fn;
    t->park_obj = obj;
    t->park_old = old;
    to_loop(t, WHY_PARK);
}

/* ---- the loop side ---- */

/* t has switched back for good: release its stack, then tell its joiner.
   After the signal t may already be freed by the joiner: touch it no more. */
static void reap(struct vp *s, sl_thread_t *t)
{
    stack_put(s, t->stack);
    t->stack = 0;
    s->exited++;
    if (t->home >= 0)
        __atomic_sub_fetch(&s->run->vps[t->home].pin_load, 1, __ATOMIC_RELAXED);
    if (t->is_main)
        sl_pc_finish(s->run);
    if (t->detached)
        sl_ut_thread_put(s, t);
    else
        sl_joincnt_signal(&t->done);
}

/* A yielded thread waits in s's FIFO - unless it is pinned and its host is
   now another vp (its home came back, or s is being suspended): then it
   goes there. */
static void yielded(struct vp *s, sl_thread_t *t)
{
    if (t->home >= 0 && sl_pc_host(s->run, t->home) != (uint32_t)s->id) {
        sl_ut_make_ready_pinned(s, t);
        return;
    }
    ut_fifo_push(&s->yq_head, &s->yq_tail, t);
}

static void run_thread(struct vp *s, sl_thread_t *t)
{
    if (!t->stack) {
        t->stack = stack_get(s);
        t->sp = sl_uctx_init((char *)t->stack + STACK_BYTES, thread_main, t);
    }
    s->cur = t;
    sl_ulog(SL_UL_SWITCH, t->worker, 0);
    san_to_thread(s, t);
    sl_uctx_switch(&s->sp, t->sp);
    san_back_in_sched(s);
    t = s->cur; /* t, or a thread it ran on its stack (inl) that stopped */
    s->cur = 0;
    switch (t->why) {
    case WHY_YIELD: yielded(s, t); break;
    case WHY_PARK:
        if (t->park(t))
            ready_here(s, t);
        break;
    case WHY_EXIT: reap(s, t); break;
    default: sl_uthread_fatal("thread %p switched back without a reason", (void *)t);
    }
}

static sl_thread_t *take_inbox(struct vp *s)
{
    sl_thread_t *t = __atomic_exchange_n(&s->run->inbox, 0, __ATOMIC_ACQUIRE);

    if (t)
        for (sl_thread_t *u = t->next; u;) {
            sl_thread_t *n = u->next;
            sl_ut_push_local(s, u);
            u = n;
        }
    return t;
}

/* Move a pin inbox (a LIFO stack) to the end of s's FIFO, oldest first. */
void sl_ut_take_inbox_into(struct vp *s, sl_thread_t **inbox)
{
    sl_thread_t *t = __atomic_exchange_n(inbox, 0, __ATOMIC_SEQ_CST), *rev = 0;

    while (t) {
        sl_thread_t *n = t->next;
        t->next = rev;
        rev = t;
        t = n;
    }
    while (rev) {
        sl_thread_t *n = rev->next;
        sl_ut_pq_append(s, rev);
        rev = n;
    }
}

/* The oldest pinned thread ready on s. */
static sl_thread_t *take_pinned(struct vp *s)
{
    sl_thread_t *t;

    if (!s->pq_head && __atomic_load_n(&s->pin_inbox, __ATOMIC_RELAXED))
        sl_ut_take_inbox_into(s, &s->pin_inbox);
    if ((t = s->pq_head) != 0) {
        s->pq_head = t->next;
        if (!s->pq_head)
            s->pq_tail = 0;
    }
    return t;
}

/* One steal attempt at a victim chosen uniformly among the others. */
static sl_thread_t *steal(struct vp *s)
{
    struct run *r = s->run;
    void *item;
    int v;

    if (r->nvps < 2 || r->pinned_only)
        return 0;
    v = (int)sl_rng_below(&s->rng, (uint64_t)r->nvps - 1);
    if (v >= s->id)
        v++;
    if (sl_deque_pop_top(&r->vps[v].dq, &item) == SL_STEAL_OK) {
        s->st.steals++;
        sl_ulog(SL_UL_STEAL, v, 0);
        return item;
    }
    s->st.steal_fails++;
    return 0;
}

static int work_visible(struct vp *s)
{
    struct run *r = s->run;

    if (__atomic_load_n(&r->inbox, __ATOMIC_SEQ_CST) || s->pq_head ||
        __atomic_load_n(&s->pin_inbox, __ATOMIC_SEQ_CST) || sl_pc_stranded(r))
        return 1;
    if (!r->pinned_only)
        for (int i = 0; i < r->nvps; i++)
            if (sl_deque_size(&r->vps[i].dq))
                return 1;
    return 0;
}

/* Sleep on s's bell until someone rings it (the protocol is in
   uthread_impl.h), the run ends, or timeout_us (0: no bound). */
static void idle_sleep(struct vp *s, uint64_t timeout_us)
{
    struct run *r = s->run;
    uint32_t b;

    __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&r->nsleep, 1, __ATOMIC_SEQ_CST);
    b = __atomic_load_n(&s->bell, __ATOMIC_SEQ_CST);
    if (!work_visible(s) && !__atomic_load_n(&r->done, __ATOMIC_SEQ_CST)) {
        sl_futex_wait(&s->bell, b, timeout_us);
        s->st.sleeps++;
    }
    __atomic_sub_fetch(&r->nsleep, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
}

/* Where this vp runs (for placement): one system call, only at the start
   of the run and after the kernel yields of idle passes. */
void sl_ut_note_hart(struct vp *s) { __atomic_store_n(&s->hart, (int32_t)sl_hart(), __ATOMIC_RELAXED); }

/* Every STEALS_PER_YIELD failed steals: give the hart away (Hood's yield),
   or sleep once the vp has found nothing for SLEEP_AFTER_US and holds no
   yielded threads. A vp that holds yielded threads is not idle (it runs
   them between steal attempts, and such a pass is much cheaper than a
   kernel yield), so it yields only every YIELDER_PASSES failed steals. */
static int thief_yields = 1; /* sl_threads_yields: Hood's experiments turn the yield off */

void sl_threads_yields(int on) { __atomic_store_n(&thief_yields, on != 0, __ATOMIC_RELAXED); }

static void pause_vp(struct vp *s)
{
    s->until_yield = s->yq_head ? YIELDER_PASSES : STEALS_PER_YIELD;
    if (!s->yq_head && sl_ticks_to_us(sl_plat_ticks() - s->idle_since) >= SLEEP_AFTER_US) {
        idle_sleep(s, SLEEP_US);
        return;
    }
    if (!__atomic_load_n(&thief_yields, __ATOMIC_RELAXED))
        return;
    s->st.yields++;
    sl_yield();
    sl_ut_note_hart(s); /* a policy may have moved us meanwhile */
}

/* Between failed steals: a pause that doubles up to BACKOFF_MAX relaxes,
   so idle thieves do not keep the victims' deque lines bouncing between
   caches while there is nothing to take. */
static void backoff(uint32_t fails)
{
    uint32_t n = fails < 6 ? 1u << fails : BACKOFF_MAX;

    while (n--)
        sl_cpu_relax();
}

static sl_thread_t *take_yielded(struct vp *s)
{
    sl_thread_t *t = s->yq_head;

    if (t) {
        s->yq_head = t->next;
        if (!s->yq_head)
            s->yq_tail = 0;
    }
    return t;
}

/* Idle streaks as synchronization (base/syncstat.h, for policy=adaptive). In a run whose threads are placed
   (pinned to processes: Markatos chapter 4's placement), a process that runs out of threads waits for its
   partners - only their progress (a round's end, a pivot row, a created thread) gives it work - as a worker
   waits at a barrier; a worker run's workers publish their barriers themselves. So an idle streak of a placed
   run is published as an episode at its start and, while the kernel reads wait times, as one wait from start
   to end (in_wait and wait_open meanwhile: its yields are not spinning), in place of its threads' own waits
   (the process runs its other threads meanwhile: wait_stats.c). A job that adapts (process control) is left
   out: folded, its waits say nothing the rule reads (adrule.c), and its streaks would only keep it from
   filling gang rows' holes, which served it better (gauss fine beside a gang job and a hog, 2 harts,
   deterministic QEMU: 63 ms filling, 75 in its partition).
   A stealing run's idle process merely finds no surplus: no partner owes it anything, so its streak is no
   episode - but it is the time the process had no ready thread, what its harts are worth to it (the policy's
   efficiency estimate, adrule.c), so it is published as a wait alone (STREAK_IDLE), in place of its threads'
   waits too (a join's wait runs other threads). Every other run, and every run under other policies, pays a
   few loads per idle streak. */
int sl_ut_publishes_streaks(const struct run *r)
{
    if (r->pinned_only)
        return STREAK_NONE;
    if (!__atomic_load_n(&r->placed, __ATOMIC_RELAXED))
        return STREAK_IDLE;
    return sl_plat_info()->flags & SL_INFO_ADAPTIVE ? STREAK_NONE : STREAK_EPISODE;
}

static void streak_begins(struct vp *s)
{
    int how = sl_ut_publishes_streaks(s->run);
    if (how == STREAK_NONE)
        return;
    struct sl_sync *rec = sl_sync_rec();
    if (!rec)
        return;
    if (how == STREAK_EPISODE)
        sl_sync_episode();
    if (sl_sync_timed()) {
        s->streak_t0 = sl_plat_ticks() | 1; /* never 0 while open */
        sl_sync_wait_begins(rec, s->streak_t0);
    }
}

/* The streak is over: the vp found a thread (counted), or the run ended (not a wait on a partner). */
static void streak_ends(struct vp *s, int counted)
{
    if (!s->streak_t0) /* the common case, every run but a timed placed one: nothing open */
        return;
    struct sl_sync *rec = sl_sync_rec();
    if (!rec)
        return;
    sl_sync_wait_ends(rec, s->streak_t0, sl_plat_ticks(), counted);
    s->streak_t0 = 0;
}

/* Nothing but yielded threads, if any, to run. A run of pinned threads
   only (workers) has nothing to steal: a vp with no thread sleeps at once,
   as a process waiting for its worker would, and one with yielded threads
   runs them without ever giving its hart away. A stealing run keeps
   trying: backoff, Hood's kernel yields, and sleeps only after a while. */
static void idle_pass(struct vp *s)
{
    struct run *r = s->run;
    sl_thread_t *t;

    if (r->pinned_only) {
        if ((t = take_yielded(s)) != 0)
            run_thread(s, t);
        else
            idle_sleep(s, 0);
        return;
    }
    if (r->nvps > 1 && ++s->fails == 1) {
        s->idle_since = sl_plat_ticks();
        s->until_yield = STEALS_PER_YIELD;
        streak_begins(s);
    }
    if (r->nvps > 1 && --s->until_yield == 0)
        pause_vp(s);
    if ((t = take_yielded(s)) != 0)
        run_thread(s, t);
    else if (r->nvps == 1)
        sl_uthread_fatal("deadlock: every thread is waiting and the job's only process has none to run");
    else
        backoff(s->fails);
}

static void free_caches(struct vp *s)
{
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
}

/* The loop of one vp, in the order of uthread.h's "scheduler loop". */
void sl_ut_vp_loop(void *arg, int id)
{
    struct run *r = arg;
    struct vp *s = &r->vps[id];

    sl_plat_proc()->sched = s;
    sl_ut_note_hart(s);
#if defined(__SANITIZE_THREAD__)
    s->tsan_fiber = __tsan_get_current_fiber();
#endif
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        sl_thread_t *t;

        sl_pc_safe_point(s);
        if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
            break;
        t = sl_deque_pop_bottom(&s->dq);
        if (!t)
            t = take_pinned(s);
        if (!t && __atomic_load_n(&r->inbox, __ATOMIC_RELAXED))
            t = take_inbox(s);
        if (!t)
            t = steal(s);
        if (!t)
            t = sl_pc_rescue(s);
        if (t) {
            if (s->fails)
                streak_ends(s, 1);
            s->fails = 0;
            run_thread(s, t);
        } else {
            idle_pass(s);
        }
    }
    streak_ends(s, 0);
    free_caches(s);
    sl_plat_proc()->sched = 0;
}
