/* test_workers.c - worker runs (lib/workers/workers.c) and process control (lib/threads/procctl.c) on the host backend,
 * with this program playing the kernel: it marks the job adaptive and changes the allotment
 * (info->allot_count) through a cycle of shrinks and grows while the workers run a barrier loop: change k
 * comes 100-600 us after the workers pass the middle of allotment k-1, and they wait for it before episode
 * k*step, so the whole cycle lands inside the run whatever the host does to the controller thread.
 *
 * For every barrier shape x wait kind, P = 4 workers on 4 processes run many episodes; after each episode
 * e every worker checks lockstep (a shared arrival counter lies in [(e+1)P, (e+2)P - 1]) and that the
 * plain writes of every worker before the barrier are visible after it. At the end: every worker ran
 * every episode exactly once (no worker lost or run twice), process control really suspended and
 * resumed processes, workers really ran away from home while theirs was suspended, and the run ended
 * (an alarm turns a lost wake-up or a deadlock into a failure). Then the allotment drops to 1 for good,
 * so every worker of the suspended processes must finish on the one process left.
 *
 * Last, the lost poke: the blocking kinds again with the window between a process's last look for work and
 * its futex check on a wait word widened (the binary is linked with --wrap=sl_sys_futex_wait), and folded
 * processes sleeping on wait words too (sl_threads_word_sleep_folded), so that ringers poke them at every
 * wake of a sibling. A poke that another waiter of the word undoes before that check (it sets the sleepers
 * bit again) once left a process asleep with the worker it was given, about one run in twenty of this
 * whole program on a loaded host; with the window widened every run of these configurations hit it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "schedlab.h"
#include "barriers/barrier.h"
#include "wait/wait.h"
#include "threads/uthread.h"
#include "workers/workers.h"
#include "hostjob.h"
#include "check.h"

#define P        4
#define EPISODES 400
#define FIXED_BY 40 /* allot=1: the change is made before this episode (> 20, see controller) */

struct wtest {
    struct sl_barrier bar;
    uint64_t arrived __attribute__((aligned(64)));
    uint64_t bad_lockstep, bad_seen, away;
    uint32_t ran[P];                 /* episodes each worker completed */
    struct { uint32_t v; } __attribute__((aligned(64))) slot[2][P];
    uint32_t episodes;
};

static struct wtest W;
static int controller_stop;         /* atomic */
static unsigned controller_seed = 1;
static int fixed_allot;              /* > 0: the controller sets this once and stops changing it */
static uint32_t started;             /* set (release) once process 0 has filled the info page */
static uint32_t changes;             /* allotment changes made so far (release) */
static uint32_t step;                /* episodes per allotment in the random cycle */

static void worker(void *arg, int id)
{
    struct wtest *w = arg;
    struct sl_rng r;

    sl_rng_init(&r, (uint64_t)id + 11);
    for (uint32_t e = 0; e < w->episodes; e++) {
        /* the random cycle's change k is made before episode k*step, so every change - a grow after a
           shrink too - lands inside the run however the host schedules the controller */
        while (!fixed_allot && e > 0 && e % step == 0 && __atomic_load_n(&changes, __ATOMIC_ACQUIRE) < e / step)
            sl_thread_pause();
        /* and the fixed allotment before episode FIXED_BY (the controller makes it after episode 20):
           otherwise fast waits on a loaded host could finish the run before the controller ran at all */
        while (fixed_allot && e == FIXED_BY && __atomic_load_n(&changes, __ATOMIC_ACQUIRE) < 1)
            sl_thread_pause();
        uint32_t spin = (uint32_t)sl_rng_below(&r, 8000);

        for (volatile uint32_t i = 0; i < spin; i++)
            ;
        w->slot[e & 1][id].v = e + 1;
        if (sl_self() != id)
            __atomic_add_fetch(&w->away, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&w->arrived, 1, __ATOMIC_RELAXED);
        sl_barrier_wait(&w->bar);
        uint64_t c = __atomic_load_n(&w->arrived, __ATOMIC_RELAXED);
        if (c < (uint64_t)(e + 1) * P || c > (uint64_t)(e + 2) * P - 1)
            __atomic_add_fetch(&w->bad_lockstep, 1, __ATOMIC_RELAXED);
        for (int j = 0; j < P; j++)
            if (w->slot[e & 1][j].v != e + 1)
                __atomic_add_fetch(&w->bad_seen, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&w->ran[id], 1, __ATOMIC_RELAXED);
        /* the slot of episode e is rewritten in episode e+2, after the barrier of e+1 */
        sl_barrier_wait(&w->bar);
    }
}

static uint32_t min_ran(void)
{
    uint32_t m = UINT32_MAX;
    for (int i = 0; i < P; i++) {
        uint32_t v = __atomic_load_n(&W.ran[i], __ATOMIC_RELAXED);
        m = v < m ? v : m;
    }
    return m;
}

/* The "kernel": the next allotment of a cycle that shrinks and grows by every step (P = 4), stamped as
   partition.c stamps it. */
static const uint32_t cycle[] = { 1, 4, 2, 3, 1, 2, 4, 3, 2, 1, 3, 4 };

