/*
 * fault - misbehaves on purpose, to test that a faulting job is killed and
 * reported (check=FAIL with the cause) while the kernel and the other jobs
 * go on. Process 0 does it alone; no other process is created.
 *   load     read the kernel image at 0x80200000 (mapped, but not for U-mode)
 *   store    write to address 0 (unmapped)
 *   exec     jump to an unmapped address
 *   illegal  read a machine-mode CSR (an illegal instruction in U-mode)
 *   badptr   no fault: hand the kernel bad pointers and check each syscall
 *            returns SL_EFAULT; this kind ends check=ok
 * If a fault kind comes back, the kernel failed to stop it: check=FAIL with
 * reason=no_fault.
 */
#include "schedlab.h"

SL_APP(.about = "faults on purpose (kind=...) to test fault isolation",
       .mem_const = 64 * 1024,
       SL_KEYS(SL_ENUM("kind", "load|store|exec|illegal|badptr", 0)));

#define KERNEL_VA 0x80200000UL
#define UNMAPPED  0x1000UL          /* below SL_USER_BASE */

static void
illegal(void)
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
static void
store_null(void)
{
    uintptr_t a = 0;
    asm volatile("" : "+r"(a));
    *(volatile uint64_t *)a = 1;
}

/* Every pointer the kernel is handed here is bad; each call must say so. */
static void
badptr(void)
{
    long w = sl_sys_write((const void *)KERNEL_VA, 16);
    long f = sl_sys_futex_wait((const uint32_t *)UNMAPPED, 0, 1000);
    long x = sl_sys_write((const void *)(SL_USER_TOP - 8), 64);   /* runs past user space */

    sl_report(w == SL_EFAULT && f == SL_EFAULT && x == SL_EFAULT,
              "write=%ld futex=%ld cross=%ld", w, f, x);
}

int
main(void)
{
    if (sl_arg_is("kind", "badptr")) {
        badptr();
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
    sl_report(0, "reason=no_fault");
    return 0;
}
