/*
 * gauss variant=fine: the Butterfly style of Markatos's versions 1 and 2,
 * on the thread library (uthread.h): one thread per row update per
 * column - for column k, a thread (i, k) for every row i > k. A thread
 * brings the rows it needs into its process's local buffer, computes, and
 * copies row i back, as on a machine where only local memory is cheap.
 * Where the threads run and where the rows live is place= (place.h):
 *   mcs  rows live in per-process home buffers, allocated node-locally by a
 *        thread pinned to that process (row i's home is process i mod P),
 *        and thread (i, k) runs at row i's home. Row i is local, so it is
 *        updated in place: only pivot row k is copied, once per process and
 *        column (a process keeps the pivot rows of the columns in flight).
 *   lb   rows live in one matrix (home=one) or, with home=own, in the
 *        same per-process home buffers as mcs ("the main program
 *        distributes the problem matrix among the memories of the
 *        machine", 3.3.4); thread (i, k) goes to the least loaded process
 *        and copies both rows in and row i back, wherever they live.
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
#include "gauss.h"
#include "loops/loopsched.h"
#include "threads/place.h"
#include "threads/uthread.h"

/* One per process, node-local; written only by the threads running on that
   process (which never interleave inside an update). */
struct fine_proc {
    double *piv[FINE_WINDOW]; /* mcs: copies of pivot rows */
    int pivcol[FINE_WINDOW];  /* the column each holds, -1: none */
    double *prow, *rrow;      /* lb (and mcs away from home): the two rows of an update */
    uint64_t copies, updates, away;
} __attribute__((aligned(64)));

struct fine {
    struct gauss *g;
    int place;             /* enum sl_place */
    struct fine_proc **fp; /* per process */
    uint32_t *colleft;     /* threads of column k not finished */
    uint32_t *coldone;     /* 1 once every thread of column k has finished */
    uint32_t badorder;     /* updates that found a row not ready (must stay 0) */
    struct sl_joincnt setup;
};

static struct fine *F; /* the thread functions' context (one run per job) */

static int home_of(const struct gauss *g, int i) { return i % g->nprocs; }

/* The columns [k, n] of row `from`, into `to` (a row copy). */
static void copy_row(double *to, const double *from, int k, int n)
{
    memcpy(to + k, from + k, (size_t)(n + 1 - k) * sizeof(double));
}

/* Wait (of the barrier= kind) until *word == want. An adaptive wait spins
   only while `owner`, the process that will change the word, runs; owner
   -1: nobody in particular (every other process). */
static void wait_until(struct gauss *g, uint32_t *word, uint32_t want, int owner)
{
    struct owner_wf w = { { gauss_owner_running }, (uint32_t)owner };
    uint32_t v;

    while ((v = sl_wait_value(word)) != want)
        sl_wait_ne_for(word, v, g->wait, owner >= 0 ? &w.wf : 0);
}

/* Who updates row r: its home under mcs; under lb, unknown. */
static int updater(struct fine *f, int r) { return f->place == SL_PLACE_MCS ? home_of(f->g, r) : -1; }

/* Process p's buffers: FINE_WINDOW pivot copies and the two rows of an update. */
static struct fine_proc *proc_buffers(int p, int n)
{
    size_t rowb = (size_t)(n + 1) * sizeof(double);
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
    return fp;
}

/* Set-up, one thread pinned to each process p: its buffers, node-local (-1:
   the node of the hart p runs on), and its rows - under mcs (and lb with
   home=own) in a home buffer of its own, under lb in the shared matrix. */
static void fine_setup(void *arg)
{
    struct fine *f = F;
    struct gauss *g = f->g;
    int p = (int)(uintptr_t)arg, n = g->n, P = g->nprocs;

    f->fp[p] = proc_buffers(p, n);
    if (f->place == SL_PLACE_MCS || g->own)
        gauss_home_rows(g, p);
    for (int i = p; i < n; i += P)
        gauss_gen_row(g, i);
    sl_joincnt_signal(&f->setup);
}

/* Thread (i, k): eliminate column k from row i with pivot row k. Between
   its waits and its end it never waits or yields, so it has its process's
   buffers to itself. */
