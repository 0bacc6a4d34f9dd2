/*
 * apps/gauss.c - Gaussian elimination's model (apps/gauss): one n x (n+1) matrix of doubles, row-major.
 *
 * variant=coarse (apps/gauss/coarse.c, barrier): a barrier program (sim_program.c) of n steps k, each the
 *   row ops of the rows i > k with i % P == idx, (n-k) each, calib.gauss_rowop, and a barrier. Memory
 *   (--model): before the first barrier worker idx generates its rows i % P == idx (written whole); at
 *   step k, for each of its rows i > k, it reads row k's columns k..n (the pivot row, again for every row,
 *   as gauss_eliminate_row does: a hit in a first-level cache, a word from memory without one) and reads
 *   and writes row i's; at the end process 0 back-substitutes, reading the upper triangle.
 *   sched= other than static (coarse.c solve_sched): step k's loop over the rows k+1..n-1 from the
 *   library's loop scheduler (sim_loops.c), each row n - k row ops; under a model each row reads the pivot
 *   row's columns k..n and reads and writes its own.
 * variant=fine (apps/gauss/fine.c; sync=barrier: Markatos's version 2, sync=cond: version 1): a thread
 *   program on the kit's mechanism (sim_threads.c). Before the run process 0 allocates the per-column words
 *   (and under lb the one matrix); set-up thread p allocates its buffers (TH_WINDOW pivot copies and two
 *   rows) node-locally and generates its rows i % P == p (mcs, and lb with home=own: into a home buffer of
 *   its own; lb: into the matrix). Round k (a column) is threads (i, k) for i > k; thread (i, k) does n - k row ops
 *   (calib.gauss_rowop) reading the pivot row and reading and writing row i, and copies rows
 *   (calib.copy_call + calib.copy_double per double of columns k..n):
 *     mcs  at row i's home (i mod P); pivot row k copied into the process's buffer once per process and
 *          column when k's home is another process; row i updated in place
 *     lb   on the least loaded process; both rows copied in and row i copied back (3 copies)
 *   then it sets ready[i] and decrements the column's count (a shared word: its line moves).
 *   sync=barrier: main makes column k + 1 once column k is done. sync=cond: main makes column k once pivot
 *   row k is final and column k - 2 done (FINE_WINDOW columns in flight), and thread (i, k) waits until
 *   pivot row k is final and row i has had columns 0..k-1 (gs_can_run). The check: back-substitution,
 *   every row's upper part read where it lives. RESULT: par_us copies= away= (updates away from the row's
 *   home) threads= (main, P set-up, n(n-1)/2) as the app counts them.
 * home=own (apps/gauss/main.c gauss_home_rows, the thesis's Butterfly programs, 3.3.4): worker p's rows
 *   i % P == p in one block of its own, from the node of the hart it runs on before it generates them
 *   (sim_touch.c touch_own), and coarse a node-local buffer for a pivot row after it; at step k under
 *   sched=static a worker with a row below k that does not own row k copies row k's columns k..n into its
 *   buffer (read where row k lives, written locally, calib.copy_call + copy_double a double: coarse.c
 *   pivot()) and its row ops read the copy; under sched= a chunk's rows and the pivot row are read where they
 *   live. variant=fine place=lb: the rows in the per-process home buffers mcs has, not in one matrix (fine.c
 *   fine_alloc). The remote accesses this leaves are the profile's remote_cycles, by the cache model's node
 *   of each address. Not modelled: the row pointers (g->rowp, one word per row a step) home=own reads.
 *
 * The library's heap at start-up (sim_start.c's measurement): gauss n=256 coarse, RESULT's mem_kb at
 * P = 1, 2, 4 936 1016 1176 -> 872 888 920 less 516 (the matrix) -> 340 + 16 P.
 */
#include <stdlib.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "../sim_threads.h"
#include "loops/loopsched.h"

struct gauss {
    int64_t n;
    int own; /* home=own: each worker's rows in a block on its own node (setup) */
};

static const struct sim_key keys[] = { SIM_KEY(struct gauss, n), { 0 } };

/* ---- variant=coarse ---- */

static uint64_t matrix_bytes(int64_t n) { return (uint64_t)n * (uint64_t)(n + 1) * 8; }

static int coarse(const struct sjob *w) { return !w->threads; }
static int own(const struct job *j) { return SIM_STATE(sjob_of(j), struct gauss)->own; }

