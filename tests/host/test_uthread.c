/* Unit tests of user-level threads (lib/threads/uthread.c) on the host backend: pthreads play processes, and
   this file plays the kernel (like lib/start/host_main.c, but it runs many one-process-0 "jobs" in a row,
   each with its own procs, because a job may call sl_threads_run only once). Every scenario runs on
   1, 2, 3 and 8 processes (the machine has 2 cores: 8 is more processes than cores). Threads record
   what they saw in plain or atomic variables; CHECKs run on the test's own thread after the job.
   Death tests fork a child that must be killed by the library's trap (SIGILL). */
#include <fcntl.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "schedlab.h"
#include "platform/host.h"
#include "hostjob.h"
#include "threads/uthread.h"
#include "wait/wait.h"

#if defined(__SANITIZE_THREAD__)      /* TSan is slow at creating fiber contexts: smaller runs */
#define MANY 300
#define FIB_N 14            /* fib 377, 1219 calls */
#define FIB_R 377
#define REUSE 1000
#define BAR_EPISODES 200
#else
#define MANY 2000
#define FIB_N 20            /* fib 6765, 21891 calls */
#define FIB_R 6765
#define REUSE 5000
#define BAR_EPISODES 1000
#endif

/* ---- the emulated kernel (hostjob.h) ---- */

static int job_in_thread_outside;            /* sl_in_thread() in process 0 before the run */

static void note_in_thread(void) { job_in_thread_outside = sl_in_thread(); }

static void run_job(int procs, void (*body)(void))
{
    hostjob_at_start = note_in_thread;
    hostjob_run("test_uthread", procs, body);
}

/* Everything a scenario records; reset before each job. */
static struct {
    int value, in_thread, self_ok, pauses_as_thread;
    atomic_long sum, count, bad;
    long slots[2048];
    long fib;
    long crit;                    /* protected by a semaphore, deliberately not atomic */
    atomic_int flag;
    uint32_t word;
    atomic_int woke;
    int exit_after;               /* must stay 0: code after sl_thread_exit */
    atomic_int procs_seen[SL_MAX_PROCS];
    struct sl_thread_stats st;
} R;

static void reset(void)
{
    memset(&R, 0, sizeof R);
}

/* ---- scenarios (each is the main thread of one job) ---- */

static void set42(void *arg)
{
    R.value = 42;
    R.in_thread = sl_in_thread();
    R.self_ok = sl_thread_self() != NULL;
    R.pauses_as_thread = sl_wait_pauser() == sl_thread_pause; /* the run installed the wait layer's hooks */
}

static void m_basic(void *arg)
{
    sl_thread_t *t = sl_thread_create(set42, NULL);
    sl_thread_join(t);
}

static void add_index(void *arg)
{
    long i = (long)(intptr_t)arg;

    R.slots[i] = i + 1;
    atomic_fetch_add(&R.sum, i);
    atomic_fetch_add(&R.procs_seen[sl_self()], 1);
    sl_thread_yield();
    atomic_fetch_add(&R.count, 1);
}

static void m_many(void *arg)
{
    static sl_thread_t *t[MANY];

    for (long i = 0; i < MANY; i++)
        t[i] = sl_thread_create(add_index, (void *)(intptr_t)i);
    for (long i = 0; i < MANY; i++)
        sl_thread_join(t[i]);
}

/* yield: round-robin counters, and a waiter that only a later thread can release */
static void yielder(void *arg)
{
    for (int i = 0; i < 200; i++) {
        atomic_fetch_add(&R.count, 1);
        sl_thread_yield();
    }
}

static void wait_flag(void *arg)
{
    while (!atomic_load(&R.flag))
        sl_thread_yield();
    R.value = 1;
}

static void set_flag(void *arg)
{
    atomic_store(&R.flag, 1);
}

