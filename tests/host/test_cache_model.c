/* test_cache_model.c - the machine model's caches (tools/model/cache.c) against a naive reference written
 * in cache_ref.h from the rules in tools/model/README.md and cache.h: random traces over many shapes (served level
 * and cycles of every access), then directed cases (LRU order, associativity, coherence ping-pong, the
 * LLC across nodes, remote vs local memory, RAM edges), the parameter parser, and several threads
 * hammering one model (run again under TSan in the _tsan build). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"
#include "cache_ref.h"
#include "check.h"

#define RAM_BASE 0x80000000ull
enum { C_L2 = 3, C_LLC = 11, C_COH = 29, C_MEM = 101, C_REMOTE = 307 };
static const uint32_t cost[MODEL_NSERVED] = { 0, C_L2, C_LLC, C_COH, C_MEM, C_REMOTE };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 11) % n);
}

/* Sets key to v through model_param_set, as the plugin will. */
static void
setp(struct model_params *p, const char *key, long v)
{
    char val[32], err[256];

    snprintf(val, sizeof val, "%ld", v);
    if (model_param_set(p, key, val, err, sizeof err) != 0) {
        fprintf(stderr, "setp %s=%ld: %s\n", key, v, err);
        CHECK(0);
    }
}

/* A profile with no caches, one node, the test's costs, and `harts` harts over ram_kb KiB of RAM. */
static struct model_params
params(int harts, int ram_kb)
{
    struct model_params p;

    memset(&p, 0, sizeof p);
    setp(&p, "line_b", 64);
    setp(&p, "nodes", 1);
    setp(&p, "l2_cycles", C_L2);
    setp(&p, "llc_cycles", C_LLC);
    setp(&p, "coh_cycles", C_COH);
    setp(&p, "mem_cycles", C_MEM);
    setp(&p, "remote_cycles", C_REMOTE);
    p.harts = harts;
    p.ram_base = RAM_BASE;
    p.ram_bytes = (uint64_t)ram_kb * 1024;
    return p;
}

static struct model *
mk(const struct model_params *p)
{
    char err[256] = "";
    struct model *m = model_new(p, err, sizeof err);

    if (!m)
        fprintf(stderr, "model_new: %s\n", err);
    CHECK(m != NULL);
    return m;
}

/* ---- random traces ---- */

static long served_seen[MODEL_NSERVED];

/* One trace of n accesses on p: hot shared lines, a working set per hart, anywhere in RAM, now and then
   outside it; each access's result must equal the reference's. Returns the number of mismatches. */
static int
trace(const struct model_params *p, int n)
{
    struct model *m = mk(p);
    struct ref r;
    int bad = 0;

    if (!m)
        return 1;
    ref_init(&r, p);
    for (int i = 0; i < n; i++) {
        int h = (int)rnd((uint32_t)p->harts), k = (int)rnd(100), st = rnd(4) == 0;
        uint64_t off;
        uint32_t cyc = 12345;
        enum model_served got, want;

        if (k < 35)
            off = (uint64_t)rnd(24) * 64 * 37 % p->ram_bytes;                         /* hot, shared */
        else if (k < 80)
            off = ((uint64_t)h * p->ram_bytes / (uint64_t)p->harts + rnd(12 * 1024)) % p->ram_bytes; /* own */
        else if (k < 99)
            off = rnd((uint32_t)p->ram_bytes);                                          /* anywhere */
        else
            off = rnd(2) ? p->ram_bytes + rnd(4096) : (uint64_t)0 - 1 - rnd(4096);     /* outside */
        off += rnd(2) ? 0 : rnd((uint32_t)p->line_b);                                  /* any byte of a line */
        got = model_access(m, h, RAM_BASE + off, st, &cyc);
        want = ref_access(&r, h, RAM_BASE + off, st);
        served_seen[got]++;
        if (got != want || cyc != cost[got]) {
            if (bad++ < 5)
                fprintf(stderr, "trace: access %d h=%d off=0x%llx st=%d: got %s (%u cycles), want %s\n", i, h,
                        (unsigned long long)off, st, model_served_name(got), cyc, model_served_name(want));
        }
    }
    ref_free(&r);
    model_free(m);
    return bad;
}

