/*
 * sim_barrier.c - the barrier the simulated apps meet at and process control at its safe points (sim_kit.h
 * declares them; the barrier program of sim_program.c calls them).
 *
 * The barrier (lib/barriers/barrier*.c, lib/wait/wait*.c): the last of n to arrive releases the episode. The others
 * wait by their kind:
 *   spin      burn the hart until released; a spinner that is preempted sees the release only when it
 *             runs again, and the last arrival happens only when its process runs (so a preempted
 *             straggler delays everyone). A running spinner continues release_ns after the release.
 *   block     futex_wait (a system call), asleep; the releaser's futex_wake makes it ready (the policy's
 *             enqueue, which kicks an idle hart with an IPI: the hand-off latency). A waiter released while
 *             still entering futex_wait returns at once, but had set the sleepers bit: the releaser still
 *             pays its futex_wake system call.
 *   twophase  spin for at most the library's bound (SL_TWOPHASE_SPIN_NS, lib/wait/wait_bounds.h), then block.
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
 * Sync statistics: each arrival publishes its episodes, each wait its time (sim_sync.c), as the
 * library's barrier and wait do, so the policies that read them run unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "../../lib/wait/wait_bounds.h"

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
   (lib/wait/wait.c's protocol), whether or not the waiter was asleep by then. */
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
    return w->adaptive && sp->p.idx != 0 && w->active > allot && (sp->starting || !bprog_last(w, sp->iter));
}

void barrier_arrive(struct sproc *sp, uint64_t t)
{
    struct sbar *b = sp->bar;
    struct sjob *w = &sjobs[sp->p.job->id - 1];
    int hosted = 0;
    for (int v = 0; v < (w->adaptive ? sp->p.job->nprocs : 1); v++)
        hosted += !w->adaptive || w->host[v] == sp->p.idx; /* each worker it hosts arrives */
    sync_arrive(sp, hosted);
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
               latter had set the sleepers bit, so the releaser still makes its futex_wake (lib/wait/wait.c) */
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
                                                                       bprog_last(w, releaser->iter);
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

/* The wait sp was in is over at t, released (bprog_step). */
void barrier_waited(struct sproc *sp, uint64_t t) { sync_waited(sp, t, 1); }

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
}
