/*
 * rv_uctx.S - user-level context switch for the schedlab kernel target
 * (rv64gc, lp64d). Used by uthread.c; the host twin is host_uctx_x86_64.S.
 *
 * A context is a stack pointer. The switch saves exactly what the calling
 * convention says a callee must preserve - ra, s0-s11, fs0-fs11 - in a
 * frame on the current stack, stores sp, loads the other sp and pops its
 * frame. Everything else is caller-saved: the compiler already assumes a
 * call clobbers it. Deliberately not saved:
 *   gp   the same for the whole job (crt0 loads it once per process)
 *   tp   the library's per-process pointer (platform.h): a thread that
 *        resumes on another process must see *that* process's tp
 *   fcsr rounding mode and flags stay with the process (all code runs in
 *        the default mode)
 *
 *   void  sl_uctx_switch(void **save_sp, void *new_sp)
 *   void *sl_uctx_init(void *top, void (*fn)(void *), void *arg)
 *         builds a frame below top (aligned down to 16) that, when switched
 *         to, calls fn(arg) with a 16-byte aligned sp and s0 (frame
 *         pointer) = 0; returns the sp to switch to. fn must never return.
 *   void  sl_uctx_call(void (*fn)(void *), void *arg, void **unwind_sp)
 *         calls fn(arg) on the current stack after saving the callee-saved
 *         registers in a frame there and its sp in *unwind_sp; a normal
 *         return from fn needs none of them back (fn kept them, as the ABI
 *         says), so only ra is reloaded: the saves are what a later
 *         sl_uctx_unwind needs.
 *   void  sl_uctx_unwind(void *unwind_sp)  (noreturn)
 *         abandons every frame above that of sl_uctx_call and returns from
 *         sl_uctx_call as if fn had returned (sl_thread_exit of a thread
 *         run on its joiner's stack, uthread.c).
 */
#ifdef SL_TARGET_KERNEL

#define FRAME 208       /* ra, s0-s11: 13 x 8; fs0-fs11: 12 x 8; rounded up to 16 */

.macro SAVE_FRAME          /* push a frame of ra, s0-s11, fs0-fs11 */
    addi sp, sp, -FRAME
    sd   ra,   0(sp)
    sd   s0,   8(sp)
    sd   s1,  16(sp)
    sd   s2,  24(sp)
    sd   s3,  32(sp)
    sd   s4,  40(sp)
    sd   s5,  48(sp)
    sd   s6,  56(sp)
    sd   s7,  64(sp)
    sd   s8,  72(sp)
    sd   s9,  80(sp)
    sd   s10, 88(sp)
    sd   s11, 96(sp)
    fsd  fs0, 104(sp)
    fsd  fs1, 112(sp)
    fsd  fs2, 120(sp)
    fsd  fs3, 128(sp)
    fsd  fs4, 136(sp)
    fsd  fs5, 144(sp)
    fsd  fs6, 152(sp)
    fsd  fs7, 160(sp)
    fsd  fs8, 168(sp)
    fsd  fs9, 176(sp)
    fsd  fs10, 184(sp)
    fsd  fs11, 192(sp)
.endm

.macro LOAD_FRAME          /* pop it */
    ld   ra,   0(sp)
    ld   s0,   8(sp)
    ld   s1,  16(sp)
    ld   s2,  24(sp)
    ld   s3,  32(sp)
    ld   s4,  40(sp)
    ld   s5,  48(sp)
    ld   s6,  56(sp)
    ld   s7,  64(sp)
    ld   s8,  72(sp)
    ld   s9,  80(sp)
    ld   s10, 88(sp)
    ld   s11, 96(sp)
    fld  fs0, 104(sp)
    fld  fs1, 112(sp)
    fld  fs2, 120(sp)
    fld  fs3, 128(sp)
    fld  fs4, 136(sp)
    fld  fs5, 144(sp)
    fld  fs6, 152(sp)
    fld  fs7, 160(sp)
    fld  fs8, 168(sp)
    fld  fs9, 176(sp)
    fld  fs10, 184(sp)
    fld  fs11, 192(sp)
    addi sp, sp, FRAME
.endm

.text
.balign 4
.globl sl_uctx_switch
.type sl_uctx_switch, @function
sl_uctx_switch:
    SAVE_FRAME
    sd   sp, 0(a0)
    mv   sp, a1
    LOAD_FRAME
    ret
.size sl_uctx_switch, . - sl_uctx_switch

.globl sl_uctx_call
.type sl_uctx_call, @function
sl_uctx_call:
    SAVE_FRAME
    sd   sp, 0(a2)
    mv   t0, a0
    mv   a0, a1
    jalr t0
    ld   ra, 0(sp)
    addi sp, sp, FRAME
    ret
.size sl_uctx_call, . - sl_uctx_call

/* The frame sl_uctx_call saved, as sl_uctx_switch loads one. */
.globl sl_uctx_unwind
.type sl_uctx_unwind, @function
sl_uctx_unwind:
    mv   sp, a0
    LOAD_FRAME
    ret
.size sl_uctx_unwind, . - sl_uctx_unwind

/* A fresh frame: ra = uctx_entry, s0 = 0, s1 = arg, s2 = fn. The other
   slots keep whatever the stack held: the first switch loads them into
   callee-saved registers, which nothing reads before writing (uctx_entry
   never returns, and fn saves what it uses), and an fld of any bits is
   harmless. Not zeroing them saves 22 stores per fresh thread. */
.globl sl_uctx_init
.type sl_uctx_init, @function
sl_uctx_init:
    andi a0, a0, -16
    addi a0, a0, -FRAME
    la   t0, uctx_entry
    sd   t0,  0(a0)
    sd   zero, 8(a0)
    sd   a2, 16(a0)
    sd   a1, 24(a0)
    ret
.size sl_uctx_init, . - sl_uctx_init

/* First switch into a context lands here (via ret): fn(arg). */
.type uctx_entry, @function
uctx_entry:
    mv   a0, s1
    jalr s2
    ebreak                  /* fn returned: a fault ends the job */
.size uctx_entry, . - uctx_entry

#endif
