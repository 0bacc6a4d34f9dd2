/*
 * apps/sor.c - red-black successive over-relaxation's model (apps/sor.c), a loop program (sim_program.c)
 * whose chunks come from the library's own loop schedulers (sim_loops.c: static's shares, or sched=).
 *
 * An n x n grid of doubles, written whole by process 0 in its set-up; 2 x iters loops (red and black
 * half-sweeps), each over the interior rows 1..n-2 (iteration t is row t + 1), a barrier after each. A
 * chunk of rows [s, s+len) costs len x (n-2)/2 cells of the model's cell unit; row by row the words relax_row's
 * compiled loop reads in rows r-1..r+1 and writes in row r (relax_row; sim_mem.h charges the misses).
 * Memory (--model): two grids, ref then a, as the app allocates them: process 0's set-up writes a (an
 * interior cell's draw loads and stores its stream's state in the frame) and copies it to ref; its check
 * redoes every half-sweep on ref and compares the grids, a byte at a time.
 *
 * The library's heap at start-up (sim_start.c's measurement): n=256 iters=1, RESULT's mem_kb at
 * P = 1, 2, 4 1396 1476 1636 -> 1332 1348 1380 less 1024 (two grids) -> 292 + 16 P.
 */
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"
#include "loops/loopsched.h"

struct sor {
    int64_t n, iters;
    double cell; /* ns a cell's update */
};

static const struct sim_key keys[] = { SIM_KEY(struct sor, n), SIM_KEY(struct sor, iters), { 0 } };

static uint64_t sor_cells(int64_t n, uint64_t loop);
static uint64_t relax_row(int job, int hart, uint64_t grid, int64_t n, int64_t r, int colour);

/* The two grids, ref (the check's copy) first, then a, whole pages each: a's address (allocated at first
   use, zeroed then). */
static uint64_t sor_pages(uint64_t bytes) { return (bytes + 4095) & ~4095UL; }

static uint64_t grid_a(struct job *j, uint64_t bytes, int h)
{
    uint64_t zero;
    return touch_array_at(j, 2 * sor_pages(bytes), h, &zero) + sor_pages(bytes);
}

/* Its unit: sor_cell_ns in the calibration, else gauss's row op times the ratio of their instruction counts
   (deterministic QEMU, instruction-counted: job=gauss:procs=1,n=160 7.53 a row op, job=sor:procs=1,n=256,
   iters=10 14.35 a cell). */
static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    SIM_STATE(w, struct sor)->cell = calib_get("sor_cell_ns", calib.gauss_rowop * (14.35 / 7.53));
    if (loops_program(j, w, err, errlen) < 0)
        return -1;
    return bprog_setup(j, w, err, errlen);
}

static int chunk(struct sproc *sp, uint64_t *ns)
{
    int64_t n = SIM_STATE(sjob_of(sp->p.job), struct sor)->n;
    struct sl_chunk c;
    int id = sp->p.job->id, h = sp->p.on_cpu ? sp->p.on_cpu->id : 0;
    if (!loops_grab(sp, 0, n - 2, &c, ns))
        return 0;
    uint64_t rowb = (uint64_t)n * 8, cells = sor_cells(n, sp->iter);
    *ns += (uint64_t)((double)((uint64_t)c.len * cells) * SIM_STATE(sjob_of(sp->p.job), struct sor)->cell);
    if (mem_on()) {
        uint64_t a = grid_a(sp->p.job, rowb * (uint64_t)n, hart_of(sp));
        for (int64_t r = c.start + 1; r <= c.start + c.len; r++) /* row by row, as relax_row goes */
            *ns += relax_row(id, h, a, n, r, (int)(sp->iter & 1));
    }
    return 1;
}

/* relax_row(grid, n, r, colour) as compiled (riscv64 objdump of build/apps/sor.elf): for each cell k of the
   colour, k = k0, k0 + 2, ... < n - 1, four loads - up[k], dn[k], r[k], r[k + 1] - and a store of r[k];
   r[k0 - 1] is loaded once before the loop and each r[k + 1] is carried as the next cell's r[k - 1]. So
   row r's words k0 - 1 .. last + 1 are read once each, and rows r - 1 and r + 1 and r's stores touch every
   other word: 5 words a cell, 2.5 a row's word (its two loop constants, from the image, not modelled).
   Stall ns. */
