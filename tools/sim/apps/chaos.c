/*
 * apps/chaos.c - chaos's model (apps/chaos.c), two of its modes. mode=deadlock: every process waits for
 * ever on a futex nobody wakes; mode=exit-blocked: process 0 creates the others, reports blocked=P-1 and
 * exits while they wait for ever. The kernel's core (life.c) finds and ends the deadlock, as on QEMU. It has
 * no workers to hand out: its other processes run their program at once.
 */
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"

struct chaos {
    int deadlock; /* mode=deadlock, else exit-blocked */
};

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    char v[32];
    int got = scenario_arg(j->scen->args, "mode", v, sizeof v) == 0;
    if (got && strcmp(v, "deadlock") && strcmp(v, "exit-blocked"))
        return snprintf(err, errlen, "job=chaos: mode=%s is not modelled in the simulator (deadlock and exit-blocked "
                                     "only)", v),
               -1;
    SIM_STATE(w, struct chaos)->deadlock = got && !strcmp(v, "deadlock");
    w->go = 1; /* no workers to hand out: its other processes run their program at once */
    return 0;
}

static void step(struct sproc *sp, uint64_t t)
{
    if (job_begin(sp, t))
        return;
    if (sp->p.idx != 0 || SIM_STATE(sjob_of(sp->p.job), struct chaos)->deadlock)
        return core_block(sp, t, 0); /* wait_forever: a word nobody changes or wakes */
    if (sp->life != L_CHECK) { /* exit-blocked: process 0 reports, then returns from main */
        sp->life = L_CHECK;
        job_report(sp->p.job, "blocked=%d", sp->p.job->nprocs - 1);
        return core_compute(sp, t, (uint64_t)calib.proc_end);
    }
    core_exit(sp, t);
}

static const struct sim_app chaos = {
    .name = "chaos", .setup = setup, .step = step,
};
SIM_APP(chaos);
