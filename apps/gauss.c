/*
 * gauss - Gaussian elimination on an n x n diagonally dominant system,
 * coarse grain, as in Markatos 3.3.4 versions 3 and 4.
 *
 * One worker per process; row i belongs to process i % procs (round robin,
 * so the shrinking active part of the matrix stays balanced). The matrix is
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
 */
#include "schedlab.h"
#include "barrier.h"
#include "loopsched.h"

SL_APP(.about = "Gaussian elimination, coarse grain (Markatos 3.3.4)",
       /* a: 8 n(n+1); x, x_true: 8n each; ready: 4n; page rounding and the
          allocator's chunks are under 256 KB */
       .mem_key = "n", .mem_quad = 8, .mem_lin = 32, .mem_const = 256 * 1024,
       SL_KEYS(SL_INT("n", 2, 65536, 768),
               SL_ENUM("variant", "coarse", 0),
               SL_ENUM("sync", "barrier|cond", 0),
               SL_ENUM("barrier", "spin|block|twophase|adaptive", 0),
               SL_ENUM("shape", "central|tree|combination", 0),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs", 0)));

#define MAXERR 1e-9

struct gauss {
    int n, nprocs, cond;
    double *a;               /* row i at a + i*(n+1); written only by its owner */
    double *x_true, *x;
    uint32_t *ready;         /* ready[k] = 1 once row k is fully reduced (cond) */
    struct sl_barrier bar;
    enum sl_wait wait;
    int sched;               /* enum sl_loopsched */
    struct sl_loop *loop[2]; /* sched != static: step k uses loop[k & 1] */
    uint64_t t0, t1;         /* process 0's clock at the start and end barriers */
};

static double *
row(struct gauss *g, int i)
{
    return g->a + (size_t)i * (size_t)(g->n + 1);
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

/* Subtract the multiple of pivot row k that zeroes column k of row i. */
static void
eliminate(struct gauss *g, int i, int k)
{
    double *p = row(g, k), *r = row(g, i);
    double f = r[k] / p[k];

    for (int j = k + 1; j <= g->n; j++)
        r[j] -= f * p[j];
    r[k] = 0;
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
    return sl_proc_running(((const struct owner_wf *)wf)->proc);
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
                       .cond = sl_arg_is("sync", "cond") };
    struct sl_rng r;
    double maxerr;
    uint64_t local = 0, remote = 0, l1, r1;

    g.a = sl_malloc((size_t)g.n * (size_t)(g.n + 1) * sizeof(double));
    g.x_true = sl_malloc((size_t)g.n * sizeof(double));
    g.x = sl_malloc((size_t)g.n * sizeof(double));
    g.ready = sl_calloc((size_t)g.n, sizeof(uint32_t));
    if (!g.a || !g.x_true || !g.x || !g.ready)
        sl_die("out of memory for n=%d", g.n);
    sl_rng_init(&r, (uint64_t)g.n + 0x5eed);
    for (int j = 0; j < g.n; j++)
        g.x_true[j] = 2 * sl_rng_double(&r) - 1;
    sl_barrier_init_args(&g.bar, (uint32_t)g.nprocs, "shape", "barrier");
    g.wait = g.bar.wait;
    g.sched = sl_loop_parse(sl_arg_str("sched"));
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

    sl_run_procs(worker, &g);

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