/* home=own: worker p's block, its rows i = p, p+P, ... (whole pages), then (coarse) its pivot row's buffer. */
static uint64_t own_rows_bytes(int64_t n, int P, int p)
{
    int64_t rows = p < n ? (n - p + P - 1) / P : 0;
    return rows > 0 ? alloc_pages((uint64_t)rows * (uint64_t)(n + 1) * 8) : 0;
}

static uint64_t own_block(struct job *j, int64_t n, int p, int h, uint64_t *ns)
{
    return touch_own(j, p, h, own_rows_bytes(n, j->nprocs, p) + alloc_pages((uint64_t)(n + 1) * 8), ns);
}

/* Row i: in the matrix (home=one; allocated and zeroed at first use), or in its owner's block (home=own);
   *ns gets a first use's stall. */
static uint64_t row_at(struct job *j, int64_t n, int64_t i, int h, uint64_t *ns)
{
    uint64_t rowb = (uint64_t)(n + 1) * 8, zero = 0;
    if (own(j))
        return own_block(j, n, (int)(i % j->nprocs), h, ns) + (uint64_t)(i / j->nprocs) * rowb;
    uint64_t a = touch_array_at(j, matrix_bytes(n), h, &zero);
    *ns += zero;
    return a + (uint64_t)i * rowb;
}

/* Row k's columns k..n (len bytes) as worker idx's row ops read them: with home=own a row another worker
   owns is first copied into idx's buffer (coarse.c pivot(): once per step); *ns gets the copy's touches
   (work has its instructions). */
static uint64_t pivot_at(struct job *j, int64_t n, int64_t k, int idx, int h, uint64_t *ns)
{
    uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, piv = row_at(j, n, k, h, ns) + off;
    if (!own(j) || k % j->nprocs == idx)
        return piv;
    uint64_t buf = own_block(j, n, idx, h, ns) + own_rows_bytes(n, j->nprocs, idx) + off;
    *ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, buf, len, 8, 1);
    return buf;
}

/* Worker idx's step k = sp->iter: the row ops of its rows, and under a model their touches. */
static uint64_t work(struct sproc *sp, struct sjob *w, int idx, int *last)
{
    int P = sp->p.job->nprocs;
    int64_t n = SIM_STATE(w, struct gauss)->n, k = (int64_t)sp->iter, rows = 0;
    for (int64_t r = k + 1; r < n; r++)
        rows += r % P == idx;
    *last = k + 1 >= n;
    uint64_t ns = (uint64_t)((double)(rows * (n - k)) * calib.gauss_rowop);
    struct job *j = sp->p.job;
    if (own(j) && rows && k % P != idx) /* home=own: the pivot row's copy (pivot_at has its touches) */
        ns += threads_copy_ns((uint64_t)(n + 1 - k) * 8);
    if (!mem_on() || !sp->p.on_cpu || k >= n || !rows)
        return ns;
    int h = sp->p.on_cpu->id;
    uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, piv = pivot_at(j, n, k, idx, h, &ns);
    for (int64_t r = k + 1; r < n; r++)
        if (r % P == idx) { /* gauss_eliminate_row reads the pivot row again for every row it updates */
            uint64_t row = row_at(j, n, r, h, &ns) + off;
            ns += mem_touch(j->id, h, piv, len, 8, 0);
            ns += mem_touch(j->id, h, row, len, 8, 0);
            ns += mem_touch(j->id, h, row, len, 8, 1);
        }
    return ns;
}

static int last(const struct sjob *w, uint64_t i) { return i + 1 >= (uint64_t)SIM_STATE(w, struct gauss)->n; }

/* Worker idx before the first barrier generates its rows. Stall ns. */
static uint64_t gen_ns(struct sproc *sp, int idx)
{
    struct job *j = sp->p.job;
    int64_t n = SIM_STATE(sjob_of(j), struct gauss)->n;
    if (!mem_on() || !sp->p.on_cpu || !coarse(sjob_of(j)) || n <= 0)
        return 0;
    int h = sp->p.on_cpu->id;
    uint64_t rowb = (uint64_t)(n + 1) * 8, ns = 0;
    if (own(j)) /* gauss_home_rows and the pivot buffer, before the rows are generated */
        own_block(j, n, idx, h, &ns);
    for (int64_t i = idx; i < n; i += j->nprocs) {
        uint64_t row = row_at(j, n, i, h, &ns);
        ns += mem_touch(j->id, h, row, rowb, 8, 1);
    }
    return ns;
}

/* Process 0's set-up: the matrix allocated (and zeroed); home=own has none (the row pointers are the
   library's heap's). Stall ns. */
