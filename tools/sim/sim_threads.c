/*
 * sim_threads.c - the user-level thread programs of Markatos chapter 4 (lib/threads: uthread.h, place.h),
 * as the simulator runs them.
 *
 * The shared mechanism (one per job; read this first)
 *   main      the program's first thread. It runs on one process (process 0 at first): its allocations
 *             (alloc hook), a set-up thread pinned to each process, a join counter; then rounds (gauss's
 *             columns, grassfire's sweeps, msort's one): it makes the round's threads one sl_place_spawn at a
 *             time (calib.thread_create each; a thread is placed when its creation ends) and waits until the
 *             round's threads have all finished before the next round. A thread may make one more as it
 *             ends (msort: the last child makes its parent), placed then; the round counts it too. A wait parks it (a join counter; a
 *             blocking wait), and the thread that ends the wait pushes it on its own process's deque, so
 *             main goes on *there* (uthread.h: "whoever satisfies the wait pushes them onto its own
 *             deque"); a spinning wait (gauss's column words with barrier=spin, twophase, adaptive) keeps it
 *             on its process, which runs its other threads meanwhile.
 *   placement place=mcs: the thread's home process (the process holding its data); place=lb: the least
 *             loaded process, the load being its pinned threads not yet finished, ties broken at random
 *             (the library's own lib/threads/place.c sl_place_decide, linked: tools/sim/sim.mk);
 *             grassfire's coarse grain: sl_thread_spawn_on the block's process. A placed thread is pinned:
 *             it runs on that process only, never stolen.
 *   process   runs, in order, main when main is ready on it (its deque's bottom), else the oldest of its
 *             pinned threads (FIFO), each to completion (calib.thread_run: take it, switch to its stack,
 *             finish, plus the app's work: run hook); else it is idle: it polls for work, burning its hart,
 *             and every thread_idle_poll_ns of polling on its hart (STEALS_PER_YIELD failed passes) it
 *             pauses: it yields its hart (Hood's yield: SYS_yield, core_yield) or, after SLEEP_AFTER_US
 *             (2 ms) without work, sleeps on a futex for at most SLEEP_US (1 ms); the maker of a thread
 *             pinned to a sleeper wakes it (the maker pays the futex_wake) - uthread.h's scheduler loop,
 *             steps 2-3, uthread.c idle_pass and pause_vp. Work stealing is left out: every thread
 *             of these apps is pinned, so there is nothing to steal. Each idle streak is published as the
 *             library publishes it (uthread.c streak_begins): an episode, and while timed a wait (sim_barrier.c).
 *   end       when main returns every process leaves the run; process 0 then checks (its check hook) and
 *             reports (its keys hook): par_us from the first round's start to the last round's end.
 * The apps' threads, copies and touches are their files' (struct tapp_ops, sim_threads.h); the machinery's
 * own memory (descriptors, the threads' stack words) is below (made_touch, run_touch). Not modelled: process
 * control of a thread app
 * (adapt=: the thread library's suspensions and rescues, refused); the shorter backoff of a streak's first
 * passes (its first pause comes as late as the others).
 *
 * Costs (sim.h struct calib, optional keys with defaults measured on deterministic QEMU, where a ns is an
 * instruction): thread_create_ns, thread_run_ns, copy_call_ns, copy_double_ns (sim_calib.c says where), and
 * thread_idle_poll_ns (IDLE_POLL_NS below).
 *
 * Invariants: a thread is in exactly one process's FIFO from its creation until it runs; load[p] is the
 * number of threads placed on p not yet finished; main is on exactly one process or waiting.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_kit.h"
#include "sim_mem.h"
#include "sim_threads.h"
#include "threads/place.h"

#define SLEEP_AFTER_NS 2000000ULL /* lib/threads/uthread.c SLEEP_AFTER_US */
#define SLEEP_NS       1000000ULL /* SLEEP_US */
/* An idle process's polling between two pauses (uthread.c: STEALS_PER_YIELD failed passes, each a steal
   attempt and BACKOFF_MAX relaxes), the calibration's thread_idle_poll_ns, else this, in instructions (a ns
   each, as deterministic QEMU counts): 32 passes of about 560, counted in sl_ut_vp_loop's riscv64 code - 384
   in the 64 relaxes of 6, the rest the deque, rescue and safe-point checks and a steal attempt. (A
   deterministic boot cannot time it: there each relax is SYS_relax, so an idle process sleeps first.) */
