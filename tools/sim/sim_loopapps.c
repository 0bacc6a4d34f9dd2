/*
 * sim_loopapps.c - Markatos chapter 5's two loop apps whose iterations cost what their input says (5.4.2),
 * their chunks from the library's loop schedulers through sim_loops.c's loops_grab, one grab at a time:
 *
 *   tclosure (apps/tclosure.c) Warshall: n steps K, each a loop over the rows J = 0..n-1 and a barrier.
 *            Iteration J of step K tests A(J,K) and, when it is TRUE (J != K), ORs row K into row J: n
 *            inner steps, a store for each TRUE word of row K. Which iterations do their row is the
 *            closure's progress, so the host computes the closure itself at set-up, on a bit matrix, from
 *            the app's own input (graph=skewed: the first clique% of the nodes a clique; graph=random: row
 *            j's stream j of the job's seed, drawn as gen_graph draws it) and keeps for each step the rows
 *            that do their work and row K as it is then. These do not depend on the schedule: row K is not
 *            written during step K (iteration K leaves it), and iteration J writes only row J, so A(J,K)
 *            and row K during step K are fixed before the step starts, in any order of its iterations.
 *            RESULT's edges= and closure= are the host's counts of the input's and the closure's TRUE
 *            cells; bad=0 (the closure is what the app's breadth-first check finds).
 *   adjoint  (apps/adjoint.c) one loop over t = 0..M-1 (M = n*n), iteration t doing index i = t (M-1-t with
 *            order=reverse): M - i multiply-adds. sum= is the host's redo of the app's sums with the app's
 *            arithmetic (x b[k] rounded, then one fused multiply-add: the RISC-V build's fmul.d + fmadd.d)
 *            from its input (stream 0 of the job's seed), when that is at most ADJ_SUM_MAX multiply-adds;
 *            diff=0.
 *
 * Costs: instructions, counted by deterministic QEMU boots at procs=1 (clock=virtual, 1 ns an instruction),
 * times the app's unit over its instructions: calib.tclosure_step / TC_STEP, calib.adjoint_madd / ADJ_MADD
 * (the units are fitted by `schedlab validate --model`; without them, sim_calib.c takes gauss's row op
 * times the instruction ratio).
 *   tclosure  n=256, clique=0/40/100 (par_us 739, 18748, 135007 us): an inner step 6.04 instructions
 *             (TC_STEP), a store 2.0 more (TC_STORE), a test of A(J,K) with the iteration's loop 10.5
 *             (TC_TEST); set-up and check together 31.5 a cell (elapsed less par_us, n=128 against 256),
 *             put 3/5 before and 2/5 after the loop as the passes over the matrix go (gen_graph and
 *             keep_edges' two; the check's memset and compare), random's draws 11.0 more a cell (density=0
 *             against skewed clique=0), and the check's breadth-first search 10.3 a visited edge (clique=40
 *             and 100). Checked on inputs not fitted: graph=random at density=8 and 2 (n=256, procs=1) take
 *             6.50 and 4.56 times the skewed graph's par_us in the simulator, 6.51 and 4.56 on QEMU.
 *   adjoint   n=30 and 50 (par_us 2863, 21986 us): a multiply-add 7.016 (ADJ_MADD), an iteration 20.2 more
 *             (ADJ_ITER); set-up and check 146 an element beyond the check's multiply-adds (elapsed less
 *             par_us), the check's share its iterations' overhead and the compare (ADJ_ITER + 15).
 *
 * Memory (--model): each array in whole pages from its big sl_malloc (the payload 64 bytes in: alloc.c's
 * BIG_HDR), in the app's order, allocated by process 0 on its hart's node and zeroed there by the kernel.
 *   tclosure  4-byte words: the matrix, then the input's adjacency lists. Iteration J of step K reads A(J,K);
 *             if it does its row, it reads row K and writes row J where row K is TRUE, reloading t->n from
 *             process 0's frame after each store (tc_touch). Set-up: the matrix written (gen_graph, which
 *             reloads t->clique, or its stream's state, from the frame for each cell), read twice
 *             (keep_edges), the lists written; check: the breadth-first search's words as compiled
 *             (tc_check_touch).
 *   adjoint   doubles a, b, c, ref. Iteration i reads a[i], b[i..M-1], c[0..M-1-i] and writes a[i]. Set-up:
 *             a, b, c written, a copied to ref; check: every index redone on ref (the same touches), then
 *             a and ref compared.
 * and the apps' other blocks where the allocator places them (block(): tclosure's list heads, weights, the
 * search's marks and queue; adjoint's weights): at n=256 tclosure's 1 KB and 2 KB blocks carve two 64 KB
 * chunks, some 8 thousand of QEMU's iris misses at one hart. With them, at one hart the misses are QEMU's
 * less its start-up (a job at n=2) within 1 % (tclosure n=256, clique=0 and 40) and 3 % (adjoint n=50).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"
#include "loops/loopsched.h"

#define TC_STEP 6.04
#define TC_STORE 2.0
#define TC_TEST 10.5
#define TC_CELL 31.5
#define TC_DRAW 11.0
#define TC_VISIT 10.3
#define ADJ_MADD 7.016
#define ADJ_ITER 20.2
#define ADJ_ELEM 146.0
#define ADJ_CHECK (ADJ_ITER + 15.0)
#define ADJ_SUM_MAX 200000000.0

enum { LA_NONE, LA_TCLOSURE, LA_ADJOINT };

static struct lapp {
    int kind, random, reverse;
    int64_t n, m;       /* tclosure: n nodes; adjoint: n, M = n*n iterations */
    int64_t w;          /* tclosure: 64-bit words a row of the bit matrices */
    uint64_t *act;      /* n x w: bit J of row K: iteration J of step K does its row */
    uint64_t *rowk;     /* n x w: row K as step K reads it */
    uint64_t *reach;    /* n x w: the closure */
    uint64_t *in;       /* n x w: the input (the check's adjacency lists, as bits) */
    uint32_t *ntrue;    /* TRUE words of rowk[K] */
    uint32_t *deg, *off; /* the input's out-degrees, and where each node's list starts */
    uint64_t edges, closure, visits;
    double sum;
    int have_sum;
    uint64_t base;      /* under a model: the arrays' pages (0 until process 0's set-up) */
    uint64_t first;     /* tclosure: the lists' heads (adj_first), a block of its own (0: not modelled) */
    uint64_t chunk[8], freed[8], big_freed, big_freed_b; /* the allocator's small classes, freed blocks */
    uint32_t left[8];
} la[NJOB];

