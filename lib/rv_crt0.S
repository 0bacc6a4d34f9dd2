/*
 * rv_crt0.S - process entry points on the schedlab kernel (RISC-V, U-mode).
 *
 * _start              process 0 of a job. The kernel sets sp; a0..a7 are undefined.
 * sl_proc_trampoline  every process made by SYS_proc_create: the kernel starts it
 *                     with a0 = arg, a1 = its index, sp = a fresh stack, ra = 0.
 *
 * Neither gets gp from the kernel, so both load it first, with relaxation off
 * (a relaxed `la gp` would be rewritten relative to the gp it is setting).
 * Frame pointer and ra are cleared so a backtrace ends here. The C halves
 * (sl_start0, sl_proc_start in rv_sys.c) never return; they end in SYS_exit.
 */
#ifdef SL_TARGET_KERNEL

/* gp, s0 (frame pointer) and ra as every process starts; the C half then never returns */
.macro process_entry
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    li s0, 0
    li ra, 0
.endm

.section .text.entry, "ax"
.balign 4
.globl _start
_start:
    process_entry
    call sl_start0
1:  j 1b

.globl sl_proc_trampoline
sl_proc_trampoline:
    process_entry
    call sl_proc_start          /* (arg, index) pass through in a0, a1 */
2:  j 2b

#endif