static void
test_random_traces(void)
{
    static const int lines[] = { 16, 32, 64, 128 }, l1kb[] = { 0, 1, 2, 3, 4 }, l2kb[] = { 0, 0, 4, 6, 8, 16 };
    static const int llckb[] = { 0, 0, 16, 24, 48 }, ways[] = { 1, 2, 3, 4, 8 }, lways[] = { 2, 4, 8, 12 };
    int configs = 0, rejected = 0, bad = 0, two_levels = 0, with_llc = 0, two_nodes = 0;

    while (configs < 160) {
        int harts = 1 + (int)rnd(4);
        struct model_params p = params(harts, 128 + 64 * (int)rnd(3));
        char err[256];
        struct model *m;

        setp(&p, "line_b", lines[rnd(4)]);
        setp(&p, "l1_kb", l1kb[rnd(5)]);
        setp(&p, "l1_ways", ways[rnd(5)]);
        setp(&p, "l2_kb", l2kb[rnd(6)]);
        setp(&p, "l2_ways", ways[rnd(5)]);
        setp(&p, "llc_kb", llckb[rnd(5)]);
        setp(&p, "llc_ways", lways[rnd(4)]);
        setp(&p, "nodes", harts > 1 ? 1 + (int)rnd(2) : 1);
        m = model_new(&p, err, sizeof err);
        CHECK((m != NULL) == ref_valid(&p)); /* rejects exactly the shapes that are not whole sets */
        model_free(m);
        if (!m) {
            rejected++;
            CHECK(strstr(err, "_kb=") != NULL && strstr(err, "whole number of sets") != NULL);
            continue;
        }
        configs++;
        two_levels += p.l1_kb && p.l2_kb;
        with_llc += p.llc_kb > 0;
        two_nodes += p.nodes == 2;
        bad += trace(&p, 3000);
    }
    CHECK(bad == 0);
    CHECK(rejected > 0 && two_levels > 10 && with_llc > 10 && two_nodes > 10);
    for (int s = 0; s < MODEL_NSERVED; s++) /* every outcome happened, so the comparison compared something */
        CHECK(served_seen[s] > 100);
}

/* ---- directed cases ---- */

static enum model_served
acc(struct model *m, int h, uint64_t off, int st)
{
    uint32_t cyc;
    enum model_served s = model_access(m, h, RAM_BASE + off, st, &cyc);

    CHECK(cyc == cost[s]);
    return s;
}

/* One level alone (`lvl` = "l1", "l2" or "llc"), 1 KiB of 4 ways of 64 B lines = 4 sets: A B C D fill a set,
   a hit makes A the MRU, so E evicts B (not A, as FIFO would). */
static void
test_lru_order(const char *lvl, enum model_served hit)
{
    struct model_params p = params(1, 64);
    char k[16];
    struct model *m;
    enum { A, B, C, D, E };
    const uint64_t stride = 4 * 64; /* same set */

    snprintf(k, sizeof k, "%s_kb", lvl);
    setp(&p, k, 1);
    snprintf(k, sizeof k, "%s_ways", lvl);
    setp(&p, k, 4);
    if (!(m = mk(&p)))
        return;
    for (int i = A; i <= D; i++)
        CHECK(acc(m, 0, i * stride, 0) == SERVED_LOCAL);
    CHECK(acc(m, 0, A * stride + 8, 0) == hit);  /* order A D C B */
    CHECK(acc(m, 0, E * stride, 0) == SERVED_LOCAL); /* evicts B: E A D C */
    CHECK(acc(m, 0, C * stride, 1) == hit);      /* C E A D */
    CHECK(acc(m, 0, D * stride, 0) == hit);      /* D C E A */
    CHECK(acc(m, 0, B * stride, 0) == SERVED_LOCAL); /* evicts A: B D C E */
    CHECK(acc(m, 0, A * stride, 0) == SERVED_LOCAL); /* evicts E: A B D C */
    CHECK(acc(m, 0, C * stride, 0) == hit);      /* C A B D */
    CHECK(acc(m, 0, E * stride, 0) == SERVED_LOCAL); /* evicts D: E C A B */
    CHECK(acc(m, 0, D * stride, 0) == SERVED_LOCAL); /* evicts B: D E C A */
    CHECK(acc(m, 0, A * stride, 0) == hit);      /* A D E C */
    CHECK(acc(m, 0, B * stride, 0) == SERVED_LOCAL); /* evicts C: B A D E */
    CHECK(acc(m, 0, E * stride, 0) == hit);
    CHECK(acc(m, 0, 1 * 64, 0) == SERVED_LOCAL); /* another set is untouched by all this */
    model_free(m);
}