static uint64_t arrays_ns(struct sproc *sp)
{
    int64_t n = SIM_STATE(sjob_of(sp->p.job), struct gauss)->n;
    uint64_t zero;
    if (!mem_on() || !sp->p.on_cpu || !coarse(sjob_of(sp->p.job)) || sp->p.idx != 0 || n <= 0 || own(sp->p.job))
        return 0;
    touch_array_at(sp->p.job, matrix_bytes(n), sp->p.on_cpu->id, &zero);
    return zero;
}

/* Process 0's back-substitution reads the upper triangle, each row where it lives. Stall ns. */
static uint64_t check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    int64_t n = SIM_STATE(sjob_of(j), struct gauss)->n;
    if (!mem_on() || !sp->p.on_cpu || !coarse(sjob_of(j)) || sp->p.idx != 0 || n <= 0 ||
        !(own(j) ? touch_own_base(j, 0) : touch_array_base(j)))
        return 0;
    int h = sp->p.on_cpu->id;
    uint64_t ns = 0;
    for (int64_t i = n - 1; i >= 0; i--) {
        uint64_t row = row_at(j, n, i, h, &ns);
        ns += mem_touch(j->id, h, row + (uint64_t)i * 8, (uint64_t)(n + 1 - i) * 8, 8, 0);
    }
    return ns;
}

/* gauss sched= (not static; apps/gauss/coarse.c solve_sched): step k's loop over the rows k+1..n-1, each row
   (n - k) row ops; under a model each row reads the pivot row's columns k..n and reads and writes its own. */
static int chunk(struct sproc *sp, uint64_t *ns)
{
    int64_t n = SIM_STATE(sjob_of(sp->p.job), struct gauss)->n;
    struct sl_chunk c;
    int64_t k = (int64_t)sp->iter;
    int id = sp->p.job->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0;
    if (k + 1 >= n || !loops_grab(sp, k + 1, n, &c, ns))
        return 0;
    *ns += (uint64_t)((double)((uint64_t)c.len * (uint64_t)(n - k)) * calib.gauss_rowop);
    if (mem_on()) { /* a chunk's rows and the pivot row where they live (home=own: no copy) */
        struct job *j = sp->p.job;
        uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, piv = row_at(j, n, k, h, ns) + off;
        for (int64_t r = c.start; r < c.start + c.len; r++) {
            uint64_t row = row_at(j, n, r, h, ns) + off;
            *ns += mem_touch(id, h, piv, len, 8, 0);
            *ns += mem_touch(id, h, row, len, 8, 0);
            *ns += mem_touch(id, h, row, len, 8, 1);
        }
    }
    return 1;
}

/* ---- variant=fine ---- */

static int gs_home(const struct tjob *t, int i) { return i % t->P; }
static uint64_t gs_rowb(const struct tjob *t) { return (uint64_t)(t->n + 1) * 8; }

/* gauss's words (t->data): home=own, then ready[r] (columns applied to row r) and colleft[k] (column k's
   threads not finished) */
struct gs_data {
    int own;
    uint32_t w[];
};
static int gs_own(const struct tjob *t) { return ((const struct gs_data *)t->data)->own; }
static uint32_t *gs_ready(const struct tjob *t) { return ((struct gs_data *)t->data)->w; }
static uint32_t *gs_left(const struct tjob *t) { return ((struct gs_data *)t->data)->w + t->n; }

/* lb with home=one: the rows in one matrix; else in the processes' home buffers. */
static int gs_matrix(const struct tjob *t) { return t->place == PL_LB && !gs_own(t); }

/* Where row i lives. */
static uint64_t gs_row(const struct tjob *t, int i)
{
    if (gs_matrix(t))
        return t->mat + (uint64_t)i * gs_rowb(t);
    return t->pr[gs_home(t, i)].home + (uint64_t)(i / t->P) * gs_rowb(t);
}

