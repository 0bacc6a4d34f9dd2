/*
 * vectors.S - the trap vector and the return to U-mode.
 *
 * Model: sscratch holds the running process's trapframe while the hart is in U-mode and 0 while it is in
 * S-mode. A trap from U-mode saves x1..x31 and sepc into that trapframe, switches to the process's
 * kernel stack and the hart's tp (struct cpu *), and calls usertrap(tf). A trap from S-mode can only be a
 * kernel fault (the kernel runs with interrupts off): it goes to kernel_fault(), which prints PANIC.
 */
#include "param.h"

.section .text
.balign 4
.globl trap_vector
trap_vector:
    csrrw t6, sscratch, t6          /* t6 = trapframe (from U) or 0 (from S); sscratch = user t6 */
    beqz t6, from_kernel
    sd x1, 0(t6)
    sd x2, 8(t6)
    sd x3, 16(t6)
    sd x4, 24(t6)
    sd x5, 32(t6)
    sd x6, 40(t6)
    sd x7, 48(t6)
    sd x8, 56(t6)
    sd x9, 64(t6)
    sd x10, 72(t6)
    sd x11, 80(t6)
    sd x12, 88(t6)
    sd x13, 96(t6)
    sd x14, 104(t6)
    sd x15, 112(t6)
    sd x16, 120(t6)
    sd x17, 128(t6)
    sd x18, 136(t6)
    sd x19, 144(t6)
    sd x20, 152(t6)
    sd x21, 160(t6)
    sd x22, 168(t6)
    sd x23, 176(t6)
    sd x24, 184(t6)
    sd x25, 192(t6)
    sd x26, 200(t6)
    sd x27, 208(t6)
    sd x28, 216(t6)
    sd x29, 224(t6)
    sd x30, 232(t6)
    csrrw t5, sscratch, zero        /* t5 = user t6; sscratch = 0: we are in S-mode now */
    sd t5, 240(t6)
    csrr t5, sepc
    sd t5, TF_EPC(t6)
    ld sp, TF_KSP(t6)
    ld tp, TF_KTP(t6)
    mv a0, t6
    call usertrap                   /* never returns: it leaves through user_return */
1:  j 1b

from_kernel:
    csrrw t6, sscratch, t6          /* restore t6; sscratch = 0 again */
    addi sp, sp, -16
    sd ra, 8(sp)
    csrr a0, scause
    csrr a1, sepc
    csrr a2, stval
    mv a3, sp
    call kernel_fault               /* prints PANIC and exits QEMU; never returns */
2:  j 2b

/* user_return(struct trapframe *tf): enter U-mode with the registers in tf. The caller has set
   sstatus.SPP = 0 and the process's tf->kernel_tp/kernel_sp. */
.globl user_return
user_return:
    ld t0, TF_EPC(a0)
    csrw sepc, t0
    csrw sscratch, a0
    ld x1, 0(a0)
    ld x2, 8(a0)
    ld x3, 16(a0)
    ld x4, 24(a0)
    ld x5, 32(a0)
    ld x6, 40(a0)
    ld x7, 48(a0)
    ld x8, 56(a0)
    ld x9, 64(a0)
    ld x11, 80(a0)
    ld x12, 88(a0)
    ld x13, 96(a0)
    ld x14, 104(a0)
    ld x15, 112(a0)
    ld x16, 120(a0)
    ld x17, 128(a0)
    ld x18, 136(a0)
    ld x19, 144(a0)
    ld x20, 152(a0)
    ld x21, 160(a0)
    ld x22, 168(a0)
    ld x23, 176(a0)
    ld x24, 184(a0)
    ld x25, 192(a0)
    ld x26, 200(a0)
    ld x27, 208(a0)
    ld x28, 216(a0)
    ld x29, 224(a0)
    ld x30, 232(a0)
    ld x31, 240(a0)
    ld x10, 72(a0)
    sret