#define IDLE_POLL_NS   18000.0
#define DESC_B         128        /* a thread descriptor (uthread_impl.h struct sl_thread, 112 bytes) */
#define TH_DESCS       64         /* descriptors a process keeps (uthread_impl.h THREAD_CACHE) */
#define STACK_WORDS    160        /* words a thread writes and reads back on its stack (below) */
#define STACK_SPAN     75         /* the distinct words they fall on: frames reuse their slots (below) */
#define SL_THREAD_STACK_B (16 * 1024) /* lib/threads/uthread.h SL_THREAD_STACK on the kernel */

enum { M_ALLOC, M_SETUP, M_SETUP_WAIT, M_ROUND, M_WAIT, M_DONE };            /* main's program */
enum { R_NONE, R_MAIN, R_THREAD, R_CHECK, R_PARK, R_HELD };  /* what a process runs (R_HELD: a thread's spin) */

static struct tjob tj[NJOB];

static struct tjob *tj_of(struct job *j) { return &tj[j->id - 1]; }

/* The app's hooks, with the defaults of those it leaves out (sim_threads.h). */
static int tapp_first(const struct tjob *t, int r) { return t->ops->first ? t->ops->first(t, r) : 0; }
static int tapp_end(const struct tjob *t, int r) { return t->ops->end(t, r); }
static int tapp_home(const struct tjob *t, int i, int r) { return t->ops->home(t, i, r); }
static struct uthr tapp_thread(const struct tjob *t, int idx, int r)
{
    return t->ops->thread ? t->ops->thread(t, idx, r) : (struct uthr){ idx, r, 0 };
}
static uint32_t tapp_round_threads(const struct tjob *t, int r)
{
    return t->ops->round_threads ? t->ops->round_threads(t, r) : (uint32_t)(tapp_end(t, r) - tapp_first(t, r));
}
static int tapp_may_start(const struct tjob *t, int r) { return t->ops->may_start ? t->ops->may_start(t, r) : t->left == 0; }
static int tapp_can_run(const struct tjob *t, struct uthr u) { return t->ops->can_run ? t->ops->can_run(t, u) : 1; }
static int tapp_done(struct tjob *t, struct uthr u) { return t->ops->done ? t->ops->done(t, u) : 0; }

int threads_setup(struct job *j, const struct tapp_ops *ops, char *err, size_t errlen)
{
    struct tjob *t = tj_of(j);
    free(t->rowmax);
    free(t->data);
    free(t->parked);
    free(t->chunks);
    free(t->dfree);
    for (int p = 0; p < SL_MAX_PROCS; p++)
        free(t->pr[p].q.v);
    memset(t, 0, sizeof *t);
    t->ops = ops;
    int got = ops->setup(j, t, err, errlen);
    if (got <= 0)
        return got;
    if (j->adaptive && sched->allots)
        return snprintf(err, errlen, "job=%s: a thread program with adapt=yes (the thread library's process "
                                     "control) under a policy that allots harts is not modelled in the simulator",
                        j->scen->app),
               -1;
    t->on = 1;
    t->P = j->nprocs;
    t->idle_poll = (uint64_t)calib_get("thread_idle_poll_ns", IDLE_POLL_NS);
    t->idle_poll += !t->idle_poll;
    for (int p = 0; p < t->P; p++)
        for (int s = 0; s < TH_WINDOW; s++)
            t->pr[p].pivcol[s] = -1;
    return 1;
}

/* ---- the pinned FIFOs ---- */

static void fifo_push(struct fifo *f, struct uthr u)
{
    if (f->tail == f->cap) {
        if (f->head > 0) {
            memmove(f->v, f->v + f->head, (size_t)(f->tail - f->head) * sizeof *f->v);
            f->tail -= f->head;
            f->head = 0;
        } else {
            f->cap = f->cap ? 2 * f->cap : 64;
            f->v = realloc(f->v, (size_t)f->cap * sizeof *f->v);
            if (!f->v)
                panic("sim: out of memory for a process's threads");
        }
    }
    f->v[f->tail++] = u;
}

static int fifo_pop(struct fifo *f, struct uthr *u)
{
    if (f->head == f->tail)
        return 0;
    *u = f->v[f->head++];
    return 1;
}

