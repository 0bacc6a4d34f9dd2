/*
 * gauss - Gaussian elimination on an n x n diagonally dominant system,
 * coarse grain (variant=coarse, Markatos 3.3.4 versions 3 and 4) or fine
 * grain on user-level threads (variant=fine, versions 2 and 1; see "Fine
 * grain" below).
 *
 * Coarse grain: P workers, user-level threads pinned one to each process
 * at start (sl_run_workers: under partition they follow the allotment);
 * row i belongs to worker i % procs (round robin, so the shrinking active
 * part of the matrix stays balanced). The matrix is
 * stored augmented, n rows of n+1 doubles: [A | b]. Elimination needs no
 * pivoting because A is strictly diagonally dominant (|off-diagonal| < 1,
 * diagonal = n).
 *   sync=barrier  for each column k, every process eliminates column k from
 *                 its rows below k, then all meet at a barrier (n-1 barriers)
 *   sync=cond     condition synchronization on the pivot row only: ready[k]
 *                 is set once row k has been fully reduced; a process waits
 *                 for ready[k] before using row k as the pivot. The owner of
 *                 row k+1 reduces it first and publishes it at once, so the
 *                 next column can start while this one is still being done.
 * The wait kind for barriers and for ready flags is the barrier= key
 * (spin|block|twophase|adaptive, wait.h), the barrier's shape the shape= key
 * (central|tree|combination, barrier.h).
 * sched= (sync=barrier only) says how the rows below k are dealt out in
 * each step: static is the round robin above; the others (ss, gss,
 * factoring, trapezoid, afs; loopsched.h) hand out chunks of the rows
 * [k+1, n) from a loop scheduler, which is reset for step k+1 by process 0
 * during step k (two loops, alternating; the barrier orders reset and use).
 * grabs= counts the chunks taken over all steps (static: every process with
 * a row takes its share once per step), remote= those not from the taker's
 * own share or queue. Rows are generated in parallel by their owners; the timed
 * part (par_us) runs from a start barrier to an end barrier. Process 0 then
 * back-substitutes and compares x with the x_true that generated b.
 *
 * Fine grain (variant=fine), the Butterfly style of Markatos's versions 1
 * and 2, on the thread library (uthread.h): one thread per row update per
 * column - for column k, a thread (i, k) for every row i > k. A thread
 * brings the rows it needs into its process's local buffer, computes, and
 * copies row i back, as on a machine where only local memory is cheap.
 * Where the threads run and where the rows live is place= (place.h):
 *   mcs  rows live in per-process home buffers, allocated node-locally by a
 *        thread pinned to that process (row i's home is process i mod P),
 *        and thread (i, k) runs at row i's home. Row i is local, so it is
 *        updated in place: only pivot row k is copied, once per process and
 *        column (a process keeps the pivot rows of the columns in flight).
 *   lb   rows live in one matrix; thread (i, k) goes to the least loaded
 *        process and copies both rows in and row i back.
 * copies= counts the rows copied (in and back): lb 3 per thread, mcs at
 * most P-1 per column. Threads never move once placed (pinned threads).
 *   sync=barrier  (version 2) the threads of column k meet at a thread-level
 *                 barrier - a count of the column's unfinished threads; the
 *                 last one publishes "column k done" - and only then does
 *                 the main thread create column k+1's threads
 *   sync=cond     (version 1) no barrier: each thread waits on readiness
 *                 flags. ready[r] counts the columns applied to row r, so
 *                 pivot row k is final when ready[k] == k, and row i is
 *                 ready for column k when ready[i] == k. The main thread
 *                 makes column k's threads as soon as pivot row k is final
 *                 (while column k-1 is still running), keeping at most
 *                 FINE_WINDOW columns in flight: a thread that starts before
 *                 its rows are ready holds a stack while it waits, and this
 *                 bounds those to FINE_WINDOW * n
 * Every wait (the flags, the column-done words) is of the barrier= kind,
 * and every kind is thread-aware (wait.h): a waiting thread lets its
 * process run other threads. shape= and sched= do not apply (sched must be
 * static). threads= is the threads made (main, P set-up threads, n(n-1)/2
 * updates), away= the updates that ran on a process not holding their row
 * (mcs: 0 unless process control suspended a home: adapt=yes under
 * partition; suspends= counts the suspensions). The answer must be
 * right, every update must have found its rows ready, and the counts must
 * add up, or check=FAIL.
 */
