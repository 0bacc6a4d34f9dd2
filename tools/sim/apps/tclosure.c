/*
 * apps/tclosure.c - transitive closure's model (apps/tclosure.c), Markatos chapter 5's loop app whose
 * iterations cost what their input says (5.4.2): a loop program (sim_program.c), its chunks from the
 * library's loop schedulers (sim_loops.c), one grab at a time.
 *
 * Warshall: n steps K, each a loop over the rows J = 0..n-1 and a barrier. Iteration J of step K tests
 * A(J,K) and, when it is TRUE (J != K), ORs row K into row J: n inner steps, a store for each TRUE word of
 * row K. Which iterations do their row is the closure's progress, so the host computes the closure itself
 * at set-up, on a bit matrix, from the app's own input (graph=skewed: the first clique% of the nodes a
 * clique; graph=random: row j's stream j of the job's seed, drawn as gen_graph draws it) and keeps for each
 * step the rows that do their work and row K as it is then. These do not depend on the schedule: row K is
 * not written during step K (iteration K leaves it), and iteration J writes only row J, so A(J,K) and row K
 * during step K are fixed before the step starts, in any order of its iterations. RESULT's edges= and
 * closure= are the host's counts of the input's and the closure's TRUE cells; bad=0 (the closure is what
 * the app's breadth-first check finds).
 *
 * Costs: instructions, counted by deterministic QEMU boots at procs=1 (clock=virtual, 1 ns an instruction),
 * times the app's unit over its instructions: tclosure_step_ns / TC_STEP (the unit is fitted by
 * `schedlab validate --model`; without it, gauss's row op times the instruction ratio, 7.53 a row op).
 * n=256, clique=0/40/100 (par_us 739, 18748, 135007 us): an inner step 6.04 instructions (TC_STEP), a store
 * 2.0 more (TC_STORE), a test of A(J,K) with the iteration's loop 10.5 (TC_TEST); set-up and check together
 * 31.5 a cell (elapsed less par_us, n=128 against 256), put 3/5 before and 2/5 after the loop as the passes
 * over the matrix go (gen_graph and keep_edges' two; the check's memset and compare), random's draws 11.0
 * more a cell (density=0 against skewed clique=0), and the check's breadth-first search 10.3 a visited edge
 * (clique=40 and 100). Checked on inputs not fitted: graph=random at density=8 and 2 (n=256, procs=1) take
 * 6.50 and 4.56 times the skewed graph's par_us in the simulator, 6.51 and 4.56 on QEMU.
 *
 * Memory (--model): 4-byte words in whole pages from its big sl_malloc (the payload 64 bytes in: alloc.c's
 * BIG_HDR), in the app's order, allocated by process 0 on its hart's node and zeroed there by the kernel:
 * the matrix, then the input's adjacency lists. Iteration J of step K reads A(J,K); if it does its row, it
 * reads row K and writes row J where row K is TRUE, reloading t->n from process 0's frame after each store
 * (tc_touch). Set-up: the matrix written (gen_graph, which reloads t->clique, or its stream's state, from
 * the frame for each cell), read twice (keep_edges), the lists written; check: the breadth-first search's
 * words as compiled (tc_check_touch). The app's other blocks go where the allocator places them
 * (sim_alloc.c: its list heads, weights, the search's marks and queue): at n=256 its 1 KB and 2 KB blocks
 * carve two 64 KB chunks, some 8 thousand of QEMU's iris misses at one hart. With them, at one hart the
 * misses are QEMU's less its start-up (a job at n=2) within 1 % (n=256, clique=0 and 40).
 *
 * The library's heap at start-up (sim_start.c): the arrays and the allocator's chunks for them are this
 * file's, so its footprint is what is left, taken from the misses instead: QEMU's less the simulator's
 * without it at one process (`validate --model P --cpus 1 --deterministic --seeds 1`), in KiB of lines:
 * 231 / 243 / 219 under modern / iris / ksr1 - the same at every scheduler and at n=192 and 256, so a
 * start-up, not the loop: 215 + 16 P.
 */
#include <stdlib.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "loops/loopsched.h"

#define TC_STEP 6.04
#define TC_STORE 2.0
#define TC_TEST 10.5
#define TC_CELL 31.5
#define TC_DRAW 11.0
#define TC_VISIT 10.3

