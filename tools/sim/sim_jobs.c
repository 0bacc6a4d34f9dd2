/*
 * sim_jobs.c - the jobs of the run: the kernel's struct job (kernel/proc.h) and beside each the engine's
 * struct sjob and its processes (sim.h). Data only, at the bottom of the engine: every engine file reads it,
 * and it calls nothing.
 */
#include "sim.h"

struct job jobs[NJOB];
int njobs;
struct sjob sjobs[NJOB];
struct sproc *sprocs[NJOB][SL_MAX_PROCS];
int fg_live;