static void m_yield(void *arg)
{
    sl_thread_t *t[4], *w, *s;

    w = sl_thread_create(wait_flag, NULL);        /* yields until set_flag, made only later, runs */
    for (int i = 0; i < 4; i++)
        t[i] = sl_thread_create(yielder, NULL);
    for (int i = 0; i < 4; i++)
        sl_thread_join(t[i]);
    s = sl_thread_create(set_flag, NULL);
    sl_thread_join(w);
    sl_thread_join(s);
}

/* exit from a nested call */
static void leave(void)
{
    sl_thread_exit();
}

static void exiter(void *arg)
{
    atomic_fetch_add(&R.count, 1);
    leave();
    R.exit_after = 1;
}

static void detached_exiter(void *arg)
{
    struct sl_joincnt *jc = arg;

    atomic_fetch_add(&R.count, 1);
    sl_joincnt_signal(jc);
    sl_thread_exit();
}

static void m_exit(void *arg)
{
    struct sl_joincnt jc;
    sl_thread_t *t = sl_thread_create(exiter, NULL);

    sl_joincnt_init(&jc, 5);
    for (int i = 0; i < 5; i++)
        sl_thread_spawn(detached_exiter, &jc);
    sl_thread_join(t);
    sl_joincnt_wait(&jc);
}

/* nested spawn: fibonacci, one thread per call */
struct fibarg {
    int n;
    long r;
};

static void fib_thread(void *arg)
{
    struct fibarg *f = arg, a, b;

    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    a.n = f->n - 1;
    b.n = f->n - 2;
    sl_thread_t *ta = sl_thread_create(fib_thread, &a);
    sl_thread_t *tb = sl_thread_create(fib_thread, &b);
    sl_thread_join(tb);
    sl_thread_join(ta);
    f->r = a.r + b.r;
}

static void m_fib(void *arg)
{
    struct fibarg f = { .n = FIB_N };

    fib_thread(&f);
    R.fib = f.r;
}

/* join counters */
static void signaller(void *arg)
{
    atomic_fetch_add(&R.count, 1);
    sl_joincnt_signal(arg);
}

static void m_joincnt(void *arg)
{
    struct sl_joincnt jc;

    sl_joincnt_init(&jc, 100);                   /* many signals, waiter parks early */
    for (int i = 0; i < 100; i++)
        sl_thread_spawn(signaller, &jc);
    sl_joincnt_wait(&jc);
    if (atomic_load(&R.count) != 100)
        atomic_fetch_add(&R.bad, 1);

    for (int round = 0; round < 200; round++) {  /* re-init and reuse one counter in our frame */
        sl_joincnt_init(&jc, 3);
        for (int i = 0; i < 3; i++)
            sl_thread_spawn(signaller, &jc);
        sl_joincnt_wait(&jc);
        if (atomic_load(&R.count) != 100 + 3 * (round + 1))
            atomic_fetch_add(&R.bad, 1);
    }

    sl_joincnt_init(&jc, 4);                     /* every signal before the wait: fast path */
    for (int i = 0; i < 4; i++)
        sl_thread_spawn(signaller, &jc);
    while (atomic_load(&R.count) != 704)
        sl_thread_yield();
    sl_joincnt_wait(&jc);

    sl_joincnt_init(&jc, 0);                     /* nothing to wait for */
    sl_joincnt_wait(&jc);
}

/* semaphores: a mutex with yields inside the critical section, and a bounded buffer */
static struct sl_sem mutex, empty, full;
static long buf[4];
static int head, tail;

static void crit_thread(void *arg)
{
    for (int i = 0; i < 300; i++) {
        sl_sem_p(&mutex);
        long v = R.crit;
        sl_thread_yield();
        R.crit = v + 1;
        sl_sem_v(&mutex);
    }
}

static void producer(void *arg)
{
    long base = (long)(intptr_t)arg;

    for (long i = 0; i < 300; i++) {
        sl_sem_p(&empty);
        sl_sem_p(&mutex);
        buf[head++ % 4] = base + i;
        sl_sem_v(&mutex);
        sl_sem_v(&full);
    }
}

