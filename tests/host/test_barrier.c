/* test_barrier.c - every barrier shape x wait kind, with the host backend's pthreads playing processes.
 *
 * Each configuration runs n participants (more than the host's cores for n > 2) through many episodes
 * with random delays (busy loops, yields, short sleeps) and checks after every episode e:
 *   lockstep    a shared arrival counter bumped before each wait lies in [(e+1)n, (e+2)n - 1]: everybody
 *               of episode e arrived, nobody is past episode e+1
 *   visibility  every participant's plain (non-atomic) write made before arriving is seen by all after
 *               the barrier (double-buffered by episode parity, so the test itself has no race; under
 *               TSan a missing happens-before shows up as a report)
 * The adaptive kind also runs with one participant "preempted" (its running[] entry cleared while it
 * dawdles): the others must sleep then (on the host adaptive otherwise waits as twophase does, so
 * whether it sleeps depends on timing and is not checked).
 * Spinning kinds get fewer episodes when oversubscribed (each episode then needs host time slices), and
 * every configuration stops early (after a minimum) once it has used its time budget.
 * Processes wait at a gate until all exist: host_start_proc writes running[] plainly.
 * Oversubscribed: the test restricts its affinity mask to 1 and to 2 CPUs and runs 4 and 8 participants
 * of every shape x wait kind on it; the host backend must see the job crowded (lib/platform/host_spin.h) and the
 * waits must still keep lockstep, and its runnable count must come back to zero after each job.
 * Last, user-level threads (uthread.h) as participants, six of them on two processes: a sleeping wait
 * must suspend the thread, not its process, or the episode could never complete (the alarm fires).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "schedlab.h"
#include "barriers/barrier.h"
#include "platform/host.h"
#include "threads/uthread.h"
#include "check.h"

#define MAXP 16

struct run {
    struct sl_barrier bar;
    int n, episodes, preempt;       /* preempt: participant n-1 clears its running[] while it dawdles */
    int last, min_episodes;         /* the last episode: process 0 moves it earlier when over budget */
    double t0, budget;
    uint32_t go;                    /* set once every process exists (host_start_proc writes running[]) */
    uint32_t finished;              /* participants out of their last episode */
    uint64_t arrived __attribute__((aligned(64)));
    uint64_t bad_lockstep, bad_seen;
    uint32_t crowded_seen;          /* a participant found the job crowded (sl_plat_crowded) on arrival */
    struct { uint32_t v; } __attribute__((aligned(64))) slot[2][MAXP];
};

static int ncores;
static uint32_t crowded_seen; /* the last configuration's run->crowded_seen */

