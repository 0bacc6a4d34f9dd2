/*
 * calib_loops.S - the calibration card's two loops that must be exact instructions (calib.c).
 */
.section .text

/* calib_vector: the trap vector during the syscall_ns loop. An ebreak (4 bytes) from S-mode lands here: save
   x1..x30 in the frame sscratch points to (t6 is swapped with sscratch, as trap_vector does), step sepc over
   the ebreak, restore them and sret. Any other trap (the kernel runs with interrupts off, so a fault) goes to
   kernel_fault, as it would through trap_vector. */
.balign 4
.globl calib_vector
calib_vector:
    csrrw t6, sscratch, t6
    .set off, 0
    .irp r, x1,x2,x3,x4,x5,x6,x7,x8,x9,x10,x11,x12,x13,x14,x15,x16,x17,x18,x19,x20,x21,x22,x23,x24,x25,x26,x27,x28,x29,x30
    sd \r, off(t6)
    .set off, off + 8
    .endr
    csrr t0, scause
    li t1, 3                        /* breakpoint: any other trap here is a kernel bug, as in trap_vector */
    bne t0, t1, not_ebreak
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    .set off, 0
    .irp r, x1,x2,x3,x4,x5,x6,x7,x8,x9,x10,x11,x12,x13,x14,x15,x16,x17,x18,x19,x20,x21,x22,x23,x24,x25,x26,x27,x28,x29,x30
    ld \r, off(t6)
    .set off, off + 8
    .endr
    csrrw t6, sscratch, t6
    sret
not_ebreak:
    csrr a0, scause
    csrr a1, sepc
    csrr a2, stval
    mv a3, sp
    call kernel_fault               /* prints PANIC and exits QEMU; never returns */
1:  j 1b

/* calib_synth(units): units > 0 synth work units, the loop of apps/synth.c's work() as gcc -O2 compiles it:
   h = h * A + C (mul, add), d += 1.0 (fadd.d), count, branch. The caller enables the FPU (sstatus.FS). */
.globl calib_synth
calib_synth:
    .option push
    .option arch, +d
    li t0, 6364136223846793005
    li t1, 1442695040888963407
    li t2, 0x3ff0000000000000        /* 1.0 */
    fmv.d.x ft1, t2
    fmv.d.x ft0, zero
    li t3, 1
    li t4, 0
1:  mul t3, t3, t0
    addi t4, t4, 1
    fadd.d ft0, ft0, ft1
    add t3, t3, t1
    bne a0, t4, 1b
    ret
    .option pop

/* model_calib_loop(iters, buf): the machine model's cycle (include/schedlab/model.h, tools/model/README.md):
   iters > 0 rounds of exactly MODEL_CALIB_BODY = 32 instructions - 6 loads and 2 stores to buf's first line
   (L1 hits in any profile), 22 integer operations, the count and the branch - about the mix of the bundled
   apps' inner loops. The plugin times the stretch from this label to model_calib_loop_end by the instructions'
   addresses; calib_model (calib.c) times the call with the time CSR. Both divide by iters * 32. */
.globl model_calib_loop
.globl model_calib_loop_end
.balign 4
model_calib_loop:
    .option push
    .option norvc
    li t0, 1
    li t1, 3
1:  ld t2, 0(a1)
    add t0, t0, t1
    xor t1, t1, t0
    ld t3, 8(a1)
    slli t4, t0, 3
    add t0, t0, t4
    ld t4, 16(a1)
    srli t5, t1, 5
    xor t1, t1, t5
    add t2, t2, t3
    ld t5, 24(a1)
    add t0, t0, t2
    xor t1, t1, t4
    ld t6, 32(a1)
    or t2, t0, t1
    and t3, t0, t5
    add t0, t0, t6
    ld a2, 40(a1)
    sub t1, t1, a2
    add t0, t0, t3
    xor t1, t1, t2
    sd t0, 48(a1)
    addi t2, t0, 7
    slli t3, t1, 1
    add t0, t0, t3
    sd t1, 56(a1)
    xor t1, t1, t2
    add t0, t0, t1
    srli t3, t0, 7
    xor t0, t0, t3
    addi a0, a0, -1
    bnez a0, 1b
model_calib_loop_end:
    ret
    .option pop