static void consumer(void *arg)
{
    for (int i = 0; i < 300; i++) {
        sl_sem_p(&full);
        sl_sem_p(&mutex);
        long v = buf[tail++ % 4];
        sl_sem_v(&mutex);
        sl_sem_v(&empty);
        R.slots[v] += 1;                         /* each value is consumed by one thread only */
        atomic_fetch_add(&R.sum, v);
    }
}

static void m_sem(void *arg)
{
    sl_thread_t *t[8];

    sl_sem_init(&mutex, 1);
    for (int i = 0; i < 8; i++)
        t[i] = sl_thread_create(crit_thread, NULL);
    for (int i = 0; i < 8; i++)
        sl_thread_join(t[i]);

    sl_sem_init(&empty, 4);
    sl_sem_init(&full, 0);
    head = tail = 0;
    for (int i = 0; i < 3; i++)
        t[i] = sl_thread_create(consumer, NULL);      /* consumers first: they wait */
    for (int i = 0; i < 3; i++)
        t[3 + i] = sl_thread_create(producer, (void *)(intptr_t)(i * 300));
    for (int i = 0; i < 6; i++)
        sl_thread_join(t[i]);
}

/* stacks are reused */
static void nothing(void *arg)
{
}

static void m_reuse(void *arg)
{
    for (int i = 0; i < REUSE; i++)
        sl_thread_join(sl_thread_create(nothing, NULL));
}

/* thread-aware word waits, and a sense-reversing barrier made of them (as a wait kind would be) */
static void word_waiter(void *arg)
{
    sl_thread_wait_ne(&R.word, 0);
    atomic_fetch_add(&R.woke, 1);
}

static void word_setter(void *arg)
{
    for (int i = 0; i < 20; i++)
        sl_thread_yield();
    __atomic_store_n(&R.word, 1, __ATOMIC_RELEASE);
    sl_thread_wake(&R.word);
}

#define BAR_N 6
static struct {
    uint32_t left, sense;
    atomic_long arrived;
} bar;

static void barrier_wait(uint32_t *my_sense)
{
    uint32_t s = *my_sense ^= 1;

    if (__atomic_sub_fetch(&bar.left, 1, __ATOMIC_ACQ_REL) == 0) {
        __atomic_store_n(&bar.left, BAR_N, __ATOMIC_RELAXED);
        __atomic_store_n(&bar.sense, s, __ATOMIC_RELEASE);
        sl_thread_wake(&bar.sense);
    } else {
        sl_thread_wait_ne(&bar.sense, s ^ 1);
    }
}

static void bar_thread(void *arg)
{
    uint32_t sense = 0;

    for (long e = 0; e < BAR_EPISODES; e++) {
        atomic_fetch_add(&bar.arrived, 1);
        barrier_wait(&sense);
        long a = atomic_load(&bar.arrived);       /* all of episode e in, nobody past e+1 */
        if (a < (e + 1) * BAR_N || a > (e + 2) * BAR_N - 1)
            atomic_fetch_add(&R.bad, 1);
    }
}

static void m_wait(void *arg)
{
    sl_thread_t *t[12];

    for (int i = 0; i < 10; i++)
        t[i] = sl_thread_create(word_waiter, NULL);
    t[10] = sl_thread_create(word_setter, NULL);
    for (int i = 0; i < 11; i++)
        sl_thread_join(t[i]);

    bar.left = BAR_N;
    bar.sense = 0;
    atomic_store(&bar.arrived, 0);
    for (int i = 0; i < BAR_N; i++)
        t[i] = sl_thread_create(bar_thread, NULL);
    for (int i = 0; i < BAR_N; i++)
        sl_thread_join(t[i]);
}