static void
dawdle(struct sl_rng *r)
{
    uint64_t x = sl_rng_below(r, 64);

    if (x == 0)
        usleep((useconds_t)sl_rng_below(r, 200));
    else if (x < 8)
        sched_yield();
    else
        for (volatile uint64_t i = sl_rng_below(r, 2000); i > 0; i--)
            ;
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
participant(void *arg, int id)
{
    struct run *run = arg;
    struct sl_rng r;
    uint64_t bad_lockstep = 0, bad_seen = 0, n = (uint64_t)run->n;

    sl_rng_seed(&r, 42, (uint64_t)id);
    while (!__atomic_load_n(&run->go, __ATOMIC_ACQUIRE))
        sched_yield();
    for (int e = 0;; e++) {
        if (run->preempt && id == run->n - 1) {
            /* "preempted": not running until every other participant has arrived and one of them went
               to sleep (adaptive must not spin for a participant that does not run), 2 s at most - so
               the outcome does not depend on how the host schedules the threads */
            uint64_t sleeps = sl_wait_blocks();
            double t = now_s();
            __atomic_store_n(&host_job.info.running[id], 0, __ATOMIC_RELAXED);
            while ((__atomic_load_n(&run->arrived, __ATOMIC_RELAXED) < (uint64_t)e * n + n - 1 ||
                    sl_wait_blocks() == sleeps) && now_s() - t < 2.0)
                usleep(50);
            __atomic_store_n(&host_job.info.running[id], 1, __ATOMIC_RELAXED);
        } else {
            dawdle(&r);
        }
        run->slot[e & 1][id].v = (uint32_t)e + 1;
        __atomic_add_fetch(&run->arrived, 1, __ATOMIC_RELAXED);
        if (sl_plat_crowded())
            __atomic_store_n(&run->crowded_seen, 1, __ATOMIC_RELAXED);
        sl_barrier_wait(&run->bar);
        uint64_t c = __atomic_load_n(&run->arrived, __ATOMIC_RELAXED);
        if ((c < (uint64_t)(e + 1) * n || c > (uint64_t)(e + 2) * n - 1) && bad_lockstep++ == 0)
            fprintf(stderr, "  %s/%s n=%d: participant %d passed episode %d with %lu arrivals\n",
                    run->bar.shape->name, sl_waits[run->bar.wait]->name, run->n, id, e, (unsigned long)c);
        for (int j = 0; j < run->n; j++)
            if (run->slot[e & 1][j].v != (uint32_t)e + 1)
                bad_seen++;
        /* 0 moves `last` before arriving at e+1, so everyone reads the same value after e+1 */
        if (e == __atomic_load_n(&run->last, __ATOMIC_RELAXED))
            break;
        if (id == 0 && e + 1 >= run->min_episodes && now_s() - run->t0 > run->budget)
            __atomic_store_n(&run->last, e + 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&run->bad_lockstep, bad_lockstep, __ATOMIC_RELAXED);
    __atomic_add_fetch(&run->bad_seen, bad_seen, __ATOMIC_RELAXED);
    /* an exiting process's running[] drops to 0: wait until every participant has left the last barrier,
       or a slow one's adaptive wait could count a (harmless) attempt to sleep for it */
    __atomic_add_fetch(&run->finished, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&run->finished, __ATOMIC_ACQUIRE) < (uint32_t)run->n)
        sched_yield();
}

/* Start n processes running fn, as the kernel would, open the gate, and wait for all of them. */
static void
run_procs(int n, void (*fn)(void *, int), void *arg, uint32_t *go)
{
    pthread_mutex_lock(&host_job.lock);
    host_job.created = 0;
    host_job.info.nprocs = (uint32_t)n;
    for (int i = 0; i < n; i++)
        __atomic_store_n(&host_job.info.running[i], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++)
        host_start_proc(i, fn, arg);
    __atomic_store_n(go, 1, __ATOMIC_RELEASE);
    while (host_job.live > 0)
        pthread_cond_wait(&host_job.exited, &host_job.lock);
    pthread_mutex_unlock(&host_job.lock);
    for (int i = 0; i < n; i++)
        pthread_join(host_job.tid[i], NULL);
}

/* One configuration of up to `episodes` episodes, fewer (but at least min_episodes) once it has run
   for `budget` seconds (a loaded host makes spinning slow); returns how many sleeps its waits made. */
static uint64_t
one(const struct sl_barrier_shape *shape, enum sl_wait wait, int n, int episodes, int min_episodes,
    double budget, int preempt)
{
    struct run *run = calloc(1, sizeof *run);
    uint64_t sleeps0 = sl_wait_blocks();
    double t0 = now_s();

    run->n = n;
    run->episodes = episodes;
    run->preempt = preempt;
    run->last = episodes - 1;
    run->min_episodes = min_episodes;
    run->budget = budget;
    run->t0 = t0;
    sl_barrier_init_shape(&run->bar, shape, (uint32_t)n, wait);
    run_procs(n, participant, run, &run->go);
    CHECK(run->bad_lockstep == 0);
    CHECK(run->bad_seen == 0);
    CHECK(run->arrived == (uint64_t)n * (uint64_t)(run->last + 1));
    if (run->bad_lockstep || run->bad_seen)
        fprintf(stderr, "  %s/%s n=%d: lockstep %lu, seen %lu\n", shape->name, sl_waits[wait]->name, n,
                (unsigned long)run->bad_lockstep, (unsigned long)run->bad_seen);
    if (getenv("TEST_VERBOSE"))
        printf("  %-11s %-8s n=%d episodes=%4d%s %.3f s\n", shape->name, sl_waits[wait]->name, n, run->last + 1,
               preempt ? " preempt" : "", now_s() - t0);
    crowded_seen = run->crowded_seen;
    sl_barrier_destroy(&run->bar);
    free(run);
    return sl_wait_blocks() - sleeps0;
}

static void
test_every_shape_and_wait(void)
{
    static const int ns[] = { 1, 2, 3, 5, 8 };

    for (unsigned s = 0; sl_barrier_shape_at(s); s++)
        for (int w = 0; w < SL_NWAITS; w++)
            for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                int n = ns[k], spins = w == SL_WAIT_SPIN;
                int most = spins && n > ncores ? 12 : 200, least = spins && n > ncores ? 4 : 20;
                uint64_t sleeps = one(sl_barrier_shape_at(s), (enum sl_wait)w, n, most, least, 0.1, 0);
                if (w == SL_WAIT_SPIN)
                    CHECK(sleeps == 0);
            }
}