static int bit(const uint64_t *row, int64_t i) { return row[i / 64] >> (i % 64) & 1; }
static void set(uint64_t *row, int64_t i) { row[i / 64] |= 1ULL << (i % 64); }
static uint64_t pages(uint64_t bytes) { return (bytes + 64 + 4095) & ~4095UL; } /* a big block, header in */

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
static void tc_closure(struct lapp *a, uint64_t seed, int64_t clique, uint64_t density)
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

/* The app's input (stream 0: a, b, c in turn) and its sums, as its check's sequential pass adds them. */
static void adj_sum(struct lapp *a, uint64_t seed)
{
    int64_t m = a->m;
    if ((double)m * (double)(m + 1) / 2 > ADJ_SUM_MAX)
        return;
    double *v = malloc((size_t)(3 * m) * sizeof *v), *b = v + m, *c = v + 2 * m;
    if (!v)
        panic("sim: out of memory for adjoint's sums");
    struct sl_rng r;
    sl_rng_seed(&r, seed, 0);
    for (int64_t i = 0; i < m; i++) {
        v[i] = 2 * sl_rng_double(&r) - 1;
        b[i] = 2 * sl_rng_double(&r) - 1;
        c[i] = 2 * sl_rng_double(&r) - 1;
    }
    a->sum = 0;
    for (int64_t i = 0; i < m; i++) {
        double s = v[i];
        for (int64_t k = i; k < m; k++)
            s = fma(0.5 * b[k], c[k - i], s);
        a->sum += s;
    }
    a->have_sum = 1;
    free(v);
}

static int64_t arg(struct job *j, const char *k)
{
    char v[32];
    return scenario_arg(j->scen->args, k, v, sizeof v) == 0 ? strtoll(v, 0, 10) : -1;
}

static int arg_is(struct job *j, const char *k, const char *want)
{
    char v[32];
    return scenario_arg(j->scen->args, k, v, sizeof v) == 0 && !strcmp(v, want);
}