#include "schedlab.h"
#include "barrier.h"
#include "loopsched.h"
#include "place.h"
#include "uthread.h"

#define FINE_WINDOW 2        /* fine, sync=cond: columns in flight; also the pivot rows a process keeps */

SL_APP(.about = "Gaussian elimination, coarse or fine grain (Markatos 3.3.4)",
       /* a (or the home buffers): 8 n(n+1); x, x_true, rowp: 8n each; ready,
          colleft, coldone: 4n each; page rounding and the allocator's chunks
          are under 256 KB. fine: per process the thread scheduler (deque,
          a cache of 8 stacks), its buffers (FINE_WINDOW + 2 rows) and page
          rounding; per n a stack for every thread that may be started and
          waiting: at most the FINE_WINDOW columns in flight, n each. */
       .mem_key = "n", .mem_quad = 8, .mem_lin = 56 + FINE_WINDOW * SL_THREAD_STACK, .mem_const = 256 * 1024,
       .mem_per_proc = 8 * SL_THREAD_STACK + 128 * 1024,   /* covers coarse's worker stacks too */
       .flags = SL_APP_ADAPTIVE,
       SL_KEYS(SL_INT("n", 2, 65536, 768),
               SL_ENUM("variant", "coarse|fine", 0),
               SL_ENUM("sync", "barrier|cond", 0),
               SL_ENUM("barrier", "spin|block|twophase|adaptive", 0),
               SL_ENUM("shape", "central|tree|combination", 0),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs", 0),
               SL_ENUM("place", "mcs|lb", 0)));

#define MAXERR 1e-9

/* variant=fine: one per process, node-local; written only by the threads
   running on that process (which never interleave inside an update) */
struct fine_proc {
    double  *piv[FINE_WINDOW];   /* mcs: copies of pivot rows */
    int      pivcol[FINE_WINDOW];/* the column each holds, -1: none */
    double  *prow, *rrow;        /* lb (and mcs away from home): the two rows of an update */
    uint64_t copies, updates, away;
} __attribute__((aligned(64)));

struct gauss {
    int n, nprocs, cond;
    double *a;               /* row i at a + i*(n+1); written only by its owner */
    double *x_true, *x;
    uint32_t *ready;         /* coarse cond: 1 once row k is fully reduced; fine: columns applied to row k */
    struct sl_barrier bar;
    enum sl_wait wait;
    int sched;               /* enum sl_loopsched */
    struct sl_loop *loop[2]; /* sched != static: step k uses loop[k & 1] */
    uint64_t t0, t1;         /* process 0's clock at the start and end barriers */
    /* variant=fine */
    int fine, place;         /* place: enum sl_place */
    double **rowp;           /* row i's storage (home buffers or a) */
    struct fine_proc **fp;   /* per process */
    uint32_t *colleft;       /* threads of column k not finished */
    uint32_t *coldone;       /* 1 once every thread of column k has finished */
    uint32_t badorder;       /* updates that found a row not ready (must stay 0) */
    struct sl_joincnt setup;
};

static double *
row(struct gauss *g, int i)
{
    return g->rowp ? g->rowp[i] : g->a + (size_t)i * (size_t)(g->n + 1);
}

/* Row i of A from its own random stream; b_i = A_i . x_true. */
static void
gen_row(struct gauss *g, int i)
{
    struct sl_rng r;
    double *a = row(g, i), b = 0;

    sl_rng_init(&r, (uint64_t)i);
    for (int j = 0; j < g->n; j++) {
        a[j] = j == i ? (double)g->n : 2 * sl_rng_double(&r) - 1;
        b += a[j] * g->x_true[j];
    }
    a[g->n] = b;
}