static void
test_adaptive_sleeps_when_a_participant_is_not_running(void)
{
    for (unsigned s = 0; sl_barrier_shape_at(s); s++) {
        uint64_t sleeps = one(sl_barrier_shape_at(s), SL_WAIT_ADAPTIVE, ncores >= 3 ? 3 : 2, 40, 10, 0.2, 1);
        CHECK(sleeps > 0);
    }
}

/* Every shape x kind with 4 and 8 participants on 1 and on 2 CPUs of the test's own affinity mask (the
   job's processes inherit it, and host_start_proc(0) takes the job's CPU count from it). */
static void
test_oversubscribed(void)
{
    static const int ns[] = { 4, 8 };
    cpu_set_t all, few;

    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        perror("sched_getaffinity");
        CHECK(0);
        return;
    }
    for (int cpus = 1; cpus <= 2 && cpus <= CPU_COUNT(&all); cpus++) {
        CPU_ZERO(&few);
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < cpus; c++)
            if (CPU_ISSET(c, &all)) {
                CPU_SET(c, &few);
                k++;
            }
        CHECK(sched_setaffinity(0, sizeof few, &few) == 0);
        for (unsigned s = 0; sl_barrier_shape_at(s); s++)
            for (int w = 0; w < SL_NWAITS; w++)
                for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                    int most = w == SL_WAIT_SPIN ? 6 : 100, least = w == SL_WAIT_SPIN ? 3 : 10;
                    one(sl_barrier_shape_at(s), (enum sl_wait)w, ns[k], most, least, 0.1, 0);
                    CHECK(host_job.crowd.cpus == (uint32_t)cpus);
                    CHECK(crowded_seen == 1);
                    CHECK(__atomic_load_n(&host_job.crowd.runnable, __ATOMIC_RELAXED) == 0);
                }
    }
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
}

static void
test_twophase_bound(void)
{
    uint64_t old = sl_wait_twophase_bound(0), sleeps;

    /* bound 0: a waiter that finds the word unchanged sleeps at once */
    sleeps = one(&sl_barrier_central, SL_WAIT_TWOPHASE, 2, 40, 10, 0.2, 1);
    CHECK(sleeps > 0);
    CHECK(sl_wait_twophase_bound(old) == 0);
}

/* ---- threads as participants ---- */

#define NTHREADS 6

struct tpart {
    struct run *run;
    int id;
};

static void
thread_participant(void *arg)
{
    struct tpart *me = arg;
    struct run *run = me->run;
    uint64_t bad = 0, n = (uint64_t)run->n;

    for (int e = 0; e < run->episodes; e++) {
        if ((e + me->id) % 3 == 0)
            sl_thread_yield();                  /* let the other threads of this process run first */
        run->slot[e & 1][me->id].v = (uint32_t)e + 1;
        __atomic_add_fetch(&run->arrived, 1, __ATOMIC_RELAXED);
        sl_barrier_wait_as(&run->bar, (uint32_t)me->id);
        uint64_t c = __atomic_load_n(&run->arrived, __ATOMIC_RELAXED);
        bad += c < (uint64_t)(e + 1) * n || c > (uint64_t)(e + 2) * n - 1;
        for (int j = 0; j < run->n; j++)
            bad += run->slot[e & 1][j].v != (uint32_t)e + 1;
    }
    __atomic_add_fetch(&run->bad_lockstep, bad, __ATOMIC_RELAXED);
}

static void
threads_main(void *arg)
{
    struct run *run = arg;
    struct tpart parts[NTHREADS];
    sl_thread_t *t[NTHREADS];

    for (int i = 0; i < NTHREADS; i++) {
        parts[i] = (struct tpart){ run, i };
        t[i] = sl_thread_create(thread_participant, &parts[i]);
    }
    for (int i = 0; i < NTHREADS; i++)
        sl_thread_join(t[i]);
}

static void
threads_proc0(void *arg, int index)
{
    (void)index;
    sl_threads_run(threads_main, arg);
}