/* callee-saved registers and the FP control word survive switches (and migrations) */
static void regs_thread(void *arg)
{
    long k = (long)(intptr_t)arg;
    long a = k, b = 2 * k + 1, c = 3 * k + 7, d = k ^ 0x5555, e = k * 11, f = k + 99;
    int mode = k % 2 ? FE_UPWARD : FE_TONEAREST;

    fesetround(mode);
    for (int i = 0; i < 100; i++) {
        a += 1; b += 2; c += 3; d ^= i; e -= 1; f += a;
        sl_thread_yield();
        if (fegetround() != mode)
            atomic_fetch_add(&R.bad, 1);
        volatile double one = 1.0, three = 3.0;   /* 1/3 rounds differently upward */
        double q = one / three;
        if ((mode == FE_UPWARD) != (q * 3.0 > 1.0 || q > 0.33333333333333331))
            atomic_fetch_add(&R.bad, 1);
    }
    long fsum = 0;
    for (int i = 0; i < 100; i++)
        fsum += k + 1 + i;
    if (a != k + 100 || b != 2 * k + 1 + 200 || c != 3 * k + 7 + 300 || e != k * 11 - 100 || f != k + 99 + fsum)
        atomic_fetch_add(&R.bad, 1);
    long dd = k ^ 0x5555;
    for (int i = 0; i < 100; i++)
        dd ^= i;
    if (d != dd)
        atomic_fetch_add(&R.bad, 1);
    fesetround(FE_TONEAREST);
}

static void m_regs(void *arg)
{
    sl_thread_t *t[6];

    for (int i = 0; i < 6; i++)
        t[i] = sl_thread_create(regs_thread, (void *)(intptr_t)(i + 1));
    for (int i = 0; i < 6; i++)
        sl_thread_join(t[i]);
    if (fegetround() != FE_TONEAREST)
        atomic_fetch_add(&R.bad, 1);
}

/* a thread must be stolen: its creator keeps its own process busy until it has run */
static void mark(void *arg)
{
    atomic_store(&R.flag, 1);
    atomic_fetch_add(&R.procs_seen[sl_self()], 1);
}

static void m_steal(void *arg)
{
    struct timespec t0, t;
    sl_thread_t *m = sl_thread_create(mark, NULL);
    int me = sl_self();

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(&R.flag)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) {          /* never stolen: the run would hang; fail instead */
            atomic_fetch_add(&R.bad, 1);
            break;
        }
    }
    sl_thread_join(m);
    if (atomic_load(&R.procs_seen[me]) != 0)
        atomic_fetch_add(&R.bad, 1);
}

/* ---- the jobs: one scenario per job ---- */

static void (*scenario)(void *);
static void body(void)
{
    sl_threads_run(scenario, NULL);
    sl_threads_stats(&R.st);
}

