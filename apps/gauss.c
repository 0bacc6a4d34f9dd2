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
 * The wait (spin or futex block) for barriers and for ready flags is the
 * barrier= key. Rows are generated in parallel by their owners; the timed
 * part (par_us) runs from a start barrier to an end barrier. Process 0 then
 * back-substitutes and compares x with the x_true that generated b.
 */
#include "schedlab.h"
#include "barrier.h"

SL_APP(.about = "Gaussian elimination, coarse grain (Markatos 3.3.4)",
       /* a: 8 n(n+1); x, x_true: 8n each; ready: 4n; page rounding and the
          allocator's chunks are under 256 KB */
       .mem_key = "n", .mem_quad = 8, .mem_lin = 32, .mem_const = 256 * 1024,
       SL_KEYS(SL_INT("n", 2, 65536, 768),
               SL_ENUM("variant", "coarse", 0),
               SL_ENUM("sync", "barrier|cond", 0),
               SL_ENUM("barrier", "spin|block", 0)));

#define MAXERR 1e-9

struct gauss {
    int n, nprocs, cond;
    double *a;               /* row i at a + i*(n+1); written only by its owner */
    double *x_true, *x;
    uint32_t *ready;         /* ready[k] = 1 once row k is fully reduced (cond) */
    struct sl_barrier bar;
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
    __atomic_store_n(&g->ready[i], 1, __ATOMIC_RELEASE);
    sl_wait_wake(&g->ready[i], g->bar.wait);
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

/* Rows are visited in increasing order, so the owner of row k+1 reduces it
   first within column k and publishes it before its other rows. */
static void
solve_cond(struct gauss *g, int id)
{
    if (id == 0)
        publish(g, 0);                        /* row 0 needs no reduction */
    for (int k = 0; k < g->n - 1; k++) {
        sl_wait_ne(&g->ready[k], 0, g->bar.wait);
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

    g.a = sl_malloc((size_t)g.n * (size_t)(g.n + 1) * sizeof(double));
    g.x_true = sl_malloc((size_t)g.n * sizeof(double));
    g.x = sl_malloc((size_t)g.n * sizeof(double));
    g.ready = sl_calloc((size_t)g.n, sizeof(uint32_t));
    if (!g.a || !g.x_true || !g.x || !g.ready)
        sl_die("out of memory for n=%d", g.n);
    sl_rng_init(&r, (uint64_t)g.n + 0x5eed);
    for (int j = 0; j < g.n; j++)
        g.x_true[j] = 2 * sl_rng_double(&r) - 1;
    sl_barrier_init(&g.bar, (uint32_t)g.nprocs, sl_wait_from_arg("barrier"));

    sl_run_procs(worker, &g);

    maxerr = back_substitute(&g);
    sl_report(maxerr <= MAXERR, "maxerr=%.2e par_us=%lu", maxerr, (unsigned long)(g.t1 - g.t0));
    return 0;
}
