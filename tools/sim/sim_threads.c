/*
 * sim_threads.c - the user-level thread programs of Markatos chapter 4 (lib/threads: uthread.h, place.h),
 * as the simulator runs them.
 *
 * The shared mechanism (one per job; read this first)
 *   main      the program's first thread. It runs on one process (process 0 at first) and makes the other
 *             threads one sl_place_spawn at a time (calib.thread_create each); a thread is placed when its
 *             creation ends. It waits (a join counter, a column's done word) by the job's barrier= kind:
 *             block parks it, and the thread that satisfies the wait pushes it on its own process's deque,
 *             so main goes on *there* (uthread.h: "whoever satisfies the wait pushes them onto its own
 *             deque"); the spinning kinds keep it on its process, which runs its other threads meanwhile.
 *   placement place=mcs: the thread's home process (the process holding its data); place=lb: the least
 *             loaded process, the load being its pinned threads not yet finished, ties broken at random
 *             (place.c's sl_place_decide, re-stated here: the library's file needs the thread runtime).
 *             A placed thread is pinned: it runs on that process only, never stolen.
 *   process   runs, in order, main when main is ready on it (its deque's bottom), else the oldest of its
 *             pinned threads (FIFO), each to completion (calib.thread_run: take it, switch to its stack,
 *             finish, plus the app's work); else it is idle: it polls for work, burning its hart, and after
 *             SLEEP_AFTER_US (2 ms) without any it sleeps on a futex for at most SLEEP_US (1 ms) at a time,
 *             and the maker of a thread pinned to a sleeper wakes it (the maker pays the futex_wake) -
 *             uthread.h's scheduler loop, steps 2-3. Work stealing is left out: every thread of these apps
 *             is pinned, so there is nothing to steal.
 *   end       when main returns every process leaves the run; process 0 then checks and reports.
 *
 * The apps (a thread's work: its compute, its row copies, its memory touches under --model)
 *   gauss variant=fine, sync=barrier (apps/gauss/fine.c, Markatos's version 2): set-up threads pinned one
 *             to each process allocate its buffers (FINE_WINDOW pivot copies and two rows) node-locally and
 *             generate its rows i % P == p (mcs: into a home buffer of its own; lb: into the one matrix,
 *             allocated by process 0). Then per column k main makes threads (i, k) for i > k, and waits for
 *             the column's last thread before making column k+1's. Thread (i, k) does n - k row ops
 *             (calib.gauss_rowop) reading the pivot row and reading and writing row i, and copies rows
 *             (calib.copy_call + calib.copy_double per double of columns k..n):
 *               mcs  at row i's home (i mod P); pivot row k copied into the process's buffer once per
 *                    process and column when k's home is another process; row i updated in place
 *               lb   on the least loaded process; both rows copied in and row i copied back (3 copies)
 *             It then sets ready[i] and decrements the column's count (a shared word: its line moves).
 *             copies=, away= (updates on a process not holding the row), threads= (main, P set-up, n(n-1)/2)
 *             as the app counts them; par_us from main's first column to the last column's end.
 *             After the run process 0 back-substitutes, reading every row's upper part where it lives.
 * Not modelled: gauss sync=cond (refused), process control of a thread app (adapt=: the thread library's
 * suspensions and rescues), the library's kernel yield every 32 failed polls, msort and grassfire
 * (refused by sim_work.c).
 *
 * Costs (sim.h struct calib, optional keys with defaults measured on deterministic QEMU, where a ns is an
 * instruction): thread_create_ns, thread_run_ns, copy_call_ns, copy_double_ns (sim_calib.c says where).
 *
 * Invariants: a thread is in exactly one process's FIFO from its creation until it runs; load[p] is the
 * number of threads placed on p not yet finished; main is on exactly one process or waiting.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"
#include "sim_threads.h"

#define SLEEP_AFTER_NS 2000000ULL /* lib/threads/uthread.c SLEEP_AFTER_US */
#define SLEEP_NS       1000000ULL /* SLEEP_US */
#define FINE_WINDOW    2          /* apps/gauss/gauss.h */

