/*
 * panic.c - a kernel bug found by the kernel's own checks: one PANIC line, then QEMU exits with status 3.
 *
 * A leaf (LAYERS.md): every layer may call panic, and it calls only the console's formatting and output and
 * the platform's exit, so no layer reaches another through it. (A trap taken in S-mode is trap.c's
 * kernel_fault; a lock misused is console.c's spin_panic, which does not take the console lock.)
 */
#include "cpu.h"

void panic(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    kprintf("PANIC %d panic 0x0 0x0 %s\n", mycpu() ? mycpu()->id : -1, buf);
    platform_exit(3);
}