struct keys {
    int64_t n, clique, density;
};

static const struct sim_key keys[] = { SIM_KEY(struct keys, n), SIM_KEY(struct keys, clique),
                                       SIM_KEY(struct keys, density), { 0 } };

static struct tc {
    int random;
    int64_t n;          /* nodes */
    int64_t w;          /* 64-bit words a row of the bit matrices */
    uint64_t *act;      /* n x w: bit J of row K: iteration J of step K does its row */
    uint64_t *rowk;     /* n x w: row K as step K reads it */
    uint64_t *reach;    /* n x w: the closure */
    uint64_t *in;       /* n x w: the input (the check's adjacency lists, as bits) */
    uint32_t *ntrue;    /* TRUE words of rowk[K] */
    uint32_t *deg, *off; /* the input's out-degrees, and where each node's list starts */
    uint64_t edges, closure, visits;
    uint64_t base;      /* under a model: the arrays' pages (0 until process 0's set-up) */
    uint64_t first;     /* the lists' heads (adj_first), a block of its own (0: not modelled) */
    struct sim_heap heap; /* the allocator's other blocks */
    double unit;        /* ns an inner step */
} tcs[NJOB];

static int bit(const uint64_t *row, int64_t i) { return row[i / 64] >> (i % 64) & 1; }
static void set(uint64_t *row, int64_t i) { row[i / 64] |= 1ULL << (i % 64); }

static uint64_t *bits(int64_t n, int64_t w)
{
    uint64_t *b = calloc((size_t)(n * w), sizeof *b);
    if (!b)
        panic("sim: out of memory for tclosure's bit matrices");
    return b;
}

static uint64_t popcount(const uint64_t *row, int64_t w)
{
    uint64_t c = 0;
    for (int64_t i = 0; i < w; i++)
        c += (uint64_t)__builtin_popcountll(row[i]);
    return c;
}

/* The app's input (gen_graph), then Warshall's steps on the host: each step's doers and row K. */
static void tc_closure(struct tc *a, uint64_t seed, int64_t clique, uint64_t density)
{
    int64_t n = a->n, w = a->w;
    a->act = bits(n, w), a->rowk = bits(n, w), a->reach = bits(n, w), a->in = bits(n, w);
    a->ntrue = calloc((size_t)n, sizeof *a->ntrue);
    a->deg = calloc((size_t)n + 1, sizeof *a->deg);
    a->off = calloc((size_t)n + 1, sizeof *a->off);
    if (!a->ntrue || !a->deg || !a->off)
        panic("sim: out of memory for tclosure's input");
    for (int64_t j = 0; j < n; j++) {
        struct sl_rng r;
        uint64_t *row = a->reach + j * w;
        sl_rng_seed(&r, seed, (uint64_t)j); /* the app's sl_rng_init(&r, j) */
        for (int64_t i = 0; i < n; i++)
            if (i != j && (a->random ? sl_rng_below(&r, 100) < density : j < clique && i < clique))
                set(row, i);
        a->deg[j] = (uint32_t)popcount(row, w);
        a->off[j + 1] = a->off[j] + a->deg[j];
        a->edges += a->deg[j];
    }
    memcpy(a->in, a->reach, (size_t)(n * w) * sizeof *a->in);
    for (int64_t k = 0; k < n; k++) {
        const uint64_t *rk = a->reach + k * w;
        memcpy(a->rowk + k * w, rk, (size_t)w * sizeof *rk);
        a->ntrue[k] = (uint32_t)popcount(rk, w);
        for (int64_t j = 0; j < n; j++)
            if (j != k && bit(a->reach + j * w, k)) {
                set(a->act + k * w, j);
                for (int64_t i = 0; i < w; i++)
                    a->reach[j * w + i] |= rk[i];
            }
    }
    for (int64_t s = 0; s < n; s++) {
        a->closure += popcount(a->reach + s * w, w);
        for (int64_t u = 0; u < n; u++)
            if (bit(a->reach + s * w, u))
                a->visits += a->deg[u];
    }
}

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    const struct keys *k = SIM_STATE(w, struct keys);
    struct tc *a = &tcs[j->id - 1];
    char v[32];
    if (loops_program(j, w, err, errlen) < 0)
        return -1;
    memset(a, 0, sizeof *a);
    a->unit = calib_get("tclosure_step_ns", calib.gauss_rowop * (TC_STEP / 7.53)); /* else by the instructions */
    a->n = k->n;
    if (a->n < 1)
        return snprintf(err, errlen, "job=tclosure: n=%ld is not modelled in the simulator (1 or more)",
                        (long)a->n),
               -1;
    uint64_t seed = sim_seed ^ ((uint64_t)j->id * 0x9e3779b97f4a7c15UL); /* kernel/info.c's job seed */
    int64_t n = a->n, clique = n * k->clique / 100;
    uint64_t *wt = malloc((size_t)n * sizeof *wt);
    if (!wt)
        panic("sim: out of memory for a loop's weights");
    a->random = scenario_arg(j->scen->args, "graph", v, sizeof v) == 0 && !strcmp(v, "random");
    a->w = (n + 63) / 64;
    tc_closure(a, seed, clique, (uint64_t)k->density);
    for (int64_t r = 0; r < n; r++) /* the app's best-static weights (loops_init) */
        wt[r] = (uint64_t)n * (1 + (!a->random && r < clique ? (uint64_t)(clique - 1) : 0));
    loops_split(j, wt, n);
    free(wt);
    return bprog_setup(j, w, err, errlen);
}

