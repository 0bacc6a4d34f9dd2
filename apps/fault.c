/*
 * fault - misbehaves on purpose, to test that a faulting job is killed and
 * reported (check=FAIL with the cause) while the kernel and the other jobs
 * go on. Process 0 does it alone; no other process is created.
 *   load     read the kernel image at 0x80200000 (mapped, but not for U-mode)
 *   store    write to address 0 (unmapped)
 *   exec     jump to an unmapped address
 *   illegal  read a machine-mode CSR (an illegal instruction in U-mode)
 *   stack    overflow process 0's stack by recursion with 8 KiB frames while
 *            the other processes wait: must fault in the guard below it
 *            (the kernel says "stack overflow"), never write into process
 *            1's stack
 *   exit     process 1 exits with status 3 while process 0 waits for it for
 *            ever: the kernel must end the job (reason=exit-status-3)
 *   badptr   no fault: hand the kernel bad pointers and check each syscall
 *            returns SL_EFAULT; this kind ends check=ok
 * If a fault kind comes back, the kernel failed to stop it: check=FAIL with
 * fault=none.
 */
#include "schedlab.h"

SL_APP(.about = "faults on purpose (kind=...) to test fault isolation", .mem_const = 64 * 1024,
       SL_KEYS(SL_ENUM("kind", "load|store|exec|illegal|badptr|stack|exit", 0)));

#define KERNEL_VA 0x80200000UL
#define UNMAPPED  0x1000UL /* below SL_USER_BASE */

static void illegal(void)
{
#ifdef SL_TARGET_KERNEL
    uint64_t v;
    asm volatile("csrr %0, mstatus" : "=r"(v));
    (void)v;
#else
    __builtin_trap();
#endif
}

/* Through an opaque zero: gcc turns a visible null store into a trap. */
static void store_null(void)
{
    uintptr_t a = 0;
    asm volatile("" : "+r"(a));
    *(volatile uint64_t *)a = 1;
}

/* Each frame writes its lowest byte first, as a stack probe would: the first write past the stack lands
   up to 8 KiB below it. Returns a sum so the frames cannot be folded away. */
static uint64_t recurse(int depth)
{
    volatile uint8_t frame[8192];

    frame[0] = (uint8_t)depth;
    frame[sizeof frame - 1] = (uint8_t)depth;
    return depth == 0 ? frame[0] : recurse(depth - 1) + frame[0] + frame[sizeof frame - 1];
}

static uint32_t never;

static void misbehave_or_wait(void *arg, int id)
{
    if (id == 0 && sl_arg_is("kind", "stack"))
        sl_report(0, "fault=none sum=%lu", (unsigned long)recurse(1000));
    else if (id == 1 && sl_arg_is("kind", "exit"))
        sl_sys_exit(3);
    else
        sl_futex_wait(&never, 0, 0); /* until the kernel ends the job */
}

/* Every pointer the kernel is handed here is bad; each call must say so. */
static void badptr(void)
{
    long w = sl_sys_write((const void *)KERNEL_VA, 16);
    long f = sl_sys_futex_wait((const uint32_t *)UNMAPPED, 0, 1000);
    long x = sl_sys_write((const void *)(SL_USER_TOP - 8), 64); /* runs past user space */

    sl_report(w == SL_EFAULT && f == SL_EFAULT && x == SL_EFAULT, "write=%ld futex=%ld cross=%ld", w, f, x);
}

int main(void)
{
    if (sl_arg_is("kind", "badptr")) {
        badptr();
        return 0;
    }
    if (sl_arg_is("kind", "stack") || sl_arg_is("kind", "exit")) {
        if (sl_nprocs() < 2)
            sl_die("kind=%s needs procs=2 or more", sl_arg_is("kind", "exit") ? "exit" : "stack");
        sl_run_procs(misbehave_or_wait, 0);
        return 0;
    }
    if (sl_arg_is("kind", "load"))
        (void)*(volatile uint64_t *)KERNEL_VA;
    else if (sl_arg_is("kind", "store"))
        store_null();
    else if (sl_arg_is("kind", "exec"))
        ((void (*)(void))UNMAPPED)();
    else
        illegal();
    sl_report(0, "fault=none");
    return 0;
}
