/*
 * apps/adjoint.c - the adjoint convolution's model (apps/adjoint.c), Markatos chapter 5's loop app whose
 * iterations cost what their input says (5.4.2): a loop program (sim_program.c) of one loop, its chunks
 * from the library's loop schedulers (sim_loops.c), one grab at a time.
 *
 * One loop over t = 0..M-1 (M = n*n), iteration t doing index i = t (M-1-t with order=reverse): M - i
 * multiply-adds. sum= is the host's redo of the app's sums with the app's arithmetic (x b[k] rounded, then
 * one fused multiply-add: the RISC-V build's fmul.d + fmadd.d) from its input (stream 0 of the job's
 * seed), when that is at most ADJ_SUM_MAX multiply-adds; diff=0.
 *
 * Costs: instructions, counted by deterministic QEMU boots at procs=1 (clock=virtual, 1 ns an instruction),
 * times the app's unit over its instructions: adjoint_madd_ns / ADJ_MADD (the unit is fitted by
 * `schedlab validate --model`; without it, gauss's row op times the instruction ratio, 7.53 a row op).
 * n=30 and 50 (par_us 2863, 21986 us): a multiply-add 7.016 (ADJ_MADD), an iteration 20.2 more (ADJ_ITER);
 * set-up and check 146 an element beyond the check's multiply-adds (elapsed less par_us), the check's share
 * its iterations' overhead and the compare (ADJ_ITER + 15).
 *
 * Memory (--model): doubles a, b, c, ref, each in whole pages from its big sl_malloc (the payload 64 bytes
 * in: alloc.c's BIG_HDR), in the app's order, allocated by process 0 on its hart's node and zeroed there by
 * the kernel. Iteration i reads a[i], b[i..M-1], c[0..M-1-i] and writes a[i]. Set-up: a, b, c written, a
 * copied to ref; check: every index redone on ref (the same touches), then a and ref compared. Its weights
 * block goes where the allocator places it (sim_alloc.c). With it, at one hart the misses are QEMU's less
 * its start-up (a job at n=2) within 3 % (n=50).
 *
 * The library's heap at start-up (sim_start.c): the arrays are this file's, so its footprint is what is
 * left, taken from the misses instead: QEMU's less the simulator's without it at one process (`validate
 * --model P --cpus 1 --deterministic --seeds 1`), in KiB of lines: 228 / 233 / 222 under modern / iris /
 * ksr1 - the same at every scheduler and at n=192 and 256, so a start-up, not the loop: 212 + 16 P.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "loops/loopsched.h"

#define ADJ_MADD 7.016
#define ADJ_ITER 20.2
#define ADJ_ELEM 146.0
#define ADJ_CHECK (ADJ_ITER + 15.0)
#define ADJ_SUM_MAX 200000000.0

struct keys {
    int64_t n;
};

static const struct sim_key keys[] = { SIM_KEY(struct keys, n), { 0 } };

static struct adj {
    int reverse;
    int64_t n, m;       /* n, M = n*n iterations */
    double sum;
    int have_sum;
    uint64_t base;      /* under a model: the arrays' pages (0 until process 0's set-up) */
    struct sim_heap heap; /* the allocator's other blocks */
    double unit;        /* ns a multiply-add */
} adjs[NJOB];

/* The app's input (stream 0: a, b, c in turn) and its sums, as its check's sequential pass adds them. */
static void adj_sum(struct adj *a, uint64_t seed)
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

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    struct adj *a = &adjs[j->id - 1];
    char v[32];
    if (loops_program(j, w, err, errlen) < 0)
        return -1;
    memset(a, 0, sizeof *a);
    a->unit = calib_get("adjoint_madd_ns", calib.gauss_rowop * (ADJ_MADD / 7.53)); /* else by the instructions */
    a->n = SIM_STATE(w, struct keys)->n;
    if (a->n < 1)
        return snprintf(err, errlen, "job=adjoint: n=%ld is not modelled in the simulator (1 or more)",
                        (long)a->n),
               -1;
    uint64_t seed = sim_seed ^ ((uint64_t)j->id * 0x9e3779b97f4a7c15UL); /* kernel/info.c's job seed */
    a->m = a->n * a->n;
    uint64_t *wt = malloc((size_t)a->m * sizeof *wt);
    if (!wt)
        panic("sim: out of memory for a loop's weights");
    a->reverse = scenario_arg(j->scen->args, "order", v, sizeof v) == 0 && !strcmp(v, "reverse");
    for (int64_t t = 0; t < a->m; t++)
        wt[t] = (uint64_t)(a->m - (a->reverse ? a->m - 1 - t : t));
    adj_sum(a, seed);
    loops_split(j, wt, a->m);
    free(wt);
    return bprog_setup(j, w, err, errlen);
}

/* The arrays' pages: allocated at first use, on hart h's node, and zeroed there (*zero: the stall). */
static uint64_t region(struct job *j, int h, uint64_t *zero)
{
    struct adj *a = &adjs[j->id - 1];
    return touch_region(j, h, 4 * alloc_pages((uint64_t)a->m * 8), &a->base, zero);
}

