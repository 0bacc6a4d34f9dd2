/*
 * hostjob.h - host unit tests play the kernel for one job at a time on the host backend (lib/platform/host_*.c):
 * fill the emulated info page, start process 0, let it run body() after the library's start-up, and wait
 * until every process of the job has exited. host_job itself is the backend's (lib/platform/host_sys.c).
 */
#ifndef HOSTJOB_H
#define HOSTJOB_H

#include <pthread.h>
#include <string.h>
#include "schedlab.h"
#include "platform/host.h"

static void (*hostjob_main)(void);
/* Optional: runs in process 0 right after sl_lib_init, before the body (e.g. to look at the library's
   state outside any thread run). */
static void (*hostjob_at_start)(void);

static void hostjob_proc0(void *arg, int index)
{
    (void)arg;
    (void)index;
    sl_lib_init();
    if (hostjob_at_start)
        hostjob_at_start();
    hostjob_main();
    sl_sys_exit(0);
}

/* Run body() as process 0 of a fresh job `app` with `procs` processes; return when all have exited. */
static void hostjob_run(const char *app, int procs, void (*body)(void))
{
    struct sl_info *in = &host_job.info;

    memset(in, 0, sizeof *in);
    in->magic = SL_INFO_MAGIC;
    in->job_id = 1;
    in->nharts = 2;
    in->nprocs = (uint32_t)procs;
    in->nnodes = 1;
    in->timebase_hz = 1000000000u;
    in->seed = 7;
    strncpy(in->app, app, sizeof in->app - 1);
    in->fg_live = 1;
    host_job.created = host_job.live = 0;
    host_job.have_result = 0;
    hostjob_main = body;
    pthread_mutex_lock(&host_job.lock);
    host_start_proc(0, hostjob_proc0, NULL);
    while (host_job.live > 0)
        pthread_cond_wait(&host_job.exited, &host_job.lock);
    pthread_mutex_unlock(&host_job.lock);
    for (int i = 0; i < host_job.created; i++)
        pthread_join(host_job.tid[i], NULL);
}

#endif
