/*
 * workers.c - sl_run_workers: an app's P logical workers as user-level
 * threads, worker i pinned to process i at start (Markatos 3.3: threads on
 * virtual processors; 3.4.3: when a VP loses its processor, "its threads
 * migrate" to the partition's other processors).
 *
 * The run is pinned-only (sl_threads_run_pinned, threads/uthread.h): the main thread (pinned to
 * process 0) spawns the P workers and waits for them on a join counter;
 * nothing is ever stealable, so a process whose worker waits and that has
 * no other worker ready does exactly what the process did before workers
 * were threads: it spins on the word itself, or sleeps in the kernel until
 * the word changes (the wait kinds call sl_thread_pause and park, and the
 * idle loop of a pinned-only run sleeps at once). So under timeslice and
 * gang, one worker per process, nothing a user can see changes.
 *
 * Under partition with adapt=yes, process control (procctl.c) suspends the
 * processes the allotment no longer covers, at their next safe point (a
 * barrier arrival), and their workers run on the processes that remain,
 * spread evenly; a worker that has to wait there first lets another ready
 * worker of that process run (a user-level switch), and waits in its kind
 * only when none is ready. When harts come back, the suspended processes
 * resume and their workers go home at their next wait.
 *
 * Worker identity: inside a worker sl_worker_id() is the worker's id (what
 * barriers use as the participant), sl_self() the process it runs on now;
 * both are the thread layer's (sl_thread_set_worker). This layer uses the
 * thread layer's public API only (threads/uthread.h).
 * The run's keys reach the RESULT line through sl_report_keys_from, which
 * sl_run_workers sets: the console below never names this layer.
 */
#include "schedlab.h"
#include "threads/uthread.h"
#include "workers/workers.h"
#include "base/syncstat.h"

struct wrun {
    sl_workfn fn;
    void *arg;
    int n;
    struct sl_joincnt done;
};

struct wstart {
    struct wrun *w;
    int id;
};

static struct sl_thread_stats last_workers;
static int worker_runs;

static void worker_entry(void *a)
{
    struct wstart *ws = a;
    struct wrun *w = ws->w;

    sl_thread_set_worker(ws->id);
    w->fn(w->arg, ws->id);
    sl_joincnt_signal(&w->done);
}

static void workers_main(void *a)
{
    struct wrun *w = a;
    struct wstart *ws = sl_malloc((size_t)w->n * sizeof *ws);

    if (!ws)
        sl_uthread_fatal("out of memory for %d workers", w->n);
    sl_joincnt_init(&w->done, (uint32_t)w->n);
    for (int i = 0; i < w->n; i++) {
        ws[i] = (struct wstart){ w, i };
        sl_thread_spawn_on(i, worker_entry, &ws[i]);
    }
    sl_joincnt_wait(&w->done);
    sl_free(ws);
}

void sl_run_workers(sl_workfn fn, void *arg)
{
    struct wrun w = { fn, arg, sl_nprocs(), { 0, 0 } };

    sl_report_keys_from(sl_workers_keys);
    sl_sync_units((uint32_t)w.n); /* the policy's speedup signal (base/syncstat.h) */
    sl_threads_run_pinned(workers_main, &w);
    sl_sync_units(0);
    sl_threads_stats(&last_workers);
    worker_runs++;
}

int sl_workers_keys(char *buf, size_t cap)
{
    const struct sl_thread_stats *st = &last_workers;
    uint64_t hz = sl_info()->timebase_hz;

    if (!worker_runs || !(sl_info()->flags & SL_INFO_ADAPTIVE) || cap == 0)
        return 0;
    return sl_snprintf(buf, cap, "suspends=%lu resumes=%lu react_us=%lu react_max_us=%lu", (unsigned long)st->suspends,
                       (unsigned long)st->resumes,
                       (unsigned long)(st->suspends ? st->react_ticks * 1000000 / hz / st->suspends : 0),
                       (unsigned long)(st->react_max_ticks * 1000000 / hz));
}