enum { PL_MCS, PL_LB };
enum { M_ALLOC, M_SETUP, M_SETUP_WAIT, M_COLUMN, M_WAIT, M_DONE };           /* main's program */
enum { R_NONE, R_MAIN, R_THREAD, R_CHECK };                                   /* what a process runs */

struct uthr {
    int32_t i, k; /* gauss: thread (i, k); k < 0: process i's set-up thread */
};

struct fifo {
    struct uthr *v;
    int head, tail, cap;
};

struct tproc {
    struct fifo q;        /* its pinned threads, oldest first */
    uint32_t load;
    int run;              /* R_*: the segment it is in */
    struct uthr cur;
    int idle, asleep;
    uint64_t idle_since;
    int pivcol[FINE_WINDOW];
    uint64_t buf, home;   /* under a model: its buffers (piv[], prow, rrow), its home rows (mcs) */
    uint64_t copies, away, updates;
};

static struct tjob {
    int on, place, P, n, spin;
    int main_at;          /* the process main is on, -1 while it waits */
    int mphase, k, i;     /* main's program: phase, column, next row to make */
    uint32_t left;        /* threads of the set-up, or of column k, not finished */
    uint64_t made, calls; /* threads made (main included); placement calls (tie-breaking stream) */
    int pend, pend_to;    /* main's creation in progress: the thread is placed when it ends */
    struct uthr pu;
    int checked;          /* process 0 has done its back-substitution */
    uint64_t t0, t1;
    uint64_t mat, words;  /* under a model: lb's matrix; ready[], colleft[] */
    struct tproc pr[SL_MAX_PROCS];
    char keys[160];
} tj[NJOB];

static struct tjob *tj_of(struct job *j) { return &tj[j->id - 1]; }
static int hart_of(struct sproc *sp) { return sp->p.on_cpu ? sp->p.on_cpu->id : 0; }

