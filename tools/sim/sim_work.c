/*
 * sim_work.c - the apps as the simulator runs them: each process is a program of compute segments and
 * waits, with the costs of the calibration file (sim.h struct calib).
 *
 *   synth    iters x { uniform [grain, grain+var] units of work; barrier }            (apps/synth.c)
 *   oddeven  n phases x { ceil(n/2/P) compare-exchanges; barrier }                    (apps/oddeven.c)
 *   gauss    n steps k x { row ops of the rows i > k with i % P == idx, (n-k) each; barrier }
 *                                                                          (apps/gauss/coarse.c, barrier)
 *   hog      blocks of `block` units until no foreground job is left                  (apps/hog.c)
 *   sleeper  iters x { work units; sleep sleep_us (a futex timeout) }                 (apps/sleeper.c)
 *   sor, tclosure, adjoint  a loop's chunks from the library's loop schedulers, a barrier after each loop
 *            (sim_loops.c, sim_loopapps.c: tclosure n loops, adjoint one)
 *   knary    mode=steal: N = 1 + d + ... + d^(h-1) nodes of `work` units and a user-level switch each, in
 *            one pool the processes take batches of N/(256 P) from until it is empty: work stealing as a
 *            perfectly balanced pool (s, the serial children, is left out: the default s=1 leaves
 *            parallelism far beyond 64 harts). Under process control every batch is a safe point: a
 *            process beyond the allotment sleeps, one below it wakes a sleeper; no barrier, no sync
 *            statistics but its start                                             (apps/knary.c)
 *   chaos    mode=deadlock: every process waits for ever on a futex nobody wakes; mode=exit-blocked:
 *            process 0 creates the others, reports blocked=P-1 and exits while they wait for ever
 *            (apps/chaos.c). The kernel's core (life.c) finds and ends the deadlock, as on QEMU.
 * The barrier programs first meet at the barrier once; process 0 leaving it starts the clock of par_us and
 * process 0 leaving the last one stops it, as the apps time their parallel part.
 *
 * A job's life (lib/base/procs.c, lib/workers/workers.c): only process 0 exists at admission. It runs its set-up
 * (proc_start: loading, QEMU translating the code, the app's serial part), creates the others one
 * proc_create system call at a time (each is bound by the policy's proc_new then, so timeslice's "least
 * loaded hart" sees the other jobs' processes created meanwhile, as on QEMU), then hands the workers out
 * (workers_start) while the others, already running, sleep until it has (their first futex_wait). At the
 * end, process 0 joins: it sleeps until the others have exited, then runs its check and report (proc_end)
 * and exits. The three costs are measured from traces (`schedlab calibrate`).
 *
 * The barrier, process control and the sync statistics the adaptive policy reads: sim_barrier.c.
 *
 * Memory (--model): what each unit of work touches is sim_touch.c's (barrier_work and the set-up/check
 * call it); sim_mem.h has the cache model. gauss variant=fine, grassfire and msort are thread programs:
 * sim_threads.c (the mechanism), sim_tapps.c (the apps). Not
 * modelled yet: oddeven's sched= loop schedulers (refused with a message), the apps' sl_alloc in RESULT's mem_kb (it is what the core charged:
 * the processes' stacks), and the keys an app reports about its own computation (maxerr=, sorted=...):
 * process 0 reports check=ok with par_us= for the barrier apps and chaos's blocked=.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"
#include "sim_threads.h"
#include "../../lib/base/rng.h"
#include "../../lib/wait/wait_bounds.h"
#include "../../kernel/syncstat.h"

enum model { APP_SYNTH, APP_ODDEVEN, APP_GAUSS, APP_HOG, APP_SLEEPER, APP_CHAOS, APP_SOR, APP_KNARY, APP_TCLOSURE,
             APP_ADJOINT, APP_GRASSFIRE, APP_MSORT, NAPPS };
static const char *const app_names[NAPPS] = { "synth", "oddeven", "gauss", "hog", "sleeper", "chaos", "sor", "knary",
                                              "tclosure", "adjoint", "grassfire", "msort" };
enum { CHAOS_DEADLOCK, CHAOS_EXIT_BLOCKED }; /* the modes modelled (k[0]) */


struct sjob sjobs[NJOB];
struct sproc *sprocs[NJOB][SL_MAX_PROCS];
int fg_live;

const char *work_models(void)
{
    return "adjoint,chaos,gauss,grassfire,hog,knary,msort,oddeven,sleeper,sor,synth,tclosure";
}

