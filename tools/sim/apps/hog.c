/*
 * apps/hog.c - the hog's model (apps/hog.c): blocks of `block` units (calib.hog_unit) until no foreground
 * job is left. Its work is kept in registers, but every block saves and restores block()'s eight
 * callee-saved registers, passes three doubles' bits through its stack, loads eleven constants from the
 * image (35 accesses in the riscv64 objdump), and the loop reads steps, ref and the info page's fg_live,
 * bumps its slot's count and calls sl_safe_point. Deterministic QEMU under butterfly (every word an
 * access), the hog beside gauss n=256 at one hart with block=5000 and 50000 at quantum=1ms and 10ms, four
 * runs solved for the words a block, a switch, 100 us of run (the timer traps: sim_kernel.c kern_vclock)
 * and the start-up: 71.1 words a block (HOG_BLOCK_WORDS). All on lines the block keeps hot: a cache's
 * hits, memory's words without one. Not modelled (refused): ws= (a swept working set).
 *
 * The library's heap at start-up (sim_start.c's measurement): beside a synth, RESULT's mem_kb at P = 1, 2,
 * 4 232 312 472 -> 152 + 16 P.
 */
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"
#include "../sim_mem.h"

#define HOG_BLOCK_WORDS 71

struct hog {
    int64_t block;
};

static const struct sim_key keys[] = { SIM_KEY(struct hog, block), { 0 } };

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    char v[32];
    if (scenario_arg(j->scen->args, "ws", v, sizeof v) == 0 && strcmp(v, "0"))
        return snprintf(err, errlen, "job=hog: ws=%s is not modelled in the simulator (0 only)", v), -1;
    return 0;
}

/* A block's frame words: stall ns. */
static uint64_t block_touch(struct sproc *sp)
{
    if (!mem_on() || !sp->p.on_cpu)
        return 0;
    return mem_touch_every(sp->p.job->id, sp->p.on_cpu->id, touch_stack(sp), HOG_BLOCK_WORDS, 0, 0);
}

static void step(struct sproc *sp, uint64_t t)
{
    if (job_begin(sp, t))
        return;
    if (fg_live == 0 && sp->iter > 0)
        return job_end(sp, t);
    sp->iter++;
    int64_t block = SIM_STATE(sjob_of(sp->p.job), struct hog)->block;
    core_compute(sp, t, (uint64_t)((double)block * calib.hog_unit) + block_touch(sp));
}

static const struct sim_app hog = {
    .name = "hog", .keys = keys, .heap_kb = 152, .workers = 1, .setup = setup, .step = step,
};
SIM_APP(hog);