/* Subtract the multiple of pivot row p (row k) that zeroes column k of
   row r; columns < k are already 0 in both and not touched. */
static void
eliminate_row(double *r, const double *p, int k, int n)
{
    double f = r[k] / p[k];

    for (int j = k + 1; j <= n; j++)
        r[j] -= f * p[j];
    r[k] = 0;
}

static void
eliminate(struct gauss *g, int i, int k)
{
    eliminate_row(row(g, i), row(g, k), k, g->n);
}

/* My first row below k: the smallest i > k with i % nprocs == id. */
static int
first_mine(struct gauss *g, int k, int id)
{
    int i = k + 1 + (id - (k + 1) % g->nprocs + g->nprocs) % g->nprocs;
    return i;
}

static void
publish(struct gauss *g, int i)
{
    sl_wait_set(&g->ready[i], 1, g->wait);
}

static void
solve_barrier(struct gauss *g, int id)
{
    for (int k = 0; k < g->n - 1; k++) {
        for (int i = first_mine(g, k, id); i < g->n; i += g->nprocs)
            eliminate(g, i, k);
        sl_barrier_wait(&g->bar);
    }
}

/* Rows [k+1, n) of step k from the loop scheduler. */
static void
solve_sched(struct gauss *g, int id)
{
    struct sl_chunk c;

    for (int k = 0; k < g->n - 1; k++) {
        if (id == 0 && k + 1 < g->n - 1)
            sl_loop_start(g->loop[(k + 1) & 1], k + 2, g->n);
        while (sl_loop_next(g->loop[k & 1], id, &c))
            for (int64_t i = c.start; i < c.start + c.len; i++)
                eliminate(g, (int)i, k);
        sl_barrier_wait(&g->bar);
    }
}

/* Adaptive waits for ready[k] need the owner of row k only. */
struct owner_wf {
    struct sl_waitfor wf;
    uint32_t proc;
};

static int
owner_running(const struct sl_waitfor *wf)
{
    return sl_worker_running((int)((const struct owner_wf *)wf)->proc);
}

/* Rows are visited in increasing order, so the owner of row k+1 reduces it
   first within column k and publishes it before its other rows. */
static void
solve_cond(struct gauss *g, int id)
{
    if (id == 0)
        publish(g, 0);                        /* row 0 needs no reduction */
    for (int k = 0; k < g->n - 1; k++) {
        struct owner_wf w = { { owner_running }, (uint32_t)(k % g->nprocs) };
        /* a worker that runs ahead finds its pivots ready and never waits: without a safe point per
           column, process control would not hear of a shrunken allotment for many quanta */
        sl_safe_point();
        sl_wait_ne_for(&g->ready[k], 0, g->wait, &w.wf);
        for (int i = first_mine(g, k, id); i < g->n; i += g->nprocs) {
            eliminate(g, i, k);
            if (i == k + 1)
                publish(g, i);
        }
    }
}

static void
worker(void *arg, int id)
{
    struct gauss *g = arg;

    for (int i = id; i < g->n; i += g->nprocs)
        gen_row(g, i);
    sl_barrier_wait(&g->bar);
    if (id == 0)
        g->t0 = sl_now_us();
    if (g->cond)
        solve_cond(g, id);
    else if (g->sched != SL_LOOP_STATIC)
        solve_sched(g, id);
    else
        solve_barrier(g, id);
    sl_barrier_wait(&g->bar);
    if (id == 0)
        g->t1 = sl_now_us();
}

/* ---- variant=fine ---- */

static struct gauss *G;      /* the thread functions' context (one gauss per job) */

static int
home_of(const struct gauss *g, int i)
{
    return i % g->nprocs;
}

/* The columns [k, n] of row `from`, into `to` (a row copy). */
static void
copy_row(double *to, const double *from, int k, int n)
{
    memcpy(to + k, from + k, (size_t)(n + 1 - k) * sizeof(double));
}

/* Wait (of the barrier= kind) until *word == want. An adaptive wait spins
   only while `owner`, the process that will change the word, runs; owner
   -1: nobody in particular (every other process). */
