/*
 * apps/knary.c - knary's model (apps/knary.c), mode=steal: N = 1 + d + ... + d^(h-1) nodes of `work` units
 * (calib.synth_unit) and a user-level switch (calib.uthread_yield) each, in one pool the processes take
 * batches of N/(256 P) from until it is empty: work stealing as a perfectly balanced pool (s, the serial
 * children, is left out: the default s=1 leaves parallelism far beyond 64 harts). Under process control
 * every batch is a safe point: a process beyond the allotment sleeps, one below it wakes a sleeper; no
 * barrier, no sync statistics but its start. Not modelled (refused): other modes.
 */
#include <string.h>
#include "../sim.h"
#include "../sim_kit.h"

struct knary {
    int64_t h, d, work;
    int64_t left, batch; /* nodes left in the pool, a batch */
};

static const struct sim_key keys[] = { SIM_KEY(struct knary, h), SIM_KEY(struct knary, d), SIM_KEY(struct knary, work),
                                       { 0 } };

static int setup(struct job *j, struct sjob *w, char *err, size_t errlen)
{
    struct knary *k = SIM_STATE(w, struct knary);
    char v[32];
    if (scenario_arg(j->scen->args, "mode", v, sizeof v) == 0 && strcmp(v, "steal"))
        return snprintf(err, errlen, "job=knary: mode=%s is not modelled in the simulator (steal only)", v), -1;
    for (int64_t l = 0, level = 1; l < k->h; l++, level *= k->d)
        k->left += level;
    k->batch = k->left / (256 * j->nprocs) > 0 ? k->left / (256 * j->nprocs) : 1;
    return 0;
}

/* The next batch of nodes from the pool, or process control's sleep, or the end. */
static void step(struct sproc *sp, uint64_t t)
{
    struct job *j = sp->p.job;
    struct sjob *w = sjob_of(j);
    struct knary *k = SIM_STATE(w, struct knary);
    if (job_begin(sp, t))
        return;
    int P = j->nprocs, want = w->adaptive && w->allot > 0 && w->allot < P ? w->allot : P;
    if (k->left > 0 && w->adaptive && sp->p.idx >= want && sp->p.idx != 0) {
        sp->suspended = 1;
        w->active--;
        return core_block(sp, t, 0); /* suspended at a safe point until a resume */
    }
    sp->suspended = 0;
    for (int i = 1; i < P && (w->active < want || k->left == 0); i++) {
        struct sproc *o = sprocs[j->id - 1][i];
        if (o && o->suspended && o->act == A_BLOCKED && o->p.state == P_BLOCKED) {
            o->suspended = 0;
            w->active++;
            core_wake(o, t);
        }
    }
    if (k->left == 0)
        return job_end(sp, t);
    int64_t n = k->left < k->batch ? k->left : k->batch;
    k->left -= n;
    core_compute(sp, t, (uint64_t)((double)n * ((double)k->work * calib.synth_unit + calib.uthread_yield)));
}

static const struct sim_app knary = {
    .name = "knary", .keys = keys, .control = 1, .setup = setup, .step = step,
};
SIM_APP(knary);
