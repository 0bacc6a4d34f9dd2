/*
 * sim_program.c - a job's life around its program, and the barrier program, as the app models run them
 * (sim_kit.h; an app's struct sim_prog says what is its own).
 *
 * A job's life (lib/base/procs.c, lib/workers/workers.c): only process 0 exists at admission. It runs its set-up
 * (proc_start: loading, QEMU translating the code, the app's serial part; under --model its arrays and the
 * library's heap, sim_start.c), creates the others one proc_create system call at a time (each is bound by
 * the policy's proc_new then, so timeslice's "least loaded hart" sees the other jobs' processes created
 * meanwhile, as on QEMU), then hands the workers out (workers_start) while the others, already running,
 * sleep until it has (their first futex_wait). At the end, process 0 joins: it sleeps until the others have
 * exited, then runs its check and report (proc_end) and exits. The three costs are measured from traces
 * (`schedlab calibrate`). An app without workers to hand out (chaos) sets w->go in its setup: its other
 * processes run their program at once.
 *
 * The barrier program (synth, oddeven, gauss, sor, tclosure, adjoint): iterations of work, a barrier after
 * each (sim_barrier.c). The workers first meet at the barrier once; process 0 leaving it starts the clock
 * of par_us and process 0 leaving the last one stops it, as the apps time their parallel part. An
 * iteration is the app's work hook - or, for a loop program (w->loops), its chunk hook one grab at a time
 * (sim_loops.c) until the loop is done for the process. Under process control a process's iteration is the
 * work of every worker it hosts (sim_barrier.c deals them).
 *
 * Not modelled: the apps' sl_alloc in RESULT's mem_kb (it is what the core charged: the processes' stacks)
 * and the keys an app reports about its own computation (maxerr=, sorted=...): process 0 reports check=ok
 * with the keys its model knows (its report hook).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"
#include "sim_threads.h"

static const struct sim_prog no_hooks;
static const struct sim_prog *hooks(const struct sjob *w) { return w->app->prog ? w->app->prog : &no_hooks; }

/* The app runs its workers by sl_run_workers (a thread program, knary's stealing, sleeper, chaos do not). */
static int worker_run(const struct sjob *w) { return !w->threads && w->app->workers; }

/* Process 0's set-up: proc_start, then under a model its arrays, the library's heap (sim_start.c) and the
   rest of the app's set-up, in that order (the heap's pages come after the arrays'). */
static uint64_t setup_ns(struct sproc *sp, const struct sim_prog *h)
{
    uint64_t ns = (uint64_t)calib.proc_start;
    if (mem_on() && sp->p.on_cpu && sp->p.idx == 0)
        start_reset(sp->p.job);
    ns += h->arrays_ns ? h->arrays_ns(sp) : 0;
    ns += start_heap(sp);
    return ns + (h->setup_ns ? h->setup_ns(sp) : 0);
}

/* The job's start, before the program: 1 if it took sp's next action. */
int job_begin(struct sproc *sp, uint64_t t)
{
    struct job *j = sp->p.job;
    struct sjob *w = sjob_of(j);
    if (sp->p.idx != 0) {
        if (w->go)
            return 0;
        sp->life = 1;
        core_block(sp, t, 0); /* its worker is not there yet */
        return 1;
    }
    switch (sp->life) {
    case L_SETUP:
        sp->life = L_SPAWN;
        w->spawned = 1;
        core_compute(sp, t, setup_ns(sp, hooks(w)));
        return 1;
    case L_SPAWN:
        if (w->spawned < j->nprocs) {
            w->spawned++;
            core_spawn(j, t); /* its stack zeroed in the system call (sim_start.c) */
            core_compute(sp, t, (uint64_t)calib.syscall + start_stack(sp, sprocs[j->id - 1][w->spawned - 1]));
            return 1;
        }
        if (w->go) { /* no workers to hand out (sl_sys_proc_create): straight to its program */
            sp->life = L_PROGRAM;
            return 0;
        }
        sp->life = L_HANDOUT;
        core_compute(sp, t, (uint64_t)calib.workers_start);
        return 1;
    case L_HANDOUT:
        sp->life = L_PROGRAM;
        w->go = 1;
        if (worker_run(w))
            sync_units(j, (uint32_t)j->nprocs);
        for (int i = 1; i < j->nprocs; i++) {
            struct sproc *o = sprocs[j->id - 1][i];
            if (o->life == 1) {
                o->life = 0;
                core_wake(o, t); /* one futex_wake each: its process 0's system call, left out */
            }
        }
        return 0;
    default: return 0;
    }
}