/* The arrays' pages: allocated at first use, on hart h's node, and zeroed there (*zero: the stall). */
static uint64_t region(struct job *j, int h, uint64_t *zero)
{
    struct tc *a = &tcs[j->id - 1];
    uint64_t bytes = alloc_pages((uint64_t)(a->n * a->n) * 4) + alloc_pages((a->edges ? a->edges : 1) * 4);
    return touch_region(j, h, bytes, &a->base, zero);
}

/* The matrix and the lists. */
static uint64_t tc_matrix(const struct tc *a) { return a->base + 64; }
static uint64_t tc_lists(const struct tc *a) { return a->base + alloc_pages((uint64_t)(a->n * a->n) * 4) + 64; }

/* Iteration J of step K under a model: stall ns. As compiled (riscv64 objdump of build/apps/tclosure.elf,
   close_row inlined in worker): a load of A(J,K); a doer's loop loads each word of row K, and for each TRUE
   one stores row J's word and reloads t->n from process 0's frame (the store could alias it): n + 2 x the
   TRUE words, not n + the TRUE words. */
static uint64_t tc_touch(struct tc *a, struct job *j_, int h, int64_t k, int64_t j, int doer)
{
    int id = j_->id;
    uint64_t rowb = (uint64_t)a->n * 4, mat = tc_matrix(a);
    uint64_t ns = mem_touch(id, h, mat + (uint64_t)j * rowb + (uint64_t)k * 4, 4, 4, 0);
    if (!doer)
        return ns;
    const uint64_t *rk = a->rowk + k * a->w;
    ns += mem_touch(id, h, mat + (uint64_t)k * rowb, rowb, 4, 0);
    for (int64_t i = 0; i < a->n;) { /* the stores: row J where row K is TRUE, run by run */
        if (!bit(rk, i)) {
            i++;
            continue;
        }
        int64_t e = i;
        while (e < a->n && bit(rk, e))
            e++;
        ns += mem_touch(id, h, mat + (uint64_t)j * rowb + (uint64_t)i * 4, (uint64_t)(e - i) * 4, 4, 1);
        i = e;
    }
    return ns + mem_touch_every(id, h, touch_frame(j_), a->ntrue[k], 0, 0);
}

static int chunk(struct sproc *sp, uint64_t *ns)
{
    struct job *j = sp->p.job;
    struct tc *a = &tcs[j->id - 1];
    struct sl_chunk c;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu;
    uint64_t stall = 0, zero;
    double insns = 0;
    if (!loops_grab(sp, 0, a->n, &c, ns))
        return 0;
    if (model) /* a chunk that has rows reloads t->a and t->n from the frame */
        region(j, h, &zero), stall += zero + (c.len ? mem_touch_every(j->id, h, touch_frame(j), 2, 0, 0) : 0);
    for (int64_t t = c.start; t < c.start + c.len; t++) {
        int64_t k = (int64_t)sp->iter;
        int doer = bit(a->act + k * a->w, t);
        insns += TC_TEST + (doer ? (double)a->n * TC_STEP + a->ntrue[k] * TC_STORE : 0);
        stall += model ? tc_touch(a, j, h, k, t, doer) : 0;
    }
    *ns += stall + (uint64_t)(insns * (a->unit / TC_STEP));
    return 1;
}

