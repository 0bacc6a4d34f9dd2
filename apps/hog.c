/*
 * hog - the compute-bound background job of Markatos's experiments: takes
 * every cycle it is given, never blocks or yields, and ends when every
 * foreground job of the scenario has ended (info->fg_live == 0).
 *
 * Each of the procs processes computes blocks of `block` steps. A block
 * always starts from the same state and mixes integer and double arithmetic
 * (mul, add, div) kept in registers across the loop, so every block must
 * produce the same checksum: process 0 computes the reference before the
 * run, and a block that disagrees means some register or FPU state was
 * corrupted across a preemption. work= is the number of blocks done: the
 * CPU the hog got.
 *
 * The procs workers are user-level threads (sl_run_workers), one pinned to
 * each process at start, with a safe point after every block: under
 * partition with adapt=yes the hog follows its allotment like any other
 * job (its surplus processes suspend, their workers share the rest).
 */
#include "schedlab.h"
#include "threads/uthread.h"
#include "workers/workers.h"

SL_APP(.about = "compute-bound background job (runs until the foreground ends)",
       .flags = SL_APP_BACKGROUND | SL_APP_ADAPTIVE,
       /* one line-aligned slot each; the workers' stacks */
       .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST, .mem_per_proc = 64 + SL_WORKERS_MEM_PER_PROC,
       SL_KEYS(SL_INT("block", 1, 100000000, 5000)));

struct slot { /* one per process, written only by it */
    uint64_t blocks, bad;
} __attribute__((aligned(64)));

struct hog {
    uint32_t steps;
    uint64_t ref; /* checksum every block must produce */
    struct slot *slot;
};

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint64_t block(uint32_t steps)
{
    uint64_t h = 0x2545f4914f6cdd1dull;
    double a = 1.0, b = 0.5, c = 0.25, d = 2.0;

    asm volatile("" : "+r"(h)); /* opaque: gcc may not hoist a pure block out of the loop */

    for (uint32_t i = 0; i < steps; i++) {
        double u;
        h = h * 6364136223846793005ull + i;
        u = (double)(h >> 40) * 0x1p-24; /* in [0, 1) */
        a = a * 0.999 + u;
        b = b + a * 1e-3;
        c = c * 0.5 + b * 0.25;
        d = d / (1.0 + 0.5 * u) + c;
    }
    return h ^ bits(a) ^ (bits(b) << 1) ^ (bits(c) << 2) ^ (bits(d) << 3);
}

static void worker(void *arg, int id)
{
    struct hog *g = arg;
    struct slot *s = &g->slot[id];
    volatile struct sl_info *info = sl_info();

    /* A live info-page field: read it anew every block (the kernel writes it). */
    while (__atomic_load_n(&info->fg_live, __ATOMIC_RELAXED) != 0) {
        if (block(g->steps) != g->ref)
            s->bad++;
        s->blocks++;
        sl_safe_point();
    }
}

int main(void)
{
    int n = sl_nprocs();
    struct hog g = { .steps = (uint32_t)sl_arg_int("block") };
    uint64_t work = 0, bad = 0;

    g.slot = sl_alloc_node((size_t)n * sizeof(struct slot), -1); /* line-aligned */
    if (!g.slot)
        sl_die("out of memory for %d processes", n);
    memset(g.slot, 0, (size_t)n * sizeof(struct slot));
    g.ref = block(g.steps);

    sl_run_workers(worker, &g);

    for (int i = 0; i < n; i++) {
        work += g.slot[i].blocks;
        bad += g.slot[i].bad;
    }
    sl_report(bad == 0, "work=%lu bad=%lu", (unsigned long)work, (unsigned long)bad);
    return 0;
}
