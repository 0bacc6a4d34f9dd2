/* Unit tests of inline runs (lib/threads/uthread_run.c, "inline runs") on the host backend: a thread joined while
   it is still the newest item of its joiner's deque runs on the joiner's stack. Checked: it runs as itself
   (sl_thread_self, sl_in_thread), it may yield, wait, join others (nested inline runs) and exit through
   sl_thread_exit, and after each of those - also after it has moved to another process - its joiner goes
   on with its callee-saved registers and FP control word intact (a pinned joiner goes home first); threads
   stolen before the join take
   the usual path. With one process nothing is ever stolen, so every create-then-join must run inline:
   the counts are exact there. Runs under ASan/UBSan and under TSan (lib/host.mk). */
#include <fenv.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "schedlab.h"
#include "platform/host.h"
#include "hostjob.h"
#include "threads/uthread.h"

static struct {
    atomic_long count, bad, after_exit, moved;
    sl_thread_t *seen[8];
    struct sl_joincnt jc;
    struct sl_sem sem;
    struct sl_thread_stats st;
} R;

/* Locals that live across a join stay in callee-saved registers; each is checked afterwards. */
#define HOLD_DECL(k) long a = (k), b = 2 * (k) + 1, c = 3 * (k) + 7, d = (k) ^ 0x5555, e = (k)*11, f = (k) + 99
#define HOLD_CHECK(k)                                                                                                \
    do {                                                                                                             \
        asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));                                     \
        if (a != (k) || b != 2 * (k) + 1 || c != 3 * (k) + 7 || d != ((k) ^ 0x5555) || e != (k)*11 || f != (k) + 99) \
            atomic_fetch_add(&R.bad, 1);                                                                             \
    } while (0)

/* ---- it runs as itself ---- */
static void record_self(void *arg)
{
    R.seen[(intptr_t)arg] = sl_thread_self();
    if (!sl_in_thread())
        atomic_fetch_add(&R.bad, 1);
    atomic_fetch_add(&R.count, 1);
}

static void m_self(void *arg)
{
    sl_thread_t *me = sl_thread_self();
    HOLD_DECL(5);
    for (intptr_t i = 0; i < 4; i++) {
        sl_thread_t *t = sl_thread_create(record_self, (void *)i);
        sl_thread_join(t);
        if (R.seen[i] != t || sl_thread_self() != me)
            atomic_fetch_add(&R.bad, 1);
    }
    HOLD_CHECK(5);
}

/* ---- it exits from a nested call; the joiner's registers and FP mode survive ---- */
static void leave(void) { sl_thread_exit(); }

static void exiter(void *arg)
{
    HOLD_DECL(77); /* clobber the callee-saved registers before leaving */
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
    fesetround(FE_DOWNWARD); /* a thread may leave with its own rounding mode: not the joiner's */
    atomic_fetch_add(&R.count, 1);
    if (a + b + c + d + e + f)
        leave();
    atomic_fetch_add(&R.after_exit, 1);
}

static void m_exit(void *arg)
{
    HOLD_DECL(9);
    for (int i = 0; i < 50; i++) {
        sl_thread_join(sl_thread_create(exiter, NULL));
        if (fegetround() != FE_TONEAREST)
            atomic_fetch_add(&R.bad, 1);
        fesetround(FE_TONEAREST);
    }
    HOLD_CHECK(9);
}

/* ---- it yields, waits on a join counter and a semaphore, and joins its own children ---- */
static void signal_jc(void *arg) { sl_joincnt_signal(&R.jc); }

static void v_sem(void *arg)
{
    for (int i = 0; i < 3; i++)
        sl_thread_yield();
    sl_sem_v(&R.sem);
}

static void leaf(void *arg) { atomic_fetch_add(&R.count, 1); }

static void waiter(void *arg)
{
    int me = sl_self();
    HOLD_DECL(3);
    sl_thread_yield();
    sl_joincnt_wait(&R.jc); /* signalled by a thread older in the deque: this one parks */
    sl_sem_p(&R.sem);
    sl_thread_t *k1 = sl_thread_create(leaf, NULL), *k2 = sl_thread_create(leaf, NULL);
    sl_thread_join(k2); /* nested inline runs */
    sl_thread_join(k1);
    HOLD_CHECK(3);
    if (sl_self() != me)
        atomic_fetch_add(&R.moved, 1);
}

static void m_wait(void *arg)
{
    HOLD_DECL(11);
    for (int round = 0; round < 40; round++) {
        sl_joincnt_init(&R.jc, 1);
        sl_sem_init(&R.sem, 0);
        sl_thread_spawn(signal_jc, NULL); /* older than w: runs only once w has parked */
        sl_thread_spawn(v_sem, NULL);
        sl_thread_t *w = sl_thread_create(waiter, NULL);
        sl_thread_join(w);
    }
    HOLD_CHECK(11);
}

/* ---- nested inline runs as deep as the stack allows, then real threads ---- */
static void deep(void *arg)
{
    intptr_t n = (intptr_t)arg;
    volatile char pad[512]; /* each level takes a good part of a page */

    pad[0] = (char)n;
    if (n > 0)
        sl_thread_join(sl_thread_create(deep, (void *)(n - 1)));
    if (pad[0] != (char)n)
        atomic_fetch_add(&R.bad, 1);
    atomic_fetch_add(&R.count, 1);
}

