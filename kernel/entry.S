/*
 * entry.S - where each hart enters the kernel from OpenSBI, in S-mode with the MMU off.
 *   boot hart:        _entry(a0 = hart id, a1 = device tree), on the boot stack
 *   other harts:      _secondary_entry(a0 = hart id, a1 = hart index), started by SBI HSM hart_start
 * Interrupts stay globally off in S-mode (sstatus.SIE = 0) for the kernel's whole life:
 * the kernel is never interrupted; interrupts are taken only from U-mode or polled by idle harts.
 */
#include "param.h"

.section .text.entry
.globl _entry
_entry:
    csrw sie, zero
    csrw sscratch, zero
    mv tp, zero                 /* mycpu() is NULL until boot_main knows our hart index */
    /* Only the first hart to get here boots. On a heavily loaded host the firmware has been seen to
       send a second hart here; it must not clear .bss under the boot hart: it joins as a secondary
       that started itself (late_secondary_main). */
    la t0, boot_claimed
    li t1, 1
    amoswap.w.aqrl t1, t1, (t0)
    bnez t1, _late_entry
    la sp, boot_stack
    li t0, KSTACK_SIZE
    add sp, sp, t0
    /* clear .bss: the boot stack is in it, but nothing is on the stack yet. 64 bytes a round while they
       fit (the process table makes .bss megabytes, and every instruction here is a deterministic boot's
       host time), then a word a round */
    la t0, bss_start
    la t1, bss_end
    addi t2, t1, -64
1:  bgtu t0, t2, 4f
    sd zero, 0(t0)
    sd zero, 8(t0)
    sd zero, 16(t0)
    sd zero, 24(t0)
    sd zero, 32(t0)
    sd zero, 40(t0)
    sd zero, 48(t0)
    sd zero, 56(t0)
    addi t0, t0, 64
    j 1b
4:  bgeu t0, t1, 2f
    sd zero, 0(t0)
    addi t0, t0, 8
    j 4b
2:  call boot_main
3:  wfi
    j 3b

_late_entry:
    li t0, NHART_STACKS
    bgeu a0, t0, 5f             /* no stack slot for such a hart id: stay parked */
    la sp, hart_stacks          /* sp = hart_stacks + (hart id + 1) * KSTACK_SIZE */
    addi t0, a0, 1
    li t1, KSTACK_SIZE
    mul t0, t0, t1
    add sp, sp, t0
    call late_secondary_main
5:  wfi
    j 5b

.globl _secondary_entry
_secondary_entry:
    csrw sie, zero
    csrw sscratch, zero
    mv tp, zero                 /* mycpu() is NULL until boot_main knows our hart index */
    /* sp = hart_stacks + (index + 1) * KSTACK_SIZE */
    la sp, hart_stacks
    addi t0, a1, 1
    li t1, KSTACK_SIZE
    mul t0, t0, t1
    add sp, sp, t0
    call secondary_main
4:  wfi
    j 4b

.section .bss
.balign 16
.globl boot_stack
boot_stack:
    .space KSTACK_SIZE

.section .data
.balign 4
boot_claimed: .word 0           /* in .data, not .bss: it must survive the boot hart's .bss clearing */