static double run(int procs, void (*m)(void *))
{
    struct timespec t0, t1;

    reset();
    scenario = m;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_job(procs, body);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

static long fibonacci(int n)
{
    return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

static void test_all(int procs)
{
    double t = 0;
    long want;
    int used;

    t += run(procs, m_basic);
    CHECK(R.value == 42 && R.in_thread == 1 && R.self_ok && R.pauses_as_thread);
    CHECK(job_in_thread_outside == 0);
    CHECK(R.st.threads == 2);

    t += run(procs, m_many);
    want = 0;
    for (long i = 0; i < MANY; i++)
        want += R.slots[i] == i + 1;
    CHECK(want == MANY);
    CHECK(atomic_load(&R.sum) == (MANY - 1L) * MANY / 2 && atomic_load(&R.count) == MANY);
    used = 0;
    for (int i = 0; i < procs; i++)
        used += atomic_load(&R.procs_seen[i]) > 0;
    CHECK(used >= 1 && used <= procs);

    t += run(procs, m_yield);
    CHECK(atomic_load(&R.count) == 800 && R.value == 1);

    t += run(procs, m_exit);
    CHECK(atomic_load(&R.count) == 6 && R.exit_after == 0);

    t += run(procs, m_fib);
    CHECK(R.fib == FIB_R);
    CHECK(R.st.threads == 2 * (uint64_t)(FIB_R + fibonacci(FIB_N - 1)) - 1);   /* calls 2 fib(n+1) - 1,
                                                                        minus the root, plus main */
    if (procs > 1)
        CHECK(R.st.stacks <= R.st.threads);

    t += run(procs, m_joincnt);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&R.count) == 704);

    t += run(procs, m_sem);
    CHECK(R.crit == 8 * 300);
    want = 0;
    for (long v = 0; v < 900; v++)
        want += R.slots[v] == 1;
    CHECK(want == 900 && atomic_load(&R.sum) == 899L * 900 / 2);

    t += run(procs, m_reuse);
    CHECK(R.st.threads == REUSE + 1);
    CHECK(R.st.stacks <= 8 * (uint64_t)procs + 2);   /* per-process cache of 8, plus main's */

    t += run(procs, m_wait);
    CHECK(atomic_load(&R.woke) == 10);
    CHECK(atomic_load(&R.bad) == 0 && atomic_load(&bar.arrived) == BAR_N * BAR_EPISODES);

    t += run(procs, m_regs);
    CHECK(atomic_load(&R.bad) == 0);

    if (procs > 1) {
        t += run(procs, m_steal);
        CHECK(atomic_load(&R.bad) == 0 && R.st.steals >= 1);
    }
    printf("procs=%d: %.2f s\n", procs, t);
}

/* ---- death tests: the library must stop the job loudly ---- */

static void m_overflow(void *arg);
static void overflow_thread(void *arg)
{
    /* Our stack block ends on a page boundary (sl_alloc_node puts a 64-byte header before it and
       SL_THREAD_STACK is whole pages), so its low end, with the canary, is SL_THREAD_STACK - 64 bytes
       below that boundary: overwrite the canary as a stack overflow would. */
    uintptr_t top = ((uintptr_t)__builtin_frame_address(0) + 4095) & ~(uintptr_t)4095;
    memset((void *)(top - SL_THREAD_STACK + 64), 0xa5, 64);
}
static void m_overflow(void *arg)
{
    sl_thread_join(sl_thread_create(overflow_thread, NULL));
}

static void m_unjoined(void *arg)
{
    sl_thread_create(nothing, NULL);          /* never joined (with procs=1 it never even runs) */
    if (sl_nprocs() > 1)
        for (int i = 0; i < 1000; i++)
            sl_thread_yield();
}

static void m_oversignal(void *arg)
{
    struct sl_joincnt jc;

    sl_joincnt_init(&jc, 1);
    sl_joincnt_signal(&jc);
    sl_joincnt_wait(&jc);
    sl_joincnt_signal(&jc);
}

static void m_deadlock(void *arg)
{
    struct sl_joincnt jc;

    sl_joincnt_init(&jc, 1);
    sl_joincnt_wait(&jc);                     /* nobody will signal */
}

static void m_toomany(void *arg)
{
    for (int i = 0; i < SL_THREAD_READY_MAX + 1; i++)
        sl_thread_spawn(nothing, NULL);
}

static void death(const char *what, int procs, void (*m)(void *))
{
    fflush(stdout);
    pid_t pid = fork();
    int st = 0;

    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        scenario = m;
        alarm(20);
        run_job(procs, body);
        _exit(0);
    }
    waitpid(pid, &st, 0);
    if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL))
        fprintf(stderr, "death test %s: status 0x%x, expected death by SIGILL\n", what, st);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_all(1);
    test_all(2);
    test_all(3);
    test_all(8);
    death("stack-overflow", 2, m_overflow);
    death("unjoined", 1, m_unjoined);
    death("unjoined-3", 3, m_unjoined);
    death("oversignal", 2, m_oversignal);
    death("deadlock", 1, m_deadlock);
    death("too-many-ready", 1, m_toomany);
    return check_done("test_uthread");
}
