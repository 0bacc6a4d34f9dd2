/*
 * oddeven - odd-even transposition sort as Markatos ran it (3.3.4).
 *
 * n keys, n phases. In phase p the pairs (i, i+1) with i % 2 == p % 2 are
 * compare-exchanged; there are m = (n - p%2) / 2 of them, and process id
 * takes the contiguous slice [m*id/procs, m*(id+1)/procs) of that list,
 * about n/procs/2 compare-exchanges, then all meet at a barrier. Pairs of
 * one phase are disjoint, so a phase needs no other synchronization; after
 * n phases the keys are sorted (the classic bound for this network).
 * Check: sorted order, and the sum and xor of the keys unchanged.
 */
#include "schedlab.h"
#include "barrier.h"

SL_APP(.about = "odd-even transposition sort (Markatos 3.3.4)",
       /* keys: 4n; page rounding and allocator chunks under 256 KB */
       .mem_key = "n", .mem_lin = 4, .mem_const = 256 * 1024,
       SL_KEYS(SL_INT("n", 2, 1 << 20, 24576),
               SL_ENUM("barrier", "spin|block", 0)));

struct sort {
    int n, nprocs;
    uint32_t *key;
    struct sl_barrier bar;
    uint64_t t0, t1;        /* process 0's clock at the start and end */
};

static void
phase(struct sort *s, int p, int id)
{
    int odd = p & 1, m = (s->n - odd) / 2;
    int lo = (int)((int64_t)m * id / s->nprocs), hi = (int)((int64_t)m * (id + 1) / s->nprocs);
    uint32_t *k = s->key + odd;

    for (int j = lo; j < hi; j++) {
        uint32_t a = k[2 * j], b = k[2 * j + 1];
        if (a > b) {
            k[2 * j] = b;
            k[2 * j + 1] = a;
        }
    }
}

static void
worker(void *arg, int id)
{
    struct sort *s = arg;

    sl_barrier_wait(&s->bar);
    if (id == 0)
        s->t0 = sl_now_us();
    for (int p = 0; p < s->n; p++) {
        phase(s, p, id);
        sl_barrier_wait(&s->bar);
    }
    if (id == 0)
        s->t1 = sl_now_us();
}

static void
digest(const uint32_t *k, int n, uint64_t *sum, uint32_t *x)
{
    *sum = 0;
    *x = 0;
    for (int i = 0; i < n; i++) {
        *sum += k[i];
        *x ^= k[i];
    }
}

int
main(void)
{
    struct sort s = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs() };
    struct sl_rng r;
    uint64_t sum0, sum1;
    uint32_t x0, x1;
    int sorted = 1;

    s.key = sl_malloc((size_t)s.n * sizeof(uint32_t));
    if (!s.key)
        sl_die("out of memory for n=%d", s.n);
    sl_rng_init(&r, 0);
    for (int i = 0; i < s.n; i++)
        s.key[i] = (uint32_t)sl_rng_u64(&r);
    digest(s.key, s.n, &sum0, &x0);
    sl_barrier_init(&s.bar, (uint32_t)s.nprocs, sl_wait_from_arg("barrier"));

    sl_run_procs(worker, &s);

    digest(s.key, s.n, &sum1, &x1);
    for (int i = 1; i < s.n; i++)
        if (s.key[i - 1] > s.key[i])
            sorted = 0;
    sl_report(sorted && sum0 == sum1 && x0 == x1, "sorted=%d sum=%s par_us=%lu phase_us=%.2f",
              sorted, sum0 == sum1 && x0 == x1 ? "same" : "CHANGED",
              (unsigned long)(s.t1 - s.t0), (double)(s.t1 - s.t0) / s.n);
    return 0;
}