/* Process 0's sl_report: check=ok (the models compute nothing to check) with the keys the model knows. */
void job_report(struct job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->result_keys, sizeof j->result_keys, fmt, ap);
    va_end(ap);
    j->result_set = j->result_ok = 1;
}

int job_par_us(const struct sjob *w, uint64_t *us)
{
    *us = (w->par_t1 - w->par_t0) / 1000;
    return w->bar && w->par_t1 >= w->par_t0;
}

/* sp's program is over at t: exit, or for process 0 join the others, check, and exit. */
void job_end(struct sproc *sp, uint64_t t)
{
    struct job *j = sp->p.job;
    struct sjob *w = sjob_of(j);
    const struct sim_prog *h = hooks(w);
    if (sp->p.idx != 0) {
        if (j->nlive == 2 && w->joiner) { /* the last to exit wakes the joiner first (the library's join
                                             counter): exiting first would leave only a sleeper, a deadlock */
            core_wake(w->joiner, t);
            w->joiner = 0;
        }
        core_exit(sp, t);
        return;
    }
    if (sp->life == L_PROGRAM && j->nlive > 1) {
        sp->life = L_JOIN;
        w->joiner = sp;
        return core_block(sp, t, 0);
    }
    if (sp->life != L_CHECK) {
        uint64_t us;
        sp->life = L_CHECK;
        sync_units(j, 0); /* the worker run is over */
        if (h->report)
            h->report(j, w, j->result_keys, sizeof j->result_keys);
        else if (job_par_us(w, &us)) /* the barrier apps report their parallel part */
            snprintf(j->result_keys, sizeof j->result_keys, "par_us=%lu", us);
        else
            j->result_keys[0] = 0;
        j->result_set = j->result_ok = 1;
        return core_compute(sp, t, (uint64_t)calib.proc_end + (h->check_ns ? h->check_ns(sp) : 0));
    }
    core_exit(sp, t);
}

/* ---- the barrier program ---- */

/* The choice key k of the job's args as its index in names: 0 if absent, -1 if none of them. */
static int choice(const char *args, const char *k, const char *const *names, int n)
{
    char v[32];
    if (scenario_arg(args, k, v, sizeof v) != 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    return -1;
}

int bprog_setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    static const char *const waits[] = { "spin", "block", "twophase", "adaptive" };
    static const char *const shapes[] = { "central", "tree", "combination" };
    w->wait = (enum wait_kind)choice(j->scen->args, "barrier", waits, 4);
    w->shape = choice(j->scen->args, "shape", shapes, 3);
    if (!w->threads)
        w->bar = barrier_new(j->nprocs, w->wait, w->shape);
    return 0;
}

void bprog_free(struct job *j)
{
    free(sjob_of(j)->bar);
    sjob_of(j)->bar = 0;
}

void bprog_start(struct sproc *sp, uint64_t t) { sp->starting = sjob_of(sp->p.job)->bar != 0; }

/* A spinner dispatched again keeps spinning until its episode is released, unless its kind re-decides. */
int bprog_spins(const struct sproc *sp)
{
    return sp->bar && !barrier_released(sp) && sp->bar->wait == W_SPIN;
}