int threads_setup(struct job *j, char *err, size_t errlen)
{
    char v[32];
    struct tjob *t = tj_of(j);
    const char *a = j->scen->args;
    if (strcmp(j->scen->app, "gauss") || scenario_arg(a, "variant", v, sizeof v) != 0 || strcmp(v, "fine"))
        return 0;
    if (scenario_arg(a, "sync", v, sizeof v) == 0 && strcmp(v, "barrier"))
        return snprintf(err, errlen, "job=gauss: variant=fine,sync=%s is not modelled in the simulator (sync=barrier "
                                     "only: the column barrier of Markatos's version 2)", v),
               -1;
    if (scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
        return snprintf(err, errlen, "job=gauss: sched=%s needs variant=coarse (as the app says)", v), -1;
    if (j->adaptive && sched->allots)
        return snprintf(err, errlen, "job=gauss: variant=fine with adapt=yes (the thread library's process control) "
                                     "under a policy that allots harts is not modelled in the simulator"), -1;
    memset(t, 0, sizeof *t);
    t->on = 1;
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    if (scenario_arg(a, "place", v, sizeof v) == 0 && strcmp(v, "lb") && strcmp(v, "mcs"))
        return snprintf(err, errlen, "job=gauss: place=%s is not a placement (mcs, lb)", v), -1;
    t->spin = scenario_arg(a, "barrier", v, sizeof v) != 0 || strcmp(v, "block"); /* the app's default: spin */
    t->P = j->nprocs;
    t->n = scenario_arg(a, "n", v, sizeof v) == 0 ? atoi(v) : 0;
    if (t->n < 2)
        return snprintf(err, errlen, "job=gauss: variant=fine needs n= of at least 2 in the simulator"), -1;
    for (int p = 0; p < t->P; p++)
        for (int s = 0; s < FINE_WINDOW; s++)
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

static int home_of(const struct tjob *t, int i) { return i % t->P; }

/* The least loaded process, ties broken by rnd as place.c's least_loaded breaks them. */
static int least_loaded(struct tjob *t, uint64_t rnd)
{
    uint32_t min = UINT32_MAX;
    uint64_t ties = 0, pick;
    for (int p = 0; p < t->P; p++) {
        if (t->pr[p].load < min) {
            min = t->pr[p].load;
            ties = 1;
        } else if (t->pr[p].load == min) {
            ties++;
        }
    }
    pick = rnd % ties;
    for (int p = 0; p < t->P; p++)
        if (t->pr[p].load == min && pick-- == 0)
            return p;
    return 0;
}

static int place_of(struct tjob *t, int home)
{
    if (t->P <= 1)
        return 0;
    if (t->place == PL_MCS && home >= 0)
        return home;
    return least_loaded(t, sl_mix64(t->calls++ ^ sched_seed));
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

/* main becomes ready at now on process p (it had waited), or stays where it was (spinning kinds). */
static void main_ready(struct job *j, int p, uint64_t now)
{
    struct tjob *t = tj_of(j);
    if (t->spin)
        p = 0; /* it never left process 0: it polled there between the process's threads */
    t->main_at = p;
    struct sproc *o = sprocs[j->id - 1][p];
    if (t->pr[p].idle && o) {
        if (t->pr[p].asleep && o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, now);
        else if (o->act == A_SPIN)
            core_release_spinner(o, now);
    }
}

/* ---- memory under --model ---- */

static uint64_t rowb(const struct tjob *t) { return (uint64_t)(t->n + 1) * 8; }

/* bytes allocated on node and zeroed there by the hart as the kernel's sys_alloc does; *ns gets the stall. */
static uint64_t alloc_zeroed(struct job *j, int h, uint64_t bytes, uint64_t *ns)
{
    uint64_t pages = (bytes + 4095) & ~4095UL, a = mem_alloc(j->id, pages, mem_node_of_hart(h));
    *ns += mem_touch(j->id, h, a, pages, 8, 1);
    return a;
}

/* Where row i lives. */
static uint64_t row_at(const struct tjob *t, int i)
{
    if (t->place == PL_LB)
        return t->mat + (uint64_t)i * rowb(t);
    return t->pr[home_of(t, i)].home + (uint64_t)(i / t->P) * rowb(t);
}

/* ---- gauss fine: the threads' work ---- */

static uint64_t copy_ns(const struct tjob *t, int k)
{
    return (uint64_t)(calib.copy_call + calib.copy_double * (double)(t->n + 1 - k));
}

/* Process p's set-up thread: buffers, home rows (mcs), its rows generated. */
static uint64_t gauss_setup(struct job *j, struct tjob *t, int p, int h)
{
    uint64_t ns = (uint64_t)calib.thread_run;
    if (!mem_on())
        return ns;
    int nrows = p < t->n ? (t->n - p + t->P - 1) / t->P : 0;
    t->pr[p].buf = alloc_zeroed(j, h, (FINE_WINDOW + 2) * rowb(t) + 64, &ns);
    if (t->place == PL_MCS && nrows > 0)
        t->pr[p].home = alloc_zeroed(j, h, (uint64_t)nrows * rowb(t), &ns);
    for (int i = p; i < t->n; i += t->P)
        ns += mem_touch(j->id, h, row_at(t, i), rowb(t), 8, 1);
    return ns;
}

/* Thread (i, k) on process p: its cost (and its counts). */
static uint64_t gauss_update(struct job *j, struct tjob *t, int p, int h, int i, int k)
{
    struct tproc *q = &t->pr[p];
    int n = t->n, s = k % FINE_WINDOW, m = mem_on();
    uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, ns = (uint64_t)calib.thread_run;
    uint64_t piv = row_at(t, k) + off, r = row_at(t, i) + off;
    uint64_t prow = q->buf + (uint64_t)FINE_WINDOW * rowb(t) + off, rrow = prow + rowb(t);
    ns += (uint64_t)((double)(n - k) * calib.gauss_rowop);
    if (t->place == PL_MCS) {
        if (home_of(t, k) != p) { /* the pivot row, once per process and column */
            uint64_t mine = q->buf + (uint64_t)s * rowb(t) + off;
            if (q->pivcol[s] != k) {
                q->pivcol[s] = k;
                q->copies++;
                ns += copy_ns(t, k) + (m ? mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, mine, len, 8, 1)
                                         : 0);
            }
            piv = mine;
        }
    } else {
        q->copies += 3;
        q->away += home_of(t, i) != p;
        ns += 3 * copy_ns(t, k);
        if (m)
            ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, prow, len, 8, 1) +
                  mem_touch(j->id, h, r, len, 8, 0) + mem_touch(j->id, h, rrow, len, 8, 1);
        piv = prow;
    }
    uint64_t upd = t->place == PL_LB ? rrow : r;
    if (m) {
        ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, upd, len, 8, 0) +
              mem_touch(j->id, h, upd, len, 8, 1);
        if (t->place == PL_LB) /* row i back */
            ns += mem_touch(j->id, h, rrow, len, 8, 0) + mem_touch(j->id, h, r, len, 8, 1);
        uint64_t ready = t->words + (uint64_t)i * 4, left = t->words + (uint64_t)n * 4 + (uint64_t)k * 4;
        ns += mem_touch(j->id, h, ready, 4, 4, 1) + mem_touch(j->id, h, left, 4, 4, 0) +
              mem_touch(j->id, h, left, 4, 4, 1);
    }
    q->updates++;
    return ns;
}