int lapps_setup(struct job *j, char *err, size_t errlen)
{
    struct lapp *a = &la[j->id - 1];
    memset(a, 0, sizeof *a);
    a->kind = !strcmp(j->scen->app, "tclosure") ? LA_TCLOSURE : !strcmp(j->scen->app, "adjoint") ? LA_ADJOINT : 0;
    a->n = arg(j, "n");
    if (!a->kind || a->n < 1)
        return snprintf(err, errlen, "job=%s: no n= (sim_loopapps.c)", j->scen->app), -1;
    uint64_t seed = sim_seed ^ ((uint64_t)j->id * 0x9e3779b97f4a7c15UL); /* kernel/info.c's job seed */
    int64_t n = a->n, len = a->kind == LA_TCLOSURE ? n : n * n;
    uint64_t *w = malloc((size_t)len * sizeof *w);
    if (!w)
        panic("sim: out of memory for a loop's weights");
    if (a->kind == LA_TCLOSURE) {
        int64_t clique = n * arg(j, "clique") / 100;
        a->random = arg_is(j, "graph", "random");
        a->w = (n + 63) / 64;
        tc_closure(a, seed, clique, (uint64_t)arg(j, "density"));
        for (int64_t r = 0; r < n; r++) /* the app's best-static weights (loops_init) */
            w[r] = (uint64_t)n * (1 + (!a->random && r < clique ? (uint64_t)(clique - 1) : 0));
    } else {
        a->m = n * n;
        a->reverse = arg_is(j, "order", "reverse");
        for (int64_t t = 0; t < a->m; t++)
            w[t] = (uint64_t)(a->m - (a->reverse ? a->m - 1 - t : t));
        adj_sum(a, seed);
    }
    loops_split(j, w, len);
    free(w);
    return 0;
}

static int hart_of(const struct sproc *sp) { return sp->p.on_cpu ? sp->p.on_cpu->id : 0; }

/* The arrays' pages: allocated at first use, on hart h's node, and zeroed there (*zero: the stall). */
static uint64_t region(struct job *j, int h, uint64_t *zero)
{
    struct lapp *a = &la[j->id - 1];
    *zero = 0;
    if (!a->base) {
        uint64_t bytes = a->kind == LA_TCLOSURE ? pages((uint64_t)(a->n * a->n) * 4) + pages((a->edges ? a->edges : 1) * 4)
                                                : 4 * pages((uint64_t)a->m * 8);
        a->base = mem_alloc(j->id, bytes, mem_node_of_hart(h));
        *zero = mem_touch(j->id, h, a->base, bytes, 8, 1);
    }
    return a->base;
}

/* The allocator's other blocks (lib/base/alloc.c). A small one's class (16 << c bytes) gets its first block by
   carving a 64 KB chunk from SYS_alloc (zeroed by the kernel) and writing a header into each block; the free
   list hands out the chunk's last block first, and a freed block is its class's next. Only the classes of
   1 KB and up (c >= 6) are the app's here: the smaller ones are carved by the library's own start-up blocks
   (barrier, hand-out), which are start-up's, not modelled. A big block is fresh zeroed pages, or the big block
   freed last if it is large enough. Returns the block's address, 0 where not modelled; *ns gets the stall. */
static uint64_t block(struct lapp *a, int id, int h, uint64_t bytes, uint64_t *ns)
{
    if (bytes > 2048) {
        uint64_t b = a->big_freed;
        if (b && a->big_freed_b >= bytes)
            return a->big_freed = 0, b;
        b = mem_alloc(id, pages(bytes), mem_node_of_hart(h));
        *ns += mem_touch(id, h, b, pages(bytes), 8, 1);
        return b + 64;
    }
    int c = 0;
    while ((16u << c) < bytes)
        c++;
    uint64_t step = 16 + (16u << c), b;
    if (c < 6)
        return 0;
    if ((b = a->freed[c]))
        return a->freed[c] = 0, b;
    if (!a->chunk[c]) {
        a->chunk[c] = mem_alloc(id, 64 * 1024, mem_node_of_hart(h));
        *ns += mem_touch(id, h, a->chunk[c], 64 * 1024, 8, 1);
        for (uint64_t off = 0; off + step <= 64 * 1024; off += step)
            *ns += mem_touch(id, h, a->chunk[c] + off, 16, 8, 1);
        a->left[c] = (uint32_t)(64 * 1024 / step);
    }
    return a->left[c] ? a->chunk[c] + --a->left[c] * step + 16 : 0;
}

static void unblock(struct lapp *a, uint64_t b, uint64_t bytes)
{
    int c = 0;
    while ((16u << c) < bytes)
        c++;
    if (bytes > 2048)
        a->big_freed = b, a->big_freed_b = bytes;
    else if (b)
        a->freed[c] = b;
}

