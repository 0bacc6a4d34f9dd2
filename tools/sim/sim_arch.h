/*
 * sim_arch.h - the simulated hart in place of kernel/rvasm.h: a host build of kernel code forces it in
 * ahead of every source (sim.mk's SIM_ARCH: -DSCHEDLAB_SIM -include), as kernel.h includes rvasm.h only
 * for the kernel. The policies call mycpu() and trace_rec(): here tp is the hart
 * whose event the engine is handling and the time CSR is that hart's virtual clock, in ns (the
 * simulator's timebase is 1 GHz). Nothing else of the instructions is provided: a policy that needs
 * more of the hardware than the core's services fails to compile or link here, loudly.
 */
#ifndef SIM_ARCH_H
#define SIM_ARCH_H

#include <stdint.h>

extern uintptr_t sim_tp;  /* struct cpu * of the hart handling the current event */
extern uint64_t sim_now;  /* the current event's time, ns */

static inline uintptr_t read_tp(void) { return sim_tp; }
static inline uint64_t rdtime(void) { return sim_now; }

#endif