static void
wait_until(struct gauss *g, uint32_t *word, uint32_t want, int owner)
{
    struct owner_wf w = { { owner_running }, (uint32_t)owner };
    uint32_t v;

    while ((v = sl_wait_value(word)) != want)
        sl_wait_ne_for(word, v, g->wait, owner >= 0 ? &w.wf : 0);
}

/* Who updates row r: its home under mcs; under lb, unknown. */
static int
updater(struct gauss *g, int r)
{
    return g->place == SL_PLACE_MCS ? home_of(g, r) : -1;
}

/* Set-up, one thread pinned to each process p: its buffers, node-local (-1:
   the node of the hart p runs on), and its rows - under mcs in a home
   buffer of its own, under lb in the shared matrix. */
static void
fine_setup(void *arg)
{
    struct gauss *g = G;
    int p = (int)(uintptr_t)arg, n = g->n, P = g->nprocs;
    size_t rowb = (size_t)(n + 1) * sizeof(double);
    int nrows = p < n ? (n - p + P - 1) / P : 0;
    struct fine_proc *fp = sl_alloc_node(sizeof *fp, -1);
    double *buf = sl_alloc_node((FINE_WINDOW + 2) * rowb, -1);

    if (!fp || !buf)
        sl_die("out of memory for process %d's row buffers (n=%d)", p, n);
    memset(fp, 0, sizeof *fp);
    for (int s = 0; s < FINE_WINDOW; s++) {
        fp->piv[s] = buf + (size_t)s * (size_t)(n + 1);
        fp->pivcol[s] = -1;
    }
    fp->prow = buf + (size_t)FINE_WINDOW * (size_t)(n + 1);
    fp->rrow = fp->prow + (n + 1);
    g->fp[p] = fp;
    if (g->place == SL_PLACE_MCS && nrows > 0) {
        double *home = sl_alloc_node((size_t)nrows * rowb, -1);
        if (!home)
            sl_die("out of memory for process %d's home rows (n=%d)", p, n);
        for (int i = p, j = 0; i < n; i += P, j++)
            g->rowp[i] = home + (size_t)j * (size_t)(n + 1);
    }
    for (int i = p; i < n; i += P)
        gen_row(g, i);
    sl_joincnt_signal(&g->setup);
}

/* Thread (i, k): eliminate column k from row i with pivot row k. Between
   its waits and its end it never waits or yields, so it has its process's
   buffers to itself. */
static void
fine_update(void *arg)
{
    struct gauss *g = G;
    uintptr_t a = (uintptr_t)arg;
    int i = (int)(a & 0xffffffffu), k = (int)(a >> 32), n = g->n, p;
    struct fine_proc *fp;
    double *r, *piv;

    if (g->cond) {
        wait_until(g, &g->ready[k], (uint32_t)k, updater(g, k));   /* pivot row k is final */
        wait_until(g, &g->ready[i], (uint32_t)k, updater(g, i));   /* row i has had columns 0..k-1 */
    } else if (sl_wait_value(&g->ready[k]) != (uint32_t)k || sl_wait_value(&g->ready[i]) != (uint32_t)k) {
        __atomic_add_fetch(&g->badorder, 1, __ATOMIC_RELAXED);   /* the column barrier failed */
    }
    p = sl_self();
    fp = g->fp[p];
    r = g->rowp[i];
    piv = g->rowp[k];
    if (g->place == SL_PLACE_MCS) {
        if (home_of(g, k) != p) {                       /* the pivot row, once per process and column */
            int s = k % FINE_WINDOW;
            if (fp->pivcol[s] != k) {
                copy_row(fp->piv[s], piv, k, n);
                fp->pivcol[s] = k;
                fp->copies++;
            }
            piv = fp->piv[s];
        }
        if (home_of(g, i) != p) {                       /* only when a suspended home was rescued */
            copy_row(fp->rrow, r, k, n);
            r = fp->rrow;
            fp->copies++;
            fp->away++;
        }
    } else {
        copy_row(fp->prow, piv, k, n);
        copy_row(fp->rrow, r, k, n);
        piv = fp->prow;
        r = fp->rrow;
        fp->copies += 2;
        fp->away += home_of(g, i) != p;
    }
    eliminate_row(r, piv, k, n);
    if (r != g->rowp[i]) {
        copy_row(g->rowp[i], r, k, n);
        fp->copies++;
    }
    fp->updates++;
    sl_wait_set(&g->ready[i], (uint32_t)k + 1, g->wait);
    if (__atomic_sub_fetch(&g->colleft[k], 1, __ATOMIC_ACQ_REL) == 0)
        sl_wait_set(&g->coldone[k], 1, g->wait);
}

