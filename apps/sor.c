/*
 * sor - successive over-relaxation on an n x n grid, Markatos chapter 5's SOR (5.4.2, Fig. 5.3, Table 5.3;
 * KSR-1 Fig. 5.17):
 *
 *   DO SEQUENTIAL I = 1,MAXITERATIONS
 *     DO PARALLEL J = 1,N                    <- the rows, dealt out by the loop scheduler (sched=)
 *       DO SEQUENTIAL K = 1,N
 *         A(J,K) = UPDATE(A,J,K)
 *
 * Which SOR. The thesis updates one matrix A in place with one parallel loop over rows per iteration and
 * does not name the ordering; in place, rows in parallel read neighbours that others are changing, so
 * its answer would depend on timing. Red-black ordering keeps what the thesis's loop has - one matrix,
 * updated in place, row J touched by iteration J only (and read by J-1, J+1), over-relaxation with new
 * values ("successive") - and makes every half-sweep's updates independent: an iteration is a red
 * half-sweep (cells with (j + k) even) and a black one, each a parallel loop over the interior rows
 * 1..n-2 with a barrier after it. Jacobi would need a second matrix (double the working set) and is not
 * successive. UPDATE is A(J,K) + OMEGA ((N + S + E + W) / 4 - A(J,K)): a few additions and one division,
 * as the thesis describes it (5.4.8). The boundary is fixed (1 on the top edge, 0 elsewhere), the
 * interior starts random from the seed (a stream per row).
 *
 * Check: process 0 redoes the 2 x iters half-sweeps sequentially on a copy of the start, with the same
 * (not inlined) row function; every cell must be bitwise equal (diff= counts those that are not).
 *
 * Sizes. The thesis ran N = 512 on the Iris (8 processors; 1 MB second-level caches) and 1024 x 1024 for
 * 128 iterations on the KSR-1. Here the default n = 256 doubles is a 512 KB grid: at P = 2 each hart's
 * rows (256 KB) fit the iris profile's 1 MB L2 but not its 64 KB L1, the thesis's regime ("affinity
 * scheduling performs the best when the working set ... is in the caches", 5.4.9; its 512 x 512 grid
 * against 8 x 1 MB): a scheduler that keeps row J on the same hart re-reads it from L2, one that moves
 * it takes it from the other hart's cache or memory. iters = 10 keeps a default boot well under a
 * second; n and iters scale it (ksr1's 256 KB L1 / 32 MB L2 want n >= 512 for the same regime).
 *
 * Keys: n, iters, sched= (loopsched.h: static, ss, gss, factoring, trapezoid, afs, mod-factoring,
 * best-static - here every row has the same work, so BEST-STATIC's parts are equal ones), barrier= (the
 * wait kind), shape= (the barrier). RESULT: par_us (the 2 x iters loops), loops= (parallel loops run:
 * 2 x iters, each over the n - 2 interior rows; n = 514 gives Table 5.3's 512 iterations a loop), grabs=
 * and remote= summed over them, diff=, sum=.
 */
#include "schedlab.h"
#include "barriers/barrier.h"
#include "loops/loopsched.h"
#include "threads/uthread.h"
#include "workers/workers.h"

#define OMEGA 1.25

SL_APP(.about = "red-black SOR, rows by a loop scheduler (Markatos 5.4.2)",
       .flags = SL_APP_ADAPTIVE,
       /* the grid and its copy for the check: 16 n^2; the split and weights: 16 n; page rounding, allocator
          chunks and the loops under 256 KB; the workers' stacks */
       .mem_key = "n", .mem_quad = 16, .mem_lin = 16, .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST,
       .mem_per_proc = SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("n", 3, 4096, 256), SL_INT("iters", 1, 100000, 10),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs|mod-factoring|best-static", 0),
               SL_ENUM("barrier", SL_WAIT_CHOICES, 0), SL_ENUM("shape", "central|tree|combination", 0)));

struct sor {
    int n, nprocs;
    int64_t nloops;          /* 2 x iters half-sweeps */
    double *a;               /* n x n, row-major; row j is written by the iteration that has it */
    struct sl_barrier bar;
    struct sl_loop *loop[2]; /* loop L uses loop[L & 1]; iteration t is row t + 1 */
    uint64_t t0, t1;
};

/* One half-sweep of row j: the cells of colour (j + k) % 2 == colour. Not inlined, so the check runs the
   very same instructions (no other contraction of the arithmetic). */
