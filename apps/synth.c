/*
 * synth - Feitelson & Rudolph's synthetic fine-grain program (section 3.3):
 * every worker (user-level threads, one
 * pinned to each process at start: sl_run_workers) loops `iters` times: compute a random amount of work,
 * uniform in [grain, grain+var] units, then barrier. LOAD is the number of
 * competing jobs in the scenario, not a key here.
 *
 * A work unit is one step of   h = h*A + C (mod 2^64);  d += 1.0
 * which compiles to 5 RV64 instructions (mul, add, fadd.d, addi, bne), so
 * grain=1000 is about 5000 instructions per iteration.
 *
 * Checks:
 *   work      each process's h equals h0 advanced by its total units, computed
 *             in O(log units) by composing the LCG, and d equals the total
 *             exactly; corrupted integer or FP registers show up here
 *   lockstep  a shared arrival counter is bumped before every barrier; after
 *             barrier i it must lie in [(i+1)P, (i+2)P - 1] (all of iteration
 *             i counted, nobody past barrier i+1)
 * iter_us is the mean iteration time seen by process 0 over the timed loop;
 * sleeps is how many times a process slept in a barrier wait (wait.h).
 * barrier= is the wait kind, shape= the barrier's shape (barrier.h).
 */
#include "schedlab.h"
#include "barriers/barrier.h"
#include "base/lcg.h"
#include "threads/uthread.h"
#include "workers/workers.h"

SL_APP(.about = "synthetic grain/var barrier loop (Feitelson & Rudolph)", .flags = SL_APP_ADAPTIVE,
       /* slots: 64 B each, + a page; the workers' stacks */
       .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST, .mem_per_proc = 64 + SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("grain", 0, 100000000, 1000), SL_INT("var", 0, 100000000, 0),
               SL_INT("iters", 1, 100000000, 50000), SL_ENUM("barrier", SL_WAIT_CHOICES, 0),
               SL_ENUM("shape", "central|tree|combination", 0)));

#define H0 0x9e3779b97f4a7c15ull

struct slot { /* one per process, written only by it */
    uint64_t h, units, lockstep_bad;
    double d;
} __attribute__((aligned(64)));

struct synth {
    int64_t grain, var, iters;
    int nprocs;
    struct sl_barrier bar;
    struct slot *slot;
    uint64_t arrived __attribute__((aligned(64))); /* bumped before each barrier */
    uint64_t t0 __attribute__((aligned(64))), t1;  /* process 0's clock */
};

static void work(struct slot *s, uint64_t units)
{
    uint64_t h = s->h;
    double d = s->d;

    for (uint64_t u = 0; u < units; u++) {
        h = sl_lcg_step(h);
        d += 1.0;
    }
    s->h = h;
    s->d = d;
}

static void check_lockstep(struct synth *y, struct slot *s, int64_t i)
{
    uint64_t c = __atomic_load_n(&y->arrived, __ATOMIC_RELAXED);
    uint64_t p = (uint64_t)y->nprocs;

    if (c < (uint64_t)(i + 1) * p || c > (uint64_t)(i + 2) * p - 1)
        s->lockstep_bad++;
}

static void worker(void *arg, int id)
{
    struct synth *y = arg;
    struct slot *s = &y->slot[id];
    struct sl_rng r;

    sl_rng_init(&r, (uint64_t)id);
    s->h = H0;
    sl_barrier_wait(&y->bar);
    if (id == 0)
        y->t0 = sl_now_us();
    for (int64_t i = 0; i < y->iters; i++) {
        uint64_t u = (uint64_t)y->grain + sl_rng_below(&r, (uint64_t)y->var + 1);
        work(s, u);
        s->units += u;
        __atomic_add_fetch(&y->arrived, 1, __ATOMIC_RELAXED);
        sl_barrier_wait(&y->bar);
        check_lockstep(y, s, i);
    }
    if (id == 0)
        y->t1 = sl_now_us();
}

int main(void)
{
    struct synth y = {
        .grain = sl_arg_int("grain"), .var = sl_arg_int("var"), .iters = sl_arg_int("iters"), .nprocs = sl_nprocs()
    };
    uint64_t units = 0, badwork = 0, badstep = 0;

    y.slot = sl_alloc_node((size_t)y.nprocs * sizeof(struct slot), -1); /* line-aligned */
    if (!y.slot)
        sl_die("out of memory for %d processes", y.nprocs);
    memset(y.slot, 0, (size_t)y.nprocs * sizeof(struct slot));
    sl_barrier_init_args(&y.bar, (uint32_t)y.nprocs, "shape", "barrier");

    sl_run_workers(worker, &y);

    for (int i = 0; i < y.nprocs; i++) {
        struct slot *s = &y.slot[i];
        units += s->units;
        badwork += s->h != sl_lcg_jump(H0, s->units) || s->d != (double)s->units;
        badstep += s->lockstep_bad;
    }
    sl_report(badwork == 0 && badstep == 0 && y.arrived == (uint64_t)(y.iters * y.nprocs),
              "iter_us=%.2f par_us=%lu units=%lu badwork=%lu badstep=%lu sleeps=%lu",
              (double)(y.t1 - y.t0) / (double)y.iters, (unsigned long)(y.t1 - y.t0), (unsigned long)units,
              (unsigned long)badwork, (unsigned long)badstep, (unsigned long)sl_wait_blocks());
    return 0;
}
