/*
 * uthread_run.c - runs (sl_threads_run, and sl_threads_run_pinned that
 * sl_run_workers builds on: both are sl_ut_run) and the thread API:
 * create, spawn, pin, join, a worker's id, and what
 * placement asks. The machinery under them - switching, stacks, making
 * threads ready, the vp loop - is in uthread.c; the model in uthread.h.
 * Also what the layers around ask of threads: the wait layer's hooks (a
 * thread pauses, parks and is woken; installed by every run before its
 * first thread exists) and worker identity for the barriers above.
 */
#include "schedlab.h"
#include "threads/uthread_impl.h"
#include "wait/wait.h"

static struct sl_thread_stats last_stats;

/* ---- the wait layer's hooks (wait.h, "Threads") ---- */

static sl_wait_pausefn ut_pauser(void) { return self_thread() ? sl_thread_pause : 0; }

static int ut_wait_is_threads(void)
{
    struct vp *s = self_vp();
    return s && s->cur && sl_ut_publishes_streaks(s->run);
}

static const struct sl_wait_threads ut_wait_hooks = {
    .pauser = ut_pauser,
    .wait_is_threads = ut_wait_is_threads,
    .block_process = sl_thread_block_process,
    .park = sl_thread_wait_ne,
    .wake = sl_thread_wake,
};

/* ---- runs ---- */

/* The run's memory: the vps first (line-aligned), then the run, then the
   deques' slots, susp and host. */
static struct run *run_new(int n, int pinned_only, char **mem)
{
    uint32_t cap = pinned_only ? 16 : SL_THREAD_READY_MAX; /* nothing is ever pushed in a pinned-only run */
    size_t slots = SL_DEQUE_BYTES(cap);
    size_t off_run = (size_t)n * sizeof(struct vp);
    size_t off_slots = off_run + ((sizeof(struct run) + 63) & ~(size_t)63);
    size_t off_ints = off_slots + (size_t)n * slots;
    size_t bytes = off_ints + 2 * (size_t)n * sizeof(uint32_t);
    struct run *r;

    if (!(*mem = sl_alloc_node(bytes, -1)))
        sl_die("out of memory for the thread scheduler of %d processes", n);
    memset(*mem, 0, bytes);
    r = (struct run *)(*mem + off_run);
    r->vps = (struct vp *)*mem;
    r->nvps = n;
    r->pinned_only = pinned_only;
    r->susp = (int *)(*mem + off_ints);
    r->host = (uint32_t *)(*mem + off_ints + (size_t)n * sizeof(uint32_t));
    sl_pc_init(r);
    for (int i = 0; i < n; i++) {
        struct vp *s = &r->vps[i];
        sl_deque_init(&s->dq, *mem + off_slots + (size_t)i * slots, cap);
        s->run = r;
        s->id = i;
        s->hart = -1;
        sl_rng_init(&s->rng, 0x5eed0000u + (uint64_t)i);
    }
    return r;
}

/* Sum the vps' counters into last_stats; stop the job if threads were
   left unfinished or unjoined. */
static void run_collect(struct run *r)
{
    uint64_t threads = 1, exited = 0, joinable = 0, joined = 0;

    memset(&last_stats, 0, sizeof last_stats);
    for (int i = 0; i < r->nvps; i++) {
        struct vp *s = &r->vps[i];
        struct sl_thread_stats *st = &s->st;
        threads += st->threads;
        exited += s->exited + st->inlined; /* an inline run ends in its joiner, not in reap */
        joinable += s->joinable;
        joined += s->joined;
        last_stats.steals += st->steals;
        last_stats.inlined += st->inlined;
        last_stats.steal_fails += st->steal_fails;
        last_stats.yields += st->yields;
        last_stats.sleeps += st->sleeps;
        last_stats.stacks += st->stacks;
        last_stats.suspends += st->suspends;
        last_stats.resumes += st->resumes;
        last_stats.react_ticks += st->react_ticks;
        if (st->react_max_ticks > last_stats.react_max_ticks)
            last_stats.react_max_ticks = st->react_max_ticks;
    }
    last_stats.threads = threads;
    if (exited != threads)
        sl_uthread_fatal("%lu of %lu threads had not finished when the main thread returned (join them, or "
                         "wait for them with a join counter)",
                         (unsigned long)(threads - exited), (unsigned long)threads);
    if (joined != joinable)
        sl_uthread_fatal("%lu of %lu threads made by sl_thread_create were never joined (join each exactly once)",
                         (unsigned long)(joinable - joined), (unsigned long)joinable);
}

/* A run of main_fn on every process; pinned_only: main is pinned to vp 0
   and every thread made in the run must be pinned (sl_run_workers). */