static int fine_setup(struct job *j, struct tjob *t, char *err, size_t errlen)
{
    char v[32];
    const char *a = j->scen->args;
    if (scenario_arg(a, "variant", v, sizeof v) != 0 || strcmp(v, "fine"))
        return 0; /* coarse: a barrier program */
    t->place = scenario_arg(a, "place", v, sizeof v) == 0 && !strcmp(v, "lb") ? PL_LB : PL_MCS;
    t->n = (int)SIM_STATE(sjob_of(j), struct gauss)->n;
    t->cond = scenario_arg(a, "sync", v, sizeof v) == 0 && !strcmp(v, "cond");
    if (scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static"))
        return snprintf(err, errlen, "job=gauss: sched=%s needs variant=coarse (as the app says)", v), -1;
    if (t->n < 2)
        return snprintf(err, errlen, "job=gauss: variant=fine needs n= of at least 2 in the simulator"), -1;
    t->spin = scenario_arg(a, "barrier", v, sizeof v) != 0 || strcmp(v, "block"); /* the app's default: spin */
    t->rounds = t->n - 1;
    struct gs_data *d = calloc(1, sizeof *d + 2 * (size_t)t->n * sizeof d->w[0]); /* ready[], then colleft[] */
    if (!d)
        panic("sim: out of memory for gauss's words");
    d->own = SIM_STATE(sjob_of(j), struct gauss)->own;
    for (int k = 0; k < t->n - 1; k++)
        d->w[t->n + k] = (uint32_t)(t->n - 1 - k);
    t->data = d;
    return 1;
}

/* fine_alloc: ready[], colleft[], coldone[]; lb's matrix (home=one). */
static uint64_t fine_alloc(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    t->words = touch_alloc_zeroed(j, h, (uint64_t)3 * (uint64_t)t->n * 4, &ns);
    if (gs_matrix(t))
        t->mat = touch_alloc_zeroed(j, h, (uint64_t)t->n * gs_rowb(t), &ns);
    return ns;
}

static int fine_first(const struct tjob *t, int r) { return r + 1; }
static int fine_end(const struct tjob *t, int r) { return t->n; }


/* fine_main: column r once column r - TH_WINDOW is done (sync=barrier: the window is 1 column, its threads
   all finished) and, sync=cond, pivot row r final; the end once every thread has finished. */
static int gs_may_start(const struct tjob *t, int r)
{
    if (!t->cond || r >= t->rounds)
        return t->left == 0;
    return (r < TH_WINDOW || gs_left(t)[r - TH_WINDOW] == 0) && gs_ready(t)[r] == (uint32_t)r;
}

/* fine_update's waits, sync=cond: pivot row k final, row i has had columns 0..k-1. */
static int gs_can_run(const struct tjob *t, struct uthr u)
{
    return !t->cond || (gs_ready(t)[u.k] == (uint32_t)u.k && gs_ready(t)[u.i] == (uint32_t)u.k);
}

static int gs_done(struct tjob *t, struct uthr u)
{
    gs_ready(t)[u.i] = (uint32_t)u.k + 1;
    gs_left(t)[u.k]--;
    return t->cond;
}

static int fine_home(const struct tjob *t, int i, int r) { return t->place == PL_MCS ? gs_home(t, i) : -1; }

/* Set-up thread p: its buffers, its home rows (mcs), its rows generated. */
static uint64_t fine_setup_thread(struct job *j, struct tjob *t, int p, int h)
{
    uint64_t ns = (uint64_t)calib.thread_run;
    struct tproc *q = &t->pr[p];
    if (!mem_on())
        return ns;
    int nrows = p < t->n ? (t->n - p + t->P - 1) / t->P : 0;
    q->buf = touch_alloc_zeroed(j, h, (TH_WINDOW + 2) * gs_rowb(t) + 64, &ns);
    if (!gs_matrix(t) && nrows > 0)
        q->home = touch_alloc_zeroed(j, h, (uint64_t)nrows * gs_rowb(t), &ns);
    for (int i = p; i < t->n; i += t->P)
        ns += mem_touch(j->id, h, gs_row(t, i), gs_rowb(t), 8, 1);
    return ns;
}

/* ---- gauss's update ---- */

static uint64_t gauss_update(struct job *j, struct tjob *t, int p, int h, int i, int k)
{
    struct tproc *q = &t->pr[p];
    int n = t->n, s = k % TH_WINDOW, m = mem_on();
    uint64_t off = (uint64_t)k * 8, len = (uint64_t)(n + 1 - k) * 8, ns = (uint64_t)calib.thread_run;
    uint64_t piv = gs_row(t, k) + off, r = gs_row(t, i) + off;
    uint64_t prow = q->buf + (uint64_t)TH_WINDOW * gs_rowb(t) + off, rrow = prow + gs_rowb(t);
    ns += (uint64_t)((double)(n - k) * calib.gauss_rowop);
    if (t->place == PL_MCS) {
        if (gs_home(t, k) != p) { /* the pivot row, once per process and column */
            uint64_t mine = q->buf + (uint64_t)s * gs_rowb(t) + off;
            if (q->pivcol[s] != k) {
                q->pivcol[s] = k;
                q->copies++;
                ns += threads_copy_ns(len) +
                      (m ? mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, mine, len, 8, 1)
                                        : 0);
            }
            piv = mine;
        }
    } else {
        q->copies += 3;
        q->away += gs_home(t, i) != p;
        ns += 3 * threads_copy_ns(len);
        if (m)
            ns += mem_touch(j->id, h, piv, len, 8, 0) + mem_touch(j->id, h, prow, len, 8, 1) +
                  mem_touch(j->id, h, r, len, 8, 0) + mem_touch(j->id, h, rrow, len, 8, 1);
        piv = prow;
    }
    q->local += t->place == PL_MCS || gs_home(t, i) == p;
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
    return ns;
}

