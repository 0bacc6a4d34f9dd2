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
 *
 * ws= (KiB, default 0: registers only) gives each process a working set
 * of its own, from its node: after every block the process adds 1 to one
 * word in every 64-byte line of it, so a block sweeps ws KiB through the
 * caches of the hart it runs on and evicts what other jobs left there
 * (Tucker & Gupta's cache corruption needs a co-runner that does). At the
 * end every word must equal the sweeps its process made, or check=FAIL.
 * mem_lin is per KiB of ws for every process: the key table bounds ws so
 * that 16 processes fit (the kernel refuses a job whose estimate does not).
 */
#include "schedlab.h"
#include "threads/uthread.h"
#include "workers/workers.h"

SL_APP(.about = "compute-bound background job (runs until the foreground ends)",
       .flags = SL_APP_BACKGROUND | SL_APP_ADAPTIVE,
       /* one line-aligned slot each; the workers' stacks */
       .mem_const = 256 * 1024 + SL_WORKERS_MEM_CONST, .mem_per_proc = 64 + 4096 + SL_WORKERS_MEM_PER_PROC,
       /* ws: each process's KiB (and a page of rounding, in mem_per_proc); 16 processes' worth per KiB, the
          widest job the kernel runs, since the estimate has no term in ws x procs */
       .mem_key = "ws", .mem_lin = 16 * 1024,
       SL_KEYS(SL_INT("block", 1, 100000000, 5000), SL_INT("ws", 0, 8192, 0)));

#define WS_LINE 64 /* bytes between the words a sweep touches: a line on every profile */

struct slot { /* one per process, written only by it */
    uint64_t blocks, bad;
    uint64_t *ws; /* ws= KiB from the process's node, or 0 */
} __attribute__((aligned(64)));

struct hog {
    uint32_t steps;
    size_t ws_words; /* words of a process's working set (one per line are touched) */
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

    if (g->ws_words) { /* node-local: allocated by the worker on the hart it starts on */
        s->ws = sl_alloc_node(g->ws_words * sizeof(uint64_t), -1);
        if (!s->ws)
            sl_die("out of memory for process %d's ws=%zu KiB", id, g->ws_words * sizeof(uint64_t) / 1024);
        memset(s->ws, 0, g->ws_words * sizeof(uint64_t));
    }
    /* A live info-page field: read it anew every block (the kernel writes it). */
    while (__atomic_load_n(&info->fg_live, __ATOMIC_RELAXED) != 0) {
        if (block(g->steps) != g->ref)
            s->bad++;
        for (size_t w = 0; w < g->ws_words; w += WS_LINE / sizeof(uint64_t))
            s->ws[w]++;
        s->blocks++;
        sl_safe_point();
    }
}

/* Every touched word of every process's working set holds its sweeps: the blocks it did. */
static uint64_t ws_bad(struct hog *g, int n)
{
    uint64_t bad = 0;

    for (int i = 0; i < n; i++)
        for (size_t w = 0; g->slot[i].ws && w < g->ws_words; w += WS_LINE / sizeof(uint64_t))
            bad += g->slot[i].ws[w] != g->slot[i].blocks;
    return bad;
}

int main(void)
{
    int n = sl_nprocs();
    struct hog g = { .steps = (uint32_t)sl_arg_int("block"), .ws_words = (size_t)sl_arg_int("ws") * 1024 / 8 };
    uint64_t work = 0, bad = 0, wsbad;

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
    wsbad = ws_bad(&g, n);
    if (g.ws_words)
        sl_report(bad == 0 && wsbad == 0, "work=%lu bad=%lu ws_kb=%lu ws_bad=%lu", (unsigned long)work,
                  (unsigned long)bad, (unsigned long)(g.ws_words * 8 / 1024), (unsigned long)wsbad);
    else
        sl_report(bad == 0, "work=%lu bad=%lu", (unsigned long)work, (unsigned long)bad);
    return 0;
}
