/*
 * rv_crt0.S - process 0's entry on the schedlab kernel (RISC-V, U-mode): _start, where the kernel starts
 * a job (sp set; a0..a7 undefined). Its C half, sl_start0 (rv_start.c), never returns; it ends in
 * SYS_exit. Every other process enters at the platform's sl_proc_trampoline.
 */
#ifdef SL_TARGET_KERNEL
#include "platform/rv_entry.h"

.section .text.entry, "ax"
.balign 4
.globl _start
_start:
    process_entry
    call sl_start0
1:  j 1b

#endif