/* Process 0's back-substitution after the run: every row's columns i..n, where the row lives. */
static uint64_t gauss_check(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    for (int i = t->n - 1; i >= 0; i--)
        ns += mem_touch(j->id, h, row_at(t, i) + (uint64_t)i * 8, (uint64_t)(t->n + 1 - i) * 8, 8, 0);
    return ns;
}

/* ---- main's program (gauss fine_main, sync=barrier) ---- */

/* main starts making thread u for process `to`: its cost (the futex_wake too if `to` sleeps now). */
static uint64_t create(struct tjob *t, int to, struct uthr u)
{
    t->pend = 1;
    t->pend_to = to;
    t->pu = u;
    return (uint64_t)calib.thread_create + (t->pr[to].asleep ? (uint64_t)calib.futex_wake_kick : 0);
}

/* main's next segment on sp (its process): 1 with it started, 0 if main waits now. */
static int main_step(struct sproc *sp, struct tjob *t, uint64_t now)
{
    struct job *j = sp->p.job;
    int h = hart_of(sp), P = t->P;
    uint64_t ns = 0;
    switch (t->mphase) {
    case M_ALLOC: /* fine_alloc: row index, per-column words, lb's matrix (process 0, before the run) */
        t->made = 1; /* main itself */
        if (mem_on()) {
            t->words = alloc_zeroed(j, h, (uint64_t)3 * (uint64_t)t->n * 4, &ns);
            if (t->place == PL_LB)
                t->mat = alloc_zeroed(j, h, (uint64_t)t->n * rowb(t), &ns);
        }
        t->mphase = M_SETUP;
        t->i = 0;
        break;
    case M_SETUP: /* a set-up thread pinned to each process */
        if (t->i < P) {
            if (t->i == 0)
                t->left = (uint32_t)P;
            ns = create(t, t->i, (struct uthr){ t->i, -1 });
            t->i++;
            break;
        }
        t->mphase = M_SETUP_WAIT;
        /* fall through */
    case M_SETUP_WAIT:
        if (t->left)
            return t->main_at = -1, 0;
        t->mphase = M_COLUMN;
        t->k = 0;
        t->i = 1;
        t->t0 = now;
        /* fall through */
    case M_COLUMN:
        if (t->k >= t->n - 1) {
            t->mphase = M_DONE;
            t->t1 = now;
            t->main_at = -1;
            return 0;
        }
        if (t->i == t->k + 1)
            t->left = (uint32_t)(t->n - 1 - t->k);
        ns = create(t, place_of(t, t->place == PL_MCS ? home_of(t, t->i) : -1), (struct uthr){ t->i, t->k });
        if (++t->i >= t->n)
            t->mphase = M_WAIT;
        break;
    case M_WAIT:
        if (t->left)
            return t->main_at = -1, 0;
        t->k++;
        t->i = t->k + 1;
        t->mphase = M_COLUMN;
        return main_step(sp, t, now);
    default: return 0;
    }
    sp->phase = R_MAIN;
    core_compute(sp, now, ns);
    return 1;
}

