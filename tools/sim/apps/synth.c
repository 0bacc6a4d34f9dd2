/*
 * apps/synth.c - synth's model (apps/synth.c): a barrier program (sim_program.c) of iters iterations, each
 * uniform [grain, grain+var] units of work (calib.synth_unit, the job's random stream) and a barrier.
 * Its work is kept in registers (an LCG step): nothing of it is touched under --model; it takes the hart,
 * not the cache.
 *
 * The library's heap at start-up (sim_start.c's measurement): iters=10, RESULT's mem_kb at P = 1, 2, 4
 * 296 376 536 -> 216 + 16 P.
 */
#include "../sim.h"
#include "../sim_kit.h"

struct synth {
    int64_t grain, var, iters;
};

static const struct sim_key keys[] = { SIM_KEY(struct synth, grain), SIM_KEY(struct synth, var),
                                       SIM_KEY(struct synth, iters), { 0 } };

static uint64_t work(struct sproc *sp, struct sjob *w, int idx, int *last)
{
    const struct synth *s = SIM_STATE(w, struct synth);
    *last = sp->iter + 1 >= (uint64_t)s->iters;
    return (uint64_t)((double)(s->grain + (s->var ? (int64_t)(sl_rng_u64(&w->rng) % (uint64_t)(s->var + 1)) : 0)) *
                      calib.synth_unit);
}

static int last(const struct sjob *w, uint64_t i) { return i + 1 >= (uint64_t)SIM_STATE(w, struct synth)->iters; }

static const struct sim_prog prog = { .work = work, .last = last };

static const struct sim_app synth = {
    .name = "synth", .keys = keys, .heap_kb = 216, .workers = 1, .control = 1, .setup = bprog_setup,
    .start = bprog_start, .step = bprog_step, .spins = bprog_spins, .descheduled = barrier_descheduled,
    .free = bprog_free, .prog = &prog,
};
SIM_APP(synth);
