/*
 * apps/sleeper.c - the sleeper's model (apps/sleeper.c): iters x { work units (calib.sleeper_unit) and a
 * system call; sleep sleep_us (a futex timeout) }. Nothing of it is touched under --model.
 *
 * The library's heap at start-up (sim_start.c's measurement): RESULT's mem_kb at P = 1, 2: 68 132 -> 4
 * (its slot), no workers.
 */
#include "../sim.h"
#include "../sim_kit.h"

struct sleeper {
    int64_t iters, sleep_us, work;
};

static const struct sim_key keys[] = { SIM_KEY(struct sleeper, iters), SIM_KEY(struct sleeper, sleep_us),
                                       SIM_KEY(struct sleeper, work), { 0 } };

static void step(struct sproc *sp, uint64_t t)
{
    const struct sleeper *s = SIM_STATE(sjob_of(sp->p.job), struct sleeper);
    if (job_begin(sp, t))
        return;
    if (sp->phase == 0) {
        if (sp->iter >= (uint64_t)s->iters)
            return job_end(sp, t);
        sp->phase = 1;
        return core_compute(sp, t, (uint64_t)((double)s->work * calib.sleeper_unit + calib.syscall));
    }
    sp->phase = 0;
    sp->iter++;
    core_block(sp, t, (uint64_t)s->sleep_us * 1000);
}

static const struct sim_app sleeper = {
    .name = "sleeper", .keys = keys, .heap_kb = 4, .step = step,
};
SIM_APP(sleeper);