static void
fine_main(void *arg)
{
    struct gauss *g = arg;
    int n = g->n, P = g->nprocs, window = g->cond ? FINE_WINDOW : 1;

    sl_joincnt_init(&g->setup, (uint32_t)P);
    for (int p = 0; p < P; p++)
        sl_thread_spawn_on(p, fine_setup, (void *)(uintptr_t)p);
    sl_joincnt_wait(&g->setup);

    g->t0 = sl_now_us();
    for (int k = 0; k < n - 1; k++) {
        if (k >= window)                 /* barrier: column k-1 done; cond: k-window done */
            wait_until(g, &g->coldone[k - window], 1, -1);
        if (g->cond)                     /* cond: create column k once pivot row k is final */
            wait_until(g, &g->ready[k], (uint32_t)k, updater(g, k));
        __atomic_store_n(&g->colleft[k], (uint32_t)(n - 1 - k), __ATOMIC_RELAXED);
        for (int i = k + 1; i < n; i++) {
            void *a = (void *)(((uintptr_t)k << 32) | (uintptr_t)i);
            sl_place_spawn((enum sl_place)g->place, g->place == SL_PLACE_MCS ? home_of(g, i) : -1, -1,
                           fine_update, a);
        }
    }
    for (int k = 0; k < n - 1; k++)
        wait_until(g, &g->coldone[k], 1, -1);
    g->t1 = sl_now_us();
}

static int
fine_run(struct gauss *g, uint64_t *copies, uint64_t *away, uint64_t *threads, uint64_t *suspends)
{
    uint64_t updates = 0, want = (uint64_t)g->n * (uint64_t)(g->n - 1) / 2;
    struct sl_thread_stats st;

    g->rowp = sl_malloc((size_t)g->n * sizeof *g->rowp);
    g->fp = sl_calloc((size_t)g->nprocs, sizeof *g->fp);
    g->colleft = sl_calloc((size_t)g->n, sizeof(uint32_t));
    g->coldone = sl_calloc((size_t)g->n, sizeof(uint32_t));
    if (!g->rowp || !g->fp || !g->colleft || !g->coldone)
        sl_die("out of memory for n=%d", g->n);
    if (g->place == SL_PLACE_LB) {
        g->a = sl_malloc((size_t)g->n * (size_t)(g->n + 1) * sizeof(double));
        if (!g->a)
            sl_die("out of memory for n=%d", g->n);
        for (int i = 0; i < g->n; i++)
            g->rowp[i] = g->a + (size_t)i * (size_t)(g->n + 1);
    }
    G = g;
    sl_threads_run(fine_main, g);
    sl_threads_stats(&st);
    *threads = st.threads;
    *suspends = st.suspends;
    *copies = *away = 0;
    for (int p = 0; p < g->nprocs; p++) {
        *copies += g->fp[p]->copies;
        *away += g->fp[p]->away;
        updates += g->fp[p]->updates;
    }
    return updates == want && st.threads == want + (uint64_t)g->nprocs + 1 &&
           __atomic_load_n(&g->badorder, __ATOMIC_RELAXED) == 0;
}