static void *controller(void *arg)
{
    unsigned seed = controller_seed;
    struct timespec ts;

    (void)arg;
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) && !__atomic_load_n(&controller_stop, __ATOMIC_RELAXED))
        usleep(50);
    if (fixed_allot) {
        while (min_ran() < 20 && !__atomic_load_n(&controller_stop, __ATOMIC_RELAXED))
            usleep(100);
        __atomic_store_n(&host_job.info.allot_count, (uint32_t)fixed_allot, __ATOMIC_RELAXED);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        __atomic_store_n(&host_job.info.allot_stamp, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&changes, 1, __ATOMIC_RELEASE);
        return 0;
    }
    for (unsigned k = 1; !__atomic_load_n(&controller_stop, __ATOMIC_RELAXED); k++) {
        /* change k once the workers are past the middle of allotment k-1 (they wait for it at k*step),
           after 100-600 us */
        while (!__atomic_load_n(&controller_stop, __ATOMIC_RELAXED) && min_ran() + step / 2 < k * step)
            usleep(50);
        usleep(100 + (useconds_t)(rand_r(&seed) % 500));
        __atomic_store_n(&host_job.info.allot_count, cycle[(k - 1) % (sizeof cycle / sizeof cycle[0])],
                         __ATOMIC_RELAXED);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        __atomic_store_n(&host_job.info.allot_stamp, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&changes, k, __ATOMIC_RELEASE);
    }
    return 0;
}

static void adaptive_info(void);
static const struct sl_barrier_shape *cur_shape;
static enum sl_wait cur_wait;

static void body(void)
{
    sl_barrier_init_shape(&W.bar, cur_shape, P, cur_wait);
    sl_run_workers(worker, &W);
    sl_barrier_destroy(&W.bar);
}

/* Widened in the lost-poke configurations: a sleep on a wait word (the sleepers bit in the value it waits
   on; bells and resume words never have it) first naps, inside the window uthread_impl.h describes. */
static int widen_window;
long __real_sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us);
long __wrap_sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us);
long __wrap_sl_sys_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_us)
{
    if (__atomic_load_n(&widen_window, __ATOMIC_RELAXED) && (expected & SL_WAIT_SLEEPERS))
        usleep(200);
    return __real_sl_sys_futex_wait(addr, expected, timeout_us);
}

static void alarm_handler(int sig)
{
    (void)sig;
    fprintf(stderr, "test_workers: a worker run did not finish in time (lost wake-up or deadlock)\n");
    _exit(2);
}

static void one(const struct sl_barrier_shape *shape, enum sl_wait wait, uint32_t episodes, int allot)
{
    pthread_t ctl;
    struct sl_thread_stats st;
    uint32_t total = 0;

    memset(&W, 0, sizeof W);
    W.episodes = episodes;
    cur_shape = shape;
    cur_wait = wait;
    __atomic_store_n(&controller_stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&started, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&changes, 0, __ATOMIC_RELAXED);
    step = episodes / (sizeof cycle / sizeof cycle[0] + 2);   /* the whole cycle fits in the run */
    fixed_allot = allot;
    controller_seed++;
    alarm(getenv("WT_ALARM") ? atoi(getenv("WT_ALARM")) : 120);
    /* hostjob_run fills the info page; the flags and allotment are set once process 0 runs */
    hostjob_at_start = adaptive_info;
    pthread_create(&ctl, 0, controller, 0);
    hostjob_run("workers", P, body);
    __atomic_store_n(&controller_stop, 1, __ATOMIC_RELAXED);
    pthread_join(ctl, 0);
    alarm(0);
    sl_threads_stats(&st);
    for (int i = 0; i < P; i++) {
        CHECK(W.ran[i] == episodes);
        total += W.ran[i];
    }
    CHECK(total == (uint32_t)P * episodes);
    CHECK(W.bad_lockstep == 0);
    CHECK(W.bad_seen == 0);
    CHECK(st.suspends > 0);
    if (!allot) {
        CHECK(st.resumes > 0);
    } else {
        CHECK(W.away > 0);               /* allotment 1: three workers finished away from home */
    }
    fflush(stderr);
    printf("  %-11s %-8s allot=%s%s: suspends=%lu resumes=%lu away=%lu\n", shape->name, sl_waits[wait]->name,
           allot ? "1" : "random", widen_window ? " (window widened)" : "", (unsigned long)st.suspends,
           (unsigned long)st.resumes, (unsigned long)W.away);
}

static void adaptive_info(void)
{
    __atomic_store_n(&host_job.info.allot_count, P, __ATOMIC_RELAXED);
    __atomic_or_fetch(&host_job.info.flags, SL_INFO_ADAPTIVE, __ATOMIC_RELAXED);
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);        /* a failed CHECK (stderr) shows under its configuration */
    int tsan = 0;
#if defined(__SANITIZE_THREAD__)
    tsan = 1;
#endif
    signal(SIGALRM, alarm_handler);
    for (unsigned s = 0; sl_barrier_shape_at(s); s++)
        for (int k = 0; k < SL_NWAITS; k++) {
            one(sl_barrier_shape_at(s), (enum sl_wait)k, tsan ? 200 : EPISODES, 0);
        }
    for (int k = 0; k < SL_NWAITS; k++)
        one(&sl_barrier_central, (enum sl_wait)k, tsan ? 100 : 400, 1);
    __atomic_store_n(&widen_window, 1, __ATOMIC_RELAXED);
    sl_threads_word_sleep_folded(1); /* folded vps sleep on words too: pokes at every wake of a sibling */
    for (int k = 0; k < SL_NWAITS; k++)
        if (k != SL_WAIT_SPIN)
            for (unsigned s = 0; sl_barrier_shape_at(s); s++)
                one(sl_barrier_shape_at(s), (enum sl_wait)k, 100, 0);
    return check_done("test_workers");
}
