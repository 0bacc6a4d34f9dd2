/*
 * sim_barrier.c - the barrier the simulated apps meet at, process control at its safe points, and the sync
 * statistics the adaptive policy reads (sim.h declares the interface; sim_work.c's programs call it).
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
 * for every wait but the last arrival's, one wait with its ticks from arrival to release, and in_wait (wait_open) while
 * it waits, the waits only while the policy asks for their times (info_set_sync_timed, as the library reads
 * the info page's sync_timed) - so the policy runs unchanged (the part asleep is the policy's own count of
 * the time blocked while in_wait, as in the kernel) - and process 0's units, the workers of a worker run while it runs.
 *
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "../../lib/wait/wait_bounds.h"
#include "../../kernel/syncstat.h"

static struct sl_sync syncs[NJOB][SL_MAX_PROCS]; /* the sync statistics pages (the header) */

void barrier_job_setup(struct job *j) { memset(syncs[j->id - 1], 0, sizeof syncs[0]); }

/* Process 0 of j starts (n) or ends (0) a worker run: the library's sl_sync_units (lib/base/syncstat.h). */
void sync_units(struct job *j, uint32_t n) { syncs[j->id - 1][0].units = n; }

struct sbar *barrier_new(int n, enum wait_kind wait, int shape)
{
    struct sbar *b = calloc(1, sizeof *b);
    if (!b)
        panic("sim: out of memory for a barrier");
    b->n = n;
    b->wait = wait;
    b->shape = shape;
    return b;
}

/* ---- the sync statistics' services (kernel/syncstat.h) ---- */

volatile struct sl_sync *syncstat_of(struct job *j, int idx)
{
    return sched->syncstat && idx >= 0 && idx < SL_MAX_PROCS ? &syncs[j->id - 1][idx] : 0;
}
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
        s->wait_ticks += t - s->wait_open;
    }
    s->wait_open = 0;
}

/* sp begins a wait at t: timed (in_wait, wait_open) while its job's waits are (sync_timed). */
static void sync_waits(struct sproc *sp, uint64_t t)
{
    struct sl_sync *s = sync_of(sp);
    s->in_wait = sjobs[sp->p.job->id - 1].sync_timed;
    s->wait_open = s->in_wait ? t : 0;
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

int barrier_released(const struct sproc *sp) { return sp->bar && sp->episode < sp->bar->episode; }

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
void barrier_wait_turn(struct sproc *sp, uint64_t t)
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

static void control(struct job *j, struct sbar *b, uint64_t t, struct sproc *releaser);

/* sp arrives at a barrier that it will wait at (not the last arrival): a safe point. Too many active
   processes for the allotment, and it suspends (process 0 never does: the header) - at the start barrier
   too when the program is one iteration: adjoint's one loop, 16 processes on a 6-hart share, time-shared
   the share spinning for 85 ms (6 folded), where the library folds at once (QEMU, 2 harts: 6 processes
   159 ms, 2 processes 151). */
static int safe_point_suspends(const struct sproc *sp, const struct sjob *w)
{
    int allot = w->allot > 0 ? w->allot : ncpus;
    return w->adaptive && sp->p.idx != 0 && w->active > allot && (sp->starting || !work_last_iteration(w, sp->iter));
}

void barrier_arrive(struct sproc *sp, uint64_t t)
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
        sync_waits(sp, t); /* the library times its waits only while asked to */
        sp->episode = b->episode;
        sp->waiting = 1;
        sp->spin_until = t + SL_TWOPHASE_SPIN_NS;
        b->waiter[b->nwait++] = sp;
        barrier_wait_turn(sp, t);
        return;
    }
    b->arrived = 0;
    b->episode++;
    uint64_t rel = release_ns(b), wake_cost = 0;
    struct sproc *spinners[SL_MAX_PROCS];
    int nspin = 0;
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
            spinners[nspin++] = w;
        }
    }
    b->nwait = 0;
    nbar_wakes += wake_cost != 0;
    sp->episode = b->episode;
    control(sp->p.job, b, t, sp);
    core_compute(sp, t, rel + wake_cost); /* the releaser's own cost, then its program goes on */
    sp->phase = 2;
    /* A spinner sees the release only by reading the episode word the releaser has just stored, so it
       cannot go on before the releaser: posted after the releaser's step, it comes after it when both
       fall at t + rel (the event queue keeps posting order among equal times: sim_core.c's before()).
       Posted first, every waiter won that tie, so under a self-scheduler the process that waited took
       the next loop's first chunk at every step: GSS's half of the rows changed hands every step
       (tclosure's whole clique), where QEMU's releaser, already past its store, mostly grabs first. */
    for (int i = 0; i < nspin; i++)
        core_release_spinner(spinners[i], t + rel);
}

/* ---- process control (the model is in the header) ---- */


/* At the release of the episode of iteration releaser->iter: suspend or resume processes to match the
   allotment, deal the workers over the active ones, and set the barrier's participants. */
static void control(struct job *j, struct sbar *b, uint64_t t, struct sproc *releaser)
{
    struct sjob *w = &sjobs[j->id - 1];
    if (!w->adaptive)
        return;
    int P = j->nprocs, allot = w->allot > 0 ? w->allot : ncpus, last = !releaser->starting &&
                                                                       work_last_iteration(w, releaser->iter);
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

/* The wait sp was in is over at t, released (work_step). */
void barrier_waited(struct sproc *sp, uint64_t t) { sync_waited(sp, t, 1); }

/* A thread program's process runs out of threads (begin) or finds one (end): lib/threads/uthread.c's idle
   streak, an episode and, while timed, a wait (its pinned work waits on partners). */
void sync_idle_begin(struct sproc *sp, uint64_t t)
{
    struct sl_sync *s = sync_of(sp);
    s->episodes++;
    sync_waits(sp, t);
}
void sync_idle_end(struct sproc *sp, uint64_t t, int count) { sync_waited(sp, t, count); }

/* sp lost its hart: adaptive waiters of its job that spin on it re-decide. */
void barrier_descheduled(struct sproc *sp, uint64_t t)
{
    struct sbar *b = sjobs[sp->p.job->id - 1].bar;
    if (!b || b->wait != W_ADAPTIVE)
        return;
    for (int i = 0; i < b->nwait; i++)
        if (b->waiter[i]->act == A_SPIN && core_running(b->waiter[i]))
            sim_post(t, EV_STEP, -1, b->waiter[i], 0);
}

void barrier_stats(FILE *f)
{
    fprintf(f, "sim: barrier futex_wait calls %lu, futex_wake calls %lu\n", nbar_waits, nbar_wakes);
    for (int j = 0; sched->syncstat && j < NJOB; j++) { /* what each job published (sync statistics) */
        uint64_t ep = 0, waits = 0;
        for (int i = 0; i < SL_MAX_PROCS; i++)
            ep += syncs[j][i].episodes, waits += syncs[j][i].waits;
        if (ep)
            fprintf(f, "sim: job %d sync episodes=%lu waits=%lu\n", j + 1, ep, waits);
    }
}