static void fine_update(void *arg)
{
    struct fine *f = F;
    struct gauss *g = f->g;
    uintptr_t a = (uintptr_t)arg;
    int i = (int)(a & 0xffffffffu), k = (int)(a >> 32), n = g->n, p;
    struct fine_proc *fp;
    double *r, *piv;

    if (g->cond) {
        wait_until(g, &g->ready[k], (uint32_t)k, updater(f, k)); /* pivot row k is final */
        wait_until(g, &g->ready[i], (uint32_t)k, updater(f, i)); /* row i has had columns 0..k-1 */
    } else if (sl_wait_value(&g->ready[k]) != (uint32_t)k || sl_wait_value(&g->ready[i]) != (uint32_t)k) {
        __atomic_add_fetch(&f->badorder, 1, __ATOMIC_RELAXED); /* the column barrier failed */
    }
    p = sl_self();
    fp = f->fp[p];
    r = g->rowp[i];
    piv = g->rowp[k];
    if (f->place == SL_PLACE_MCS) {
        if (home_of(g, k) != p) { /* the pivot row, once per process and column */
            int s = k % FINE_WINDOW;
            if (fp->pivcol[s] != k) {
                copy_row(fp->piv[s], piv, k, n);
                fp->pivcol[s] = k;
                fp->copies++;
            }
            piv = fp->piv[s];
        }
        if (home_of(g, i) != p) { /* only when a suspended home was rescued */
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
    gauss_eliminate_row(r, piv, k, n);
    if (r != g->rowp[i]) {
        copy_row(g->rowp[i], r, k, n);
        fp->copies++;
    }
    fp->updates++;
    sl_wait_set(&g->ready[i], (uint32_t)k + 1, g->wait);
    if (__atomic_sub_fetch(&f->colleft[k], 1, __ATOMIC_ACQ_REL) == 0)
        sl_wait_set(&f->coldone[k], 1, g->wait);
}

static void fine_main(void *arg)
{
    struct fine *f = arg;
    struct gauss *g = f->g;
    int n = g->n, P = g->nprocs, window = g->cond ? FINE_WINDOW : 1;

    sl_joincnt_init(&f->setup, (uint32_t)P);
    for (int p = 0; p < P; p++)
        sl_thread_spawn_on(p, fine_setup, (void *)(uintptr_t)p);
    sl_joincnt_wait(&f->setup);

    g->t0 = sl_now_us();
    for (int k = 0; k < n - 1; k++) {
        if (k >= window) /* barrier: column k-1 done; cond: k-window done */
            wait_until(g, &f->coldone[k - window], 1, -1);
        if (g->cond) /* cond: create column k once pivot row k is final */
            wait_until(g, &g->ready[k], (uint32_t)k, updater(f, k));
        __atomic_store_n(&f->colleft[k], (uint32_t)(n - 1 - k), __ATOMIC_RELAXED);
        for (int i = k + 1; i < n; i++) {
            void *a = (void *)(((uintptr_t)k << 32) | (uintptr_t)i);
            sl_place_spawn((enum sl_place)f->place, f->place == SL_PLACE_MCS ? home_of(g, i) : -1, -1, fine_update, a);
        }
    }
    for (int k = 0; k < n - 1; k++)
        wait_until(g, &f->coldone[k], 1, -1);
    g->t1 = sl_now_us();
}

/* The row index and per-column words; under lb the one matrix. */
static void fine_alloc(struct fine *f)
{
    struct gauss *g = f->g;

    g->rowp = sl_malloc((size_t)g->n * sizeof *g->rowp);
    f->fp = sl_calloc((size_t)g->nprocs, sizeof *f->fp);
    f->colleft = sl_calloc((size_t)g->n, sizeof(uint32_t));
    f->coldone = sl_calloc((size_t)g->n, sizeof(uint32_t));
    if (!g->rowp || !f->fp || !f->colleft || !f->coldone)
        sl_die("out of memory for n=%d", g->n);
    if (f->place == SL_PLACE_LB && !g->own) {
        g->a = sl_malloc((size_t)g->n * (size_t)(g->n + 1) * sizeof(double));
        if (!g->a)
            sl_die("out of memory for n=%d", g->n);
        for (int i = 0; i < g->n; i++)
            g->rowp[i] = g->a + (size_t)i * (size_t)(g->n + 1);
    }
}

void gauss_fine(struct gauss *g)
{
    struct fine f = { .g = g, .place = sl_place_parse(sl_arg_str("place")) };
    uint64_t updates = 0, copies = 0, away = 0, want = (uint64_t)g->n * (uint64_t)(g->n - 1) / 2;
    struct sl_thread_stats st;
    double maxerr;
    int ok;

    if (sl_loop_parse(sl_arg_str("sched")) != SL_LOOP_STATIC)
        sl_die("sched=%s needs variant=coarse (variant=fine makes a thread per row update)", sl_arg_str("sched"));
    g->wait = sl_wait_from_arg("barrier");
    fine_alloc(&f);
    F = &f;
    sl_threads_run(fine_main, &f);
    sl_threads_stats(&st);
    for (int p = 0; p < g->nprocs; p++) {
        copies += f.fp[p]->copies;
        away += f.fp[p]->away;
        updates += f.fp[p]->updates;
    }
    ok = updates == want && st.threads == want + (uint64_t)g->nprocs + 1 &&
        __atomic_load_n(&f.badorder, __ATOMIC_RELAXED) == 0;
    maxerr = gauss_back_substitute(g);
    sl_report(ok && gauss_maxerr_ok(maxerr),
              "maxerr=%.2e par_us=%lu copies=%lu away=%lu threads=%lu sleeps=%lu suspends=%lu%s", maxerr,
              (unsigned long)(g->t1 - g->t0), (unsigned long)copies, (unsigned long)away, (unsigned long)st.threads,
              (unsigned long)sl_wait_blocks(), (unsigned long)st.suspends, ok ? "" : " badcount=1");
}