/* A block of bytes written whole (then read whole if rw), or left alone: its stall. */
static uint64_t use(struct lapp *a, int id, int h, uint64_t bytes, int elem, int rw, uint64_t *addr)
{
    uint64_t ns = 0, b = block(a, id, h, bytes, &ns);
    if (b)
        ns += mem_touch(id, h, b, bytes, elem, 1) + (rw ? mem_touch(id, h, b, bytes, elem, 0) : 0);
    *addr = b;
    return ns;
}

/* tclosure's matrix and lists; adjoint's array k (0 a, 1 b, 2 c, 3 ref). */
static uint64_t tc_matrix(const struct lapp *a) { return a->base + 64; }
static uint64_t tc_lists(const struct lapp *a) { return a->base + pages((uint64_t)(a->n * a->n) * 4) + 64; }
static uint64_t adj_array(const struct lapp *a, int k) { return a->base + (uint64_t)k * pages((uint64_t)a->m * 8) + 64; }

/* Iteration J of step K under a model: stall ns. As compiled (riscv64 objdump of build/apps/tclosure.elf,
   close_row inlined in worker): a load of A(J,K); a doer's loop loads each word of row K, and for each TRUE
   one stores row J's word and reloads t->n from process 0's frame (the store could alias it): n + 2 x the
   TRUE words, not n + the TRUE words. */
static uint64_t tc_touch(struct lapp *a, struct job *j_, int h, int64_t k, int64_t j, int doer)
{
    int id = j_->id;
    uint64_t rowb = (uint64_t)a->n * 4, mat = tc_matrix(a), ns = mem_touch(id, h, mat + (uint64_t)j * rowb + (uint64_t)k * 4, 4, 4, 0);
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

/* Index i of the sum on array x (a, or ref in the check): stall ns. */
static uint64_t adj_touch(struct lapp *a, int id, int h, int x, int64_t i)
{
    uint64_t len = (uint64_t)(a->m - i) * 8, at = adj_array(a, x) + (uint64_t)i * 8;
    return mem_touch(id, h, at, 8, 8, 0) + mem_touch(id, h, adj_array(a, 1) + (uint64_t)i * 8, len, 8, 0) +
           mem_touch(id, h, adj_array(a, 2), len, 8, 0) + mem_touch(id, h, at, 8, 8, 1);
}

int lapps_chunk(struct sproc *sp, uint64_t *ns)
{
    struct job *j = sp->p.job;
    struct lapp *a = &la[j->id - 1];
    struct sl_chunk c;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu;
    uint64_t stall = 0, zero;
    double insns = 0;
    if (!loops_grab(sp, 0, a->kind == LA_TCLOSURE ? a->n : a->m, &c, ns))
        return 0;
    if (model) /* a tclosure chunk that has rows reloads t->a and t->n from the frame */
        region(j, h, &zero), stall += zero + (a->kind == LA_TCLOSURE && c.len ? mem_touch_every(j->id, h, touch_frame(j), 2, 0, 0) : 0);
    for (int64_t t = c.start; t < c.start + c.len; t++) {
        if (a->kind == LA_TCLOSURE) {
            int64_t k = (int64_t)sp->iter;
            int doer = bit(a->act + k * a->w, t);
            insns += TC_TEST + (doer ? (double)a->n * TC_STEP + a->ntrue[k] * TC_STORE : 0);
            stall += model ? tc_touch(a, j, h, k, t, doer) : 0;
        } else {
            int64_t i = a->reverse ? a->m - 1 - t : t;
            insns += ADJ_ITER + (double)(a->m - i) * ADJ_MADD;
            stall += model ? adj_touch(a, j->id, h, 0, i) : 0;
        }
    }
    *ns += stall + (uint64_t)(insns * (a->kind == LA_TCLOSURE ? calib.tclosure_step / TC_STEP
                                                               : calib.adjoint_madd / ADJ_MADD));
    return 1;
}

/* Process 0's set-up (compute ns from the instructions of the header, and under a model its stalls). */
uint64_t lapps_start_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct lapp *a = &la[j->id - 1];
    if (!a->kind || sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), id = j->id;
    uint64_t ns = 0, zero;
    if (a->kind == LA_TCLOSURE) {
        uint64_t cells = (uint64_t)(a->n * a->n), mat;
        ns = (uint64_t)((double)cells * (TC_CELL * 3 / 5 + (a->random ? TC_DRAW : 0)) * calib.tclosure_step / TC_STEP);
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
              use(a, id, h, (uint64_t)(a->n + 1) * 4, 4, 0, &a->first) + mem_touch(id, h, mat, cells * 4, 4, 0) +
              mem_touch(id, h, tc_lists(a), a->edges * 4, 4, 1) + use(a, id, h, (uint64_t)a->n * 8, 8, 1, &w);
        unblock(a, w, (uint64_t)a->n * 8); /* loops_init's weights, freed */
        return ns;
    }
    ns = (uint64_t)((double)a->m * (ADJ_ELEM - ADJ_CHECK) * calib.adjoint_madd / ADJ_MADD);
    if (!mem_on() || !sp->p.on_cpu)
        return ns;
    region(j, h, &zero);
    uint64_t bytes = (uint64_t)a->m * 8, w;
    ns += use(a, id, h, bytes, 8, 1, &w); /* loop_init's weights (freed: nothing big comes after) */
    return ns + zero + mem_touch(id, h, adj_array(a, 0), bytes, 8, 1) + mem_touch(id, h, adj_array(a, 1), bytes, 8, 1) +
           mem_touch(id, h, adj_array(a, 2), bytes, 8, 1) + mem_touch(id, h, adj_array(a, 0), bytes, 8, 0) +
           mem_touch(id, h, adj_array(a, 3), bytes, 8, 1);
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
static uint64_t tc_check_touch(struct lapp *a, struct job *j, int h)
{
    int id = j->id;
    int64_t n = a->n, w = a->w;
    uint64_t ns = 0, lists = tc_lists(a), rowb = (uint64_t)n * 4, seen, queue, frame = touch_frame(j);
    uint64_t *sb = calloc((size_t)w, sizeof *sb), *nb = calloc((size_t)w, sizeof *nb);
    uint32_t *q = malloc((size_t)n * sizeof *q);
    if (!sb || !nb || !q)
        panic("sim: out of memory for tclosure's check");
    seen = block(a, id, h, rowb, &ns), queue = block(a, id, h, rowb, &ns);
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
        ns += mem_touch(id, h, tc_matrix(a) + (uint64_t)s * rowb, rowb, 4, 0) + (seen ? mem_touch(id, h, seen, rowb, 4, 0) : 0);
    }
    free(sb), free(nb), free(q);
    return ns;
}

