/*
 * intr_probe.S - intr.c's probe of the Sstc stimecmp CSR. Its own file (it was in entry.S) so that intr.c,
 * a leaf (LAYERS.md), calls nothing in the boot layer above it.
 */
.section .text
/* long intr_probe_stimecmp(void): 0 if this hart may read the Sstc stimecmp CSR, -1 if the read traps
   (the firmware left menvcfg.STCE clear). Runs with interrupts off; stvec points at the catch for the one
   instruction, whose trap only records itself (sstatus.SIE stays 0, and we never sret from it). */
.globl intr_probe_stimecmp
.balign 4
intr_probe_stimecmp:
    csrr t0, stvec
    la t1, 1f
    csrw stvec, t1
    li a0, 0
    csrr t2, 0x14d
    j 2f
.balign 4
1:  li a0, -1
2:  csrw stvec, t0
    ret
