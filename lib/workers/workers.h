/*
 * workers.h - worker runs: an app's P logical workers as user-level threads that follow the job's
 * allotment (workers.c; the top of the library's layers, lib/LAYERS).
 */
#ifndef SL_WORKERS_H
#define SL_WORKERS_H

#include <stddef.h>
#include "schedlab.h"
#include "threads/uthread.h"

/* Process 0 only: sl_run_procs' contract, but the nprocs workers fn(arg, id) are user-level threads,
   worker i pinned to process i at start: they follow the job's allotment under process control.
   Once per job. Inside a worker sl_worker_id() is its id (threads/uthread.h). What a run adds to an
   app's memory: SL_WORKERS_MEM_PER_PROC, SL_WORKERS_MEM_CONST (threads/uthread.h). */
void sl_run_workers(sl_workfn fn, void *arg);
/* "suspends=.. resumes=.. react_us=.. react_max_us=.." of the last worker run when the job adapts
   (process control), else nothing; returns the length. sl_report appends them by itself. */
int  sl_workers_keys(char *buf, size_t cap);

#endif