/* One level of `kb` KiB and `ways` ways: ways+1 lines of one set cycled miss every time (LRU thrash);
   `ways` lines miss once each, then hit. */
static void
test_assoc(const char *lvl, int kb, int ways, enum model_served hit)
{
    struct model_params p = params(1, 256);
    int sets = kb * 1024 / (64 * ways), misses = 0, hits = 0;
    char k[16];
    struct model *m;

    snprintf(k, sizeof k, "%s_kb", lvl);
    setp(&p, k, kb);
    snprintf(k, sizeof k, "%s_ways", lvl);
    setp(&p, k, ways);
    if (!(m = mk(&p)))
        return;
    for (int round = 0; round < 10; round++)
        for (int i = 0; i <= ways; i++)
            misses += acc(m, 0, (uint64_t)(i * sets + 5) * 64, round & 1) == SERVED_LOCAL;
    CHECK(misses == 10 * (ways + 1));
    model_free(m);
    if (!(m = mk(&p)))
        return;
    for (int round = 0; round < 10; round++)
        for (int i = 0; i < ways; i++)
            hits += acc(m, 0, (uint64_t)(i * sets + 5) * 64, round & 1) == hit;
    CHECK(hits == 9 * ways);
    model_free(m);
}

/* A flag written by hart 0 and read by hart 1 (each of nodes 1/2, with and without an LLC): the reader
   misses once per write (coherence), then hits; the writer hits. Then both write in turn: every store
   after the first (which hits: both held the line) is a coherence miss. */
static void
test_pingpong(int nodes, int llc_kb)
{
    struct model_params p = params(2, 64);
    struct model *m;
    int coh = 0, l1 = 0, wcoh = 0, whit = 0;
    const uint64_t flag = 4096 + 64;

    setp(&p, "l1_kb", 1);
    setp(&p, "l1_ways", 2);
    setp(&p, "l2_kb", 4);
    setp(&p, "l2_ways", 4);
    setp(&p, "llc_kb", llc_kb);
    setp(&p, "llc_ways", 4);
    setp(&p, "nodes", nodes);
    if (!(m = mk(&p)))
        return;
    acc(m, 1, flag, 0);
    acc(m, 0, flag, 1);
    for (int i = 0; i < 100; i++) {
        if (i > 0)
            whit += acc(m, 0, flag, 1) == SERVED_L1;
        for (int j = 0; j < 3; j++) {
            enum model_served s = acc(m, 1, flag + 8 * j, 0);

            coh += s == SERVED_COH;
            l1 += s == SERVED_L1;
        }
    }
    CHECK(coh == 100 && l1 == 200 && whit == 99);
    CHECK(acc(m, 0, flag, 1) == SERVED_L1);
    for (int i = 1; i < 100; i++)
        wcoh += acc(m, i & 1, flag, 1) == SERVED_COH;
    CHECK(wcoh == 99);
    model_free(m);
}

/* The LLC across nodes: hart 1 has a line in its node's LLC only (evicted from its 1-way L1), then hart 0
   stores to it. Same node: the LLC serves hart 1 (it is coherent within the node); other node: a
   coherence miss. And a process "migrating" from hart 0 to 1 finds its data in a shared LLC, not in L1. */
