/*
 * sim_mem.c - memory in the simulator: the profile files, tools/model/cache.c on simulated harts, the
 * report the plugin prints (the model is in sim_mem.h). One host thread: no locks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim_mem.h"
#include "../model/cache.h"
#include "../../kernel/sched/sched.h"

#define RAM_BASE 0x80000000UL
#define KERNEL_RESERVE (4UL << 20) /* each node's first 4 MB: the kernel's image, stacks and tables */
/* The most NUMA nodes QEMU 7.2's virt boots (a third socket aborts it): model_limits.QEMU_MAX_NODES, kept equal by
   tests/test_hostile.py. */
#define SIM_MAX_NODES 2

static struct model *m;
static struct model_params prm;
static char profile[64], canonical[400];
static uint64_t cycle_ps;
static int charge = 1; /* charge=off: count the misses, add no stall (the plugin's deterministic mode) */
static uint64_t next_free[MODEL_MAX_HARTS]; /* per node: the next free byte (bump allocation) */
static double host_ns;                      /* host time spent in mem_touch (--stats) */
static uint64_t host_lines;                 /* model_access calls */

struct jobstat {
    uint64_t accesses, served[MODEL_NSERVED], stall_cycles;
};
static struct jobstat js[NJOB + 1]; /* by job id; 0: the kernel's own pick at a switch (sim_kernel.c), not reported */

int mem_on(void) { return m != 0; }
const char *mem_canonical(void) { return m ? canonical : "none"; }
uint64_t mem_cycle_ps(void) { return m ? cycle_ps : 0; }
int mem_nodes(void) { return m ? prm.nodes : 1; }
int mem_node_of_hart(int hart) { return m ? model_node_of_hart(m, hart) : 0; }

/* The bit of key k in a profile's `seen` set (model_param_keys' order), 0 if k is no key. */
static uint32_t key_bit(const char *k)
{
    for (int i = 0; model_param_keys[i]; i++)
        if (!strcmp(model_param_keys[i], k))
            return 1u << i;
    return 0;
}

/* key = value [# comment] lines of one profile file into prm, each key once (as model.load_profile reads
   them); -1 with a message naming the line. */
static int read_profile(const char *path, uint32_t *seen, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(err, errlen, "--model: cannot read profile %s: %s (profiles are "
                        "tools/model/profiles/<name>.conf; --profiles DIR names another directory)",
                        path, strerror(errno)), -1;
    char line[512];
    int ln = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        ln++;
        char *hash = strchr(line, '#'), k[64], v[64], extra[8], why[300];
        if (hash)
            *hash = 0;
        int n = sscanf(line, " %63[a-z0-9_] = %63s %7s", k, v, extra);
        if (n <= 0 && strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (n != 2) {
            snprintf(err, errlen, "--model: %s line %d: not `key = integer  # source`", path, ln);
            rc = -1;
        } else if (*seen & key_bit(k)) {
            snprintf(err, errlen, "--model: %s line %d: %s is given twice", path, ln, k);
            rc = -1;
        } else if (model_param_set(&prm, k, v, why, sizeof why) < 0) {
            snprintf(err, errlen, "--model: %s line %d: %s", path, ln, why);
            rc = -1;
        } else {
            *seen |= key_bit(k);
        }
    }
    fclose(f);
    return rc;
}

/* The fields of prm in model_param_keys' order. */
static const int *const param_vals[] = { &prm.line_b, &prm.l1_kb, &prm.l1_ways, &prm.l2_kb, &prm.l2_ways,
                                         &prm.llc_kb, &prm.llc_ways, &prm.l2_cycles, &prm.llc_cycles,
                                         &prm.coh_cycles, &prm.mem_cycles, &prm.remote_cycles, &prm.nodes };

/* One profile file read as --model reads it (every key required), nothing clamped; -1 with a message. */
static int read_whole_profile(const char *path, char *err, size_t errlen)
{
    uint32_t seen = 0;
    memset(&prm, 0, sizeof prm);
    if (read_profile(path, &seen, err, errlen) < 0)
        return -1;
    for (int i = 0; model_param_keys[i]; i++)
        if (!(seen >> i & 1))
            return snprintf(err, errlen, "--model: profile %s has no %s (every key of tools/model/README.md's "
                            "table is required)", path, model_param_keys[i]), -1;
    return 0;
}

int mem_profile_values(const char *path, FILE *out, char *err, size_t errlen)
{
    if (read_whole_profile(path, err, errlen) < 0)
        return -1;
    for (int i = 0; model_param_keys[i]; i++)
        fprintf(out, "%s=%d\n", model_param_keys[i], *param_vals[i]);
    return 0;
}

