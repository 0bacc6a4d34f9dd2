/* test_syncstat.c - what the library publishes for policy=adaptive (abi.h struct sl_sync; base/syncstat.h,
   wait/wait_stats.c, threads/uthread.c's idle streaks) on the host backend. This file plays a kernel that
   maps the page (SL_INFO_SYNCSTAT: each process gets its record, platform/host.h) and reads the wait times
   (sync_timed). A run of placed threads publishes each idle streak of a process as an episode and a wait;
   its threads' own waits are not the process's (it runs its other threads meanwhile) and are not counted:
   counted, they covered the process's compute, and a job seemed to wait more than it ran. */
#include <string.h>
#include <time.h>
#include "check.h"
#include "schedlab.h"
#include "platform/host.h"
#include "hostjob.h"
#include "threads/uthread.h"
#include "wait/wait.h"
#include "barriers/barrier.h"

#define PROCS 2

static uint32_t flag, worked;
static uint64_t run_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void busy(uint64_t ns)
{
    for (uint64_t t0 = now_ns(); now_ns() - t0 < ns;)
        ;
}

/* On process 0: the waiter waits for process 1's setter, and its process runs the worker meanwhile; the
   setter sets the flag only once the worker is done and a process has run out of threads (a streak), so
   there is one however the host schedules the two. */
static void waiter(void *arg) { (void)arg; sl_wait_ne(&flag, 0, SL_WAIT_SPIN); }
static void worker(void *arg) { (void)arg; busy(2000000); sl_wait_set(&worked, 1, SL_WAIT_SPIN); }
static uint32_t episodes(void)
{
    uint32_t n = 0;
    for (int i = 0; i < PROCS; i++)
        n += __atomic_load_n(&host_job.sync[i].episodes, __ATOMIC_RELAXED);
    return n;
}

static void setter(void *arg)
{
    (void)arg;
    sl_wait_ne(&worked, 0, SL_WAIT_SPIN);
    while (episodes() == 0) /* a process has run out of threads (whichever the host let run them) */
        sl_thread_yield();
    busy(1000000);
    sl_wait_set(&flag, 1, SL_WAIT_SPIN);
}

static void run_main(void *arg)
{
    (void)arg;
    sl_thread_t *t[3] = { sl_thread_create_on(0, waiter, 0), sl_thread_create_on(0, worker, 0),
                          sl_thread_create_on(1, setter, 0) };
    for (int i = 0; i < 3; i++)
        sl_thread_join(t[i]);
}

static int timed = 1; /* the kernel reads the wait times (the info page's sync_timed) */

/* The kernel's part: map the page and time the waits (or not), before the library starts counting. */
static void publish(void)
{
    host_job.info.flags |= SL_INFO_SYNCSTAT;
    host_job.info.sync_timed = (uint32_t)timed;
    sl_plat_proc()->sync = &host_job.sync[0];
    CHECK(sl_wait_stats_start() == 1);
    sl_barrier_stats_start();
}

static void body(void)
{
    uint64_t t0 = now_ns();
    sl_threads_run(run_main, 0);
    run_ns = now_ns() - t0;
}

/* ---- every wait kind and every barrier shape counts (wait.h SL_WAIT_COUNTED, barrier_impl.h
   SL_BARRIER_COUNTED): each arrival is an episode; while the waits are timed, each is counted and closed;
   untimed, none is. The kinds and shapes come from their tables, so a new one is tested too. ---- */
#define EPISODES 40
static struct sl_barrier bar;
static const struct sl_barrier_shape *shape;
static enum sl_wait kind;

static void arrive(void *arg, int index)
{
    (void)arg;
    (void)index;
    for (int e = 0; e < EPISODES; e++)
        sl_barrier_wait(&bar);
}

static void barrier_body(void)
{
    sl_barrier_init_shape(&bar, shape, PROCS, kind);
    CHECK(bar.shape->wait == shape->counted_wait);    /* the counting shape */
    CHECK(sl_waits[kind]->wait == sl_waits[kind]->counted_wait);
    sl_run_procs(arrive, 0);
    sl_barrier_destroy(&bar);
}

static void test_every_shape_and_kind_counts(void)
{
    uint32_t timed_waits = 0;
    for (unsigned i = 0; sl_barrier_shape_at(i); i++)
        for (int k = 0; k < SL_NWAITS; k++)
            for (timed = 0; timed <= 1; timed++) {
                shape = sl_barrier_shape_at(i);
                kind = (enum sl_wait)k;
                memset(host_job.sync, 0, sizeof host_job.sync);
                hostjob_run("test_syncstat", PROCS, barrier_body);
                uint32_t eps = 0, waits = 0;
                for (int p = 0; p < PROCS; p++) {
                    const struct sl_sync *st = &host_job.sync[p];
                    eps += st->episodes;
                    waits += st->waits;
                    CHECK(st->in_wait == 0 && st->wait_open == 0);
                    CHECK(timed || st->wait_ticks == 0);
                }
                if (eps != PROCS * EPISODES || (!timed && waits) || waits > eps)
                    fprintf(stderr, "  %s/%s timed=%d: %u episodes, %u waits\n", shape->name, sl_waits[k]->name,
                            timed, eps, waits);
                CHECK(eps == PROCS * EPISODES);   /* every arrival, by the shape's counted wait */
                CHECK(timed || waits == 0);       /* untimed: the kind's own wait, nothing counted */
                CHECK(waits <= eps);
                timed_waits += timed ? waits : 0;
            }
    CHECK(timed_waits > 0); /* some arrival found its partner missing and waited, counted */
}

int main(void)
{
    memset(host_job.sync, 0, sizeof host_job.sync);
    hostjob_at_start = publish;
    hostjob_run("test_syncstat", PROCS, body);
    for (int i = 0; i < PROCS; i++) {
        const struct sl_sync *s = &host_job.sync[i];
        printf("process %d: %u episodes, %u waits, %.1f ms waited of %.1f\n", i, s->episodes, s->waits,
               s->wait_ticks / 1e6, run_ns / 1e6);
        CHECK(s->in_wait == 0 && s->wait_open == 0);   /* every wait closed, none left open */
        CHECK(s->waits <= s->episodes);                /* the streaks' waits only, not the threads' */
        CHECK(s->wait_ticks <= run_ns);                /* never more waiting than the run lasted */
    }
    /* a process ran out of threads before the setter set the flag (so the waiter did wait): a streak - its
       wait counted if that process found the waiter again, else ended with the run */
    CHECK(episodes() >= 1);
    test_every_shape_and_kind_counts();
    return check_done("test_syncstat");
}