/* Array k: 0 a, 1 b, 2 c, 3 ref. */
static uint64_t adj_array(const struct adj *a, int k)
{
    return a->base + (uint64_t)k * alloc_pages((uint64_t)a->m * 8) + 64;
}

/* Index i of the sum on array x (a, or ref in the check): stall ns. */
static uint64_t adj_touch(struct adj *a, int id, int h, int x, int64_t i)
{
    uint64_t len = (uint64_t)(a->m - i) * 8, at = adj_array(a, x) + (uint64_t)i * 8;
    return mem_touch(id, h, at, 8, 8, 0) + mem_touch(id, h, adj_array(a, 1) + (uint64_t)i * 8, len, 8, 0) +
           mem_touch(id, h, adj_array(a, 2), len, 8, 0) + mem_touch(id, h, at, 8, 8, 1);
}

static int chunk(struct sproc *sp, uint64_t *ns)
{
    struct job *j = sp->p.job;
    struct adj *a = &adjs[j->id - 1];
    struct sl_chunk c;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu;
    uint64_t stall = 0, zero;
    double insns = 0;
    if (!loops_grab(sp, 0, a->m, &c, ns))
        return 0;
    if (model)
        region(j, h, &zero), stall += zero;
    for (int64_t t = c.start; t < c.start + c.len; t++) {
        int64_t i = a->reverse ? a->m - 1 - t : t;
        insns += ADJ_ITER + (double)(a->m - i) * ADJ_MADD;
        stall += model ? adj_touch(a, j->id, h, 0, i) : 0;
    }
    *ns += stall + (uint64_t)(insns * (a->unit / ADJ_MADD));
    return 1;
}

static int last(const struct sjob *w, uint64_t i) { return 1; } /* one loop */

/* Process 0's set-up (compute ns from the instructions of the header, and under a model its stalls). */
static uint64_t setup_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct adj *a = &adjs[j->id - 1];
    if (sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), id = j->id;
    uint64_t ns = (uint64_t)((double)a->m * (ADJ_ELEM - ADJ_CHECK) * a->unit / ADJ_MADD), zero;
    if (!mem_on() || !sp->p.on_cpu)
        return ns;
    region(j, h, &zero);
    uint64_t bytes = (uint64_t)a->m * 8, w;
    ns += alloc_use(&a->heap, id, h, bytes, 8, 1, &w); /* loop_init's weights (freed: nothing big comes after) */
    return ns + zero + mem_touch(id, h, adj_array(a, 0), bytes, 8, 1) + mem_touch(id, h, adj_array(a, 1), bytes, 8, 1) +
           mem_touch(id, h, adj_array(a, 2), bytes, 8, 1) + mem_touch(id, h, adj_array(a, 0), bytes, 8, 0) +
           mem_touch(id, h, adj_array(a, 3), bytes, 8, 1);
}

/* Process 0's check after the last barrier: compute and stall ns. */
static uint64_t check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    struct adj *a = &adjs[j->id - 1];
    if (sp->p.idx != 0)
        return 0;
    int h = hart_of(sp), model = mem_on() && sp->p.on_cpu && a->base;
    double madds = (double)a->m * (double)(a->m + 1) / 2;
    uint64_t ns = (uint64_t)((madds * ADJ_MADD + (double)a->m * ADJ_CHECK) * a->unit / ADJ_MADD);
    for (int64_t i = 0; model && i < a->m; i++)
        ns += adj_touch(a, j->id, h, 3, i) + mem_touch(j->id, h, adj_array(a, 0) + (uint64_t)i * 8, 8, 8, 0) +
              mem_touch(j->id, h, adj_array(a, 3) + (uint64_t)i * 8, 8, 8, 0);
    return ns;
}

/* RESULT's keys, in the app's order (sleeps= left out, as for sor). */
static void report(struct job *j, struct sjob *w, char *buf, size_t len)
{
    struct adj *a = &adjs[j->id - 1];
    uint64_t us, grabs, remote;
    loops_counts(j, &grabs, &remote);
    if (!job_par_us(w, &us))
        buf[0] = 0;
    else if (a->have_sum)
        snprintf(buf, len, "par_us=%lu loops=1 grabs=%lu remote=%lu diff=0 sum=%.6e", us, grabs, remote, a->sum);
    else
        snprintf(buf, len, "par_us=%lu loops=1 grabs=%lu remote=%lu diff=0", us, grabs, remote);
}

static void free_job(struct job *j)
{
    memset(&adjs[j->id - 1], 0, sizeof adjs[0]);
    bprog_free(j);
}

static const struct sim_prog prog = {
    .setup_ns = setup_ns, .check_ns = check_ns, .report = report, .last = last, .chunk = chunk,
};

static const struct sim_app adjoint = {
    .name = "adjoint", .keys = keys, .heap_kb = 212, .workers = 1, .control = 1, .setup = setup,
    .start = bprog_start, .step = bprog_step, .spins = bprog_spins, .descheduled = barrier_descheduled,
    .free = free_job, .prog = &prog,
};
SIM_APP(adjoint);
