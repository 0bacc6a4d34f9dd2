/*
 * gauss variant=coarse (Markatos 3.3.4 versions 3 and 4): P workers,
 * user-level threads pinned one to each process at start (sl_run_workers:
 * under partition they follow the allotment); row i belongs to worker
 * i % procs (round robin, so the shrinking active part of the matrix stays
 * balanced).
 *   sync=barrier  for each column k, every process eliminates column k from
 *                 its rows below k, then all meet at a barrier (n-1 barriers)
 *   sync=cond     condition synchronization on the pivot row only: ready[k]
 *                 is set once row k has been fully reduced; a process waits
 *                 for ready[k] before using row k as the pivot. The owner of
 *                 row k+1 reduces it first and publishes it at once, so the
 *                 next column can start while this one is still being done.
 * sched= (sync=barrier only) says how the rows below k are dealt out in
 * each step: static is the round robin above; the others (ss, gss,
 * factoring, trapezoid, afs, mod-factoring - the thesis's KSR-1 table
 * has it; loopsched.h) hand out chunks of the rows
 * [k+1, n) from a loop scheduler, which is reset for step k+1 by process 0
 * during step k (two loops, alternating; the barrier orders reset and use).
 * home=own puts each worker's rows (i % procs == id) in its own node's
 * memory (main.c, gauss_home_rows), and under sched=static a worker copies
 * each pivot row it does not own into a node-local buffer once per column
 * before using it (pivot()); a loop scheduler's chunks reach rows on other
 * nodes as they are dealt, and read the pivot where it lives.
 * grabs= counts the chunks taken over all steps (static: every process with
 * a row takes its share once per step), remote= those not from the taker's
 * own share or queue. Rows are generated in parallel by their owners; the timed
 * part (par_us) runs from a start barrier to an end barrier.
 */
#include "gauss.h"
#include "barriers/barrier.h"
#include "loops/loopsched.h"
#include "workers/workers.h"

struct coarse {
    struct gauss *g;
    struct sl_barrier bar;
    int sched;               /* enum sl_loopsched */
    struct sl_loop *loop[2]; /* sched != static: step k uses loop[k & 1] */
};

static void eliminate(struct gauss *g, int i, int k) { gauss_eliminate_row(gauss_row(g, i), gauss_row(g, k), k, g->n); }

/* Pivot row k as worker id reads it: with home=own a row on another process's node is first brought into
   the worker's own buffer (node-local, columns k..n), once per column - the thesis's coarse grain, "each
   process executes O(N^2/P) arithmetic instructions before each communication operation of size O(N) (bring
   an entire row to local memory)" (sec. 2.3); otherwise the row where it lives. */
static const double *pivot(struct gauss *g, int k, int id, double *buf)
{
    if (!buf || k % g->nprocs == id)
        return gauss_row(g, k);
    memcpy(buf + k, gauss_row(g, k) + k, (size_t)(g->n + 1 - k) * sizeof(double));
    return buf;
}

/* My first row below k: the smallest i > k with i % nprocs == id. */
static int first_mine(struct gauss *g, int k, int id)
{
    return k + 1 + (id - (k + 1) % g->nprocs + g->nprocs) % g->nprocs;
}

static void publish(struct gauss *g, int i) { sl_wait_set(&g->ready[i], 1, g->wait); }

static void solve_barrier(struct coarse *c, int id, double *buf)
{
    struct gauss *g = c->g;

    for (int k = 0; k < g->n - 1; k++) {
        int i = first_mine(g, k, id);
        const double *p = i < g->n ? pivot(g, k, id, buf) : 0;
        for (; i < g->n; i += g->nprocs)
            gauss_eliminate_row(gauss_row(g, i), p, k, g->n);
        sl_barrier_wait(&c->bar);
    }
}

/* Rows [k+1, n) of step k from the loop scheduler. */
static void solve_sched(struct coarse *c, int id)
{
    struct gauss *g = c->g;
    struct sl_chunk ch;

    for (int k = 0; k < g->n - 1; k++) {
        if (id == 0 && k + 1 < g->n - 1)
            sl_loop_start(c->loop[(k + 1) & 1], k + 2, g->n);
        while (sl_loop_grab(c->loop[k & 1], id, &ch))
            for (int64_t i = ch.start; i < ch.start + ch.len; i++)
                eliminate(g, (int)i, k);
        sl_barrier_wait(&c->bar);
    }
}