/* ---- placement (lib/threads/place.c) ---- */

/* The least loaded process, ties broken by rnd: the library's own decision (lib/threads/place.c), linked. */
static int least_loaded(struct tjob *t, uint64_t rnd)
{
    uint32_t load[SL_MAX_PROCS];
    int node[SL_MAX_PROCS];
    for (int p = 0; p < t->P; p++)
        load[p] = t->pr[p].load, node[p] = -1;
    return sl_place_decide(SL_PLACE_LB, -1, -1, &(struct sl_place_view){ t->P, load, node }, rnd);
}

static int place_of(struct job *j, struct tjob *t, int home)
{
    if (t->P <= 1)
        return 0;
    if (t->place == PL_MCS && home >= 0)
        return home;
    return least_loaded(t, sl_mix64(t->calls++ ^ TH_JOB_SEED(j))); /* place.c's stream */
}

/* A thread is pinned to p at time now: p, idle, looks again (polling: at once; asleep: woken; the maker
   paid the futex_wake in its creation, create()). */
static void pin(struct job *j, int p, struct uthr u, uint64_t now)
{
    struct tjob *t = tj_of(j);
    struct sproc *o = sprocs[j->id - 1][p];
    fifo_push(&t->pr[p].q, u);
    t->pr[p].load++;
    t->made++;
    if (!t->pr[p].idle || !o)
        return;
    if (t->pr[p].asleep && o->act == A_BLOCKED && o->p.state == P_BLOCKED)
        core_wake(o, now);
    else if (o->act == A_SPIN)
        core_release_spinner(o, now);
}

/* main becomes ready at now on process p, whose thread ended its wait: it had parked (a join counter, a
   blocking wait), and goes on there; a spinning wait (spin: gauss's column words) kept it where it was. */
static void main_ready(struct job *j, int p, int spin, uint64_t now)
{
    struct tjob *t = tj_of(j);
    if (spin)
        p = t->main_at_wait; /* it never left: it polled there between the process's threads */
    t->main_at = p;
    struct sproc *o = sprocs[j->id - 1][p];
    if (t->pr[p].idle && o) {
        if (t->pr[p].asleep && o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, now);
        else if (o->act == A_SPIN)
            core_release_spinner(o, now);
    }
}

/* ---- the thread machinery's own memory (under --model) ----
   A thread's descriptor is written by its maker and read by the process that runs it. Descriptors live where
   the library keeps them (uthread_impl.h ut_thread_get/put, lib/base/alloc.c): the maker takes one from its
   own process's cache (at most TH_DESCS, LIFO), else from sl_malloc's 128-byte class (a LIFO free list,
   refilled by carving a fresh 64 KiB chunk, zeroed by the kernel on the maker's hart, into DESC_STEP-byte
   blocks pushed in address order); the process that ran the thread puts it back into its own cache, or, when
   that holds TH_DESCS, frees it to the class list. So a main that makes a round's threads before any runs
   (msort's 2048 leaves) writes that many fresh descriptors, not a recycled few. The runner's stack (the one
   its process keeps cached) gets STACK_WORDS words
   written and read back: the context switch, the frames of the library's calls and the thread function's
   spills. Deterministic QEMU under butterfly (every word an access) counts 358 words a thread more for
   job=gauss:procs=1,n=256,variant=fine,place=mcs,sync=barrier,barrier=block than for variant=coarse
   (29,400,954 - 17,715,303 over 32,640 threads; 346 at n=128: 5,197,713 - 2,381,987 over 8,128): 2 x 14
   descriptor words, the pin inbox's word, the rest the stack's 2 x 160 - sl_uctx_switch alone saves and
   restores 25 registers (13 integer, 12 floating-point) each way, twice a thread (into it and back), then
   run_thread's, thread_new's and the thread function's frames (an earlier count of 184, 2 x 75 on the
   stack, put the fine variant's accesses 22 % low). The frames reuse their slots - each call's frame lands
   where the one before it returned from, and the switch's save area is the same one twice a thread - so
   the words fall on STACK_SPAN distinct words at the stack's top (the former 75: iris's misses stay
   those of that footprint; spreading 160 words over new lines added 31,000 misses to gauss place=mcs at
   n=384, already 12 % over QEMU's), the rest again on the top line. */