/* The work of this process's iteration: its own worker's, or under process control every worker it hosts. */
static uint64_t barrier_work(struct sproc *sp, struct sjob *w, int *last)
{
    const struct sim_prog *h = hooks(w);
    if (!w->adaptive)
        return h->work(sp, w, sp->p.idx, last);
    uint64_t ns = 0;
    *last = bprog_last(w, sp->iter);
    for (int v = 0; v < sp->p.job->nprocs; v++)
        if (w->host[v] == sp->p.idx)
            ns += h->work(sp, w, v, last);
    return ns;
}

/* Every worker waits at the barrier once before process 0 starts the clock (phase 0: under --model its
   input's generation first; 1: its wait; then the program). 1 if it took sp's next action. */
static int first_barrier(struct sproc *sp, struct sjob *w, uint64_t t)
{
    if (sp->phase == 0 && hooks(w)->gen_ns) {
        uint64_t gen = hooks(w)->gen_ns(sp, sp->p.idx);
        if (gen) {
            sp->phase = 3;
            core_compute(sp, t, gen);
            return 1;
        }
    }
    if (sp->phase == 0 || sp->phase == 3) {
        sp->phase = 1;
        sp->bar = w->bar;
        barrier_arrive(sp, t);
        return 1;
    }
    sp->starting = 0;
    sp->phase = 0;
    if (sp->p.idx == 0)
        w->par_t0 = t;
    return 0;
}

/* The program's next action from t (phase 0: the iteration's work; 1: its wait; 2: the wait is over). */
static void proceed(struct sproc *sp, uint64_t t)
{
    struct sjob *w = sjob_of(sp->p.job);
    int last = 0;
    if (job_begin(sp, t))
        return;
    if (sp->starting) {
        if (!first_barrier(sp, w, t))
            proceed(sp, t);
        return;
    }
    if (sp->phase == 0 && w->loops) { /* a loop's chunks one grab at a time, then its barrier */
        uint64_t ns = 0;
        if (hooks(w)->chunk(sp, &ns))
            return core_compute(sp, t, ns);
        sp->phase = 3; /* its last, empty grab, then the barrier */
        return core_compute(sp, t, ns);
    }
    if (sp->phase == 3)
        sp->phase = 1;
    if (sp->phase == 0) {
        sp->phase = 1;
        return core_compute(sp, t, barrier_work(sp, w, &last));
    }
    if (sp->phase == 1) {
        sp->bar = w->bar;
        return barrier_arrive(sp, t);
    }
    last = bprog_last(w, sp->iter); /* phase 2: after the barrier of iteration iter */
    if (last) {
        if (sp->p.idx == 0 && sp->life == L_PROGRAM)
            w->par_t1 = t; /* process 0 always hosts worker 0 (control() suspends from the top) */
        return job_end(sp, t);
    }
    if (sp->suspended)
        return core_block(sp, t, 0); /* process control: asleep until control() resumes it */
    sp->iter++;
    sp->phase = 0;
    proceed(sp, t);
}

/* Its current action ended at t, on its hart. */
void bprog_step(struct sproc *sp, uint64_t t)
{
    if (sp->waiting) { /* at its barrier: spinning, entering futex_wait, or back from it */
        if (sp->pending_block) {
            sp->pending_block = 0;
            if (!barrier_released(sp))
                return core_block(sp, t, 0);
        } else if (!barrier_released(sp)) {
            return barrier_wait_turn(sp, t); /* twophase's bound passed, adaptive re-decides, or a spurious wake */
        }
        sp->waiting = 0;
        barrier_waited(sp, t);
        sp->phase = 2;
    }
    proceed(sp, t);
}

/* ---- a thread program (sim_threads.c) ---- */

void tprog_step(struct sproc *sp, uint64_t t)
{
    if (job_begin(sp, t))
        return;
    if (!threads_step(sp, t))
        job_end(sp, t);
}