/* A thread of sp's finished at now: its counts, and main's wait. */
static void thread_done(struct sproc *sp, struct tjob *t, struct uthr u, uint64_t now)
{
    struct job *j = sp->p.job;
    t->pr[sp->p.idx].load--;
    if (--t->left == 0 && (t->mphase == M_SETUP_WAIT || t->mphase == M_WAIT))
        main_ready(j, sp->p.idx, now); /* the last one pushes main on its own deque */
}

/* The run is over: every idle process leaves its loop. */
static void run_over(struct job *j, uint64_t now)
{
    struct tjob *t = tj_of(j);
    for (int p = 0; p < t->P; p++) {
        struct sproc *o = sprocs[j->id - 1][p];
        if (!o || !t->pr[p].idle)
            continue;
        if (o->act == A_BLOCKED && o->p.state == P_BLOCKED)
            core_wake(o, now);
        else if (o->act == A_SPIN)
            core_release_spinner(o, now);
    }
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
    if (sp->phase == R_THREAD) /* the thread it ran is over */
        thread_done(sp, t, q->cur, now);
    if (sp->phase == R_CHECK)
        return sp->phase = R_NONE, 0;
    sp->phase = R_NONE;
    if (t->mphase == M_DONE) {
        run_over(j, now);
        if (p == 0 && !t->checked) { /* back from sl_threads_run: the back-substitution's touches */
            t->checked = 1;
            sp->phase = R_CHECK;
            core_compute(sp, now, gauss_check(j, t, h));
            return 1;
        }
        return 0;
    }
    if (t->main_at == p && main_step(sp, t, now)) {
        q->idle = q->asleep = 0;
        return 1;
    }
    if (t->mphase == M_DONE) /* main just returned */
        return threads_step(sp, now);
    if (fifo_pop(&q->q, &q->cur)) {
        q->idle = q->asleep = 0;
        sp->phase = R_THREAD;
        uint64_t ns = q->cur.k < 0 ? gauss_setup(j, t, p, h) : gauss_update(j, t, p, h, q->cur.i, q->cur.k);
        core_compute(sp, now, ns);
        return 1;
    }
    if (!q->idle) { /* it starts polling */
        q->idle = 1;
        q->idle_since = now;
        sim_post(now + SLEEP_AFTER_NS, EV_STEP, -1, sp, 0);
    }
    q->asleep = 0;
    if (now - q->idle_since >= SLEEP_AFTER_NS) { /* nothing for 2 ms: sleep, looking again after 1 ms */
        q->asleep = 1;
        core_block(sp, now, SLEEP_NS);
        return 1;
    }
    core_spin(sp, now);
    return 1;
}

const char *threads_keys(struct job *j)
{
    struct tjob *t = tj_of(j);
    uint64_t copies = 0, away = 0;
    for (int p = 0; p < t->P; p++) {
        copies += t->pr[p].copies;
        away += t->pr[p].away;
    }
    snprintf(t->keys, sizeof t->keys, "par_us=%lu copies=%lu away=%lu threads=%lu suspends=0",
             (t->t1 - t->t0) / 1000, copies, away, t->made);
    return t->keys;
}

void threads_free(void)
{
    for (int i = 0; i < NJOB; i++)
        for (int p = 0; p < SL_MAX_PROCS; p++) {
            free(tj[i].pr[p].q.v);
            tj[i].pr[p].q.v = 0;
        }
}
