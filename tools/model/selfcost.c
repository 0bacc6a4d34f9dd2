/*
 * selfcost.c - what the cache model's own work costs the host, per way an access is served.
 *
 * The plugin charges a miss by busy-waiting its profile cost, but the lookup itself already took host time
 * the guest's clock sees: an L1 hit is the fast path (a few ns, part of every instruction the cycle
 * calibration timed), a miss walks the levels and the directory (tens of ns). Left alone, that walk is an
 * uncharged extra on every miss - on `iris` an L2 hit's 13 cycles are ~22 ns and its walk ~18 ns more. So the
 * plugin measures each path once at start-up, on a scratch model of the same shape, and charges each miss
 * its profile cost less what its path costs beyond the fast one (plugin.c).
 *
 * The patterns: hart 0 cycles over `count` lines `stride` lines apart, so that they all fall in one set of
 * every level to be missed (stride: the largest set count among them) and overflow its ways (count: their
 * ways summed, plus one) - exact LRU then misses those levels on every access, and the next level (if any)
 * holds them. Each pattern's time is booked to the level its accesses were served by; only a pattern whose
 * accesses all agree counts. Approximate: the real run's directory and cache lines are colder in the host's
 * own caches than the benchmark's.
 */
#include <string.h>
#include <time.h>

#include "cache.h"
#include "selfcost.h"

#define ROUNDS 4000 /* accesses timed per pattern, after one untimed pass */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t sets_of(int kb, int ways, int line_b)
{
    return kb && ways ? (uint64_t)kb * 1024 / ((uint64_t)ways * (uint64_t)line_b) : 0;
}

/* Time one pattern; books its ns per access to ns[served] if every access was served alike. */
static void time_pattern(struct model *m, const struct model_params *p, uint64_t base, uint64_t stride_lines,
                         int count, double ns[MODEL_NSERVED])
{
    uint64_t stride = stride_lines * (uint64_t)p->line_b;
    if (count < 1 || base + stride * (uint64_t)count > p->ram_base + p->ram_bytes)
        return;
    uint32_t cycles;
    for (int i = 0; i < count; i++) /* warm: fill what the pattern keeps */
        model_access(m, 0, base + stride * (uint64_t)i, 0, &cycles);
    int seen[MODEL_NSERVED] = { 0 };
    double t = now_ns();
    for (int r = 0; r < ROUNDS; r++)
        seen[model_access(m, 0, base + stride * (uint64_t)(r % count), 0, &cycles)]++;
    t = now_ns() - t;
    for (int s = 0; s < MODEL_NSERVED; s++)
        if (seen[s] == ROUNDS && (ns[s] == 0 || t / ROUNDS < ns[s]))
            ns[s] = t / ROUNDS;
}

int model_self_cost(const struct model_params *p, double ns[MODEL_NSERVED])
{
    memset(ns, 0, sizeof(double) * MODEL_NSERVED);
    char err[160];
    struct model *m = model_new(p, err, sizeof err);
    if (!m)
        return -1;
    uint64_t sets[3] = { sets_of(p->l1_kb, p->l1_ways, p->line_b), sets_of(p->l2_kb, p->l2_ways, p->line_b),
                         sets_of(p->llc_kb, p->llc_ways, p->line_b) };
    int ways[3] = { p->l1_ways, p->l2_ways, p->llc_ways };
    uint64_t other_node = p->ram_base + (p->nodes > 1 ? p->ram_bytes / (uint64_t)p->nodes : 0);
    for (int rep = 0; rep < 3; rep++) { /* the fastest of three: a busy host only slows a pattern */
        time_pattern(m, p, p->ram_base, 1, 1, ns);                  /* one line: the fast path */
        if (p->nodes > 1)
            time_pattern(m, p, other_node, 1, 1, ns);               /* no caches: the other node's memory */
        uint64_t stride = 1;
        int count = 1;
        for (int k = 0; k < 3; k++) { /* miss levels 0..k, served by the next one present (or memory) */
            if (!sets[k])
                continue;
            if (sets[k] > stride)
                stride = sets[k];
            count += ways[k];
            time_pattern(m, p, p->ram_base, stride, count, ns);
            if (p->nodes > 1)
                time_pattern(m, p, other_node, stride, count, ns);
        }
    }
    model_free(m);
    return 0;
}