static void
test_threads_suspend_not_their_process(void)
{
    static const enum sl_wait kinds[] = { SL_WAIT_BLOCK, SL_WAIT_TWOPHASE };

    for (unsigned s = 0; sl_barrier_shape_at(s); s++)
        for (unsigned k = 0; k < 2; k++) {
            struct run *run = calloc(1, sizeof *run);
            run->n = NTHREADS;
            run->episodes = 60;
            sl_barrier_init_shape(&run->bar, sl_barrier_shape_at(s), NTHREADS, kinds[k]);
            pthread_mutex_lock(&host_job.lock);
            host_job.created = 0;
            host_job.info.nprocs = 2;
            host_start_proc(0, threads_proc0, run);    /* sl_threads_run creates process 1 */
            while (host_job.live > 0)
                pthread_cond_wait(&host_job.exited, &host_job.lock);
            pthread_mutex_unlock(&host_job.lock);
            for (int i = 0; i < host_job.created; i++)
                pthread_join(host_job.tid[i], NULL);
            CHECK(run->bad_lockstep == 0);
            CHECK(run->arrived == (uint64_t)NTHREADS * 60);
            sl_barrier_destroy(&run->bar);
            free(run);
        }
}

static void
test_names(void)
{
    CHECK(sl_barrier_shape_find("central") == &sl_barrier_central);
    CHECK(sl_barrier_shape_find("tree") == &sl_barrier_tree);
    CHECK(sl_barrier_shape_find("combination") == &sl_barrier_combination);
    CHECK(sl_barrier_shape_find("ring") == 0);
    CHECK(sl_wait_parse("spin") == SL_WAIT_SPIN);
    CHECK(sl_wait_parse("block") == SL_WAIT_BLOCK);
    CHECK(sl_wait_parse("twophase") == SL_WAIT_TWOPHASE);
    CHECK(sl_wait_parse("adaptive") == SL_WAIT_ADAPTIVE);
    CHECK(sl_wait_parse("yield") == -1);
}

/* SL_WAIT_CHOICES, the apps' barrier= choices, names exactly the kinds of sl_waits[], in enum order. */
static void
test_wait_choices(void)
{
    char choices[] = SL_WAIT_CHOICES;
    int n = 0;

    for (char *save, *c = strtok_r(choices, "|", &save); c; c = strtok_r(NULL, "|", &save), n++)
        CHECK(n < SL_NWAITS && strcmp(c, sl_waits[n]->name) == 0);
    CHECK(n == SL_NWAITS);
}

/* set/add keep 31-bit values and wrap; the sleepers bit never leaks into a value. */
static void
test_word_ops(void)
{
    uint32_t w = SL_WAIT_VALUE;

    CHECK(sl_wait_add(&w, 1, SL_WAIT_BLOCK) == 0);
    CHECK(w == 0);
    w = 5 | SL_WAIT_SLEEPERS;               /* as if a waiter slept: add wakes and clears the bit */
    CHECK(sl_wait_add(&w, 2, SL_WAIT_TWOPHASE) == 7);
    CHECK(w == 7);
    w = 9 | SL_WAIT_SLEEPERS;
    sl_wait_set(&w, 10, SL_WAIT_ADAPTIVE);
    CHECK(w == 10 && sl_wait_value(&w) == 10);
    sl_wait_set(&w, 11, SL_WAIT_SPIN);
    CHECK(sl_wait_value(&w) == 11);
}

static void
on_alarm(int sig)
{
    static const char msg[] = "test_barrier: timed out after 120 s: a barrier deadlocked?\n";

    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

int
main(void)
{
    struct sl_info *in = &host_job.info;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);

    ncores = nc < 1 ? 1 : (int)nc;
    signal(SIGALRM, on_alarm);
    alarm(120);
    in->magic = SL_INFO_MAGIC;
    in->job_id = 1;
    in->nharts = (uint32_t)(ncores > SL_MAX_HARTS ? SL_MAX_HARTS : ncores);
    in->nnodes = 1;
    in->timebase_hz = 1000000000u;
    in->seed = 1;
    snprintf(in->app, sizeof in->app, "test_barrier");
    test_names();
    test_wait_choices();
    test_word_ops();
    test_every_shape_and_wait();
    test_adaptive_sleeps_when_a_participant_is_not_running();
    test_twophase_bound();
    test_oversubscribed();
    test_threads_suspend_not_their_process();
    return check_done("test_barrier");
}
