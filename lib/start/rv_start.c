/*
 * rv_start.c - the start code on the schedlab kernel: process 0 of a job, from _start (rv_crt0.S). It
 * sets up the process (the platform's part), starts the library (sl_lib_init), runs the app's main and
 * exits with its status. The top of the library's layers (lib/LAYERS): it calls every layer it needs
 * and the app; nothing calls it but _start. On the host, lib/start/host_main.c plays this part.
 */
#ifdef SL_TARGET_KERNEL

#include "schedlab.h"
#include "wait/wait.h"
#include "barriers/barrier.h"

int main(void);

__attribute__((noreturn)) void sl_start0(void)
{
    sl_plat_proc0();
    sl_lib_init();
    if (sl_wait_stats_start()) /* policy=adaptive: the waits and barriers publish (base/syncstat.h) */
        sl_barrier_stats_start();
    sl_sys_exit(main());
}

#endif
