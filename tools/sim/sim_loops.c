/*
 * sim_loops.c - the loop-scheduled apps (Markatos chapter 5): their chunks come from the library's own loop
 * schedulers (lib/loops/loopsched.c, linked as is: static, ss, gss, factoring, trapezoid, afs,
 * mod-factoring, best-static: static's shares for sor, the app's weighted split for tclosure and adjoint
 * (loops_split)), one grab at a time as the process runs.
 *
 *   sor      (apps/sor.c) an n x n grid of doubles, written whole by process 0 in its set-up; 2 x iters
 *            loops (red and black half-sweeps), each over the interior rows 1..n-2 (iteration t is row
 *            t + 1), a barrier after each. A chunk of rows [s, s+len) costs len x (n-2)/2 cells of
 *            calib.sor_cell; row by row the words relax_row's compiled loop reads in rows r-1..r+1 and
 *            writes in row r (loops_sor_row; sim_mem.h charges the misses);
 *            a grab costs calib.loop_grab (the app's sl_loop_grab and its chunk loop, measured on ss: sim_calib.c),
 *            and reads and writes the loop's queue word (a central one, or the process's own queue for
 *            static and afs, a victim's for a theft), so under a model a remote grab costs its coherence miss.
 *   gauss    sched= other than static (apps/gauss/coarse.c solve_sched): step k's loop over rows k+1..n-1,
 *            each row n - k row ops reading the pivot row and reading and writing its own.
 *   tclosure, adjoint  sim_loopapps.c's (their iterations' costs from the input), through loops_grab.
 * Process control (adapt=yes under a policy that allots harts): a process runs the workers it hosts one
 * after another (sim_barrier.c deals them), so its grabs are theirs in turn - each hosted worker's queue
 * until that worker finds the loop done for it, then the next one's (a worker found empty hands its
 * process to the next by a user-level switch, whose cost is left out, as for the barrier programs).
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "sim_mem.h"
#include "loops/loopsched.h"

/* The library's spinlock yields when contended; the simulator's one thread never contends. */
long sl_sys_yield(void)
{
    panic("sim: a loop scheduler's spinlock was contended on the simulator's one thread");
}

static uint64_t sor_cells(int64_t n, uint64_t loop);

static struct {
    struct sl_loop *l;
    int64_t cur;      /* the loop (half-sweep) the queue holds; -1: none yet */
    uint64_t qbase;   /* the loop's queue words under a model: one line per process, then the central one */
    uint64_t grabs, remote;
} jl[NJOB];

/* The scheduler named by sched= (sl_loop_parse); -1 with a message for a name the library does not know. */
int loops_setup(struct job *j, const char *sched, char *err, size_t errlen)
{
    int kind = sl_loop_parse(sched[0] ? sched : "static");
    if (kind < 0)
        return snprintf(err, errlen, "job=%s: sched=%s is not a loop scheduler", j->scen->app, sched), -1;
    size_t bytes = sl_loop_bytes(j->nprocs);
    jl[j->id - 1].l = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!jl[j->id - 1].l)
        panic("sim: out of memory for a loop");
    sl_loop_init(jl[j->id - 1].l, (enum sl_loopsched)kind, j->nprocs, 0);
    jl[j->id - 1].cur = -1;
    jl[j->id - 1].qbase = 0;
    jl[j->id - 1].grabs = jl[j->id - 1].remote = 0;
    return 0;
}

/* best-static's parts from the app's weights of its n iterations (sl_loop_split_weighted), as tclosure and
   adjoint set them (sl_loop_set_split); other schedulers ignore them. */
void loops_split(struct job *j, const uint64_t *w, int64_t n)
{
    struct sl_loop *l = jl[j->id - 1].l;
    int64_t first[SL_MAX_PROCS + 1];
    if (l->kind != SL_LOOP_BESTSTATIC)
        return;
    sl_loop_split_weighted(w, n, j->nprocs, first);
    if (sl_loop_set_split(l, first) < 0)
        panic("sim: sl_loop_split_weighted gave a split sl_loop_set_split refuses");
}

void loops_free(void)
{
    lapps_free();
    for (int i = 0; i < NJOB; i++) {
        free(jl[i].l);
        jl[i].l = 0;
    }
}

/* sp's next chunk of loop sp->iter over [lo, hi): 1 with the chunk in *c, or 0 (the loop is done for it: on
   to the barrier); *ns gets the grab's cost. The loop is started anew by its first grab (every process
   passed the barrier after the last one, as the app's process 0 resets it). */
