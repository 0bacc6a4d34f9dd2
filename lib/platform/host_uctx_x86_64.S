/*
 * host_uctx_x86_64.S - user-level context switch for the Linux host backend
 * on x86-64 (System V ABI). The kernel target's twin is rv_uctx.S; lib/host.mk
 * picks this file by the host compiler's architecture, and uthread.c refuses
 * to build (#error) on a host architecture without such a file.
 *
 * Saved: the callee-saved registers rbx, rbp, r12-r15, the stack pointer
 * (the context itself), and the control words the ABI also makes callee-
 * saved: MXCSR's control bits and the x87 control word. Everything else
 * is caller-saved, which the compiler already assumes of a call. fs (TLS)
 * is not touched: it belongs to the pthread playing the process.
 *
 *   void  sl_uctx_switch(void **save_sp, void *new_sp)
 *   void *sl_uctx_init(void *top, void (*fn)(void *), void *arg)
 *   void  sl_uctx_call(void (*fn)(void *), void *arg, void **unwind_sp)
 *   void  sl_uctx_unwind(void *unwind_sp)   (noreturn)
 * (the last two as in rv_uctx.S: call fn(arg) on this stack with a frame
 * that sl_uctx_unwind can return through, skipping fn's frames)
 *
 * Frame, from the saved sp upward: mxcsr (4 bytes), x87 cw (2), pad (2),
 * r15, r14, r13, r12, rbx, rbp, return address: 64 bytes.
 */
#if defined(__x86_64__)

.macro SAVE_FRAME          /* push the frame described above */
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq  $8, %rsp
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
.endm

.macro LOAD_FRAME          /* pop it */
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq  $8, %rsp
    popq  %r15
    popq  %r14
    popq  %r13
    popq  %r12
    popq  %rbx
    popq  %rbp
.endm

.text
.globl sl_uctx_switch
.type sl_uctx_switch, @function
sl_uctx_switch:
    SAVE_FRAME
    movq  %rsp, (%rdi)
    movq  %rsi, %rsp
    LOAD_FRAME
    ret
.size sl_uctx_switch, . - sl_uctx_switch

/* rdi = fn, rsi = arg, rdx = unwind_sp. The frame is sl_uctx_switch's; rsp
   is 16-byte aligned at the call. A normal return skips the restores: fn
   kept the callee-saved registers. */
.globl sl_uctx_call
.type sl_uctx_call, @function
sl_uctx_call:
    SAVE_FRAME
    movq  %rsp, (%rdx)
    movq  %rdi, %rax
    movq  %rsi, %rdi
    callq *%rax
    addq  $56, %rsp
    ret
.size sl_uctx_call, . - sl_uctx_call

.globl sl_uctx_unwind
.type sl_uctx_unwind, @function
sl_uctx_unwind:
    movq  %rdi, %rsp
    LOAD_FRAME
    ret
.size sl_uctx_unwind, . - sl_uctx_unwind

/* rdi = top, rsi = fn, rdx = arg. The frame ends at top (aligned down to
   16), so after its `ret` pops uctx_entry, rsp is 16-byte aligned and the
   `call` there enters fn with the alignment the ABI promises. Default
   control words: MXCSR 0x1f80, x87 0x037f. r12 = arg, r13 = fn, rbp = 0
   ends frame-pointer backtraces. */
.globl sl_uctx_init
.type sl_uctx_init, @function
sl_uctx_init:
    movq  %rdi, %rax
    andq  $-16, %rax
    subq  $64, %rax
    movl  $0x1f80, (%rax)
    movw  $0x037f, 4(%rax)
    movw  $0, 6(%rax)
    movq  $0, 8(%rax)
    movq  $0, 16(%rax)
    movq  %rsi, 24(%rax)
    movq  %rdx, 32(%rax)
    movq  $0, 40(%rax)
    movq  $0, 48(%rax)
    leaq  uctx_entry(%rip), %rcx
    movq  %rcx, 56(%rax)
    ret
.size sl_uctx_init, . - sl_uctx_init

.type uctx_entry, @function
uctx_entry:
    movq  %r12, %rdi
    callq *%r13
    ud2                     /* fn returned: SIGILL ends the job */
.size uctx_entry, . - uctx_entry

#endif

.section .note.GNU-stack, "", @progbits