static uint64_t relax_row(int job, int hart, uint64_t grid, int64_t n, int64_t r, int colour)
{
    int64_t k0 = 1 + ((r + 1 + colour) & 1), cells = k0 < n - 1 ? (n - 2 - k0) / 2 + 1 : 0;
    uint64_t rowb = (uint64_t)n * 8, row = grid + (uint64_t)r * rowb + (uint64_t)k0 * 8, c = (uint64_t)cells;
    if (!cells)
        return 0;
    return mem_touch_every(job, hart, row - rowb, c, 16, 0) + mem_touch_every(job, hart, row + rowb, c, 16, 0) +
           mem_touch(job, hart, row - 8, (2 * c + 1) * 8, 8, 0) + mem_touch_every(job, hart, row, c, 16, 1);
}

static uint64_t sor_cells(int64_t n, uint64_t loop)
{
    return (uint64_t)(n - 2) / 2 + ((n - 2) & 1 && (loop & 1) == 0);
}

static uint64_t check_compute_ns(int64_t n, int64_t iters, double cell)
{
    return (uint64_t)((double)((uint64_t)(2 * iters) * (uint64_t)(n - 2) * sor_cells(n, 0)) * cell);
}


static int last(const struct sjob *w, uint64_t i) { return i + 1 >= 2 * (uint64_t)SIM_STATE(w, struct sor)->iters; }

/* Process 0's set-up: init_grid writes a, memcpy copies it to ref. Stall ns. */
static uint64_t arrays_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    int64_t n = SIM_STATE(sjob_of(j), struct sor)->n;
    if (!mem_on() || !sp->p.on_cpu || sp->p.idx != 0 || n <= 0)
        return 0;
    int h = sp->p.on_cpu->id;
    uint64_t bytes = (uint64_t)n * (uint64_t)n * 8, zero;
    uint64_t a = touch_array_at(j, 2 * sor_pages(bytes), h, &zero) + sor_pages(bytes), ref = touch_array_base(j),
             in = (uint64_t)(n - 2);
    return zero + mem_touch(j->id, h, a, bytes, 8, 1) +
           (n > 2 ? mem_touch_every(j->id, h, touch_frame(j), in * in, 0, 0) +
                        mem_touch_every(j->id, h, touch_frame(j), in * in, 0, 1) : 0) +
           touch_zip(j->id, h, a, 8, ref, 8, 1, bytes);
}

/* sor's check on ref (row by row as relax_row, nloops times), then a and ref compared: per cell memcmp's
   8 byte loads of each (lib's memcmp: a byte at a time, a's then ref's), the sum's load of a's cell and
   s.a reloaded from the frame (the call may write memory). Stall ns. */
static uint64_t sor_check(struct job *j, int h, int64_t n, int64_t nloops)
{
    uint64_t bytes = (uint64_t)n * (uint64_t)n * 8, ref = touch_array_base(j), a = ref + sor_pages(bytes), ns = 0;
    for (int64_t L = 0; L < nloops; L++)
        for (int64_t r = 1; r < n - 1; r++)
            ns += relax_row(j->id, h, ref, n, r, (int)(L & 1));
    return ns + touch_zip(j->id, h, a, 1, ref, 1, 0, bytes) + mem_touch(j->id, h, a, bytes, 8, 0) +
           mem_touch_every(j->id, h, touch_frame(j), bytes / 8, 0, 0);
}

/* Process 0's check: the half-sweeps again, sequentially, on ref, then the compare. */
static uint64_t check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    const struct sor *s = SIM_STATE(sjob_of(j), struct sor);
    uint64_t ns = check_compute_ns(s->n, s->iters, s->cell);
    if (!mem_on() || !sp->p.on_cpu || sp->p.idx != 0 || s->n <= 0 || !touch_array_base(j))
        return ns;
    return ns + sor_check(j, sp->p.on_cpu->id, s->n, 2 * s->iters);
}

static void report(struct job *j, struct sjob *w, char *buf, size_t len)
{
    uint64_t us, grabs, remote;
    loops_counts(j, &grabs, &remote);
    if (job_par_us(w, &us))
        snprintf(buf, len, "par_us=%lu loops=%ld grabs=%lu remote=%lu", us, 2 * SIM_STATE(w, struct sor)->iters, grabs,
                 remote);
    else
        buf[0] = 0;
}

static const struct sim_prog prog = {
    .arrays_ns = arrays_ns, .check_ns = check_ns, .report = report, .last = last, .chunk = chunk,
};

static const struct sim_app sor = {
    .name = "sor", .keys = keys, .heap_kb = 292, .workers = 1, .control = 1, .setup = setup, .start = bprog_start,
    .step = bprog_step, .spins = bprog_spins, .descheduled = barrier_descheduled, .free = bprog_free, .prog = &prog,
};
SIM_APP(sor);