void sl_ut_run(void (*main_fn)(void *), void *arg, int pinned_only)
{
    int n = sl_nprocs();
    char *mem;
    struct run *r;
    sl_thread_t *t;

    if (sl_self() != 0)
        sl_die("a thread run started from process %d (only process 0 may)", sl_self());
    if (self_vp())
        sl_die("a thread run started inside a thread program (runs do not nest)");
    sl_wait_use_threads(&ut_wait_hooks); /* the only process yet: before any thread exists */
    r = run_new(n, pinned_only, &mem);
    t = sl_ut_thread_get(0);
    ut_thread_init(t, main_fn, arg, r, pinned_only ? 0 : -1, 1);
    t->is_main = 1;
    if (pinned_only)
        sl_ut_pq_append(&r->vps[0], t);
    else if (sl_deque_push_bottom(&r->vps[0].dq, t) < 0)
        sl_die("cannot queue the main thread");

    sl_run_procs(sl_ut_vp_loop, r);

    run_collect(r);
    sl_free(mem);
}

void sl_threads_run(void (*main_fn)(void *), void *arg) { sl_ut_run(main_fn, arg, 0); }

void sl_threads_run_pinned(void (*main_fn)(void *), void *arg) { sl_ut_run(main_fn, arg, 1); }

void sl_threads_stats(struct sl_thread_stats *out) { *out = last_stats; }

/* ---- threads ---- */

/* A descriptor for fn(arg) from s's cache, counted; not yet published. */
static inline __attribute__((always_inline)) sl_thread_t *thread_make(struct vp *s, void (*fn)(void *), void *arg,
                                                                      int detached, int home)
{
    sl_thread_t *t = ut_thread_get(s);

    ut_thread_init(t, fn, arg, s->run, home, detached);
    if (!detached) {
        /* sl_joincnt_init(&t->done, 1) without its release, and plain
           stores: nobody else can see t before the push that publishes it
           (a release), and the counter with it */
        t->done.waiter = 0;
        t->done.count = 2;
        s->joinable++;
    }
    s->st.threads++;
    return t;
}

static sl_thread_t *thread_new(void (*fn)(void *), void *arg, int detached, int home)
{
    struct vp *s = self_vp();
    sl_thread_t *t;

    if (!s || !s->cur)
        sl_uthread_fatal("threads can only be created by threads (start with sl_threads_run)");
    if (home >= s->run->nvps)
        sl_uthread_fatal("a thread pinned to process %d, but the job has processes 0..%d", home, s->run->nvps - 1);
    if (home < 0 && s->run->pinned_only)
        sl_uthread_fatal("a worker run (sl_run_workers) makes pinned threads only: use sl_thread_spawn_on");
    t = thread_make(s, fn, arg, detached, home);
    if (home >= 0) {
        if (!s->run->placed)
            __atomic_store_n(&s->run->placed, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&s->run->vps[home].pin_load, 1, __ATOMIC_RELAXED);
        sl_ut_make_ready_pinned(s, t);
    } else {
        sl_ut_push_local(s, t);
    }
    return t;
}

/* The common spawn, joinable and stealable, on its own short path: any
   case thread_new would check (or refuse) goes through thread_new. */
sl_thread_t *sl_thread_create(void (*fn)(void *), void *arg)
{
    struct vp *s = self_vp();
    sl_thread_t *t;

    if (__builtin_expect(!s || !s->cur || s->run->pinned_only, 0))
        return thread_new(fn, arg, 0, -1);
    t = thread_make(s, fn, arg, 0, -1);
    sl_ut_push_local(s, t);
    return t;
}

void sl_thread_spawn(void (*fn)(void *), void *arg) { thread_new(fn, arg, 1, -1); }

sl_thread_t *sl_thread_create_on(int proc, void (*fn)(void *), void *arg)
{
    if (proc < 0)
        sl_uthread_fatal("a thread pinned to process %d (processes are numbered from 0)", proc);
    return thread_new(fn, arg, 0, proc);
}

void sl_thread_spawn_on(int proc, void (*fn)(void *), void *arg)
{
    if (proc < 0)
        sl_uthread_fatal("a thread pinned to process %d (processes are numbered from 0)", proc);
    thread_new(fn, arg, 1, proc);
}

/* The run the caller belongs to, or 0 outside a run. */
static struct run *self_run(void)
{
    struct vp *s = self_vp();
    return s ? s->run : 0;
}

uint32_t sl_thread_load(int proc)
{
    struct run *r = self_run();

    if (!r || proc < 0 || proc >= r->nvps)
        return 0;
    return __atomic_load_n(&r->vps[proc].pin_load, __ATOMIC_RELAXED) + sl_deque_size(&r->vps[proc].dq);
}

int sl_thread_proc_hart(int proc)
{
    struct run *r = self_run();

    if (!r || proc < 0 || proc >= r->nvps)
        return -1;
    return __atomic_load_n(&r->vps[proc].hart, __ATOMIC_RELAXED);
}

