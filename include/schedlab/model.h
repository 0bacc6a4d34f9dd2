/*
 * model.h - what the kernel and the machine-model plugin (tools/model/) share. The plugin cannot read guest
 * registers or memory (QEMU 7.2's plugin API v1); it sees addresses. So the kernel tells it things by which
 * address it touches: a store to model_marks[j] says "this hart now runs a process of job j" (0: none), and
 * the calibration loop's instructions, at addresses the plugin is given, time one emulated instruction.
 * Nothing here runs unless the scenario says model= (tools/model/README.md).
 */
#ifndef SCHEDLAB_MODEL_H
#define SCHEDLAB_MODEL_H

#define MODEL_MARKS        128      /* bytes of model_marks: job ids 1..SCEN_MAX_JOBS, 0 = no job */
#define MODEL_CALIB_ITERS  16384    /* iterations of model_calib_loop per run */
#define MODEL_CALIB_RUNS   7        /* runs; the fastest counts */
#define MODEL_CALIB_BODY   32       /* instructions per iteration (kernel/calib_loops.S) */

#endif