static int last(const struct sjob *w, uint64_t i) { return i + 1 >= (uint64_t)SIM_STATE(w, struct keys)->n; }

/* Process 0's set-up (compute ns from the instructions of the header, and under a model its stalls). */
static uint64_t setup_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct tc *a = &tcs[j->id - 1];
    if (sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), id = j->id;
    uint64_t zero, cells = (uint64_t)(a->n * a->n), mat;
    uint64_t ns =
        (uint64_t)((double)cells * (TC_CELL * 3 / 5 + (a->random ? TC_DRAW : 0)) * a->unit / TC_STEP);
    if (!mem_on() || !sp->p.on_cpu)
        return ns;
    uint64_t w, off = cells - (uint64_t)a->n; /* the cells off the diagonal */
    region(j, h, &zero);
    mat = tc_matrix(a);
    /* gen_graph: each cell off the diagonal reloads t->clique from the frame (skewed), or loads and stores
       its stream's state there (random) */
    ns += zero + mem_touch(id, h, mat, cells * 4, 4, 1) +
          mem_touch_every(id, h, touch_frame(j), off, 0, 0) +
          (a->random ? mem_touch_every(id, h, touch_frame(j), off, 0, 1) : 0) +
          mem_touch(id, h, mat, cells * 4, 4, 0) +
          alloc_use(&a->heap, id, h, (uint64_t)(a->n + 1) * 4, 4, 0, &a->first) +
          mem_touch(id, h, mat, cells * 4, 4, 0) +
          mem_touch(id, h, tc_lists(a), a->edges * 4, 4, 1) + alloc_use(&a->heap, id, h, (uint64_t)a->n * 8, 8, 1, &w);
    alloc_unblock(&a->heap, w, (uint64_t)a->n * 8); /* loops_init's weights, freed */
    return ns;
}

/* Reads (store 0) or writes of arr[i], 4-byte words, for each i set in bit row r of n: one lookup a line. */
static uint64_t gather(int id, int h, uint64_t arr, const uint64_t *r, int64_t n, int store)
{
    uint64_t ns = 0, per = (uint64_t)mem_line_b() / 4, line = UINT64_MAX, words = 0;
    for (int64_t x = 0; x < (n + 63) / 64; x++)
        for (uint64_t b = r[x]; b; b &= b - 1) {
            uint64_t i = (uint64_t)x * 64 + (uint64_t)__builtin_ctzll(b);
            if (i / per != line && words)
                ns += mem_touch_every(id, h, arr + line * per * 4, words, 0, store), words = 0;
            line = i / per, words++;
        }
    return ns + (words ? mem_touch_every(id, h, arr + line * per * 4, words, 0, store) : 0);
}

/* tclosure's check under a model, as compiled (main, riscv64 objdump): for each node s, memset of seen (8-byte
   stores) and t->a, the heads and the lists reloaded from the frame; then s and each node u the search takes
   from the queue (a load of queue[head], but not for s) loads adj_first[u] and adj_first[u + 1], and per
   edge adj[e] and seen[v]; per v seen first it stores seen[v] and queue[tail] and reloads adj[e] and
   adj_first[u + 1] (the stores could alias them); last s's row and seen are compared, a load of each a
   node. The search runs here on the input's bits, in the app's order (the lists ascending: keep_edges).
   seen and queue are blocks of n words; not modelled (0) below the allocator's 1 KB class. */