static void make_canonical(void)
{
    const int *const *vals = param_vals;
    size_t n = (size_t)snprintf(canonical, sizeof canonical, "%s", profile);
    for (int i = 0; model_param_keys[i] && n < sizeof canonical; i++) {
        /* a level of 0 KB has ways=0 in the canonical spec, whatever was given (tools/model/README.md) */
        int v = *vals[i];
        if ((vals[i] == &prm.l1_ways && !prm.l1_kb) || (vals[i] == &prm.l2_ways && !prm.l2_kb) ||
            (vals[i] == &prm.llc_ways && !prm.llc_kb))
            v = 0;
        n += (size_t)snprintf(canonical + n, sizeof canonical - n, ",%s=%d", model_param_keys[i], v);
    }
}

int mem_init(const char *spec, const char *profile_dir, int harts, uint64_t mem_mb, uint64_t cps, char *err,
             size_t errlen)
{
    char buf[512], path[700];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = 0, *name = strtok_r(buf, ",", &save);
    if (!name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
        return snprintf(err, errlen, "--model %s: the spec is <profile>[,key=value...] with a profile name of "
                        "a-z, 0-9, _", spec), -1;
    snprintf(profile, sizeof profile, "%s", name);
    snprintf(path, sizeof path, "%s/%s.conf", profile_dir, name);
    if (read_whole_profile(path, err, errlen) < 0)
        return -1;
    for (char *kv; (kv = strtok_r(0, ",", &save));) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return snprintf(err, errlen, "--model %s: %s is not key=value", spec, kv), -1;
        *eq = 0;
        if (!strcmp(kv, "charge")) { /* the plugin's charge=on|off (tools/model/README.md), not a profile key */
            if (strcmp(eq + 1, "on") && strcmp(eq + 1, "off"))
                return snprintf(err, errlen, "--model %s: charge=%s: expected charge=on or charge=off", spec,
                                eq + 1), -1;
            charge = !strcmp(eq + 1, "on");
            continue;
        }
        if (model_param_set(&prm, kv, eq + 1, err, errlen) < 0)
            return -1;
    }
    if (prm.nodes > harts)
        prm.nodes = harts; /* clamped to the harts, as the harness's Model.for_harts */
    if (prm.nodes > SIM_MAX_NODES) /* what QEMU's virt boots (tools/py/schedlab/model_limits.py) */
        return snprintf(err, errlen, "--model %s: nodes=%d at %d harts: QEMU 7.2's virt machine boots at most %d "
                        "NUMA nodes: give nodes=1..%d", spec, prm.nodes, harts, SIM_MAX_NODES, SIM_MAX_NODES), -1;
    prm.harts = harts;
    prm.ram_base = RAM_BASE;
    prm.ram_bytes = mem_mb << 20;
    if (!(m = model_new(&prm, err, errlen)))
        return -1;
    for (int n = 0; n < prm.nodes; n++)
        next_free[n] = RAM_BASE + prm.ram_bytes / (uint64_t)prm.nodes * (uint64_t)n + KERNEL_RESERVE;
    cycle_ps = cps ? cps : SIM_CYCLE_PS_DEFAULT;
    make_canonical();
    return 0;
}