/* Rows are visited in increasing order, so the owner of row k+1 reduces it
   first within column k and publishes it before its other rows. */
static void solve_cond(struct gauss *g, int id, double *buf)
{
    if (id == 0)
        publish(g, 0); /* row 0 needs no reduction */
    for (int k = 0; k < g->n - 1; k++) {
        struct owner_wf w = { { gauss_owner_running }, (uint32_t)(k % g->nprocs) };
        /* a worker that runs ahead finds its pivots ready and never waits: without a safe point per
           column, process control would not hear of a shrunken allotment for many quanta */
        sl_safe_point();
        sl_wait_ne_for(&g->ready[k], 0, g->wait, &w.wf);
        int i = first_mine(g, k, id);
        const double *p = i < g->n ? pivot(g, k, id, buf) : 0;
        for (; i < g->n; i += g->nprocs) {
            gauss_eliminate_row(gauss_row(g, i), p, k, g->n);
            if (i == k + 1)
                publish(g, i);
        }
    }
}

static void worker(void *arg, int id)
{
    struct coarse *c = arg;
    struct gauss *g = c->g;
    double *buf = 0;

    if (g->own) { /* home=own: my rows and a pivot row's copy from my node, as the thesis's programs had them */
        gauss_home_rows(g, id);
        buf = sl_alloc_node((size_t)(g->n + 1) * sizeof(double), -1);
        if (!buf)
            sl_die("out of memory for process %d's pivot row (n=%d)", id, g->n);
    }
    for (int i = id; i < g->n; i += g->nprocs)
        gauss_gen_row(g, i);
    sl_barrier_wait(&c->bar);
    if (id == 0)
        g->t0 = sl_now_us();
    if (g->cond)
        solve_cond(g, id, buf);
    else if (c->sched != SL_LOOP_STATIC)
        solve_sched(c, id);
    else
        solve_barrier(c, id, buf);
    sl_barrier_wait(&c->bar);
    if (id == 0)
        g->t1 = sl_now_us();
    sl_free(buf);
}

/* sched != static: the two alternating loops, step 0's started. */
static void loops_init(struct coarse *c)
{
    struct gauss *g = c->g;

    if (g->cond)
        sl_die("sched=%s needs sync=barrier (sync=cond has no loop per step)", sl_arg_str("sched"));
    for (int i = 0; i < 2; i++) {
        c->loop[i] = sl_alloc_node(sl_loop_bytes(g->nprocs), -1);
        if (!c->loop[i])
            sl_die("out of memory for the loop scheduler");
        sl_loop_init(c->loop[i], (enum sl_loopsched)c->sched, g->nprocs, 0);
    }
    sl_loop_start(c->loop[0], 1, g->n);
}

/* The chunks taken over all steps, and those remote. */
static void grabs(struct coarse *c, uint64_t *local, uint64_t *remote)
{
    struct gauss *g = c->g;
    uint64_t l1, r1;

    *local = *remote = 0;
    if (c->sched != SL_LOOP_STATIC) {
        sl_loop_grabs(c->loop[0], local, remote);
        sl_loop_grabs(c->loop[1], &l1, &r1);
        *local += l1;
        *remote += r1;
    } else if (!g->cond) {
        for (int k = 0; k < g->n - 1; k++)
            *local += (uint64_t)(g->n - 1 - k < g->nprocs ? g->n - 1 - k : g->nprocs);
    }
}

void gauss_coarse(struct gauss *g)
{
    struct coarse c = { .g = g, .sched = sl_loop_parse(sl_arg_str("sched")) };
    uint64_t local, remote;
    double maxerr;

    sl_barrier_init_args(&c.bar, (uint32_t)g->nprocs, "shape", "barrier");
    g->wait = c.bar.wait;
    if (c.sched != SL_LOOP_STATIC)
        loops_init(&c);

    sl_run_workers(worker, &c);

    maxerr = gauss_back_substitute(g);
    grabs(&c, &local, &remote);
    sl_report(gauss_maxerr_ok(maxerr), "maxerr=%.2e par_us=%lu grabs=%lu remote=%lu sleeps=%lu", maxerr,
              (unsigned long)(g->t1 - g->t0), (unsigned long)(local + remote), (unsigned long)remote,
              (unsigned long)sl_wait_blocks());
}
