/*
 * ulog.h - the library's event logs (abi.h, "the library's event log"): with trace=on each process of a
 * job gets a ring the user library writes and the kernel dumps after its own trace, on the same clock.
 *
 * Ownership. The kernel allocates a job's logs at admission (ulog_job_init), maps them read/write into
 * the job's address space, and takes them out again before the address space is freed (ulog_job_unmap):
 * the pages stay the kernel's until the dump, so a finished job's events are still there at the end.
 * Everything in them is written by the job and untrusted; the dump reads each field once and bounds it.
 */
#ifndef ULOG_H
#define ULOG_H

#include "proc.h"

void ulog_job_init(struct job *j);   /* at admission, after info_init: sets info->ulog_cap (0: no logs) */
void ulog_job_unmap(struct job *j);  /* before uvm_free of the job's page table */

#endif