static uint64_t fine_run(struct job *j, struct tjob *t, int p, int h, struct uthr u, struct uthr *next, int *spawn)
{
    return gauss_update(j, t, p, h, u.i, u.k);
}

/* Back-substitution. */
static uint64_t fine_check(struct job *j, struct tjob *t, int h)
{
    uint64_t ns = 0;
    if (!mem_on())
        return 0;
    for (int i = t->n - 1; i >= 0; i--)
        ns += mem_touch(j->id, h, gs_row(t, i) + (uint64_t)i * 8, (uint64_t)(t->n + 1 - i) * 8, 8, 0);
    return ns;
}

static void fine_keys(const struct tjob *t, char *buf, size_t len)
{
    uint64_t copies, away, local, us = (t->t1 - t->t0) / 1000;
    threads_sums(t, &copies, &away, &local);
    snprintf(buf, len, "par_us=%lu copies=%lu away=%lu threads=%lu suspends=0", us, copies, away, t->made);
}

static const struct tapp_ops fine_ops = {
    .setup = fine_setup, .alloc = fine_alloc, .first = fine_first, .end = fine_end, .may_start = gs_may_start,
    .can_run = gs_can_run, .done = gs_done, .home = fine_home, .setup_thread = fine_setup_thread, .run = fine_run,
    .check = fine_check, .keys = fine_keys,
};

/* ---- the app ---- */

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    const char *a = j->scen->args;
    char v[32];
    /* home= is one|own: the kernel's parser has refused any other value with the app's own message */
    SIM_STATE(w, struct gauss)->own = scenario_arg(a, "home", v, sizeof v) == 0 && !strcmp(v, "own");
    if ((w->threads = threads_setup(j, &fine_ops, err, errlen)) < 0)
        return -1;
    if (!w->threads && scenario_arg(a, "variant", v, sizeof v) == 0 && strcmp(v, "coarse"))
        return snprintf(err, errlen, "job=gauss: variant=%s is not modelled in the simulator (coarse, fine)", v), -1;
    if (scenario_arg(a, "sched", v, sizeof v) == 0 && strcmp(v, "static")) {
        w->loops = 1; /* coarse.c's solve_sched: chunks from a loop scheduler */
        if (loops_setup(j, v, err, errlen) < 0)
            return -1;
    }
    return bprog_setup(j, w, err, errlen);
}

static void step(struct sproc *sp, uint64_t t)
{
    if (sjob_of(sp->p.job)->threads)
        tprog_step(sp, t);
    else
        bprog_step(sp, t);
}

/* RESULT: the thread program's keys, or par_us= (and a loop scheduler's grabs=, remote=). */
static void report(struct job *j, struct sjob *w, char *buf, size_t len)
{
    uint64_t us, grabs = 0, remote = 0;
    if (w->loops)
        loops_counts(j, &grabs, &remote);
    if (w->threads)
        threads_report(j, w, buf, len);
    else if (w->loops && job_par_us(w, &us))
        snprintf(buf, len, "par_us=%lu grabs=%lu remote=%lu", us, grabs, remote);
    else if (job_par_us(w, &us))
        snprintf(buf, len, "par_us=%lu", us);
    else
        buf[0] = 0;
}

static const struct sim_prog prog = {
    .arrays_ns = arrays_ns, .check_ns = check_ns, .report = report, .work = work, .last = last, .chunk = chunk,
    .gen_ns = gen_ns,
};

static const struct sim_app gauss = {
    .name = "gauss", .keys = keys, .heap_kb = 340, .workers = 1, .control = 1, .setup = setup, .start = bprog_start,
    .step = step, .spins = bprog_spins, .descheduled = barrier_descheduled, .free = bprog_free, .prog = &prog,
};
SIM_APP(gauss);