static void
test_llc_nodes(void)
{
    for (int nodes = 1; nodes <= 2; nodes++) {
        struct model_params p = params(2, 64);
        struct model *m;
        const uint64_t x = 8192, y = x + 1024; /* same L1 set (16 sets), other LLC sets (64) */

        setp(&p, "l1_kb", 1);
        setp(&p, "l1_ways", 1);
        setp(&p, "llc_kb", 16);
        setp(&p, "llc_ways", 4);
        setp(&p, "nodes", nodes);
        if (!(m = mk(&p)))
            return;
        CHECK(acc(m, 1, x, 0) == (nodes == 1 ? SERVED_LOCAL : SERVED_REMOTE));
        CHECK(acc(m, 1, y, 0) != SERVED_L1);
        CHECK(acc(m, 1, x, 0) == SERVED_LLC); /* out of L1, still in the LLC */
        CHECK(acc(m, 1, y, 0) == SERVED_LLC);
        acc(m, 0, x, 1);
        CHECK(acc(m, 1, x, 0) == (nodes == 1 ? SERVED_LLC : SERVED_COH));
        CHECK(acc(m, 1, x, 0) == SERVED_L1);
        for (int i = 0; i < 8; i++) /* a working set of hart 0 ... */
            acc(m, 0, 16384 + 64 * (uint64_t)i, 1);
        for (int i = 0; i < 8; i++) /* ... left behind when its process moves to hart 1 */
            CHECK(acc(m, 1, 16384 + 64 * (uint64_t)i, 0) == (nodes == 1 ? SERVED_LLC : SERVED_REMOTE));
        model_free(m);
    }
}

/* Remote vs local by node (no caches: every access served by memory), the node maps, RAM's edges. */
static void
test_numa(void)
{
    struct model_params p = params(3, 256);
    struct model *m;
    uint32_t cyc = 7;

    setp(&p, "nodes", 2);
    if (!(m = mk(&p)))
        return;
    CHECK(model_node_of_hart(m, 0) == 0 && model_node_of_hart(m, 1) == 0 && model_node_of_hart(m, 2) == 1);
    CHECK(model_node_of_hart(m, 3) == -1 && model_node_of_hart(m, -1) == -1);
    CHECK(model_node_of_addr(m, RAM_BASE) == 0 && model_node_of_addr(m, RAM_BASE + 128 * 1024 - 1) == 0);
    CHECK(model_node_of_addr(m, RAM_BASE + 128 * 1024) == 1 && model_node_of_addr(m, RAM_BASE + 256 * 1024 - 1) == 1);
    CHECK(model_node_of_addr(m, RAM_BASE + 256 * 1024) == -1 && model_node_of_addr(m, RAM_BASE - 1) == -1);
    for (int i = 0; i < 4; i++) { /* no caches: the same answer every time */
        CHECK(acc(m, 0, 0, i & 1) == SERVED_LOCAL && acc(m, 1, 128 * 1024 - 8, 0) == SERVED_LOCAL);
        CHECK(acc(m, 0, 128 * 1024, 0) == SERVED_REMOTE && acc(m, 2, 0, 1) == SERVED_REMOTE);
        CHECK(acc(m, 2, 200 * 1024, 0) == SERVED_LOCAL);
    }
    CHECK(model_access(m, 0, RAM_BASE + 256 * 1024, 1, &cyc) == SERVED_L1 && cyc == 0);
    cyc = 7;
    CHECK(model_access(m, 0, RAM_BASE - 64, 0, &cyc) == SERVED_L1 && cyc == 0);
    cyc = 7;
    CHECK(model_access(m, 3, RAM_BASE, 0, &cyc) == SERVED_L1 && cyc == 0);
    cyc = 7;
    CHECK(model_access(m, -1, RAM_BASE, 0, &cyc) == SERVED_L1 && cyc == 0);
    CHECK(model_access(m, 0, 0, 0, &cyc) == SERVED_L1 && model_access(m, 0, ~0ull, 1, &cyc) == SERVED_L1);
    model_free(m);
    /* with caches, the first touch says where the memory was */
    p = params(2, 256);
    setp(&p, "nodes", 2);
    setp(&p, "l1_kb", 4);
    setp(&p, "l1_ways", 4);
    if (!(m = mk(&p)))
        return;
    CHECK(acc(m, 1, 0, 0) == SERVED_REMOTE && acc(m, 1, 0, 0) == SERVED_L1);
    CHECK(acc(m, 1, 200 * 1024, 1) == SERVED_LOCAL && acc(m, 1, 200 * 1024, 0) == SERVED_L1);
    CHECK(acc(m, 0, 200 * 1024, 0) == SERVED_REMOTE);
    model_free(m);
}

