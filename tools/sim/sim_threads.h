/*
 * sim_threads.h - the user-level thread apps of Markatos chapter 4 in the simulator (sim_threads.c has the
 * model): what sim_work.c calls for a job whose program is a thread program rather than a barrier program.
 */
#ifndef SIM_THREADS_H
#define SIM_THREADS_H
#include <stddef.h>
#include <stdint.h>

struct job;
struct sproc;

/* 1: j is a thread app (gauss variant=fine), set up; 0: it is not one; -1: one the model refuses, with a
   message in err. */
int threads_setup(struct job *j, char *err, size_t errlen);
/* sp's next action from t in the thread program (after the job's start); 0 when its part is over: the
   caller ends it (join, check, exit). */
int threads_step(struct sproc *sp, uint64_t t);
/* The RESULT keys process 0 reports ("par_us=... copies=... threads=..."). */
const char *threads_keys(struct job *j);
void threads_free(void);

#endif