#define DESC_CHUNK (64 * 1024)                  /* alloc.c CHUNK */
#define DESC_STEP  (16 + DESC_B)                /* alloc.c HDR + the class's 128 bytes */
#define DESC_PER_CHUNK (DESC_CHUNK / DESC_STEP) /* 455 */
/* The bytes of a descriptor the maker and the runner touch: sp .. worker, the first 64 of struct sl_thread
   (ut_thread_init's fields, next, why; a detached thread's joincnt and the rest are never used). Each side
   touches 14 words there (8 one way, 6 the other: the 14 of the comment above) - 4 lines of 16 bytes, not
   the 7 the whole struct would span. */
#define DESC_USED  64

static void *grow(void *v, int *cap, size_t elem)
{
    *cap = *cap ? 2 * *cap : 512;
    v = realloc(v, (size_t)*cap * elem);
    if (!v)
        panic("sim: out of memory for thread descriptors");
    return v;
}

/* A descriptor for a thread made by process p on hart h: its block number; *ns gets a refill's zeroing. */
static int32_t desc_get(struct job *j, struct tjob *t, int p, int h, uint64_t *ns)
{
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return 0;
    if (q->ndcache)
        return q->dcache[--q->ndcache];
    if (!t->ndfree) { /* refill: a fresh chunk, its blocks pushed in address order (the last is on top) */
        if (t->nchunks == t->capchunks)
            t->chunks = grow(t->chunks, &t->capchunks, sizeof *t->chunks);
        t->chunks[t->nchunks] = touch_alloc_zeroed(j, h, DESC_CHUNK, ns);
        while (t->capfree < DESC_PER_CHUNK)
            t->dfree = grow(t->dfree, &t->capfree, sizeof *t->dfree);
        for (int b = 0; b < DESC_PER_CHUNK; b++)
            t->dfree[t->ndfree++] = t->nchunks * DESC_PER_CHUNK + b;
        t->nchunks++;
    }
    return t->dfree[--t->ndfree];
}

/* Thread u's descriptor d back, by process p that ran it. */
static void desc_put(struct tjob *t, int p, int32_t d)
{
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return;
    if (q->ndcache < TH_DESCS) {
        q->dcache[q->ndcache++] = d;
        return;
    }
    if (t->ndfree == t->capfree)
        t->dfree = grow(t->dfree, &t->capfree, sizeof *t->dfree);
    t->dfree[t->ndfree++] = d;
}

static uint64_t desc_at(const struct tjob *t, int32_t d)
{
    return t->chunks[d / DESC_PER_CHUNK] + (uint64_t)(d % DESC_PER_CHUNK) * DESC_STEP + 16;
}

/* The maker on hart h writes descriptor d and pushes it on process to's pin inbox. */
static uint64_t made_touch(struct job *j, struct tjob *t, int h, int32_t d, int to)
{
    if (!mem_on() || !t->desc)
        return 0;
    uint64_t inbox = t->desc + (uint64_t)to * 64;
    return mem_touch(j->id, h, desc_at(t, d), DESC_USED, 8, 1) + mem_touch(j->id, h, desc_at(t, d), DESC_USED - 16, 8, 0) +
           mem_touch(j->id, h, inbox, 8, 8, 1);
}

/* The runner on hart h takes descriptor d and runs on its stack. */
static uint64_t run_touch(struct job *j, struct tjob *t, int p, int h, int32_t d)
{
    if (!mem_on() || !t->desc)
        return 0;
    struct tproc *q = &t->pr[p];
    uint64_t ns = 0, top;
    if (!q->stack)
        q->stack = touch_alloc_zeroed(j, h, SL_THREAD_STACK_B, &ns);
    top = q->stack + SL_THREAD_STACK_B - STACK_SPAN * 8;
    return ns + mem_touch(j->id, h, desc_at(t, d), DESC_USED, 8, 0) +
           mem_touch(j->id, h, desc_at(t, d), DESC_USED - 16, 8, 1) + mem_touch(j->id, h, top, STACK_SPAN * 8, 8, 1) +
           mem_touch_every(j->id, h, top, STACK_WORDS - STACK_SPAN, 0, 1) + mem_touch(j->id, h, top, STACK_SPAN * 8, 8, 0) +
           mem_touch_every(j->id, h, top, STACK_WORDS - STACK_SPAN, 0, 0);
}