__attribute__((noinline)) static void relax_row(double *a, int n, int j, int colour)
{
    double *r = a + (size_t)j * (size_t)n, *up = r - n, *dn = r + n;

    for (int k = 1 + ((j + 1 + colour) & 1); k < n - 1; k += 2)
        r[k] = r[k] + OMEGA * ((up[k] + dn[k] + r[k - 1] + r[k + 1]) / 4 - r[k]);
}

static void init_grid(double *a, int n)
{
    for (int j = 0; j < n; j++) {
        struct sl_rng r;
        sl_rng_init(&r, (uint64_t)j);
        for (int k = 0; k < n; k++)
            a[(size_t)j * n + k] = j == 0 ? 1.0 : j == n - 1 || k == 0 || k == n - 1 ? 0.0 : sl_rng_double(&r);
    }
}

static void worker(void *arg, int id)
{
    struct sor *s = arg;
    struct sl_chunk c;

    sl_barrier_wait(&s->bar);
    if (id == 0)
        s->t0 = sl_now_us();
    for (int64_t L = 0; L < s->nloops; L++) {
        if (id == 0 && L + 1 < s->nloops) /* nobody is in it: all passed the barrier after loop L - 1 */
            sl_loop_start(s->loop[(L + 1) & 1], 0, s->n - 2);
        while (sl_loop_grab(s->loop[L & 1], id, &c))
            for (int64_t t = c.start; t < c.start + c.len; t++)
                relax_row(s->a, s->n, (int)t + 1, (int)(L & 1));
        sl_barrier_wait(&s->bar);
    }
    if (id == 0)
        s->t1 = sl_now_us();
}

/* The two loops; best-static's parts from the rows' work (all equal). */
static void loops_init(struct sor *s)
{
    int kind = sl_loop_parse(sl_arg_str("sched"));
    int64_t rows = s->n - 2, *first = sl_malloc((size_t)(s->nprocs + 1) * sizeof(int64_t));
    uint64_t *w = sl_malloc((size_t)rows * sizeof(uint64_t));

    if (!first || !w)
        sl_die("out of memory for the loop scheduler");
    for (int64_t t = 0; t < rows; t++)
        w[t] = 1;
    sl_loop_split_weighted(w, rows, s->nprocs, first);
    for (int i = 0; i < 2; i++) {
        s->loop[i] = sl_alloc_node(sl_loop_bytes(s->nprocs), -1);
        if (!s->loop[i])
            sl_die("out of memory for the loop scheduler");
        sl_loop_init(s->loop[i], (enum sl_loopsched)kind, s->nprocs, 0);
        if (kind == SL_LOOP_BESTSTATIC)
            sl_loop_set_split(s->loop[i], first);
    }
    sl_loop_start(s->loop[0], 0, rows);
    sl_free(w);
    sl_free(first);
}

int main(void)
{
    struct sor s = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs(), .nloops = 2 * sl_arg_int("iters") };
    size_t cells = (size_t)s.n * (size_t)s.n;
    double *ref = sl_malloc(cells * sizeof(double)), sum = 0;
    uint64_t local = 0, remote = 0, l1, r1, diff = 0;

    s.a = sl_malloc(cells * sizeof(double));
    if (!s.a || !ref)
        sl_die("out of memory for n=%d", s.n);
    init_grid(s.a, s.n);
    memcpy(ref, s.a, cells * sizeof(double));
    sl_barrier_init_args(&s.bar, (uint32_t)s.nprocs, "shape", "barrier");
    loops_init(&s);

    sl_run_workers(worker, &s);

    for (int64_t L = 0; L < s.nloops; L++)
        for (int j = 1; j < s.n - 1; j++)
            relax_row(ref, s.n, j, (int)(L & 1));
    for (size_t i = 0; i < cells; i++) {
        diff += memcmp(&s.a[i], &ref[i], sizeof(double)) != 0;
        sum += s.a[i];
    }
    sl_loop_grabs(s.loop[0], &local, &remote);
    sl_loop_grabs(s.loop[1], &l1, &r1);
    local += l1;
    remote += r1;
    sl_report(diff == 0, "par_us=%lu loops=%ld grabs=%lu remote=%lu diff=%lu sum=%.6e sleeps=%lu",
              (unsigned long)(s.t1 - s.t0), (long)s.nloops, (unsigned long)(local + remote), (unsigned long)remote,
              (unsigned long)diff, sum, (unsigned long)sl_wait_blocks());
    return 0;
}
