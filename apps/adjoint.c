/*
 * adjoint - adjoint convolution, Markatos chapter 5's triangular loop (5.4.2, Figs. 5.7 and 5.8, Table 5.5):
 *
 *   DO PARALLEL I = 1,N*N                   <- dealt out by the loop scheduler (sched=)
 *     DO SEQUENTIAL K = I,N*N
 *       A(I) = A(I) + X*B(K)*C(I-K)
 *
 * Iteration I does N*N - I + 1 multiply-adds: "the first iteration takes time proportional to O(N^2),
 * while the last ... O(1)" - the load imbalance is the experiment, and there is no affinity (the loop is
 * not inside a sequential one). With M = N*N and 0-based i, iteration i adds x b[k] c[k - i] for
 * k = i .. M-1 (the thesis's C(I-K) indexes a reversed array; c[k - i] is the same with C stored forward).
 * order=reverse runs the loop backwards, iteration t doing index M-1-t (Fig. 5.8, "reverse index
 * scheduling": the short iterations first). a, b, c start random in [-1, 1) from the seed, x = 0.5.
 *
 * Check: process 0 redoes every index sequentially from a copy of the start, with the same (not inlined)
 * function; every A(I) must be bitwise equal (diff= counts those that are not) - an index done twice,
 * skipped, or by a half chunk would differ.
 *
 * Sizes. The thesis's N = 75 (5625 iterations, 16 million multiply-adds) on the Iris; the default n = 50
 * (2500 iterations, 3.1 million) keeps a default boot well under a second. The three arrays (60 KB at
 * n = 50, 135 KB at 75) are read by every iteration, so every cache holds them after the first and a
 * profile's cache size changes nothing the schedulers differ in: the size sets the imbalance, not a
 * working set (as in the thesis, where adjoint is the case with "no affinity to exploit").
 *
 * Keys: n, order, sched= (loopsched.h; BEST-STATIC cuts contiguous parts of equal work, iteration i
 * weighing M - i), barrier=, shape=. RESULT: par_us (the loop), loops= (1, over n*n iterations), grabs=,
 * remote=, diff=, sum=.
 */
#include "schedlab.h"
#include "barriers/barrier.h"
#include "loops/loopsched.h"
#include "threads/uthread.h"
#include "workers/workers.h"

#define XMUL 0.5 /* the thesis's X */

SL_APP(.about = "adjoint convolution, a triangular loop (Markatos 5.4.2)", .flags = SL_APP_ADAPTIVE,
       /* a, its copy, b, c and the weights: 40 M = 40 n^2; page rounding, allocator chunks and the loop under
          256 KB; the workers' stacks */
       .mem_key = "n", .mem_quad = 40, .mem_lin = 0, .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST,
       .mem_per_proc = SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("n", 1, 1024, 50), SL_ENUM("order", "forward|reverse", 0),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs|mod-factoring|best-static", 0),
               SL_ENUM("barrier", SL_WAIT_CHOICES, 0), SL_ENUM("shape", "central|tree|combination", 0)));

struct adj {
    int64_t m;               /* n*n iterations */
    int reverse;
    double *a, *b, *c;
    struct sl_barrier bar;
    struct sl_loop *loop;
    uint64_t t0, t1;
};

/* Index i of the sum. Not inlined, so the check runs the very same instructions. */
__attribute__((noinline)) static void convolve(double *a, const double *b, const double *c, int64_t m, int64_t i)
{
    double s = a[i];

    for (int64_t k = i; k < m; k++)
        s = s + XMUL * b[k] * c[k - i];
    a[i] = s;
}

static int64_t index_of(const struct adj *d, int64_t t) { return d->reverse ? d->m - 1 - t : t; }

static void worker(void *arg, int id)
{
    struct adj *d = arg;
    struct sl_chunk ch;

    sl_barrier_wait(&d->bar);
    if (id == 0)
        d->t0 = sl_now_us();
    while (sl_loop_grab(d->loop, id, &ch))
        for (int64_t t = ch.start; t < ch.start + ch.len; t++)
            convolve(d->a, d->b, d->c, d->m, index_of(d, t));
    sl_barrier_wait(&d->bar);
    if (id == 0)
        d->t1 = sl_now_us();
}

/* The loop; best-static's parts from the iterations' work. */
static void loop_init(struct adj *d, int nprocs)
{
    int kind = sl_loop_parse(sl_arg_str("sched"));
    int64_t *first = sl_malloc((size_t)(nprocs + 1) * sizeof(int64_t));
    uint64_t *w = sl_malloc((size_t)d->m * sizeof(uint64_t));

    d->loop = sl_alloc_node(sl_loop_bytes(nprocs), -1);
    if (!first || !w || !d->loop)
        sl_die("out of memory for the loop scheduler");
    for (int64_t t = 0; t < d->m; t++)
        w[t] = (uint64_t)(d->m - index_of(d, t));
    sl_loop_split_weighted(w, d->m, nprocs, first);
    sl_loop_init(d->loop, (enum sl_loopsched)kind, nprocs, 0);
    if (kind == SL_LOOP_BESTSTATIC)
        sl_loop_set_split(d->loop, first);
    sl_loop_start(d->loop, 0, d->m);
    sl_free(w);
    sl_free(first);
}

int main(void)
{
    int64_t n = sl_arg_int("n");
    struct adj d = { .m = n * n, .reverse = sl_arg_is("order", "reverse") };
    double *ref, sum = 0;
    uint64_t local, remote, diff = 0;
    struct sl_rng r;

    d.a = sl_malloc((size_t)d.m * sizeof(double));
    d.b = sl_malloc((size_t)d.m * sizeof(double));
    d.c = sl_malloc((size_t)d.m * sizeof(double));
    ref = sl_malloc((size_t)d.m * sizeof(double));
    if (!d.a || !d.b || !d.c || !ref)
        sl_die("out of memory for n=%ld", (long)n);
    sl_rng_init(&r, 0);
    for (int64_t i = 0; i < d.m; i++) {
        d.a[i] = 2 * sl_rng_double(&r) - 1;
        d.b[i] = 2 * sl_rng_double(&r) - 1;
        d.c[i] = 2 * sl_rng_double(&r) - 1;
    }
    memcpy(ref, d.a, (size_t)d.m * sizeof(double));
    sl_barrier_init_args(&d.bar, (uint32_t)sl_nprocs(), "shape", "barrier");
    loop_init(&d, sl_nprocs());

    sl_run_workers(worker, &d);

    for (int64_t i = 0; i < d.m; i++) {
        convolve(ref, d.b, d.c, d.m, i);
        diff += memcmp(&d.a[i], &ref[i], sizeof(double)) != 0;
        sum += d.a[i];
    }
    sl_loop_grabs(d.loop, &local, &remote);
    sl_report(diff == 0, "par_us=%lu loops=1 grabs=%lu remote=%lu diff=%lu sum=%.6e sleeps=%lu",
              (unsigned long)(d.t1 - d.t0), (unsigned long)(local + remote), (unsigned long)remote,
              (unsigned long)diff, sum, (unsigned long)sl_wait_blocks());
    return 0;
}