/* ---- main's program (gauss fine_main with sync=barrier, grassfire gf_main, msort ms_main) ---- */

/* main starts making thread u for process `to`: its cost (the futex_wake too if `to` sleeps now). */
static uint64_t create(struct tjob *t, int to, struct uthr u)
{
    t->pend = 1;
    t->pend_to = to;
    t->pu = u;
    return (uint64_t)calib.thread_create + (t->pr[to].asleep ? (uint64_t)calib.futex_wake_kick : 0);
}

/* main waits (its thread is off every process until main_ready). */
static int main_waits(struct tjob *t)
{
    t->main_at_wait = t->main_at;
    t->main_at = -1;
    return 0;
}

/* main's next segment on sp (its process): 1 with it started, 0 if main waits now or has returned. */
static int main_step(struct sproc *sp, struct tjob *t, uint64_t now)
{
    struct job *j = sp->p.job;
    int P = t->P;
    uint64_t ns = 0;
    switch (t->mphase) {
    case M_ALLOC: /* the app's allocations before sl_threads_run (process 0) */
        t->made = 1; /* main itself */
        ns = t->ops->alloc(j, t, hart_of(sp));
        if (mem_on()) /* the pin inboxes' words */
            t->desc = touch_alloc_zeroed(j, hart_of(sp), 64 * (uint64_t)P, &ns);
        t->mphase = M_SETUP;
        t->i = 0;
        break;
    case M_SETUP: /* a set-up thread pinned to each process, then a join counter */
        if (t->i < P) {
            if (t->i == 0)
                t->left = (uint32_t)P;
            int32_t d = desc_get(j, t, t->main_at, hart_of(sp), &ns);
            ns += create(t, t->i, (struct uthr){ t->i, -1, d });
            ns += made_touch(j, t, hart_of(sp), t->pu.d, t->i);
            t->i++;
            break;
        }
        t->mphase = M_SETUP_WAIT;
        /* fall through */
    case M_SETUP_WAIT:
        if (t->left)
            return main_waits(t);
        t->mphase = M_ROUND;
        t->k = 0;
        t->i = tapp_first(t, 0);
        t->t0 = now;
        /* fall through */
    case M_ROUND: /* round k's threads, one creation at a time */
        if (t->k >= t->rounds) {
            t->mphase = M_DONE;
            t->t1 = now;
            main_waits(t);
            return 0;
        }
        if (t->i == tapp_first(t, t->k)) /* rounds may overlap (gauss sync=cond): left sums them */
            t->left += tapp_round_threads(t, t->k);
        {
            struct uthr u = tapp_thread(t, t->i, t->k);
            int home = tapp_home(t, u.i, u.k);
            u.d = desc_get(j, t, t->main_at, hart_of(sp), &ns);
            ns += create(t, t->coarse ? home : place_of(j, t, home), u);
            ns += made_touch(j, t, hart_of(sp), u.d, t->pend_to);
        }
        if (++t->i >= tapp_end(t, t->k))
            t->mphase = M_WAIT;
        break;
    case M_WAIT: /* until the next round may start: the last one's threads have finished, or the app says */
        if (!tapp_may_start(t, t->k + 1))
            return main_waits(t);
        t->k++;
        t->i = tapp_first(t, t->k);
        t->mphase = M_ROUND;
        return main_step(sp, t, now);
    default: return 0;
    }
    sp->phase = R_MAIN;
    core_compute(sp, now, ns);
    return 1;
}

/* Threads that waited for what a finished thread published (gauss sync=cond) look again: a parked one whose
   wait is over goes back to its process's pinned FIFO (not counted again), a process spinning in one looks. */
static void wake_waiters(struct job *j, struct tjob *t, uint64_t now)
{
    for (int w = 0; w < t->nparked;) {
        if (!tapp_can_run(t, t->parked[w].u)) {
            w++;
            continue;
        }
        int p = t->parked[w].p;
        struct sproc *o = sprocs[j->id - 1][p];
        fifo_push(&t->pr[p].q, t->parked[w].u);
        t->parked[w] = t->parked[--t->nparked];
        if (t->pr[p].idle && o && t->pr[p].asleep && o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, now);
        else if (t->pr[p].idle && o && o->act == A_SPIN)
            core_release_spinner(o, now);
    }
    for (int p = 0; p < t->P; p++) {
        struct sproc *o = sprocs[j->id - 1][p];
        if (o && o->phase == R_HELD && o->act == A_SPIN && tapp_can_run(t, t->pr[p].cur))
            core_release_spinner(o, now);
    }
}

