/*
 * oddeven - odd-even transposition sort as Markatos ran it (3.3.4).
 *
 * n keys, n phases. In phase p the pairs (i, i+1) with i % 2 == p % 2 are
 * compare-exchanged; there are m = (n - p%2) / 2 of them, and process id
 * takes the contiguous slice [m*id/procs, m*(id+1)/procs) of that list,
 * about n/procs/2 compare-exchanges, then all meet at a barrier. The P
 * workers are user-level threads, worker i pinned to process i at start
 * (sl_run_workers): under partition they follow the job's allotment. Pairs of
 * one phase are disjoint, so a phase needs no other synchronization; after
 * n phases the keys are sorted (the classic bound for this network).
 * Check: sorted order, and the sum and xor of the keys unchanged.
 *
 * barrier= is the wait kind (wait.h), shape= the barrier's shape
 * (barrier.h). sched= deals out the pairs of a phase: static is the slices
 * above; ss, gss, factoring, trapezoid and afs take chunks of [0, m) from a
 * loop scheduler (loopsched.h), reset for phase p+1 by process 0 during
 * phase p (two loops, alternating; the barrier orders reset and use).
 * grabs= counts chunks over all phases (static: each process with a
 * non-empty slice takes it once per phase), remote= those not from the
 * taker's own slice or queue.
 */
#include "schedlab.h"
#include "barriers/barrier.h"
#include "loops/loopsched.h"
#include "threads/uthread.h"
#include "workers/workers.h"

SL_APP(.about = "odd-even transposition sort (Markatos 3.3.4)", .flags = SL_APP_ADAPTIVE,
       /* keys: 4n; page rounding and allocator chunks under 256 KB; the workers' stacks */
       .mem_key = "n", .mem_lin = 4, .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST,
       .mem_per_proc = SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("n", 2, 1 << 20, 24576), SL_ENUM("barrier", SL_WAIT_CHOICES, 0),
               SL_ENUM("shape", "central|tree|combination", 0),
               SL_ENUM("sched", "static|ss|gss|factoring|trapezoid|afs", 0)));

struct sort {
    int n, nprocs;
    uint32_t *key;
    struct sl_barrier bar;
    int sched;               /* enum sl_loopsched */
    struct sl_loop *loop[2]; /* sched != static: phase p uses loop[p & 1] */
    uint64_t t0, t1;         /* process 0's clock at the start and end */
};

static int npairs(const struct sort *s, int p) { return (s->n - (p & 1)) / 2; }

/* Compare-exchange pairs [lo, hi) of phase p. */
static void pairs(struct sort *s, int p, int lo, int hi)
{
    uint32_t *k = s->key + (p & 1);

    for (int j = lo; j < hi; j++) {
        uint32_t a = k[2 * j], b = k[2 * j + 1];
        if (a > b) {
            k[2 * j] = b;
            k[2 * j + 1] = a;
        }
    }
}

static void phase(struct sort *s, int p, int id)
{
    int m = npairs(s, p);
    struct sl_chunk c;

    if (s->sched == SL_LOOP_STATIC) {
        pairs(s, p, (int)((int64_t)m * id / s->nprocs), (int)((int64_t)m * (id + 1) / s->nprocs));
        return;
    }
    if (id == 0 && p + 1 < s->n)
        sl_loop_start(s->loop[(p + 1) & 1], 0, npairs(s, p + 1));
    while (sl_loop_grab(s->loop[p & 1], id, &c))
        pairs(s, p, (int)c.start, (int)(c.start + c.len));
}

static void worker(void *arg, int id)
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

static void digest(const uint32_t *k, int n, uint64_t *sum, uint32_t *x)
{
    *sum = 0;
    *x = 0;
    for (int i = 0; i < n; i++) {
        *sum += k[i];
        *x ^= k[i];
    }
}

int main(void)
{
    struct sort s = { .n = (int)sl_arg_int("n"), .nprocs = sl_nprocs() };
    struct sl_rng r;
    uint64_t sum0, sum1;
    uint32_t x0, x1;
    uint64_t local = 0, remote = 0, l1, r1;
    int sorted = 1;

    s.key = sl_malloc((size_t)s.n * sizeof(uint32_t));
    if (!s.key)
        sl_die("out of memory for n=%d", s.n);
    sl_rng_init(&r, 0);
    for (int i = 0; i < s.n; i++)
        s.key[i] = (uint32_t)sl_rng_u64(&r);
    digest(s.key, s.n, &sum0, &x0);
    sl_barrier_init_args(&s.bar, (uint32_t)s.nprocs, "shape", "barrier");
    s.sched = sl_loop_parse(sl_arg_str("sched"));
    if (s.sched != SL_LOOP_STATIC) {
        for (int i = 0; i < 2; i++) {
            s.loop[i] = sl_alloc_node(sl_loop_bytes(s.nprocs), -1);
            if (!s.loop[i])
                sl_die("out of memory for the loop scheduler");
            sl_loop_init(s.loop[i], (enum sl_loopsched)s.sched, s.nprocs, 0);
        }
        sl_loop_start(s.loop[0], 0, npairs(&s, 0));
    }

    sl_run_workers(worker, &s);

    if (s.sched != SL_LOOP_STATIC) {
        sl_loop_grabs(s.loop[0], &local, &remote);
        sl_loop_grabs(s.loop[1], &l1, &r1);
        local += l1;
        remote += r1;
    } else {
        for (int p = 0; p < s.n; p++)
            local += (uint64_t)(npairs(&s, p) < s.nprocs ? npairs(&s, p) : s.nprocs);
    }

    digest(s.key, s.n, &sum1, &x1);
    for (int i = 1; i < s.n; i++)
        if (s.key[i - 1] > s.key[i])
            sorted = 0;
    sl_report(sorted && sum0 == sum1 && x0 == x1,
              "sorted=%d sum=%s par_us=%lu phase_us=%.2f grabs=%lu remote=%lu sleeps=%lu", sorted,
              sum0 == sum1 && x0 == x1 ? "same" : "CHANGED", (unsigned long)(s.t1 - s.t0), (double)(s.t1 - s.t0) / s.n,
              (unsigned long)(local + remote), (unsigned long)remote, (unsigned long)sl_wait_blocks());
    return 0;
}