int loops_grab(struct sproc *sp, int64_t lo, int64_t hi, struct sl_chunk *c, uint64_t *ns)
{
    struct job *j = sp->p.job;
    int id = j->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0, P = j->nprocs;
    if (jl[id - 1].cur != (int64_t)sp->iter) {
        sl_loop_start(jl[id - 1].l, lo, hi);
        jl[id - 1].cur = (int64_t)sp->iter;
    }
    if (mem_on() && !jl[id - 1].qbase)
        jl[id - 1].qbase = mem_alloc(id, (uint64_t)(P + 1) * 64, mem_node_of_hart(h));
    *ns = 0;
    int who = sp->p.idx, got = sl_loop_next(jl[id - 1].l, who, c);
    const struct sjob *w = &sjobs[id - 1];
    for (int v = 0; !got && w->adaptive && v < P; v++) /* folded: the next worker it hosts grabs */
        if (v != sp->p.idx && w->host[v] == sp->p.idx) {
            *ns += (uint64_t)calib.loop_grab; /* the empty grab before it */
            got = sl_loop_next(jl[id - 1].l, who = v, c);
        }
    /* the grab: the queue it took from, or its own found empty */
    uint64_t qword = jl[id - 1].qbase + (uint64_t)(c->local || !got ? who : P) * 64;
    *ns += (uint64_t)calib.loop_grab + (mem_on() ? mem_touch(id, h, qword, 8, 8, 0) + mem_touch(id, h, qword, 8, 8, 1)
                                                 : 0);
    if (mem_on()) { /* the call's own words (sl_loop_next and the app's grab loop as compiled, every scheduler):
                       the loop's kind twice and its jump-table entry (the image's: here the central line), 11
                       registers saved and 10 restored on the caller's stack, the app's load of the loop pointer;
                       a chunk: written and read back (start, len, local), the grab counter of its queue
                       read and written (its word in the process's own struct sl_loopq: put on the caller's
                       stack here, as this file's 64-byte queue lines would share a 128-byte line between
                       processes, which the library's layout does not), the trace flag read. The scheduler's
                       own path beyond the queue word (static's and afs's take_own: a frame of 14 words and
                       its lock) is not modelled. */
        uint64_t st = touch_stack(sp);
        *ns += mem_touch_every(id, h, jl[id - 1].qbase + (uint64_t)P * 64, 3, 0, 0) +
               mem_touch_every(id, h, st, 11 + (got ? 3 : 0), 0, 1) + mem_touch_every(id, h, st, 11 + (got ? 4 : 0), 0, 0) +
               (got ? mem_touch_every(id, h, st, 1, 0, 0) + mem_touch_every(id, h, st, 1, 0, 1) : 0);
    }
    if (got) {
        jl[id - 1].grabs++;
        jl[id - 1].remote += !c->local;
    }
    return got;
}

int loops_sor_chunk(struct sproc *sp, int64_t n, uint64_t *ns)
{
    struct sl_chunk c;
    int id = sp->p.job->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0;
    if (!loops_grab(sp, 0, n - 2, &c, ns))
        return 0;
    uint64_t rowb = (uint64_t)n * 8, cells = sor_cells(n, sp->iter);
    *ns += (uint64_t)((double)((uint64_t)c.len * cells) * calib.sor_cell);
    if (mem_on()) {
        uint64_t a = touch_array(sp, rowb * (uint64_t)n);
        for (int64_t r = c.start + 1; r <= c.start + c.len; r++) /* row by row, as relax_row goes */
            *ns += loops_sor_row(id, h, a, n, r, (int)(sp->iter & 1));
    }
    return 1;
}

/* relax_row(grid, n, r, colour) as compiled (riscv64 objdump of build/apps/sor.elf): for each cell k of the
   colour, k = k0, k0 + 2, ... < n - 1, four loads - up[k], dn[k], r[k], r[k + 1] - and a store of r[k];
   r[k0 - 1] is loaded once before the loop and each r[k + 1] is carried as the next cell's r[k - 1]. So
   row r's words k0 - 1 .. last + 1 are read once each, and rows r - 1 and r + 1 and r's stores touch every
   other word: 5 words a cell, 2.5 a row's word (its two loop constants, from the image, not modelled).
   Stall ns. */
uint64_t loops_sor_row(int job, int hart, uint64_t grid, int64_t n, int64_t r, int colour)
{
    int64_t k0 = 1 + ((r + 1 + colour) & 1), cells = k0 < n - 1 ? (n - 2 - k0) / 2 + 1 : 0;
    uint64_t rowb = (uint64_t)n * 8, row = grid + (uint64_t)r * rowb + (uint64_t)k0 * 8, c = (uint64_t)cells;
    if (!cells)
        return 0;
    return mem_touch_every(job, hart, row - rowb, c, 16, 0) + mem_touch_every(job, hart, row + rowb, c, 16, 0) +
           mem_touch(job, hart, row - 8, (2 * c + 1) * 8, 8, 0) + mem_touch_every(job, hart, row, c, 16, 1);
}

/* gauss sched= (not static; apps/gauss/coarse.c solve_sched): step k's loop over the rows k+1..n-1, each row
   (n - k) row ops; under a model each row reads the pivot row's columns k..n and reads and writes its own. */
int loops_gauss_chunk(struct sproc *sp, int64_t n, uint64_t *ns)
{
    struct sl_chunk c;
    int64_t k = (int64_t)sp->iter;
    int id = sp->p.job->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0;
    if (k + 1 >= n || !loops_grab(sp, k + 1, n, &c, ns))
        return 0;
    *ns += (uint64_t)((double)((uint64_t)c.len * (uint64_t)(n - k)) * calib.gauss_rowop);
    if (mem_on()) {
        uint64_t rowb = (uint64_t)(n + 1) * 8, a = touch_gauss(sp, n), off = (uint64_t)k * 8,
                 len = (uint64_t)(n + 1 - k) * 8;
        for (int64_t r = c.start; r < c.start + c.len; r++) {
            *ns += mem_touch(id, h, a + (uint64_t)k * rowb + off, len, 8, 0);
            *ns += mem_touch(id, h, a + (uint64_t)r * rowb + off, len, 8, 0);
            *ns += mem_touch(id, h, a + (uint64_t)r * rowb + off, len, 8, 1);
        }
    }
    return 1;
}

static uint64_t sor_cells(int64_t n, uint64_t loop)
{
    return (uint64_t)(n - 2) / 2 + ((n - 2) & 1 && (loop & 1) == 0);
}

uint64_t loops_sor_check_ns(int64_t n, int64_t iters)
{
    return (uint64_t)((double)((uint64_t)(2 * iters) * (uint64_t)(n - 2) * sor_cells(n, 0)) * calib.sor_cell);
}

/* grabs= and remote= as the app reports them (summed over the loops). */
void loops_counts(struct job *j, uint64_t *grabs, uint64_t *remote)
{
    *grabs = jl[j->id - 1].grabs;
    *remote = jl[j->id - 1].remote;
}