/* ---- parameters ---- */

static int
rejects(struct model_params *p, const char *key, const char *value, const char *needle)
{
    char err[256] = "";
    struct model_params before = *p;
    int r = model_param_set(p, key, value, err, sizeof err);

    if (r == 0 || !strstr(err, needle) || memcmp(&before, p, sizeof before) != 0) {
        fprintf(stderr, "param %s=%s: r=%d err='%s'\n", key, value, r, err);
        return 0;
    }
    return 1;
}

static int
new_rejects(const struct model_params *p, const char *needle)
{
    char err[256] = "";
    struct model *m = model_new(p, err, sizeof err);

    model_free(m);
    if (m || !strstr(err, needle))
        fprintf(stderr, "model_new: %p err='%s' (want '%s')\n", (void *)m, err, needle);
    return !m && strstr(err, needle);
}

static void
test_params(void)
{
    static const char *const want[] = { "line_b",     "l1_kb",      "l1_ways",    "l2_kb",      "l2_ways",
                                        "llc_kb",     "llc_ways",   "l2_cycles",  "llc_cycles", "coh_cycles",
                                        "mem_cycles", "remote_cycles", "nodes" };
    struct model_params p = params(4, 256), q;
    char err[256];
    int n = 0;

    for (; model_param_keys[n]; n++)
        CHECK(n < 13 && strcmp(model_param_keys[n], want[n]) == 0);
    CHECK(n == 13);
    for (int i = 0; i < n; i++) { /* each key lands in its own field */
        q = p;
        CHECK(model_param_set(&q, model_param_keys[i], "32", err, sizeof err) == 0);
        CHECK(memcmp(&q, &p, sizeof p) != 0);
    }
    CHECK(model_param_set(&p, "l2_kb", "512", err, sizeof err) == 0 && p.l2_kb == 512);
    CHECK(rejects(&p, "l2_kbytes", "512", "unknown key 'l2_kbytes'"));
    CHECK(rejects(&p, "harts", "2", "unknown key 'harts'"));
    CHECK(rejects(&p, "", "2", "unknown key"));
    CHECK(rejects(&p, "l1_kb", "abc", "l1_kb=abc"));
    CHECK(rejects(&p, "l1_kb", "-1", "l1_kb=-1"));
    CHECK(rejects(&p, "l1_kb", "4k", "l1_kb=4k"));
    CHECK(rejects(&p, "l1_kb", " 4", "l1_kb"));
    CHECK(rejects(&p, "mem_cycles", "", "mem_cycles has no value"));
    CHECK(model_param_set(&p, "mem_cycles", NULL, err, sizeof err) < 0 && strstr(err, "mem_cycles"));
    CHECK(rejects(&p, "mem_cycles", "99999999999999999999999", "mem_cycles="));
    CHECK(rejects(&p, "remote_cycles", "1000001", "remote_cycles=1000001 out of range"));
    CHECK(rejects(&p, "line_b", "48", "line_b=48 is not a power of two"));
    CHECK(rejects(&p, "line_b", "8", "line_b=8 out of range"));
    CHECK(rejects(&p, "line_b", "2048", "line_b=2048"));
    CHECK(rejects(&p, "nodes", "0", "nodes=0"));
    CHECK(rejects(&p, "nodes", "65", "nodes=65"));
    CHECK(rejects(&p, "llc_ways", "257", "llc_ways=257"));

    /* what only the whole set of keys can say */
    p = params(2, 256);
    q = p, q.l1_kb = 1, q.l1_ways = 3;
    CHECK(new_rejects(&q, "l1_kb=1 is not a whole number of sets of l1_ways=3"));
    q = p, q.l2_kb = 4, q.l2_ways = 0;
    CHECK(new_rejects(&q, "l2_ways"));
    q = p, q.llc_kb = 8, q.llc_ways = 4, q.line_b = 128, q.llc_ways = 5;
    CHECK(new_rejects(&q, "llc_kb=8"));
    q = p, q.harts = 0;
    CHECK(new_rejects(&q, "harts=0"));
    q = p, q.harts = 65;
    CHECK(new_rejects(&q, "harts=65"));
    q = p, q.nodes = 3;
    CHECK(new_rejects(&q, "nodes=3 is more than harts=2"));
    q = p, q.line_b = 96;
    CHECK(new_rejects(&q, "line_b=96"));
    q = p, q.ram_bytes = 1000;
    CHECK(new_rejects(&q, "RAM"));
    q = p, q.ram_bytes = 0;
    CHECK(new_rejects(&q, "RAM"));
    q = p, q.mem_cycles = -1;
    CHECK(new_rejects(&q, "mem_cycles=-1"));
    q = p, q.l1_kb = 3, q.l1_ways = 2; /* 24 sets: any whole count is fine */
    model_free(mk(&q));
    CHECK(strcmp(model_served_name(SERVED_REMOTE), "remote") == 0 && strcmp(model_served_name(99), "?") == 0);
}

