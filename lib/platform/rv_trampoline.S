/*
 * rv_trampoline.S - where every process made by SYS_proc_create starts on the schedlab kernel (RISC-V,
 * U-mode): the kernel starts it with a0 = arg, a1 = its index, sp = a fresh stack, ra = 0. Its C half
 * (sl_proc_start in rv_sys.c) never returns; it ends in SYS_exit. Process 0's entry, _start, is the
 * start code's (lib/start/rv_crt0.S): it starts the library and the app, which lie above this layer.
 */
#ifdef SL_TARGET_KERNEL
#include "platform/rv_entry.h"

.section .text.entry, "ax"
.balign 4
.globl sl_proc_trampoline
sl_proc_trampoline:
    process_entry
    call sl_proc_start          /* (arg, index) pass through in a0, a1 */
2:  j 2b

#endif