static void m_deep(void *arg) { deep((void *)(intptr_t)400); }

/* ---- stolen before its join: the usual path ---- */
static void mark(void *arg) { atomic_store(&R.count, 1); }

static void m_stolen(void *arg)
{
    struct timespec t0, t;
    sl_thread_t *m = sl_thread_create(mark, NULL);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(&R.count)) { /* another process must take it */
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) {
            atomic_fetch_add(&R.bad, 1);
            break;
        }
    }
    sl_thread_join(m);
}

/* ---- it parks and resumes on another process, its joiner under it: popped there by the owner of the
   deque it was made ready on (mode 0), or stolen from that deque by a thief (mode 1). Pinned threads
   keep the processes that must not take it busy, so either way is forced, not left to timing. ---- */
static atomic_int parked, resumed;
static int where, was_inline;
static char *joiner_frame;

static void spin_until(atomic_int *flag)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(flag)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) {
            atomic_fetch_add(&R.bad, 1);
            break;
        }
    }
}

static void on_p0(void *arg) /* runs once the inline thread has parked (it held process 0 until then) */
{
    atomic_store(&parked, 1);
    if (arg) /* mode 0: process 0 must not steal it back */
        spin_until(&resumed);
    sl_joincnt_signal(&R.jc);
}

static void on_p1(void *arg)
{
    spin_until(&parked);
    sl_sem_v(&R.sem); /* the inline thread goes onto process 1's deque */
    if (arg)          /* mode 1: process 1 must not pop it */
        spin_until(&resumed);
    sl_joincnt_signal(&R.jc);
}

static void parks(void *arg)
{
    intptr_t mode = (intptr_t)arg;
    char here;
    HOLD_DECL(21);

    /* an idle thief may take it before the join: then it is an ordinary thread, on a stack of its own,
       which may lie just below the joiner's in memory; run inline, its frame is a few calls above the
       joiner's (sl_thread_join, run_inline, sl_uctx_call) */
    was_inline = &here < joiner_frame && joiner_frame - &here < SL_THREAD_STACK / 8;

    sl_thread_spawn_on(0, on_p0, (void *)(intptr_t)(mode == 0));
    sl_thread_spawn_on(1, on_p1, (void *)(intptr_t)(mode == 1));
    sl_sem_p(&R.sem);
    where = sl_self();
    atomic_store(&resumed, 1);
    HOLD_CHECK(21);
}

static void move_rounds(int pinned)
{
    char frame;
    HOLD_DECL(13);

    joiner_frame = &frame;
    for (int round = 0; round < 10; round++) {
        intptr_t mode = round % 2;
        atomic_store(&parked, 0);
        atomic_store(&resumed, 0);
        sl_sem_init(&R.sem, 0);
        sl_joincnt_init(&R.jc, 2);
        sl_thread_join(sl_thread_create(parks, (void *)mode));
        if (was_inline) {
            atomic_fetch_add(&R.count, 1);
            if (where == (mode == 0 ? 0 : 1))
                atomic_fetch_add(&R.bad, 1);
            /* the joiner went on where its inline thread finished; pinned, it went home */
            if (pinned ? sl_self() != 0 : sl_self() != where)
                atomic_fetch_add(&R.bad, 1);
        }
        sl_joincnt_wait(&R.jc);
    }
    HOLD_CHECK(13);
}

static void pinned_joiner(void *arg) { move_rounds(1); }

static void m_move(void *arg)
{
    move_rounds(0);
    sl_thread_join(sl_thread_create_on(0, pinned_joiner, NULL));
}

/* ---- the jobs ---- */
static void (*scenario)(void *);
static void body(void)
{
    sl_threads_run(scenario, NULL);
    sl_threads_stats(&R.st);
}

static void run(int procs, void (*m)(void *))
{
    memset(&R, 0, sizeof R);
    scenario = m;
    hostjob_run("test_inline", procs, body);
}

static void test_all(int procs)
{
    run(procs, m_self);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&R.count) == 4);
    if (procs == 1)
        CHECK(R.st.inlined == 4 && R.st.stacks == 1); /* main's stack only */

    run(procs, m_exit);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&R.count) == 50 && atomic_load(&R.after_exit) == 0);
    if (procs == 1)
        CHECK(R.st.inlined == 50);

    run(procs, m_wait);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&R.count) == 80);
    if (procs == 1)
        CHECK(R.st.inlined == 40 * 3 && atomic_load(&R.moved) == 0);

    run(procs, m_deep);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&R.count) == 401);
    CHECK(R.st.inlined >= 1 && R.st.inlined < 400); /* inline while the stack allows, then real stacks */

    if (procs > 1) {
        run(procs, m_move);
        CHECK(atomic_load(&R.bad) == 0 && R.st.steals >= 1);
        CHECK(atomic_load(&R.count) >= 2 && (uint64_t)atomic_load(&R.count) == R.st.inlined);

        run(procs, m_stolen);
        CHECK(atomic_load(&R.bad) == 0 && R.st.steals >= 1 && R.st.inlined == 0);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_all(1);
    test_all(2);
    test_all(8);
    return check_done("test_uthread_inline");
}