/* ---- threads: one per hart, as the plugin calls it ---- */

#ifdef __SANITIZE_THREAD__
#define HAMMER 40000
#else
#define HAMMER 200000
#endif
#define NH 4

static struct model *shared_m;
static int hammer_bad;

static void *
hammer(void *arg)
{
    int h = (int)(intptr_t)arg, bad = 0;
    uint64_t x = 0x2545f4914f6cdd1dull * (uint64_t)(h + 1);

    for (int i = 0; i < HAMMER; i++) {
        uint32_t cyc = 99;
        uint64_t off;
        enum model_served s;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        off = (x & 1) ? (x >> 8) % (8 * 1024) : (uint64_t)h * 16384 + (x >> 8) % 16384; /* shared, own */
        s = model_access(shared_m, h, RAM_BASE + off, (x >> 4 & 3) == 0, &cyc);
        bad += (unsigned)s >= MODEL_NSERVED || cyc != cost[s];
    }
    __atomic_fetch_add(&hammer_bad, bad, __ATOMIC_RELAXED);
    return NULL;
}

static void
test_threads(void)
{
    struct model_params p = params(NH, 128);
    pthread_t t[NH];

    setp(&p, "l1_kb", 1);
    setp(&p, "l1_ways", 2);
    setp(&p, "l2_kb", 4);
    setp(&p, "l2_ways", 4);
    setp(&p, "llc_kb", 16);
    setp(&p, "llc_ways", 4);
    setp(&p, "nodes", 2);
    if (!(shared_m = mk(&p)))
        return;
    for (int h = 0; h < NH; h++)
        pthread_create(&t[h], NULL, hammer, (void *)(intptr_t)h);
    for (int h = 0; h < NH; h++)
        pthread_join(t[h], NULL);
    CHECK(hammer_bad == 0);
    for (int h = 0; h < NH; h++) { /* serialized again: exact */
        uint64_t mine = 64 * 1024 + (uint64_t)h * 4096;

        CHECK(acc(shared_m, h, mine, 1) == (model_node_of_hart(shared_m, h) == 1 ? SERVED_LOCAL : SERVED_REMOTE));
        CHECK(acc(shared_m, h, mine, 0) == SERVED_L1);
    }
    model_free(shared_m);
}

int
main(void)
{
    test_random_traces();
    test_lru_order("l1", SERVED_L1);
    test_lru_order("l2", SERVED_L2);
    test_lru_order("llc", SERVED_LLC);
    test_assoc("l1", 1, 2, SERVED_L1);
    test_assoc("l1", 3, 2, SERVED_L1); /* 24 sets */
    test_assoc("l2", 6, 3, SERVED_L2); /* 32 sets */
    test_assoc("llc", 12, 4, SERVED_LLC); /* 48 sets */
    test_assoc("l1", 4, 1, SERVED_L1); /* direct mapped */
    for (int nodes = 1; nodes <= 2; nodes++) {
        test_pingpong(nodes, 0);
        test_pingpong(nodes, 16);
    }
    test_llc_nodes();
    test_numa();
    test_params();
    test_threads();
    return check_done("test_cache_model");
}
