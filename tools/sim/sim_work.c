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
 * A job's life (lib/procs.c, lib/workers.c): only process 0 exists at admission. It runs its set-up
 * (proc_start: loading, QEMU translating the code, the app's serial part), creates the others one
 * proc_create system call at a time (each is bound by the policy's proc_new then, so timeslice's "least
 * loaded hart" sees the other jobs' processes created meanwhile, as on QEMU), then hands the workers out
 * (workers_start) while the others, already running, sleep until it has (their first futex_wait). At the
 * end, process 0 joins: it sleeps until the others have exited, then runs its check and report (proc_end)
 * and exits. The three costs are measured from traces (`schedlab calibrate`).
 *
 * The barrier (lib/barrier*.c, lib/wait*.c): the last of n to arrive releases the episode. The others
 * wait by their kind:
 *   spin      burn the hart until released; a spinner that is preempted sees the release only when it
 *             runs again, and the last arrival happens only when its process runs (so a preempted
 *             straggler delays everyone). A running spinner continues release_ns after the release.
 *   block     futex_wait (a system call), asleep; the releaser's futex_wake makes it ready (the policy's
 *             enqueue, which kicks an idle hart with an IPI: the hand-off latency). A waiter released while
 *             still entering futex_wait returns at once, but had set the sleepers bit: the releaser still
 *             pays its futex_wake system call.
 *   twophase  spin for at most the library's bound (SL_TWOPHASE_SPIN_NS, lib/wait_bounds.h), then block.
 *   adaptive  spin while every participant still to arrive is on a hart, block otherwise; re-decided
 *             whenever a participant loses its hart.
 * release_ns per shape grows with P as the shape does: central P/2 x (the 2-process cost), tree and
 * combination log2 P x.
 *
 * Process control (adapt=yes under a policy that allots harts; lib/threads/procctl.c, lib/workers): the
 * job's work is P workers (worker v does what process v does without control) on its processes. A barrier
 * arrival that waits is a safe point (the library's sl_thread_pause): a process arriving while the job has
 * more active processes than its allotment (info_set_allotment) suspends itself there - it sleeps instead
 * of waiting, its workers' arrivals counted - as procctl.c's sl_pc_safe_point does; the start barrier is one
 * too, so a job admitted into a share smaller than its processes folds during its first episode instead of
 * time-sharing its share for whole quanta. Which process suspends is whichever arrives first (the library's
 * CAS), except process 0: the simulator keeps it active (it hosts worker 0, whose clock par_us is, and joins
 * the others), where the library may suspend it and run worker 0 elsewhere. At every release the job
 * resumes suspended processes while it has fewer active ones than its allotment, deals the workers round
 * robin over the active processes, and the next episode's participants are those; a process's iteration is
 * the work of the workers it hosts (the library runs them one after another by user-level switches; their
 * switch cost is left out). The last release wakes the suspended processes to exit.
 *
 * Sync statistics (abi.h struct sl_sync, kernel/syncstat.h; policy=adaptive reads them): each process
 * publishes what lib/barrier.h and lib/wait.h would - episodes (the workers it hosts, at each arrival), and
 * for every wait but the last arrival's, one wait with its ticks from arrival to release, and in_wait while
 * it waits - so the policy runs unchanged (the part asleep is the core's own blocked time, as in the kernel).
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

struct sbar {
    int n, arrived, shape;
    enum wait_kind wait;
    uint64_t episode; /* episodes released so far */
    struct sproc *waiter[SL_MAX_PROCS];
    int nwait;
};

struct sjob sjobs[NJOB];
static struct sl_sync syncs[NJOB][SL_MAX_PROCS];   /* the sync statistics pages (the header) */
static uint64_t wait_from[NJOB][SL_MAX_PROCS];
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
    memset(syncs[j->id - 1], 0, sizeof syncs[0]);
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
    w->adaptive = j->adaptive && sched->allots && ((w->app <= APP_GAUSS && !w->loops) || w->app == APP_KNARY);
    if (w->app == APP_KNARY) { /* k[3]: nodes left in the pool, k[4]: a batch */
        for (int64_t l = 0, level = 1; l < w->k[0]; l++, level *= w->k[1])
            w->k[3] += level;
        w->k[4] = w->k[3] / (256 * j->nprocs) > 0 ? w->k[3] / (256 * j->nprocs) : 1;
    }
    w->active = j->nprocs;
    for (int v = 0; v < SL_MAX_PROCS; v++)
        w->host[v] = (int16_t)v;
    if (barrier_app(w->app) && !w->threads) {
        w->bar = calloc(1, sizeof *w->bar);
        w->bar->n = j->nprocs;
        w->bar->wait = w->wait;
        w->bar->shape = w->shape;
    }
    touch_setup(j); /* what its work touches under --model (sim_touch.c) */
    return 0;
}

/* ---- the sync statistics' services (kernel/syncstat.h) ---- */

volatile struct sl_sync *syncstat_of(struct job *j) { return sched->syncstat ? syncs[j->id - 1] : 0; }
uint64_t sched_wake_cost_ns(void) { return (uint64_t)calib.futex_cross; } /* kbench's cross-hart hand-off */
uint64_t sched_reload_cost_ns(void) { return 0; }                         /* no caches modelled */

static struct sl_sync *sync_of(const struct sproc *sp) { return &syncs[sp->p.job->id - 1][sp->p.idx]; }

/* The wait sp was in is over at t (released, or resumed by process control: not a wait then). */
static void sync_waited(struct sproc *sp, uint64_t t, int count)
{
    struct sl_sync *s = sync_of(sp);
    if (!s->in_wait)
        return;
    s->in_wait = 0;
    if (count) {
        s->waits++;
        s->wait_ticks += t - wait_from[sp->p.job->id - 1][sp->p.idx];
    }
}

/* ---- the barrier ---- */

static uint64_t release_ns(const struct sbar *b)
{
    double base = b->wait == W_SPIN ? calib.bar_spin[b->shape]
        : b->wait == W_TWOPHASE     ? calib.bar_twophase
        : b->wait == W_ADAPTIVE     ? calib.bar_adaptive
                                    : calib.bar_spin[b->shape];
    double scale = b->shape == 0 ? b->n / 2.0 : log2(b->n > 2 ? b->n : 2);
    return (uint64_t)(base * (scale > 0.5 ? scale : 0.5));
}

static int released(const struct sproc *sp) { return sp->bar && sp->episode < sp->bar->episode; }

/* Adaptive: every participant that has not arrived at this episode is on a hart. */
static int all_running(const struct sproc *me)
{
    struct sbar *b = me->bar;
    struct job *j = me->p.job;
    for (int i = 0; i < j->nprocs; i++) {
        struct sproc *o = sprocs[j->id - 1][i];
        if (o->suspended)
            continue; /* process control took it out of the barrier */
        int waiting = o->bar == b && o->episode == b->episode && (o->act == A_SPIN || o->act == A_BLOCKED);
        if (o != me && !waiting && o->act != A_EXIT && !core_running(o))
            return 0;
    }
    return 1;
}

/* Barrier futex calls, for --stats: every futex_wait whose sleepers bit was set is followed by a futex_wake
   (lib/wait.c's protocol), whether or not the waiter was asleep by then. */
static uint64_t nbar_waits, nbar_wakes;

static void begin_block(struct sproc *sp, uint64_t t)
{
    nbar_waits++;
    sp->pending_block = 1; /* the futex_wait system call */
    core_compute(sp, t, (uint64_t)calib.syscall);
}

/* sp waits at its barrier: spin, or start blocking, as its kind says now. */
static void wait_turn(struct sproc *sp, uint64_t t)
{
    switch (sp->bar->wait) {
    case W_SPIN: core_spin(sp, t); return;
    case W_BLOCK: begin_block(sp, t); return;
    case W_TWOPHASE:
        if (t >= sp->spin_until)
            begin_block(sp, t);
        else {
            core_spin(sp, t);
            sim_post(sp->spin_until, EV_STEP, -1, sp, 0);
        }
        return;
    case W_ADAPTIVE:
        if (all_running(sp))
            core_spin(sp, t);
        else
            begin_block(sp, t);
        return;
    }
}

static void proceed(struct sproc *sp, uint64_t t);
static void control(struct job *j, struct sbar *b, uint64_t t, struct sproc *releaser);
static int last_iteration(const struct sjob *w, uint64_t i);

/* sp arrives at a barrier that it will wait at (not the last arrival): a safe point. Too many active
   processes for the allotment, and it suspends (process 0 never does: the header). */
static int safe_point_suspends(const struct sproc *sp, const struct sjob *w)
{
    int allot = w->allot > 0 ? w->allot : ncpus;
    return w->adaptive && sp->p.idx != 0 && w->active > allot && !last_iteration(w, sp->iter);
}

static void arrive(struct sproc *sp, uint64_t t)
{
    struct sbar *b = sp->bar;
    struct sjob *w = &sjobs[sp->p.job->id - 1];
    for (int v = 0; v < (w->adaptive ? sp->p.job->nprocs : 1); v++)
        sync_of(sp)->episodes += !w->adaptive || w->host[v] == sp->p.idx; /* each worker it hosts arrives */
    if (++b->arrived < b->n) {
        if (safe_point_suspends(sp, w)) {
            sp->suspended = 1; /* asleep until control() resumes it; its workers' arrivals are counted */
            w->active--;
            sp->episode = b->episode;
            return core_block(sp, t, 0);
        }
        sync_of(sp)->in_wait = 1;
        wait_from[sp->p.job->id - 1][sp->p.idx] = t;
        sp->episode = b->episode;
        sp->waiting = 1;
        sp->spin_until = t + SL_TWOPHASE_SPIN_NS;
        b->waiter[b->nwait++] = sp;
        wait_turn(sp, t);
        return;
    }
    b->arrived = 0;
    b->episode++;
    uint64_t rel = release_ns(b), wake_cost = 0;
    for (int i = 0; i < b->nwait; i++) {
        struct sproc *w = b->waiter[i];
        if (w->act == A_BLOCKED && w->p.state == P_BLOCKED) {
            /* one futex_wake for all sleepers; sending an IPI (kicking an idle hart) makes it dearer */
            uint64_t cost = (uint64_t)(core_wake(w, t) ? calib.futex_wake_kick : calib.syscall);
            wake_cost = cost > wake_cost ? cost : wake_cost;
        } else {
            /* spinning, or on its way into futex_wait (it sees the word changed and returns at once); the
               latter had set the sleepers bit, so the releaser still makes its futex_wake (lib/wait.c) */
            if (w->pending_block && !wake_cost)
                wake_cost = (uint64_t)calib.syscall;
            core_release_spinner(w, t + rel);
        }
    }
    b->nwait = 0;
    nbar_wakes += wake_cost != 0;
    sp->episode = b->episode;
    control(sp->p.job, b, t, sp);
    core_compute(sp, t, rel + wake_cost); /* the releaser's own cost, then its program goes on */
    sp->phase = 2;
}

/* ---- process control (the model is in the header) ---- */

static int last_iteration(const struct sjob *w, uint64_t i)
{
    return w->app == APP_SYNTH ? i + 1 >= (uint64_t)w->k[2]
         : w->app == APP_SOR   ? i + 1 >= 2 * (uint64_t)w->k[1]
         : w->app == APP_ADJOINT ? 1 /* one loop; tclosure's n are gauss's n steps */
                               : i + 1 >= (uint64_t)w->k[0];
}

/* At the release of the episode of iteration releaser->iter: suspend or resume processes to match the
   allotment, deal the workers over the active ones, and set the barrier's participants. */
static void control(struct job *j, struct sbar *b, uint64_t t, struct sproc *releaser)
{
    struct sjob *w = &sjobs[j->id - 1];
    if (!w->adaptive)
        return;
    int P = j->nprocs, allot = w->allot > 0 ? w->allot : ncpus, last = !releaser->starting &&
                                                                       last_iteration(w, releaser->iter);
    int want = allot < P ? allot : P;
    for (int i = 0; i < P && (w->active < want || last); i++) {
        struct sproc *o = sprocs[j->id - 1][i];
        if (!o->suspended)
            continue;
        o->suspended = 0;
        w->active++;
        /* it goes on from this episode, whatever iteration it was suspended at (it may not even have
           reached its sleep yet, if its hart was busy since) */
        o->iter = releaser->iter;
        o->starting = releaser->starting; /* released from the start barrier: iteration 0 is next */
        o->phase = 2;
        o->waiting = 0;
        o->pending_block = 0;
        sync_waited(o, t, 0);
        if (o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, t); /* asleep since its suspension */
    }
    int act[SL_MAX_PROCS], n = 0;
    for (int i = 0; i < P; i++)
        if (!sprocs[j->id - 1][i]->suspended)
            act[n++] = i;
    for (int v = 0; v < P && n; v++)
        w->host[v] = (int16_t)act[v % n];
    b->n = n ? n : 1;
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
    *last = last_iteration(w, sp->iter);
    for (int v = 0; v < sp->p.job->nprocs; v++)
        if (w->host[v] == sp->p.idx)
            ns += worker_work(sp, w, v, last) + touch_iteration(sp, w->k[0], v);
    return ns;
}

/* ---- a job's life around its program (the model is in the header) ---- */

enum life { L_SETUP, L_SPAWN, L_HANDOUT, L_PROGRAM, L_JOIN, L_CHECK };

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
        return core_compute(sp, t, (uint64_t)((double)w->k[0] * calib.hog_unit));
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
                return arrive(sp, t);
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
            return arrive(sp, t);
        }
        last = last_iteration(w, sp->iter); /* phase 2: after the barrier of iteration iter */
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
            if (!released(sp))
                return core_block(sp, t, 0);
        } else if (!released(sp)) {
            return wait_turn(sp, t); /* twophase's bound passed, adaptive re-decides, or a spurious wake */
        }
        sp->waiting = 0;
        sync_waited(sp, t, 1);
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
        if (!sp->bar || released(sp) || sp->bar->wait != W_SPIN) /* no bar: a thread app's idle poll */
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

/* It lost its hart: adaptive waiters of its job that spin on it re-decide. */
void work_descheduled(struct sproc *sp, uint64_t t)
{
    struct sbar *b = sjobs[sp->p.job->id - 1].bar;
    if (!b || b->wait != W_ADAPTIVE)
        return;
    for (int i = 0; i < b->nwait; i++)
        if (b->waiter[i]->act == A_SPIN && core_running(b->waiter[i]))
            sim_post(t, EV_STEP, -1, b->waiter[i], 0);
}

/* Give back what work_setup and core_admit took (the run is over). */
void work_stats(FILE *f)
{
    fprintf(f, "sim: barrier futex_wait calls %lu, futex_wake calls %lu\n", nbar_waits, nbar_wakes);
}

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
