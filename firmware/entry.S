/*
 * entry.S - where every hart starts (QEMU's reset vector jumps here in M-mode with a0 = hart id,
 * a1 = device tree, a2 = the loader's struct fw_dynamic_info), and the M-mode trap vector.
 *
 * Each hart runs on its own stack slot (FW_STACK bytes, by hart id); mscratch holds the slot's top while
 * the hart is in S-mode, so the trap vector can switch to it. A hart id without a slot parks forever.
 */
#include "fw.h"

.section .text.entry
.globl _start
_start:
    csrw mie, zero
    la t0, fw_trap_vector
    csrw mtvec, t0
    li t0, FW_MAX_HARTS
    bgeu a0, t0, 2f
    la sp, fw_stacks            /* sp = fw_stacks + (hart id + 1) * FW_STACK */
    addi t0, a0, 1
    li t1, FW_STACK
    mul t0, t0, t1
    add sp, sp, t0
    csrw mscratch, sp
    call fw_main                /* does not return: it leaves for S-mode with mret */
2:  wfi
    j 2b

/* A trap from S- or U-mode (an SBI call, the M-mode software interrupt) or from M-mode itself (a fault in
   this firmware: fw_trap reports it and ends the boot). Saves every register but sp in a struct fw_regs on
   the hart's stack, calls fw_trap(regs) and returns with mret. */
.balign 4
.globl fw_trap_vector
fw_trap_vector:
    csrrw sp, mscratch, sp      /* sp = this hart's firmware stack, mscratch = the interrupted sp */
    addi sp, sp, -FW_REGS_SIZE
    sd x1, 8(sp)
    sd x3, 24(sp)
    sd x4, 32(sp)
    sd x5, 40(sp)
    sd x6, 48(sp)
    sd x7, 56(sp)
    sd x8, 64(sp)
    sd x9, 72(sp)
    sd x10, 80(sp)
    sd x11, 88(sp)
    sd x12, 96(sp)
    sd x13, 104(sp)
    sd x14, 112(sp)
    sd x15, 120(sp)
    sd x16, 128(sp)
    sd x17, 136(sp)
    sd x18, 144(sp)
    sd x19, 152(sp)
    sd x20, 160(sp)
    sd x21, 168(sp)
    sd x22, 176(sp)
    sd x23, 184(sp)
    sd x24, 192(sp)
    sd x25, 200(sp)
    sd x26, 208(sp)
    sd x27, 216(sp)
    sd x28, 224(sp)
    sd x29, 232(sp)
    sd x30, 240(sp)
    sd x31, 248(sp)
    csrr t0, mscratch
    sd t0, 16(sp)               /* the interrupted sp */
    mv a0, sp
    call fw_trap
    ld t0, 16(sp)
    csrw mscratch, t0
    ld x1, 8(sp)
    ld x3, 24(sp)
    ld x4, 32(sp)
    ld x5, 40(sp)
    ld x6, 48(sp)
    ld x7, 56(sp)
    ld x8, 64(sp)
    ld x9, 72(sp)
    ld x10, 80(sp)
    ld x11, 88(sp)
    ld x12, 96(sp)
    ld x13, 104(sp)
    ld x14, 112(sp)
    ld x15, 120(sp)
    ld x16, 128(sp)
    ld x17, 136(sp)
    ld x18, 144(sp)
    ld x19, 152(sp)
    ld x20, 160(sp)
    ld x21, 168(sp)
    ld x22, 176(sp)
    ld x23, 184(sp)
    ld x24, 192(sp)
    ld x25, 200(sp)
    ld x26, 208(sp)
    ld x27, 216(sp)
    ld x28, 224(sp)
    ld x29, 232(sp)
    ld x30, 240(sp)
    ld x31, 248(sp)
    addi sp, sp, FW_REGS_SIZE
    csrrw sp, mscratch, sp      /* back to the interrupted sp; mscratch = the stack's top again */
    mret
