/*
 * contract.h - the console contract's BOOT, RESULT and SUMMARY lines (README "Reading the output",
 * docs/design.md "Contract: the console"), formatted in one place that the kernel (main.c, launcher.c)
 * and the simulator (tools/sim/sim_main.c) both link, so their lines cannot drift apart. Each function
 * writes one line, without its newline, into buf and returns its length (snprintf's: a line that does
 * not fit is cut). Portable: no lock, no clock, no hart.
 */
#ifndef CONTRACT_H
#define CONTRACT_H

#include "proc.h"

/* What BOOT says. The kernel's values; the simulator puts its own name on it (extra " sim=<calib>"). */
struct contract_boot {
    int harts, nodes;
    uint64_t mem_mb;
    const char *policies, *apps;
    int boot_hart;
    uint64_t boot_us;
    const char *background, *options, *timer, *ipi, *clock, *jobkeys, *idle, *model;
    uint64_t cycle_ps;
    const char *checks;             /* "on": built with KCHECKS (lock ranks, the policy contract) */
    const char *extra;              /* appended as is ("" for none) */
};
int contract_boot(char *buf, size_t len, const struct contract_boot *b);

/* The job's verdict: 1 ok, or 0 with why = "reason=..." (killed, an exit status, no verdict reported,
   its own check failed). */
int contract_verdict(const struct job *j, char *why, size_t len);

/* The ERROR line for a failure nobody reported when it happened (no verdict, or a failed own check),
   or 0 (and buf "") when there is none to print. */
int contract_failure(char *buf, size_t len, const struct job *j);

/* RESULT for done job j under policy on harts: times relative to t0 (time CSR ticks; time_us() converts),
   ok/why from contract_verdict, extra appended as is. */
int contract_result(char *buf, size_t len, const struct job *j, const char *policy, int harts, uint64_t t0,
                    int ok, const char *why, const char *extra);

int contract_summary(char *buf, size_t len, const char *policy, int harts, int jobs, int failed,
                     uint64_t makespan_us, const char *extra);

#endif