/* A program of barrier episodes: iterations of work, a barrier after each (sor, tclosure, adjoint: a loop's
   chunks, sim_loops.c and sim_loopapps.c). */
static int loop_app(int app) { return app == APP_SOR || app == APP_TCLOSURE || app == APP_ADJOINT; }
static int barrier_app(int app) { return app <= APP_GAUSS || loop_app(app); }

static int64_t key(const char *args, const char *k)
{
    char v[32];
    return scenario_arg(args, k, v, sizeof v) == 0 ? strtoll(v, 0, 10) : -1;
}

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

static const char *const waits[] = { "spin", "block", "twophase", "adaptive" };
static const char *const shapes[] = { "central", "tree", "combination" };

int work_setup(struct job *j, char *err, size_t errlen)
{
    struct sjob *w = &sjobs[j->id - 1];
    const char *a = j->scen->args;
    memset(w, 0, sizeof *w);
    barrier_job_setup(j);
    w->app = -1;
    for (int i = 0; i < NAPPS; i++)
        if (!strcmp(j->scen->app, app_names[i]))
            w->app = i;
    if (w->app < 0)
        return snprintf(err, errlen,
                        "job=%s: the simulator has no model of app %s (models: %s); run it under QEMU, or model it "
                        "in tools/sim/sim_work.c",
                        j->scen->app, j->scen->app, work_models()),
               -1;
    char v[32];
    if (w->app == APP_ODDEVEN && scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
        return snprintf(err, errlen, "job=oddeven: sched=%s is not modelled in the simulator (static only)", v), -1;
    if (w->app == APP_KNARY && scenario_arg(a, "mode", v, sizeof v) == 0 && strcmp(v, "steal"))
        return snprintf(err, errlen, "job=knary: mode=%s is not modelled in the simulator (steal only)", v), -1;
    if ((w->threads = threads_setup(j, err, errlen)) < 0) /* gauss variant=fine, grassfire, msort: sim_threads.c */
        return -1;
    if (w->app == APP_GAUSS && !w->threads && scenario_arg(a, "variant", v, sizeof v) == 0 && strcmp(v, "coarse"))
        return snprintf(err, errlen, "job=gauss: variant=%s is not modelled in the simulator (coarse, fine)", v), -1;
    /* apps/gauss home=own (rows on their owners' nodes) and apps/hog.c ws= (a swept working set): the touches
       here are one matrix on process 0's node and a hog in registers, so refuse rather than model another run */
    if (w->app == APP_GAUSS && scenario_arg(a, "home", v, sizeof v) == 0 && strcmp(v, "one"))
        return snprintf(err, errlen, "job=gauss: home=%s is not modelled in the simulator (one only)", v), -1;
    if (w->app == APP_HOG && scenario_arg(a, "ws", v, sizeof v) == 0 && strcmp(v, "0"))
        return snprintf(err, errlen, "job=hog: ws=%s is not modelled in the simulator (0 only)", v), -1;
    if (w->app == APP_CHAOS && scenario_arg(a, "mode", v, sizeof v) == 0 && strcmp(v, "deadlock") &&
        strcmp(v, "exit-blocked"))
        return snprintf(err, errlen, "job=chaos: mode=%s is not modelled in the simulator (deadlock and exit-blocked "
                                     "only)", v),
               -1;
    static const char *const keys[NAPPS][3] = {
        { "grain", "var", "iters" }, { "n", 0, 0 }, { "n", 0, 0 }, { "block", 0, 0 }, { "iters", "sleep_us", "work" },
        { 0, 0, 0 }, { "n", "iters", 0 }, { "h", "d", "work" }, { "n", 0, 0 }, { "n", 0, 0 }, { "n", 0, 0 }, { "n", 0, 0 }
    };
    for (int i = 0; i < 3; i++)
        w->k[i] = keys[w->app][i] ? key(a, keys[w->app][i]) : 0;
    if (w->app == APP_CHAOS) {
        w->k[0] = scenario_arg(a, "mode", v, sizeof v) == 0 && !strcmp(v, "deadlock") ? CHAOS_DEADLOCK
                                                                                        : CHAOS_EXIT_BLOCKED;
        w->go = 1; /* no workers to hand out: its other processes run their program at once */
    }
    if (w->app == APP_GAUSS && scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
        w->loops = 1; /* coarse.c's solve_sched: chunks from a loop scheduler (sim_loops.c) */
    if ((loop_app(w->app) || w->loops) &&
        loops_setup(j, scenario_arg(a, "sched", v, sizeof v) == 0 ? v : "", err, errlen) < 0)
        return -1;
    if ((w->app == APP_TCLOSURE || w->app == APP_ADJOINT) && lapps_setup(j, err, errlen) < 0)
        return -1;
    w->wait = choice(a, "barrier", waits, 4);
    w->shape = choice(a, "shape", shapes, 3);
    w->fg = !j->background;
    w->rng.s = sched_seed ^ ((uint64_t)j->id << 32); /* the scenario's seed= (core_init set it) */
    w->adaptive = j->adaptive && sched->allots && (w->app <= APP_GAUSS || loop_app(w->app) || w->app == APP_KNARY);
    if (w->app == APP_KNARY) { /* k[3]: nodes left in the pool, k[4]: a batch */
        for (int64_t l = 0, level = 1; l < w->k[0]; l++, level *= w->k[1])
            w->k[3] += level;
        w->k[4] = w->k[3] / (256 * j->nprocs) > 0 ? w->k[3] / (256 * j->nprocs) : 1;
    }
    w->active = j->nprocs;
    for (int v = 0; v < SL_MAX_PROCS; v++)
        w->host[v] = (int16_t)v;
    if (barrier_app(w->app) && !w->threads) {
        w->bar = barrier_new(j->nprocs, w->wait, w->shape);
    }
    touch_setup(j); /* what its work touches under --model (sim_touch.c) */
    return 0;
}

/* Iteration i is the program's last (sim.h). */
int work_last_iteration(const struct sjob *w, uint64_t i)
{
    return w->app == APP_SYNTH ? i + 1 >= (uint64_t)w->k[2]
         : w->app == APP_SOR   ? i + 1 >= 2 * (uint64_t)w->k[1]
         : w->app == APP_ADJOINT ? 1 /* one loop; tclosure's n are gauss's n steps */
                               : i + 1 >= (uint64_t)w->k[0];
}

/* ---- the programs ---- */

static uint64_t rnd(struct sjob *w) { return sl_rng_u64(&w->rng); }

/* The work of iteration sp->iter of a barrier program, ns; 0 past its last iteration (exit). */
static uint64_t worker_work(struct sproc *sp, struct sjob *w, int idx, int *last)
{
    int P = sp->p.job->nprocs;
    uint64_t i = sp->iter;
    switch (w->app) {
    case APP_SYNTH:
        *last = i + 1 >= (uint64_t)w->k[2];
        return (uint64_t)((double)(w->k[0] + (w->k[1] ? (int64_t)(rnd(w) % (uint64_t)(w->k[1] + 1)) : 0)) *
                          calib.synth_unit);
    case APP_ODDEVEN:
        *last = i + 1 >= (uint64_t)w->k[0];
        return (uint64_t)((double)((w->k[0] / 2 + P - 1) / P) * calib.oddeven_cx);
    default: { /* gauss: rows k+1..n-1 dealt round robin */
        int64_t n = w->k[0], k = (int64_t)i, rows = 0;
        for (int64_t r = k + 1; r < n; r++)
            rows += r % P == idx;
        *last = k + 1 >= n;
        return (uint64_t)((double)(rows * (n - k)) * calib.gauss_rowop);
    }
    }
}

/* The work of this process's iteration: its own worker's, or under process control every worker it hosts. */
static uint64_t barrier_work(struct sproc *sp, struct sjob *w, int *last)
{
    if (!w->adaptive)
        return worker_work(sp, w, sp->p.idx, last) + touch_iteration(sp, w->k[0], sp->p.idx);
    uint64_t ns = 0;
    *last = work_last_iteration(w, sp->iter);
    for (int v = 0; v < sp->p.job->nprocs; v++)
        if (w->host[v] == sp->p.idx)
            ns += worker_work(sp, w, v, last) + touch_iteration(sp, w->k[0], v);
    return ns;
}

/* ---- a job's life around its program (the model is in the header) ---- */

enum life { L_SETUP, L_SPAWN, L_HANDOUT, L_PROGRAM, L_JOIN, L_CHECK };

/* The app runs its workers by sl_run_workers (the others: threads, knary's stealing, sleeper, chaos). */
static int worker_run(const struct sjob *w)
{
    return !w->threads && (w->app <= APP_HOG || w->app == APP_SOR || w->app == APP_TCLOSURE || w->app == APP_ADJOINT);
}

/* The job's start, before the program: 1 if it took sp's next action. */
static int start(struct sproc *sp, struct sjob *w, uint64_t t)
{
    struct job *j = sp->p.job;
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
        core_compute(sp, t, (uint64_t)calib.proc_start + touch_start(sp, w->k[0]) + lapps_start_ns(sp));
        return 1;
    case L_SPAWN:
        if (w->spawned < j->nprocs) {
            w->spawned++;
            core_spawn(j, t); /* its stack zeroed in the system call (sim_start.c) */
            core_compute(sp, t, (uint64_t)calib.syscall + start_stack(sp, sprocs[j->id - 1][w->spawned - 1]));
            return 1;
        }
        if (w->app == APP_CHAOS) { /* sl_sys_proc_create, no workers: straight to its program */
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
static void __attribute__((format(printf, 2, 3))) report(struct job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->result_keys, sizeof j->result_keys, fmt, ap);
    va_end(ap);
    j->result_set = j->result_ok = 1;
}

/* sp's program is over at t: exit, or for process 0 join the others, check, and exit. */
static void finish(struct sproc *sp, uint64_t t)
{
    struct job *j = sp->p.job;
    struct sjob *w = &sjobs[j->id - 1];
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
        sp->life = L_CHECK;
        sync_units(j, 0); /* the worker run is over */
        uint64_t grabs = 0, remote = 0;
        if (w->app == APP_SOR || w->loops)
            loops_counts(j, &grabs, &remote);
        if ((w->app == APP_TCLOSURE || w->app == APP_ADJOINT) && w->par_t1 >= w->par_t0)
            lapps_result(j, (w->par_t1 - w->par_t0) / 1000, j->result_keys, sizeof j->result_keys),
                j->result_set = j->result_ok = 1;
        else if (w->threads)
            report(j, "%s", threads_keys(j));
        else if (w->loops && w->par_t1 >= w->par_t0)
            report(j, "par_us=%lu grabs=%lu remote=%lu", (w->par_t1 - w->par_t0) / 1000, grabs, remote);
        else if (w->app == APP_SOR && w->par_t1 >= w->par_t0)
            report(j, "par_us=%lu loops=%ld grabs=%lu remote=%lu", (w->par_t1 - w->par_t0) / 1000, 2 * w->k[1], grabs,
                   remote);
        else if (w->bar && w->par_t1 >= w->par_t0) /* the barrier apps report their parallel part */
            report(j, "par_us=%lu", (w->par_t1 - w->par_t0) / 1000);
        else
            report(j, "%s", "");
        uint64_t check = w->app == APP_SOR ? loops_sor_check_ns(w->k[0], w->k[1]) : lapps_check_ns(sp); /* its own */
        return core_compute(sp, t, (uint64_t)calib.proc_end + check + touch_end(sp, w->k[0], w->k[1]));
    }
    core_exit(sp, t);
}

/* knary: the next batch of nodes from the pool, or process control's sleep, or the end. */
static void knary_step(struct sproc *sp, struct sjob *w, uint64_t t)
{
    struct job *j = sp->p.job;
    int P = j->nprocs, want = w->adaptive && w->allot > 0 && w->allot < P ? w->allot : P;
    if (w->k[3] > 0 && w->adaptive && sp->p.idx >= want && sp->p.idx != 0) {
        sp->suspended = 1;
        w->active--;
        return core_block(sp, t, 0); /* suspended at a safe point until a resume */
    }
    sp->suspended = 0;
    for (int i = 1; i < P && (w->active < want || w->k[3] == 0); i++) {
        struct sproc *o = sprocs[j->id - 1][i];
        if (o && o->suspended && o->act == A_BLOCKED && o->p.state == P_BLOCKED) {
            o->suspended = 0;
            w->active++;
            core_wake(o, t);
        }
    }
    if (w->k[3] == 0)
        return finish(sp, t);
    int64_t n = w->k[3] < w->k[4] ? w->k[3] : w->k[4];
    w->k[3] -= n;
    return core_compute(sp, t, (uint64_t)((double)n * ((double)w->k[2] * calib.synth_unit + calib.uthread_yield)));
}

/* The program's next action from t (phase 0: the iteration's work; 1: its wait; 2: the wait is over). */
static void proceed(struct sproc *sp, uint64_t t)
{
    struct sjob *w = &sjobs[sp->p.job->id - 1];
    int last = 0;
    if (start(sp, w, t))
        return;
    if (w->threads) { /* a thread program (sim_threads.c) */
        if (!threads_step(sp, t))
            finish(sp, t);
        return;
    }
    switch (w->app) {
    case APP_CHAOS:
        if (sp->p.idx != 0 || w->k[0] == CHAOS_DEADLOCK)
            return core_block(sp, t, 0); /* wait_forever: a word nobody changes or wakes */
        if (sp->life != L_CHECK) { /* exit-blocked: process 0 reports, then returns from main */
            sp->life = L_CHECK;
            report(sp->p.job, "blocked=%d", sp->p.job->nprocs - 1);
            return core_compute(sp, t, (uint64_t)calib.proc_end);
        }
        return core_exit(sp, t);
    case APP_HOG:
        if (fg_live == 0 && sp->iter > 0)
            return finish(sp, t);
        sp->iter++;
        return core_compute(sp, t, (uint64_t)((double)w->k[0] * calib.hog_unit) + touch_hog_block(sp));
    case APP_KNARY:
        return knary_step(sp, w, t);
    case APP_SLEEPER:
        if (sp->phase == 0) {
            if (sp->iter >= (uint64_t)w->k[0])
                return finish(sp, t);
            sp->phase = 1;
            return core_compute(sp, t, (uint64_t)((double)w->k[2] * calib.sleeper_unit + calib.syscall));
        }
        sp->phase = 0;
        sp->iter++;
        return core_block(sp, t, (uint64_t)w->k[1] * 1000);
    default:
        if (sp->starting) { /* every worker waits at the barrier once before process 0 starts the clock */
            if (sp->phase == 0) { /* under --model: its input's generation first (sim_touch.c) */
                uint64_t gen = touch_gen(sp, w->k[0], sp->p.idx);
                if (gen) {
                    sp->phase = 3;
                    return core_compute(sp, t, gen);
                }
            }
            if (sp->phase == 0 || sp->phase == 3) {
                sp->phase = 1;
                sp->bar = w->bar;
                return barrier_arrive(sp, t);
            }
            sp->starting = 0;
            sp->phase = 0;
            if (sp->p.idx == 0)
                w->par_t0 = t;
            return proceed(sp, t);
        }
        if (sp->phase == 0 && (loop_app(w->app) || w->loops)) { /* a loop's chunks one grab at a time, then
                                                                     its barrier (sim_loops.c) */
            uint64_t ns = 0;
            int more = w->app == APP_SOR ? loops_sor_chunk(sp, w->k[0], &ns)
                     : w->loops          ? loops_gauss_chunk(sp, w->k[0], &ns)
                                         : lapps_chunk(sp, &ns);
            if (more)
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
        last = work_last_iteration(w, sp->iter); /* phase 2: after the barrier of iteration iter */
        if (last) {
            if (sp->p.idx == 0 && sp->life == L_PROGRAM)
                w->par_t1 = t; /* process 0 always hosts worker 0 (control() suspends from the top) */
            return finish(sp, t);
        }
        if (sp->suspended)
            return core_block(sp, t, 0); /* process control: asleep until control() resumes it */
        sp->iter++;
        sp->phase = 0;
        return proceed(sp, t);
    }
}

void work_start(struct sproc *sp, uint64_t t)
{
    sp->act = A_COMPUTE; /* nothing left: its first dispatch starts the program */
    sp->left = 0;
    sp->starting = sjobs[sp->p.job->id - 1].bar != 0;
}

/* Its current action ended at t, on its hart. */
void work_step(struct sproc *sp, uint64_t t)
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

/* It has a hart again from t: go on with what it was doing. */
void work_dispatched(struct sproc *sp, uint64_t t)
{
    switch (sp->act) {
    case A_COMPUTE:
        sp->seg_start = t;
        sim_post(t + sp->left, EV_STEP, -1, sp, 0);
        return;
    case A_SPIN:
        if (!sp->bar || barrier_released(sp) || sp->bar->wait != W_SPIN) /* no bar: a thread app's idle poll */
            sim_post(t, EV_STEP, -1, sp, 0);
        return;
    case A_BLOCKED:
        sp->act = A_COMPUTE; /* back from futex_wait: the rest of the block path (core_unblock_ns) */
        sp->left = core_unblock_ns();
        sim_post(t + sp->left, EV_STEP, -1, sp, 0);
        return;
    case A_EXIT: panic("sim: an exited process was dispatched");
    }
}

/* It lost its hart: adaptive waiters of its job that spin on it re-decide (sim_barrier.c). */
void work_descheduled(struct sproc *sp, uint64_t t) { barrier_descheduled(sp, t); }

/* Give back what work_setup and core_admit took (the run is over). */
void work_stats(FILE *f) { barrier_stats(f); }

void work_free(void)
{
    loops_free();
    threads_free();
    for (int j = 0; j < NJOB; j++) {
        free(sjobs[j].bar);
        sjobs[j].bar = 0;
        for (int i = 0; i < SL_MAX_PROCS; i++) {
            free(sprocs[j][i]);
            sprocs[j][i] = 0;
        }
    }
}
