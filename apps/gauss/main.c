/*
 * gauss - Gaussian elimination on an n x n diagonally dominant system,
 * coarse grain (variant=coarse, Markatos 3.3.4 versions 3 and 4: coarse.c)
 * or fine grain on user-level threads (variant=fine, versions 2 and 1:
 * fine.c). This file holds what both share: the keys, the system and its
 * check (gauss.h is the only thing the three files share).
 *
 * The matrix is stored augmented, n rows of n+1 doubles: [A | b]. Row i of
 * A comes from its own random stream and b = A x_true for an x_true drawn
 * from the seed n. Elimination needs no pivoting because A is strictly
 * diagonally dominant (|off-diagonal| < 1, diagonal = n). After the
 * parallel part (par_us), process 0 back-substitutes and compares x with
 * x_true: maxerr must stay under MAXERR, or check=FAIL.
 * The wait kind for barriers and flags is the barrier= key (wait.h), the
 * barrier's shape the shape= key (coarse only, barrier.h), the loop
 * scheduler sched= (coarse sync=barrier only, loopsched.h), the placement
 * place= (fine only, place.h).
 * home= says where the rows live: one (the default) in one matrix from
 * process 0's node; own, each row in the memory of its owner's node (row i
 * belongs to process i mod P, allocated by that process's worker on the
 * hart it runs on), as the thesis's programs did on the Butterfly ("the main
 * program distributes the problem matrix among the memories of the machine",
 * 3.3.4). Under variant=fine place=mcs the rows always have their homes.
 */
#include "gauss.h"
#include "threads/uthread.h"
#include "wait/wait.h"

#define MAXERR 1e-9

SL_APP(.about = "Gaussian elimination, coarse or fine grain (Markatos 3.3.4)",
       /* a (or the home buffers): 8 n(n+1); x, x_true, rowp: 8n each; ready,
          colleft, coldone: 4n each; page rounding and the allocator's chunks
          are under 256 KB. fine: per process the thread scheduler (deque,
          a cache of 8 stacks), its buffers (FINE_WINDOW + 2 rows) and page
          rounding; per n a stack for every thread that may be started and
          waiting: at most the FINE_WINDOW columns in flight, n each. */
       .mem_key = "n", .mem_quad = 8, .mem_lin = 56 + FINE_WINDOW * SL_THREAD_STACK, .mem_const = 256 * 1024,
       .mem_per_proc = 8 * SL_THREAD_STACK + 128 * 1024, /* covers coarse's worker stacks too */
       .flags = SL_APP_ADAPTIVE,
       SL_KEYS(SL_INT("n", 2, 65536, 768), SL_ENUM("variant", "coarse|fine", 0), SL_ENUM("sync", "barrier|cond", 0),
               SL_ENUM("barrier", SL_WAIT_CHOICES, 0), SL_ENUM("shape", "central|tree|combination", 0),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs|mod-factoring", 0), SL_ENUM("place", "mcs|lb", 0),
               SL_ENUM("home", "one|own", 0)));

double *gauss_row(struct gauss *g, int i) { return g->rowp ? g->rowp[i] : g->a + (size_t)i * (size_t)(g->n + 1); }

/* home=own (and fine place=mcs): process p's rows i = p, p+P, ... in one block from the node of the hart
   its caller runs on (sl_alloc_node -1), called by a worker or thread pinned to p before it generates them. */
void gauss_home_rows(struct gauss *g, int p)
{
    int n = g->n, P = g->nprocs, nrows = p < n ? (n - p + P - 1) / P : 0;
    double *home;

    if (nrows <= 0)
        return;
    home = sl_alloc_node((size_t)nrows * (size_t)(n + 1) * sizeof(double), -1);
    if (!home)
        sl_die("out of memory for process %d's home rows (n=%d)", p, n);
    for (int i = p, j = 0; i < n; i += P, j++)
        g->rowp[i] = home + (size_t)j * (size_t)(n + 1);
}

/* Row i of A from its own random stream; b_i = A_i . x_true. */
void gauss_gen_row(struct gauss *g, int i)
{
    struct sl_rng r;
    double *a = gauss_row(g, i), b = 0;

    sl_rng_init(&r, (uint64_t)i);
    for (int j = 0; j < g->n; j++) {
        a[j] = j == i ? (double)g->n : 2 * sl_rng_double(&r) - 1;
        b += a[j] * g->x_true[j];
    }
    a[g->n] = b;
}

/* Subtract the multiple of pivot row p (row k) that zeroes column k of
   row r; columns < k are already 0 in both and not touched. */
void gauss_eliminate_row(double *r, const double *p, int k, int n)
{
    double f = r[k] / p[k];

    for (int j = k + 1; j <= n; j++)
        r[j] -= f * p[j];
    r[k] = 0;
}

int gauss_owner_running(const struct sl_waitfor *wf)
{
    return sl_worker_running((int)((const struct owner_wf *)wf)->proc);
}

/* Solve the reduced system into x; the largest |x - x_true| (NaN: huge). */
double gauss_back_substitute(struct gauss *g)
{
    double maxerr = 0;

    for (int i = g->n - 1; i >= 0; i--) {
        double *r = gauss_row(g, i), s = r[g->n];
        for (int j = i + 1; j < g->n; j++)
            s -= r[j] * g->x[j];
        g->x[i] = s / r[i];
    }
    for (int i = 0; i < g->n; i++) {
        double e = g->x[i] - g->x_true[i];
        if (e < 0)
            e = -e;
        if (!(e <= maxerr)) /* also catches NaN */
            maxerr = e;
    }
    return maxerr;
}

int gauss_maxerr_ok(double maxerr) { return maxerr <= MAXERR; }

int main(void)
{
    struct gauss g = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs(), .cond = sl_arg_is("sync", "cond"),
                       .own = sl_arg_is("home", "own") };
    int fine = sl_arg_is("variant", "fine");
    struct sl_rng r;

    if (!fine && g.own)
        g.rowp = sl_calloc((size_t)g.n, sizeof *g.rowp); /* each owner fills in its rows (coarse.c) */
    else if (!fine)
        g.a = sl_malloc((size_t)g.n * (size_t)(g.n + 1) * sizeof(double));
    g.x_true = sl_malloc((size_t)g.n * sizeof(double));
    g.x = sl_malloc((size_t)g.n * sizeof(double));
    g.ready = sl_calloc((size_t)g.n, sizeof(uint32_t));
    if ((!fine && !g.a && !g.rowp) || !g.x_true || !g.x || !g.ready)
        sl_die("out of memory for n=%d", g.n);
    sl_rng_init(&r, (uint64_t)g.n + 0x5eed);
    for (int j = 0; j < g.n; j++)
        g.x_true[j] = 2 * sl_rng_double(&r) - 1;
    if (fine)
        gauss_fine(&g);
    else
        gauss_coarse(&g);
    return 0;
}
