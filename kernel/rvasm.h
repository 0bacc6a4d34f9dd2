/*
 * rvasm.h - the RISC-V instructions the kernel's C code uses inline: CSR access, the time CSR, tp (the
 * running hart's struct cpu), fences and wfi. All inline; no state. Kept apart from the constants
 * (riscv.h) so that a host build of the policies (-DSCHEDLAB_SIM) can put its simulated hart's read_tp()
 * and rdtime() in their place, from its own build (tools/sim/sim.mk's SIM_ARCH); the kernel's code is the
 * same either way.
 */
#ifndef RVASM_H
#define RVASM_H

#include <stdint.h>

#define csr_read(csr) ({ uint64_t __v; asm volatile("csrr %0, " #csr : "=r"(__v)); __v; })
#define csr_write(csr, v) asm volatile("csrw " #csr ", %0" ::"rK"((uint64_t)(v)))
#define csr_set(csr, v) asm volatile("csrs " #csr ", %0" ::"rK"((uint64_t)(v)))
#define csr_clear(csr, v) asm volatile("csrc " #csr ", %0" ::"rK"((uint64_t)(v)))

/* tp: the running hart's struct cpu in S-mode (cpu.h mycpu, spinlock.h holders) */
static inline uintptr_t read_tp(void)
{
    uintptr_t tp;
    asm volatile("mv %0, tp" : "=r"(tp));
    return tp;
}

static inline uint64_t rdtime(void)
{
    uint64_t t;
    asm volatile("rdtime %0" : "=r"(t));
    return t;
}

/* The cycle CSR: on QEMU the host's time-stamp counter (or, under -icount, the instruction count), which
   U-mode reads at half the cost of `time` (ulog.c) */
static inline uint64_t rdcycle(void)
{
    uint64_t c;
    asm volatile("rdcycle %0" : "=r"(c));
    return c;
}

static inline void sfence_vma(void) { asm volatile("sfence.vma zero, zero" ::: "memory"); }
static inline void wfi(void) { asm volatile("wfi"); }
static inline void cpu_relax(void) { asm volatile("nop; nop; nop; nop"); }

#endif
