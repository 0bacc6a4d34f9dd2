/*
 * model.c - the kernel's side of the machine model (tools/model/README.md, include/schedlab/model.h).
 *
 * The model is a QEMU plugin that sees every guest access's physical address but cannot read registers or
 * memory. To charge each access to the job that made it, the kernel tells the plugin which job a hart runs by
 * the address it touches: a store to model_marks[j] on the dispatch of a process of job j, and to
 * model_marks[0] when that process leaves the hart (preempted, yielded, blocked, exited). The plugin sees the
 * store's address and the hart that made it; the value is never read.
 *
 * The hook is the trace's: every dispatch and every switch out already records an event (trace.h), behind one
 * load and branch of trace_enabled; TRACE_MODEL makes that branch store the mark too (model_mark, trace.h). Without model= in the
 * scenario the bit is never set and nothing here runs. Nothing in the kernel depends on a plugin being there:
 * without one the stores are ordinary stores.
 *
 * Paced (model=...,pace=R: tools/model/pace.h): a cycle is 1/R, so the kernel takes it from the spec instead of
 * measuring it, and model_pace_start - whose first instruction the plugin watches - starts the pacing just
 * before the calibration card and t0: the boot runs unpaced, everything timed runs paced.
 *
 * The simulator links this file too (it links trace.c), and never sets TRACE_MODEL.
 */
#include "kernel.h"
#include "trace.h"
#include "scenario.h"
#include "schedlab/model.h"

_Static_assert(MODEL_MARKS > SCEN_MAX_JOBS && (MODEL_MARKS & (MODEL_MARKS - 1)) == 0,
               "model_marks: a byte per job id and one for none, a power of two (trace.h masks the index)");

/* In .data, not .bss, so the boot's clearing of .bss is no mark (the plugin also takes only byte stores). */
uint8_t model_marks[MODEL_MARKS] __attribute__((aligned(64))) = { 1 };
char model_spec[SCEN_MODEL_LEN]; /* the canonical spec from model=, for BOOT; "" = none */
uint64_t model_cycle_ps;                   /* one emulated instruction, measured by calib_model (calib.c) */

/* trace_rec_at's path for a marked event while TRACE_MODEL is set (trace.h): the mark - model_marks[job]
   when this hart starts running a process of job, model_marks[0] when its process leaves the hart - then the
   record itself if trace=on too. */
void trace_model_rec(int hart, uint64_t t, enum trace_ev ev, int job, int proc, int arg)
{
    __atomic_store_n(&model_marks[ev == TR_RUN ? job & (MODEL_MARKS - 1) : 0], 1, __ATOMIC_RELAXED);
    if (trace_enabled & TRACE_ON)
        trace_ring_put(hart, t, ev, job, proc, arg);
}

/* R of a spec's pace=R (a whole key of the comma-separated spec), or 0 when it has none. The harness wrote the
   spec, and the scenario parser took only [a-z0-9_,=] characters: the digits need no further checking. */
uint64_t model_pace_rate(const char *spec)
{
    for (const char *k = spec; k; k = strchr(k, ',')) {
        k += *k == ',';
        if (!strncmp(k, "pace=", 5)) {
            uint64_t r = 0;
            for (k += 5; *k >= '0' && *k <= '9'; k++)
                r = r * 10 + (uint64_t)(*k - '0');
            return r;
        }
    }
    return 0;
}

/* From now on every dispatch and switch out is marked. Before t0: no process has run yet. */
void model_start(const char *spec)
{
    snprintf(model_spec, sizeof model_spec, "%s", spec);
    __atomic_or_fetch(&trace_enabled, TRACE_MODEL, __ATOMIC_RELEASE);
}

/* Paced boots start here (launcher_start, before the calibration card): the plugin hooks this function's first
   instruction. noinline, and with a side effect, so that it is called and has an instruction of its own. */
void __attribute__((noinline)) model_pace_start(void)
{
    __atomic_store_n(&model_marks[0], 1, __ATOMIC_RELAXED);
}