/* ---- inline runs ----
   A thread joined while it is still the newest item of the joiner's own
   deque has not started, and nobody else can take it once the joiner pops
   it: the joiner then calls its function right there, on the joiner's own
   stack, as lazy task creation does (Mohr, Kranz & Halstead 1991; Cilk-5's
   work-first spawn is the same call seen from the other side). No stack,
   no switch, no join counter: the common case of create-then-join costs a
   descriptor from the per-process cache, a deque push and pop, and a call.
   A thread that was stolen first, or has started (it waited and was made
   ready again), or is not the newest item, is joined the usual way.

   The thread so run (t->inl) is a thread like any other: vp.cur is t while
   it runs, so sl_thread_self, waits, yields and joins act for t, and t
   borrows the joiner's stack (t->stack) - the joiner's frames lie below
   t's. When t waits or yields it parks as usual, and the context saved is
   that whole stack: t, with its joiner under it, may resume on another
   process, and when t's function returns the joiner goes on from there,
   wherever that is (it re-reads its vp). The joiner was about to wait for
   t anyway, so nothing it would have done meanwhile is delayed. That is
   why only a join runs a thread inline, never a join counter's or any
   other wait: a waiter that ran some other thread under itself could not
   resume before that thread finished, even if the thread waited for
   something the waiter does after its own wait (a deadlock the program
   does not have).

   A pinned joiner whose inline thread moved it away from its host goes
   home by a yield right after the run (uthread.c, yielded), as it would at
   its next pause.

   sl_thread_exit in t returns to the frame sl_uctx_call left (the saved
   callee-saved registers), as if t's function had returned. Nesting is
   bounded by the stack: a thread is run inline only while at least
   INLINE_MIN_STACK bytes of the joiner's stack remain, so a thread always
   has at least that much (3/4 of SL_THREAD_STACK), and deeper joins fall
   back to threads with stacks of their own. */

#define INLINE_MIN_STACK (STACK_BYTES / 4 * 3)

static uintptr_t stack_pointer(void)
{
    uintptr_t sp;
#if defined(__riscv)
    asm volatile("mv %0, sp" : "=r"(sp));
#elif defined(__x86_64__)
    asm volatile("movq %%rsp, %0" : "=r"(sp));
#else
#error "uthread_run.c: stack_pointer() for this architecture"
#endif
    return sp;
}

/* t is the newest item of s's deque, and s runs a thread: run t inline if
   it may (see above). The vp the caller is on afterwards, or NULL if t
   did not run. */
static struct vp *run_inline(struct vp *s, sl_thread_t *t)
{
    sl_thread_t *up = s->cur;

    if (stack_pointer() - (uintptr_t)up->stack < INLINE_MIN_STACK + sizeof(struct stack))
        return 0;
    if (sl_deque_pop_bottom(&s->dq) != t)
        return 0; /* a thief took it between the peek and the pop */
    if (t->stack) {
        sl_ut_push_local(s, t); /* it has started: it runs on its own stack */
        return 0;
    }
    t->stack = up->stack;
    t->inl = 1;
    s->cur = t;
#if defined(__SANITIZE_THREAD__)
    /* TSan keeps a shadow call stack that only its longjmp interceptor
       unwinds: sl_uctx_unwind would leave the exited frames on it, to
       overflow it after enough exits. longjmp keeps the FP control words
       as they are, so they come back as sl_uctx_unwind brings them. (up,
       mxcsr and x87 are not changed after setjmp.) */
    jmp_buf back;
    unsigned int mxcsr = __builtin_ia32_stmxcsr(); /* the host backend is x86-64 only (uthread.c) */
    unsigned short x87;
    asm volatile("fnstcw %0" : "=m"(x87));
    t->unwind_sp = &back;
    if (!setjmp(back)) {
        t->fn(t->arg);
    } else {
        __builtin_ia32_ldmxcsr(mxcsr);
        asm volatile("fldcw %0" : : "m"(x87));
    }
#else
    sl_uctx_call(t->fn, t->arg, &t->unwind_sp);
#endif
    s = self_vp(); /* t may have moved the joiner to another process */
    s->cur = up;
    s->st.inlined++;
    if (up->home >= 0 && sl_pc_host(s->run, up->home) != (uint32_t)s->id) {
        sl_thread_yield(); /* a pinned joiner: home first */
        s = self_vp();
    }
    return s;
}

void sl_thread_join(sl_thread_t *t)
{
    struct vp *s = self_vp(), *ran = 0;

    if (s && s->cur && sl_deque_peek_bottom(&s->dq) == t)
        ran = run_inline(s, t);
    if (!ran) {
        sl_joincnt_wait(&t->done);
        s = self_vp(); /* the process we are on now */
    } else {
        s = ran;
    }
    if (s)
        s->joined++;
    ut_thread_put(s, t);
}

sl_thread_t *sl_thread_self(void) { return self_thread(); }

int sl_in_thread(void) { return self_thread() != 0; }

/* ---- worker identity (sl_run_workers' threads; the barriers' participants) ---- */

int sl_worker_id(void)
{
    sl_thread_t *t = self_thread();

    return t && t->worker >= 0 ? t->worker : sl_self();
}

void sl_thread_set_worker(int id)
{
    sl_thread_t *t = self_thread();

    if (!t || !t->run->pinned_only)
        sl_uthread_fatal("sl_thread_set_worker(%d) outside a thread of a pinned run", id);
    t->worker = id;
}

int sl_worker_running(int worker)
{
    struct vp *s = self_vp();

    if (s && s->run->pinned_only && worker >= 0 && worker < s->run->nvps)
        return sl_proc_running(sl_pc_host(s->run, worker));
    return sl_proc_running((uint32_t)worker);
}
