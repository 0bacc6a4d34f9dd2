/*
 * host.h - private to the Linux backend (host_*.c): the emulated job.
 *
 * On the host one Linux process is one schedlab job. The main thread plays
 * the kernel: it validates the command line against the app's spec, fills
 * in the info page, starts process 0 on a pthread, waits until every
 * process has exited, then prints the RESULT line. Processes are pthreads
 * with SL_STACK_SIZE stacks (times a factor under sanitizers), so stack
 * overuse shows up on the host too.
 */
#ifndef SL_HOST_H
#define SL_HOST_H

#ifndef SL_TARGET_KERNEL

#include <pthread.h>
#include <stddef.h>
#include "schedlab/abi.h"
#include "platform/host_spin.h"

struct host_job {
    struct sl_info  info;       /* the emulated info page */
    pthread_mutex_t lock;       /* guards the fields below */
    pthread_cond_t  exited;     /* signalled when live drops */
    pthread_t       tid[SL_MAX_PROCS];
    int             created;    /* processes started, including process 0 */
    int             live;       /* processes started and not yet exited */
    int             have_result, result_ok;
    char            result[SL_RESULT_MAX + 1];
    unsigned long   sysbytes;   /* memory handed out by SYS_alloc */
    struct host_crowd crowd;    /* runnable processes vs CPUs (host_spin.h); atomics, not the lock */
    struct sl_sync  sync[SL_MAX_PROCS]; /* the emulated sync statistics page: a process started while the
                                           info page has SL_INFO_SYNCSTAT gets its record, as on the kernel */
};

extern struct host_job host_job;

/* host_sys.c: start process index running fn(arg, index) on a new pthread. Process 0's start takes
   the job's CPU count from the caller's affinity mask (host_spin.h), so a test that restricts its own
   mask before starting a job runs the job on those CPUs and with that estimate. */
int host_start_proc(int index, void (*fn)(void *, int), void *arg);

/* host_scenario.c: an app's command-line keys through the kernel's scenario parser, as the one job
   "job=<app>:<tok>,<tok>..." with seed=<seed>; 0 and *job filled, or -1 and err says why. */
struct scen_job;
int  host_parse_job(const char *app, unsigned long long seed, int ntok, char **tok,
                    struct scen_job *job, char *err, size_t errsz);

#endif
#endif