/* Process 0's check after the last barrier: compute and stall ns. */
uint64_t lapps_check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct lapp *a = &la[j->id - 1];
    if (!a->kind || sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu && a->base;
    if (a->kind == LA_TCLOSURE) {
        double insns = (double)(a->n * a->n) * TC_CELL * 2 / 5 + (double)a->visits * TC_VISIT;
        return (uint64_t)(insns * calib.tclosure_step / TC_STEP) + (model ? tc_check_touch(a, j, h) : 0);
    }
    double madds = (double)a->m * (double)(a->m + 1) / 2;
    uint64_t ns = (uint64_t)((madds * ADJ_MADD + (double)a->m * ADJ_CHECK) * calib.adjoint_madd / ADJ_MADD);
    for (int64_t i = 0; model && i < a->m; i++)
        ns += adj_touch(a, j->id, h, 3, i) + mem_touch(j->id, h, adj_array(a, 0) + (uint64_t)i * 8, 8, 8, 0) +
              mem_touch(j->id, h, adj_array(a, 3) + (uint64_t)i * 8, 8, 8, 0);
    return ns;
}

/* RESULT's keys, in the app's order (sleeps= left out, as for sor). */
void lapps_result(struct job *j, uint64_t par_us, char *buf, size_t len)
{
    struct lapp *a = &la[j->id - 1];
    uint64_t grabs, remote;
    loops_counts(j, &grabs, &remote);
    if (a->kind == LA_TCLOSURE)
        snprintf(buf, len, "par_us=%lu loops=%ld grabs=%lu remote=%lu edges=%lu closure=%lu bad=0", par_us, (long)a->n,
                 grabs, remote, a->edges, a->closure);
    else if (a->have_sum)
        snprintf(buf, len, "par_us=%lu loops=1 grabs=%lu remote=%lu diff=0 sum=%.6e", par_us, grabs, remote, a->sum);
    else
        snprintf(buf, len, "par_us=%lu loops=1 grabs=%lu remote=%lu diff=0", par_us, grabs, remote);
}

void lapps_free(void)
{
    for (int i = 0; i < NJOB; i++) {
        free(la[i].act), free(la[i].rowk), free(la[i].reach), free(la[i].in);
        free(la[i].ntrue), free(la[i].deg), free(la[i].off);
        memset(&la[i], 0, sizeof la[i]);
    }
}
