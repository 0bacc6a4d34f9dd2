/*
 * ulog.h - the library's event logs (abi.h, "the library's event log"): with trace=on each process of a
 * job gets a ring the user library writes and the kernel dumps after its own trace, on the same clock.
 *
 * Ownership. The kernel allocates a job's logs at admission (ulog_job_init), maps them read/write into
 * the job's address space, and takes them out again before the address space is freed (ulog_job_unmap):
 * the pages stay the kernel's until the dump, so a finished job's events are still there at the end.
 *
 * The clock. Reading `time` from U-mode costs QEMU a call into the host's clock (~75 ns here, against
 * ~9 ns for the rest of a record); `cycle` is the host's time-stamp counter and costs half. So where
 * every hart's cycle runs in step with time (checked at boot from each hart's anchor pair: the boot
 * hart's rate predicts each hart's time from its cycle to within ULOG_SKEW_TICKS), records carry cycles
 * and the dump converts them with the rate between the boot anchor and the dump. Elsewhere (a counter
 * that firmware offsets per hart, or inhibits) records carry time, as the kernel's own.
 * Everything in them is written by the job and untrusted; the dump reads each field once and bounds it.
 */
#ifndef ULOG_H
#define ULOG_H

#include "proc.h"

void ulog_clock_anchor(int hart);   /* each hart as it starts: a (time, cycle) pair read back to back */
void ulog_clock_choose(void);        /* boot hart, every hart started: may records carry cycles? */
void ulog_set_njobs(int n);           /* the scenario's job count, for the dump (launcher_init: no call up) */
void ulog_job_init(struct job *j);   /* at admission, after info_init: sets info->ulog_cap (0: no logs) */
void ulog_job_unmap(struct job *j);  /* before uvm_free of the job's page table */

#endif
