/*
 * memwalk - a job whose memory behaviour is known in advance, so a test can predict what the machine model
 * (tools/model/) must count for it. Two modes:
 *
 *   walk      the job's working set of kb KiB is split evenly among its processes; each process fills its
 *             share once (one 8-byte word every `stride` bytes) and then reads it `passes` times in order.
 *             With stride = the profile's line, a share larger than a hart's caches misses on every line of
 *             every pass (LRU and a sequential walk); a share that fits misses once per line, in the fill.
 *   pingpong  exactly two processes hand a counter back and forth `rounds` times: process 0 writes `flag`,
 *             process 1 waits to see it and writes `ack` (another line), process 0 waits for that. Every write
 *             invalidates the line the other is spinning on: one coherence miss per write, 2 per round.
 *
 * Checks: walk - every pass's sum of the share equals the fill's (the words are a function of their index);
 * pingpong - each side saw the other's counter in order, never skipping a value.
 * The spinning side yields now and then, so pingpong finishes (slowly) even on one hart.
 */
#include "schedlab.h"

SL_APP(.about = "walks a working set or ping-pongs a line (known cache misses)",
       .mem_key = "kb", .mem_lin = 1024, .mem_const = 128 * 1024, .mem_per_proc = 128,
       SL_KEYS(SL_ENUM("mode", "walk|pingpong", 0), SL_INT("kb", 1, 65536, 64), SL_INT("passes", 1, 1000000, 10),
               SL_INT("stride", 8, 4096, 64), SL_INT("rounds", 1, 10000000, 1000)));

#define SPIN_BEFORE_YIELD 100000

struct share { /* one per process, written only by it */
    uint64_t bad, sum;
} __attribute__((aligned(64)));

struct walk {
    uint8_t *base;            /* kb KiB, line aligned */
    size_t words_per_share;   /* words each process owns (one per stride) */
    size_t stride_words;
    int64_t passes;
    struct share *share;
};

struct line {
    volatile uint64_t v;
} __attribute__((aligned(256)));

struct pingpong {
    struct line flag, ack;    /* separate lines in any profile (line_b <= 256) */
    int64_t rounds;
    uint64_t bad[2];
};

static uint64_t word_value(size_t i) { return (i + 1) * 0x9e3779b97f4a7c15ull; }

static void walk_worker(void *arg, int id)
{
    struct walk *w = arg;
    struct share *s = &w->share[id];
    uint64_t *a = (uint64_t *)w->base + (size_t)id * w->words_per_share * w->stride_words;
    size_t first = (size_t)id * w->words_per_share;
    uint64_t fill = 0;
    for (size_t i = 0; i < w->words_per_share; i++) {
        a[i * w->stride_words] = word_value(first + i);
        fill += word_value(first + i);
    }
    for (int64_t p = 0; p < w->passes; p++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < w->words_per_share; i++)
            sum += ((volatile uint64_t *)a)[i * w->stride_words];
        s->bad += sum != fill;
    }
    s->sum = fill;
}

/* Wait until *v == want; a value past it means a round was skipped. */
static int await(volatile uint64_t *v, uint64_t want)
{
    for (uint64_t spins = 0;; spins++) {
        uint64_t x = __atomic_load_n(v, __ATOMIC_ACQUIRE);
        if (x == want)
            return 0;
        if (x > want)
            return 1;
        if (spins % SPIN_BEFORE_YIELD == SPIN_BEFORE_YIELD - 1)
            sl_yield();
    }
}

/* Only flag and ack are shared while it runs: the counts stay in registers until the end, so no third line
   ping-pongs (bad[] shares a line between the two). */
static void pingpong_worker(void *arg, int id)
{
    struct pingpong *g = arg;
    uint64_t bad = 0;
    for (int64_t r = 1; r <= g->rounds; r++) {
        if (id == 0) {
            __atomic_store_n(&g->flag.v, (uint64_t)r, __ATOMIC_RELEASE);
            bad += await(&g->ack.v, (uint64_t)r);
        } else {
            bad += await(&g->flag.v, (uint64_t)r);
            __atomic_store_n(&g->ack.v, (uint64_t)r, __ATOMIC_RELEASE);
        }
    }
    g->bad[id] = bad;
}

static void run_walk(int n)
{
    int64_t kb = sl_arg_int("kb"), stride = sl_arg_int("stride");
    struct walk w = { .stride_words = (size_t)stride / 8, .passes = sl_arg_int("passes") };
    if (stride % 8)
        sl_die("stride=%ld: must be a multiple of 8 bytes", (long)stride);
    w.words_per_share = (size_t)kb * 1024 / (size_t)stride / (size_t)n;
    if (w.words_per_share == 0)
        sl_die("kb=%ld is less than one stride per process (%d processes, stride=%ld)", (long)kb, n, (long)stride);
    w.base = sl_alloc_node((size_t)kb * 1024, -1);
    w.share = sl_alloc_node((size_t)n * sizeof(struct share), -1);
    if (!w.base || !w.share)
        sl_die("out of memory for kb=%ld", (long)kb);
    memset(w.share, 0, (size_t)n * sizeof(struct share));
    sl_run_procs(walk_worker, &w);
    uint64_t bad = 0, sum = 0;
    for (int i = 0; i < n; i++)
        bad += w.share[i].bad, sum += w.share[i].sum;
    sl_report(bad == 0, "lines=%lu bad=%lu sum=%lu", (unsigned long)(w.words_per_share * (size_t)n),
              (unsigned long)bad, (unsigned long)sum);
}

static void run_pingpong(int n)
{
    if (n != 2)
        sl_die("mode=pingpong needs procs=2 (it has %d)", n);
    struct pingpong *g = sl_alloc_node(sizeof *g, -1);
    if (!g)
        sl_die("out of memory");
    memset(g, 0, sizeof *g);
    g->rounds = sl_arg_int("rounds");
    sl_run_procs(pingpong_worker, g);
    int ok = g->bad[0] == 0 && g->bad[1] == 0 && g->flag.v == (uint64_t)g->rounds && g->ack.v == (uint64_t)g->rounds;
    sl_report(ok, "bad=%lu", (unsigned long)(g->bad[0] + g->bad[1]));
}

int main(void)
{
    int n = sl_nprocs();
    if (sl_arg_is("mode", "pingpong"))
        run_pingpong(n);
    else
        run_walk(n);
    return 0;
}