/* A thread of sp's finished at now: what it published, and main's wait. */
static void thread_done(struct sproc *sp, struct tjob *t, uint64_t now)
{
    t->pr[sp->p.idx].load--;
    desc_put(t, sp->p.idx, t->pr[sp->p.idx].cur.d); /* reap: back to the runner's cache */
    t->left--;
    if (t->pr[sp->p.idx].cur.k >= 0 && tapp_done(t, t->pr[sp->p.idx].cur))
        wake_waiters(sp->p.job, t, now);
    if (t->main_at < 0 && ((t->mphase == M_SETUP_WAIT && !t->left) ||
                           (t->mphase == M_WAIT && tapp_may_start(t, t->k + 1)))) /* main is ready */
        main_ready(sp->p.job, sp->p.idx, t->mphase == M_WAIT && t->spin, now);
}

/* Thread q->cur on p cannot run yet (gauss sync=cond: its rows are not ready). A blocking wait parks it (the
   process runs others; calib.uthread_yield for the switch); a spinning one holds the process, polling. */
static void wait_for_rows(struct sproc *sp, struct tjob *t, struct tproc *q, uint64_t now)
{
    if (t->spin) {
        sp->phase = R_HELD;
        core_spin(sp, now);
        return;
    }
    if (t->nparked == t->capparked) {
        t->capparked = t->capparked ? 2 * t->capparked : 64;
        t->parked = realloc(t->parked, (size_t)t->capparked * sizeof *t->parked);
        if (!t->parked)
            panic("sim: out of memory for parked threads");
    }
    t->parked[t->nparked++] = (struct parked){ q->cur, sp->p.idx };
    sp->phase = R_PARK;
    core_compute(sp, now, (uint64_t)calib.uthread_yield);
}

/* The run is over: every idle process leaves its loop. */
static void run_over(struct job *j, uint64_t now)
{
    struct tjob *t = tj_of(j);
    for (int p = 0; p < t->P; p++) {
        struct sproc *o = sprocs[j->id - 1][p];
        if (!o || !t->pr[p].idle)
            continue;
        sync_idle_end(o, now, 0); /* leaving the run: no wait for a partner */
        if (o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, now);
        else if (o->act == A_SPIN)
            core_release_spinner(o, now);
    }
}

/* p has a thread (or main) to run: an idle streak is over. */
static void busy(struct sproc *sp, struct tproc *q, uint64_t now)
{
    if (q->idle)
        sync_idle_end(sp, now, 1);
    q->idle = q->asleep = q->paused = 0;
}

/* sp's run time at now (it runs): its polling counts passes only while it has its hart. */
static uint64_t run_now(const struct sproc *sp, uint64_t now)
{
    return sp->p.run_ticks + (now > sp->p.dispatched_at ? now - sp->p.dispatched_at : 0);
}

/* p has nothing to run at now (uthread.c idle_pass): it polls, and every t->idle_poll ns of polling on its
   hart it pauses (pause_vp) - sleeps once idle SLEEP_AFTER_NS, else yields its hart. Its idle streak is
   published as the library publishes it (streak_begins: an episode and, while timed, a wait). */
static void idle(struct sproc *sp, struct tjob *t, struct tproc *q, uint64_t now)
{
    if (!q->idle) { /* it starts polling */
        q->idle = 1;
        sync_idle_begin(sp, now);
        q->idle_since = now;
        q->paused = 1;
    }
    if (q->paused) { /* back from a pause (or a streak's start): STEALS_PER_YIELD more passes */
        q->paused = 0;
        q->poll_from = run_now(sp, now);
    }
    q->asleep = 0;
    uint64_t polled = run_now(sp, now) - q->poll_from;
    if (polled < t->idle_poll) {
        sim_post(now + t->idle_poll - polled, EV_STEP, -1, sp, 0); /* its next pause, if nothing comes first */
        core_spin(sp, now);
        return;
    }
    q->paused = 1;
    if (now - q->idle_since >= SLEEP_AFTER_NS) { /* nothing for 2 ms: sleep, looking again after 1 ms */
        q->asleep = 1;
        core_block(sp, now, SLEEP_NS);
        return;
    }
    core_yield(sp, now);
}

