/*
 * rv_entry.h - (assembly) what every process entry does first on the schedlab kernel: gp, s0 (the frame
 * pointer) and ra as every process starts. Neither entry gets gp from the kernel, so both load it
 * first, with relaxation off (a relaxed `la gp` would be rewritten relative to the gp it is setting).
 * Frame pointer and ra are cleared so a backtrace ends there. Used by platform/rv_trampoline.S and
 * start/rv_crt0.S.
 */
#ifndef SL_RV_ENTRY_H
#define SL_RV_ENTRY_H

.macro process_entry
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    li s0, 0
    li ra, 0
.endm

#endif