static uint64_t tc_check_touch(struct tc *a, struct job *j, int h)
{
    int id = j->id;
    int64_t n = a->n, w = a->w;
    uint64_t ns = 0, lists = tc_lists(a), rowb = (uint64_t)n * 4, seen, queue, frame = touch_frame(j);
    uint64_t *sb = calloc((size_t)w, sizeof *sb), *nb = calloc((size_t)w, sizeof *nb);
    uint32_t *q = malloc((size_t)n * sizeof *q);
    if (!sb || !nb || !q)
        panic("sim: out of memory for tclosure's check");
    seen = alloc_block(&a->heap, id, h, rowb, &ns), queue = alloc_block(&a->heap, id, h, rowb, &ns);
    for (int64_t s = 0; s < n; s++) {
        int64_t head = -1, tail = 0; /* head -1: s itself, then q[0 .. tail) */
        memset(sb, 0, (size_t)w * sizeof *sb);
        ns += (seen ? mem_touch(id, h, seen, rowb, 8, 1) : 0) + mem_touch_every(id, h, frame, 3, 0, 0);
        for (; head < tail; head++) {
            uint32_t u = head < 0 ? (uint32_t)s : q[head];
            uint64_t adj = lists + (uint64_t)a->off[u] * 4, fresh = 0;
            if (head >= 0 && queue)
                ns += mem_touch(id, h, queue + (uint64_t)head * 4, 4, 4, 0);
            if (a->first)
                ns += mem_touch(id, h, a->first + (uint64_t)u * 4, 8, 4, 0);
            ns += mem_touch(id, h, adj, (uint64_t)a->deg[u] * 4, 4, 0);
            for (int64_t x = 0; x < w; x++) {
                nb[x] = a->in[u * w + x] & ~sb[x], sb[x] |= nb[x];
                fresh += (uint64_t)__builtin_popcountll(nb[x]);
                for (uint64_t b = nb[x]; b; b &= b - 1)
                    q[tail++] = (uint32_t)(x * 64 + __builtin_ctzll(b));
            }
            if (seen)
                ns += gather(id, h, seen, a->in + u * w, n, 0) + gather(id, h, seen, nb, n, 1);
            ns += mem_touch_every(id, h, adj, fresh, 0, 0) +
                  (queue ? mem_touch(id, h, queue + (uint64_t)(tail - (int64_t)fresh) * 4, fresh * 4, 4, 1) : 0) +
                  (a->first ? mem_touch_every(id, h, a->first + (uint64_t)(u + 1) * 4, fresh, 0, 0) : 0);
        }
        ns += mem_touch(id, h, tc_matrix(a) + (uint64_t)s * rowb, rowb, 4, 0) +
              (seen ? mem_touch(id, h, seen, rowb, 4, 0) : 0);
    }
    free(sb), free(nb), free(q);
    return ns;
}

/* Process 0's check after the last barrier: compute and stall ns. */
static uint64_t check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct tc *a = &tcs[j->id - 1];
    if (sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu && a->base;
    double insns = (double)(a->n * a->n) * TC_CELL * 2 / 5 + (double)a->visits * TC_VISIT;
    return (uint64_t)(insns * a->unit / TC_STEP) + (model ? tc_check_touch(a, j, h) : 0);
}

/* RESULT's keys, in the app's order (sleeps= left out, as for sor). */
static void report(struct job *j, struct sjob *w, char *buf, size_t len)
{
    struct tc *a = &tcs[j->id - 1];
    uint64_t us, grabs, remote;
    loops_counts(j, &grabs, &remote);
    if (!job_par_us(w, &us))
        buf[0] = 0;
    else
        snprintf(buf, len, "par_us=%lu loops=%ld grabs=%lu remote=%lu edges=%lu closure=%lu bad=0", us, (long)a->n,
                 grabs, remote, a->edges, a->closure);
}

static void free_job(struct job *j)
{
    struct tc *a = &tcs[j->id - 1];
    free(a->act), free(a->rowk), free(a->reach), free(a->in);
    free(a->ntrue), free(a->deg), free(a->off);
    memset(a, 0, sizeof *a);
    bprog_free(j);
}

static const struct sim_prog prog = {
    .setup_ns = setup_ns, .check_ns = check_ns, .report = report, .last = last, .chunk = chunk,
};

static const struct sim_app tclosure = {
    .name = "tclosure", .keys = keys, .heap_kb = 215, .workers = 1, .control = 1, .setup = setup,
    .start = bprog_start, .step = bprog_step, .spins = bprog_spins, .descheduled = barrier_descheduled,
    .free = free_job, .prog = &prog,
};
SIM_APP(tclosure);