int threads_step(struct sproc *sp, uint64_t now)
{
    struct job *j = sp->p.job;
    struct tjob *t = tj_of(j);
    struct tproc *q = &t->pr[sp->p.idx];
    int p = sp->p.idx, h = hart_of(sp);
    if (sp->phase == R_MAIN && t->pend) { /* main's creation is over: the thread is placed */
        t->pend = 0;
        pin(j, t->pend_to, t->pu, now);
    }
    if (sp->phase == R_THREAD && q->spawn) { /* the thread made one (msort's parent) as it ended */
        int home = tapp_home(t, q->next.i, q->next.k);
        q->spawn = 0;
        pin(j, t->coarse ? home : place_of(j, t, home), q->next, now);
    }
    if (sp->phase == R_THREAD) /* the thread it ran is over */
        thread_done(sp, t, now);
    if (sp->phase == R_CHECK)
        return sp->phase = R_NONE, 0;
    if (sp->phase == R_HELD && !tapp_can_run(t, q->cur))
        return core_spin(sp, now), 1; /* still polling its thread's rows */
    int held = sp->phase == R_HELD;
    sp->phase = R_NONE;
    if (t->mphase == M_DONE) {
        run_over(j, now);
        if (p == 0 && !t->checked) { /* back from sl_threads_run: the back-substitution's touches */
            t->checked = 1;
            sp->phase = R_CHECK;
            core_compute(sp, now, t->ops->check ? t->ops->check(j, t, h) : 0);
            return 1;
        }
        return 0;
    }
    if (!held && t->main_at == p && main_step(sp, t, now)) { /* main only between this process's threads */
        busy(sp, q, now);
        return 1;
    }
    if (t->mphase == M_DONE) /* main just returned */
        return threads_step(sp, now);
    if (held || fifo_pop(&q->q, &q->cur)) {
        busy(sp, q, now);
        if (q->cur.k >= 0 && !tapp_can_run(t, q->cur)) {
            wait_for_rows(sp, t, q, now);
            return 1;
        }
        sp->phase = R_THREAD;
        uint64_t ns = q->cur.k < 0 ? t->ops->setup_thread(j, t, p, h) : t->ops->run(j, t, p, h, q->cur, &q->next, &q->spawn);
        ns += run_touch(j, t, p, h, q->cur.d);
        if (q->spawn) { /* it makes its successor as it ends (msort): the descriptor now, placed at its end */
            q->next.d = desc_get(j, t, p, h, &ns);
            ns += made_touch(j, t, h, q->next.d, p);
        }
        core_compute(sp, now, ns);
        return 1;
    }
    idle(sp, t, q, now);
    return 1;
}

const char *threads_keys(struct job *j)
{
    struct tjob *t = tj_of(j);
    t->ops->keys(t, t->keys, sizeof t->keys);
    return t->keys;
}

void threads_free(void)
{
    for (int i = 0; i < NJOB; i++) {
        free(tj[i].rowmax);
        free(tj[i].data);
        free(tj[i].parked);
        free(tj[i].chunks);
        free(tj[i].dfree);
        tj[i].chunks = 0;
        tj[i].dfree = 0;
        tj[i].rowmax = 0;
        tj[i].data = 0;
        tj[i].parked = 0;
        for (int p = 0; p < SL_MAX_PROCS; p++) {
            free(tj[i].pr[p].q.v);
            tj[i].pr[p].q.v = 0;
        }
    }
}

void threads_sums(const struct tjob *t, uint64_t *copies, uint64_t *away, uint64_t *local)
{
    *copies = *away = *local = 0;
    for (int p = 0; p < t->P; p++) {
        *copies += t->pr[p].copies;
        *away += t->pr[p].away;
        *local += t->pr[p].local;
    }
}

uint64_t threads_copy_ns(uint64_t bytes) { return (uint64_t)(calib.copy_call + calib.copy_double * (double)bytes / 8); }

/* A thread app's report hook (struct sim_prog): its keys hook's RESULT keys. */
void threads_report(struct job *j, struct sjob *w, char *buf, size_t len) { snprintf(buf, len, "%s", threads_keys(j)); }