uint64_t mem_alloc(int job, uint64_t bytes, int node)
{
    if (!m)
        return 0;
    if (node < 0 || node >= prm.nodes)
        node = 0;
    uint64_t end = RAM_BASE + prm.ram_bytes / (uint64_t)prm.nodes * (uint64_t)(node + 1);
    /* the kernel's kalloc_page falls back to the next node when one is full; here: to node 0's start again
       (a simulated run never fills a node in practice; reuse of addresses only costs a few extra hits) */
    if (next_free[node] + bytes > end)
        next_free[node] = end - prm.ram_bytes / (uint64_t)prm.nodes + KERNEL_RESERVE;
    uint64_t pa = next_free[node];
    next_free[node] = (pa + bytes + 4095) & ~4095UL; /* whole pages, as sys_alloc maps them */
    (void)job;
    return pa;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* words accesses (1 or more) to the line holding a, by job's process on hart: the line's first through the
   model, the others hit L1 if there is one, and are served where the first was if there is not (every
   word to memory on butterfly). Returns the cycles; the job's counts are kept as the plugin's. */
static uint64_t line_access(int job, int hart, uint64_t a, uint64_t words, int store)
{
    struct jobstat *s = &js[job >= 0 && job <= NJOB ? job : 0];
    uint32_t c = 0;
    enum model_served sv = model_access(m, hart, a & ~((uint64_t)prm.line_b - 1), store, &c);
    host_lines++;
    s->accesses += words;
    if (prm.l1_kb) {
        s->served[sv]++;
        s->served[SERVED_L1] += words - 1;
        return c;
    }
    s->served[sv] += words;
    return (uint64_t)c * words;
}

static uint64_t charged(int job, uint64_t cycles, double t0)
{
    host_ns += now_ns() - t0;
    js[job >= 0 && job <= NJOB ? job : 0].stall_cycles += cycles;
    return charge ? cycles * cycle_ps / 1000 : 0;
}

uint64_t mem_touch(int job, int hart, uint64_t pa, uint64_t bytes, int elem_b, int store)
{
    if (!m || !bytes)
        return 0;
    uint64_t line = (uint64_t)prm.line_b, cycles = 0, end = pa + bytes;
    double t0 = now_ns();
    for (uint64_t a = pa & ~(line - 1); a < end; a += line) {
        uint64_t lo = a > pa ? a : pa, hi = a + line < end ? a + line : end;
        cycles += line_access(job, hart, a, (hi - lo + (uint64_t)elem_b - 1) / (uint64_t)elem_b, store);
    }
    return charged(job, cycles, t0);
}

/* count words at pa, pa + stride, ... (stride 0: one word count times; a word never straddles a line: the
   callers' words are aligned and stride is 0 or at least the word), the words of one line as one lookup. */
uint64_t mem_touch_every(int job, int hart, uint64_t pa, uint64_t count, uint64_t stride, int store)
{
    if (!m || !count)
        return 0;
    uint64_t line = (uint64_t)prm.line_b, cycles = 0;
    double t0 = now_ns();
    if (!stride)
        return charged(job, line_access(job, hart, pa, count, store), t0);
    for (uint64_t i = 0; i < count;) {
        uint64_t a = (pa + i * stride) & ~(line - 1), next = (a + line - pa + stride - 1) / stride; /* first beyond */
        next = next < count ? next : count;
        cycles += line_access(job, hart, a, next - i, store);
        i = next;
    }
    return charged(job, cycles, t0);
}

uint64_t mem_touch_rmw(int job, int hart, uint64_t pa, uint64_t count, uint64_t stride)
{
    if (!m || !count)
        return 0;
    uint64_t cycles = 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < count; i++)
        cycles += line_access(job, hart, pa + i * stride, 2, 1);
    return charged(job, cycles, t0);
}

int mem_deterministic(void) { return m && !charge; }

int mem_line_b(void) { return m ? prm.line_b : 64; }

static uint64_t stall_us(uint64_t cycles) { return cycles * cycle_ps / 1000000; }

void mem_report(FILE *f)
{
    if (!m)
        return;
    uint64_t acc = 0, stall = 0;
    for (int j = 1; j <= NJOB; j++) /* the jobs' (job 0's few lines a switch are not QEMU's job 0: no boot) */
        acc += js[j].accesses, stall += js[j].stall_cycles;
    /* paid_us = stall_us: the simulator adds each stall to simulated time exactly (nothing with charge=off);
       the lookups cost no simulated time (their host cost is --stats's) */
    fprintf(f, "MODEL end profile=%s cycle_ps=%lu charge=%s accesses=%lu stall_us=%lu paid_us=%lu lookup_ns=0.0 "
               "miss_lookup_ns=0.0\n",
            profile, cycle_ps, charge ? "on" : "off", acc, stall_us(stall), charge ? stall_us(stall) : 0);
    for (int j = 1; j <= NJOB; j++) {
        struct jobstat *s = &js[j];
        if (!s->accesses)
            continue;
        uint64_t misses = s->served[SERVED_LLC] + s->served[SERVED_COH] + s->served[SERVED_LOCAL] +
                          s->served[SERVED_REMOTE];
        fprintf(f, "MODEL job=%d accesses=%lu misses=%lu l2_hits=%lu llc_hits=%lu coherence=%lu local=%lu remote=%lu "
                   "stall_us=%lu\n",
                j, s->accesses, misses, s->served[SERVED_L2], s->served[SERVED_LLC], s->served[SERVED_COH],
                s->served[SERVED_LOCAL], s->served[SERVED_REMOTE], stall_us(s->stall_cycles));
    }
}

void mem_stats(FILE *f)
{
    if (!m)
        return;
    fprintf(f, "sim: memory model %lu line lookups, %.1f ms host time (%.0f ns a lookup)\n", host_lines,
            host_ns / 1e6, host_lines ? host_ns / (double)host_lines : 0.0);
}

void mem_free(void)
{
    model_free(m);
    m = 0;
}