static double
back_substitute(struct gauss *g)
{
    double maxerr = 0;

    for (int i = g->n - 1; i >= 0; i--) {
        double *r = row(g, i), s = r[g->n];
        for (int j = i + 1; j < g->n; j++)
            s -= r[j] * g->x[j];
        g->x[i] = s / r[i];
    }
    for (int i = 0; i < g->n; i++) {
        double e = g->x[i] - g->x_true[i];
        if (e < 0)
            e = -e;
        if (!(e <= maxerr))                   /* also catches NaN */
            maxerr = e;
    }
    return maxerr;
}

int
main(void)
{
    struct gauss g = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs(),
                       .cond = sl_arg_is("sync", "cond"), .fine = sl_arg_is("variant", "fine"),
                       .place = sl_place_parse(sl_arg_str("place")) };
    struct sl_rng r;
    double maxerr;
    uint64_t local = 0, remote = 0, l1, r1;

    if (!g.fine)
        g.a = sl_malloc((size_t)g.n * (size_t)(g.n + 1) * sizeof(double));
    g.x_true = sl_malloc((size_t)g.n * sizeof(double));
    g.x = sl_malloc((size_t)g.n * sizeof(double));
    g.ready = sl_calloc((size_t)g.n, sizeof(uint32_t));
    if ((!g.fine && !g.a) || !g.x_true || !g.x || !g.ready)
        sl_die("out of memory for n=%d", g.n);
    sl_rng_init(&r, (uint64_t)g.n + 0x5eed);
    for (int j = 0; j < g.n; j++)
        g.x_true[j] = 2 * sl_rng_double(&r) - 1;
    g.sched = sl_loop_parse(sl_arg_str("sched"));
    if (g.fine) {
        uint64_t copies, away, threads, suspends;
        int ok;
        if (g.sched != SL_LOOP_STATIC)
            sl_die("sched=%s needs variant=coarse (variant=fine makes a thread per row update)",
                   sl_arg_str("sched"));
        g.wait = sl_wait_from_arg("barrier");
        ok = fine_run(&g, &copies, &away, &threads, &suspends);
        maxerr = back_substitute(&g);
        sl_report(ok && maxerr <= MAXERR, "maxerr=%.2e par_us=%lu copies=%lu away=%lu threads=%lu sleeps=%lu suspends=%lu%s",
                  maxerr, (unsigned long)(g.t1 - g.t0), (unsigned long)copies, (unsigned long)away,
                  (unsigned long)threads,
                  (unsigned long)sl_wait_blocks(), (unsigned long)suspends, ok ? "" : " badcount=1");
        return 0;
    }
    sl_barrier_init_args(&g.bar, (uint32_t)g.nprocs, "shape", "barrier");
    g.wait = g.bar.wait;
    if (g.sched != SL_LOOP_STATIC) {
        if (g.cond)
            sl_die("sched=%s needs sync=barrier (sync=cond has no loop per step)", sl_arg_str("sched"));
        for (int i = 0; i < 2; i++) {
            g.loop[i] = sl_alloc_node(sl_loop_bytes(g.nprocs), -1);
            if (!g.loop[i])
                sl_die("out of memory for the loop scheduler");
            sl_loop_init(g.loop[i], (enum sl_loopsched)g.sched, g.nprocs, 0);
        }
        sl_loop_start(g.loop[0], 1, g.n);
    }

    sl_run_workers(worker, &g);

    maxerr = back_substitute(&g);
    if (g.sched != SL_LOOP_STATIC) {
        sl_loop_grabs(g.loop[0], &local, &remote);
        sl_loop_grabs(g.loop[1], &l1, &r1);
        local += l1;
        remote += r1;
    } else if (!g.cond) {
        for (int k = 0; k < g.n - 1; k++)
            local += (uint64_t)(g.n - 1 - k < g.nprocs ? g.n - 1 - k : g.nprocs);
    }
    sl_report(maxerr <= MAXERR, "maxerr=%.2e par_us=%lu grabs=%lu remote=%lu sleeps=%lu", maxerr,
              (unsigned long)(g.t1 - g.t0), (unsigned long)(local + remote), (unsigned long)remote,
              (unsigned long)sl_wait_blocks());
    return 0;
}
