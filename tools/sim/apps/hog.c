/*
 * apps/hog.c - the hog's model (apps/hog.c): blocks of `block` units (calib.hog_unit) until no foreground
 * job is left. Its work is kept in registers, but every block saves and restores block()'s eight
 * callee-saved registers, passes three doubles' bits through its stack, loads eleven constants from the
 * image (35 accesses in the riscv64 objdump), and the loop reads steps, ref and the info page's fg_live,
 * bumps its slot's count and calls sl_safe_point. Deterministic QEMU under butterfly (every word an
 * access), the hog beside gauss n=256 at one hart with block=5000 and 50000 at quantum=1ms and 10ms, four
 * runs solved for the words a block, a switch, 100 us of run (the timer traps: sim_kernel.c kern_vclock)
 * and the start-up: 71.1 words a block (HOG_BLOCK_WORDS). All on lines the block keeps hot: a cache's
 * hits, memory's words without one.
 *
 * ws= (KiB; the app's key table bounds it, 0..8192, and the kernel's parser refuses the rest with its
 * message): each process's working set, allocated by its worker on the hart it first runs on (sim_touch.c
 * touch_own: the node's fresh pages, zeroed by the kernel) and cleared by its memset; after every block the
 * worker adds 1 to the first word of each 64-byte line of it. The riscv64 objdump of that loop: per line a
 * load and a store of the word and a reload of g->ws_words from process 0's frame (a size_t the store may
 * alias), 7 instructions against the block's 14 a step, so a line costs hog_unit x 7/14 unless the
 * calibration gives hog_ws_line_ns. Each line's load and store go through the caches of the block's hart
 * (mem_touch_rmw), line after line as the loop does them, so a sweep larger than a cache evicts what a
 * co-runner left there (Tucker & Gupta's cache corruption). At the end process 0 reads every swept word of every process's
 * set (ws_bad). RESULT: work= (blocks) bad=0, and ws_kb= ws_bad=0 with a working set, as the app reports.
 *
 * The library's heap at start-up (sim_start.c's measurement): beside a synth, RESULT's mem_kb at P = 1, 2,
 * 4 232 312 472 -> 152 + 16 P.
 */
#include <stdio.h>
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"

#define HOG_BLOCK_WORDS 71
#define HOG_WS_LINE 64      /* apps/hog.c WS_LINE: bytes between the words a sweep touches */
#define HOG_STEP_INSNS 14.0 /* block()'s loop, a step (riscv64 objdump) */
#define HOG_LINE_INSNS 7.0  /* the sweep's loop, a line */

struct hog {
    int64_t block, ws;
    double line_ns; /* a swept line's instructions */
};

static const struct sim_key keys[] = { SIM_KEY(struct hog, block), SIM_KEY(struct hog, ws), { 0 } };

static struct hog *hog_of(const struct job *j) { return SIM_STATE(sjob_of(j), struct hog); }
static uint64_t ws_bytes(const struct job *j) { return (uint64_t)hog_of(j)->ws * 1024; }
static uint64_t ws_lines(const struct job *j) { return ws_bytes(j) / HOG_WS_LINE; }

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    (void)j, (void)err, (void)errlen;
    SIM_STATE(w, struct hog)->line_ns = calib_get("hog_ws_line_ns", calib.hog_unit * HOG_LINE_INSNS / HOG_STEP_INSNS);
    return 0;
}

/* A block's frame words, and with ws= the sweep of the process's working set after it: stall ns. */
static uint64_t block_touch(struct sproc *sp)
{
    if (!mem_on() || !sp->p.on_cpu)
        return 0;
    struct job *j = sp->p.job;
    int id = j->id, h = sp->p.on_cpu->id;
    uint64_t ns = mem_touch_every(id, h, touch_stack(sp), HOG_BLOCK_WORDS, 0, 0), lines = ws_lines(j);
    if (!lines)
        return ns;
    uint64_t ws = touch_own_base(j, sp->p.idx);
    if (!ws) { /* the worker's first block: its set from its hart's node, zeroed by the kernel, then memset */
        ws = touch_own(j, sp->p.idx, h, ws_bytes(j), &ns);
        ns += mem_touch(id, h, ws, ws_bytes(j), 8, 1);
    }
    ns += mem_touch_rmw(id, h, ws, lines, HOG_WS_LINE);
    return ns + mem_touch_every(id, h, touch_frame(j), lines, 0, 0); /* g->ws_words, reloaded a line */
}

static void step(struct sproc *sp, uint64_t t)
{
    if (job_begin(sp, t))
        return;
    if (fg_live == 0 && sp->iter > 0)
        return job_end(sp, t);
    sp->iter++;
    struct hog *g = hog_of(sp->p.job);
    double ns = (double)g->block * calib.hog_unit + (double)ws_lines(sp->p.job) * g->line_ns;
    core_compute(sp, t, (uint64_t)ns + block_touch(sp));
}

/* Process 0's ws_bad: every swept word of every process's set read once. Stall ns. */
static uint64_t check_ns(struct sproc *sp)
{
    struct job *j = sp->p.job;
    uint64_t ns = 0;
    if (!mem_on() || !sp->p.on_cpu || !ws_lines(j))
        return 0;
    for (int p = 0; p < j->nprocs; p++)
        if (touch_own_base(j, p))
            ns += mem_touch_every(j->id, sp->p.on_cpu->id, touch_own_base(j, p), ws_lines(j), HOG_WS_LINE, 0);
    return ns;
}

/* RESULT: the blocks done (each process's iterations), and the working set's keys. */
static void report(struct job *j, struct sjob *w, char *buf, size_t len)
{
    uint64_t work = 0;
    for (int p = 0; p < j->nprocs; p++)
        work += sprocs[j->id - 1][p] ? sprocs[j->id - 1][p]->iter : 0;
    if (SIM_STATE(w, struct hog)->ws)
        snprintf(buf, len, "work=%lu bad=0 ws_kb=%ld ws_bad=0", work, (long)SIM_STATE(w, struct hog)->ws);
    else
        snprintf(buf, len, "work=%lu bad=0", work);
}

static const struct sim_prog prog = { .check_ns = check_ns, .report = report };

static const struct sim_app hog = {
    .name = "hog", .keys = keys, .heap_kb = 152, .workers = 1, .setup = setup, .step = step, .prog = &prog,
};
SIM_APP(hog);
